"""Read OpenZFS status text: ``zpool status`` scan lines, ``zpool iostat -v`` and ``arcstat``.

Sizes and rates come out in bytes and bytes/s, durations in seconds. Format sources:
OpenZFS cmd/zpool/zpool_main.c (``print_scan_status``/``print_scan_scrub_resilver_status``,
``print_rebuild_status_impl``, ``secs_to_dhms``, ``print_iostat``) across 0.6 … 2.3, and
cmd/arcstat (its ``cols`` table and ``prettynum``).

ZFS prints sizes with ``zfs_nicenum``/``zfs_nicebytes``: 1024-based, one letter
``B K M G T P E`` and up to three significant digits (``1.23T``, ``300G``, ``0B``, ``512``);
rates are a size and ``/s`` (``456M/s``). zpool iostat prints operation counts the same way
(``1.96K`` operations/s = 1.96 × 1024). These are read with :func:`zsim.units.parse_size`,
whose bare-letter rule is exactly this 1024 convention, after a strict check of ZFS's shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from zsim.calibrate.measurement import ParseError
from zsim.units import parse_size

_ZFS_NUMBER = r"\d{1,20}(?:\.\d{1,6})?[BKMGTPE]?"
_ZFS_NUMBER_RE = re.compile(rf"^{_ZFS_NUMBER}$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _zfs_bytes(token: str, source: str, line: int | None) -> int:
    """A ZFS human size (``1.23T``, ``300G``, ``0B``, ``512``) in bytes."""
    if not _ZFS_NUMBER_RE.match(token):
        raise ParseError(source, line, f"{token!r} is not a ZFS size like '1.23T', '300G', '0B'")
    return parse_size(token)


def _zfs_rate(token: str, source: str, line: int | None) -> float:
    """A ZFS rate (``456M/s`` or its size part ``456M``) in bytes/s."""
    return float(_zfs_bytes(token.removesuffix("/s"), source, line))


# ================================================================ zpool status: scan


@dataclass(frozen=True)
class ScanStatus:
    """The ``scan:`` section of ``zpool status``.

    ``kind``: ``resilver`` | ``scrub`` | ``rebuild`` (a dRAID/mirror sequential rebuild, printed
    as ``resilvered (draid1-0) …``; ``vdev`` names it). ``state``: ``finished`` |
    ``in_progress`` | ``canceled``; ``paused`` for a paused scrub. Finished: ``bytes``
    resilvered/repaired, ``seconds`` elapsed, ``errors``. In progress: ``bytes`` so far,
    ``scanned_bytes``, ``issued_bytes`` (0.8+), ``total_bytes``, ``scan_rate``/``issue_rate``
    (bytes/s), ``percent_done`` (0…100), ``seconds_to_go`` (None when zpool gives no
    estimate). ``when`` is the date text after ``on``/``since``; ``line`` the 1-based line of
    ``scan:``. Sizes are ZFS's rounded figures (three significant digits).
    """

    kind: str
    state: str
    line: int
    bytes: int | None = None
    seconds: float | None = None
    errors: int | None = None
    scanned_bytes: int | None = None
    issued_bytes: int | None = None
    total_bytes: int | None = None
    scan_rate: float | None = None
    issue_rate: float | None = None
    percent_done: float | None = None
    seconds_to_go: float | None = None
    vdev: str | None = None
    paused: bool = False
    when: str | None = None


_SCAN_KEY = re.compile(r"^\s*scan:\s*(?P<rest>.*)$")
_SECTION_KEY = re.compile(r"^\s*[A-Za-z][A-Za-z ]*:(?:\s|$)")
_VDEV = r"(?: \((?P<vdev>[^)]*)\))?"
_FINISHED = re.compile(
    rf"^(?P<verb>scrub repaired|resilvered){_VDEV} (?P<bytes>{_ZFS_NUMBER}) in (?P<time>.+?) "
    r"with (?P<errors>\d{1,20}) errors?(?: on (?P<when>.*))?$"
)
_CANCELED = re.compile(rf"^(?P<kind>scrub|resilver){_VDEV} canceled(?: on (?P<when>.*))?$")
_RUNNING = re.compile(
    rf"^(?P<kind>scrub|resilver){_VDEV} (?P<how>in progress|paused) since (?P<when>.*)$"
)
_NONE = re.compile(r"^none requested$")

_N = rf"(?<![\w.]){_ZFS_NUMBER}"
_SCANNED_OLD = re.compile(
    rf"(?P<scanned>{_N}) scanned out of (?P<total>{_N}) at (?P<rate>{_N})/s"
)  # 0.6, 0.7
_SCANNED = re.compile(rf"(?P<scanned>{_N})(?: / (?P<total>{_N}))? scanned(?: at (?P<rate>{_N})/s)?")
_ISSUED = re.compile(rf"(?P<issued>{_N})(?: / (?P<total>{_N}))? issued(?: at (?P<rate>{_N})/s)?")
_TOTAL = re.compile(rf"(?P<total>{_N}) total")
_DONE = re.compile(rf"(?P<bytes>{_N}) (?:resilvered|repaired), (?P<pct>\d{{1,3}}(?:\.\d+)?)% done")
_TO_GO = re.compile(r"(?P<eta>\d{1,9}h\d{1,2}m|(?:\d{1,9} days? )?\d{1,2}:\d\d:\d\d) to go")
_HOURS_MINUTES = re.compile(r"^(\d{1,9})h(\d{1,2})m$")
_DHMS = re.compile(r"^(?:(\d{1,9}) days? )?(\d{1,2}):(\d\d):(\d\d)$")

SCAN_EXPECTED = (
    "expected an OpenZFS scan line: 'resilvered|scrub repaired SIZE in TIME with N errors on "
    "DATE', 'resilver|scrub in progress since DATE' or 'resilver|scrub canceled on DATE'"
)


def parse_scan(text: str, source: str) -> ScanStatus:
    """Parse the first ``scan:`` section of ``zpool status`` (or its bare lines) in ``text``.

    Every release form is read: 0.6 (``in 5h12m``; ``X scanned out of Y at R/s, 1h23m to
    go``), 0.7/0.8 (``in 0 days 05:12:34``; 0.8 ``X scanned at R/s, Y issued at R/s, T
    total``), 2.x (``in 05:12:34``, ``in 1 days 05:12:34``; 2.2+ ``X / T scanned at R/s,
    Y / T issued at R/s``), ``… to go``, ``no estimated completion time``, canceled and paused
    scrubs and dRAID sequential rebuilds. Raises :class:`ParseError` naming the line otherwise.
    """
    lines = _ANSI.sub("", text).split("\n")
    head_index, head = _scan_head(lines, source)
    details = _continuation(lines, head_index)
    for parse in (_finished_scan, _canceled_scan, _running_scan):
        status = parse(head, head_index + 1, details, source)
        if status is not None:
            return status
    if _NONE.match(head):
        raise ParseError(source, head_index + 1, "no scan has run on this pool (none requested)")
    raise ParseError(source, head_index + 1, f"{SCAN_EXPECTED}; got {head[:120]!r}")


def _scan_head(lines: list[str], source: str) -> tuple[int, str]:
    """Index and text of the scan line: after ``scan:``, else the first non-blank line."""
    for index, line in enumerate(lines):
        match = _SCAN_KEY.match(line)
        if match:
            return index, match.group("rest").strip()
    for index, line in enumerate(lines):
        if line.strip():
            return index, line.strip()
    raise ParseError(source, None, f"the text is empty; {SCAN_EXPECTED}")


def _continuation(lines: list[str], head_index: int) -> list[tuple[int, str]]:
    """(line, text) of the lines that continue the scan section, up to a blank or key line."""
    details = []
    for index in range(head_index + 1, len(lines)):
        line = lines[index]
        if not line.strip() or _SECTION_KEY.match(line):
            break
        details.append((index + 1, line.strip()))
    return details


def _finished_scan(
    head: str, line: int, details: list[tuple[int, str]], source: str
) -> ScanStatus | None:
    match = _FINISHED.match(head)
    if match is None:
        return None
    vdev = match.group("vdev")
    return ScanStatus(
        kind="rebuild"
        if vdev
        else ("scrub" if match.group("verb") == "scrub repaired" else "resilver"),
        state="finished",
        line=line,
        bytes=_zfs_bytes(match.group("bytes"), source, line),
        seconds=_duration(match.group("time"), source, line),
        errors=int(match.group("errors")),
        vdev=vdev,
        when=match.group("when"),
    )


def _canceled_scan(
    head: str, line: int, details: list[tuple[int, str]], source: str
) -> ScanStatus | None:
    match = _CANCELED.match(head)
    if match is None:
        return None
    vdev = match.group("vdev")
    return ScanStatus(
        kind="rebuild" if vdev else match.group("kind"),
        state="canceled",
        line=line,
        vdev=vdev,
        when=match.group("when"),
    )


def _running_scan(
    head: str, line: int, details: list[tuple[int, str]], source: str
) -> ScanStatus | None:
    match = _RUNNING.match(head)
    if match is None:
        return None
    body = " ".join(text for _, text in details)
    where = details[0][0] if details else line
    done = _DONE.search(body)
    scanned = _SCANNED_OLD.search(body) or _SCANNED.search(body)
    if done is None or scanned is None:
        raise ParseError(
            source,
            where,
            "expected the progress lines of a running scan ('… scanned …' and "
            "'… resilvered|repaired, N% done') after '… in progress since …'",
        )
    issued = _ISSUED.search(body)
    total = scanned.group("total") or _group(_TOTAL.search(body), "total")
    eta = _TO_GO.search(body)
    vdev = match.group("vdev")
    return ScanStatus(
        kind="rebuild" if vdev else match.group("kind"),
        state="in_progress",
        line=line,
        bytes=_zfs_bytes(done.group("bytes"), source, where),
        scanned_bytes=_zfs_bytes(scanned.group("scanned"), source, where),
        issued_bytes=_optional_bytes(_group(issued, "issued"), source, where),
        total_bytes=_optional_bytes(total, source, where),
        scan_rate=_optional_rate(scanned.group("rate"), source, where),
        issue_rate=_optional_rate(_group(issued, "rate"), source, where),
        percent_done=float(done.group("pct")),
        seconds_to_go=_duration(eta.group("eta"), source, where) if eta else None,
        vdev=vdev,
        paused=match.group("how") == "paused",
        when=match.group("when"),
    )


def _group(match: re.Match[str] | None, name: str) -> str | None:
    return match.group(name) if match else None


def _optional_bytes(token: str | None, source: str, line: int) -> int | None:
    return None if token is None else _zfs_bytes(token, source, line)


def _optional_rate(token: str | None, source: str, line: int) -> float | None:
    return None if token is None else _zfs_rate(token, source, line)


def _duration(text: str, source: str, line: int) -> float:
    """zpool's durations: ``5h12m`` (0.6/0.7), ``[N days ]HH:MM:SS`` (0.7+) → seconds."""
    text = text.strip()
    match = _HOURS_MINUTES.match(text)
    if match:
        return float(int(match.group(1)) * 3600 + int(match.group(2)) * 60)
    match = _DHMS.match(text)
    if match:
        days, hours, minutes, seconds = (int(part or 0) for part in match.groups())
        return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)
    raise ParseError(
        source, line, f"duration {text!r} is not zpool's '5h12m', '05:12:34' or '1 days 05:12:34'"
    )


