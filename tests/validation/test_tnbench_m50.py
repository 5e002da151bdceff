"""zsim against the tn-bench M50 run (calibration/reference/tnbench-m50.toml).

One 4-wide raidz1 of NVMe, dd bs=1M, 20 GiB per thread, write from /dev/urandom then read
back, at 1, 10, 20 and 40 threads (GitHub nickf1227/tn-bench, samples/m50, commit e4a0e9b).
Every point's error is printed beside the rule of thumb's. What is asserted:

* the 1-thread write is bound by one core generating /dev/urandom: zsim must name ``cpu``
  as the limit and land within ±25 % (the tolerance of the Ars absolute figures);
* write throughput rises from 1 to 10 threads by about the measured factor (9.0×; zsim must
  be in the same direction and within a factor 1.5 of it);
* both directions stop scaling past 20 (writes) or 10 (reads) threads, as measured (the real
  rates move by < 2 %; zsim's may move by < 10 %);
* zsim's median absolute error is lower than the rule of thumb's.

Absolute rates that zsim does not meet yet are xfails that carry their error and the
reason, so every run reports them.
"""

from __future__ import annotations

import pytest

from zsim.validation.registry import reference_set
from zsim.validation.tnbench import (
    ARC_ROW,
    tnbench_measurements,
    tnbench_rows,
    tnbench_summary,
    tnbench_table,
)

pytestmark = pytest.mark.slow

TOLERANCE = reference_set("tnbench").tolerance

_SATURATION = (
    "the real pool stops at ~2.72 GiB/s (2782 MiB/s) of written data (~928 MiB/s per disk "
    "with parity) "
    "and zsim, CPU-bound on 20 cores of /dev/urandom, goes on to ~4.5 GiB/s; the real box "
    "ran production load (load average 9) that zsim does not model, and half its disks are "
    "PM1725a drives modelled as P4610s"
)
_READ_CEILING = (
    "the real reads stop at ~6.4–6.5 GiB/s (6513–6622 MiB/s; ~1.6 GiB/s per disk, half the "
    "P4610's 3200 MB/s); "
    "zsim reads every disk at its datasheet rate (~11.9 GiB/s in all) — the real bound (a shared "
    "PCIe uplink, CPU, the PM1725a) is not in the scenario"
)
KNOWN_MISSES = {
    "write-20T": _SATURATION,
    "write-40T": _SATURATION,
    "read-1T": "the real 1-thread read came from the ARC (no pool reads); zsim reads cold, "
    "and even so predicts one stream at ~5.1 GiB/s against 2.72 GiB/s measured from memory",
    "read-10T": _READ_CEILING,
    "read-20T": _READ_CEILING,
    "read-40T": _READ_CEILING,
}


@pytest.fixture(scope="module")
def rows():
    result = tnbench_rows(seed=1)  # stops at a 5 % CI or 60 simulated seconds
    print("\n" + tnbench_table(result))
    return result


def _row(rows, point):
    (row,) = [r for r in rows if r.id == point]
    return row


def test_every_point_is_predicted(rows):
    points = {p["threads"]: p for p in tnbench_measurements()["point"]}
    assert [r.id for r in rows] == [f"{d}-{n}T" for d in ("write", "read") for n in (1, 10, 20, 40)]
    for r in rows:
        assert r.measured == points[r.threads][f"dd_{r.direction}_MiBps"]
        assert r.zsim > 0
        assert r.baseline > 0


def test_single_thread_write_is_bound_by_urandom_on_one_core(rows):
    row = _row(rows, "write-1T")
    assert row.limit == "cpu", (row.limit, row.utilization)
    assert abs(row.zsim_error) <= TOLERANCE["absolute"], (
        row.zsim,
        row.measured,
        f"{row.zsim_error:+.0%}",
    )


def test_write_rises_from_1_to_10_threads(rows):
    one, ten = _row(rows, "write-1T"), _row(rows, "write-10T")
    measured = ten.measured / one.measured
    predicted = ten.zsim / one.zsim
    assert predicted > 1
    factor = TOLERANCE["ratio_factor"]
    assert 1 / factor <= predicted / measured <= factor, (predicted, measured)


@pytest.mark.parametrize(
    ("low", "high"),
    [("write-20T", "write-40T"), ("read-10T", "read-20T"), ("read-20T", "read-40T")],
)
def test_saturation_where_the_pool_saturated(rows, low, high):
    a, b = _row(rows, low), _row(rows, high)
    assert abs(b.measured / a.measured - 1) < TOLERANCE["saturation_measured"]  # the reference
    assert abs(b.zsim / a.zsim - 1) < TOLERANCE["saturation_zsim"], (a.zsim, b.zsim)


@pytest.mark.parametrize("point", [f"{d}-{n}T" for d in ("write", "read") for n in (1, 10, 20, 40)])
def test_point_within_25_percent(rows, point):
    row = _row(rows, point)
    passed = abs(row.zsim_error) <= TOLERANCE["absolute"]
    if point in KNOWN_MISSES and not passed:
        pytest.xfail(f"{row.zsim_error:+.0%}: {KNOWN_MISSES[point]}")
    assert passed, (point, row.zsim, row.measured, f"{row.zsim_error:+.0%}")


def test_zsim_beats_the_rule_of_thumb(rows):
    for exclude in ((), (ARC_ROW,)):
        s = tnbench_summary(rows, exclude)
        assert s["zsim_median_abs_error"] < s["baseline_median_abs_error"], s
