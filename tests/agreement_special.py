"""The scenario space of the special-vdev agreement test (a hypothesis strategy): hard-disk
pools (stripes, mirrors, raidz1-3) with a special vdev of SATA or NVMe SSDs (one disk or a
mirror of two or three) that takes the metadata — the txg's indirect blocks — while the data
blocks stay on the data vdevs (``special_small_blocks`` 0 or below the records); random and
sequential reads, random and sequential buffered writes.

RAM is 8 GiB; files of 16-64 GiB per job keep random writes clear of the open txg's
coalescing and spread their indirect blocks, which is what the special vdev receives.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.agreement_cache import DISKS, RECORDS, data_layouts

SPECIALS = ["samsung-870-evo-500gb", "wd-ultrastar-sn840-3.2tb"]


@st.composite
def special_scenarios(draw: Any) -> dict[str, Any]:
    recordsize = draw(st.sampled_from(RECORDS))
    rw = draw(st.sampled_from(["randread", "read", "randwrite", "randwrite", "write"]))
    special = draw(st.sampled_from(["special 1", "special mirror 2", "special mirror 3"]))
    small = draw(st.sampled_from([0, 0, min(RECORDS[0], recordsize // 2)]))
    return {
        "name": "special agreement draw",
        "hardware": {
            "disk": draw(st.sampled_from(DISKS)),
            "special_device": draw(st.sampled_from(SPECIALS)),
            "ram": "8GiB",
            "cpu_cores": draw(st.sampled_from([4, 8, 16])),
            "zfs_version": draw(st.sampled_from(["0.8", "2.2", "2.3"])),
        },
        "pool": {
            "layout": f"{draw(data_layouts())} {special}",
            "ashift": 12,
            "recordsize": recordsize,
            "compression": draw(st.sampled_from(["off", "lz4"])),
            "special_small_blocks": small,
        },
        "workload": {
            "tool": "fio",
            "rw": rw,
            "bs": recordsize * (draw(st.sampled_from([1, 1, 4])) if rw == "write" else 1),
            "numjobs": draw(st.sampled_from([1, 2, 4, 8, 16])),
            "iodepth": draw(st.sampled_from([1, 4, 8])),
            "direct": False,
            "size": f"{draw(st.sampled_from([16, 32, 64]))}GiB",
        },
    }