# ================================================================ zpool iostat -v


@dataclass(frozen=True)
class IostatRow:
    """One row of ``zpool iostat -v``: a pool, vdev or disk.

    ``depth`` is the indentation level (0 pool, 1 top-level vdev, 2 disk); ``section`` is
    ``data`` for the pool row and its data vdevs, else the section header above the row
    (``special``, ``logs``, ``cache``, ``spares``, ``dedup``). ``alloc``/``free`` in bytes,
    operations per second, bandwidth in bytes/s; None where zpool printed ``-``.
    """

    name: str
    depth: int
    section: str
    alloc: int | None
    free: int | None
    read_ops: float | None
    write_ops: float | None
    read_bytes_per_s: float | None
    write_bytes_per_s: float | None


@dataclass(frozen=True)
class IostatSample:
    """One interval of ``zpool iostat -v POOL N``. The first (``since_import``) holds averages
    since the pool was imported, the others one interval each. ``timestamp`` is the text of
    the ``-T u|d`` line before the block, if any; ``line`` the 1-based line where it starts."""

    index: int
    since_import: bool
    rows: tuple[IostatRow, ...]
    timestamp: str | None = None
    line: int | None = None

    def row(self, name: str) -> IostatRow:
        """The first row called ``name`` (KeyError if there is none)."""
        for row in self.rows:
            if row.name == name:
                return row
        raise KeyError(name)


