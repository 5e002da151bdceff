"""Indirect blocks: the tree of block pointers above a file's records, rewritten (copy on
write) for every record a txg dirties. Used by both engines.

Sources: ``DN_DFL_INDBLKSHIFT`` = 17 (dnode.h: 128 KiB indirect blocks for files), the
128-byte ``blkptr_t`` (spa.h), ``redundant_metadata`` (zfsprops.7).
"""

from __future__ import annotations

from zsim.units import KiB

INDIRECT_BYTES = 128 * KiB
"""Indirect block size: ``DN_DFL_INDBLKSHIFT`` = 17 (128 KiB) for files (dnode.h)."""
BPS_PER_INDIRECT = INDIRECT_BYTES // 128  # 128-byte blkptr_t (spa.h)
BP_COMPRESSED_BYTES = 80
"""Bytes one block pointer takes after the lz4 compression every metadata block gets:
estimate from the blkptr_t layout (spa.h) — of its 128 bytes the unused second and third
DVA (32 B, zero for single-copy data) and the padding (16 B) compress away, while the
checksum (32 B), the first DVA, the properties and the birth/fill words do not."""


def indirect_levels(file_records: int) -> int:
    """Levels of indirect blocks above a file of ``file_records`` records (0: the dnode's
    own block pointer covers a one-record file)."""
    levels = 0
    while BPS_PER_INDIRECT**levels < file_records:
        levels += 1
    return levels


def indirect_block(
    level: int, file_records: int, ashift: int, redundant_metadata: str
) -> tuple[int, int]:
    """(psize, copies) of one indirect block at ``level`` (1 = parent of records) of such a
    file: full blocks of compressed block pointers rounded to sectors; copies by
    ``redundant_metadata`` (``all``: every indirect block twice, a ditto block; ``most`` and
    ``some``: level 1 once, higher levels twice; ``none``: once)."""
    sector = 1 << ashift
    children = -(-file_records // (BPS_PER_INDIRECT ** (level - 1)))
    filled = min(BPS_PER_INDIRECT, children)
    psize = -(-filled * BP_COMPRESSED_BYTES // sector) * sector
    copies = 2 if redundant_metadata == "all" or level > 1 else 1
    if redundant_metadata == "none":
        copies = 1
    return psize, copies
