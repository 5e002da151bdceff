"""Service of one request on a drive with an exact layout (:class:`ExactGeometry`): the
seek table between cylinders, head switches, the block's angle on its track, and a read-ahead
cache of whole segments. :func:`zsim.hardware.hdd.access.service` hands a request here when
the drive's parameters carry a geometry.
"""

from __future__ import annotations

import math

from zsim.hardware.hdd.drive import HddParams, HddState
from zsim.hardware.hdd.geometry import geo_locate, geo_seek


class _GeoState:
    """Mutable state of the exact-geometry path (kept in ``HddState.geo``)."""

    __slots__ = ("cyl", "head", "head_free", "last_write", "segs", "stream")

    def __init__(self) -> None:
        self.cyl = 0
        self.head = 0
        self.head_free = 0.0
        self.last_write = False
        self.segs: list[list[int]] = []  # cached [start, end) blocks, most recent last
        # live read-ahead: (start lbn, planned end, chunks (lbn0, k, t0, st, cyl, head))
        self.stream: tuple[int, int, list[tuple[int, int, float, float, int, int]]] | None = None


def _geo_media(
    p: HddParams, gs: _GeoState, t: float, lbn: int, n: int, is_write: bool, cyl: int, hd: int
) -> tuple[list[tuple[int, int, float, float, int, int]], float, float, float]:
    """Media access of blocks [lbn, lbn + n) from the head at (cyl, hd), free at ``t``.

    Returns (chunks (lbn0, k, start, sector time, cyl, head), end time, first seek, first
    rotation). Track crossings pay a head switch or a seek plus the rotation to the next
    track's first block (which the skews place just after a switch).
    """
    g = p.geometry
    assert g is not None
    period = p.period
    chunks = []
    seek0 = rot0 = -1.0
    while n > 0:
        c, h, angle, left, bpt = geo_locate(g, lbn)
        k = left if left < n else n
        if c != cyl:
            move = geo_seek(g, abs(c - cyl))
        elif h != hd:
            move = g.head_switch
        else:
            move = 0.0
        if is_write and move > 0.0:
            move = max(0.0, move + g.write_settle)
        t += move
        wait = (angle - t / period) % 1.0
        if wait > 1.0 - 1e-9:
            wait = 0.0
        wait *= period
        if seek0 < 0.0:
            seek0, rot0 = move, wait
        t += wait
        st = period / bpt
        chunks.append((lbn, k, t, st, c, h))
        t += k * st
        lbn += k
        n -= k
        cyl, hd = c, h
    return chunks, t, max(seek0, 0.0), max(rot0, 0.0)


def _chunk_avail(chunks: list[tuple[int, int, float, float, int, int]], lbn: int) -> float:
    """When block ``lbn`` of a streamed run is in the buffer (its sector has passed)."""
    for c0, k, t0, st, _c, _h in chunks:
        if c0 <= lbn < c0 + k:
            return t0 + (lbn - c0 + 1) * st
    return math.inf


def _stop_stream(gs: _GeoState, when: float, limit: int) -> None:
    """Stop read-ahead at ``when``: keep what is read, leave the head on that track."""
    if gs.stream is None:
        return
    start, _end, chunks = gs.stream
    read_to = start
    for c0, k, t0, st, c, h in chunks:
        if when <= t0:
            break
        gs.cyl, gs.head = c, h
        done = min(k, int((when - t0) / st))
        read_to = c0 + done
        if done < k:
            break
    gs.stream = None
    if read_to > start:
        _add_seg(gs, start, read_to, limit)


def _add_seg(gs: _GeoState, start: int, end: int, limit: int) -> None:
    gs.segs = [s for s in gs.segs if s[1] <= start or s[0] >= end]
    gs.segs.append([start, end])
    del gs.segs[:-limit]


def _geo_bus(done: float, chunks: list, b: float) -> float:
    """When a host transfer at ``b`` s/block that follows the media chunks ends."""
    for _c0, k, t0, st, _c, _h in chunks:
        done = max(done + k * b, t0 + st + k * b, t0 + k * st + b)
    return done


