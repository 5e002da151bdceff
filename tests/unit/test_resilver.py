"""Resilver, rebuild and scrub (``zsim.resilver``): the mechanisms the issue names, checked
against each other and against the devices' own sequential rates."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

import zsim
from zsim.errors import ZsimError
from zsim.hardware import hdd
from zsim.hardware.catalog import load_profile
from zsim.resilver.run import forget_resilvers, rebuild_key
from zsim.resilver.target import leaf_share, resolve_target
from zsim.scenario import scenario_from_dict

DISK = "seagate-ironwolf-12tb"


def _sc(layout: str, **over: object):
    pool = {"layout": layout, "recordsize": "1M", "fill": 0.5}
    resilver: dict[str, object] = {}
    durability: dict[str, object] = {"afr": 0.015, "trials": 2000}
    for key, value in over.items():
        table, _, name = key.partition("__")
        {"pool": pool, "resilver": resilver, "durability": durability}[table][name] = value
    return scenario_from_dict(
        {
            "hardware": {"disk": DISK},
            "pool": pool,
            "workload": {"rw": "randread", "bs": "128K", "numjobs": 4, "iodepth": 4},
            "resilver": resilver,
            "durability": durability,
        }
    )


@pytest.fixture(scope="module")
def mirror():
    return zsim.resilver(_sc("mirror 2"))


@pytest.fixture(scope="module")
def raidz2():
    return zsim.resilver(_sc("raidz2 8"))


def _mean_write_rate(fill: float) -> float:
    """The IronWolf's sequential rate averaged over the allocated LBA range (bytes/s)."""
    params = hdd.hdd_params(load_profile(DISK))
    xs = [fill * (i + 0.5) / 64 for i in range(64)]
    return len(xs) / sum(1.0 / hdd.media_rate(params, x) for x in xs)


def test_mirror_resilver_of_sequential_data_runs_near_the_disks_sequential_speed(mirror):
    target = _mean_write_rate(0.5)
    assert mirror.bytes_per_s == pytest.approx(target, rel=0.15), (mirror.bytes_per_s, target)
    assert mirror.limit.startswith("disk:")


def test_raidz_resilver_is_not_faster_than_mirror_nor_than_reading_every_column(mirror, raidz2):
    # sequentially written 1M records: both stream at the new disk's rate once the vdev queue
    # aggregates the rebuild reads (vdev_queue_aggregate()), so raidz can only tie
    assert raidz2.bytes_per_s <= 1.01 * mirror.bytes_per_s
    # every surviving column is read: 7 per block on raidz2 8, so the survivors read 7×
    assert raidz2.bytes_read == pytest.approx(7 * raidz2.bytes_resilvered, rel=0.02)
    # each survivor reads as much as the new disk writes: the resilver cannot beat one
    # disk's sequential read over the same span
    assert raidz2.bytes_per_s <= 1.05 * _mean_write_rate(0.5)


def test_resilvered_bytes_follow_the_column_map():
    sc = _sc("raidz2 8")
    t = resolve_target(sc)
    # each child of an 8-wide raidz holds 1/8 of the allocation, less the skip sectors
    assert t.resilver_bytes == pytest.approx(t.allocated / 8, rel=0.01)
    assert t.resilver_bytes <= t.allocated / 8
    vdev = t.vdev
    assert sum(leaf_share(vdev, i, t.psize, 12) for i in range(8)) <= 1.0


def test_progress_curve_is_monotonic_and_ends_at_the_total(raidz2):
    times = [t for t, _ in raidz2.progress]
    done = [b for _, b in raidz2.progress]
    assert times == sorted(times) and done == sorted(done)
    assert times[-1] == pytest.approx(raidz2.seconds)
    assert done[-1] == pytest.approx(raidz2.bytes_resilvered, rel=1e-6)
    # zoned disk: the outer (early) part goes faster than the inner (late) part
    first = (times[1] - times[0]) / (done[1] - done[0])
    last = (times[-1] - times[-2]) / (done[-1] - done[-2])
    assert first < last


