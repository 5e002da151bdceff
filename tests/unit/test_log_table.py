"""Log tables (:mod:`zsim.analytic.log_table`): the DES's own intent log, vdev queues and
drive model run alone on a pool's HDD data vdevs."""

from __future__ import annotations

import dataclasses

import pytest

from zsim.analytic import log_table as lt
from zsim.analytic.sync import SyncModel
from zsim.analytic.sync_hdd import log_spec
from zsim.scenario import scenario_from_dict


def _spec(layout: str, jobs: int = 4, version: str = "2.2") -> lt.LogSpec:
    """The spec the model builds for 8K O_SYNC writers on IronWolf drives."""
    sc = scenario_from_dict(
        {
            "name": "log table unit",
            "hardware": {
                "disk": "seagate-ironwolf-12tb",
                "ram": "16GiB",
                "cpu_cores": 8,
                "zfs_version": version,
            },
            "pool": {"layout": layout, "ashift": 12, "recordsize": "8K"},
            "workload": {
                "tool": "fio",
                "rw": "randwrite",
                "bs": "8K",
                "numjobs": jobs,
                "iodepth": 1,
                "sync": True,
                "size": "4GiB",
            },
        }
    )
    return log_spec(SyncModel(sc))


def test_a_commit_on_one_disk_waits_for_its_block_to_reach_the_platter():
    table = lt.log_table(_spec("stripe 1", jobs=1))
    period = 60 / 7200  # s per revolution
    # the lwb is taken into the cache, then the flush waits for it to be written: more than
    # the command overheads, less than a seek and two turns
    assert 0.5e-3 < table.commit_mean < 2.5 * period
    assert table.commits_per_lwb == pytest.approx(1.0)  # one job: one commit per lwb
    assert table.call_mean == pytest.approx(1 / table.commits_per_s, rel=0.02)
    assert list(table.call_quantiles) == sorted(table.call_quantiles)
    # a lone spindle has no other to keep a phase against: every draw gives the same run
    assert table.phase_spread < 1e-6


def test_more_jobs_share_log_blocks_and_commit_more_per_second():
    one = lt.log_table(_spec("raidz2 6", jobs=1))
    eight = lt.log_table(_spec("raidz2 6", jobs=8))
    assert eight.commits_per_lwb > 2.0
    assert eight.lwb_bytes > one.lwb_bytes
    assert eight.commits_per_s > 2 * one.commits_per_s
    assert len(eight.leaf_busy) == 6 and all(0.0 < b <= 1.0 for b in eight.leaf_busy)


def test_a_table_is_cached_and_reads_back_from_disk_unchanged():
    spec = _spec("2x mirror 2", jobs=2)
    table = lt.log_table(spec)
    assert lt.log_table(spec) is table
    assert lt._decode(dataclasses.asdict(table)) == table


def test_the_seeds_are_pooled_and_their_spread_reported():
    # eight jobs' log blocks alternate between two mirrors: each waits for two spindles
    # whose phases the run keeps (the draws differ by half)
    spec = _spec("2x mirror 2", jobs=8, version="2.1")
    runs = [lt.measure(spec, seeds=(seed,)) for seed in lt.PHASE_SEEDS]
    pooled = lt.measure(spec)
    assert pooled.phase_spread > lt.SAME_RUNS  # two children's phases matter: all three run
    rates = [r.commits_per_s for r in runs]
    assert pooled.commits_per_s == pytest.approx(sum(rates) / len(rates))
    assert pooled.phase_spread == pytest.approx(max(rates) / min(rates) - 1.0)


def test_a_write_back_the_caches_hold_stops_the_commits_for_its_destage():
    spec = _spec("raidz2 6", jobs=4)
    quiet = lt.log_table(spec)
    # 40 MiB of aggregated writes per leaf (the drives' 256 MiB caches take it at once): a
    # commit's flush then waits until it is on the platters
    runs = 40 * 4  # 1 MiB on each of the 4 data disks' leaves per run
    wb = lt.WriteBack((runs,), (4 << 20,), (0,), (0,), 16384, 2)
    burst = lt.burst_table(spec, wb)
    media = 150e6  # B/s: well above what the IronWolf destages at mid-stroke
    assert burst.seconds > 40 * 2**20 / media
    assert burst.calls < quiet.commits_per_s * burst.seconds / 2
    assert burst.call_quantiles[100] > 0.5 * (40 * 2**20 / media)
    assert lt._decode_burst(dataclasses.asdict(burst)) == burst
    # no write-back: the span is the calls already under way
    none = lt.measure_burst(spec, lt.WriteBack((0,), (4 << 20,), (0,), (0,), 16384, 2))
    assert none.seconds < 3 * quiet.call_mean


def test_the_log_alone_never_writes_records_in_place():
    pool = lt._LogPool(None, None, [], None, None, 8192, 8192)  # type: ignore[arg-type]
    assert not pool.open.synced
    with pytest.raises(AssertionError, match="WR_COPIED"):
        pool.next_vdev()
