"""OpenZFS's space rules, each a small pure function in integer arithmetic, in the order and
with the names of the OpenZFS source it comes from: the Linux whole-disk partition, labels and
boot area, the metaslab size, the deflate ratio and the slop. :mod:`zsim.capacity` strings
them together into a pool's usable capacity.
"""

from __future__ import annotations

from zsim.errors import ZsimError
from zsim.layout.alloc import psize_to_asize
from zsim.layout.tree import Vdev
from zsim.units import GiB, KiB, MiB
from zsim.zfs.version import ZfsVersion

# include/sys/vdev_impl.h, include/sys/fs/zfs.h, include/sys/spa.h
VDEV_LABEL_ALIGN = 256 * KiB  # sizeof(vdev_label_t)
VDEV_LABEL_START_SIZE = 4 * MiB  # 2 labels + 3.5 MiB boot area
VDEV_LABEL_END_SIZE = 512 * KiB  # 2 labels
SPA_MINDEVSIZE = 64 * MiB
SPA_MINBLOCKSHIFT = 9
SPA_OLD_MAXBLOCKSIZE = 128 * KiB  # the "typical" block of the deflate ratio
# module/zfs/vdev.c tunables (defaults)
ZFS_VDEV_MIN_MS_COUNT = 16
ZFS_VDEV_DEFAULT_MS_COUNT = 200
ZFS_VDEV_DEFAULT_MS_SHIFT = 29
ZFS_VDEV_MAX_MS_SHIFT = 34
ZFS_VDEV_MS_COUNT_LIMIT = 1 << 17
ZFS_EMBEDDED_SLOG_MIN_MS = 64
# module/zfs/spa_misc.c
SPA_SLOP_SHIFT = 5
SPA_MIN_SLOP = 128 * MiB
SPA_MAX_SLOP = 128 * GiB


# ---------------------------------------------------------------- per-leaf rules


def linux_wholedisk_partition(disk_bytes: int, logical_sector: int = 512) -> int:
    """Bytes of partition 1 that ``zpool create`` on a whole Linux disk gives ZFS.

    Source: ``zpool_label_disk()`` in ``lib/libzfs/os/linux/libzfs_pool_os.c``: partition 1
    starts at 1 MiB (``NEW_START_BLOCK`` = 2048 sectors of 512 B), partition 9 keeps
    ``EFI_MIN_RESV_SIZE`` (16384 sectors) at the end, the GPT keeps 33 sectors (512 B LBAs)
    after the last usable LBA, and partition 1 ends on a 2048-sector boundary. On 4Kn disks
    the start and reserve are divided by 8 (the GPT's backup takes 5 sectors) while the end
    alignment stays 2048 sectors.
    """
    if logical_sector not in (512, 4096):
        raise ZsimError(f"logical sector {logical_sector} B is not 512 or 4096")
    scale = 8 if logical_sector == 4096 else 1
    total = disk_bytes // logical_sector
    last_usable = total - (6 if scale == 8 else 34)
    start, reserve = 2048 // scale, 16384 // scale
    sectors = (last_usable + 1 - reserve - start) // 2048 * 2048
    if sectors <= 0:
        return 0
    return sectors * logical_sector


def leaf_asize(osize: int) -> int:
    """Allocatable bytes of one leaf device of ``osize`` bytes (``vdev_open()``, vdev.c)."""
    osize = osize // VDEV_LABEL_ALIGN * VDEV_LABEL_ALIGN
    return osize - VDEV_LABEL_START_SIZE - VDEV_LABEL_END_SIZE