def test_more_fill_takes_longer_for_zfs():
    half = zsim.resilver(_sc("mirror 2"), durability=False)
    full = zsim.resilver(_sc("mirror 2", pool__fill=0.8), durability=False)
    assert full.seconds > 1.4 * half.seconds


def test_md_rebuild_time_does_not_depend_on_fill():
    a = zsim.resilver(_sc("md-raid6 8", pool__fill=0.1), durability=False)
    b = zsim.resilver(_sc("md-raid6 8", pool__fill=0.9), durability=False)
    assert a.seconds == pytest.approx(b.seconds, rel=1e-9)
    assert a.bytes_resilvered == load_profile(DISK).size_bytes
    # capped by speed_limit_max: 200000 KiB/s
    assert a.bytes_per_s <= 200000 * 1024 * 1.0001


def test_md_rebuild_under_load_falls_to_speed_limit_min():
    r = zsim.resilver(_sc("md-raid1 2", resilver__under_load=True), durability=False)
    assert r.under_load["bytes_per_s"] == pytest.approx(1000 * 1024)
    assert r.under_load["seconds"] > 50 * r.seconds


def test_small_random_blocks_make_the_resilver_iops_bound():
    big = zsim.resilver(_sc("mirror 2"), durability=False)
    small = zsim.resilver(
        _sc("mirror 2", pool__recordsize="16K", resilver__written="random"), durability=False
    )
    assert small.seconds > 5 * big.seconds


def test_sorted_scan_beats_the_legacy_scan_on_randomly_written_data():
    args = {"pool__recordsize": "128K", "resilver__written": "random"}
    sc = _sc("mirror 2", **args)
    legacy = scenario_from_dict(_dict_with_version(sc, "0.7"))
    new = zsim.resilver(sc, durability=False)
    old = zsim.resilver(legacy, durability=False)
    assert new.seconds < old.seconds


def _dict_with_version(sc, version: str) -> dict:
    text = sc.to_toml().replace('zfs_version = "2.4"', f'zfs_version = "{version}"')
    import tomllib

    return tomllib.loads(text)


def _draid_hours(layout: str, spare: str) -> float:
    sc = _sc(layout, resilver__spare=spare, pool__fill=0.3)
    return zsim.resilver(sc, durability=False).seconds / 3600


def test_draid_narrow_groups_rebuild_to_a_distributed_spare_faster_than_to_a_new_disk():
    narrow = _draid_hours("draid1:2d:1s:24c", "distributed")
    new_disk = _draid_hours("draid1:2d:1s:24c", "new")
    assert narrow < new_disk / 2


def test_draid_distributed_rebuild_grows_with_the_group_width_and_beats_a_new_disk():
    wide = _draid_hours("draid1:8d:1s:24c", "distributed")
    assert _draid_hours("draid1:2d:1s:24c", "distributed") < wide
    assert wide < _draid_hours("draid1:8d:1s:24c", "new")


def test_stripe_loses_data_and_reports_it():
    r = zsim.resilver(_sc("stripe 4"))
    assert r.lost and r.seconds is None and r.bytes_resilvered == 0
    # four disks, none redundant: P(loss in 5 y) = 1 − (1 − AFR)^(4·5)
    assert r.durability["loss_probability"] == pytest.approx(1 - (1 - 0.015) ** 20, rel=1e-6)


@pytest.mark.parametrize(
    ("over", "words"),
    [
        ({"resilver__disk": "sdz"}, "not a data-vdev device"),
        ({"resilver__method": "sequential"}, "raidz can only be healed"),
        ({"resilver__spare": "distributed"}, "needs a dRAID vdev"),
        ({"pool__failed": ["sda", "sdb"], "resilver__disk": "sdc"}, "the pool is lost"),
        ({"resilver__disk": "sdc", "pool__failed": ["sdc"]}, "also in pool.failed"),
    ],
)
def test_impossible_resilvers_are_one_clear_error(over, words):
    with pytest.raises(ZsimError, match=words):
        zsim.resilver(_sc("raidz2 8", **over))


