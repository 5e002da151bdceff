"""The metadata one txg writes besides its data records: the indirect blocks above the dirty
records, and the space-map appends of the metaslabs it frees from and allocates in.

Pure functions of the txg's records (or freed blocks); :class:`zsim.des.zfs_model.ZfsModel`
writes the blocks they list (``_write_meta``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from zsim.zfs.indirect import BPS_PER_INDIRECT, indirect_block

SPACE_MAP_ENTRY_BYTES = 16
"""One two-word space-map entry (``SM2``, space_map.h): a freed block, or one allocated run."""


class _Metaslabs(Protocol):
    cursor: int

    def metaslab(self, offset: int) -> int: ...


def indirect_writes(
    records: Iterable[tuple[int, int]],
    levels: int,
    file_records: int,
    ashift: int,
    redundant_metadata: str,
) -> list[tuple[int, int]]:
    """(psize, copy) of every indirect block a txg rewrites: each dirty (job, record)'s
    parent at every level up to ``levels`` (one dnode pointer covers a one-record file).
    Copies by ``redundant_metadata``: ``all`` writes every indirect block twice (a ditto
    block), ``most`` and below write level-1 blocks once (zfs.4)."""
    records = list(records)
    out: list[tuple[int, int]] = []
    for level in range(1, levels + 1):
        span = BPS_PER_INDIRECT**level
        parents = {(job, rec // span) for job, rec in records}
        psize, copies = indirect_block(level, file_records, ashift, redundant_metadata)
        out.extend((psize, k) for _ in parents for k in range(copies))
    return out


def space_map_writes(
    freed: Iterable[tuple[int, int]],
    tops: Sequence[_Metaslabs],
    ashift: int,
    redundant_metadata: str,
) -> list[tuple[int, int]]:
    """(psize, copy) of a txg's space-map appends: one block per metaslab that frees blocks
    (``freed``: (vdev, offset), an entry each) or allocates (one entry per contiguous run:
    new blocks go out sequentially from each vdev's ``cursor``), written with a ditto copy
    like all pool metadata."""
    entries: dict[tuple[int, int], int] = {}
    for v, offset in freed:
        ms = (v, tops[v].metaslab(offset))
        entries[ms] = entries.get(ms, 0) + 1
    for v, top in enumerate(tops):
        ms = (v, top.metaslab(top.cursor))
        entries[ms] = entries.get(ms, 0) + 1
    sector = 1 << ashift
    out: list[tuple[int, int]] = []
    for n in entries.values():
        psize = -(-n * SPACE_MAP_ENTRY_BYTES // sector) * sector
        copies = 1 if redundant_metadata == "none" else 2
        out.extend((psize, k) for k in range(copies))
    return out
