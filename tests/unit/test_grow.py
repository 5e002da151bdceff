"""``zsim.grow`` and ``zsim grow``: the reflow on the discrete-event engine, the space before
and after, the speed before and after, and the refusals."""

from __future__ import annotations

import dataclasses
import json

import pytest

import zsim
from zsim.cli import main
from zsim.grow.reflow import ReflowInput, simulate_reflow
from zsim.layout.alloc import psize_to_asize
from zsim.units import MiB

SCENARIO = "examples/scenarios/resilver-raidz2-8-ironwolf.toml"


def _scenario(layout: str = "raidz1 4", fill: float = 0.2, written: str = "sequential"):
    base = zsim.load_scenario(SCENARIO)
    pool = dataclasses.replace(base.pool, layout=layout, fill=fill)
    resilver = dataclasses.replace(base.resilver, disk="sda", written=written)
    return dataclasses.replace(base, pool=pool, resilver=resilver)


def _reflow(old: int, fill: float, packed: bool = True):
    """One reflow of a raidz1 ``old`` → ``old + 1`` on the scenario's disks."""
    sc = _scenario(f"raidz1 {old}+1", fill)
    cap = zsim.capacity(f"raidz1 {old}", sc.hardware.disk.size_bytes)
    v = cap.vdevs[0]
    block = psize_to_asize(zsim.parse_layout(f"raidz1 {old}").vdevs[0], MiB, 12)
    ri = ReflowInput(
        scenario=sc,
        vdev_index=0,
        old_children=old,
        space=v.metaslab_bytes,
        allocated=int(fill * v.metaslab_bytes) // 4096 * 4096,
        metaslab_shift=v.metaslab_shift,
        block_asize=block,
        packed=packed,
    )
    return simulate_reflow(ri, seed=3)


@pytest.fixture(scope="module")
def packed_20():
    return _reflow(4, 0.2)


def test_reflow_time_follows_the_allocated_bytes(packed_20):
    double = _reflow(4, 0.4)
    ratio = double.seconds / packed_20.seconds
    # twice the data, and the second half sits further in, on slower zones
    assert 1.9 < ratio < 2.6
    assert double.bytes_copied == pytest.approx(2 * packed_20.bytes_copied, rel=1e-6)


def test_reflow_is_bounded_by_what_each_disk_transfers(packed_20):
    # each old disk reads rate/4 and each disk writes rate/5: no disk moves more than its
    # fastest zone allows
    disk = zsim.load_scenario(SCENARIO).hardware.disk
    per_disk = packed_20.bytes_per_s * (1 / 4 + 1 / 5)
    assert per_disk <= disk.max_sustained * 1.02
    assert packed_20.limit.startswith("disk:")


def test_the_new_disk_only_takes_writes_and_is_less_busy(packed_20):
    util = packed_20.utilization
    assert util["disk:sde"] < min(util[f"disk:sd{c}"] for c in "abcd")


def test_progress_curve_is_monotone_and_ends_with_every_byte(packed_20):
    times = [t for t, _ in packed_20.progress]
    done = [b for _, b in packed_20.progress]
    assert times == sorted(times) and done == sorted(done)
    assert done[-1] == packed_20.bytes_copied
    assert times[-1] == pytest.approx(packed_20.seconds)
    assert packed_20.gated_syncs > 0 and packed_20.sync_seconds > 0


def test_aged_free_space_copies_slower_than_one_stream(packed_20):
    aged = _reflow(4, 0.2, packed=False)
    assert aged.bytes_per_s < packed_20.bytes_per_s


def test_same_seed_same_answer(packed_20):
    again = _reflow(4, 0.2)
    assert again.seconds == packed_20.seconds


def test_nothing_allocated_is_immediate():
    empty = _reflow(4, 0.0)
    assert empty.seconds == 0.0 and empty.limit == "nothing-allocated"


@pytest.fixture(scope="module")
def attach_one():
    return zsim.grow(_scenario("raidz1 4", 0.5), attach=1)


def test_grow_attach_space_and_time(attach_one):
    r = attach_one
    before, after = r.space_before, r.space_after
    assert after["zpool_size_bytes"] > before["zpool_size_bytes"]
    # zfs list keeps the 4-wide ratio: it reports less than the data that really fits
    assert after["usable_bytes"] < after["usable_new_data_bytes"]
    assert after["usable_new_data_bytes"] < after["usable_after_rewrite_bytes"]
    assert r.seconds == pytest.approx(r.reflows[0].seconds)
    assert r.reflows[0].scrub_seconds and r.reflows[0].scrub_seconds > 0
    assert r.commands == ("zpool attach tank raidz1-0 sde",)
    d = r.to_dict()
    assert json.loads(json.dumps(d))["seconds"] == r.seconds
    assert d["performance"]["before"]["engine"] == "analytic"
    assert "redundancy is kept" in " ".join(d["notes"])


def test_two_attaches_reflow_one_after_another():
    r = zsim.grow(_scenario("raidz1 4", 0.3), attach=2)
    first, second = r.reflows
    assert (first.old_width, second.old_width) == (4, 5)
    assert first.bytes_copied == second.bytes_copied  # the same data, moved twice
    assert r.seconds == pytest.approx(first.seconds + second.seconds)
    assert len(r.commands) == 2


