"""One top-level vdev's space: asize by kind, metaslabs, deflated space, embedded log.

The per-vdev half of :func:`zsim.capacity.capacity` (the pool half, slop and the report,
stays there). Sources are OpenZFS ``module/zfs/vdev.c``, ``vdev_raidz.c`` and ``vdev_draid.c``
as named on each step; the small rules are in :mod:`zsim.zfs.space`.
"""

from __future__ import annotations

import numpy as np

from zsim.errors import ZsimError
from zsim.layout.draid import draid_metaslab_size, draid_vdev_asize
from zsim.layout.tree import Vdev
from zsim.zfs.expansion import ExpansionStep, raidz_expansion_steps, static_step
from zsim.zfs.space import (
    SPA_MINDEVSIZE,
    deflate_ratio,
    deflated,
    has_embedded_log,
    leaf_asize,
    linux_wholedisk_partition,
    metaslab_shift,
)
from zsim.zfs.version import ZfsVersion


def leaf_osize(device_bytes: int, partitioning: str, logical_sector: int) -> int:
    """Bytes ZFS is given of a device: the Linux whole-disk partition, or all of it."""
    if partitioning == "linux":
        return linux_wholedisk_partition(device_bytes, logical_sector)
    return device_bytes


def vdev_space(
    vdev: Vdev,
    device_bytes: tuple[int, ...],
    ashift: int,
    version: ZfsVersion,
    partitioning: str,
    logical_sector: int,
) -> tuple[dict[str, int], tuple[ExpansionStep, ...]]:
    """One top-level vdev's space (bytes) and its expansion steps (one if never expanded).

    asize by kind (raidz: :func:`~zsim.zfs.expansion.raidz_expansion_steps`; dRAID:
    ``vdev_draid_open()``; mirror/disk: the smallest child), metaslabs at the creation's size
    (``vdev_metaslab_set_size()``, ``vdev_metaslab_init()``), deflated with the ratio of the
    width at creation (``vdev_set_deflate_ratio()``), one metaslab to the embedded log, and
    the loss breakdown :class:`zsim.capacity.VdevCapacity` documents.
    """
    leaves = [leaf_asize(leaf_osize(b, partitioning, logical_sector)) for b in device_bytes]
    smallest = min(leaves)
    if leaf_osize(min(device_bytes), partitioning, logical_sector) < SPA_MINDEVSIZE:
        raise ZsimError(
            f"a {vdev.vclass} device of {min(device_bytes)} B is smaller than OpenZFS's 64 MiB "
            f"minimum device size (SPA_MINDEVSIZE); give a larger disk size"
        )
    if vdev.kind == "draid":
        asize = draid_vdev_asize(smallest, vdev.width, vdev.nspares, vdev.draid_groupwidth)
        if asize <= 0:
            raise ZsimError(
                f"{vdev.compact()} has no allocatable space on disks this small; each child "
                f"needs more than 32 MiB + one 16 MiB row per group"
            )
    steps: tuple[ExpansionStep, ...] = ()
    if vdev.kind == "raidz":  # as created and after each attach (one step if never expanded)
        steps = raidz_expansion_steps(vdev, leaves, ashift, version)
        asize, smallest = steps[-1].vdev_asize, steps[-1].leaf_asize
    elif vdev.kind != "draid":
        asize = smallest  # disk, or mirror: the smallest child
    shift = steps[0].metaslab_shift if steps else metaslab_shift(asize, version)
    count = asize >> shift
    if count == 0:
        raise ZsimError(f"{vdev.compact()} is too small to hold one metaslab; use larger disks")
    if vdev.kind == "draid":
        starts = np.arange(count, dtype=np.int64) << shift
        sizes = draid_metaslab_size(starts, 1 << shift, ashift, vdev.draid_groupwidth)
        metaslab_bytes = int(sizes.sum())
        first_metaslab = int(sizes[0])
    else:
        metaslab_bytes = count << shift
        first_metaslab = 1 << shift
    ratio = deflate_ratio(vdev.as_created(), ashift)  # txg 0: the original width (expansion)
    # Every metaslab is a whole number of 512 B units, so deflating the sum equals summing
    # the per-metaslab deflated sizes as vdev_space_update() does.
    dspace = deflated(metaslab_bytes, ratio)
    # vdev_metaslab_init() moves the emptiest metaslab; on a new vdev that is metaslab 0.
    elog = deflated(first_metaslab, ratio) if has_embedded_log(count, vdev.vclass, version) else 0
    raw = sum(device_bytes)
    after_labels = sum(leaves)
    copies = vdev.width if vdev.kind == "mirror" else 1
    geometry = after_labels - copies * metaslab_bytes
    if vdev.kind == "mirror":
        redundancy = (copies - 1) * metaslab_bytes
    elif vdev.kind == "raidz":
        redundancy = metaslab_bytes * vdev.parity // vdev.width
    elif vdev.kind == "draid":
        redundancy = metaslab_bytes * vdev.parity // vdev.draid_groupwidth
    else:
        redundancy = 0
    padding = copies * metaslab_bytes - redundancy - dspace
    if not steps:
        steps = (static_step(vdev, ashift, smallest, asize, shift, metaslab_bytes, ratio, elog),)
    return {
        "leaf_asize": smallest,
        "vdev_asize": asize,
        "metaslab_shift": shift,
        "metaslab_count": count,
        "deflate_ratio": ratio,
        "raw_bytes": raw,
        "metaslab_bytes": metaslab_bytes,
        "dspace_bytes": dspace,
        "embedded_log_bytes": elog,
        "labels_bytes": raw - after_labels,
        "geometry_bytes": geometry,
        "redundancy_bytes": redundancy,
        "padding_bytes": padding,
    }, steps
