"""Read fio's JSON report into :class:`Measurement` objects (bytes, seconds, bytes/s).

Format sources: fio's HOWTO ("Interpreting the output", "JSON output", option reference) and
``show_ddir_status_json`` in fio's stat.c across releases.

* fio ≥ 3.0, per job and direction (``read``/``write``): ``io_bytes`` (bytes), ``io_kbytes``
  (KiB), ``bw_bytes`` (B/s; missing from the earliest 3.x, where only ``bw`` in KiB/s exists),
  ``iops``, ``runtime`` (ms), ``total_ios``, ``slat_ns``/``clat_ns``/``lat_ns`` (ns) with
  ``clat_ns.percentile`` keyed ``"50.000000"``, ``"99.000000"``…; ``--output-format=json+``
  adds ``clat_ns.bins`` (ignored, as is every other extra key).
* fio 2.x: ``bw`` (KiB/s), ``iops``, ``runtime`` (ms) and ``io_bytes`` — in **KiB** despite the
  name (stat.c wrote ``ts->io_bytes[ddir] >> 10``; fio 3 made it bytes and added
  ``io_kbytes``) — and ``slat``/``clat``/``lat`` in µs with ``clat.percentile`` in µs.
  A direction without ``io_kbytes`` is read as fio 2 when the top-level ``fio version`` says
  ``fio-2.*`` (or, with no version, when it has no ``*_ns`` latency keys).
* Per job: ``jobname``, ``groupid``, ``error``, ``job options`` (merged over the top-level
  ``global options``); top level: ``fio version`` (``"fio-3.36"``) and ``timestamp`` (unix s).
  With ``unified_rw_reporting`` the one ``mixed`` direction is filed as ``write`` for write-only
  patterns and as ``read`` otherwise.

The JSON may sit between other text (``--output-format=json,normal`` and shell output): it
starts at the first line beginning with ``{`` and exactly one object is decoded.

Job entries with the same ``jobname`` and ``groupid`` are the processes of one job reported
without ``group_reporting``; they become one :class:`Measurement` whose ``numjobs`` is their
count: bytes/s, IOPS and bytes are summed, runtime is the longest, mean latency is weighted by
I/O count, p50 is the I/O-weighted mean of the per-process p50s and p99 the largest per-process
p99 — approximations (the exact pooled percentiles need the histograms), fine for calibration.
A single (group-reported) entry takes ``numjobs`` from its options. Different jobs become one
Measurement each, in file order.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from zsim.calibrate.measurement import DirectionResult, Measurement, ParseError
from zsim.errors import UnitError
from zsim.files import RESULTS_LIMIT, InputFileError, read_bytes
from zsim.units import KiB, parse_fio_size

_JSON_START = re.compile(r"^\{", re.MULTILINE)
_JOBNAME_KEY = re.compile(r'"jobname"\s*:')
_VERSION = re.compile(r"^fio-([0-9]{1,9})(?![0-9])")
_PERCENT = re.compile(r"^\s*(\d{1,3}(?:\.\d+)?)\s*%\s*$")

_READ_MODES = frozenset({"read", "randread"})
_WRITE_MODES = frozenset({"write", "randwrite", "trimwrite", "randtrimwrite"})
_MIXED_MODES = frozenset({"readwrite", "randrw"})
_TRIM_MODES = frozenset({"trim", "randtrim"})
_RW_MODES = _READ_MODES | _WRITE_MODES | _MIXED_MODES | _TRIM_MODES
_TRUE = frozenset({"", "1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
_SYNC_ON = _TRUE | {"sync", "dsync"}
_SYNC_OFF = _FALSE | {"none"}

_LARGEST = 1e30  # above any byte count, rate or timestamp fio can report
FIO_DEFAULT_BS = 4096  # fio's default block size
FIO_DEFAULT_IOENGINE = "psync"  # fio 3's default engine on Linux


def parse_fio_file(path: str | os.PathLike[str]) -> list[Measurement]:
    """Parse a file holding fio output (UTF-8, undecodable bytes replaced); see the module doc."""
    source = str(path)
    try:
        data = read_bytes(path, limit=RESULTS_LIMIT, what="fio output")
    except InputFileError as err:
        raise ParseError(source, None, f"cannot read the fio output: {err.problem}") from None
    return parse_fio_text(data.decode("utf-8", errors="replace"), source)


def parse_fio_text(text: str, source: str) -> list[Measurement]:
    """Parse fio output (JSON, possibly with text around it) into one Measurement per job.

    ``source`` names the input in errors and in each ``Measurement.source``
    (``"<source>#<jobname>"``). Raises :class:`ParseError` for anything that is not a complete
    fio JSON report.
    """
    document, start, end = _decode_document(text, source)
    top = _Where(source, _line_at(text, start), "fio JSON")
    jobs = document.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        raise top.error("expected a non-empty 'jobs' list (fio's JSON report)")
    major = _version_major(document, top)
    report = _Report(
        source=source,
        version=_optional_text(document, "fio version", top),
        started=_optional_number(document, "timestamp", top),
        global_options=_options(document.get("global options"), top),
    )
    lines = _job_lines(text, start, end, len(jobs))
    entries = [
        _read_entry(raw, index, lines[index], major, report) for index, raw in enumerate(jobs)
    ]
    return [_measurement(group, report) for group in _group_entries(entries)]


# ---------------------------------------------------------------- decoding and context


@dataclass(frozen=True)
class _Where:
    """Where a problem is: the file, the 1-based line, and what was being read."""

    source: str
    line: int | None
    label: str

    def error(self, problem: str) -> ParseError:
        return ParseError(self.source, self.line, f"{self.label}: {problem}")


@dataclass(frozen=True)
class _Report:
    source: str
    version: str | None
    started: float | None
    global_options: dict[str, str]


@dataclass(frozen=True)
class _Direction:
    """One direction of one job entry, in SI units, with its I/O count for weighting."""

    bytes_per_s: float
    iops: float
    io_bytes: int
    runtime_s: float
    ios: float
    lat_mean_s: float | None
    p50_s: float | None
    p99_s: float | None


@dataclass(frozen=True)
class _Entry:
    name: str
    group: int
    error: int
    options: dict[str, str]
    read: _Direction | None
    write: _Direction | None
    where: _Where


def _decode_document(text: str, source: str) -> tuple[dict[str, object], int, int]:
    """Decode the one JSON object that starts at the first line beginning with '{'."""
    match = _JSON_START.search(text)
    if match is None:
        raise ParseError(
            source,
            None,
            "no fio JSON found: expected a line starting with '{' "
            "(run fio with --output-format=json or json,normal)",
        )
    start = match.start()
    try:
        document, end = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise ParseError(
            source,
            exc.lineno,
            f"the fio JSON is cut off or malformed ({exc.msg}, column {exc.colno}); "
            "expected one complete JSON object",
        ) from None
    except (ValueError, RecursionError) as exc:  # over-long integer literal, absurd nesting
        raise ParseError(
            source,
            _line_at(text, start),
            f"the fio JSON cannot be decoded ({str(exc)[:80]}); give fio's unedited JSON output",
        ) from None
    if not isinstance(document, dict):
        raise ParseError(source, _line_at(text, start), "expected a JSON object")
    return document, start, end


def _line_at(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def _job_lines(text: str, start: int, end: int, count: int) -> list[int | None]:
    """The line of each job's ``"jobname"`` key, when they can be matched one to one."""
    positions = [m.start() for m in _JOBNAME_KEY.finditer(text, start, end)]
    if len(positions) != count:
        return [None] * count
    lines: list[int | None] = []
    line, previous = _line_at(text, start), start
    for position in positions:
        line += text.count("\n", previous, position)
        lines.append(line)
        previous = position
    return lines