IOSTAT_SECTIONS = frozenset({"special", "logs", "cache", "spares", "dedup"})
_IOSTAT_TITLE = re.compile(r"^\s*capacity\s+operations\s+bandwidth\s*$")
_IOSTAT_COLUMNS = re.compile(r"^\s*\S+\s+alloc\s+free\s+read\s+write\s+read\s+write\s*$")
_DASHES = re.compile(r"^[-\s]*-[-\s]*$")
_TIMESTAMP = re.compile(r"^\d{9,12}$|\b\d{1,2}:\d\d:\d\d\b")
_IOSTAT_HEADER_EXPECTED = "expected zpool iostat's header line 'capacity operations bandwidth'"
_IOSTAT_EXPECTED = (
    "expected a zpool iostat -v row 'NAME alloc free read-ops write-ops read-bw write-bw' "
    "(numbers like 1.23K, 456M or '-')"
)


@dataclass
class _Block:
    line: int
    timestamp: str | None
    rows: list[IostatRow] = field(default_factory=list)
    section: str = "data"


def parse_zpool_iostat(text: str, source: str) -> list[IostatSample]:
    """Parse ``zpool iostat -v [POOL] N`` output (also with ``-T u|d``) into samples.

    Each block (title ``capacity operations bandwidth``, the column line, dashes, rows) is one
    sample; without ``-v`` (one row per pool and interval) a repeated pool name starts the next
    sample. Section header rows (``logs``, ``special``…) only set ``IostatRow.section``.
    """
    lines = [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip()]
    blocks: list[_Block] = []
    timestamp: str | None = None
    position = 0
    while position < len(lines):
        number, line = lines[position]
        following = lines[position + 1][1] if position + 1 < len(lines) else ""
        if _IOSTAT_TITLE.match(line):
            _expect_columns(lines, position + 1, number, source)
            blocks.append(_Block(number, timestamp))
            timestamp, position = None, position + 2
            continue
        row = _iostat_row(line, number, source)
        if row is not None and blocks:
            timestamp = _add_row(blocks, row, number, timestamp)
        elif _DASHES.match(line):
            pass
        elif _TIMESTAMP.search(line) or _IOSTAT_TITLE.match(following):
            timestamp = line.strip()
        else:
            expected = _IOSTAT_EXPECTED if blocks else _IOSTAT_HEADER_EXPECTED
            raise ParseError(source, number, f"{expected}; got {line.strip()[:120]!r}")
        position += 1
    return _samples(blocks, source)


