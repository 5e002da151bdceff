"""ARC sizing by release, and the record cache the engine uses.

Sources: ``arc_default_max()`` (``module/os/linux/zfs/arc_os.c``): ½ RAM up to 2.2.x;
max(⅝ RAM, RAM − 1 GiB) from 2.3.0 (commit 6a629f3234). ``arc_c_min`` = max(RAM/32, 32 MiB).
Metadata starts at 25 % of the target in 2.2+ (``arc_meta``); ≤ 2.1 metadata was bounded by
``arc_meta_limit`` (75 % of arc_c_max) and data could use most of the ARC — zsim gives data
75 % of the target in every release, the 2.2+ starting point, since fio/dd workloads carry
little metadata.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from zsim.units import GiB, MiB
from zsim.zfs.version import ZfsVersion

DATA_SHARE = 0.75
L2ARC_WRITE_MAX = 8 * MiB
"""``l2arc_write_max``: bytes the L2ARC feed thread writes per ``l2arc_feed_secs`` (1 s)."""
L2ARC_HEADER_BYTES = 96
"""ARC memory per block held only in the L2ARC (the L2-only ``arc_buf_hdr_t``, ``arc.c``
``HDR_L2ONLY_SIZE``; about 70–100 B by release)."""


def arc_max_bytes(ram: int, version: ZfsVersion) -> int:
    """Default ``zfs_arc_max`` on Linux for ``ram`` bytes of memory."""
    if version.at_least(2, 3):
        return max(ram * 5 // 8, ram - GiB)
    return ram // 2


def dbuf_cache_bytes(ram: int, version: ZfsVersion) -> int:
    """Bytes of the dbuf cache: the records kept *uncompressed* after their last hold
    (``module/zfs/dbuf.c``). From 0.8 ``dbuf_cache_target_bytes()`` = the ARC target >>
    ``dbuf_cache_shift`` (5), the ARC target being its maximum once warm; 0.7 capped
    ``dbuf_cache_max_bytes`` (100 MiB) at ``arc_max >> dbuf_cache_max_shift`` (5).

    A record the ARC holds compressed (compressed ARC, 0.7+) but the dbuf cache does not
    is decompressed into a new buffer when a caller needs its data (``arc_buf_fill()`` →
    ``zio_decompress_data()``, ``module/zfs/arc.c``)."""
    target = arc_max_bytes(ram, version) >> 5
    if version.at_least(0, 8):
        return target
    return min(100 * MiB, target)


def dbuf_share_of_hits(dbuf_records: int, arc_records: int, total_records: int) -> float:
    """P(an ARC hit finds its record in the dbuf cache too) under uniform random access to
    ``total_records``: the dbuf cache holds D of the min(C, N) records the ARC holds, so
    D/min(C, N) of the hits, and P(dbuf hit) = min(1, D/N) like the ARC's own."""
    held = min(arc_records, total_records)
    return min(1.0, dbuf_records / held) if held > 0 else 0.0


def arc_data_bytes(ram: int, version: ZfsVersion, compress_ratio: float = 1.0) -> int:
    """Logical bytes of file data the ARC holds when warm (compressed ARC: × compress_ratio)."""
    return int(arc_max_bytes(ram, version) * DATA_SHARE * compress_ratio)


def l2arc_split(
    arc_records: int, total_records: int, l2_records: int, fill: float, recordsize: int
) -> tuple[int, float]:
    """(records the ARC holds, P(L2ARC hit | ARC miss)) under uniform random access to
    ``total_records`` with cache devices that hold ``l2_records`` blocks, ``fill`` of them
    the workload's: the blocks beyond the ARC the L2ARC holds cost the ARC one
    :data:`L2ARC_HEADER_BYTES` header each (taken from its data), and a miss finds its block
    on a cache device with the share of the missed records held there."""
    total = max(0, total_records)
    held = min(l2_records, total - min(arc_records, total)) * fill
    arc = max(0, arc_records - int(held * L2ARC_HEADER_BYTES) // recordsize)
    beyond = total - min(arc, total)
    held = min(held, beyond)
    return arc, (held / beyond if beyond else 0.0)


class RecordCache:
    """An LRU over records (the ARC's unit). With uniform random access its hit ratio is
    min(1, C/N), which ARC, LRU and LFU all share; the record granularity is what matters."""

    def __init__(self, capacity_records: int):
        self.capacity = max(0, capacity_records)
        self._lru: OrderedDict[object, None] = OrderedDict()
        self.hits = 0
        self.misses = 0
        #: set for uniform random access: hits are drawn with this probability (min(1, C/N))
        self.uniform_hit: float | None = None

    def __contains__(self, key: object) -> bool:
        return key in self._lru

    def lookup(self, key: object, rng: Any = None) -> bool:
        if self.uniform_hit is not None and rng is not None:
            hit = bool(rng.random() < self.uniform_hit)
        elif key in self._lru:
            self._lru.move_to_end(key)
            hit = True
        else:
            hit = False
        if hit:
            self.hits += 1
        else:
            self.misses += 1
        return hit

    def insert(self, key: object) -> None:
        if self.capacity == 0 or self.uniform_hit is not None:
            return
        self._lru[key] = None
        self._lru.move_to_end(key)
        while len(self._lru) > self.capacity:
            self._lru.popitem(last=False)

    def __len__(self) -> int:
        return len(self._lru)


def zfetch_max_distance(version: ZfsVersion) -> int:
    """``zfetch_max_distance`` (``module/zfs/dmu_zfetch.c``): bytes zfetch reads ahead of a
    sequential stream, 64 MiB from 2.2 (8 MiB before)."""
    return 64 * MiB if version.at_least(2, 2) else 8 * MiB
