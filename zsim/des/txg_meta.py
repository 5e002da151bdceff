"""The metadata one txg writes besides its data records: the indirect blocks above the dirty
records, and the space-map appends of the metaslabs it frees from and allocates in.

Pure functions of the txg's records (or freed blocks); :class:`zsim.des.zfs_model.ZfsModel`
writes the blocks they list (``_write_meta``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from zsim.zfs.indirect import BPS_PER_INDIRECT, indirect_block
from zsim.zfs.version import ZfsVersion

SPACE_MAP_WORD_BYTES = 8
"""One word of a space-map entry (``space_map.h``). ``space_map_write_impl()`` writes a
metaslab's freed block or allocated run as a single-word entry; two words (``SM2``) only when
the ``spacemap_v2`` feature is active and the offset or run does not fit one word, or the
entry names its vdev — which every entry of a pool-wide log space map does."""
MOS_COPIES = 3
"""Copies of a MOS block: ``dmu_objset_open_impl()`` gives the MOS ``os_copies =
spa_max_replication()`` (``SPA_DVAS_PER_BP``, 3) and ``dmu_write_policy()`` starts from it;
a dataset's ``redundant_metadata`` does not apply to the pool's own metadata."""


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


def copies_by_block(meta: Sequence[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """``(psize, copy)`` entries grouped by block: a block's entries are its copy 0 and the
    copies that follow it (as :func:`indirect_writes` and :func:`space_map_writes` list
    them). A block is compressed and checksummed once whatever its copies: OpenZFS writes
    them as the DVAs of one logical zio (``zio_vdev_io_start()`` hands a BP-level write to
    ``vdev_mirror_ops``, one child write per DVA)."""
    groups: list[list[tuple[int, int]]] = []
    for psize, copy in meta:
        if copy == 0 or not groups:
            groups.append([])
        groups[-1].append((psize, copy))
    return groups


def space_map_writes(
    freed: Iterable[tuple[int, int]],
    tops: Sequence[_Metaslabs],
    ashift: int,
    version: ZfsVersion,
) -> list[tuple[int, int]]:
    """(psize, copy) of a txg's space-map appends, each MOS block in :data:`MOS_COPIES`
    copies. ``freed``: (vdev, offset) of each block freed, an entry each; each vdev's
    allocations are one contiguous run from its ``cursor`` (new blocks go out sequentially).

    Before 2.0, every metaslab that frees or allocates appends its single-word entries to
    its own space map: a block per metaslab. From 2.0 (``log_spacemap``, "Log Spacemap
    Project", ``spa_log_spacemap.c``) the txg's changes of every metaslab go to one pool-wide
    log space map in two-word entries (the vdev named), a single append per txg; the
    metaslabs' own space maps are written when a few are flushed each txg
    (``spa_flush_metaslabs()``), amortised over many txgs and not modelled."""
    entries: dict[tuple[int, int], int] = {}
    for v, offset in freed:
        ms = (v, tops[v].metaslab(offset))
        entries[ms] = entries.get(ms, 0) + 1
    for v, top in enumerate(tops):
        ms = (v, top.metaslab(top.cursor))
        entries[ms] = entries.get(ms, 0) + 1
    sector = 1 << ashift
    if version.at_least(2, 0):
        blocks = [2 * SPACE_MAP_WORD_BYTES * sum(entries.values())]
    else:
        blocks = [SPACE_MAP_WORD_BYTES * n for n in entries.values()]
    out: list[tuple[int, int]] = []
    for nbytes in blocks:
        psize = -(-nbytes // sector) * sector
        out.extend((psize, k) for k in range(MOS_COPIES))
    return out
