"""Speed of ``zsim resilver`` on 100-disk pools of 20 TB drives at 80 % fill; prints figures.

The issue's target: a resilver of a 100-disk pool of 20 TB drives at 80 % fill answers in
≤ 10 s of wall time. Each case prints the wall time (resilver, scrub and the durability Monte
Carlo together), the simulated resilver time, its rate and limit. Not a test: figures.

Run: python benchmarks/bench_resilver.py
"""

from __future__ import annotations

import resource
import time

from zsim.resilver.run import simulate_resilver
from zsim.scenario import scenario_from_dict

HARDWARE = {"disk": "seagate-exos-x20-20tb", "hba": "lsi-9500-16i", "ram": "256GiB",
            "cpu_cores": 16}  # fmt: skip
CASES = {
    "10x raidz2 10, 1M records": {"layout": "10x raidz2 10", "recordsize": "1M"},
    "10x raidz2 10, 128K records": {"layout": "10x raidz2 10", "recordsize": "128K"},
    "50x mirror 2, 128K records": {"layout": "50x mirror 2", "recordsize": "128K"},
    "draid2:8d:2s:100c, distributed spare": {"layout": "draid2:8d:2s:100c", "recordsize": "1M"},
}


def main() -> None:
    print(f"{'case':<40}{'wall':>8}{'resilver':>11}{'rate':>12}  limit")
    for name, pool in CASES.items():
        sc = scenario_from_dict(
            {
                "hardware": HARDWARE,
                "pool": {**pool, "fill": 0.8},
                "workload": {"rw": "randread", "bs": "128K"},
            }
        )
        start = time.perf_counter()
        r = simulate_resilver(sc)
        wall = time.perf_counter() - start
        print(
            f"{name:<40}{wall:>7.1f}s{r.seconds / 3600:>9.1f} h"
            f"{r.bytes_per_s / 1e6:>8.0f} MB/s  {r.limit}"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory {peak:.0f} MiB")


if __name__ == "__main__":
    main()