def test_same_seed_same_answer():
    a = zsim.resilver(_sc("raidz1 4"))
    forget_resilvers()  # simulate again, not from the memo
    b = zsim.resilver(_sc("raidz1 4"))
    assert b is not a
    assert a.seconds == b.seconds and a.durability == b.durability


def test_the_same_inputs_are_answered_from_the_memo_and_others_are_not():
    # the memo is the same for every engine (its key names it): the analytic scan keeps
    # this test at milliseconds where four DES resilvers took 25 s of CI
    forget_resilvers()
    a = zsim.resilver(_sc("mirror 2"), engine="analytic")
    assert zsim.resilver(_sc("mirror 2"), engine="analytic") is a
    assert zsim.resilver(_sc("mirror 2"), seed=2, engine="analytic") is not a
    assert zsim.resilver(_sc("mirror 2"), durability=False, engine="analytic") is not a
    sc = _sc("mirror 2")
    disk = sc.hardware.disk
    faster = dataclasses.replace(
        disk, max_sustained=2 * disk.max_sustained, min_sustained=2 * disk.min_sustained
    )  # the same name: the memo keys the profile's contents
    other_disk = dataclasses.replace(sc, hardware=dataclasses.replace(sc.hardware, disk=faster))
    assert zsim.resilver(other_disk, engine="analytic").seconds < a.seconds


def test_a_new_failure_rate_reuses_the_rebuild_and_recomputes_the_loss():
    forget_resilvers()
    low = zsim.resilver(_sc("raidz1 4", durability__afr=0.01))
    high = zsim.resilver(_sc("raidz1 4", durability__afr=0.05))
    assert high.progress is low.progress  # the same simulated rebuild, not a second run
    assert high.seconds == low.seconds
    assert high.durability["loss_probability"] > low.durability["loss_probability"]
    assert high.scenario["durability"]["afr"] == 0.05  # the provenance is the call's own
    # busy_fraction puts the workload beside the rebuild: that is a rebuild of its own
    key = rebuild_key(_sc("raidz1 4", durability__afr=0.05), 1, "des")
    assert key == rebuild_key(
        _sc("raidz1 4", durability__afr=0.01, durability__mission="3y"), 1, "des"
    )
    assert key != rebuild_key(_sc("raidz1 4", durability__busy_fraction=0.5), 1, "des")
    assert key != rebuild_key(_sc("raidz1 4", durability__afr=0.05), 2, "des")


