"""The scenario space of the sync-write agreement test (a hypothesis strategy): fio jobs that
commit their writes through the ZIL (O_SYNC or ``sync=always``: every call; ``fsync=N``:
every N calls), to the pool's own flash vdevs or to a flash SLOG in front of HDD or SSD data
vdevs.

Devices on the log path are flash without power-loss protection (a 1 ms cache flush: the
SATA SSDs), which keeps the rates at a few thousand calls/s so the DES reaches its precision
in seconds; NVMe drives with power-loss protection commit ~20 times faster, and the DES needs
minutes per draw there (checked by hand, ``docs/analytic.md``). Sizes: records of 8K-128K,
one to four records per call, 1-8 jobs, psync or libaio at iodepth 4, OpenZFS 0.8 (no
single-committer rule, 5 % commit timeout), 2.2 and 2.3 (10 %), 8 GiB of RAM.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

FLASH = ["samsung-870-evo-500gb", "intel-x25m-160gb"]
DATA = ["seagate-ironwolf-12tb", "seagate-exos-x20-20tb", "samsung-870-evo-500gb"]
RECORDS = [8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10]


@st.composite
def data_layouts(draw: Any) -> str:
    kind = draw(st.sampled_from(["stripe", "mirror", "mirror", "raidz", "raidz"]))
    if kind == "stripe":
        return f"stripe {draw(st.integers(1, 4))}"
    if kind == "mirror":
        return f"{draw(st.integers(1, 3))}x mirror {draw(st.sampled_from([2, 3]))}"
    parity = draw(st.integers(1, 2))
    width = draw(st.integers(parity + 2, 8))
    count = draw(st.integers(1, 2))
    return f"{count}x raidz{parity} {width}" if count > 1 else f"raidz{parity} {width}"


@st.composite
def sync_scenarios(draw: Any) -> dict[str, Any]:
    slog = draw(st.booleans())
    hardware: dict[str, Any] = {
        "ram": "8GiB",
        "cpu_cores": draw(st.sampled_from([4, 8, 16])),
        "zfs_version": draw(st.sampled_from(["0.8", "2.2", "2.3", "2.3"])),
    }
    layout = draw(data_layouts())
    if slog:
        hardware["disk"] = draw(st.sampled_from(DATA))
        hardware["log_device"] = draw(st.sampled_from(FLASH))
        layout += draw(st.sampled_from([" log 1", " log mirror 2"]))
    else:
        hardware["disk"] = draw(st.sampled_from(FLASH))
    recordsize = draw(st.sampled_from(RECORDS))
    bs = recordsize * draw(st.sampled_from([1, 1, 1, 2, 4]))
    # how the job commits: O_SYNC (every call), sync=always (every call), fsync=N
    mode = draw(st.sampled_from(["o_sync", "o_sync", "always", "fsync"]))
    always = mode == "always"
    libaio = draw(st.sampled_from([False, False, False, True]))
    return {
        "name": "sync agreement draw",
        "hardware": hardware,
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
            "bs": bs,
            "numjobs": draw(st.sampled_from([1, 2, 4, 8])),
            "iodepth": 4 if libaio else 1,
            "ioengine": "libaio" if libaio else "psync",
            "sync": mode == "o_sync",
            **({"fsync": draw(st.sampled_from([4, 16]))} if mode == "fsync" else {}),
            "size": f"{draw(st.sampled_from([2, 4, 8]))}GiB",
        },
    }
