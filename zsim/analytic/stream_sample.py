"""How many records a stream table (:mod:`zsim.analytic.seqstreams`) measures, and on dRAID
how many it must to stand for whole files — kept apart from the table's event loop so the
validity check (:mod:`zsim.analytic.validity`) can ask without importing it.

A dRAID vdev's space is a run of groups, ``D + P`` children wide and 16 MiB deep on each
(``vdc_groupsz``, ``module/zfs/vdev_draid.c``; :func:`zsim.layout.draid.draid_columns`): a
stream reads one group's children for a whole group of the vdev's space before the next
group's, so which children the streams share, and the rate with it, changes along the file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from zsim.layout.draid import DRAID_ROWHEIGHT, draid_asize
from zsim.layout.tree import Vdev

#: records measured after the warm-up, at most (on dRAID at least: :func:`draid_records`):
#: a run of 4000 records' rate varies by ±3 % with the seed (HDD rotational phases), a run
#: of 600 records' by ±10 %
MEASURED_RECORDS = 4000
#: ... or fewer, once the devices have done this many I/Os, and at least
#: :data:`MEASURED_IOS_PER_LEAF` each on average (records wide over many leaves give as many
#: chances per record; a device I/O costs the DES ~0.1 ms of wall time)
MEASURED_IOS = 8000
MEASURED_IOS_PER_LEAF = 400
MIN_MEASURED = 400
#: warm-up: one window of every stream (the loop starts with all of them issued at once),
#: from this many records up
MIN_WARMUP = 200
#: the sample spans at least this many times the records the streams hold in flight
#: (streams × window; :func:`in_flight_records`). The leaves serve those records in offset
#: order (the queue's LBA classes and aggregation), so a sample shorter than the set sees
#: one phase of how the streams take turns at each disk, not its mean: with 16K records
#: zfetch's 64 MiB is 4096 records a stream, and 4 streams' 4000-record sample on a
#: `stripe 5` of Exos X20 gave 592 MB/s, 1, 2, 4 and 12 sets 882, 852, 806 and 764, the DES
#: 730 (the seeds 1-4 within ±2 %)
IN_FLIGHT_SETS = 4
#: The rule is for hard disks, whose rate the order of service sets (positioning between
#: the streams' regions); a flash leaf has none, and its tables keep the 4000-record sample
#: after a warm-up of at most this many records (the sequential-read agreement's flash
#: draws agreed within 2.6 % so, and with the rule a 16-job NVMe raidz of 128K records
#: would measure ~200,000 device I/Os, ~20 s)
FLASH_MAX_WARMUP = 4000
#: ... and the warm-up and sample together at most this many records: past it a scenario is
#: declined (:func:`zsim.analytic.validity`), as a dRAID one past MAX_DRAID_RECORDS
MAX_STREAM_RECORDS = 100_000
#: dRAID groups each stream's share of a table's records must cross on each dRAID vdev
#: before the table's rate stands for whole files (:func:`draid_records`)
MIN_DRAID_GROUPS = 20
#: records a dRAID table measures at most to cross them; a scenario needing more is declined
MAX_DRAID_RECORDS = 3 * MEASURED_RECORDS
#: the least of a record each data disk of a dRAID group reads for the stream tables to
#: answer: from 85 KiB up the draws agreed with the DES once each stream crossed 20 groups
#: (one known miss, −16 %), at 64 KiB HDD draws reached −15.8 % and +11.8 %, at 32 KiB and
#: less +20 … +51 % even with 12,000 records, the DES itself moving along the file
#: (docs/analytic.md, *Sequential reads*)
MIN_DRAID_DISK_BYTES = 80 * 1024


def draid_groups(records: float, psize: int, ashift: int, ndata: int, parity: int) -> float:
    """dRAID groups that ``records`` consecutive records of ``psize`` bytes span on one
    vdev (module docstring): a table stands for the file only when its sample crosses
    many."""
    asize = draid_asize(psize, ashift, ndata, parity)
    return records * asize / ((ndata + parity) * DRAID_ROWHEIGHT)


def draid_records(psize: int, ashift: int, vdevs: Sequence[Vdev], streams: int) -> int:
    """Records a pool table of ``vdevs`` (the records going round them in turn, an equal
    share each: the validity check admits dRAID pools of identical vdevs only) and
    ``streams`` streams measures so that each stream's share crosses
    :data:`MIN_DRAID_GROUPS` groups of each dRAID vdev (:func:`draid_groups`): while the
    streams read, which children they share changes each time one of them moves to another
    group, and a child's load over the sample is the file's only when every stream has
    moved through many. At least :data:`MEASURED_RECORDS` (and a dRAID table counts records
    only, not device I/Os); may exceed :data:`MAX_DRAID_RECORDS`: the caller declines such
    a scenario."""
    needed = MEASURED_RECORDS
    shares = len(vdevs) * max(1, streams)  # each stream's share of each vdev
    for v in vdevs:
        if v.kind == "draid":
            per_group = draid_groups(1, psize, ashift, v.ndata, v.parity)
            needed = max(needed, math.ceil(MIN_DRAID_GROUPS * shares / per_group))
    return needed


def in_flight_records(streams: int, window: int) -> int:
    """Records ``streams`` streams hold in flight, ``window`` records each (zfetch)."""
    return max(1, streams) * max(1, window)


def stream_records(streams: int, window: int, records: int, rotating: bool = True) -> int:
    """Records a stream table measures: ``records`` (:data:`MEASURED_RECORDS`, or on dRAID
    :func:`draid_records`), and on hard disks at least :data:`IN_FLIGHT_SETS` times the
    records in flight."""
    if not rotating:
        return records
    return max(records, IN_FLIGHT_SETS * in_flight_records(streams, window))


def stream_warmup(streams: int, window: int, rotating: bool = True) -> int:
    """Records a stream table lets pass before it measures: one window of every stream (on
    flash at most :data:`FLASH_MAX_WARMUP`)."""
    warmup = max(MIN_WARMUP, in_flight_records(streams, window))
    return warmup if rotating else min(FLASH_MAX_WARMUP, warmup)