def _version_major(document: Mapping[str, object], where: _Where) -> int | None:
    version = _optional_text(document, "fio version", where)
    match = _VERSION.match(version or "")
    return int(match.group(1)) if match else None


# ---------------------------------------------------------------- typed field access


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _optional_number(obj: Mapping[str, object], key: str, where: _Where) -> float | None:
    """A finite, non-negative JSON number, or None when the key is absent."""
    if key not in obj:
        return None
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise where.error(f"{key!r} is {_show(value)}; expected a number")
    try:
        number = float(value)
    except OverflowError:
        raise where.error(f"{key!r} is too large to be a measurement") from None
    if not math.isfinite(number) or not 0 <= number <= _LARGEST:
        raise where.error(f"{key!r} is {_show(value)}; expected a finite number 0 … 1e30")
    return number


def _number(obj: Mapping[str, object], key: str, where: _Where) -> float:
    number = _optional_number(obj, key, where)
    if number is None:
        raise where.error(f"missing {key!r}; expected a number (fio JSON output)")
    return number


def _optional_text(obj: Mapping[str, object], key: str, where: _Where) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise where.error(f"{key!r} is {_show(value)}; expected text")


def _object(value: object, what: str, where: _Where) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise where.error(f"{what} is {_show(value)}; expected a JSON object")
    return value


