"""The write throttle's fill of the open txg (:func:`zsim.zfs.txg.throttle_fill`) and the txg
size the analytic engine takes from it while the disks bound buffered writes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zsim.analytic.engine import _Model
from zsim.scenario import scenario_from_dict
from zsim.zfs.txg import throttle_fill, txg_tunables
from zsim.zfs.version import parse_zfs_version

TXG = txg_tunables(8 << 30, parse_zfs_version("2.2"))
MOST = TXG.dirty_max / 16384  # zfs_dirty_data_max in 16 KiB records


def steady(rate: float, data_share: float = 1.0) -> float:
    """The txg size (share of zfs_dirty_data_max) a sync of ``rate`` records/s settles at."""
    lo, hi = TXG.delay_min_fraction * MOST, 0.999 * MOST
    for _ in range(40):
        mid = (lo + hi) / 2
        sync = mid / rate
        if throttle_fill(MOST, TXG, 1e7, mid, data_share * sync, sync) > mid:
            lo = mid
        else:
            hi = mid
    return lo / MOST


def test_below_the_threshold_the_writers_fill_at_their_own_rate():
    # a short sync: the writers never reach 60 % of zfs_dirty_data_max
    assert throttle_fill(MOST, TXG, 1000.0, 0.0, 1.0, 2.0) == pytest.approx(2000.0)


def test_a_sync_releasing_evenly_settles_where_the_delay_matches_its_rate():
    # with the syncing txg's space freed over the whole sync, the dirty data sits where one
    # record per delay is the sync's rate: delay_scale·(u − 0.6)/(1 − u) = 1/R
    for rate in (2000.0, 20000.0):
        d = 1.0 / (rate * TXG.delay_scale)
        level = (TXG.delay_min_fraction + d) / (1.0 + d)
        assert steady(rate) == pytest.approx(level, abs=0.01)


def test_slower_syncs_and_longer_metadata_tails_make_larger_txgs():
    assert steady(500.0) > steady(5000.0) > steady(50000.0) >= 0.6
    # indirect blocks after the data free nothing: the open txg climbs the delay curve
    assert steady(17500.0, data_share=0.4) > steady(17500.0) + 0.05


@settings(max_examples=60, deadline=None)
@given(
    st.floats(0.0, 1.0),
    st.floats(0.01, 1.0),
    st.floats(0.05, 20.0),
    st.floats(10.0, 1e6),
)
def test_the_open_txg_stays_within_the_limit_and_grows_with_the_sync(start, share, seconds, free):
    syncing = start * MOST
    filled = throttle_fill(MOST, TXG, free, syncing, share * seconds, seconds)
    longer = throttle_fill(MOST, TXG, free, syncing, share * seconds, 1.5 * seconds)
    assert 0.0 <= filled <= MOST * 1.01
    assert longer >= filled - 1e-6 * MOST


def test_small_random_writes_over_large_files_make_txgs_past_the_threshold():
    # 16K records over 8 × 16 GiB: every txg rewrites the files' every indirect block, so
    # the sync's metadata outlasts its data and the throttle lets the open txg grow to
    # about 0.8 of zfs_dirty_data_max (the DES's txgs hold 0.81 here)
    sc = scenario_from_dict(
        {
            "name": "throttle",
            "hardware": {
                "disk": "seagate-ironwolf-12tb",
                "ram": "8GiB",
                "cpu_cores": 8,
                "zfs_version": "2.2",
            },
            "pool": {"layout": "raidz2 8", "recordsize": "16K", "compression": "off"},
            "workload": {
                "tool": "fio",
                "rw": "randwrite",
                "bs": "16K",
                "numjobs": 8,
                "iodepth": 1,
                "size": "16GiB",
            },
        }
    )
    m = _Model(sc, 1)
    share = m._throttled_txg_records() * m.rs / txg_tunables(sc.hardware.ram, m.version).dirty_max
    assert 0.7 < share < 0.9


def test_a_long_sync_fills_to_the_limit_within_the_step_budget():
    # the delay is capped at zfs_delay_max (100 ms): over a 1000 s sync the writers reach
    # zfs_dirty_data_max; tiny steps near the threshold (a huge unthrottled rate, a small
    # limit) must not stop the integration before the sync's end
    filled = throttle_fill(100.0, TXG, 1e9, 0.0, 0.0, 1000.0)
    assert filled == pytest.approx(100.0, rel=0.01)