def test_cli_json_has_the_design_keys(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text(_sc("mirror 2").to_toml())
    out = subprocess.run(
        # the keys are the result's, whichever scan answers: the analytic one is quick
        [sys.executable, "-m", "zsim", "resilver", str(path), "--json", "--engine", "analytic"],
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(out.stdout)
    for key in ("seconds", "bytes_resilvered", "bytes_per_s", "limit", "progress"):
        assert key in doc
    assert doc["durability"]["loss_probability"] > 0
    bad = subprocess.run(
        [sys.executable, "-m", "zsim", "resilver", str(path), "--set", "resilver.disk=sdq"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_resilver_under_load_slows_both_the_resilver_and_the_workload():
    path = Path(__file__).parents[2] / "examples" / "scenarios" / "resilver-raidz2-8-ironwolf.toml"
    sc = zsim.load_scenario(path, overrides=["resilver.under_load=true"])
    r = zsim.resilver(sc, durability=False)
    u = r.under_load
    # on a busy pool the scrub class runs at min_active (1 per disk, OpenZFS 2.1+ nia logic)
    assert u["seconds"] > 3 * r.seconds
    during = u["foreground_during"]["read"]["bytes_per_s"]
    alone = u["foreground_alone"]["read"]["bytes_per_s"]
    assert 0 < during < 0.95 * alone


#: a disk given inline, with neither afr nor mtbf_hours (issue 18)
INLINE_NO_RATE = {
    "kind": "hdd",
    "capacity": "5TB",
    "rpm": 7200,
    "max_sustained": "180MB/s",
    "min_sustained": "90MB/s",
    "avg_seek": "8.5ms",
    "sector": 4096,
}


def _no_rate_sc(**durability: object):
    return scenario_from_dict(
        {
            "hardware": {"disk": INLINE_NO_RATE},
            "pool": {"layout": "mirror 2", "recordsize": "1M", "fill": 0.02},
            "workload": {"rw": "randread", "bs": "128K"},
            "resilver": {"disk": "sdb"},
            "durability": {"trials": 2000, **durability},
        }
    )


def test_resilver_without_failure_rate_gives_time_and_says_why_no_loss(capsys, tmp_path):
    # what is checked is the answer without a rate, the same for either scan: the analytic
    # one keeps the library's two calls at milliseconds (the command line below simulates)
    r = zsim.resilver(_no_rate_sc(), engine="analytic")
    assert r.seconds and r.seconds > 0 and len(r.progress) > 2
    assert r.durability is None
    doc = r.to_dict()
    assert doc["durability"] is None and doc["seconds"] == r.seconds
    [note] = [n for n in doc["notes"] if n.startswith("loss probability not computed")]
    assert "durability.afr = 0.015" in note and "'inline'" in note
    # with a rate the existing keys are there and no such note
    rated = zsim.resilver(_no_rate_sc(afr=0.015), engine="analytic").to_dict()
    assert rated["durability"]["afr"] == 0.015 and "loss_probability" in rated["durability"]
    assert not any(n.startswith("loss probability not computed") for n in rated["notes"])
    # the command line: exit 0, the time and the note in the text
    from zsim.cli import main

    path = tmp_path / "inline.toml"
    path.write_text(_no_rate_sc().to_toml())
    assert main(["resilver", str(path)]) == 0
    out = capsys.readouterr().out
    assert "time " in out and "note: loss probability not computed" in out


def test_no_healing_window_writes_the_new_disk_faster_than_its_media():
    """The chart's traditional spare at 2.1 (docs/research/resilver-time.md): its windows send
    the new disk less than its write cache holds; before the window bound
    (ZfsScan._with_cached_writes) they measured 289 MB/s onto a disk whose media writes 253."""
    sc = scenario_from_dict(
        {
            "hardware": {"disk": "seagate-exos-x16-16tb", "ram": "256GiB", "zfs_version": "2.1"},
            "pool": {"layout": "draid1:8d:1s:90c", "recordsize": "1M", "fill": 0.9},
            "workload": {"rw": "randread", "bs": "128K"},
            "resilver": {"spare": "new"},
        }
    )
    r = zsim.resilver(sc, engine="des")
    outer = load_profile("seagate-exos-x16-16tb").max_sustained
    assert r.windows
    for w in r.windows:
        assert w["bytes_per_s"] <= outer * 1.001, (w["position"], w["bytes_per_s"] / 1e6)


def test_an_idle_pools_leaves_take_async_writes_two_at_a_time():
    """vdev_queue_max_async_writes(): zfs_vdev_async_write_min_active (2) below 30 % of the
    dirty limit, so a resilver's repair writes onto the new disk on an idle pool go 2 deep;
    a leaf attached during the run gets the same limit at once."""
    from zsim.des.engine import Engine
    from zsim.des.vdev import LeafQueue
    from zsim.machine.run_control import RunControl

    sc = scenario_from_dict(
        {
            "hardware": {"disk": "seagate-ironwolf-12tb", "ram": "16GiB"},
            "pool": {"layout": "raidz2 6"},
            "workload": {"rw": "randread", "bs": "128K", "size": "1GiB"},
        }
    )
    zfs = Engine(sc, seed=1, control=RunControl()).zfs
    assert {leaf.async_write_max for leaf in zfs.leaf_queues} == {2}
    new = LeafQueue(zfs.tops[0].leaves[0].device, 1 << 20)
    assert new.async_write_max == 10  # the class's max_active, until the pool sets it
    zfs.add_leaf_queue(new)
    assert new.async_write_max == 2
