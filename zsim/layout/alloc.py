"""Allocated size of a block on any top-level vdev kind (``vdev_psize_to_asize()``)."""

from __future__ import annotations

from zsim.layout.draid import draid_asize
from zsim.layout.raidz import raidz_asize
from zsim.layout.tree import Vdev
from zsim.units import GiB, MiB

#: ``SPA_MAXBLOCKSIZE`` (``include/sys/spa.h``): the largest block, 16 MiB
SPA_MAXBLOCKSIZE = 16 * MiB


def support_vdev_space(device_bytes: int) -> int:
    """Allocatable bytes of a log, special or cache vdev on a device of ``device_bytes``: the
    device less its labels and boot area (8 MiB), at least 1 GiB. A log vdev's blocks are
    short-lived and a special vdev's metadata small, so neither fills up in a run."""
    return max(GiB, device_bytes - 8 * MiB)


def psize_to_asize(vdev: Vdev, psize: int, ashift: int) -> int:
    """Bytes a block of ``psize`` bytes allocates on ``vdev`` (per copy for mirrors).

    Mirrors and single disks round to whole sectors; raidz and dRAID add parity and padding
    (:func:`~zsim.layout.raidz.raidz_asize`, :func:`~zsim.layout.draid.draid_asize`).
    """
    if vdev.kind == "raidz":
        return raidz_asize(psize, ashift, vdev.width, vdev.parity)
    if vdev.kind == "draid":
        return draid_asize(psize, ashift, vdev.ndata, vdev.parity)
    sector = 1 << ashift
    return -(-psize // sector) * sector
