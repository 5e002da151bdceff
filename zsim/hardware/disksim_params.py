"""DiskSim 4.0 parameter files (``*.parv``, ``*.diskspecs``, ``*.model``, ``*.seek``) as data.

:func:`parse_disksim` reads the subset of DiskSim's configuration syntax that the validation
files use: top-level blocks ``<type> <name> { key = value, ... }``, values that are numbers,
words, nested typed blocks (``dm_layout_g1 { ... }``) or lists ``[ a, b, ... ]``, ``#``
comments, ``source <file>`` (at top level: read that file too; as a value, ``Model = source
x.model``: the block that file defines). ``instantiate`` and ``topology`` statements are
skipped. Blocks come back as plain dicts with the block's type under ``"__type__"``.

:func:`drive_from_disksim` turns a validation ``.parv`` into a :class:`DisksimDrive`: the
mechanism, layout, overheads, bus and cache figures zsim's HDD model uses
(:func:`geometry_from_disksim` builds the model's geometry from it). Times
in the files are in ms; the dataclass keeps DiskSim's units (ms, blocks of 512 bytes).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zsim.errors import ZsimError
from zsim.files import TEXT_LIMIT, read_bytes
from zsim.hardware.hdd.geometry import ExactGeometry, GeoZone

_PUNCT = set("{}[],=")
_TOKEN = re.compile(r"[{}\[\],=]|[^{}\[\],=]+")


class _Tokens:
    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self.items: list[tuple[str, int]] = []  # (token, line)
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.split("#", 1)[0]
            for m in _TOKEN.finditer(line):
                tok = " ".join(m.group(0).split())
                if tok:
                    self.items.append((tok, number))
        self.pos = 0

    def peek(self) -> str | None:
        return self.items[self.pos][0] if self.pos < len(self.items) else None

    def take(self) -> str:
        if self.pos >= len(self.items):
            raise ZsimError(
                f"{self.source}: unexpected end of file (a block or list is not closed)"
            )
        tok = self.items[self.pos][0]
        self.pos += 1
        return tok

    def error(self, message: str) -> ZsimError:
        line = self.items[min(self.pos, len(self.items) - 1)][1] if self.items else 0
        return ZsimError(f"{self.source}:{line}: {message}")

    def expect(self, tok: str) -> None:
        got = self.take()
        if got != tok:
            self.pos -= 1
            raise self.error(f"expected {tok!r}, found {got!r}")


def _number(word: str) -> Any:
    try:
        return int(word)
    except ValueError:
        pass
    try:
        return float(word)
    except ValueError:
        return word


class _Parser:
    def __init__(self, folder: Path, depth: int) -> None:
        self.folder = folder
        self.depth = depth

    def include(self, name: str) -> dict[str, Any]:
        if self.depth > 8:
            raise ZsimError(f"'source {name}': files include each other too deeply")
        return _parse_file(self.folder / name, self.depth + 1)

    def value(self, t: _Tokens) -> Any:
        tok = t.take()
        if tok == "[":
            return self.list_body(t)
        if tok in _PUNCT:
            t.pos -= 1
            raise t.error(f"a value expected, found {tok!r}")
        if t.peek() == "{":
            t.take()
            block = self.block_body(t)
            block["__type__"] = tok
            return block
        if tok.startswith("source "):
            blocks = self.include(tok[len("source ") :].strip())
            if len(blocks) != 1:
                raise t.error(f"{tok!r} must define exactly one block, found {len(blocks)}")
            return next(iter(blocks.values()))
        return _number(tok)

    def list_body(self, t: _Tokens) -> list[Any]:
        items: list[Any] = []
        while True:
            tok = t.peek()
            if tok is None:
                raise t.error("a list '[' is not closed")
            if tok == "]":
                t.take()
                return items
            if tok == ",":
                t.take()
                continue
            items.append(self.value(t))

    def block_body(self, t: _Tokens) -> dict[str, Any]:
        block: dict[str, Any] = {}
        while True:
            tok = t.take()
            if tok == "}":
                return block
            if tok == ",":
                continue
            if tok in _PUNCT:
                t.pos -= 1
                raise t.error(f"a 'key = value' expected, found {tok!r}")
            t.expect("=")
            block[tok] = self.value(t)

    def top(self, t: _Tokens) -> dict[str, Any]:
        blocks: dict[str, Any] = {}
        while t.peek() is not None:
            tok = t.take()
            if tok in _PUNCT:
                t.pos -= 1
                raise t.error(f"a block '<type> <name> {{' expected, found {tok!r}")
            head = tok.split()
            if head[0] == "source" and len(head) == 2:
                blocks.update(self.include(head[1]))
            elif head[0] in ("instantiate", "topology", "as"):
                while t.peek() == "[":  # skip the bracketed part
                    t.take()
                    self.list_body(t)
            elif t.peek() == "{" and len(head) == 2:
                t.take()
                block = self.block_body(t)
                block["__type__"] = head[0]
                blocks[head[1]] = block
            else:
                t.pos -= 1
                raise t.error(f"a block '<type> <name> {{' expected, found {tok!r}")
        return blocks


def parse_disksim(text: str, source: str = "disksim", folder: Path | None = None) -> dict[str, Any]:
    """Top-level blocks of a DiskSim parameter text, by name (``source`` files from ``folder``)."""
    return _Parser(folder or Path("."), 0).top(_Tokens(text, source))


def _parse_file(path: Path, depth: int = 0) -> dict[str, Any]:
    if not path.is_file():
        raise ZsimError(f"DiskSim parameter file {str(path)!r} does not exist")
    text = read_bytes(path, limit=TEXT_LIMIT, what="DiskSim parameter file").decode(
        "utf-8", errors="replace"
    )
    return _Parser(path.parent, depth).top(_Tokens(text, str(path)))


def parse_disksim_file(path: str | Path) -> dict[str, Any]:
    """:func:`parse_disksim` on a file; ``source`` lines resolve next to it."""
    return _parse_file(Path(path))


# ---------------------------------------------------------------- seek curves


@dataclass(frozen=True)
class SeekTable:
    """Seek time (ms) against distance (cylinders), linear between the points; 0 at distance 0.

    Beyond the last point the last segment's slope continues.
    """

    distances: tuple[int, ...]
    times_ms: tuple[float, ...]

    def __call__(self, distance: int) -> float:
        if distance <= 0:
            return 0.0
        d, t = self.distances, self.times_ms
        i = bisect.bisect_left(d, distance)
        if i < len(d) and d[i] == distance:
            return t[i]
        if i == 0:
            return t[0] * distance / d[0] if d[0] > 0 else t[0]
        if i >= len(d):
            i = len(d) - 1
        d0, d1, t0, t1 = d[i - 1], d[i], t[i - 1], t[i]
        return t0 + (t1 - t0) * (distance - d0) / (d1 - d0)


def parse_seek_file(path: str | Path) -> SeekTable:
    """A DiskSim ``*.seek`` file: ``Seek distances measured: N`` then N ``<cyl>, <ms>`` lines."""
    p = Path(path)
    if not p.is_file():
        raise ZsimError(f"DiskSim seek file {str(p)!r} does not exist")
    lines = [ln.strip() for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip()]
    m = re.fullmatch(r"Seek distances measured:\s*(\d+)", lines[0]) if lines else None
    if m is None:
        raise ZsimError(f"{p}:1: expected 'Seek distances measured: N'")
    dist: list[int] = []
    times: list[float] = []
    for number, line in enumerate(lines[1:], start=2):
        parts = [x.strip() for x in line.split(",")]
        try:
            d, ms = int(parts[0]), float(parts[1])
        except (ValueError, IndexError):
            raise ZsimError(f"{p}:{number}: expected '<cylinders>, <ms>', got {line!r}") from None
        if dist and d <= dist[-1]:
            raise ZsimError(f"{p}:{number}: seek distances must increase")
        dist.append(d)
        times.append(ms)
    if len(dist) != int(m.group(1)) or not dist:
        raise ZsimError(f"{p}: header says {m.group(1)} distances, found {len(dist)}")
    return SeekTable(tuple(dist), tuple(times))


def hpl_seek_table(
    values: list[float], first_ten: list[float], single: float, cylinders: int
) -> SeekTable:
    """The HP "HPL" seek equation (Ruemmler & Wilkes) tabulated at every distance.

    ``values`` = [boundary, a, b, c, e, full]: a + b·√d ms below the boundary, c + e·d above;
    ``first_ten`` override distances 1-10 (DiskSim's ``hplplus10``). ``single`` is unused
    when ``first_ten`` is given.
    """
    if len(values) < 5:
        raise ZsimError("HPL seek equation values need [boundary, a, b, c, e, ...]")
    boundary, a, b, c, e = (float(v) for v in values[:5])
    dist = list(range(1, cylinders))
    times = [a + b * d**0.5 if d < boundary else c + e * d for d in dist]
    for i, t in enumerate(first_ten[:10]):
        if i < len(times):
            times[i] = float(t)
    if not first_ten and times:
        times[0] = single
    return SeekTable(tuple(dist), tuple(times))


# ---------------------------------------------------------------- the drive


@dataclass(frozen=True)
class DisksimZone:
    """One zone: cylinders [first, last], sectors per track, skews in sectors, LBN range."""

    first_cyl: int
    last_cyl: int
    blocks_per_track: int
    track_skew: int
    cyl_skew: int
    first_block_offset: int
    dead: int  # empty blocks at the zone's front
    first_lbn: int
    lbn_per_cyl: int  # LBNs each cylinder holds after spares
    track_lbns: int  # LBNs on a full track
    lbns: int  # LBNs in the zone


@dataclass(frozen=True)
class DisksimDrive:
    """What zsim takes from one DiskSim validation configuration (ms, 512-byte blocks)."""

    name: str
    blocks: int
    rpm: float
    surfaces: int
    cylinders: int
    zones: tuple[DisksimZone, ...]
    seek: SeekTable
    head_switch_ms: float
    write_settle_ms: float
    read_hit_ms: tuple[float, float]  # (after a read, after a write)
    read_miss_ms: tuple[float, float]
    write_hit_ms: tuple[float, float]
    write_miss_ms: tuple[float, float]
    read_completion_ms: float
    write_completion_ms: float
    bus_read_block_ms: float  # host transfer per block
    bus_write_block_ms: float
    segments: int
    segment_blocks: int
    fast_write_level: int  # 0 write-through, 1 sequential write-back, 2 all writes
    max_readahead: int  # blocks
    readahead_over_requested: int
    sparing_scheme: int
    read_watermark: float = 0.0  # fraction of the request buffered before the host transfer
    reselect_ms: float = 0.0
    notes: tuple[str, ...] = ()


def _get(block: dict[str, Any], key: str, where: str) -> Any:
    if key not in block:
        raise ZsimError(f"{where}: missing {key!r}")
    return block[key]


def _num(block: dict[str, Any], key: str, where: str) -> float:
    v = _get(block, key, where)
    if not isinstance(v, int | float):
        raise ZsimError(f"{where}: {key!r} must be a number, got {v!r}")
    return float(v)


def _zones(layout: dict[str, Any], surfaces: int, blocks: int, where: str) -> list[DisksimZone]:
    scheme = int(_num(layout, "Sparing scheme used", where))
    rangesize = max(1, int(layout.get("Rangesize for sparing", 1)))
    raw = _get(layout, "Zones", where)
    if not isinstance(raw, list) or not raw:
        raise ZsimError(f"{where}: 'Zones' must be a non-empty list of zone blocks")
    zones: list[DisksimZone] = []
    lbn = 0
    for i, z in enumerate(raw):
        zw = f"{where} zone {i}"
        if not isinstance(z, dict):
            raise ZsimError(f"{zw}: a zone block expected")
        first = int(_num(z, "First cylinder number", zw))
        last = int(_num(z, "Last cylinder number", zw))
        bpt = int(_num(z, "Blocks per track", zw))
        spares = int(_num(z, "Number of spares", zw))
        if last < first or bpt <= 0:
            raise ZsimError(f"{zw}: cylinders {first}-{last}, {bpt} blocks per track")
        ncyl = last - first + 1
        dead = int(_num(z, "Empty space at zone front", zw))
        nslips = len(z.get("slips", []) or [])
        # blocks in the zone as DiskSim counts them (layout_g1_load.c, compute_blksinband)
        total = ncyl * surfaces * bpt - dead
        per_cyl = surfaces * bpt  # LBNs per cylinder, for the cylinder of an LBN
        if scheme == 1:  # spare tracks
            total -= spares * bpt
        elif scheme == 3:  # spare sectors on every track
            total -= spares * ncyl * surfaces
            per_cyl = surfaces * (bpt - spares)
        elif scheme == 7:  # spares at the end: slipped sectors are lost
            total -= nslips
        elif scheme == 9:
            total -= spares
        elif scheme == 10:
            total -= spares + nslips
        elif scheme in (2, 5):  # sectors per cylinder
            total -= spares * ncyl
            per_cyl -= spares
        elif scheme in (4, 6):
            total -= spares * ncyl + nslips
            per_cyl -= spares
        elif scheme == 8:  # sectors per range of cylinders
            total -= spares * (ncyl // rangesize)
            per_cyl -= spares // rangesize
        elif scheme != 0:
            raise ZsimError(f"{where}: sparing scheme {scheme} is not supported")
        zones.append(
            DisksimZone(
                first_cyl=first,
                last_cyl=last,
                blocks_per_track=bpt,
                track_skew=round(_num(z, "Skew for track switch", zw)),
                cyl_skew=round(_num(z, "Skew for cylinder switch", zw)),
                first_block_offset=round(_num(z, "Offset of first block", zw)),
                dead=dead,
                first_lbn=lbn,
                lbn_per_cyl=per_cyl,
                track_lbns=bpt - spares if scheme == 3 else bpt,
                lbns=max(total, 0),
            )
        )
        lbn += max(total, 0)
    return zones


def drive_from_disksim(parv_path: str | Path) -> DisksimDrive:
    """Load the disk of a DiskSim validation ``.parv`` (with its diskspecs, model, seek file)."""
    path = Path(parv_path)
    blocks = _parse_file(path)
    disks = [(n, b) for n, b in blocks.items() if b.get("__type__") == "disksim_disk"]
    if len(disks) != 1:
        raise ZsimError(f"{path}: expected one disksim_disk block, found {len(disks)}")
    name, disk = disks[0]
    where = f"{path} disk {name}"
    model = _get(disk, "Model", where)
    if not isinstance(model, dict):
        raise ZsimError(f"{where}: 'Model' must be 'source <file>.model'")
    mw = f"{where} model"
    mech = _get(model, "Mechanical Model", mw)
    layout = _get(model, "Layout Model", mw)
    surfaces = int(_num(model, "Number of data surfaces", mw))
    cylinders = int(_num(model, "Number of cylinders", mw))
    nblocks = int(_num(model, "Block count", mw))
    notes: list[str] = []
    zones = _zones(layout, surfaces, nblocks, mw)
    mapped = zones[-1].first_lbn + zones[-1].lbns
    if mapped != nblocks:
        notes.append(f"zones map {mapped} blocks, the model declares {nblocks}")
    seek_type = str(_get(mech, "Seek type", mw))
    if seek_type == "extracted":
        seek = parse_seek_file(path.parent / str(_get(mech, "Full seek curve", mw)))
    elif seek_type.startswith("hpl"):
        seek = hpl_seek_table(
            list(_get(mech, "HPL seek equation values", mw)),
            list(mech.get("First ten seek times", [])) if seek_type == "hplplus10" else [],
            _num(mech, "Single cylinder seek time", mw),
            cylinders,
        )
    else:
        raise ZsimError(f"{mw}: seek type {seek_type!r} is not supported (extracted, hpl*)")
    buses = [b for b in blocks.values() if b.get("__type__") == "disksim_bus"]
    bus_r = max((float(b.get("Read block transfer time", 0.0)) for b in buses), default=0.0)
    bus_w = max((float(b.get("Write block transfer time", 0.0)) for b in buses), default=0.0)
    bulk = float(disk.get("Bulk sector transfer time", 0.0))
    if bus_r == 0.0 and bus_w == 0.0:
        bus_r = bus_w = bulk

    def pair(kind: str) -> tuple[float, float]:
        return (_num(disk, f"{kind} after read", where), _num(disk, f"{kind} after write", where))

    return DisksimDrive(
        name=name,
        blocks=nblocks,
        rpm=_num(mech, "Rotation speed (in rpms)", mw),
        surfaces=surfaces,
        cylinders=cylinders,
        zones=tuple(zones),
        seek=seek,
        head_switch_ms=_num(mech, "Head switch time", mw),
        write_settle_ms=_num(mech, "Add. write settling delay", mw),
        read_hit_ms=pair("Read hit over."),
        read_miss_ms=pair("Read miss over."),
        write_hit_ms=pair("Write hit over."),
        write_miss_ms=pair("Write miss over."),
        read_completion_ms=float(disk.get("Read completion overhead", 0.0)),
        write_completion_ms=float(disk.get("Write completion overhead", 0.0)),
        bus_read_block_ms=bus_r,
        bus_write_block_ms=bus_w,
        segments=int(_num(disk, "Number of buffer segments", where)),
        segment_blocks=int(_num(disk, "Segment size (in blks)", where)),
        fast_write_level=int(_num(disk, "Fast write level", where)),
        max_readahead=int(_num(disk, "Maximum read-ahead (blks)", where)),
        readahead_over_requested=int(disk.get("Read-ahead over requested", 0)),
        sparing_scheme=int(_num(layout, "Sparing scheme used", mw)),
        read_watermark=float(disk.get("High (read) water mark", 0.0))
        if int(disk.get("Set watermark by reqsize", 1))
        else 0.0,
        reselect_ms=float(disk.get("First reselect overhead", 0.0)),
        notes=tuple(notes),
    )


def geometry_from_disksim(drive: DisksimDrive) -> ExactGeometry:
    """The optional exact geometry of zsim's HDD model (``HddParams.geometry``), in s."""
    ms = 1e-3
    zones = tuple(
        GeoZone(
            first_lbn=z.first_lbn,
            lbns=z.lbns,
            first_cyl=z.first_cyl,
            bpt=z.blocks_per_track,
            track_lbns=z.track_lbns,
            per_cyl=z.lbn_per_cyl,
            dead=z.dead,
            track_skew=z.track_skew,
            cyl_skew=z.cyl_skew,
            offset=z.first_block_offset,
        )
        for z in drive.zones
    )

    def pair(v: tuple[float, float]) -> tuple[float, float]:
        return (v[0] * ms, v[1] * ms)

    return ExactGeometry(
        surfaces=drive.surfaces,
        zones=zones,
        seek_dist=drive.seek.distances,
        seek_s=tuple(t * ms for t in drive.seek.times_ms),
        head_switch=drive.head_switch_ms * ms,
        write_settle=drive.write_settle_ms * ms,
        read_hit=pair(drive.read_hit_ms),
        read_miss=pair(drive.read_miss_ms),
        write_hit=pair(drive.write_hit_ms),
        write_miss=pair(drive.write_miss_ms),
        read_completion=drive.read_completion_ms * ms,
        write_completion=drive.write_completion_ms * ms,
        bus_read_block=drive.bus_read_block_ms * ms,
        bus_write_block=drive.bus_write_block_ms * ms,
        segments=drive.segments,
        segment_blocks=drive.segment_blocks,
        fast_write=drive.fast_write_level,
        max_readahead=drive.max_readahead,
        readahead_over=1 if drive.readahead_over_requested > 0 else 0,
        read_watermark=drive.read_watermark,
        reselect=drive.reselect_ms * ms,
    )


def disksim_overrides(drive: DisksimDrive) -> dict[str, object]:
    """``hdd_params`` overrides that make zsim's HDD model use the drive's full parameters."""
    return {"rpm": drive.rpm, "geometry": geometry_from_disksim(drive), "sector": 512}