def _expect_columns(lines: list[tuple[int, str]], position: int, title: int, source: str) -> None:
    if position >= len(lines) or not _IOSTAT_COLUMNS.match(lines[position][1]):
        raise ParseError(
            source,
            lines[position][0] if position < len(lines) else title,
            "expected the column line 'pool alloc free read write read write' after "
            "'capacity operations bandwidth' (zpool iostat without -l/-q/-r/-w)",
        )


def _add_row(
    blocks: list[_Block], row: IostatRow, number: int, timestamp: str | None
) -> str | None:
    """Append a row to the current block; a pool row seen twice (no -v), or one after a
    timestamp, opens the next block. Returns the timestamp still waiting for a block."""
    block = blocks[-1]
    if row.depth == 0 and row.name not in IOSTAT_SECTIONS:
        repeated = any(r.depth == 0 and r.name == row.name for r in block.rows)
        if repeated or (timestamp is not None and block.rows):
            block = _Block(number, timestamp)
            blocks.append(block)
            timestamp = None
        block.section = "data"
    if row.depth == 0 and row.name in IOSTAT_SECTIONS:
        block.section = row.name
        return timestamp
    block.rows.append(replace(row, section=block.section))
    return timestamp


def _iostat_row(line: str, number: int, source: str) -> IostatRow | None:
    """A row of numbers or a section header; None when the line is not shaped like one."""
    tokens = line.split()
    depth = (len(line) - len(line.lstrip(" "))) // 2
    if len(tokens) == 1 and depth == 0 and tokens[0] in IOSTAT_SECTIONS:
        return IostatRow(tokens[0], 0, tokens[0], None, None, None, None, None, None)
    if len(tokens) < 7:
        return None
    values = tokens[-6:]
    if not all(value == "-" or _ZFS_NUMBER_RE.match(value) for value in values):
        return None
    sizes = [None if v == "-" else _zfs_bytes(v, source, number) for v in values[:2]]
    rates = [None if v == "-" else _zfs_rate(v, source, number) for v in values[2:]]
    return IostatRow(" ".join(tokens[:-6]), depth, "data", *sizes, *rates)


