"""Speed of the discrete-event engine on the issue's four reference cases; prints figures.

For each case: wall time, simulated seconds, simulated device I/Os per wall second, the final
95 % CI (relative half-width) and the peak resident memory. Not a test: figures, not asserts.

Run: python benchmarks/bench_des.py [--quick]
"""

from __future__ import annotations

import resource
import sys
import time

from zsim.scenario import scenario_from_dict
from zsim.simulate import simulate

HDD = {"disk": "seagate-ironwolf-12tb", "hba": "lsi-9300-8i", "ram": "64GiB", "cpu_cores": 8}
NVME = {"disk": "wd-ultrastar-sn840-3.2tb", "hba": "lsi-9500-16i", "ram": "256GiB", "cpu_cores": 32}
CASES = {
    "8-HDD raidz2, fio 1M randwrite 8x8": (
        HDD,
        {"layout": "raidz2 8", "recordsize": "1M"},
        {"tool": "fio", "rw": "randwrite", "bs": "1M", "numjobs": 8, "iodepth": 8, "size": "16GiB"},
    ),
    "4x mirror 2, fio 4K randread 8x8": (
        HDD,
        {"layout": "4x mirror 2", "recordsize": "4K"},
        {"tool": "fio", "rw": "randread", "bs": "4K", "numjobs": 8, "iodepth": 8, "size": "16GiB"},
    ),
    "8-HDD stripe, dd 4K single stream": (
        HDD,
        {"layout": "stripe 8"},
        {"tool": "dd", "direction": "write", "bs": "4K", "bytes": "100GiB"},
    ),
    "16-NVMe raidz1, fio 1M write 64x32": (
        NVME,
        {"layout": "raidz1 16", "recordsize": "1M"},
        {"tool": "fio", "rw": "write", "bs": "1M", "numjobs": 64, "iodepth": 32, "size": "8GiB"},
    ),
}


def main() -> None:
    wall_cap = 30.0 if "--quick" in sys.argv else 120.0
    print(
        f"{'case':<38} {'wall s':>7} {'sim s':>7} {'dev I/O per wall s':>19} {'ci':>7} "
        f"{'result':>22}  limit"
    )
    for name, (hw, pool, work) in CASES.items():
        sc = scenario_from_dict({"hardware": hw, "pool": pool, "workload": work})
        start = time.perf_counter()
        r = simulate(sc, seed=1, max_wall_seconds=wall_cap)
        wall = time.perf_counter() - start
        ios = sum(r.details["device_ios"].values())
        direction = r.read if r.read.iops else r.write
        ci = f"{r.ci_rel:.1%}" if r.ci_rel is not None else "n/a"
        print(
            f"{name:<38} {wall:>7.1f} {r.sim_seconds:>7.1f} {ios / wall:>19,.0f} {ci:>7} "
            f"{direction.bytes_per_s / 2**20:>12,.0f} MiB/s  {r.limit}"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
