"""RAIDZ: how one block is laid out on the children, and how much space it allocates.

The single place in zsim that knows RAIDZ geometry. Capacity (deflate ratio, effective
capacity), the engines (which disks a read or write touches, and how much) and resilver
(what a surviving column holds) all call these functions.

Sources (OpenZFS ``module/zfs/vdev_raidz.c``):

* :func:`raidz_asize` is ``vdev_raidz_psize_to_asize()`` (``vdev_raidz_asize()`` before 2.4),
  without RAIDZ expansion (logical width = physical width);
* :func:`raidz_column_map` is ``vdev_raidz_map_alloc()``: parity columns first, data columns
  after, ``q`` full rows, ``bc`` "big" columns holding one sector more, skip (padding) sectors
  counted from ``roundup(tot, p + 1) - tot``, and the raidz1 parity/data swap on odd MiB.
"""

from __future__ import annotations

from dataclasses import dataclass


def _roundup(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


def raidz_asize(psize: int, ashift: int, width: int, parity: int) -> int:
    """Bytes allocated on a raidz vdev for a block of ``psize`` bytes.

    ``s`` data sectors, plus ``parity`` sectors per row of ``width - parity`` data sectors,
    rounded up to a multiple of ``parity + 1`` sectors so no free gap is smaller than the
    smallest allocation.
    """
    sectors = ((psize - 1) >> ashift) + 1
    sectors += parity * ((sectors + width - parity - 1) // (width - parity))
    sectors = _roundup(sectors, parity + 1)
    return sectors << ashift


@dataclass(frozen=True)
class RaidzColumn:
    """One column of a block on a raidz vdev.

    ``child`` is the child index; ``offset`` the byte offset on that child; ``size`` the bytes
    read or written there (0 for a column the block does not reach); ``is_parity`` marks the
    first ``parity`` columns.
    """

    child: int
    offset: int
    size: int
    is_parity: bool


@dataclass(frozen=True)
class RaidzMap:
    """Where one block lives on a raidz vdev (``raidz_map_t`` of ``vdev_raidz_map_alloc``)."""

    columns: tuple[RaidzColumn, ...]
    skip_sectors: int  # padding sectors allocated after the big columns
    skip_start: int  # column index where padding starts (``rm_skipstart``)
    ashift: int

    @property
    def data_bytes(self) -> int:
        return sum(c.size for c in self.columns if not c.is_parity)

    @property
    def parity_bytes(self) -> int:
        return sum(c.size for c in self.columns if c.is_parity)

    @property
    def skip_bytes(self) -> int:
        return self.skip_sectors << self.ashift

    @property
    def asize(self) -> int:
        """Allocated bytes: data + parity + skip; equals :func:`raidz_asize`."""
        return self.data_bytes + self.parity_bytes + self.skip_bytes


def raidz_columns(
    offset: int, psize: int, ashift: int, width: int, parity: int
) -> tuple[list[tuple[int, int, int]], int, int]:
    """The column map as plain tuples, for the engines' hot path.

    Returns ``([(child, child_offset, size), ...], skip_sectors, skip_start)`` in map order
    (parity columns first). :func:`raidz_column_map` wraps the same arithmetic in objects.
    """
    sector = 1 << ashift
    if offset % sector:
        raise ValueError(f"raidz offset {offset} is not a multiple of the sector size {sector}")
    b = offset >> ashift
    s = ((psize - 1) >> ashift) + 1
    first = b % width
    child_offset = (b // width) << ashift
    q, r = divmod(s, width - parity)
    bc = 0 if r == 0 else r + parity
    tot = s + parity * (q + (0 if r == 0 else 1))
    if q == 0:
        acols = bc
        scols = min(width, _roundup(bc, parity + 1))
    else:
        acols = scols = width
    big, small = (q + 1) << ashift, q << ashift
    columns: list[tuple[int, int, int]] = []
    for c in range(scols):
        col = first + c
        coff = child_offset
        if col >= width:
            col -= width
            coff += sector
        columns.append((col, coff, 0 if c >= acols else (big if c < bc else small)))
    skip_start = bc
    # raidz1 alternates which child holds parity on odd MiB so parity does not pile on one disk;
    # the bit is spelled as vdev_raidz_map_alloc() in vdev_raidz.c tests it (1ULL << 20).
    if parity == 1 and (offset & (1 << 20)) and len(columns) > 1:
        (c0, o0, s0), (c1, o1, s1) = columns[0], columns[1]
        columns[0], columns[1] = (c1, o1, s0), (c0, o0, s1)
        # vdev_raidz_map_alloc() moves rm_skipstart off the swapped first column likewise
        if skip_start == 0:
            skip_start = 1
    return columns, _roundup(tot, parity + 1) - tot, skip_start


def raidz_column_map(offset: int, psize: int, ashift: int, width: int, parity: int) -> RaidzMap:
    """Lay out a block of ``psize`` bytes written at vdev byte ``offset`` on a raidz vdev.

    ``offset`` must be sector-aligned. Columns are returned in map order: parity columns, then
    data columns.
    """
    columns, skip, skip_start = raidz_columns(offset, psize, ashift, width, parity)
    return RaidzMap(
        columns=tuple(
            RaidzColumn(child=c, offset=o, size=n, is_parity=i < parity)
            for i, (c, o, n) in enumerate(columns)
        ),
        skip_sectors=skip,
        skip_start=skip_start,
        ashift=ashift,
    )


def raidz_expanded_reads(
    offset: int, psize: int, ashift: int, physical_width: int, logical_width: int, parity: int
) -> list[tuple[int, int, int]]:
    """Leaf reads of a block born at ``logical_width`` on a raidz vdev since expanded to
    ``physical_width`` children, once the reflow has passed it: ``[(child, child_offset,
    bytes), ...]``.

    ``vdev_raidz_map_alloc_expanded()`` (OpenZFS 2.3, ``vdev_raidz.c``) keeps the block's
    logical rows of ``logical_width`` sectors (parity first, then data, the last row ``bc``
    wide) and puts row sector ``c`` of the row starting at vdev sector ``b`` on child
    ``(b + c) mod physical_width`` at child sector ``(b + c) div physical_width``. So the
    block's ``tot`` sectors are the vdev sectors ``b0 … b0 + tot − 1`` dealt round-robin over
    every child, each child's share contiguous. A block of several rows is read whole,
    parity included: from ``raidz_io_aggregate_rows`` (4) rows as one physical read per
    child (``vdev_raidz_io_start_read_phys_cols()``), below that row by row with
    ``forceparity`` (``vdev_raidz_io_start_read()``), which the leaf queue merges into the
    same run. A one-row block reads its data sectors only (raidz1 swaps the parity and first
    data sector on odd MiB, as :func:`raidz_columns`).
    """
    if not parity < logical_width <= physical_width:
        raise ValueError(
            f"logical width {logical_width} must exceed parity {parity} and be at most the "
            f"physical width {physical_width}"
        )
    sector = 1 << ashift
    if offset % sector:
        raise ValueError(f"raidz offset {offset} is not a multiple of the sector size {sector}")
    b0 = offset >> ashift
    s = ((psize - 1) >> ashift) + 1
    q, r = divmod(s, logical_width - parity)
    tot = s + parity * (q + (0 if r == 0 else 1))
    if tot > logical_width:  # several rows: every sector, parity too
        ranges = [(b0, b0 + tot)]
    elif parity == 1 and (offset & (1 << 20)) and tot > 1:
        ranges = [(b0, b0 + 1), (b0 + 2, b0 + tot)]  # data in column 0's place
    else:
        ranges = [(b0 + parity, b0 + tot)]
    out: list[tuple[int, int, int]] = []
    width = physical_width
    for lo, hi in ranges:
        for child in range(width):
            first = lo + (child - lo) % width
            if first >= hi:
                continue
            count = (hi - 1 - first) // width + 1
            out.append((child, (first // width) << ashift, count << ashift))
    return out
