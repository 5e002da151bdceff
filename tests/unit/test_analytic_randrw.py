"""Unit tests of the mixed random read/write model (:mod:`zsim.analytic.mixed`)."""

from __future__ import annotations

import math

import pytest

import zsim
from zsim.analytic.mixed_parts import (
    LeafWrites,
    cpu_burst_share,
    fixed_point,
    leaf_write_share,
    txgs_per_second,
)
from zsim.analytic.validity import OutOfRange
from zsim.scenario import scenario_from_dict
from zsim.units import MiB

LOAD = LeafWrites(
    ios=0.01, stream=4e-3, position=8e-3, tail=20e-3, mean_ios=0.01, held=0, burst=0.0
)


def test_leaf_write_share_streams_without_reads_and_seeks_back_after_them():
    idle = leaf_write_share(100.0, LOAD, 0.5, read_busy=0.0)
    assert idle == pytest.approx(100 * 0.01 * 4e-3 + 0.5 * 20e-3)
    busy = leaf_write_share(100.0, LOAD, 0.5, read_busy=1.0)
    assert busy == pytest.approx(100 * 0.01 * (4e-3 + 8e-3) + 0.5 * 20e-3)
    # a utilisation is a probability: out-of-range values are clipped
    assert leaf_write_share(100.0, LOAD, 0.5, read_busy=3.0) == pytest.approx(busy)
    assert leaf_write_share(0.0, LOAD, 0.0, read_busy=0.5) == 0.0


def test_txgs_sync_at_the_dirty_threshold_or_the_timer():
    sync = 200 * MiB
    assert txgs_per_second(0.0, sync, 5.0) == 0.0
    assert txgs_per_second(1 * MiB, sync, 5.0) == pytest.approx(0.2)  # the 5 s timer
    assert txgs_per_second(400 * MiB, sync, 5.0) == pytest.approx(2.0)  # 200 MiB each


def test_cpu_burst_share_is_the_taskq_time_the_txg_needs():
    assert cpu_burst_share(1000.0, 1e-3, 4) == pytest.approx(0.25)
    assert cpu_burst_share(1e6, 1e-3, 4) == 1.0
    assert cpu_burst_share(0.0, 1e-3, 4) == 0.0
    assert cpu_burst_share(10.0, 1e-3, 0) == 0.0


def test_fixed_point_solves_x_equals_f_of_x():
    def f(x: float) -> float:
        return 1000.0 / (1.0 + x / 500.0)  # the root: x² + 500 x − 500 000 = 0

    x = fixed_point(f, 10_000.0)
    assert x == pytest.approx((-500 + math.sqrt(500**2 + 4 * 500_000)) / 2, rel=1e-3)
    # f(hi) ≥ hi: the cap binds
    assert fixed_point(lambda x: 5000.0, 100.0) == 100.0


def _scenario(pool=None, **workload):
    w = {
        "tool": "fio",
        "rw": "randrw",
        "rwmixread": 70,
        "bs": "64K",
        "numjobs": 4,
        "iodepth": 8,
        "size": "64GiB",
    }
    w.update(workload)
    return scenario_from_dict(
        {
            "name": "randrw unit",
            "hardware": {"disk": "seagate-ironwolf-12tb", "ram": "8GiB", "cpu_cores": 8},
            "pool": {"layout": "2x mirror 2", "recordsize": "64K", **(pool or {})},
            "workload": w,
        },
        source="unit test",
    )


def test_both_directions_are_the_mix_of_one_call_rate():
    r = zsim.simulate(_scenario(), engine="analytic")
    total = r.read.iops + r.write.iops
    assert r.read.iops == pytest.approx(0.7 * total)
    assert r.write.iops == pytest.approx(0.3 * total)
    assert r.read.bytes_per_s == pytest.approx(r.read.iops * 64 * 1024)
    # fio measures from submission: a call waits for the 7 queued ahead of it in its job
    per_call = 4 / total
    assert r.read.latency_mean > 7 * per_call
    assert r.write.latency_mean > 7 * per_call
    assert r.read.latency_mean > r.write.latency_mean  # a write only dirties the ARC
    assert r.read.latency_p99 is None and r.write.latency_p99 is None
    assert 0 < r.details["leaf_write_share"] < 1


def test_all_reads_is_the_random_read_model():
    mixed = zsim.simulate(_scenario(rwmixread=100), engine="analytic")
    reads = zsim.simulate(_scenario(rw="randread"), engine="analytic")
    assert mixed.write.iops == 0
    assert mixed.read.iops == pytest.approx(reads.read.iops, rel=0.02)


def test_all_writes_is_the_write_model_held_by_the_throttle():
    mixed = zsim.simulate(_scenario(rwmixread=0), engine="analytic")
    writes = zsim.simulate(_scenario(rw="randwrite"), engine="analytic")
    assert mixed.read.iops == 0
    assert mixed.write.iops == pytest.approx(writes.write.iops, rel=0.02)
    assert mixed.details["write_throttled"]


def test_writes_take_disk_time_from_the_reads():
    """Every call a write at the same call rate would leave the reads all the disks; with
    the txg's writes on the same disks the reads get less than a read-only job's rate."""
    mixed = zsim.simulate(_scenario(rwmixread=50), engine="analytic")
    reads = zsim.simulate(_scenario(rw="randread"), engine="analytic")
    assert mixed.read.iops < reads.read.iops


def test_declines_what_it_does_not_model():
    with pytest.raises(OutOfRange, match="several records per call"):
        zsim.simulate(_scenario(bs="256K"), engine="analytic")
    with pytest.raises(OutOfRange, match="O_DIRECT"):
        zsim.simulate(_scenario(bs="16K", direct=True), engine="analytic")
    with pytest.raises(OutOfRange, match="sequential mixed"):
        zsim.simulate(_scenario(rw="rw"), engine="analytic")
    with pytest.raises(OutOfRange, match="sync writes"):
        zsim.simulate(_scenario(sync=True), engine="analytic")
    with pytest.raises(OutOfRange, match="coalesce"):
        zsim.simulate(_scenario(size="1GiB"), engine="analytic")
    # half the calls writing 1M records to two disks: the drives' write caches decide
    big = {"layout": "stripe 2", "recordsize": "1M"}
    with pytest.raises(OutOfRange, match="write cache"):
        zsim.simulate(
            _scenario(big, rwmixread=50, bs="1M", numjobs=16, iodepth=1), engine="analytic"
        )


def test_a_degraded_pool_answers_randrw_without_its_missing_leaves():
    """A raidz2 6 of 64K records with a data leaf gone: the missing leaf gets nothing, and
    the reads whose data it held read every surviving column, parity included, so the two
    leaves that held only parity on the healthy pool (64K records start on the same column)
    now work as hard as the rest, and the mix gets no faster than on the healthy pool."""
    pool = {"layout": "raidz2 6"}
    healthy = zsim.simulate(_scenario(pool=pool), engine="analytic")
    degraded = zsim.simulate(_scenario(pool={**pool, "failed": ["sdb"]}), engine="analytic")
    assert degraded.utilization["disk:sdb"] == 0.0
    for parity_only in ("disk:sde", "disk:sdf"):
        assert degraded.utilization[parity_only] > 5 * healthy.utilization[parity_only]
    total = degraded.read.iops + degraded.write.iops
    assert 0 < total <= healthy.read.iops + healthy.write.iops
