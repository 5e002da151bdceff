"""An exact disk layout (DiskSim's): zones of LBNs on cylinders and tracks, with a measured
seek table. Optional: a drive model without one uses the continuous zoned spiral of
:mod:`zsim.hardware.hdd.drive`; the service path that uses it is :mod:`zsim.hardware.hdd.exact`.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from zsim.errors import ZsimError


@dataclass(frozen=True)
class GeoZone:
    """One zone of an exact layout: LBNs [first_lbn, first_lbn + lbns) on cylinders from
    ``first_cyl``; ``per_cyl`` LBNs per cylinder, ``track_lbns`` per track, ``bpt`` physical
    sectors per track; ``dead`` empty sectors at the zone front; skews and the first block's
    offset in sectors."""

    first_lbn: int
    lbns: int
    first_cyl: int
    bpt: int
    track_lbns: int
    per_cyl: int
    dead: int
    track_skew: int
    cyl_skew: int
    offset: int


@dataclass(frozen=True)
class ExactGeometry:
    """A drive's measured layout and timing (DiskSim-style); see :func:`service`.

    Blocks of ``block`` bytes; times in s. ``seek_dist``/``seek_s``: tabulated seek curve
    (cylinders → s, linear between points); overheads as (after a read, after a write);
    ``bus_*_block`` host transfer per block; cache ``segments`` × ``segment_blocks``,
    ``max_readahead`` blocks (``readahead_over`` 1: beyond the request); ``fast_write``
    0 write-through, 1 write-back for sequential writes, 2 for all writes (at queue depth 1
    both report every write after its host transfer: level 1 only limits appending to dirty
    segments while commands are queued). A read miss moves data to the host once
    ``read_watermark`` × its blocks are buffered, after a ``reselect`` overhead.
    """

    surfaces: int
    zones: tuple[GeoZone, ...]
    seek_dist: tuple[int, ...]
    seek_s: tuple[float, ...]
    head_switch: float
    write_settle: float
    read_hit: tuple[float, float]
    read_miss: tuple[float, float]
    write_hit: tuple[float, float]
    write_miss: tuple[float, float]
    read_completion: float
    write_completion: float
    bus_read_block: float
    bus_write_block: float
    segments: int
    segment_blocks: int
    fast_write: int
    max_readahead: int
    readahead_over: int = 1
    read_watermark: float = 0.0
    reselect: float = 0.0
    block: int = 512
    zone_starts: tuple[int, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.zones or len(self.seek_dist) != len(self.seek_s) or not self.seek_dist:
            raise ZsimError("an exact geometry needs zones and a seek table")
        object.__setattr__(self, "zone_starts", tuple(z.first_lbn for z in self.zones))


def geo_locate(g: ExactGeometry, lbn: int) -> tuple[int, int, float, int, int]:
    """(cylinder, head, angle of the block as a fraction of a turn, blocks left on the track
    from it, physical sectors per track) of block ``lbn``."""
    i = bisect.bisect_right(g.zone_starts, lbn) - 1
    z = g.zones[max(i, 0)]
    off = lbn - z.first_lbn + z.dead
    c_rel, r = divmod(off, z.per_cyl)
    head, s = divmod(r, z.track_lbns)
    if head >= g.surfaces:
        head = g.surfaces - 1
        s = r - head * z.track_lbns
    left = min(z.track_lbns - s, z.per_cyl - r, z.first_lbn + z.lbns - lbn)
    skew = z.offset + c_rel * z.cyl_skew + (c_rel * (g.surfaces - 1) + head) * z.track_skew
    return z.first_cyl + c_rel, head, ((skew + s) % z.bpt) / z.bpt, max(left, 1), z.bpt


def geo_seek(g: ExactGeometry, distance: int) -> float:
    """Seek over ``distance`` cylinders, s (0 for 0; linear between the table's points)."""
    if distance <= 0:
        return 0.0
    d, t = g.seek_dist, g.seek_s
    i = bisect.bisect_left(d, distance)
    if i < len(d) and d[i] == distance:
        return t[i]
    if i == 0:
        return t[0] * distance / d[0]
    if i >= len(d):
        i = len(d) - 1
    return t[i - 1] + (t[i] - t[i - 1]) * (distance - d[i - 1]) / (d[i] - d[i - 1])
