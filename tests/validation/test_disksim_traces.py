"""HDD model against DiskSim 4.0's validation traces (real drives, measured per request).

Each drive is described only by datasheet-level figures (capacity, rpm, outer/inner media
rate, average seek, cache size, write-back on/off), and its trace is replayed at queue depth
1. The figure of merit is Ruemmler & Wilkes' demerit. The project's goal is ≤ 15 % of the
measured mean on the write-through drives (a simple model gets 17–30 %, a constant service
time 47–56 %, DiskSim with the full parameter files 0.6–2.2 %); the table prints where zsim
stands on every drive, and the asserts hold what zsim reaches today.
"""

from __future__ import annotations

import numpy as np
import pytest

from zsim.des.trace import demerit, parse_validate_trace
from zsim.validation.common import reference_root
from zsim.validation.disksim import disksim_rows, disksim_table
from zsim.validation.registry import reference_set

pytestmark = pytest.mark.slow

TOLERANCE = reference_set("disksim").tolerance


@pytest.fixture(scope="module")
def rows():
    result = disksim_rows(seed=1)
    print("\n" + disksim_table(result))
    return result


def test_demerit_matches_disksims_own_rms_tool():
    """Our demerit on DiskSim's per-request predictions equals the value DiskSim's ``rms``
    reported (drives.csv, demerit_exact_ms) — the metric is implemented right."""
    import csv
    import io

    folder = reference_root().joinpath("disksim")
    table = csv.DictReader(io.StringIO(folder.joinpath("drives.csv").read_text()))
    checked = 0
    for row in table:
        sim_file = folder.joinpath("disksim-sim", f"{row['stem']}.disksim_ms.txt")
        if not sim_file.is_file() or not row["demerit_exact_ms"]:
            continue
        trace = parse_validate_trace(folder.joinpath(f"{row['stem']}.trace").read_text())
        sim = np.array([float(x) for x in sim_file.read_text().split()]) / 1e3
        got = demerit(trace.measured, sim) * 1e3
        assert got == pytest.approx(float(row["demerit_exact_ms"]), abs=TOLERANCE["rms_tool_ms"])
        checked += 1
    assert checked == 10


def test_every_drive_beats_a_constant_service_time(rows):
    assert len(rows) == 11
    for r in rows:
        assert r.demerit_pct < r.constant_pct, r.drive


def test_mean_access_time_within_30_percent(rows):
    for r in rows:
        assert (
            abs(r.zsim_mean_ms - r.measured_mean_ms) / r.measured_mean_ms
            <= TOLERANCE["mean_access_time"]
        ), r.drive


def test_write_through_goal(rows):
    """Goal ≤ 15 % on the write-through drives; reported, met today on one of five."""
    write_through = [r for r in rows if not r.write_back]
    goal = TOLERANCE["write_through_goal"]
    met = [r.drive for r in write_through if r.demerit_pct <= goal]
    worst = max(r.demerit_pct for r in write_through)
    print(
        f"write-through drives within {goal:.0%}: {len(met)}/{len(write_through)}; "
        f"worst {worst:.1%}"
    )
    assert worst <= TOLERANCE["write_through_worst"]
