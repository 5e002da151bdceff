"""Predicted vs measured on bundled reference sets, with errors, zsim beside the rule of thumb.

Reference: Jim Salter, "ZFS versus RAID: Eight Ironwolf disks, two filesystems, one winner",
Ars Technica, May 2020 — figures in ``calibration/reference/ars-ironwolf8.toml`` (shipped in
the wheel as ``zsim/reference``). The hardware is 8 × Seagate IronWolf 12TB on an LSI
9300-8i, 64 GiB RAM, 8 cores, ZFS on Linux 0.7.5, ashift 12.

Assumptions the article does not state, chosen so the runs measure the disks as the article
intends ("uncached"): each fio job works on its own 16 GiB file (8 jobs: 128 GiB, twice RAM),
and the single-process run on a 128 GiB file; the pool is fresh (1 % full), so data sits in
the outer zones. zsim models no extra cost for rewriting existing blocks (frees, space-map
and indirect-block updates), so its write figures compare with the article's first run on a
fresh file; the rewrite figures are reported beside them. Every comparison reports its
error, good or bad.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from zsim.scenario import Scenario, scenario_from_dict
from zsim.simulate import simulate
from zsim.units import MiB
from zsim.validation.common import map_runs, median_abs, reference_root, relative_error

REFERENCE_FILE = "ars-ironwolf8.toml"

TOLERANCE: Mapping[str, float] = MappingProxyType({"absolute": 0.25, "ratio_factor": 1.5})
"""An absolute figure within ±25 %; a ratio of two runs on the measured side of 1 and within a
factor 1.5 of it. :data:`zsim.validation.registry.REFERENCE_SETS` lists it as the set's
tolerance."""

ARS_HARDWARE = {
    "disk": "seagate-ironwolf-12tb",
    "hba": "lsi-9300-8i",
    "ram": "64GiB",
    "cpu_cores": 8,
    "cpu_ghz": 3.7,  # Ryzen 7 2700X base clock
    "zfs_version": "0.7",
}


def ars_scenario(
    layout: str,
    recordsize: str,
    rw: str,
    bs: str = "1M",
    numjobs: int = 8,
    iodepth: int = 8,
    size: str = "16GiB",
    overwrite: bool | None = None,
    fsync: int = 0,
) -> Scenario:
    """One Ars run. The article reports rewrites of existing files (the first write run on a
    fresh file was thrown away), so write jobs overwrite unless told otherwise. ``fsync``:
    fio's ``fsync`` (1: the article's "randwrite with sync", an fsync after every write)."""
    workload: dict[str, Any] = {
        "tool": "fio",
        "rw": rw,
        "bs": bs,
        "numjobs": numjobs,
        "iodepth": iodepth,
        "size": size,
    }
    if rw in ("write", "randwrite"):
        workload["overwrite"] = True if overwrite is None else overwrite
    if fsync:
        workload["fsync"] = fsync
    synced = f" fsync={fsync}" if fsync else ""
    return scenario_from_dict(
        {
            "name": f"ars {layout} rs={recordsize} {rw}{synced} {bs} {numjobs}x{iodepth}",
            "hardware": dict(ARS_HARDWARE),
            # a fresh pool holding only the test files: 8 × 16 GiB is 0.2 % of 72 TB
            "pool": {"layout": layout, "ashift": 12, "recordsize": recordsize, "fill": 0.01},
            "workload": workload,
        },
        source="ars-ironwolf8",
    )


@dataclass(frozen=True)
class ArsPoint:
    """One published figure: an absolute rate (MiB/s) or a ratio of two runs."""

    id: str
    what: str
    measured: float
    unit: str  # "MiB/s" or "ratio"
    tolerance: str  # "±25%" or "direction, ×1.5"


@dataclass(frozen=True)
class ArsRow:
    point: ArsPoint
    zsim: float
    baseline: float

    @property
    def zsim_error(self) -> float:
        return relative_error(self.zsim, self.point.measured)

    @property
    def baseline_error(self) -> float:
        return relative_error(self.baseline, self.point.measured)

    @property
    def passed(self) -> bool:
        """Within the set's :data:`TOLERANCE` (the registry's entry for ``ars``): an
        absolute figure within ``absolute``, a ratio on the same side of 1 as the measured
        one and within a factor ``ratio_factor`` of it."""
        tol = TOLERANCE
        if self.point.unit == "MiB/s":
            return abs(self.zsim_error) <= tol["absolute"]
        same_side = (self.zsim - 1) * (self.point.measured - 1) > 0
        factor = tol["ratio_factor"]
        return same_side and 1 / factor <= self.zsim / self.point.measured <= factor

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.point.id,
            "what": self.point.what,
            "unit": self.point.unit,
            "measured": self.point.measured,
            "zsim": self.zsim,
            "baseline": self.baseline,
            "zsim_error": self.zsim_error,
            "baseline_error": self.baseline_error,
            "tolerance": self.point.tolerance,
            "passed": self.passed,
        }


MAX_SIM = 120.0
"""Simulated seconds a DES run of the Ars figures may take before it reports what it has.
Every run reaches a 5 % CI well before this (the slowest, ``stripe 2`` 128K random writes, at
88 s); a cap in simulated time gives the same answer on every machine, which a wall-time cap
does not."""
DIFFERENCE_CI = 0.01
"""The 95 % CI the two runs of the fsync=1 difference stop at (or tighter if asked): their
rates lie a tenth apart, so at 3 % each the difference carries about ±28 % of noise; at 1 %
(7 and 16 s of wall time) about ±10 %."""
MAX_WALL = 600.0
"""Wall-time safety net per run, seconds: far above what any run needs (under a minute), so
it never decides a figure."""

_RUNS: dict[tuple[str, str, str, int, float, float, float], float] = {}


def _rate(
    sc: Scenario,
    engine: str,
    direction: str,
    seed: int,
    target_ci: float,
    max_wall: float = MAX_WALL,
    max_sim: float = MAX_SIM,
) -> float:
    """MiB/s of one run; identical runs within a process are made once (same seed, same
    answer), since several published points share a configuration."""
    key = (sc.to_toml(), engine, direction, seed, target_ci, max_wall, max_sim)
    if key not in _RUNS:
        r = simulate(
            sc,
            engine=engine,
            seed=seed,
            target_ci=target_ci,
            max_sim_seconds=max_sim,
            max_wall_seconds=max_wall,
        )
        _RUNS[key] = getattr(r, direction).bytes_per_s / MiB
    return _RUNS[key]


def _one_run(key: tuple[Scenario, str, str, int, float, float, float]) -> float:
    sc, engine, direction, seed, target_ci, max_wall, max_sim = key
    return _rate(sc, engine, direction, seed, target_ci, max_wall, max_sim)


def _prefill(keys: list[tuple[Scenario, str, str, int, float, float, float]]) -> None:
    """Make the runs ``keys`` name (:func:`_rate`'s arguments) that are not made yet, one
    process per core, into :func:`_rate`'s cache."""
    todo: dict[tuple, tuple[Scenario, str, str, int, float, float, float]] = {}
    for key in keys:
        sc, *rest = key
        todo.setdefault((sc.to_toml(), *rest), key)
    todo = {k: v for k, v in todo.items() if k not in _RUNS}
    _RUNS.update(zip(todo, map_runs(_one_run, list(todo.values())), strict=True))


def ars_measurements() -> dict[str, dict[str, Any]]:
    """The Ars figures by id, read from the bundled reference file."""
    text = reference_root().joinpath(REFERENCE_FILE).read_text(encoding="utf-8")
    return {m["id"]: m for m in tomllib.loads(text)["measurement"]}


def ars_rows(
    seed: int = 1, target_ci: float = 0.03, max_wall: float = MAX_WALL, max_sim: float = MAX_SIM
) -> list[ArsRow]:
    """Run every Ars ZFS figure (async, and the fsync=1 difference) through DES and baseline.

    Each DES run stops at ``target_ci`` or after ``max_sim`` simulated seconds, so the rows
    are the same on every machine; ``max_wall`` (seconds of wall time per run) is only a
    safety net and a run it stops depends on the machine's speed."""
    rows: list[ArsRow] = []
    m = ars_measurements()

    def both(sc: Scenario, direction: str) -> tuple[float, float]:
        return (
            _rate(sc, "des", direction, seed, target_ci, max_wall, max_sim),
            _rate(sc, "baseline", direction, seed, target_ci),
        )

    single = m["raidz2-8-vs-mdraid6-8-1M-randread-single-process"]["raidz2_8_read_MiBps"]
    absolute = [
        (
            "raidz2-8-1M-randwrite-rs128K",
            "raidz2 8",
            "128K",
            "randwrite",
            8,
            8,
            "16GiB",
            m["raidz2-8-1M-randwrite-rs128K"]["write_MiBps"],
        ),
        (
            "raidz2-8-1M-randwrite-rs1M",
            "raidz2 8",
            "1M",
            "randwrite",
            8,
            8,
            "16GiB",
            m["raidz2-8-1M-randwrite-rs1M"]["write_MiBps"],
        ),
        (
            "raidz2-8-1M-randwrite-rs1M-first-run",
            "raidz2 8",
            "1M",
            "randwrite",
            8,
            8,
            "16GiB",
            m["raidz2-8-1M-randwrite-rs1M-first-run"]["write_MiBps"],
        ),
        (
            "2xraidz2-4-1M-randread-rs1M",
            "2x raidz2 4",
            "1M",
            "randread",
            8,
            8,
            "16GiB",
            m["2xraidz2-4-1M-randread-rs1M"]["read_MiBps"],
        ),
        (
            "raidz2-8-1M-randread-rs1M-single-process",
            "raidz2 8",
            "1M",
            "randread",
            1,
            1,
            "128GiB",
            single,
        ),
    ]
    pct = m["vdev-scaling-1M-randwrite-n2"]["pct_of_single"]
    runs = [
        (
            ars_scenario(
                layout, rs, rw, numjobs=jobs, iodepth=depth, size=size,
                overwrite="first-run" not in pid,
            ),
            "read" if "read" in rw else "write",
        )
        for pid, layout, rs, rw, jobs, depth, size, measured in absolute
    ]  # fmt: skip
    ratios = [
        ("vdev-scaling-2x disk", "stripe 2", "stripe 1", pct["2x disk"]),
        ("vdev-scaling-2x mirror 2", "2x mirror 2", "mirror 2", pct["2x mirror 2"]),
        ("vdev-scaling-2x raidz2 4", "2x raidz2 4", "raidz2 4", pct["2x raidz2 4"]),
        ("raidz2-4-vs-one-disk", "raidz2 4", "stripe 1", pct["raidz2 4 (per data disk)"]),
    ]
    runs += [(ars_scenario(lay, "128K", "randwrite"), "write") for r in ratios for lay in r[1:3]]
    runs += [(ars_scenario("raidz2 8", rs, "randread"), "read") for rs in ("1M", "128K")]
    # the DES runs are independent: one per core at once (each is the same on any core)
    _prefill([(sc, "des", d, seed, target_ci, max_wall, max_sim) for sc, d in runs])
    for (pid, layout, rs, rw, jobs, depth, _, measured), (sc, direction) in zip(
        absolute, runs, strict=False
    ):
        z, b = both(sc, direction)
        rows.append(
            ArsRow(
                ArsPoint(
                    pid, f"{layout} rs={rs} 1M {rw} {jobs}x{depth}", measured, "MiB/s", "±25%"
                ),
                z,
                b,
            )
        )

    # two vdevs ÷ one of the same class; raidz2 4 ÷ one disk ("160 % of one disk": a 2-data-
    # disk raidz2 falls short of 2 disks)
    for pid, top, bottom, percent in ratios:
        zt, bt = both(ars_scenario(top, "128K", "randwrite"), "write")
        zb, bb = both(ars_scenario(bottom, "128K", "randwrite"), "write")
        what = f"{top} ÷ {bottom}, 1M randwrite rs=128K"
        point = ArsPoint(pid, what, percent / 100, "ratio", "direction, ×1.5")
        rows.append(ArsRow(point, zt / zb, bt / bb))
    # recordsize 1M vs 128K for 1M random reads on raidz2 8: "just under 100 MiB/s" better
    r1, rb1 = both(ars_scenario("raidz2 8", "1M", "randread"), "read")
    r128, rb128 = both(ars_scenario("raidz2 8", "128K", "randread"), "read")
    rows.append(
        ArsRow(
            ArsPoint(
                "raidz2-8-randread-rs1M-minus-rs128K",
                "raidz2 8 1M randread: rs=1M − rs=128K (MiB/s)",
                m["raidz2-8-1M-randread-rs1M-vs-rs128K"]["delta_read_MiBps_approx"],
                "MiB/s",
                "±25%",
            ),
            r1 - r128,
            rb1 - rb128,
        )
    )
    # the same for 1M random writes with an fsync after each: "recordsize=1M adds 54 MiB/s"
    ci = min(target_ci, DIFFERENCE_CI)
    synced = [ars_scenario("raidz2 8", rs, "randwrite", fsync=1) for rs in ("1M", "128K")]
    _prefill([(sc, "des", "write", seed, ci, max_wall, max_sim) for sc in synced])
    w1, w128 = (_rate(sc, "des", "write", seed, ci, max_wall, max_sim) for sc in synced)
    wb1, wb128 = (_rate(sc, "baseline", "write", seed, ci) for sc in synced)
    rows.append(
        ArsRow(
            ArsPoint(
                "raidz2-8-syncwrite-rs1M-minus-rs128K",
                "raidz2 8 1M randwrite fsync=1: rs=1M − rs=128K (MiB/s)",
                m["raidz2-8-1M-syncwrite-rs1M-vs-rs128K"]["delta_write_MiBps"],
                "MiB/s",
                "±25%",
            ),
            w1 - w128,
            wb1 - wb128,
        )
    )
    return rows


def ars_summary(rows: list[ArsRow]) -> dict[str, Any]:
    """Median absolute error of zsim and of the rule of thumb over the rows."""
    return {
        "zsim_median_abs_error": median_abs(r.zsim_error for r in rows),
        "baseline_median_abs_error": median_abs(r.baseline_error for r in rows),
        "passed": sum(r.passed for r in rows),
        "total": len(rows),
    }


def ars_table(rows: list[ArsRow]) -> str:
    lines = [f"{'point':<44} {'measured':>9} {'zsim':>9} {'err':>7} {'baseline':>9} {'err':>7}  ok"]
    lines.extend(
        f"{r.point.id:<44} {r.point.measured:>9.2f} {r.zsim:>9.2f} {r.zsim_error:>+7.0%} "
        f"{r.baseline:>9.2f} {r.baseline_error:>+7.0%}  {'yes' if r.passed else 'NO'}"
        for r in rows
    )
    s = ars_summary(rows)
    lines.append(
        f"median |error|: zsim {s['zsim_median_abs_error']:.0%}, rule of thumb "
        f"{s['baseline_median_abs_error']:.0%}; within tolerance {s['passed']}/{s['total']}"
    )
    return "\n".join(lines)


def ars_width_shape(
    seed: int = 1, target_ci: float = 0.05, max_wall: float = MAX_WALL, max_sim: float = MAX_SIM
) -> dict[str, list[float]]:
    """Throughput of one raidz2 of width n+2 per data disk, as a multiple of one disk, for
    n = 2, 4, 6 (1M random writes at rs=128K, and 1M random reads at rs=1M).

    The article: "a single raidz2 vdev of width n+2 gives much less than n data disks' worth,
    and the shortfall grows with width"; "wide raidz2 1M reads keep up until n=4, then fall
    off sharply". Its one number: raidz2 4 writes at 160 % of one disk (0.8 per data disk).
    Caps as :func:`ars_rows` (the same caps share its runs).
    """
    out: dict[str, list[float]] = {}
    for key, rs, rw, direction in (
        ("write", "128K", "randwrite", "write"),
        ("read", "1M", "randread", "read"),
    ):
        caps = (max_wall, max_sim)
        one = _rate(ars_scenario("stripe 1", rs, rw), "des", direction, seed, target_ci, *caps)
        out[key] = [
            _rate(ars_scenario(f"raidz2 {n + 2}", rs, rw), "des", direction, seed, target_ci, *caps)
            / (n * one)
            for n in (2, 4, 6)
        ]
    return out
