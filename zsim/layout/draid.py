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

import functools
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


#: how many distinct child permutations the slices cycle through (dRAID ships fixed tables
#: of base permutations per child count and rotates them; a seeded table stands in here)
DRAID_PERMUTATIONS = 64


@functools.lru_cache(maxsize=64)
def draid_permutations(children: int) -> tuple[tuple[int, ...], ...]:
    """The permutations of ``children`` that successive slices use (seeded, fixed)."""
    rng = np.random.default_rng(children)
    return tuple(
        tuple(int(i) for i in rng.permutation(children)) for _ in range(DRAID_PERMUTATIONS)
    )


def draid_ngroups(children: int, nspares: int, groupwidth: int) -> int:
    """Groups per slice: the smallest n with n·(D+P) a multiple of children − spares."""
    ndisks = children - nspares
    n = 1
    while (n * groupwidth) % ndisks:
        n += 1
    return n


def draid_columns(
    offset: int, psize: int, ashift: int, children: int, nspares: int, ndata: int, parity: int
) -> tuple[list[tuple[int, int, int]], tuple[int, ...]]:
    """Where a dRAID block lies: ``([(child, child offset, bytes)], spare children)``.

    The vdev's space is a run of groups of ``D + P`` columns, each column one 16 MiB row on
    one child (``vdc_groupsz`` = groupwidth × 16 MiB). ``ngroups`` groups tile a *slice* of
    ``children − spares`` columns across, some rows high; each slice maps its column
    positions to physical children through a permutation, the last ``nspares`` entries being
    that slice's distributed spare space (``vdev_draid_map_alloc()``,
    ``vdev_draid_group_to_offset()``). A block takes whole rows of its group, parity
    columns first. Permutations: :func:`draid_permutations`.
    """
    sector = 1 << ashift
    width = ndata + parity
    ndisks = children - nspares
    ngroups = draid_ngroups(children, nspares, width)
    groupsz = width * DRAID_ROWHEIGHT
    slice_rows = ngroups * width // ndisks
    group, within = divmod(offset, groupsz)
    slice_index, in_slice = divmod(group, ngroups)
    perm = draid_permutations(children)[slice_index % DRAID_PERMUTATIONS]
    rows = draid_asize(psize, ashift, ndata, parity) // (width << ashift)
    row_bytes = rows * sector
    first_row = within // (width << ashift)
    base = slice_index * slice_rows * DRAID_ROWHEIGHT + first_row * sector
    start = in_slice * width
    columns = []
    for c in range(width):
        position = start + c
        row, column = divmod(position, ndisks)
        columns.append((perm[column], base + row * DRAID_ROWHEIGHT, row_bytes))
    return columns, perm[ndisks:]
