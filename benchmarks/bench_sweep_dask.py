"""Cost of running a sweep on Dask instead of local processes; prints figures.

The same sweep of 40 small DES points (4 HDD layouts × 2 write workloads × 5 job counts,
each capped at a fixed number of *simulated* seconds, so every point does the same work
however it runs) is run by :func:`zsim.sweep.execute.run_points`:

* locally in 2 processes (``workers=2``; the time includes starting the process pool), and
* on a 2-worker ``distributed.LocalCluster`` (one thread per worker process; the cluster is
  started beforehand and its start-up time is printed apart),

alternately ``--repeat`` times each. For each mode: wall seconds (the best run) and points
per second; then the Dask overhead, absolute (seconds) and relative to the local run (%), and
whether both gave identical rows. Last, the fixed cost of each mode: 400 rule-of-thumb
points of about a millisecond each, sent in chunks (local: mostly starting the pool). Not a
test: figures, not asserts. The machine should be otherwise idle: the load average at the
start is printed.

Run: python benchmarks/bench_sweep_dask.py [--quick] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from zsim.scenario import scenario_from_dict
from zsim.sweep.execute import run_points
from zsim.sweep.point import SweepPoint, point_seeds, scenario_input

HDD = {"disk": "seagate-ironwolf-12tb", "hba": "lsi-9300-8i", "ram": "64GiB", "cpu_cores": 8}
LAYOUTS = ("4x mirror 2", "raidz2 8", "2x raidz1 4", "stripe 8")
WORKLOADS = {  # name → (recordsize, fio bs); random writes run to the sim-time cap
    "1M randwrite": ("1M", "1M"),
    "128K randwrite": ("128K", "128K"),
}
NUMJOBS = (2, 4, 8, 12, 16)


def sweep(max_sim_seconds: float) -> list[SweepPoint]:
    """40 DES points, each with its own seed and a fixed sim-time cap (seconds)."""
    combos = [(lay, w, nj) for lay in LAYOUTS for w in WORKLOADS for nj in NUMJOBS]
    seeds = point_seeds(42, len(combos))
    points = []
    for i, (layout, workload, numjobs) in enumerate(combos):
        recordsize, bs = WORKLOADS[workload]
        sc = scenario_from_dict(
            {
                "hardware": HDD,
                "pool": {"layout": layout, "recordsize": recordsize},
                "workload": {
                    "tool": "fio",
                    "rw": "randwrite",
                    "bs": bs,
                    "numjobs": numjobs,
                    "iodepth": 4,
                    "size": "16GiB",
                },
            }
        )
        labels = {"layout": layout, "workload": workload, "numjobs": numjobs}
        points.append(
            SweepPoint(
                i,
                scenario_input(sc),
                "des",
                seeds[i],
                labels,
                max_wall_seconds=600.0,
                max_sim_seconds=max_sim_seconds,
            )
        )
    return points


def cheap_sweep(n: int) -> list[SweepPoint]:
    """``n`` rule-of-thumb points (about a millisecond each): the fixed cost of each mode."""
    des = sweep(2.0)
    return [
        SweepPoint(i, des[i % len(des)].scenario, "baseline", i, des[i % len(des)].labels)
        for i in range(n)
    ]


def timed(**kwargs: Any) -> tuple[float, list[dict[str, Any]]]:
    """Wall seconds of one run of the sweep, and its rows."""
    start = time.perf_counter()
    rows = run_points(progress=False, **kwargs)
    return time.perf_counter() - start, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 simulated seconds per point")
    parser.add_argument("--repeat", type=int, default=2, help="runs per mode; the best counts")
    args = parser.parse_args()
    from distributed import LocalCluster

    cap = 2.0 if args.quick else 8.0
    points = sweep(cap)
    print(
        f"sweep: {len(points)} DES points, {cap:g} simulated s each, best of {args.repeat}; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
    )
    start = time.perf_counter()
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    )
    cluster_start = time.perf_counter() - start
    cheap = cheap_sweep(400)
    local = dask = local_cheap = dask_cheap = float("inf")
    try:
        for _ in range(args.repeat):  # interleaved, so a busy moment hits both modes alike
            seconds, local_rows = timed(points=points, workers=2)
            local = min(local, seconds)
            seconds, dask_rows = timed(points=points, scheduler=cluster.scheduler_address)
            dask = min(dask, seconds)
            local_cheap = min(local_cheap, timed(points=cheap, workers=2)[0])
            dask_cheap = min(
                dask_cheap, timed(points=cheap, scheduler=cluster.scheduler_address)[0]
            )
    finally:
        cluster.close()

    n = len(points)
    print(f"{'mode':<44} {'wall s':>7} {'points/s':>9}")
    print(f"{'local, 2 processes (incl. pool start)':<44} {local:>7.2f} {n / local:>9.2f}")
    print(f"{'Dask LocalCluster, 2 workers × 1 thread':<44} {dask:>7.2f} {n / dask:>9.2f}")
    print(f"Dask cluster start (not counted above): {cluster_start:.2f} s")
    print(f"Dask overhead: {dask - local:+.2f} s ({(dask - local) / local:+.1%} of local)")
    print(
        f"fixed cost, {len(cheap)} rule-of-thumb points in chunks: local {local_cheap:.2f} s, "
        f"Dask {dask_cheap:.2f} s"
    )
    differ = [a["index"] for a, b in zip(local_rows, dask_rows, strict=True) if a != b]
    print(f"identical rows: {not differ}" + (f" (points {differ} differ)" if differ else ""))


if __name__ == "__main__":
    main()
