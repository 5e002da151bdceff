"""Scrub, resilver and rebuild tunables of OpenZFS, by release.

Sources (``module/zfs/dsl_scan.c``, ``vdev_rebuild.c``, ``vdev_queue.c``, ``man/man4/zfs.4``;
summarised with their history in ``shared/notes/zfs-internals.md`` §2 and §9):

* sorted ("sequential") scan since 0.8.0 (openzfs/zfs PR #6256); before it the scan walked the
  block tree and issued each block as it was visited (``zfs_scan_legacy`` still selects that);
* ``zfs_scan_vdev_limit``: bytes in flight per data disk of a top-level vdev, 4 MiB in
  0.8–2.1, 16 MiB from 2.2; the pool-wide cap ``scn_maxinflight_bytes`` is
  ``MIN(arc_c_max / 4, MAX(1 MiB, zfs_scan_vdev_limit × data disks))``; before 0.8
  ``zfs_top_maxinflight`` = 32 blocks per top-level vdev;
* the scrub class's max_active per leaf: 2 up to 2.0, 3 from 2.1; non-interactive I/O is held
  at min_active while the leaf is busy from 2.1 (the nia logic);
* sorted-scan memory: hard limit RAM / ``zfs_scan_mem_lim_fact`` (20); extents merge over
  gaps ≤ ``zfs_scan_max_ext_gap`` (2 MiB);
* sequential rebuild (2.0+): each read covers ``zfs_rebuild_max_segment`` (1 MiB) — per
  data column on dRAID (:func:`rebuild_chunk`); in flight, 2.0: ``zfs_rebuild_queue_limit``
  = 20 reads per top-level vdev; 2.1+: ``vr_bytes_inflight_max`` = MIN((``arc_c_max`` / 2) /
  top-level vdevs, MAX(1 MiB, ``zfs_rebuild_vdev_limit`` × children)) of data, with
  ``zfs_rebuild_vdev_limit`` 32 MiB up to 2.1.11 and 64 MiB from 2.1.12 (commit 973934b965,
  whose comment quotes a draid2:11d:106c HDD pool rebuilding at 1.2 GB/s to a distributed
  spare) — ``vdev_rebuild.c`` ``vdev_rebuild_thread()``, ``vdev_rebuild_range()``;
* per-txg time (``dsl_scan_check_suspend()``): the scan runs inside each txg's sync after its
  data is written, at least ``zfs_resilver_min_time_ms`` (3000 ms; scrub
  ``zfs_scrub_min_time_ms`` 1000 ms) and then only until dirty data reaches
  ``zfs_vdev_async_write_active_min_dirty_percent`` (30 %) of ``zfs_dirty_data_max``, someone
  waits for the sync, or the sync has run ``zfs_txg_timeout`` (5 s); HEAD (commit
  a83bb15fcd, 2025-12-18) halves the minimums, taken here as 2.5.
"""

from __future__ import annotations

from dataclasses import dataclass

from zsim.layout.alloc import SPA_MAXBLOCKSIZE, psize_to_asize
from zsim.layout.tree import Vdev
from zsim.units import MiB
from zsim.zfs.version import ZfsVersion

#: bytes of kernel memory one queued block costs the sorted scan (a ``scan_io_t`` of the
#: block pointer's DVA, birth and checksum plus its range-tree segment; dsl_scan.c keeps
#: one of each per queued block) — an estimate, used only to size the scan's sorting window
SCAN_IO_BYTES = 200


