"""Speed of the capacity model and the layout parser; prints figures (not a test).

Run: python benchmarks/bench_capacity.py
"""

from __future__ import annotations

import time

from zsim.capacity import capacity
from zsim.layout.grammar import parse_layout

CASES = ["raidz2 8", "12x mirror 2", "draid2:8d:2s:24c", "draid3:16d:1s:60c", "10x raidz2 6"]


def rate(fn, seconds: float = 1.0) -> float:
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn()
        n += 1
    return n / (time.perf_counter() - start)


def main() -> None:
    for layout in CASES:
        calls = rate(lambda layout=layout: capacity(layout, 16 * 10**12))
        parses = rate(lambda layout=layout: parse_layout(layout))
        print(f"{layout:<22} capacity {calls:9.0f} calls/s   parse {parses:9.0f} calls/s")


if __name__ == "__main__":
    main()