def _options(value: object, where: _Where) -> dict[str, str]:
    """fio's option dict (``global options``/``job options``) as str → str."""
    if value is None:
        return {}
    options = _object(value, "the options", where)
    result: dict[str, str] = {}
    for key, item in options.items():
        if isinstance(item, dict | list) or item is None:
            raise where.error(f"option {key!r} is {_show(item)}; expected a value")
        result[key] = item if isinstance(item, str) else json.dumps(item)
    return result


# ---------------------------------------------------------------- job entries


def _read_entry(
    raw: object, index: int, line: int | None, major: int | None, report: _Report
) -> _Entry:
    where = _Where(report.source, line, f"jobs[{index}]")
    job = _object(raw, "the job", where)
    name = job.get("jobname")
    if not isinstance(name, str) or not name:
        raise where.error(f"'jobname' is {_show(name)}; expected the job's name")
    where = replace(where, label=f"fio job {name!r} (jobs[{index}])")
    options = {**report.global_options, **_options(job.get("job options"), where)}
    read, write = _entry_directions(job, major, options, where)
    return _Entry(
        name=name,
        group=int(_optional_number(job, "groupid", where) or 0),
        error=int(_optional_number(job, "error", where) or 0),
        options=options,
        read=read,
        write=write,
        where=where,
    )


def _entry_directions(
    job: Mapping[str, object], major: int | None, options: dict[str, str], where: _Where
) -> tuple[_Direction | None, _Direction | None]:
    """The job's read and write results (``mixed``, from unified_rw_reporting, filed by rw)."""

    def results(key: str) -> _Direction | None:
        if key not in job:
            return None
        return _direction(job[key], major, replace(where, label=f"{where.label} {key}"))

    if "read" in job or "write" in job:
        return results("read"), results("write")
    if "mixed" in job:
        mixed = results("mixed")
        return (None, mixed) if _pattern(options, where) in _WRITE_MODES else (mixed, None)
    raise where.error("no 'read' or 'write' results; expected fio's per-direction objects")