@dataclass(frozen=True)
class ScanTunables:
    """What bounds a scan in one release. Bytes, counts and seconds."""

    sorted: bool  # sorted (0.8+) vs legacy block-order scan
    vdev_limit: int  # zfs_scan_vdev_limit, bytes in flight per data disk
    legacy_max_blocks: int  # zfs_top_maxinflight (legacy scan), blocks per top-level vdev
    scrub_max_active: int  # scrub class max_active per leaf
    nia: bool  # non-interactive I/O held at min_active while the leaf is busy
    memory_limit: int  # sorted-scan queue memory, bytes (hard limit)
    max_ext_gap: int  # zfs_scan_max_ext_gap
    rebuild: bool  # sequential rebuild available (2.0+)
    rebuild_segment: int  # zfs_rebuild_max_segment
    rebuild_vdev_limit: int  # zfs_rebuild_vdev_limit, data bytes in flight per child (2.1+)
    rebuild_queue_limit: int  # zfs_rebuild_queue_limit, reads in flight per vdev (2.0); 0 after
    arc_max: int  # arc_c_max, for the pool-wide in-flight cap
    resilver_min_time: float  # zfs_resilver_min_time_ms, s
    scrub_min_time: float  # zfs_scrub_min_time_ms, s
    suspend_dirty_fraction: float  # of zfs_dirty_data_max: a waiting txg ends the slice

    def inflight_bytes(self, data_disks: int) -> int:
        """``scn_maxinflight_bytes`` for one top-level vdev of ``data_disks`` data disks."""
        return min(self.arc_max // 4, max(MiB, self.vdev_limit * data_disks))

    def rebuild_inflight_bytes(self, children: int, top_vdevs: int, chunk_psize: int) -> int:
        """Data bytes a sequential rebuild of a top-level vdev of ``children`` children may
        have in flight, in a pool of ``top_vdevs`` top-level vdevs, each read carrying
        ``chunk_psize`` (see the module text)."""
        if self.rebuild_queue_limit:
            return self.rebuild_queue_limit * chunk_psize
        arc_share = (self.arc_max // 2) // max(1, top_vdevs)
        return min(arc_share, max(MiB, self.rebuild_vdev_limit * children))


def rebuild_chunk(vdev: Vdev, ashift: int, max_segment: int) -> tuple[int, int]:
    """(allocated bytes, data bytes) one sequential-rebuild read covers, before it is cut
    at a dRAID group's end (``vdev_op_rebuild_asize()``).

    Mirror (``vdev_mirror_rebuild_asize()``): ``max_segment`` in whole sectors, at most
    ``SPA_MAXBLOCKSIZE``. dRAID (``vdev_draid_rebuild_asize()``, 2.1+): ``max_segment`` per
    data column — psize = MIN(P2ROUNDUP(``max_segment`` × ndata, sector), SPA_MAXBLOCKSIZE),
    cut to whole rows of the ndata columns — as allocated space, parity included: a 12-wide
    group's read is 12 MiB of data, 1 MiB from each child, not 1 MiB spread over them.
    """
    sector = 1 << ashift
    if vdev.kind == "draid":
        psize = min(-(-max_segment * vdev.ndata // sector) * sector, SPA_MAXBLOCKSIZE)
        psize = max(1, psize // sector // vdev.ndata) * vdev.ndata * sector
    else:
        psize = min(-(-max_segment // sector) * sector, SPA_MAXBLOCKSIZE)
    return psize_to_asize(vdev, psize, ashift), psize


def scan_tunables(version: ZfsVersion, ram: int, arc_max: int) -> ScanTunables:
    """The scan tunables of ``version`` on a host with ``ram`` bytes (see the module text)."""
    return ScanTunables(
        sorted=version.at_least(0, 8),
        vdev_limit=(16 if version.at_least(2, 2) else 4) * MiB,
        legacy_max_blocks=32,
        scrub_max_active=3 if version.at_least(2, 1) else 2,
        nia=version.at_least(2, 1),
        memory_limit=ram // 20,
        max_ext_gap=2 * MiB,
        rebuild=version.at_least(2, 0),
        rebuild_segment=MiB,
        rebuild_vdev_limit=(64 if version.at_least(2, 1, 12) else 32) * MiB,
        rebuild_queue_limit=0 if version.at_least(2, 1) else 20,
        arc_max=arc_max,
        resilver_min_time=1.5 if version.at_least(2, 5) else 3.0,
        scrub_min_time=0.75 if version.at_least(2, 5) else 1.0,
        suspend_dirty_fraction=0.30,
    )
