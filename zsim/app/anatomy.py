"""Anatomy of one record: where its bytes land on the disks of a RAIDZ vdev and of md RAID6.

The app's teaching page draws, for one record of a chosen size, a grid of disks (columns) by
rows: on RAIDZ every cell is one sector (``2**ashift`` bytes) and is data, parity, skip
(allocation padding) or unused (not this record's); on Linux md RAID6 every cell is one chunk
(512 KiB by default) and is data, parity (P or Q) or unused (a chunk of a touched stripe row
that this record does not fill). A summary gives the sector counts, the allocated bytes and
the space overhead, and for md whether writing the record alone needs a read before the
write (it does not cover whole stripes).

Pure: no Streamlit import; Altair is imported inside :func:`anatomy_chart` only. Nothing
here knows RAID geometry itself; it draws what the project's maps say:

* RAIDZ: :func:`zsim.layout.raidz.raidz_column_map` (OpenZFS ``vdev_raidz.c``,
  ``vdev_raidz_map_alloc()``: parity columns first, then data columns, each column a run of
  sectors on one child, columns that run past the last child wrapping to the next row of
  child 0) and :func:`zsim.layout.raidz.raidz_asize` (``vdev_raidz_asize()`` /
  ``vdev_raidz_psize_to_asize()``: data + parity rounded up to a multiple of parity + 1
  sectors). The block's allocation is the contiguous run of ``asize`` vdev sectors starting
  at ``offset``, and vdev sector ``b`` is on child ``b mod width`` at row ``b div width``
  (the same rule the map starts from). The skip sectors are the sectors of that run that no
  column holds; their count is checked against the map's ``skip_sectors``. (The map's
  ``skip_start`` is not used: OpenZFS moves ``rm_skipstart`` from 0 to 1 when it swaps the
  raidz1 parity and first data column on odd-MiB offsets, and the map does not.)
* md RAID6: :func:`zsim.layout.md_map.md_pieces`, :func:`~zsim.layout.md_map.parity_members`,
  :func:`~zsim.layout.md_map.raid56_member` and :func:`~zsim.layout.md_map.plan_stripe_write`
  (``drivers/md/raid5.c``: ``raid5_compute_sector()`` with md's default
  ``ALGORITHM_LEFT_SYMMETRIC`` layout, P and Q rotating one member per stripe row, and
  ``handle_stripe_dirtying()`` for the read-modify-write / reconstruct-write choice).

Units: bytes throughout (``record_bytes``, ``offset``, ``chunk``, ``sector_bytes``,
``allocated_bytes``); rows are counted in sectors (RAIDZ) or chunks (md).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from zsim.errors import LayoutError, ZsimError
from zsim.layout.grammar import MAX_RAIDZ_CHILDREN, MD_DEFAULT_CHUNK
from zsim.layout.md_map import (
    md_data_members,
    md_pieces,
    parity_members,
    plan_stripe_write,
    raid56_member,
)
from zsim.layout.raidz import raidz_asize, raidz_column_map
from zsim.units import MiB, binary_multiple

MAX_RECORD = 16 * MiB  # OpenZFS's largest recordsize (SPA_MAXBLOCKSIZE)
ASHIFT_MIN, ASHIFT_MAX = 9, 16  # OpenZFS ASHIFT_MIN / ASHIFT_MAX
MAX_WIDTH = MAX_RAIDZ_CHILDREN  # the widest grid drawn (raidz's limit; used for md too)
MD_PAGE = 4096  # md's stripe_head unit (one page per member)

KINDS = ("data", "parity", "skip", "unused")
#: fixed colours per kind (data blue, parity orange, skip grey, unused light)
KIND_COLOURS = {"data": "#4c78a8", "parity": "#f58518", "skip": "#9d9d9d", "unused": "#ececec"}
MAX_DRAWN_ROWS = 256  # more rows than this are drawn as bands of rows
MAX_LABELLED_ROWS = 64  # cell labels only on grids this short or shorter
MAX_LABELLED_DISKS = 48  # ... and this narrow or narrower
PARITY_NAMES = ("P", "Q", "R")


@dataclass(frozen=True)
class Cell:
    """One sector (RAIDZ) or chunk (md) of the grid.

    ``disk`` 0-based child/member index; ``row`` the sector (RAIDZ) or chunk row (md) on that
    disk, counted from the first row the record touches; ``kind`` one of ``data``, ``parity``,
    ``skip``, ``unused``; ``label`` a short text (``D0``, ``P``, ``Q``, ``R``, ``skip``, or
    empty); ``nbytes`` the record's bytes in the cell (data: at most one sector or chunk;
    parity: the parity bytes written there; skip and unused: 0).
    """

    disk: int
    row: int
    kind: str
    label: str
    nbytes: int = 0


@dataclass(frozen=True)
class Anatomy:
    """A record's cells on one vdev or array.

    ``disks`` columns by ``rows`` rows (every (disk, row) of the grid has exactly one cell);
    ``sector_bytes`` the bytes one cell stands for (``2**ashift`` for RAIDZ, the chunk for
    md); ``summary`` the figures the page prints (keys described at :func:`raidz_anatomy`
    and :func:`md_raid6_anatomy`).
    """

    cells: tuple[Cell, ...]
    disks: int
    rows: int
    sector_bytes: int
    summary: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- checks


def _size_text(nbytes: int) -> str:
    """``4 KiB``, ``512 KiB``, ``1 MiB``, ``512 B``, ``6000 B`` (exact, binary prefixes)."""
    count, prefix = binary_multiple(nbytes) if nbytes > 0 else (nbytes, "")
    return f"{count} {prefix}iB" if prefix else f"{nbytes} B"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_record(record_bytes: Any, offset: Any, align: int, what: str) -> None:
    if not _is_int(record_bytes) or not 0 < record_bytes <= MAX_RECORD:
        raise ZsimError(
            f"record size {record_bytes!r} B is out of range; give a whole number of bytes "
            f"from 1 to 16 MiB ({MAX_RECORD}), e.g. 131072 for 128K"
        )
    if not _is_int(offset) or offset < 0 or offset % align:
        raise ZsimError(
            f"offset {offset!r} B is not a non-negative multiple of the {what} "
            f"({_size_text(align)}); give e.g. 0 or {align}"
        )


def _check_raidz(width: Any, parity: Any, ashift: Any) -> None:
    if not _is_int(parity) or not 1 <= parity <= 3:
        raise LayoutError(
            f"raidz parity {parity!r} is not 1, 2 or 3; pick raidz1, raidz2 or raidz3"
        )
    if not _is_int(width) or not parity < width <= MAX_WIDTH:
        raise LayoutError(
            f"a raidz{parity} vdev of width {width!r} is impossible; give between "
            f"{parity + 1} and {MAX_WIDTH} disks (more than the {parity} parity disks)"
        )
    if not _is_int(ashift) or not ASHIFT_MIN <= ashift <= ASHIFT_MAX:
        raise LayoutError(
            f"ashift {ashift!r} is out of range; give {ASHIFT_MIN} to {ASHIFT_MAX} "
            f"(12 for 4 KiB sectors, 9 for 512 B)"
        )


def _check_md(width: Any, chunk: Any) -> None:
    if not _is_int(width) or not 4 <= width <= MAX_WIDTH:
        raise LayoutError(
            f"md RAID6 of {width!r} members is impossible here; give 4 to {MAX_WIDTH} members "
            f"(two hold parity in every stripe row)"
        )
    if not _is_int(chunk) or chunk < MD_PAGE or chunk & (chunk - 1):
        raise LayoutError(
            f"md chunk {chunk!r} B must be a power of two of at least 4 KiB; e.g. 524288 "
            f"(512K, mdadm's default)"
        )


# ---------------------------------------------------------------- grids


def _fill_unused(cells: list[Cell], disks: int, rows: int) -> tuple[Cell, ...]:
    """The cells plus an ``unused`` cell for every other (disk, row) of the grid, sorted."""
    taken = {(c.disk, c.row) for c in cells}
    cells = cells + [
        Cell(d, r, "unused", "") for r in range(rows) for d in range(disks) if (d, r) not in taken
    ]
    return tuple(sorted(cells, key=lambda c: (c.row, c.disk)))


def raidz_anatomy(
    record_bytes: int, width: int, parity: int, ashift: int = 12, offset: int = 0
) -> Anatomy:
    """Lay one uncompressed record of ``record_bytes`` bytes on a raidz``parity`` vdev of
    ``width`` disks with ``2**ashift``-byte sectors, written at vdev byte ``offset``.

    With compression off a record's psize is its size rounded up to the sector. Data cells
    are labelled ``D0``, ``D1``, ... in the order of the record's bytes: RAIDZ splits a
    block column by column (each data column is one contiguous piece of the record), so
    the numbers run down a disk before moving to the next. Parity columns are ``P``, ``Q``,
    ``R``. Skip sectors are computed as the allocation (``raidz_asize`` sectors from
    ``offset``, row-major over the disks) minus the sectors the map's columns hold (see the
    module docstring); their count equals the map's ``skip_sectors``.

    ``summary``: ``layout`` ("raidz"), ``record_bytes``, ``psize_bytes``, ``data_sectors``,
    ``parity_sectors``, ``skip_sectors``, ``sector_bytes``, ``allocated_bytes`` (=
    :func:`~zsim.layout.raidz.raidz_asize`), ``overhead`` (allocated / record − 1),
    ``data_disks`` (columns holding data), ``first_disk``, ``first_row`` (absolute sector on
    the disks of row 0), ``width``, ``parity``, ``ashift``.

    Raises :class:`~zsim.errors.ZsimError` (or its :class:`~zsim.errors.LayoutError`) on
    bad input, naming the fix.
    """
    _check_raidz(width, parity, ashift)
    sector = 1 << ashift
    _check_record(record_bytes, offset, sector, f"{sector} B sector (ashift {ashift})")
    psize = -(-record_bytes // sector) * sector
    rmap = raidz_column_map(offset, psize, ashift, width, parity)
    asize = raidz_asize(psize, ashift, width, parity)
    first_row = min(c.offset for c in rmap.columns) >> ashift

    cells: list[Cell] = []
    data_index = 0
    for index, col in enumerate(rmap.columns):
        row0 = (col.offset >> ashift) - first_row
        for k in range(col.size >> ashift):
            if col.is_parity:
                cells.append(Cell(col.child, row0 + k, "parity", PARITY_NAMES[index], sector))
            else:
                cells.append(Cell(col.child, row0 + k, "data", f"D{data_index}", sector))
                data_index += 1
    held = {(c.disk, c.row) for c in cells}
    start = offset >> ashift
    for b in range(start, start + (asize >> ashift)):
        disk, row = b % width, b // width - first_row
        if (disk, row) not in held:
            cells.append(Cell(disk, row, "skip", "skip"))
    counts = Counter(c.kind for c in cells)
    if counts["skip"] != rmap.skip_sectors or len(cells) != asize >> ashift:
        raise ZsimError(  # the map and raidz_asize disagree: a zsim bug, not bad input
            f"internal: raidz map of {psize} B on raidz{parity} width {width} ashift {ashift} "
            f"holds {len(cells)} sectors ({counts['skip']} skip) but allocates "
            f"{asize >> ashift} ({rmap.skip_sectors} skip); please report it"
        )
    rows = max(c.row for c in cells) + 1
    summary: dict[str, Any] = {
        "layout": "raidz",
        "record_bytes": record_bytes,
        "psize_bytes": psize,
        "data_sectors": counts["data"],
        "parity_sectors": counts["parity"],
        "skip_sectors": counts["skip"],
        "sector_bytes": sector,
        "allocated_bytes": asize,
        "overhead": asize / record_bytes - 1,
        "data_disks": sum(1 for c in rmap.columns if not c.is_parity and c.size),
        "first_disk": start % width,
        "first_row": first_row,
        "width": width,
        "parity": parity,
        "ashift": ashift,
    }
    return Anatomy(_fill_unused(cells, width, rows), width, rows, sector, summary)


def md_raid6_anatomy(
    record_bytes: int, width: int, chunk: int = MD_DEFAULT_CHUNK, offset: int = 0
) -> Anatomy:
    """Lay ``record_bytes`` bytes written at array byte ``offset`` on an md RAID6 array of
    ``width`` members with ``chunk``-byte chunks (md's default layout, left-symmetric).

    One cell per chunk of every stripe (chunk) row the record touches: ``data`` for chunks
    holding the record's bytes, labelled ``D<i>`` with ``i`` the data chunk's index counted
    from the first data chunk of the first touched row (md fills a row's data chunks in
    order, then the next row), ``nbytes`` how much of the chunk the record fills; ``parity``
    for the row's ``P`` and ``Q`` chunks; ``unused`` for the row's other data chunks.

    ``summary``: ``layout`` ("md-raid6"), ``record_bytes``, ``data_sectors`` (data *chunks*
    touched), ``parity_sectors`` (parity chunks of the touched rows), ``skip_sectors`` (0:
    md allocates nothing per record), ``unused_chunks``, ``allocated_bytes`` (the record's
    share of raw space, record × width / (width − 2), rounded up: md's parity cost is fixed
    per array), ``overhead`` (allocated / record − 1), ``stripe_rows`` (rows touched),
    ``first_stripe_row``, ``chunk_bytes``, ``full_stripe_bytes`` (chunk × (width − 2)),
    ``read_modify_write`` (True when the record does not start and end on full-stripe
    boundaries, so writing it alone makes md read before it writes), ``pre_read_bytes`` and
    ``written_bytes`` (what md reads and writes for it, per
    :func:`~zsim.layout.md_map.plan_stripe_write`, which picks read-modify-write or
    reconstruct-write per 4 KiB page row), ``width``.

    ``offset`` must be a multiple of 4 KiB (md's page). Raises
    :class:`~zsim.errors.ZsimError` on bad input, naming the fix.
    """
    _check_md(width, chunk)
    _check_record(record_bytes, offset, MD_PAGE, "4 KiB md page")
    level = 6
    ndata = md_data_members(level, width)
    pieces = md_pieces(level, width, chunk, offset, record_bytes)
    first_row = pieces[0].row
    filled: dict[tuple[int, int], int] = {}
    intervals: dict[int, dict[int, list[tuple[int, int]]]] = {}
    for piece in pieces:
        key = (piece.row, piece.column)
        filled[key] = filled.get(key, 0) + piece.nbytes
        within = piece.offset - piece.row * chunk
        intervals.setdefault(piece.row, {}).setdefault(piece.column, []).append(
            (within, within + piece.nbytes)
        )
    touched_rows = sorted(intervals)

    cells: list[Cell] = []
    pre_read = written = 0
    for row in touched_rows:
        plan = plan_stripe_write(level, width, chunk, row, intervals[row], page=MD_PAGE)
        pre_read += sum(n for _, _, n in plan.reads)
        written += sum(n for _, _, n in plan.writes)
        rel = row - first_row
        span = max((b for iv in intervals[row].values() for _, b in iv), default=0) - min(
            (a for iv in intervals[row].values() for a, _ in iv), default=0
        )
        for name, member in zip(("P", "Q"), parity_members(level, width, row), strict=True):
            cells.append(Cell(member, rel, "parity", name, span))
        for column in range(ndata):
            member = raid56_member(level, width, row, column)
            label = f"D{rel * ndata + column}"
            nbytes = filled.get((row, column), 0)
            if nbytes:
                cells.append(Cell(member, rel, "data", label, nbytes))
            else:
                cells.append(Cell(member, rel, "unused", ""))
    full_stripe = chunk * ndata
    allocated = -(-record_bytes * width // ndata)
    counts = Counter(c.kind for c in cells)
    summary: dict[str, Any] = {
        "layout": "md-raid6",
        "record_bytes": record_bytes,
        "data_sectors": counts["data"],
        "parity_sectors": counts["parity"],
        "skip_sectors": 0,
        "unused_chunks": counts["unused"],
        "sector_bytes": chunk,
        "allocated_bytes": allocated,
        "overhead": allocated / record_bytes - 1,
        "stripe_rows": len(touched_rows),
        "first_stripe_row": first_row,
        "chunk_bytes": chunk,
        "full_stripe_bytes": full_stripe,
        "read_modify_write": bool(offset % full_stripe or (offset + record_bytes) % full_stripe),
        "pre_read_bytes": pre_read,
        "written_bytes": written,
        "width": width,
    }
    rows = touched_rows[-1] - first_row + 1
    return Anatomy(_fill_unused(cells, width, rows), width, rows, chunk, summary)


# ---------------------------------------------------------------- outputs


def anatomy_rows(anatomy: Anatomy) -> list[dict[str, Any]]:
    """One dict per cell (disk, row, kind, label, bytes) for a CSV or JSON download.

    ``row`` counts sectors (RAIDZ) or chunk rows (md) from the record's first row;
    ``cell_bytes`` is the size of a cell, ``bytes`` the record's bytes in it.
    """
    return [
        {
            "disk": c.disk,
            "row": c.row,
            "kind": c.kind,
            "label": c.label,
            "bytes": c.nbytes,
            "cell_bytes": anatomy.sector_bytes,
        }
        for c in anatomy.cells
    ]


def _chart_records(anatomy: Anatomy) -> tuple[list[dict[str, Any]], int]:
    """Records for the chart and the rows per band (1 when rows are not banded).

    With more than :data:`MAX_DRAWN_ROWS` rows, rows are grouped into bands of ``band``
    rows; a band's cell takes the kind most of its cells have (ties: data, parity, skip,
    unused) and lists the counts per kind.
    """
    band = max(1, math.ceil(anatomy.rows / MAX_DRAWN_ROWS))
    if band == 1:
        return [
            {
                "disk": f"disk {c.disk}",
                "row": c.row,
                "row_end": c.row + 1,
                "mid": c.row + 0.5,
                "kind": c.kind,
                "label": c.label,
                "bytes": c.nbytes,
            }
            for c in anatomy.cells
        ], 1
    groups: dict[tuple[int, int], Counter[str]] = {}
    for c in anatomy.cells:
        groups.setdefault((c.disk, c.row // band), Counter())[c.kind] += 1
    records = []
    for (disk, b), counts in sorted(groups.items()):
        kind = max(KINDS, key=lambda k: (counts[k], -KINDS.index(k)))
        start = b * band
        records.append(
            {
                "disk": f"disk {disk}",
                "row": start,
                "row_end": min(start + band, anatomy.rows),
                "mid": start + band / 2,
                "kind": kind,
                "label": ", ".join(f"{counts[k]} {k}" for k in KINDS if counts[k]),
                "bytes": 0,
            }
        )
    return records, band


def anatomy_chart(anatomy: Anatomy, title: str) -> Any:
    """An Altair chart of the grid: x the disk, y the row (sector or chunk row, from the top),
    colour the kind (data blue, parity orange, skip grey, unused light; fixed legend), cell
    labels when the grid is at most 64 rows (and 48 disks). Grids of more than 256 rows are
    drawn as bands of rows, and the title says so.
    """
    # altair comes with the optional [app] extra; this module must import without it
    import altair as alt

    records, band = _chart_records(anatomy)
    size = _size_text(anatomy.sector_bytes)
    if anatomy.summary.get("layout", "").startswith("md"):
        unit = f"chunk row ({size} chunks)"
    else:
        unit = f"sector ({size})"
    if band > 1:
        title = f"{title} — {anatomy.rows} rows drawn in bands of {band}"
    disks = [f"disk {d}" for d in range(anatomy.disks)]
    data = alt.Data(values=records)
    x = alt.X("disk:N", sort=disks, title="disk", axis=alt.Axis(labelAngle=0))
    y_scale = alt.Scale(domain=[0, anatomy.rows], reverse=True, nice=False)
    rects = (
        alt.Chart(data)
        .mark_rect(stroke="white", strokeWidth=0.5 if band == 1 else 0)
        .encode(
            x=x,
            y=alt.Y("row:Q", title=unit, scale=y_scale, axis=alt.Axis(tickMinStep=1, format=",d")),
            y2="row_end:Q",
            color=alt.Color(
                "kind:N",
                title="kind",
                scale=alt.Scale(domain=list(KINDS), range=[KIND_COLOURS[k] for k in KINDS]),
                legend=alt.Legend(values=list(KINDS)),
            ),
            tooltip=[
                alt.Tooltip("disk:N", title="disk"),
                alt.Tooltip("row:Q", title=f"first row ({unit})"),
                alt.Tooltip("kind:N", title="kind"),
                alt.Tooltip("label:N", title="cell"),
                alt.Tooltip("bytes:Q", title="record bytes", format=","),
            ],
        )
    )
    chart = rects
    if anatomy.rows <= MAX_LABELLED_ROWS and anatomy.disks <= MAX_LABELLED_DISKS:
        text = (
            alt.Chart(data)
            .mark_text(fontSize=10)
            .encode(
                x=x,
                y=alt.Y("mid:Q", scale=y_scale),
                text="label:N",
                color=alt.condition(
                    alt.datum.kind == "unused", alt.value("#666666"), alt.value("white")
                ),
            )
        )
        chart = rects + text
    # Vega-Lite's height here is the whole chart's in Streamlit (title, axes and the legend
    # below included): 140 px for those, then 18 px per drawn row
    height = 140 + min(640, max(60, 18 * math.ceil(anatomy.rows / band)))
    return chart.properties(
        title=title, width=min(900, max(160, 44 * anatomy.disks)), height=height
    )
