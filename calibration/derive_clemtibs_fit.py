"""Fit and validate the clemtibs benchmark from its raw logs; write the derived figures.

    python3 calibration/derive_clemtibs_fit.py [LOGS]

LOGS is the ``zfs_benchmark_logs/`` folder of GitHub ``clemtibs/zfs_benchmark_tools`` (commit
``0e21f713b2438a93475f54215c893fbffc180415``; default: the project's shared copy,
``../shared/reference/clemtibs-zfs-benchmark/zfs_benchmark_logs``). The logs carry no licence,
so only the figures derived here are kept, in
``calibration/reference/clemtibs-zfs-benchmark-fit.toml``.

1. parse every fio log (zsim.calibrate.fio) and the ``zpool iostat -v`` of both
   ``async_seq_write`` runs (zsim.calibrate.zpool);
2. fit the data disks' sustained write rate from the per-second per-disk samples
   (zsim.validation.raw_sets.fit_disk_write_rate);
3. predict every fio job with the discrete-event engine, on the datasheet-level disk profile
   and on the profile with the fitted rate, beside the rule of thumb. The fit uses the disk
   telemetry only, never the fio figures, so every row is out of sample.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from zsim import __version__  # noqa: E402
from zsim.files import atomic_write_text  # noqa: E402
from zsim.simulate import simulate  # noqa: E402
from zsim.validation.clemtibs import (  # noqa: E402
    PREDICTED_JOBS,
    RUNTIME_S,
    SYNC_JOB,
    clemtibs_scenario,
)
from zsim.validation.raw_sets import (  # noqa: E402
    clemtibs_pool_rates,
    clemtibs_runs,
    fit_disk_write_rate,
)

MiB = 1 << 20
OUT = ROOT / "calibration" / "reference" / "clemtibs-zfs-benchmark-fit.toml"
STREAMING_POOLS = ("tank_raidz2_nospecial_slog", "tank_raidz2_special_slog")
SEED = 1


def main(logs: Path) -> None:
    start = time.perf_counter()
    runs = clemtibs_runs(logs)
    rates = [
        clemtibs_pool_rates(logs / pool / "async_seq_write/zfs/zpool_iostat.log", pool, "write")
        for pool in STREAMING_POOLS
    ]
    fit = fit_disk_write_rate(rates)
    rows = []
    for job in PREDICTED_JOBS:
        measured = [m for (pool, test), m in sorted(runs.items()) if test == job and m.ok]
        for slog in (False, True) if job == SYNC_JOB else (False,):
            pools = [
                m
                for m in measured
                if (m.source.split("/")[-3].endswith("_slog")) == slog or job != SYNC_JOB
            ]
            if not pools:
                continue
            # as zsim.validation.clemtibs runs them: 60 simulated seconds, like the real runs
            datasheet, fitted = (
                simulate(
                    clemtibs_scenario(job, rate, slog),
                    seed=SEED,
                    target_ci=0.05,
                    max_sim_seconds=RUNTIME_S,
                    max_wall_seconds=20.0,
                )
                for rate in (None, fit.value)
            )
            rule = simulate(clemtibs_scenario(job, None, slog), engine="baseline")
            for direction in ("read", "write"):
                values = [getattr(m, direction) for m in pools]
                if any(v is None for v in values):
                    continue
                meas = sum(v.bytes_per_s for v in values) / len(values)
                rows.append(
                    {
                        "job": job + ("-slog" if slog else ""),
                        "direction": direction,
                        "runs": len(values),
                        "measured_MiBps": meas / MiB,
                        "datasheet_MiBps": getattr(datasheet, direction).bytes_per_s / MiB,
                        "fitted_MiBps": getattr(fitted, direction).bytes_per_s / MiB,
                        "rule_MiBps": getattr(rule, direction).bytes_per_s / MiB,
                        "limit": fitted.limit,
                    }
                )
    lines = [
        "# zsim's fit and validation of the clemtibs ZFS benchmark (derived figures only).",
        "#",
        "# Source: GitHub clemtibs/zfs_benchmark_tools, folder zfs_benchmark_logs/, commit",
        "# 0e21f713b2438a93475f54215c893fbffc180415 (2025-04-28), by Brian Clements-Tiberio. No",
        "# licence is stated, so the raw logs are not in the project; these figures were computed",
        "# from them by calibration/derive_clemtibs_fit.py with zsim's own parsers.",
        f"# zsim {__version__}, seed {SEED}, discrete-event engine (target CI 5 %, "
        f"{RUNTIME_S:g} simulated s as the real runs), "
        f"{time.perf_counter() - start:.0f} s.",
        "#",
        "# [disk_write_rate]: the 5 data disks' per-second write rates from zpool iostat -v",
        "# during async_seq_write on the two pools that ran it (1 MiB records streaming to the",
        "# outer zone); mean, standard error sigma/sqrt(n), spread, count, busiest second.",
        "# [[row]]: fio MiB/s (mean over the pools that ran the job) against zsim with the",
        "# datasheet-level profile (toshiba-x300-pro-12tb), zsim with max_sustained = the fitted",
        "# rate, and the rule of thumb. The fit never sees the fio figures: all rows are out of",
        "# sample. Errors are predicted / measured - 1.",
        "",
        "schema = 1",
        'kind = "derived-fit-and-validation"',
        "",
        "[disk_write_rate]",
        f"value_MiBps = {fit.value / MiB:.2f}",
        f"stderr_MiBps = {fit.stderr / MiB:.3f}",
        f"stdev_MiBps = {fit.stdev / MiB:.2f}",
        f"samples = {fit.samples}",
        f"peak_MiBps = {fit.peak / MiB:.1f}",
        'used_as = "max_sustained of the disk profile (min_sustained in proportion)"',
    ]
    for r in rows:
        lines += [
            "",
            "[[row]]",
            f'job = "{r["job"]}"',
            f'direction = "{r["direction"]}"',
            f"runs = {r['runs']}",
            f"measured_MiBps = {r['measured_MiBps']:.2f}",
            f"datasheet_MiBps = {r['datasheet_MiBps']:.2f}",
            f"datasheet_error = {r['datasheet_MiBps'] / r['measured_MiBps'] - 1:.3f}",
            f"fitted_MiBps = {r['fitted_MiBps']:.2f}",
            f"fitted_error = {r['fitted_MiBps'] / r['measured_MiBps'] - 1:.3f}",
            f"rule_MiBps = {r['rule_MiBps']:.2f}",
            f"rule_error = {r['rule_MiBps'] / r['measured_MiBps'] - 1:.3f}",
            f'limit = "{r["limit"]}"',
        ]
    atomic_write_text(OUT, "\n".join(lines) + "\n")
    print(f"wrote {OUT} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    default = ROOT.parent / "shared/reference/clemtibs-zfs-benchmark/zfs_benchmark_logs"
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