def _samples(blocks: list[_Block], source: str) -> list[IostatSample]:
    if not blocks:
        raise ParseError(
            source, None, "no zpool iostat block found; expected 'capacity operations bandwidth'"
        )
    samples = []
    for index, block in enumerate(blocks):
        if not block.rows:
            raise ParseError(source, block.line, "this zpool iostat block has no rows")
        samples.append(
            IostatSample(index, index == 0, tuple(block.rows), block.timestamp, block.line)
        )
    return samples


# ================================================================ arcstat

# arcstat's cols table: size columns scale by 1024, percentages by 100, counts by 1000.
_ARC_SIZE_COLUMNS = frozenset(
    {
        "arcsz", "size", "c", "el2cach", "el2el", "el2mfu", "el2mru", "el2inel", "l2pref",
        "l2mfu", "l2mru", "l2data", "l2meta", "l2asize", "l2size", "l2bytes", "l2wbytes",
        "need", "free", "avail", "waste",
    }
)  # fmt: skip
_ARC_SIZE_GENERATED = re.compile(
    r"^(?:cmp|ovh|bon|dno|dbu|hdr|l2h|abd|data|meta|ano|mfu|mru|unc)"
    r"(?:sz|tg|dt|mt|da|me|ed|em|gsz|gd|gm)$"
)
_ARC_NAME = re.compile(r"^[A-Za-z][\w%]*$")
_ARC_VALUE = re.compile(r"^(-?\d{1,20}(?:\.\d{1,6})?)([KMGTPEZ]?)$")
_ARC_POWERS = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6, "Z": 7}


def parse_arcstat(text: str, source: str) -> list[dict[str, float | str]]:
    """Parse ``arcstat [-f cols] N`` output into one dict per sample line.

    The header line names the columns; repeated headers are skipped; a column named twice
    gets ``_2``, ``_3``… (``c``, ``c_2``). ``time`` stays text. Values with a ``K M G T P E``
    suffix are scaled as arcstat's ``prettynum`` scaled them: by 1024 for size columns
    (``size``, ``c``, ``avail``, ``l2size``…), by 1000 for counts per second (``hits``,
    ``miss``, ``read``…); percentage columns (``hit%``) are numbers 0…100.
    """
    header: list[str] | None = None
    names: list[str] = []
    samples: list[dict[str, float | str]] = []
    for number, line in enumerate(text.split("\n"), 1):
        tokens = line.split()
        if not tokens or tokens == header:
            continue
        if all(_ARC_NAME.match(token) for token in tokens):
            header, names = tokens, _unique_names(tokens)
        elif header is None:
            raise ParseError(source, number, "expected arcstat's header line of column names")
        else:
            samples.append(_arcstat_row(tokens, header, names, number, source))
    if header is None:
        raise ParseError(source, None, "no arcstat header found; expected column names")
    return samples


def _unique_names(columns: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    names = []
    for column in columns:
        seen[column] = seen.get(column, 0) + 1
        names.append(column if seen[column] == 1 else f"{column}_{seen[column]}")
    return names


def _arcstat_row(
    tokens: list[str], header: list[str], names: list[str], number: int, source: str
) -> dict[str, float | str]:
    if len(tokens) != len(header):
        raise ParseError(
            source,
            number,
            f"expected {len(header)} arcstat values ({' '.join(header)[:80]}), got {len(tokens)}",
        )
    row: dict[str, float | str] = {}
    for column, name, token in zip(header, names, tokens, strict=True):
        row[name] = token if column == "time" else _arc_value(column, token, number, source)
    return row


def _arc_value(column: str, token: str, number: int, source: str) -> float:
    match = _ARC_VALUE.match(token)
    if match is None:
        raise ParseError(
            source, number, f"arcstat {column} value {token!r} is not a number like 31G or 8.8K"
        )
    size_like = column in _ARC_SIZE_COLUMNS or _ARC_SIZE_GENERATED.match(column)
    scale = 1024 if size_like else 1000
    return float(match.group(1)) * scale ** _ARC_POWERS[match.group(2)]