def _direction(raw: object, major: int | None, where: _Where) -> _Direction | None:
    """One direction's results in SI units; None when the job did not run that direction."""
    block = _object(raw, "the direction", where)
    nanoseconds = "clat_ns" in block or "lat_ns" in block
    io_bytes = _number(block, "io_bytes", where)
    if "io_kbytes" not in block and _io_bytes_in_kib(major, nanoseconds):
        io_bytes *= KiB
    runtime_s = _number(block, "runtime", where) / 1000.0
    iops = _number(block, "iops", where)
    if io_bytes == 0 and runtime_s == 0 and iops == 0:
        return None
    bw_bytes = _optional_number(block, "bw_bytes", where)
    bytes_per_s = bw_bytes if bw_bytes is not None else _number(block, "bw", where) * KiB
    ios = _optional_number(block, "total_ios", where)
    latency = _Latency(block, "_ns" if nanoseconds else "", 1e-9 if nanoseconds else 1e-6, where)
    return _Direction(
        bytes_per_s=bytes_per_s,
        iops=iops,
        io_bytes=int(io_bytes),
        runtime_s=runtime_s,
        ios=ios if ios is not None else iops * runtime_s,
        lat_mean_s=latency.mean("lat"),
        p50_s=latency.percentile(50.0),
        p99_s=latency.percentile(99.0),
    )


def _io_bytes_in_kib(major: int | None, nanoseconds: bool) -> bool:
    """fio 2 wrote io_bytes in KiB; fio 3 in bytes (and added io_kbytes)."""
    if major is not None:
        return major < 3
    return not nanoseconds


class _Latency:
    """Reads ``lat``/``clat`` blocks of one direction (``*_ns`` in fio 3, µs in fio 2)."""

    def __init__(self, block: Mapping[str, object], suffix: str, scale: float, where: _Where):
        self.block, self.suffix, self.scale, self.where = block, suffix, scale, where

    def _stats(self, kind: str) -> Mapping[str, object] | None:
        key = kind + self.suffix
        if key not in self.block:
            return None
        stats = _object(self.block[key], repr(key), self.where)
        samples = _optional_number(stats, "N", self.where)
        return None if samples == 0 else stats

    def mean(self, kind: str) -> float | None:
        stats = self._stats(kind)
        mean = None if stats is None else _optional_number(stats, "mean", self.where)
        return None if mean is None else mean * self.scale

    def percentile(self, target: float) -> float | None:
        stats = self._stats("clat")
        if stats is None or "percentile" not in stats:
            return None
        table = _object(stats["percentile"], "'percentile'", self.where)
        for key in table:
            try:
                level = float(key)
            except ValueError:
                raise self.where.error(f"percentile key {_show(key)} is not a number") from None
            if abs(level - target) < 1e-9:
                return _number(table, key, self.where) * self.scale
        return None


# ---------------------------------------------------------------- jobs → measurements


def _group_entries(entries: list[_Entry]) -> list[list[_Entry]]:
    """Entries of the same job (same name and group), in order of first appearance."""
    groups: dict[tuple[str, int], list[_Entry]] = {}
    for entry in entries:
        groups.setdefault((entry.name, entry.group), []).append(entry)
    return list(groups.values())


def _measurement(entries: list[_Entry], report: _Report) -> Measurement:
    first = entries[0]
    options, where = first.options, first.where
    kb_base = _kb_base(options, where)
    rw = _pattern(options, where)
    read = _combine([entry.read for entry in entries])
    write = _combine([entry.write for entry in entries])
    offset, offset_fraction = _offset(options, kb_base, where)
    numjobs = len(entries) if len(entries) > 1 else _count_option(options, "numjobs", 1, where)
    return Measurement(
        source=f"{report.source}#{first.name}",
        name=first.name,
        tool="fio",
        rw=rw,
        bs=_block_size(options, rw, kb_base, where),
        iodepth=_count_option(options, "iodepth", 1, where),
        numjobs=numjobs,
        ioengine=options.get("ioengine") or FIO_DEFAULT_IOENGINE,
        direct=_direct(options, where),
        sync=_sync(options, where),
        fsync=_count_option(options, "fsync", 0, where, minimum=0),
        rwmixread=_rwmixread(options, where),
        offset=offset,
        offset_fraction=offset_fraction,
        size=_size(options, kb_base, where),
        rate_bytes_per_s=float(_rate(options, "rate", rw, kb_base, where)),
        rate_iops=float(_rate(options, "rate_iops", rw, kb_base, where)),
        runtime_s=max((d.runtime_s for d in (read, write) if d is not None), default=0.0),
        error=next((entry.error for entry in entries if entry.error), 0),
        read=read,
        write=write,
        started=report.started,
        tool_version=report.version,
        options=dict(options),
    )


