"""The published measurement sets, read from their raw files with zsim's own parsers.

The raw files stay outside the project (their licences do not let it redistribute them); the
project ships only figures derived from them (``calibration/reference/*.toml``). The functions
here derive those figures again from the raw files, so the shipped figures are reproducible
by anyone who has the files, and so that the parsers are tested on real logs:

* clemtibs (GitHub ``clemtibs/zfs_benchmark_tools``, ``zfs_benchmark_logs/``): fio 3.36 text +
  JSON + text logs, ``zpool iostat -v <pool> 1`` and ``arcstat`` per test
  (:func:`clemtibs_runs`, :func:`clemtibs_pool_rates`), and a device parameter fitted from the
  disk-level telemetry: the data disks' sustained write rate (:func:`fit_disk_write_rate`);
* tn-bench (GitHub ``nickf1227/tn-bench``, ``samples/m50/tn_bench_results.json``): dd thread
  scaling and its ``zpool iostat`` telemetry (:func:`parse_tnbench`).
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zsim.calibrate.dd import DdResult, dd_measurement
from zsim.calibrate.fio import parse_fio_file
from zsim.calibrate.measurement import Measurement, ParseError
from zsim.calibrate.zpool import IostatSample, parse_zpool_iostat
from zsim.errors import ZsimError
from zsim.units import GiB, MiB, parse_size

# ---------------------------------------------------------------- clemtibs


def clemtibs_runs(logs: str | Path) -> dict[tuple[str, str], Measurement]:
    """Every fio run under ``zfs_benchmark_logs/``: (pool folder, test folder) → the run."""
    root = Path(logs)
    if not root.is_dir():
        raise ZsimError(f"{root}: not a folder; give the zfs_benchmark_logs/ folder")
    runs: dict[tuple[str, str], Measurement] = {}
    for log in sorted(root.glob("*/*/*.log")):
        pool, test = log.parent.parent.name, log.parent.name
        found = parse_fio_file(log)
        if len(found) != 1:
            raise ParseError(str(log), None, f"expected one fio job summary, found {len(found)}")
        runs[(pool, test)] = found[0]
    if not runs:
        raise ZsimError(f"{root}: no <pool>/<test>/<test>.log fio logs found")
    return runs


@dataclass(frozen=True)
class PoolRates:
    """Means over one phase of ``zpool iostat -v`` per-second samples (the first block,
    averages since import, is skipped). Bytes/s and operations/s; ``disk_write`` the
    per-second write rates of every data disk in the phase (for the disk-rate fit)."""

    samples: int
    read_bytes_per_s: float
    write_bytes_per_s: float
    read_ops: float
    write_ops: float
    disk_write: tuple[float, ...]


def clemtibs_pool_rates(path: str | Path, pool: str, phase: str) -> PoolRates:
    """``phase``: "read" (seconds with pool reads and no writes) or "write" (writes, no
    reads), as the shipped figures were derived."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    samples = [s for s in parse_zpool_iostat(text, str(path)) if not s.since_import]
    chosen: list[IostatSample] = []
    for s in samples:
        try:
            row = s.row(pool)
        except KeyError:
            continue
        reads, writes = row.read_bytes_per_s or 0.0, row.write_bytes_per_s or 0.0
        if (phase == "read" and reads > 0 and writes == 0) or (
            phase == "write" and writes > 0 and reads == 0
        ):
            chosen.append(s)
    if not chosen:
        raise ZsimError(f"{path}: no {phase} phase for pool {pool!r} in the samples")
    rows = [s.row(pool) for s in chosen]  # every chosen sample has the pool's row
    disks = [
        r.write_bytes_per_s or 0.0
        for s in chosen
        for r in s.rows
        if r.section == "data" and r.depth >= 2 and r.write_bytes_per_s is not None
    ]
    return PoolRates(
        samples=len(chosen),
        read_bytes_per_s=statistics.fmean(r.read_bytes_per_s or 0.0 for r in rows),
        write_bytes_per_s=statistics.fmean(r.write_bytes_per_s or 0.0 for r in rows),
        read_ops=statistics.fmean(r.read_ops or 0.0 for r in rows),
        write_ops=statistics.fmean(r.write_ops or 0.0 for r in rows),
        disk_write=tuple(disks),
    )