def metaslab_shift(vdev_asize: int, version: ZfsVersion) -> int:
    """log2 of the metaslab size chosen for a top-level vdev (``vdev_metaslab_set_size()``).

    From 0.8.0 (PR #8324): about 200 metaslabs, at most 16 GiB each, at least 16 of them on
    small vdevs, 512 MiB in between, and never more than 2^17. Before: ~200, no cap.
    """
    min_shift = 24 if version.at_least(0, 6, 5) else 17  # SPA_MAXBLOCKSHIFT then and now
    if not version.at_least(0, 8):
        return max((vdev_asize // ZFS_VDEV_DEFAULT_MS_COUNT).bit_length(), min_shift)
    count = vdev_asize >> ZFS_VDEV_DEFAULT_MS_SHIFT
    if count < ZFS_VDEV_MIN_MS_COUNT:
        shift = (vdev_asize // ZFS_VDEV_MIN_MS_COUNT).bit_length()
    elif count > ZFS_VDEV_DEFAULT_MS_COUNT:
        shift = (vdev_asize // ZFS_VDEV_DEFAULT_MS_COUNT).bit_length()
    else:
        shift = ZFS_VDEV_DEFAULT_MS_SHIFT
    shift = min(max(shift, min_shift), ZFS_VDEV_MAX_MS_SHIFT)
    if (vdev_asize >> shift) > ZFS_VDEV_MS_COUNT_LIMIT:
        shift = (vdev_asize // ZFS_VDEV_MS_COUNT_LIMIT).bit_length()
    return shift


def deflate_ratio(vdev: Vdev, ashift: int) -> int:
    """Deflated bytes per 512 raw bytes (512 = no parity), from a 128 KiB block.

    ``vdev_set_deflate_ratio()`` in vdev.c: ``2^17 / (psize_to_asize(2^17) >> 9)``, integer.
    """
    asize = psize_to_asize(vdev, SPA_OLD_MAXBLOCKSIZE, ashift)
    return SPA_OLD_MAXBLOCKSIZE // (asize >> SPA_MINBLOCKSHIFT)


def deflated(space: int, ratio: int) -> int:
    """``vdev_deflated_space()``: raw bytes → the bytes datasets are charged."""
    return (space >> SPA_MINBLOCKSHIFT) * ratio


def has_embedded_log(metaslab_count: int, vclass: str, version: ZfsVersion) -> bool:
    """Whether a top-level vdev gives one metaslab to the embedded log class (2.1+).

    ``vdev_metaslab_init()`` (vdev.c) moves the emptiest metaslab of a normal-class vdev with
    more than ``zfs_embedded_slog_min_ms`` (64) metaslabs; from 2.4 special vdevs too.
    """
    return (
        version.at_least(2, 1)
        and metaslab_count > ZFS_EMBEDDED_SLOG_MIN_MS
        and (vclass == "normal" or (vclass == "special" and version.at_least(2, 4)))
    )


def slop_shares(rdspaces: list[int], slop: int) -> list[int]:
    """zsim's split of the pool's slop among normal vdevs, in proportion to their dspace.

    OpenZFS keeps one slop for the pool (``spa_get_slop_space()``); this apportioning is
    zsim's, for per-vdev figures: each vdev ``slop × rd_v // rd``, the last the remainder, so
    the shares add up to ``slop`` exactly.
    """
    total = sum(rdspaces)
    shares = [slop * rd // total if total else 0 for rd in rdspaces[:-1]]
    return [*shares, slop - sum(shares)] if rdspaces else []


def slop_space(normal_dspace: int, embedded_log_dspace: int, version: ZfsVersion) -> int:
    """Space kept back from ``zfs list`` AVAIL (``spa_get_slop_space()``, spa_misc.c).

    ≤ 0.6.4: 1/64, at least 32 MiB; 0.6.5: 1/32, at least 32 MiB; 0.7: at least
    min(½ pool, 128 MiB); 2.0.6/2.1: at most 128 GiB; 2.1: minus the embedded-log metaslabs
    (at most half the slop).
    """
    if not version.at_least(0, 6, 5):
        return max(normal_dspace >> 6, SPA_MINDEVSIZE // 2)
    if not version.at_least(0, 7):
        return max(normal_dspace >> SPA_SLOP_SHIFT, SPA_MINDEVSIZE // 2)
    slop = normal_dspace >> SPA_SLOP_SHIFT
    if version.at_least(2, 0, 6):
        slop = min(slop, SPA_MAX_SLOP)
    if version.at_least(2, 1):
        slop -= min(embedded_log_dspace, slop >> 1)
    return max(slop, min(normal_dspace >> 1, SPA_MIN_SLOP))
