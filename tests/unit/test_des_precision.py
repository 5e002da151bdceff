"""When a discrete-event run is checked and when it may stop before its floor of simulated
time (zsim.des.precision), and that stopping early keeps the figure a full-length run gives."""

from __future__ import annotations

import numpy as np
import pytest

from zsim.des.precision import (
    EARLY_STOP_CALLS,
    EARLY_STOP_CYCLES,
    FIRST_CHECK_SHARE,
    early_stop_blocker,
    may_stop_early,
    next_check,
)
from zsim.scenario import scenario_from_dict
from zsim.simulate import simulate


def test_a_slow_run_is_checked_on_the_whole_second_grid():
    # 500 calls a second: a quarter of EARLY_STOP_CALLS takes 25 s, so only the grid counts
    assert next_check(0.0, 0, 1.0) == pytest.approx(FIRST_CHECK_SHARE)
    assert next_check(FIRST_CHECK_SHARE, 60, 1.0) == 1.0
    assert next_check(1.0, 500, 1.0) == 2.0
    assert next_check(7.0, 3500, 1.0) == 8.0


def test_a_fast_run_is_checked_between_grid_points():
    # 100 000 calls a second: a quarter of EARLY_STOP_CALLS arrives every 0.125 s
    at = next_check(0.25, 25_000, 1.0)
    assert 0.25 < at < 1.0
    assert at == pytest.approx(0.25 + EARLY_STOP_CALLS / 4 / 100_000)
    # never past the next grid point
    assert next_check(0.95, 95_000, 1.0) == 1.0


def test_what_holds_a_run_to_its_floor():
    assert early_stop_blocker(read_only=True, cache_or_scan=False, txgs_synced=0) is None
    # a cache device's feed runs once a second; a scan has its own pace
    assert early_stop_blocker(read_only=True, cache_or_scan=True, txgs_synced=0)
    # writes: until more than EARLY_STOP_CYCLES txgs have synced, or never without txgs
    assert early_stop_blocker(read_only=False, cache_or_scan=False, txgs_synced=3)
    assert early_stop_blocker(read_only=False, cache_or_scan=False, txgs_synced=None)
    assert (
        early_stop_blocker(read_only=False, cache_or_scan=False, txgs_synced=EARLY_STOP_CYCLES + 1)
        is None
    )


def test_a_read_run_stops_early_only_with_enough_calls_after_its_warmup():
    many = np.linspace(0.0, 0.5, EARLY_STOP_CALLS + 1000)
    few = np.linspace(0.0, 0.5, EARLY_STOP_CALLS // 2)
    common = {"read_only": True, "sync_times": [], "end": None}
    assert may_stop_early(many, 0.0, **common)
    assert not may_stop_early(few, 0.0, **common)
    # the calls before the warm-up cut do not count
    assert not may_stop_early(many, 0.45, **common)


def test_a_write_run_stops_early_only_over_enough_whole_txg_cycles():
    times = np.linspace(0.0, 2.0, 1000)
    syncs = list(np.linspace(0.1, 1.9, EARLY_STOP_CYCLES + 1))  # EARLY_STOP_CYCLES cycles
    assert may_stop_early(times, 0.0, read_only=False, sync_times=syncs, end=syncs[-1])
    assert not may_stop_early(times, 0.0, read_only=False, sync_times=syncs[:-1], end=syncs[-2])
    # not measured by cycle (end None), or an engine without txgs (md, btrfs): the floor holds
    assert not may_stop_early(times, 0.0, read_only=False, sync_times=syncs, end=None)
    assert not may_stop_early(times, 0.0, read_only=False, sync_times=None, end=1.9)


FAST_READ = {
    "hardware": {"disk": "samsung-870-evo-500gb", "ram": "16GiB", "cpu_cores": 8},
    "pool": {"layout": "stripe 2", "recordsize": "4K"},
    "workload": {"tool": "fio", "rw": "randread", "bs": "4K", "numjobs": 8, "iodepth": 8},
}


def test_a_fast_read_run_stops_before_the_floor_with_the_full_runs_figure():
    sc = scenario_from_dict(FAST_READ)
    early = simulate(sc, seed=1, target_ci=0.05, max_sim_seconds=10)
    # twice as long, to its cap (a target it cannot reach)
    full = simulate(sc, seed=1, target_ci=0.0001, max_sim_seconds=2 * early.sim_seconds)
    assert early.sim_seconds < 1.0  # the floor is 2 simulated seconds
    assert early.ci_rel is not None and early.ci_rel <= 0.05
    assert early.read.iops == pytest.approx(full.read.iops, rel=0.02)


def test_a_slow_run_stops_where_it_always_did():
    """A run that cannot stop before the floor is checked on the whole-second grid only, so
    it ends at a whole second, as before the early stop existed."""
    hdd = {
        "hardware": {"disk": "seagate-ironwolf-12tb", "ram": "8GiB"},
        "pool": {"layout": "raidz1 4", "recordsize": "128K"},
        "workload": {"tool": "fio", "rw": "randwrite", "bs": "128K", "numjobs": 2, "size": "1GiB"},
    }
    r = simulate(scenario_from_dict(hdd), seed=1, target_ci=0.05, max_sim_seconds=30)
    assert r.sim_seconds >= 2.0 and r.sim_seconds == int(r.sim_seconds)
