"""The RAIDZ expansion's copy geometry: which sectors one copy reads and writes, and how far
it may run ahead of the progress synced to disk. Pure integer functions, bytes.

Source: ``module/zfs/vdev_raidz.c`` (zfs-2.3.0; the same on 2.4 and master), with the
copy-size rules of PR #16819 ("Optimize RAIDZ expansion", in 2.3.0):

* ``raidz_reflow_impl()`` takes the first allocated segment of the metaslab's range tree and
  copies ``min(segment, raidz_expand_max_copy_bytes, old_children × min(zfs_max_recordsize,
  SPA_MAXBLOCKSIZE))`` bytes of it, one I/O per child: vdev sector ``b`` of the copy is read
  from child ``b mod (n−1)`` at row ``b div (n−1)`` (the old width) and written to child
  ``b mod n`` at row ``b div n`` (the new width), ``ZIO_PRIORITY_REMOVAL``.
* It may copy only up to ``next_overwrite_blkid = s + s/(n−1) − (n−1)`` sectors, ``s`` the
  progress synced in the last uberblock (``RRSS_GET_OFFSET(&spa->spa_ubsync)``): past it the
  writes would overwrite rows not yet known to be copied. There it records the progress and
  waits for the txg to sync (``txg_wait_synced()``).
* The first ``P2ALIGN(VDEV_BOOT_SIZE, 1 << ashift) × n`` bytes are moved through the boot
  area as scratch space (``raidz_reflow_scratch_sync()``), so ``s`` starts there.
* ``spa_raidz_expand_thread()`` waits while more than ``raidz_expand_max_copy_bytes`` are
  outstanding, so about that much is in flight.
"""

from __future__ import annotations

import math

from zsim.layout.alloc import SPA_MAXBLOCKSIZE
from zsim.units import MiB
from zsim.zfs.expansion import VDEV_BOOT_SIZE

#: ``raidz_expand_max_copy_bytes`` (vdev_raidz.c, 64-bit): bytes of copy I/O outstanding
REFLOW_MAX_COPY_BYTES = 10 * SPA_MAXBLOCKSIZE
#: ``zfs_max_recordsize`` (``module/zfs/dsl_dataset.c``, 64-bit, 2.2+): 16 MiB
ZFS_MAX_RECORDSIZE = 16 * MiB

Io = tuple[int, int, int]  # (child, byte offset on the child, bytes)


def copy_bytes(segment: int, old_children: int, ashift: int) -> int:
    """Bytes one ``raidz_reflow_impl()`` call copies from an allocated ``segment`` (bytes).

    ``min(segment, raidz_expand_max_copy_bytes, old_children × min(zfs_max_recordsize,
    SPA_MAXBLOCKSIZE))``, at least one sector, whole sectors.
    """
    size = min(segment, REFLOW_MAX_COPY_BYTES)
    size = min(size, old_children * min(ZFS_MAX_RECORDSIZE, SPA_MAXBLOCKSIZE))
    size = max(size, 1 << ashift)
    return size >> ashift << ashift


def copy_ios(offset: int, size: int, old_children: int, ashift: int) -> tuple[list[Io], list[Io]]:
    """(reads, writes) of one copy of ``size`` bytes at vdev ``offset``: one I/O per child.

    ``raidz_reflow_impl()``: ``blocks = size >> ashift`` sectors from ``blkid = offset >>
    ashift``; read ``i`` (``i < min(blocks, n−1)``) goes to child ``(blkid + i) mod (n−1)`` at
    ``((blkid + i) div (n−1)) << ashift`` and is ``blocks div (n−1) + (i < blocks mod (n−1))``
    sectors long; writes the same with the new width ``n = old_children + 1``.
    """
    if offset % (1 << ashift) or size % (1 << ashift) or size <= 0:
        raise ValueError(f"copy of {size} B at {offset} is not whole {1 << ashift} B sectors")
    blkid, blocks = offset >> ashift, size >> ashift

    def spread(children: int) -> list[Io]:
        b, bb = divmod(blocks, children)
        return [
            (
                (blkid + i) % children,
                ((blkid + i) // children) << ashift,
                (b + (i < bb)) << ashift,
            )
            for i in range(min(blocks, children))
        ]

    return spread(old_children), spread(old_children + 1)


def next_overwrite_offset(synced: int, old_children: int, ashift: int) -> int:
    """Vdev byte offset the copy may reach before it must wait for a txg sync.

    ``next_overwrite_blkid = ubsync_blkid + ubsync_blkid / old_children − old_children``
    (``raidz_reflow_impl()``), ``synced`` the progress (bytes) in the synced uberblock.
    """
    s = synced >> ashift
    return (s + s // old_children - old_children) << ashift


def scratch_bytes(new_children: int, ashift: int) -> int:
    """Vdev bytes the expansion moves through the boot area first (``logical_size`` of
    ``raidz_reflow_scratch_sync()``): ``P2ALIGN(VDEV_BOOT_SIZE, 1 << ashift) × children``."""
    return (VDEV_BOOT_SIZE >> ashift << ashift) * new_children


def gated_syncs(allocated: int, old_children: int, ashift: int, per_txg: float) -> int:
    """Txg syncs the copy has to wait for because of :func:`next_overwrite_offset`.

    Once the scratch rows are moved, each sync lets the copy run ``s / (n−1)`` bytes past
    the synced offset ``s``; while that is less than the copy does in one txg anyway
    (``per_txg`` bytes: the copy rate × ``zfs_txg_timeout``) every such step ends in a
    ``txg_wait_synced()``. Counts those steps until ``allocated`` bytes are copied (the gate
    walks the vdev offset; on a packed vdev offset and allocated bytes agree).
    """
    n = old_children + 1
    s = scratch_bytes(n, ashift)
    count = 0
    while s < allocated and count < 10_000:
        ahead = next_overwrite_offset(s, old_children, ashift) - s
        if ahead >= per_txg or ahead <= 0:
            break
        s += ahead
        count += 1
    return count


def gated_syncs_bound(old_children: int, ashift: int, per_txg: float) -> int:
    """Closed form of :func:`gated_syncs` without the vdev's end, for checks: the synced
    offset grows by ``1 + 1/(n−1)`` per sync until ``s/(n−1) ≥ per_txg``."""
    s0 = scratch_bytes(old_children + 1, ashift)
    target = per_txg * old_children
    if s0 >= target:
        return 0
    return math.ceil(math.log(target / s0) / math.log(1 + 1 / old_children))