def _combine(parts: list[_Direction | None]) -> DirectionResult | None:
    """Sum the processes of one job (see the module doc for the latency approximations)."""
    present = [part for part in parts if part is not None]
    if not present:
        return None
    if len(present) == 1:
        only = present[0]
        return DirectionResult(
            only.bytes_per_s,
            only.iops,
            only.io_bytes,
            only.runtime_s,
            only.lat_mean_s,
            only.p50_s,
            only.p99_s,
        )
    p99s = [part.p99_s for part in present if part.p99_s is not None]
    return DirectionResult(
        bytes_per_s=sum(part.bytes_per_s for part in present),
        iops=sum(part.iops for part in present),
        io_bytes=sum(part.io_bytes for part in present),
        runtime_s=max(part.runtime_s for part in present),
        lat_mean_s=_weighted_mean([(part.lat_mean_s, part.ios) for part in present]),
        clat_p50_s=_weighted_mean([(part.p50_s, part.ios) for part in present]),
        clat_p99_s=max(p99s) if p99s else None,
    )


def _weighted_mean(pairs: list[tuple[float | None, float]]) -> float | None:
    """Mean of the known values weighted by I/O count (plain mean if no I/O was counted)."""
    known = [(value, weight) for value, weight in pairs if value is not None]
    if not known:
        return None
    total = sum(weight for _, weight in known)
    if total <= 0:
        return sum(value for value, _ in known) / len(known)
    return sum(value * weight for value, weight in known) / total


# ---------------------------------------------------------------- options


def _kb_base(options: Mapping[str, str], where: _Where) -> int:
    text = options.get("kb_base", "1024").strip()
    if text not in ("1000", "1024"):
        raise where.error(f"option kb_base={text!r}; expected 1000 or 1024")
    return int(text)


def _pattern(options: Mapping[str, str], where: _Where) -> str:
    """fio's ``rw``/``readwrite`` (default read) without a ``:N`` suffix; 'rw' → 'readwrite'."""
    raw = options.get("rw", options.get("readwrite", "read"))
    mode = raw.split(":", 1)[0].strip().lower()
    mode = "readwrite" if mode == "rw" else mode
    if mode not in _RW_MODES:
        raise where.error(
            f"option rw={raw!r}; expected a fio I/O pattern "
            "(read, write, randread, randwrite, readwrite, randrw, trim, ...)"
        )
    return mode


def _direction_indexes(rw: str) -> tuple[int, ...]:
    """Which comma-separated parts (read, write, trim) of bs/rate apply to a pattern."""
    if rw in _READ_MODES:
        return (0,)
    if rw in _MIXED_MODES:
        return (0, 1)
    if rw in _TRIM_MODES:
        return (2,)
    if rw in ("trimwrite", "randtrimwrite"):
        return (1, 2)
    return (1,)


def _parts_for(value: str, rw: str) -> list[str]:
    """fio's read,write,trim split: a missing part repeats the last given, '' is the default."""
    parts = [part.strip() for part in value.split(",")]
    return [parts[min(index, len(parts) - 1)] for index in _direction_indexes(rw)]


def _fio_size(key: str, text: str, kb_base: int, where: _Where) -> int:
    try:
        return parse_fio_size(text, kb_base)
    except UnitError as exc:
        raise where.error(f"option {key}={_show(text)}: {exc}") from None


