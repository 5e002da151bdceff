"""Speed of a full sweep: every layout of 24 and of 60 disks × the 6 preset workloads.

Prints the wall time of each stage (layout enumeration, the plan with every row's capacity,
building the points, evaluating them through the executor, assembling the table) and ms
per scenario. Targets (issue 5): the 24-disk sweep in ≤ 2 s and the 60-disk one in ≤ 10 s
on a 2-core machine, ≤ 5 ms per analytic scenario.

The analytic tables these sweeps need ship with zsim (``zsim/measured_tables/``); run with
``ZSIM_SHIPPED_TABLES=off`` and an empty ``ZSIM_CACHE_DIR`` to time measuring them.

Run: python benchmarks/bench_sweep.py [--engine analytic|baseline|des] [--workers N]
     [--disk MODEL] [--repeat N]

The default engine is analytic (if a scenario cannot even be built with it, the script
says so and uses the rule of thumb instead). ``--repeat 2`` also shows a second, warm run in the
same process (``--workers 1``), i.e. without process start-up and first-call costs.
"""

from __future__ import annotations

import argparse
import time

from zsim.errors import ZsimError
from zsim.sweep.execute import run_points
from zsim.sweep.layouts import enumerate_layouts
from zsim.sweep.plan import plan_sweep
from zsim.sweep.table import build_points, run_plan

DISK = "seagate-ironwolf-12tb"


def engine_available(engine: str) -> str | None:
    """None when ``engine`` runs a simple scenario, else the reason it does not."""
    plan = plan_sweep(4, DISK, "media-1m-read", engine=engine)
    row = run_points(build_points(plan, plan.rows[:1]), workers=1)[0]
    error = row.get("error")
    return str(error) if error and "not built" in str(error) else None


def bench(n: int, engine: str, workers: int | None) -> None:
    t0 = time.perf_counter()
    layouts = enumerate_layouts(n)
    t1 = time.perf_counter()
    plan = plan_sweep(n, DISK, engine=engine)
    t2 = time.perf_counter()
    points = build_points(plan)
    t3 = time.perf_counter()
    table = run_plan(plan, workers=workers, progress=False)
    t4 = time.perf_counter()
    total = t4 - t0
    run = t4 - t3  # includes build_points again and the table assembly (both ~ms)
    errors = sum(1 for r in table.rows for w in table.workloads if r.get(f"{w}.error"))
    print(
        f"{n:>3} disks: {len(layouts)} layouts × {len(plan.workloads)} workloads = "
        f"{len(points)} scenarios, engine {engine}, workers {workers or 'default'}"
    )
    print(
        f"     enumerate {1e3 * (t1 - t0):6.2f} ms   plan+capacity {1e3 * (t2 - t1):7.1f} ms   "
        f"points {1e3 * (t3 - t2):6.1f} ms   evaluate+table {run:6.2f} s"
    )
    print(
        f"     total {total:6.2f} s = {1e3 * total / len(points):6.2f} ms per scenario"
        + (f"   ({errors} scenarios outside the engine's range)" if errors else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="analytic", choices=("analytic", "baseline", "des"))
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    engine = args.engine
    reason = engine_available(engine)
    if reason is not None:
        print(f"note: the {engine} engine is not available ({reason}); using baseline instead")
        engine = "baseline"
    for i in range(args.repeat):
        if i:
            print(f"-- run {i + 1} (warm, in this process)")
        for n in (24, 60):
            try:
                bench(n, engine, args.workers if i == 0 else 1)
            except ZsimError as err:
                print(f"{n} disks: {err}")


if __name__ == "__main__":
    main()
