"""The scenario space of the mixed random read/write agreement test (a hypothesis strategy):
fio ``rw=randrw`` jobs of whole records (``bs`` = ``recordsize``, as the sweep preset
``vm-16k``), over the layouts (dRAID one in six), disks and fio shapes of
:mod:`tests.agreement_space`, with
``rwmixread`` 50/70/90 and records from 16K (the preset's) to 1M (128K up on flash).

Hard disks are drawn three times as often as flash: that is where the reads queue behind
the txg's write bursts, and their DES runs reach the 5 % CI fastest. RAM is 8 GiB, so
``zfs_dirty_data_max`` is ~0.8 GiB and a txg cycle lasts about a second.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

DISKS = [
    "seagate-ironwolf-12tb",
    "seagate-exos-x20-20tb",
    "seagate-ironwolf-12tb",
    "seagate-exos-x20-20tb",
    "seagate-ironwolf-12tb",
    "seagate-exos-x20-20tb",
    "wd-ultrastar-sn840-3.2tb",
    "samsung-870-evo-500gb",
]
RECORDS = [16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 1 << 20]


@st.composite
def layouts(draw: Any) -> str:
    kind = draw(st.sampled_from(["stripe", "mirror", "mirror", "raidz", "raidz", "draid"]))
    if kind == "draid":
        parity = draw(st.integers(1, 2))
        data = draw(st.sampled_from([2, 4, 8]))
        spares = draw(st.integers(0, 1))
        children = draw(st.integers(data + parity + spares, data + parity + spares + 8))
        return f"draid{parity}:{data}d:{children}c:{spares}s"
    if kind == "stripe":
        return f"stripe {draw(st.integers(1, 8))}"
    if kind == "mirror":
        return f"{draw(st.integers(1, 6))}x mirror {draw(st.sampled_from([2, 3]))}"
    parity = draw(st.integers(1, 3))
    width = draw(st.integers(parity + 2, 12))
    count = draw(st.integers(1, 3))
    return f"{count}x raidz{parity} {width}" if count > 1 else f"raidz{parity} {width}"


#: flash pools serve 10⁴-10⁵ small calls/s, which the DES needs minutes to simulate:
#: records of 128K and up there
FLASH_RECORDS = RECORDS[3:]


@st.composite
def randrw_scenarios(draw: Any) -> dict[str, Any]:
    disk = draw(st.sampled_from(DISKS))
    flash = not disk.startswith("seagate")
    recordsize = draw(st.sampled_from(FLASH_RECORDS if flash else RECORDS))
    layout = draw(layouts())  # dRAID needs OpenZFS 2.1+
    return {
        "name": "randrw agreement draw",
        "hardware": {
            "disk": disk,
            "ram": "8GiB",
            "cpu_cores": draw(st.sampled_from([4, 8, 16])),
            "zfs_version": draw(
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
            "rw": "randrw",
            "rwmixread": draw(st.sampled_from([50, 70, 90])),
            "bs": recordsize,
            "numjobs": draw(st.sampled_from([1, 2, 4, 8, 16])),
            "iodepth": draw(st.sampled_from([1, 4, 8, 16])),
            "direct": False,
            "size": f"{draw(st.sampled_from([8, 16, 32, 64]))}GiB",
        },
    }
