"""The intent log's rules as OpenZFS states them (``module/zfs/zil.c``, ``zfs_log.c``): the
sizes of its records and blocks, which records point at blocks written at once
(``WR_INDIRECT``) and the commit timeout. Pure functions, shared by the DES's log
(:mod:`zsim.des.zil`) and the analytic engine's models of it."""

from __future__ import annotations

from typing import Any

from zsim.units import KiB

ZIL_MAX_BLOCK = 128 * KiB  # zil_maxblocksize
LR_WRITE_BYTES = 192  # sizeof (lr_write_t): lr_t (32) + foid, offset, length, blkoff + blkptr_t
ZIL_CHAIN_BYTES = 184  # sizeof (zil_chain_t): pad, next blkptr_t, nused, zio_eck_t
IMMEDIATE_WRITE_SZ = 32 * KiB  # zfs_immediate_write_sz


def commit_timeout_pct(version: Any) -> int:
    """``zfs_commit_timeout_pct``: 5 before 2.2.4, 10 from 2.2.4 (``zil.c``; commit
    7ea8331009, "ZIL: Detect single-threaded workloads", master 252f46be7d)."""
    return 10 if version.at_least(2, 2, 4) else 5


def is_indirect(
    nbytes: int,
    recordsize: int,
    *,
    has_slog: bool,
    logbias: str,
    direct: bool,
    commit_now: bool,
    version: Any,
) -> bool:
    """Whether a write's log record is ``WR_INDIRECT`` (the record itself is written now)."""
    if version.at_least(2, 4):
        if has_slog and logbias != "throughput":
            return False
        if logbias == "throughput" or direct:
            return True
        return nbytes >= IMMEDIATE_WRITE_SZ and (nbytes >= recordsize // 2 or not commit_now)
    if logbias == "throughput" or (direct and version.at_least(2, 3)):
        return True
    return not has_slog and nbytes >= IMMEDIATE_WRITE_SZ
