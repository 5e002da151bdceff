"""dRAID: fixed-width redundancy groups spread over all children, with distributed spares.

Sources (OpenZFS ``module/zfs/vdev_draid.c``, ``include/sys/vdev_draid.h``, from 2.1.0):

* every allocation is whole rows of a group: ``rows = ceil(psize / (D << ashift))``,
  ``asize = rows · (D + P) << ashift`` (:func:`draid_asize`, ``vdev_draid_asize()``);
* each child gives up ``VDEV_DRAID_REFLOW_RESERVE`` (32 MiB) and is rounded down to whole
  16 MiB rows; the vdev's space is rounded down to whole groups (:func:`draid_vdev_asize`,
  ``vdev_draid_open()``);
* a metaslab starts on a group-width boundary and is shortened to whole group widths
  (:func:`draid_metaslab_size`, ``vdev_draid_metaslab_init()``).
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

T = TypeVar("T", int, np.ndarray)

DRAID_ROWHEIGHT = 1 << 24  # VDEV_DRAID_ROWHEIGHT = SPA_MAXBLOCKSIZE, 16 MiB
DRAID_REFLOW_RESERVE = 2 * DRAID_ROWHEIGHT  # VDEV_DRAID_REFLOW_RESERVE, 32 MiB


def draid_asize(psize: int, ashift: int, ndata: int, parity: int) -> int:
    """Bytes allocated on a dRAID vdev for a block of ``psize`` bytes: whole rows only."""
    rows = (psize - 1) // (ndata << ashift) + 1
    return (rows * (ndata + parity)) << ashift


def draid_vdev_asize(min_child_asize: int, children: int, nspares: int, groupwidth: int) -> int:
    """Allocatable bytes of a dRAID vdev from the smallest child's leaf asize."""
    child = (min_child_asize - DRAID_REFLOW_RESERVE) // DRAID_ROWHEIGHT * DRAID_ROWHEIGHT
    group_bytes = groupwidth * DRAID_ROWHEIGHT
    return (child * (children - nspares)) // group_bytes * group_bytes


def draid_metaslab_size(ms_start: T, ms_size: int, ashift: int, groupwidth: int) -> T:
    """Usable bytes of the metaslab at ``ms_start``: start aligned up, size cut to whole groups.

    ``ms_start`` may be an int or a numpy int64 array of starts (one per metaslab).
    """
    unit = groupwidth << ashift
    astart = -(-ms_start // unit) * unit
    return (ms_size - (astart - ms_start)) // unit * unit
