"""The scenario space the analytic-vs-DES agreement test draws from (a hypothesis strategy).

Layouts, disk kinds, record and block sizes, fio shapes and memory sizes are drawn; every draw
is a scenario dict (the scenario TOML's tables). Sizes are kept so the DES reaches its
precision target in a few seconds of wall time.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

DISKS = {
    "seagate-ironwolf-12tb": "hdd",
    "seagate-exos-x20-20tb": "hdd",
    "wd-ultrastar-sn840-3.2tb": "nvme",
    "samsung-870-evo-500gb": "ssd",
}
SIZES = [4096 << i for i in range(9)]  # 4K … 1M


@st.composite
def layouts(draw: Any) -> str:
    # dRAID is outside the analytic engine's range: drawn rarely, to show it is declined
    kinds = ["stripe", "stripe", "mirror", "mirror", "mirror", "raidz", "raidz", "raidz", "raidz"]
    # dRAID has its own agreement test (test_analytic_agreement_draid.py), which draws
    # every layout as dRAID; here it is left out
    kind = draw(st.sampled_from(kinds))
    if kind == "stripe":
        return f"stripe {draw(st.integers(1, 8))}"
    if kind == "mirror":
        return f"{draw(st.integers(1, 6))}x mirror {draw(st.sampled_from([2, 3]))}"
    if kind == "raidz":
        parity = draw(st.integers(1, 3))
        width = draw(st.integers(parity + 2, 12))
        count = draw(st.integers(1, 3))
        return f"{count}x raidz{parity} {width}" if count > 1 else f"raidz{parity} {width}"
    parity = draw(st.integers(1, 2))
    data = draw(st.sampled_from([2, 4, 8]))
    spares = draw(st.integers(0, 1))
    children = draw(st.integers(data + parity + spares, data + parity + spares + 8))
    return f"draid{parity}:{data}d:{children}c:{spares}s"


@st.composite
def scenarios(draw: Any) -> dict[str, Any]:
    disk = draw(st.sampled_from(sorted(DISKS)))
    layout = draw(layouts())
    # mixed randrw, sequential reads and sync writes have agreement tests of their own
    rw = draw(st.sampled_from(["randread", "randwrite", "write"]))
    # writes: records of 64K and up (small-record writes make the DES too slow to reach its
    # precision within the test's time: ~10⁵ events per simulated second)
    recordsize = draw(st.sampled_from(SIZES if rw == "randread" else SIZES[4:]))
    # reads: any block up to the record (or whole records); writes: whole records, the
    # analytic engine's validity range (partial-record writes are DES-only)
    reads = rw in ("randread", "read")
    fits = [b for b in SIZES if (b <= recordsize and reads) or b % recordsize == 0]
    if rw == "randrw":  # whole records both ways (buffered reads of one record per call)
        fits = [recordsize]
    bs = draw(st.sampled_from(fits))
    # O_DIRECT on a quarter of the reads (honoured from 2.3); the analytic engine declines
    # O_DIRECT writes, drawn on one write in ten to check that it does
    odds = [False, False, False, True] if rw == "randread" else [False] * 9 + [True]
    direct = draw(st.sampled_from(odds)) if bs % recordsize == 0 else False
    if reads and bs > recordsize and not direct:
        bs = recordsize
    if rw == "read":
        direct = False
    numjobs = draw(st.sampled_from([1, 2, 4, 8, 16]))
    iodepth = draw(st.sampled_from([1, 4, 8]))
    size_gib = draw(st.sampled_from([2, 8, 32, 64]))
    # writes: 8-16 GiB of RAM keep zfs_dirty_data_max (10 % of RAM) small, so a txg cycle
    # lasts ~a second and the DES's batch-means CI settles within its wall-time cap; reads:
    # mostly working sets larger than the ARC (the disks, not memory, answer)
    ram_gib = draw(st.sampled_from([16, 64] if rw == "randread" else [8]))
    rwmixread = draw(st.sampled_from([50, 70, 90]))
    return {
        "name": "agreement draw",
        "hardware": {
            "disk": disk,
            "ram": f"{ram_gib}GiB",
            "cpu_cores": draw(st.sampled_from([4, 8, 16])),
            # dRAID needs 2.1+, honoured O_DIRECT 2.3+
            "zfs_version": "2.3"
            if direct
            else draw(
                st.sampled_from(["2.2", "2.3"] if "draid" in layout else ["0.8", "2.2", "2.3"])
            ),
        },
        "pool": {
            "layout": layout,
            "ashift": 12,
            "recordsize": recordsize,
            "compression": draw(st.sampled_from(["off", "lz4"])),
        },
        "workload": {
            "tool": "fio",
            "rw": rw,
            "bs": bs,
            "numjobs": numjobs,
            "iodepth": iodepth,
            "direct": direct,
            "size": f"{size_gib}GiB",
            **({"rwmixread": rwmixread} if rw == "randrw" else {}),
        },
    }
