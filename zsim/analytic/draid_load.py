"""How a dRAID vdev's load falls on its children, from its map (``zsim.layout.draid``).

A dRAID vdev's space is a run of *groups* of ``D + P`` columns, each group one band of
16 MiB rows on ``D + P`` children; ``ngroups`` groups tile a *slice* across the
``children − spares`` columns a permutation maps to physical children, the permutation's
last ``nspares`` entries being that slice's distributed spare space
(``module/zfs/vdev_draid.c``: ``vdev_draid_group_to_offset()``, ``vdev_draid_map_alloc()``;
:func:`zsim.layout.draid.draid_columns`). Blocks fill a group row by row before the next
group starts, so the children a stretch of new allocations lands on depend on how many
groups it spans: a txg that writes a few groups loads only those groups' children, and over
a few slices a child that was a slice's spare carries less. The discrete-event engine gets
this from the map block by block; these functions give the same loads per child without
walking the blocks:

* :func:`draid_write_hot_share` — the share of a txg's leaf bytes its busiest child
  receives, averaged over where the txg starts (the txg's sync waits for that child);
* :func:`draid_read_shares` — for reads spread over the files' span, the chance that a
  record read touches each child.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from zsim.des.vdev import TopVdev
from zsim.layout.draid import (
    DRAID_PERMUTATIONS,
    DRAID_ROWHEIGHT,
    draid_ngroups,
    draid_permutations,
)
from zsim.units import MiB

#: txg windows averaged over: one starting in each of the permutation cycle's slices
WINDOWS = DRAID_PERMUTATIONS
#: the golden ratio's fractional part: where in its slice each window starts (spread evenly)
_SPREAD = (math.sqrt(5.0) - 1.0) / 2.0


def _geometry(top: TopVdev) -> tuple[int, int, int, int]:
    """(children, children − spares, group width D + P, groups per slice)."""
    v = top.vdev
    width = v.ndata + v.parity
    ndisks = v.width - v.nspares
    return v.width, ndisks, width, draid_ngroups(v.width, v.nspares, width)


def _group_children(top: TopVdev, group: int) -> tuple[int, ...]:
    """The physical children group ``group`` occupies (``draid_columns``' placement)."""
    children, ndisks, width, ngroups = _geometry(top)
    slice_index, in_slice = divmod(group, ngroups)
    perm = draid_permutations(children)[slice_index % DRAID_PERMUTATIONS]
    return tuple(perm[(in_slice * width + c) % ndisks] for c in range(width))


def draid_write_hot_share(top: TopVdev, txg_bytes: float) -> float:
    """Share of a txg's leaf bytes on its busiest child, for a txg allocating ``txg_bytes``
    of this vdev's space in a row (the allocator's cursor moves through whole groups).

    Every column of a group gets the same bytes (blocks take whole rows), so a window of
    groups gives each child its columns' bytes; the txg ends when the busiest child is done.
    Averaged over :data:`WINDOWS` start positions spread over the permutation cycle. With
    many slices per txg this tends to ``1 / children`` (each child a spare in
    ``nspares / children`` of the slices, evened out); a txg of a few groups is far from it.
    """
    v = top.vdev
    txg_mib = max(1, round(txg_bytes / MiB))  # MiB steps keep the cache small
    return _hot_share(v.width, v.nspares, v.ndata, v.parity, txg_mib)


@functools.lru_cache(maxsize=256)
def _hot_share(children: int, nspares: int, ndata: int, parity: int, txg_mib: int) -> float:
    width = ndata + parity
    ngroups = draid_ngroups(children, nspares, width)
    members = _cycle_members(children, nspares, width)
    cycle = len(members)
    groupsz = width * DRAID_ROWHEIGHT
    window = txg_mib * MiB
    total = 0.0
    for w in range(WINDOWS):
        start = (w + (w * _SPREAD) % 1.0) * ngroups * groupsz
        end = start + window
        groups = np.arange(int(start // groupsz), int(-(-end // groupsz)))
        overlap = np.minimum(end, (groups + 1) * groupsz) - np.maximum(start, groups * groupsz)
        load = np.bincount(
            members[groups % cycle].ravel(),
            weights=np.repeat(overlap / width, width),
            minlength=children,
        )
        total += float(load.max()) / window
    return total / WINDOWS


def draid_read_shares(top: TopVdev, psize: int, lo: int, hi: int) -> np.ndarray:
    """P(a record read touches child ``c``) for records spread evenly over vdev offsets
    ``lo`` … ``hi`` (the files' span): each group's records touch the children of the
    group's columns that hold data (reads skip parity; a record smaller than a row has data
    in its first columns only), weighted by how much of the span each group holds. The
    permutations repeat every :data:`DRAID_PERMUTATIONS` slices, so a span of many cycles
    is one cycle's shares. The shares sum to the children a record read touches."""
    children, _, width, ngroups = _geometry(top)
    groupsz = width * DRAID_ROWHEIGHT
    hi = max(hi, lo + 1)
    cycle = DRAID_PERMUTATIONS * ngroups  # groups before the permutations repeat
    first, last = lo // groupsz, (hi - 1) // groupsz
    if last - first + 1 > cycle:  # whole cycles: one cycle, evenly weighted
        lo, hi = first * groupsz, (first + cycle) * groupsz
        first, last = first, first + cycle - 1
    touched = list(_touched_columns(top, psize))
    groups = np.arange(first, last + 1)
    weights = np.minimum(hi, (groups + 1) * groupsz) - np.maximum(lo, groups * groupsz)
    members = _cycle_members(top.vdev.width, top.vdev.nspares, width)[groups % cycle][:, touched]
    shares = np.bincount(
        members.ravel(), weights=np.repeat(weights.astype(float), len(touched)), minlength=children
    )
    return shares / float(hi - lo)


@functools.lru_cache(maxsize=64)
def _cycle_members(children: int, nspares: int, width: int) -> np.ndarray:
    """The children of every group of one permutation cycle: an array (groups, D + P)."""
    ndisks = children - nspares
    ngroups = draid_ngroups(children, nspares, width)
    perms = np.array(draid_permutations(children))
    groups = np.arange(DRAID_PERMUTATIONS * ngroups)
    slices, in_slice = np.divmod(groups, ngroups)
    positions = (in_slice[:, None] * width + np.arange(width)[None, :]) % ndisks
    return perms[slices[:, None] % DRAID_PERMUTATIONS, positions]


def _touched_columns(top: TopVdev, psize: int) -> tuple[int, ...]:
    """Column positions (0 … D+P−1 within the group) a read of a ``psize`` record touches:
    the record at the start of group 0 read through the map, its children located among
    group 0's members."""
    members = _group_children(top, 0)
    ios = top.leaf_ios(0, psize, False)
    return tuple(members.index(leaf) for leaf, _, nbytes in ios if nbytes)
