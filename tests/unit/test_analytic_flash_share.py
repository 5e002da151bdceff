"""A flash leaf's record reads beside a txg's writes (zsim.analytic.flash_share)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zsim
from zsim.analytic import devices, mixed
from zsim.analytic.demands import SYNC_READ_MAX
from zsim.analytic.flash_share import held_units, shared_read_table
from zsim.hardware import flash
from zsim.hardware.catalog import load_profile
from zsim.scenario import scenario_from_dict
from zsim.units import KiB

DISK = load_profile("samsung-870-evo-500gb")
PARAMS = flash.flash_params(DISK)
TABLE = devices.device_table(DISK, 32 * KiB, False, False, 0.0, 1.0, SYNC_READ_MAX)


def test_held_units_follow_the_class_limit_the_writes_and_the_drive():
    assert held_units(PARAMS, 2, 50.0) == 2
    assert held_units(PARAMS, 10, 3.0) == 3  # a txg with 3 writes for the leaf holds 3
    assert held_units(PARAMS, 10, 0.2) == 1
    assert held_units(PARAMS, 10**6, 10**6) == PARAMS.parallelism


def test_no_write_share_leaves_the_table_as_it_is():
    assert shared_read_table(TABLE, PARAMS, 2, 0.0) is TABLE


def test_writes_holding_every_unit_leave_no_rate_for_reads():
    with pytest.raises(ValueError, match="none"):
        shared_read_table(TABLE, PARAMS, PARAMS.parallelism, 0.5)


@settings(max_examples=40, deadline=None)
@given(
    held=st.integers(1, PARAMS.parallelism - 1),
    low=st.floats(0.0, 1.0),
    high=st.floats(0.0, 1.0),
)
def test_more_write_time_never_speeds_the_reads_and_never_stops_them(held, low, high):
    low, high = sorted((low, high))
    a = shared_read_table(TABLE, PARAMS, held, low)
    b = shared_read_table(TABLE, PARAMS, held, high)
    for full, ra, rb in zip(TABLE.rate, a.rate, b.rate, strict=True):
        assert rb <= ra * (1 + 1e-9)
        assert ra <= full * (1 + 1e-9)
        # in a burst the reads still get the free units at the shared speed (not slowed
        # while neither the IOPS nor the bandwidth binds): more than nothing even when the
        # writes never stop
        assert rb > 0
    assert b.mean_service >= a.mean_service >= TABLE.mean_service * (1 - 1e-12)


def _rmw(**hardware: object) -> dict:
    return {
        "hardware": {
            "disk": "samsung-870-evo-500gb",
            "ram": "2GiB",
            "cpu_cores": 8,
            "zfs_version": "2.2",
            **hardware,
        },
        "pool": {"layout": "raidz2 5", "recordsize": "128K", "compression": "off"},
        "workload": {
            "tool": "fio",
            "rw": "randwrite",
            "overwrite": True,
            "bs": "16K",
            "numjobs": 1,
            "iodepth": 4,
            "size": "8GiB",
        },
    }


def test_flash_reads_beside_the_txg_writes_beat_a_time_shared_leaf(monkeypatch):
    """16K read-modify-writes on a SATA SSD raidz2, where the txg's writes take a large
    share of each leaf: the records' reads keep the units the writes do not hold, so the
    calls go faster than on a leaf shared in time as a disk head is (the model's fallback
    when the writes may hold every unit, forced here)."""
    shared = zsim.simulate(scenario_from_dict(_rmw()), engine="analytic")
    assert shared.details["leaf_write_burst_share"] > 0.2
    monkeypatch.setattr(mixed, "held_units", lambda params, active, writes: params.parallelism)
    timeshared = zsim.simulate(scenario_from_dict(_rmw()), engine="analytic")
    assert timeshared.details["leaf_write_burst_share"] is not None
    assert shared.write.iops > 1.1 * timeshared.write.iops


def test_flash_writes_that_may_hold_every_unit_share_the_leaf_in_time():
    """0.7 syncs a txg at a fixed 64 MiB, above 60 % of 1 GiB's dirty limit: the async
    writes may take 10 units, every unit of the 870 EVO. The job is still answered."""
    r = zsim.simulate(scenario_from_dict(_rmw(ram="1GiB", zfs_version="0.7")), engine="analytic")
    assert r.write.iops > 0
    assert r.details["validity"] == "in range"
