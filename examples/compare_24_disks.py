"""Compare the ways to lay out 24 × 16 TB disks: usable space, efficiency, fault tolerance.

Run: python examples/compare_24_disks.py
"""

from __future__ import annotations

import zsim
from zsim.units import format_size

DISK = zsim.load_profile("seagate-exos-x16-16tb")
LAYOUTS = [
    "12x mirror 2",
    "8x mirror 3",
    "4x raidz1 6",
    "4x raidz2 6",
    "3x raidz2 8",
    "2x raidz2 12",
    "2x raidz3 12",
    "draid2:8d:2s:24c",
    "draid2:10d:2s:24c",
]


def main() -> None:
    print(f"24 × {DISK.vendor} {DISK.model}: {format_size(DISK.size_bytes)} each")
    print(
        f"{'layout':<20} {'usable (zfs list)':<26} {'eff.':>6} {'1M records':<26} {'tolerates':>9}"
    )
    for layout in LAYOUTS:
        r = zsim.capacity(
            layout, DISK.size_bytes, recordsize="1M", logical_sector=DISK.logical_sector_bytes
        )
        print(
            f"{layout:<20} {format_size(r.usable_bytes):<26} {r.efficiency:>6.1%} "
            f"{format_size(r.effective_bytes):<26} {r.fault_tolerance:>9}"
        )


if __name__ == "__main__":
    main()
