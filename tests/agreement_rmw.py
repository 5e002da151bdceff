"""The scenario space of the partial-record write agreement test (a hypothesis strategy): fio
jobs whose writes cover part of a record (``bs`` < ``recordsize``). Random ones on laid-out
files, so that a write reads its record first unless it is in memory — ``rw=randrw``
(``rwmixread`` 50/70/90) and ``rw=randwrite`` with ``overwrite=1`` — and, one draw in four,
sequential ones into new (sparse) files, whose calls fill each record in turn (``rw=write``);
over the layouts of :mod:`tests.agreement_randrw` (dRAID one in six).

``bs`` is 4K-16K (a database page, a VM's block) into records of 2-32 times that; records
up to 128K, the default a planner forgets to change (on flash one job of 16K calls, which the
DES can simulate in seconds). Hard disks are drawn three times as often as flash, as in the
randrw space: the record reads queue behind the txg's bursts
there. RAM is 2 GiB (``zfs_dirty_data_max`` ~0.2 GiB, a txg synced every ~40 MiB): a
write run is measured over its txg cycles, and a disk pool's read-modify-writes dirty only
tens of MB/s, so a small txg lets the DES reach its precision in few simulated seconds (the
file took 155 s with 8 GiB, 118 s with 4 GiB).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.agreement_randrw import DISKS, layouts

BLOCKS = [4 << 10, 8 << 10, 16 << 10]
RECORDS = [32 << 10, 64 << 10, 128 << 10]


@st.composite
def rmw_scenarios(draw: Any) -> dict[str, Any]:
    disk = draw(st.sampled_from(DISKS))
    flash = not disk.startswith("seagate")
    recordsize = draw(st.sampled_from(RECORDS))
    # flash serves 10⁴-10⁵ small calls/s, which the DES needs minutes to simulate: one job
    # of 16K calls there
    bs = draw(
        st.sampled_from([b for b in BLOCKS if b < recordsize and (b == BLOCKS[-1] or not flash)])
    )
    layout = draw(layouts())  # dRAID needs OpenZFS 2.1+
    rw = draw(st.sampled_from(["randrw", "randrw", "randwrite", "write"]))
    workload: dict[str, Any] = {
        "tool": "fio",
        "rw": rw,
        "bs": bs,
        "numjobs": 1 if flash else draw(st.sampled_from([1, 2, 4, 8, 16])),
        "iodepth": draw(st.sampled_from([1, 4, 8, 16])),
        "direct": False,
        "size": f"{draw(st.sampled_from([8, 16, 32, 64]))}GiB",
    }
    if rw == "randrw":
        workload["rwmixread"] = draw(st.sampled_from([50, 70, 90]))
    elif rw == "randwrite":
        workload["overwrite"] = True
    elif flash:  # buffered calls one at a time: the DES simulates each one on flash
        workload["iodepth"] = 1
    return {
        "name": "read-modify-write agreement draw",
        "hardware": {
            "disk": disk,
            "ram": "2GiB",
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
        "workload": workload,
    }
