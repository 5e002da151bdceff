"""The scenario space of the agreement test of sync writes to HDD data vdevs without a SLOG
(a hypothesis strategy): fio jobs that commit every call through the ZIL (O_SYNC or
``sync=always``) to stripes, mirrors, raidz1-3 (one to three vdevs) and dRAID1-3 of
HDDs, whose log records hold their data (whole records of 4K-16K, one or two per call;
``WR_COPIED``), as a database's page writes do (the sweep's and the app's ``db-8k-sync``).

Sizes: 1-16 jobs, psync (a few at libaio iodepth 4, buffered), 8-64 GiB of RAM, files of
2-128 GiB (a random writer's records each dirty their own indirect block, so the file's size
sets the txg's write-back), OpenZFS 0.8, 2.1, 2.2, 2.3 and 2.4.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

DISKS = [
    "seagate-ironwolf-12tb",
    "seagate-exos-x20-20tb",
    "toshiba-mg09-18tb",
    "wd-red-plus-12tb",
    "wd-ultrastar-hc550-16tb",
]
RECORDS = [4 << 10, 8 << 10, 8 << 10, 16 << 10]
VERSIONS = ["0.8", "2.1", "2.2", "2.3", "2.4"]


@st.composite
def hdd_layouts(draw: Any) -> str:
    kind = draw(st.sampled_from(["stripe", "mirror", "raidz", "raidz", "raidz", "draid"]))
    if kind == "draid":
        parity = draw(st.integers(1, 3))
        data = draw(st.sampled_from([2, 4, 8]))
        spares = draw(st.integers(0, 2))
        children = data + parity + spares + draw(st.integers(0, 4))
        return f"draid{parity}:{data}d:{children}c:{spares}s"
    # most mirrors of two are the DES's (their commits lock to the spindles' phases,
    # zsim.analytic.sync_hdd.MAX_PHASE_SPREAD): a few are drawn to see them declined
    if kind == "stripe":
        return f"stripe {draw(st.sampled_from([2, 3, 4, 6]))}"
    if kind == "mirror":
        return f"{draw(st.integers(1, 4))}x mirror {draw(st.sampled_from([2, 3, 3]))}"
    parity = draw(st.integers(1, 3))
    width = draw(st.integers(parity + 2, 12))
    count = draw(st.integers(1, 3))
    return f"{count}x raidz{parity} {width}" if count > 1 else f"raidz{parity} {width}"


@st.composite
def hdd_sync_scenarios(draw: Any) -> dict[str, Any]:
    recordsize = draw(st.sampled_from(RECORDS))
    layout = draw(hdd_layouts())
    # dRAID came with OpenZFS 2.1
    versions = ["2.1", "2.2", "2.3", "2.4"] if layout.startswith("draid") else VERSIONS
    always = draw(st.sampled_from([False, False, True]))
    libaio = draw(st.sampled_from([False, False, False, False, True]))
    return {
        "name": "HDD sync agreement draw",
        "hardware": {
            "disk": draw(st.sampled_from(DISKS)),
            "ram": draw(st.sampled_from(["8GiB", "16GiB", "64GiB"])),
            "cpu_cores": draw(st.sampled_from([4, 8, 16])),
            "zfs_version": draw(st.sampled_from(versions)),
        },
        "pool": {
            "layout": layout,
            "ashift": 12,
            "recordsize": recordsize,
            "compression": draw(st.sampled_from(["off", "lz4"])),
            **({"sync": "always"} if always else {}),
        },
        "workload": {
            "tool": "fio",
            "rw": draw(st.sampled_from(["randwrite", "randwrite", "write"])),
            "bs": recordsize * draw(st.sampled_from([1, 1, 1, 2])),
            "numjobs": draw(st.sampled_from([1, 2, 4, 4, 8, 16])),
            "iodepth": 4 if libaio else 1,
            "ioengine": "libaio" if libaio else "psync",
            "sync": not always,
            "size": f"{draw(st.sampled_from([2, 8, 32, 128]))}GiB",
        },
    }
