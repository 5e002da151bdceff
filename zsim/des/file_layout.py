"""Where fio's files sit on the data vdevs before a run (the DES's ``ZfsModel.place_files``).

A pure function of the vdevs, the record's allocated sizes and the fill: the jobs' files are
written one after the other just below the pool's fill line, records in allocation order,
spread over the vdevs by the rotor (``metaslab_alloc_dva()``: ``aliquot`` bytes per visit).
Records keep the width they were born at: a file laid out before a RAIDZ expansion's attach
(in the vdev's :attr:`~zsim.des.vdev.TopVdev.born` regions) has its records spaced by that
width's allocated size, not the current one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from zsim.des.vdev import TopVdev
from zsim.scenario import Pool


@dataclass(frozen=True)
class FileLayout:
    """The files' place: per vdev, records per rotor visit, each record's allocated bytes,
    and the byte span ``(start, length)`` the files occupy; ``cycle`` records per rotor
    round."""

    per_visit: list[int]
    cycle: int
    asizes: list[int]
    spans: list[tuple[int, int]]


def file_layout(
    tops: Sequence[TopVdev],
    asizes: Sequence[int],
    aliquots: Sequence[int],
    psize: int,
    records: int,
    fill: float,
    ashift: int,
) -> FileLayout:
    """Lay ``records`` records of ``psize`` out below ``fill`` × each vdev's space.
    ``asizes``: a record's allocated bytes at each vdev's current width; ``aliquots``: the
    rotor's bytes per visit. The start of a vdev's span decides the width its records were
    born at (a second pass re-spaces them if that is an older width)."""
    sector = 1 << ashift

    def place(spacing: Sequence[int]) -> FileLayout:
        per_visit = [max(1, -(-q // a)) for q, a in zip(aliquots, spacing, strict=True)]
        cycle = sum(per_visit)
        spans = []
        for t, visit, asize in zip(tops, per_visit, spacing, strict=True):
            share = -(-records // cycle) * visit * asize
            spans.append((max(0, int(t.space * fill) - share) // sector * sector, share))
        return FileLayout(per_visit, cycle, list(spacing), spans)

    current = place(asizes)
    born = [
        t.asize_at(t.width_at(start), psize) if t.born else a
        for t, (start, _), a in zip(tops, current.spans, asizes, strict=True)
    ]
    return current if born == list(asizes) else place(born)


def pool_fill(pool: Pool, spaces: Sequence[int]) -> float:
    """Allocated fraction of the pool: ``pool.allocated`` over the data vdevs' usable
    ``spaces`` (bytes), else the scenario's ``fill``."""
    if pool.allocated is not None:
        usable = sum(spaces)
        return pool.allocated / usable if usable else 0.0
    return pool.fill