def test_add_vdev_spreads_writes_by_free_space():
    r = zsim.grow(_scenario("raidz2 8", 0.8), add_vdev="raidz2 8")
    assert r.seconds is None and r.reflows == ()
    spread = r.performance["spread"]
    old, new = spread["vdevs"]
    assert new["share_by_free_space"] / old["share_by_free_space"] == pytest.approx(5, rel=0.02)
    assert old["share_empty_pool"] == pytest.approx(0.5)
    if "throttled" in spread:
        assert spread["unthrottled"]["write_bytes_per_s"] <= spread["throttled"][
            "write_bytes_per_s"
        ] * (1 + 1e-9)
    assert r.space_after["usable_bytes"] > 1.9 * r.space_before["usable_bytes"]


def test_after_zpool_add_reads_of_the_data_already_there_run_as_before():
    r = zsim.grow(_scenario("raidz2 8", 0.8), add_vdev="raidz2 8")  # random 128K reads
    perf = r.performance
    assert perf["after"]["read"] == perf["before"]["read"]
    assert "before zpool add" in perf["after"]["data"]
    # data written since spreads over both vdevs: twice the spindles
    assert (
        perf["after_new_data"]["read"]["bytes_per_s"] > 1.3 * perf["before"]["read"]["bytes_per_s"]
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--attach", "1", "--set", "pool.layout=draid2:4d:1s:11c"], "dRAID"),
        (["--attach", "1", "--set", "pool.layout=mirror 2"], "adds a copy"),
        (["--attach", "250"], "255"),
        (["--attach", "1", "--new-disk-size", "10TB"], "too small"),
        (["--attach", "1", "--set", "hardware.zfs_version=2.2"], "2.3"),
        ([], "exactly one"),
        (["--attach", "1", "--add-vdev", "raidz2 8"], "not allowed"),
        (["--attach", "0"], "1 or more"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, words, capsys):
    code = main(["grow", SCENARIO, "--no-reflow", *args])
    err = capsys.readouterr().err
    assert code == 2
    assert words in err
    assert err.count("\n") == 1


def test_cli_json_and_text(capsys):
    assert main(["grow", SCENARIO, "--add-vdev", "raidz2 8", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    for key in ("space_before", "space_after", "seconds", "performance", "commands"):
        assert key in d
    assert d["space_after"]["usable_after_rewrite_bytes"] >= d["space_after"]["usable_bytes"]
    assert main(["grow", SCENARIO, "--add-vdev", "mirror 2", "--no-reflow"]) == 0
    text = capsys.readouterr().out
    assert "zfs list USED+AVAIL" in text and "zpool add tank mirror" in text


def test_reflow_under_the_workload_is_slower_and_the_workload_goes_on():
    sc = _scenario("raidz1 4", 0.2)
    r = zsim.grow(sc, attach=1, under_load=True)
    (one,) = r.reflows
    loaded = one.under_load
    assert loaded is not None
    assert loaded["seconds"] > one.seconds
    # the scenario's workload (random 128K reads) keeps reading during the copy
    assert loaded["foreground_during"]["read"]["iops"] > 0


def test_rewrites_even_the_vdevs_out_at_the_closed_form_rate():
    """Rewrites spread over the data: alloc_i' = share_i − alloc_i / A per byte rewritten.
    With shares fixed at ½ the imbalance decays as exp(−W / A); with shares in proportion to
    free space (the bias, equal aliquots) as exp(−W (1/A + 1/F))."""
    import math

    from zsim.grow.alloc_bias import bias_shares, evening_out

    space = [10**13, 10**13]
    alloc = [8 * 10**12, 0]
    data, free = 8e12, 12e12
    half = evening_out(alloc, space, lambda f: (0.5, 0.5), steps_per_pass=2000)
    assert half.bytes_to_even == pytest.approx(data * math.log(0.8 / 0.05), rel=0.01)
    tau = 1 / (1 / data + 1 / free)
    biased = evening_out(
        alloc, space, lambda f: bias_shares(f, [6 * MiB, 6 * MiB], MiB), steps_per_pass=2000
    )
    assert biased.bytes_to_even == pytest.approx(tau * math.log(0.8 / 0.05), rel=0.02)
    # a pool already even needs nothing rewritten
    assert evening_out([5, 5], [10, 10], lambda f: (0.5, 0.5)).bytes_to_even == 0


def test_grow_add_vdev_says_how_much_rewriting_evens_it_out(capsys):
    writes = ["pool.layout=raidz2 8", "pool.fill=0.8", "workload.rw=write", "workload.bs=1M"]
    r = zsim.grow(zsim.load_scenario(SCENARIO, overrides=writes), add_vdev="raidz2 8")
    evening = r.performance["spread"]["evening_out"]
    for key in ("throttled", "unthrottled"):
        e = evening[key]
        assert e["bytes_rewritten"] > 0 and e["seconds"] > 0
        first, last = e["curve"][0], e["curve"][-1]
        assert first["vdev_allocated_fraction"][1] == 0.0
        spread = max(last["vdev_allocated_fraction"]) - min(last["vdev_allocated_fraction"])
        assert spread <= 0.05 + 1e-9
    # the throttle spreads new copies by the vdevs' speed (½ each here), not toward the
    # empty vdev, so it takes more rewriting to even out
    assert evening["throttled"]["bytes_rewritten"] > evening["unthrottled"]["bytes_rewritten"]
    sets = [w for kv in writes for w in ("--set", kv)]
    assert main(["grow", SCENARIO, "--add-vdev", "raidz2 8", *sets]) == 0
    assert "evening out: new writes alone keep the imbalance" in capsys.readouterr().out
