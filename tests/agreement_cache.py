"""The scenario space of the L2ARC agreement test (a hypothesis strategy): hard-disk pools
(stripes, mirrors, raidz1-3) with one or two cache devices (a SATA or an NVMe SSD), random
reads over files from a little to many times the cache, and buffered writes (which the
cache devices do not see), the jobs the analytic engine answers with cache vdevs.

RAM is 8 GiB, so the ARC holds ~3 GiB of data and most reads miss it; ``cache_fill`` 0.5 or
1 sets how much of the cache devices holds the workload.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

DISKS = ["seagate-ironwolf-12tb", "seagate-exos-x20-20tb"]
CACHES = ["samsung-870-evo-500gb", "wd-ultrastar-sn840-3.2tb"]
RECORDS = [16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 1 << 20]


@st.composite
def data_layouts(draw: Any) -> str:
    kind = draw(st.sampled_from(["stripe", "mirror", "raidz", "raidz"]))
    if kind == "stripe":
        return f"stripe {draw(st.integers(1, 6))}"
    if kind == "mirror":
        return f"{draw(st.integers(1, 4))}x mirror {draw(st.sampled_from([2, 3]))}"
    parity = draw(st.integers(1, 3))
    width = draw(st.integers(parity + 2, 10))
    count = draw(st.integers(1, 2))
    return f"{count}x raidz{parity} {width}" if count > 1 else f"raidz{parity} {width}"


@st.composite
def cache_scenarios(draw: Any) -> dict[str, Any]:
    recordsize = draw(st.sampled_from(RECORDS))
    rw = draw(st.sampled_from(["randread", "randread", "randread", "randwrite", "write"]))
    return {
        "name": "cache agreement draw",
        "hardware": {
            "disk": draw(st.sampled_from(DISKS)),
            "cache_device": draw(st.sampled_from(CACHES)),
            "ram": "8GiB",
            "cpu_cores": draw(st.sampled_from([4, 8, 16])),
            "zfs_version": draw(st.sampled_from(["0.8", "2.2", "2.3"])),
        },
        "pool": {
            "layout": f"{draw(data_layouts())} cache {draw(st.integers(1, 2))}",
            "ashift": 12,
            "recordsize": recordsize,
            "compression": draw(st.sampled_from(["off", "lz4"])),
            "cache_fill": draw(st.sampled_from([0.5, 1.0])),
        },
        "workload": {
            "tool": "fio",
            "rw": rw,
            "bs": recordsize,
            "numjobs": draw(st.sampled_from([1, 2, 4, 8, 16])),
            "iodepth": draw(st.sampled_from([1, 4, 8])),
            "direct": False,
            "size": f"{draw(st.sampled_from([32, 64, 128, 256]))}GiB",
        },
    }
