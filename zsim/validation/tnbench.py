"""zsim against a tn-bench run on a TrueNAS M50: dd write/read thread scaling on NVMe raidz1.

Reference: GitHub ``nickf1227/tn-bench``, file ``samples/m50/tn_bench_results.json``, commit
``e4a0e9bb43150dc697b8e60977f3a84b4dd401bf`` (GPL-3.0; only derived figures are kept, in
``calibration/reference/tnbench-m50.toml``, shipped in the wheel as ``zsim/reference``).
One raidz1 vdev of 4 NVMe drives (2 × Intel DC P4610 1.6TB + 2 × Samsung PM1725a 1.6TB),
recordsize 1M, compression off, sync disabled; N parallel ``dd bs=1M`` of 20 GiB each from
/dev/urandom into new files, then N ``dd`` reading those files back, N = 1, 10, 20, 40.
2 × Xeon Silver 4114 (20 cores, 2.2 GHz), 251.55 GiB RAM, TrueNAS 25.10.1 (OpenZFS 2.3).

Modelling choices, each a possible source of error that is reported, not hidden:

* **One disk model.** zsim gives a pool one disk profile; the real vdev mixes two models.
  All four disks are modelled as the Intel DC P4610 1.6TB (``intel-dc-p4610-1.6tb``), whose
  figures are better documented than the PM1725a's (whose 1.6TB write figures were not
  found; ``samsung-pm1725a-1.6tb`` holds the family's upper bounds). In a raidz1 every record
  touches every disk, so the slower model sets the pace; if that is the PM1725a, zsim's
  write figures are optimistic by the difference.
* **Reads start cold.** zsim's dd read streams files laid out before the run, through an
  empty ARC. The real reads followed the writes of the same files on a 251 GiB machine:
  the 1-thread read (20 GiB) came from the ARC (no pool reads in the telemetry), and at 10
  threads about 13 % of the bytes did (pool 5688 MiB/s of data vs dd 6513 MiB/s). That row
  measures memory, not the pool, and zsim is not expected to match it.
* **Pool fill 0.3** (28 % at the start of the run), the real pool's; the pool was a busy
  production system (load ≈ 9), which zsim does not model.

Each row is one (direction, threads) point: dd MiB/s measured, predicted by zsim's DES and by
the planners' rule of thumb (:mod:`zsim.baseline`), their errors, and the resource zsim says
limits the run (``limit``). The 1-thread write is bound by one core generating /dev/urandom;
zsim should name ``cpu`` there.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from typing import Any

from zsim.scenario import Scenario, scenario_from_dict
from zsim.simulate import simulate
from zsim.units import MiB
from zsim.validation.common import median_abs, reference_root, relative_error

REFERENCE_FILE = "tnbench-m50.toml"
THREADS = (1, 10, 20, 40)
DISK = "intel-dc-p4610-1.6tb"

M50_HARDWARE = {
    "disk": DISK,  # all four disks as the P4610: zsim models one disk model per pool
    "ram": "251GiB",
    "cpu_cores": 20,
    "cpu_ghz": 2.2,
    "zfs_version": "2.3",
}
M50_POOL = {
    "layout": "raidz1 4",
    "recordsize": "1M",
    "compression": "off",
    "sync": "disabled",
    "fill": 0.3,
}


def tnbench_scenario(direction: str, threads: int) -> Scenario:
    """The M50 pool running ``threads`` parallel 20 GiB ``dd bs=1M`` streams."""
    if direction not in ("write", "read"):
        raise ValueError(f"direction must be 'write' or 'read', not {direction!r}")
    workload: dict[str, Any] = {
        "tool": "dd",
        "direction": direction,
        "bs": "1M",
        "bytes": "20GiB",
        "streams": threads,
    }
    if direction == "write":
        workload["source"] = "urandom"
    return scenario_from_dict(
        {
            "name": f"tn-bench m50 raidz1 4 dd {direction} {threads}T",
            "hardware": dict(M50_HARDWARE),
            "pool": dict(M50_POOL),
            "workload": workload,
        },
        source="tnbench-m50",
    )


def tnbench_measurements() -> dict[str, Any]:
    """The derived tn-bench figures, read from the bundled reference file."""
    text = reference_root().joinpath(REFERENCE_FILE).read_text(encoding="utf-8")
    return tomllib.loads(text)


@dataclass(frozen=True)
class TnRow:
    """One (direction, threads) point: measured dd MiB/s against zsim and the rule of thumb."""

    direction: str
    threads: int
    measured: float  # dd MiB/s
    zsim: float  # MiB/s, DES
    baseline: float  # MiB/s, rule of thumb
    limit: str  # what zsim says bounds the run
    baseline_limit: str
    ci_rel: float | None  # DES 95 % half-width ÷ mean (None: not reached)
    sim_seconds: float
    wall_seconds: float
    utilization: dict[str, float]
    notes: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.direction}-{self.threads}T"

    @property
    def zsim_error(self) -> float:
        return relative_error(self.zsim, self.measured)

    @property
    def baseline_error(self) -> float:
        return relative_error(self.baseline, self.measured)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "direction": self.direction,
            "threads": self.threads,
            "measured_MiBps": self.measured,
            "zsim_MiBps": self.zsim,
            "baseline_MiBps": self.baseline,
            "zsim_error": self.zsim_error,
            "baseline_error": self.baseline_error,
            "limit": self.limit,
            "baseline_limit": self.baseline_limit,
            "ci_rel": self.ci_rel,
            "sim_seconds": self.sim_seconds,
            "wall_seconds": self.wall_seconds,
            "utilization": dict(self.utilization),
            "notes": list(self.notes),
        }


def tnbench_rows(seed: int = 1, max_wall: float = 600.0, max_sim: float = 60.0) -> list[TnRow]:
    """Every tn-bench point (write then read, 1/10/20/40 threads) through DES and baseline.

    Each DES run stops at a 5 % CI or after ``max_sim`` simulated seconds (every point
    reaches its CI by 33 s, the 1-thread write), so the rows are the same on every machine;
    ``max_wall`` (seconds of wall time per run) is only a safety net."""
    points = {p["threads"]: p for p in tnbench_measurements()["point"]}
    rows: list[TnRow] = []
    for direction in ("write", "read"):
        for threads in THREADS:
            measured = float(points[threads][f"dd_{direction}_MiBps"])
            sc = tnbench_scenario(direction, threads)
            des = simulate(
                sc,
                engine="des",
                seed=seed,
                target_ci=0.05,
                max_sim_seconds=max_sim,
                max_wall_seconds=max_wall,
            )
            base = simulate(sc, engine="baseline", seed=seed)
            rows.append(
                TnRow(
                    direction=direction,
                    threads=threads,
                    measured=measured,
                    zsim=getattr(des, direction).bytes_per_s / MiB,
                    baseline=getattr(base, direction).bytes_per_s / MiB,
                    limit=des.limit,
                    baseline_limit=base.limit,
                    ci_rel=des.ci_rel,
                    sim_seconds=des.sim_seconds,
                    wall_seconds=des.wall_seconds,
                    utilization=dict(des.utilization),
                    notes=des.notes,
                )
            )
    return rows


def tnbench_summary(rows: list[TnRow], exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """Median absolute error of zsim and of the rule of thumb, over the rows not excluded."""
    kept = [r for r in rows if r.id not in exclude]
    return {
        "zsim_median_abs_error": median_abs(r.zsim_error for r in kept),
        "baseline_median_abs_error": median_abs(r.baseline_error for r in kept),
        "total": len(kept),
    }


ARC_ROW = "read-1T"
"""The 1-thread read came from the ARC (no pool reads); zsim reads cold, so it is excluded
from the second summary line."""


def tnbench_table(rows: list[TnRow]) -> str:
    """Measured vs zsim vs rule of thumb, MiB/s of dd data, with errors and zsim's limit."""
    lines = [
        f"{'point':<10} {'measured':>9} {'zsim':>9} {'err':>7} {'baseline':>9} {'err':>7}  "
        f"{'limit':<12} {'ci':>5} {'sim s':>6} {'wall s':>6}"
    ]
    for r in rows:
        ci = f"{r.ci_rel:.3f}" if r.ci_rel is not None else "n/a"
        lines.append(
            f"{r.id:<10} {r.measured:>9.1f} {r.zsim:>9.1f} {r.zsim_error:>+7.0%} "
            f"{r.baseline:>9.1f} {r.baseline_error:>+7.0%}  {r.limit:<12} {ci:>5} "
            f"{r.sim_seconds:>6.1f} {r.wall_seconds:>6.1f}"
        )
    for label, exclude in (("all points", ()), (f"without {ARC_ROW} (ARC)", (ARC_ROW,))):
        s = tnbench_summary(rows, exclude)
        lines.append(
            f"median |error| over {label} ({s['total']}): zsim "
            f"{s['zsim_median_abs_error']:.0%}, rule of thumb {s['baseline_median_abs_error']:.0%}"
        )
    lines.append(
        "MiB/s of dd data; disks all modelled as the Intel DC P4610 1.6TB (the real vdev has "
        "2 × PM1725a too); zsim's reads start cold, the real ones followed the writes"
    )
    return "\n".join(lines)
