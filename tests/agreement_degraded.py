"""The scenario space of the degraded-pool agreement test (a hypothesis strategy): mirrors
and raidz1-3 vdevs with one to all-they-survive leaves missing (``pool.failed``, in the
first vdev), random reads, ``randrw`` of whole records and buffered whole-record writes
(random and sequential), the jobs the analytic engine answers on a degraded pool.

Hard disks are drawn three times as often as flash (their DES runs reach the 5 % CI in
seconds; flash records are 128K and up for the same reason). RAM is 8 GiB; files of 16-64
GiB per job keep random writes clear of the open txg's coalescing (20 × dirty_data_max).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.agreement_randrw import DISKS, FLASH_RECORDS, RECORDS
from zsim.layout.grammar import parse_layout
from zsim.layout.tree import ZfsLayout


@st.composite
def degraded_layouts(draw: Any) -> tuple[str, list[str]]:
    """(layout, the missing leaves): a mirror or raidz vdev (1-3 of them) whose first vdev
    has between one leaf and as many as it survives missing."""
    if draw(st.booleans()):
        ways = draw(st.sampled_from([2, 3]))
        layout = f"{draw(st.integers(1, 3))}x mirror {ways}"
        survives = ways - 1
    else:
        parity = draw(st.integers(1, 3))
        width = draw(st.integers(parity + 2, 10))
        count = draw(st.integers(1, 2))
        layout = f"{count}x raidz{parity} {width}" if count > 1 else f"raidz{parity} {width}"
        survives = parity
    tree = parse_layout(layout)
    assert isinstance(tree, ZfsLayout)
    first = list(tree.data_vdevs[0].devices)
    missing = draw(st.integers(1, survives))
    failed = draw(st.lists(st.sampled_from(first), min_size=missing, max_size=missing, unique=True))
    return layout, sorted(failed)


@st.composite
def degraded_scenarios(draw: Any) -> dict[str, Any]:
    disk = draw(st.sampled_from(DISKS))
    flash = not disk.startswith("seagate")
    recordsize = draw(st.sampled_from(FLASH_RECORDS if flash else RECORDS))
    layout, failed = draw(degraded_layouts())
    rw = draw(st.sampled_from(["randread", "randread", "randrw", "randwrite", "write"]))
    bs = recordsize * (draw(st.sampled_from([1, 1, 2, 4])) if rw == "write" else 1)
    mix = {"rwmixread": draw(st.sampled_from([50, 70, 90]))} if rw == "randrw" else {}
    return {
        "name": "degraded agreement draw",
        "hardware": {
            "disk": disk,
            "ram": "8GiB",
            "cpu_cores": draw(st.sampled_from([4, 8, 16])),
            "zfs_version": draw(st.sampled_from(["0.8", "2.2", "2.3"])),
        },
        "pool": {
            "layout": layout,
            "ashift": 12,
            "recordsize": recordsize,
            "compression": draw(st.sampled_from(["off", "lz4"])),
            "failed": failed,
        },
        "workload": {
            "tool": "fio",
            "rw": rw,
            "bs": bs,
            "numjobs": draw(st.sampled_from([1, 2, 4, 8, 16])),
            "iodepth": draw(st.sampled_from([1, 4, 8])),
            "direct": False,
            "size": f"{draw(st.sampled_from([16, 32, 64]))}GiB",
            **mix,
        },
    }