def geo_service(
    p: HddParams, state: HddState, now: float, offset: int, nbytes: int, is_write: bool
) -> tuple[float, dict[str, float]]:
    g = p.geometry
    assert g is not None
    if state.geo is None:
        state.geo = _GeoState()
    gs = state.geo
    assert isinstance(gs, _GeoState)
    start = now if now >= state.free_at else state.free_at
    lbn = offset // g.block
    n = max(1, -(-(offset + nbytes) // g.block) - lbn)
    end = lbn + n
    after_w = 1 if gs.last_write else 0
    nseg = max(1, g.segments)
    seek = rot = 0.0
    if not is_write:
        stream = gs.stream
        live = stream is not None and stream[0] <= lbn <= stream[1]
        if live and stream is not None and _chunk_avail(stream[2], stream[2][-1][0]) < start:
            _stop_stream(gs, start, nseg)  # the read-ahead has finished: an ordinary segment
            live = False
        cached = not live and any(s0 <= lbn and end <= s1 for s0, s1 in gs.segs)
        hit = live or cached
        overhead = (g.read_hit if hit else g.read_miss)[after_w]
        t_cmd = start + overhead
        if cached:
            done = t_cmd + n * g.bus_read_block
            xfer = done - t_cmd
        else:
            ra = g.max_readahead if g.readahead_over else max(0, g.max_readahead - n)
            ra = max(0, min(ra, g.segment_blocks - n))
            if live and stream is not None:
                s0, s_end, chunks = stream
                if end + ra > s_end:  # carry the stream on past its planned end
                    last = chunks[-1]
                    more, _t, _s, _r = _geo_media(
                        p,
                        gs,
                        last[2] + last[1] * last[3],
                        s_end,
                        end + ra - s_end,
                        False,
                        last[4],
                        last[5],
                    )
                    chunks = chunks + more
                    s_end = end + ra
                gs.stream = (s0, s_end, chunks)
            else:
                _stop_stream(gs, t_cmd, nseg)
                t0 = max(t_cmd, gs.head_free)
                chunks, _t, seek, rot = _geo_media(p, gs, t0, lbn, n + ra, False, gs.cyl, gs.head)
                gs.stream = (lbn, lbn + n + ra, chunks)
            mine = []
            for c0, k, t0, st, c, h in gs.stream[2]:
                a, b = max(c0, lbn), min(c0 + k, end)
                if a < b:
                    mine.append((a, b - a, t0 + (a - c0) * st, st, c, h))
            media_end = mine[-1][2] + mine[-1][1] * mine[-1][3]
            gs.head_free = max(gs.head_free, media_end)
            bus0 = t_cmd
            if g.read_watermark > 0.0:
                need = min(n, max(1, math.ceil(g.read_watermark * n)))
                bus0 = max(bus0, _chunk_avail(mine, lbn + need - 1))
            if media_end > t_cmd + 1e-12:  # disconnected while the media worked
                bus0 += g.reselect
            done = max(t_cmd, media_end, _geo_bus(bus0, mine, g.bus_read_block))
            xfer = sum(k * st for _a, k, _t0, st, _c, _h in mine)
        complete = done + g.read_completion
    else:
        fast = g.fast_write > 0
        overhead = (g.write_hit if fast else g.write_miss)[after_w]
        t_cmd = start + overhead
        _stop_stream(gs, t_cmd, nseg)
        gs.segs = [s for s in gs.segs if s[1] <= lbn or s[0] >= end]
        bw = g.bus_write_block
        data_in = t_cmd + n * bw
        t0 = max(t_cmd, gs.head_free)
        chunks, media_end, seek, rot = _geo_media(p, gs, t0, lbn, n, True, gs.cyl, gs.head)
        first = chunks[0]
        # every block must be in the buffer before its sector passes: start later if not
        late = max(0.0, t_cmd + bw + (n - 1) * max(0.0, bw - first[3]) - first[2])
        if late > 0.0:
            chunks, media_end, seek, rot = _geo_media(
                p, gs, t0 + late, lbn, n, True, gs.cyl, gs.head
            )
        last = chunks[-1]
        gs.cyl, gs.head = last[4], last[5]
        gs.head_free = media_end
        if n <= g.segment_blocks:
            _add_seg(gs, lbn, end, nseg)
        xfer = n * bw
        complete = (data_in if fast else max(media_end, data_in)) + g.write_completion
    gs.last_write = is_write
    state.free_at = complete
    total = complete - now
    parts = {
        "overhead": overhead,
        "destage": 0.0,
        "seek": seek,
        "rotation": rot,
        "transfer": xfer,
        "wait": 0.0,
    }
    parts["wait"] = max(0.0, total - overhead - seek - rot - xfer)
    return total, parts