@dataclass(frozen=True)
class DiskRateFit:
    """The data disks' sustained write rate (bytes/s) fitted from per-second ``zpool iostat``
    samples while a large sequential write streamed full records: the mean, its standard
    error (σ/√n, the samples being seconds of one steady run), the spread and the count."""

    value: float
    stderr: float
    stdev: float
    samples: int
    peak: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def fit_disk_write_rate(rates: list[PoolRates]) -> DiskRateFit:
    """The write rate every data disk sustained during the streaming phases of ``rates``.

    In a raidz vdev written with full 1 MiB records every disk gets the same share, so each
    per-second disk sample is one observation of the disk's sustained rate at the outer zone
    (the pools held ≤ 120 GiB of 54 TiB). The mean is the estimate; σ/√n its standard error.
    """
    values = [v for r in rates for v in r.disk_write if v > 0]
    if len(values) < 2:
        raise ZsimError("fewer than two disk samples in the write phases; nothing to fit")
    mean = statistics.fmean(values)
    sd = statistics.stdev(values)
    return DiskRateFit(mean, sd / math.sqrt(len(values)), sd, len(values), max(values))


# ---------------------------------------------------------------- tn-bench

TNBENCH_FILE_BYTES = 20 * GiB
"""Bytes each tn-bench dd thread writes and reads (``bs=1M count=20480``)."""


@dataclass(frozen=True)
class TnBenchPoint:
    """One thread count: dd MiB/s (tn-bench's "MB/s" is N × 20 GiB / time / 2^20) and the
    means of the pool's ``zpool iostat`` samples labelled with each segment (bytes/s; the
    bandwidth strings' K/M/G are 1024-based), with their phase."""

    threads: int
    write_mib_s: float
    read_mib_s: float
    pool_write_bytes_per_s: float | None
    pool_read_bytes_per_s: float | None
    write_samples: int
    read_samples: int


def parse_tnbench(path: str | Path) -> tuple[list[TnBenchPoint], list[Measurement]]:
    """tn-bench's result JSON → its points and one dd :class:`Measurement` per direction and
    thread count (``numjobs`` = streams, bs 1 MiB, ``io_bytes`` = N × 20 GiB)."""
    source = str(path)
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise ParseError(source, err.lineno, f"not a tn-bench result JSON ({err.msg})") from None
    try:
        pool = doc["pools"][0]
        bench = pool["benchmark"]
        samples = pool.get("zpool_iostat_telemetry", {}).get("samples", [])
    except (KeyError, IndexError, TypeError):
        raise ParseError(source, None, "expected pools[0].benchmark (tn-bench 1.x)") from None
    points, measurements = [], []
    for entry in bench:
        try:
            threads = int(entry["threads"])
            write, read = float(entry["average_write_speed"]), float(entry["average_read_speed"])
        except (KeyError, TypeError, ValueError):
            problem = f"a benchmark entry without speeds: {entry!r}"[:120]
            raise ParseError(source, None, problem) from None
        pw, nw = _segment_mean(samples, f"{threads}T-write", "bandwidth_write", source)
        pr, nr = _segment_mean(samples, f"{threads}T-read", "bandwidth_read", source)
        points.append(TnBenchPoint(threads, write, read, pw, pr, nw, nr))
        for direction, mib_s in (("write", write), ("read", read)):
            total = threads * TNBENCH_FILE_BYTES
            seconds = total / (mib_s * MiB)
            result = DdResult(bytes=total, seconds=seconds, bytes_per_s=total / seconds)
            measurements.append(
                dd_measurement(
                    result,
                    direction=direction,
                    bs=MiB,
                    streams=threads,
                    source=f"{source}#{threads}T-{direction}",
                    name=f"{direction}-{threads}T",
                )
            )
    return points, measurements


def _segment_mean(
    samples: list[Any], label: str, key: str, source: str
) -> tuple[float | None, int]:
    """Mean of ``key`` over the segment's samples in phase ``steady_state``, or over all of
    its samples when none is (tn-bench labels short segments ``transition``/``idle``)."""
    mine = [s for s in samples if isinstance(s, dict) and s.get("segment_label") == label]
    steady = [s for s in mine if s.get("phase") == "steady_state"]
    values = []
    for s in steady or mine:
        raw = s.get(key)
        if raw in (None, "-"):
            continue
        try:
            values.append(float(parse_size(str(raw))))
        except ZsimError:
            raise ParseError(source, None, f"{label}: {key} = {raw!r} is not a ZFS size") from None
    return (statistics.fmean(values) if values else None), len(values)
