"""HDD model with each drive's full DiskSim 4.0 parameter files, on DiskSim's validation traces.

``zsim.hardware.disksim_params`` loads the drive's ``.parv`` (with its diskspecs, model and seek
curve) and gives zsim's HDD model an exact geometry: zones, skews, tabulated seek curve, head
switch, write settle, per-command overheads, bus transfer, cache segments and read-ahead, and
the fast-write level. Each trace is replayed at queue depth 1 and compared with the measured
times (Ruemmler & Wilkes' demerit), next to the datasheet-level model (``disksim_rows``) and
DiskSim's own demerit. Goal ("part (b)"): ≤ 3 % of the measured mean on every drive; DiskSim
gets 0.6–2.2 % on the older write-through drives and 2.5–6.9 % on the DIXtrac ones.
"""

from __future__ import annotations

import csv
import io

import pytest

from zsim.des.trace import demerit, parse_validate_trace, replay
from zsim.hardware.catalog import load_profile
from zsim.hardware.disksim_params import disksim_overrides, drive_from_disksim
from zsim.validation.common import reference_root
from zsim.validation.disksim import disksim_drive_profile, disksim_rows
from zsim.validation.registry import reference_set

pytestmark = pytest.mark.slow

TOLERANCE = reference_set("disksim").tolerance
GOAL = TOLERANCE["full_params_goal"]  # demerit as a fraction of the measured mean


@pytest.fixture(scope="module")
def table():
    folder = reference_root().joinpath("disksim")
    datasheet = {r.drive: r for r in disksim_rows(seed=1)}
    out = []
    for row in csv.DictReader(io.StringIO(folder.joinpath("drives.csv").read_text())):
        stem = row["stem"]
        trace = parse_validate_trace(folder.joinpath(f"{stem}.trace").read_text(), stem)
        drive = drive_from_disksim(folder.joinpath("params", f"{stem}.parv"))  # type: ignore[arg-type]
        profile = load_profile(disksim_drive_profile(row))
        sim = replay(trace, profile, seed=1, **disksim_overrides(drive))
        m, w = trace.measured, trace.is_write
        mean = float(m.mean())
        ds = row["demerit_pct_of_mean"]
        out.append(
            {
                "drive": row["drive"],
                "measured_ms": mean * 1e3,
                "zsim_ms": float(sim.mean()) * 1e3,
                "demerit_ms": demerit(m, sim) * 1e3,
                "pct": demerit(m, sim) / mean,
                "reads_ms": demerit(m[~w], sim[~w]) * 1e3,
                "writes_ms": demerit(m[w], sim[w]) * 1e3,
                "datasheet_pct": datasheet[row["drive"]].demerit_pct,
                "disksim_pct": float(ds) / 100 if ds else None,
            }
        )
    lines = [
        f"{'drive':<32} {'meas ms':>8} {'zsim ms':>8} {'demerit':>8} {'% mean':>7} "
        f"{'R/W ms':>11} {'datasheet':>9} {'DiskSim':>7}"
    ]
    for r in out:
        ds = f"{r['disksim_pct']:.1%}" if r["disksim_pct"] is not None else "n/a"
        lines.append(
            f"{r['drive']:<32} {r['measured_ms']:>8.2f} {r['zsim_ms']:>8.2f} "
            f"{r['demerit_ms']:>8.3f} {r['pct']:>7.1%} "
            f"{r['reads_ms']:>5.2f}/{r['writes_ms']:<5.2f} {r['datasheet_pct']:>9.1%} {ds:>7}"
        )
    lines.append(f"goal: demerit ≤ {GOAL:.0%} of the measured mean on every drive")
    print("\n" + "\n".join(lines))
    return out


def test_full_parameters_beat_datasheet_figures_on_every_drive(table):
    for r in table:
        assert r["pct"] < r["datasheet_pct"], r["drive"]


def test_write_through_drives_reach_disksims_class(table):
    """The four older write-through drives DiskSim validates, and the ST41601N: ≤ 3 %."""
    older = ("HP C2247A", "DEC RZ26", "HP C2490A", "HP C3323A", "Seagate ST41601N")
    rows = [r for r in table if r["drive"] in older]
    assert len(rows) == len(older)
    missed = [f"{r['drive']} {r['pct']:.1%}" for r in rows if r["pct"] > GOAL]
    if missed:
        pytest.xfail(f"goal ≤ {GOAL:.0%} not met: {', '.join(missed)}")


def test_goal_on_every_drive(table):
    missed = [f"{r['drive']} {r['pct']:.1%}" for r in table if r["pct"] > GOAL]
    if missed:
        pytest.xfail(f"goal ≤ {GOAL:.0%} not met: {', '.join(missed)}")


def test_mean_within_ten_percent(table):
    """No drive's simulated mean is off by more than 10 % (datasheet figures: 7–28 % fast)."""
    for r in table:
        err = abs(r["zsim_ms"] - r["measured_ms"]) / r["measured_ms"]
        assert err < TOLERANCE["full_params_mean"], f"{r['drive']}: {err:.1%}"