def _block_size(options: Mapping[str, str], rw: str, kb_base: int, where: _Where) -> int:
    """``bs``/``blocksize``; of 'read,write' parts the first that applies (reads for mixed)."""
    raw = options.get("bs", options.get("blocksize", ""))
    part = next((part for part in _parts_for(raw, rw) if part), "")
    size = _fio_size("bs", part, kb_base, where) if part else FIO_DEFAULT_BS
    if size <= 0:
        raise where.error(f"option bs={raw!r}; expected a block size of at least 1 byte")
    return size


def _rate(options: Mapping[str, str], key: str, rw: str, kb_base: int, where: _Where) -> int:
    """``rate`` (bytes/s) or ``rate_iops``; for mixed patterns the larger of the two caps."""
    raw = options.get(key, "")
    caps = [_fio_size(key, part, kb_base, where) for part in _parts_for(raw, rw) if part]
    return max(caps, default=0)


def _count_option(
    options: Mapping[str, str], key: str, default: int, where: _Where, minimum: int = 1
) -> int:
    """A whole-number option (fio accepts k/m suffixes on these too)."""
    text = options.get(key, "").strip()
    if not text:
        return default
    value = _fio_size(key, text, _kb_base(options, where), where)
    if value < minimum:
        raise where.error(f"option {key}={text!r}; expected a whole number ≥ {minimum}")
    return value


def _flag(text: str, key: str, true: frozenset[str], false: frozenset[str], where: _Where) -> bool:
    word = text.strip().lower()
    if word in true:
        return True
    if word in false:
        return False
    words = ", ".join(sorted((true | false) - {""}))
    raise where.error(f"option {key}={text!r}; expected one of {words}")


def _direct(options: Mapping[str, str], where: _Where) -> bool:
    """``direct`` (O_DIRECT), or the inverse of ``buffered`` when only that is given."""
    if "direct" in options:
        return _flag(options["direct"], "direct", _TRUE, _FALSE, where)
    if "buffered" in options:
        return not _flag(options["buffered"], "buffered", _TRUE, _FALSE, where)
    return False


def _sync(options: Mapping[str, str], where: _Where) -> bool:
    """fio's ``sync``: 0/1 and booleans, or ``none``/``sync``/``dsync`` (fio ≥ 3.x)."""
    if "sync" not in options:
        return False
    return _flag(options["sync"], "sync", _SYNC_ON, _SYNC_OFF, where)


def _rwmixread(options: Mapping[str, str], where: _Where) -> int:
    """Percentage of reads in mixed patterns: ``rwmixread``, or 100 − ``rwmixwrite``; 50."""
    for key, complement in (("rwmixread", False), ("rwmixwrite", True)):
        if key in options:
            value = _count_option(options, key, 50, where, minimum=0)
            if value > 100:
                raise where.error(f"option {key}={options[key]!r}; expected 0…100")
            return 100 - value if complement else value
    return 50


def _percentage(text: str, key: str, where: _Where) -> float | None:
    """A fio percentage ('25%') as a fraction 0…1, or None when ``text`` is not one."""
    if "%" not in text:
        return None
    match = _PERCENT.match(text)
    if match is None or float(match.group(1)) > 100:
        raise where.error(f"option {key}={text!r}; expected a size or a percentage 0…100%")
    return float(match.group(1)) / 100.0


def _offset(options: Mapping[str, str], kb_base: int, where: _Where) -> tuple[int, float | None]:
    """``offset`` in bytes, or (0, fraction) when given as a percentage of the file."""
    text = options.get("offset", "").strip()
    if not text:
        return 0, None
    fraction = _percentage(text, "offset", where)
    if fraction is not None:
        return 0, fraction
    return _fio_size("offset", text, kb_base, where), None


def _size(options: Mapping[str, str], kb_base: int, where: _Where) -> int | None:
    """``size`` per job in bytes; None when absent or a percentage of the file."""
    text = options.get("size", "").strip()
    if not text or _percentage(text, "size", where) is not None:
        return None
    return _fio_size("size", text, kb_base, where)
