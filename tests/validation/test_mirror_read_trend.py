"""Trend (issue 17): sequential reads by several streams grow with a mirror's children.

Published runs of a few concurrent sequential readers on 2- and 3-way HDD mirrors measured
2-3× one disk. The mechanism is ``vdev_mirror_child_select()`` (``module/zfs/vdev_mirror.c``):
each read goes to the child with the least load (its active I/Os plus a seek increment
that is 0 at the child's last offset, half within ``zfs_vdev_mirror_rotating_seek_offset``
and whole beyond), so concurrent streams spread over the children instead of all seeking
on one. Asserted on 2.2 with four 1 MiB streams over 128 KiB records (the default):
one disk < mirror 2 < mirror 3, and each mirror at least 1.5× / 2× the single disk.
"""

from __future__ import annotations

import pytest

from zsim.scenario import scenario_from_dict
from zsim.simulate import simulate

pytestmark = pytest.mark.slow


def _rate(layout: str) -> float:
    sc = scenario_from_dict(
        {
            "hardware": {"disk": "seagate-ironwolf-12tb", "ram": "16GiB", "zfs_version": "2.2"},
            "pool": {"layout": layout, "recordsize": "128K", "fill": 0.1},
            "workload": {
                "tool": "fio",
                "rw": "read",
                "bs": "1M",
                "numjobs": 4,
                "iodepth": 1,
                "size": "32GiB",
            },
        }
    )
    result = simulate(sc, engine="des", seed=1, target_ci=0.05, max_sim_seconds=20)
    return result.read.bytes_per_s


def test_mirror_sequential_reads_grow_with_the_children():
    one, two, three = (_rate(layout) for layout in ("stripe 1", "mirror 2", "mirror 3"))
    print(
        f"\n4 sequential readers: one disk {one / 1e6:.0f} MB/s, mirror 2 ×{two / one:.2f}, "
        f"mirror 3 ×{three / one:.2f}"
    )
    assert one < two < three
    assert two >= 1.5 * one and three >= 2.0 * one
