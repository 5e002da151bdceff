"""The HDD model against DiskSim 4.0's validation traces: real drives, measured per request.

Each drive is described only by datasheet-level figures (``calibration/reference/disksim/
drives.csv``) and its trace replayed at queue depth 1; the figure of merit is Ruemmler &
Wilkes' demerit, beside a constant service time and DiskSim with the full parameter files.
"""

from __future__ import annotations

import csv
import io
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from zsim.des.trace import demerit, parse_validate_trace, replay
from zsim.hardware.catalog import load_profile
from zsim.validation.common import reference_root


@dataclass(frozen=True)
class TraceRow:
    """One drive's trace replayed with datasheet-level figures, against the measurement."""

    drive: str
    write_back: bool
    measured_mean_ms: float
    zsim_mean_ms: float
    demerit_ms: float
    demerit_pct: float
    demerit_reads_ms: float
    demerit_writes_ms: float
    constant_pct: float  # demerit of a constant service time equal to the measured mean
    disksim_pct: float | None  # DiskSim 4.0 with the drive's full parameter files
    requests_per_s: float  # replay speed, simulated requests per wall second

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def disksim_drive_profile(row: dict[str, str]) -> dict[str, Any]:
    """The inline datasheet fields of one DiskSim drive (``drives.csv``): capacity, rpm,
    outer/inner media rate, average seek (uniform over cylinder pairs, the datasheet
    definition), sector, cache size, and whether write-back caching is on."""
    return {
        "kind": "hdd",
        "capacity": int(row["capacity_bytes"]),
        "rpm": round(float(row["rpm"])),
        "max_sustained": f"{row['max_sustained_MBps_eff']}MB/s",
        "min_sustained": f"{row['min_sustained_MBps_eff']}MB/s",
        "avg_seek": f"{row['avg_seek_cyluniform_ms']}ms",
        "sector": 512,
        "cache": int(row["cache_segments"]) * int(row["segment_blocks"]) * 512,
        "write_back": int(row["fast_write_level"]) > 0,
    }


def disksim_rows(seed: int = 1) -> list[TraceRow]:
    """Replay each DiskSim 4.0 validation trace (queue depth 1) and compare distributions."""
    folder = reference_root().joinpath("disksim")
    table_text = folder.joinpath("drives.csv").read_text(encoding="utf-8")
    rows: list[TraceRow] = []
    for row in csv.DictReader(io.StringIO(table_text)):
        stem = row["stem"]
        trace = parse_validate_trace(
            folder.joinpath(f"{stem}.trace").read_text(encoding="utf-8"), stem
        )
        start = time.perf_counter()
        sim = replay(trace, load_profile(disksim_drive_profile(row)), seed=seed)
        wall = time.perf_counter() - start
        m = trace.measured
        mean = float(m.mean())
        w = trace.is_write
        d = demerit(m, sim)
        rows.append(
            TraceRow(
                drive=row["drive"],
                write_back=int(row["fast_write_level"]) > 0,
                measured_mean_ms=mean * 1e3,
                zsim_mean_ms=float(sim.mean()) * 1e3,
                demerit_ms=d * 1e3,
                demerit_pct=d / mean,
                demerit_reads_ms=demerit(m[~w], sim[~w]) * 1e3,
                demerit_writes_ms=demerit(m[w], sim[w]) * 1e3,
                constant_pct=demerit(m, np.full_like(m, mean)) / mean,
                disksim_pct=float(row["demerit_pct_of_mean"]) / 100
                if row["demerit_pct_of_mean"]
                else None,
                requests_per_s=len(sim) / wall,
            )
        )
    return rows


def disksim_table(rows: list[TraceRow]) -> str:
    lines = [
        f"{'drive':<32} {'cache':>6} {'meas ms':>8} {'zsim ms':>8} {'err':>6} "
        f"{'demerit':>8} {'R/W ms':>11} {'const':>6} {'DiskSim':>7} {'req/s':>8}"
    ]
    for r in rows:
        disksim = f"{r.disksim_pct:.1%}" if r.disksim_pct is not None else "n/a"
        err = (r.zsim_mean_ms - r.measured_mean_ms) / r.measured_mean_ms
        lines.append(
            f"{r.drive:<32} {'wb' if r.write_back else 'wt':>6} {r.measured_mean_ms:>8.2f} "
            f"{r.zsim_mean_ms:>8.2f} {err:>+6.0%} {r.demerit_pct:>8.1%} "
            f"{r.demerit_reads_ms:>5.2f}/{r.demerit_writes_ms:<5.2f} {r.constant_pct:>6.0%} "
            f"{disksim:>7} {r.requests_per_s:>8,.0f}"
        )
    lines.append(
        "demerit: RMS horizontal distance of the access-time CDFs, % of the measured "
        "mean; wt = write-through, wb = write-back; const = a constant service time"
    )
    return "\n".join(lines)
