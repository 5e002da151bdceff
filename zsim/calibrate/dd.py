"""Read dd's transfer summary (bytes, seconds, bytes/s) and turn it into a :class:`Measurement`.

Format sources: GNU coreutils dd.c ``print_xfer_stats`` and FreeBSD bin/dd misc.c
``summary``/``progress``. The LAST summary line counts; ``status=progress`` lines (joined by
``\\r``) and the ``N+M records in/out`` lines come before it.

* GNU coreutils ≥ 8.24: ``1073741824 bytes (1.1 GB, 1.0 GiB) copied, 1.23456 s, 870 MB/s``;
  before 8.24: ``1073741824 bytes (1.1 GB) copied, 1.23456 s, 870 MB/s``; small transfers:
  ``512 bytes copied, 0.000123 s, 4.2 MB/s`` and ``1 byte copied, …``; the seconds may be in
  scientific notation (``4.2824e-05 s``) or use a decimal comma (``1,23 s``) in some locales.
  ``status=progress`` prints the same form once a second.
* BSD/macOS and FreeBSD's final summary: ``1073741824 bytes transferred in 1.234567 secs
  (869785088 bytes/sec)``.
* FreeBSD ≥ 12 ``status=progress``: ``  1073741824 bytes (1074 MB, 1024 MiB) transferred
  1.234s, 870 MB/s`` (digits may carry the locale's thousands separators); accepted as the
  summary when nothing follows it.

The rate is recomputed as bytes / seconds (dd prints it rounded to 2–3 digits). A ``dd: …``
message other than a warning (``dd: error writing '/x': No space left on device``) means the
run failed and raises :class:`ParseError` quoting it.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

from zsim.calibrate.measurement import DirectionResult, Measurement, ParseError
from zsim.errors import ZsimError
from zsim.files import TEXT_LIMIT, InputFileError, read_bytes

_COUNT = r"(?P<bytes>\d{1,3}(?:[,.'\u00a0 ]\d{3})+|\d+)"
_SECONDS = r"(?P<seconds>\d+(?:[.,]\d+)?(?:[eE][+-]?\d+)?)"
_SUMMARIES = (
    # GNU coreutils (all versions), BusyBox ("seconds")
    re.compile(rf"^{_COUNT} bytes?(?: \([^)]*\))? copied, {_SECONDS} s(?:econds?)?, .*$"),
    # BSD / macOS / FreeBSD final summary
    re.compile(rf"^{_COUNT} bytes? transferred in {_SECONDS} secs? \([^)]*\)$"),
    # FreeBSD >= 12 status=progress line
    re.compile(rf"^{_COUNT} bytes?(?: \([^)]*\))? transferred {_SECONDS} ?s, .*$"),
)
_SUMMARY_LIKE = re.compile(r"^\d[\d,.'\u00a0]*(?: \d{3})*\s+bytes?\b")
_RECORDS = re.compile(r"^(\d{1,20})\+(\d{1,20}) records (in|out)$")
_DD_MESSAGE = re.compile(r"^dd: ")
_DD_WARNING = re.compile(r"^dd: warning\b")

SUMMARY_EXPECTED = (
    "a dd summary line ('N bytes (…) copied, S s, R' from GNU dd or "
    "'N bytes transferred in S secs (R bytes/sec)' from BSD dd)"
)


@dataclass(frozen=True)
class DdResult:
    """One dd run: ``bytes`` moved in ``seconds``; ``bytes_per_s`` = bytes / seconds exactly
    (``inf`` if dd timed a non-empty copy at 0 s). ``records_*`` are dd's ``full+partial``
    record counts, None when the output did not include them."""

    bytes: int
    seconds: float
    bytes_per_s: float
    records_in_full: int | None = None
    records_in_partial: int | None = None
    records_out_full: int | None = None
    records_out_partial: int | None = None


def parse_dd_file(path: str | os.PathLike[str]) -> DdResult:
    """Parse a file holding dd's stderr (UTF-8, undecodable bytes replaced)."""
    source = str(path)
    try:
        data = read_bytes(path, limit=TEXT_LIMIT, what="dd output")
    except InputFileError as err:
        raise ParseError(source, None, f"cannot read the dd output: {err.problem}") from None
    return parse_dd_text(data.decode("utf-8", errors="replace"), source)


def parse_dd_text(text: str, source: str) -> DdResult:
    """Parse dd's stderr; ``source`` names the input in errors. See the module doc."""
    segments = _segments(text)
    _reject_errors(segments, source)
    summary = _last_summary(segments, source)
    records_in, records_out = _records(segments, "in"), _records(segments, "out")
    return DdResult(
        bytes=summary.bytes,
        seconds=summary.seconds,
        bytes_per_s=_rate(summary.bytes, summary.seconds),
        records_in_full=records_in[0],
        records_in_partial=records_in[1],
        records_out_full=records_out[0],
        records_out_partial=records_out[1],
    )


def dd_measurement(
    result: DdResult,
    *,
    direction: str,
    bs: int,
    streams: int = 1,
    source: str,
    name: str,
) -> Measurement:
    """A :class:`Measurement` for a dd transfer (``result`` totals all ``streams``).

    ``direction`` is ``"read"`` or ``"write"``, ``bs`` dd's block size in bytes; the rate is
    bytes / seconds and IOPS = rate / bs. dd issues plain read(2)/write(2), fio's ``sync``.
    """
    if direction not in ("read", "write"):
        raise ZsimError(f"dd direction {direction!r} is not 'read' or 'write'")
    if bs <= 0 or streams < 1:
        raise ZsimError(f"dd block size {bs} and streams {streams} must be ≥ 1")
    if not math.isfinite(result.bytes_per_s):
        raise ParseError(
            source, None, f"dd timed {result.bytes} bytes at 0 s; no rate can be computed"
        )
    moved = DirectionResult(
        bytes_per_s=result.bytes_per_s,
        iops=result.bytes_per_s / bs,
        io_bytes=result.bytes,
        runtime_s=result.seconds,
    )
    return Measurement(
        source=source,
        name=name,
        tool="dd",
        rw=direction,
        bs=bs,
        numjobs=streams,
        ioengine="sync",
        runtime_s=result.seconds,
        read=moved if direction == "read" else None,
        write=moved if direction == "write" else None,
    )


# ---------------------------------------------------------------- helpers


@dataclass(frozen=True)
class _Summary:
    bytes: int
    seconds: float


def _segments(text: str) -> list[tuple[int, str]]:
    """(1-based line, text) of every ``\\r``- or ``\\n``-separated piece, stripped, non-empty."""
    pieces: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        pieces.extend((number, piece.strip()) for piece in line.split("\r") if piece.strip())
    return pieces


def _reject_errors(segments: list[tuple[int, str]], source: str) -> None:
    for number, piece in segments:
        if _DD_MESSAGE.match(piece) and not _DD_WARNING.match(piece):
            raise ParseError(source, number, f"dd reported an error: {piece[:200]!r}")


def _last_summary(segments: list[tuple[int, str]], source: str) -> _Summary:
    candidates = [(n, piece) for n, piece in segments if _SUMMARY_LIKE.match(piece)]
    if not candidates:
        last = segments[-1] if segments else None
        where = f"; the last line is {last[1][:120]!r}" if last else "; the output is empty"
        raise ParseError(source, last[0] if last else None, f"expected {SUMMARY_EXPECTED}{where}")
    number, piece = candidates[-1]
    for pattern in _SUMMARIES:
        match = pattern.match(piece)
        if match:
            return _summary(match, number, source)
    raise ParseError(
        source,
        number,
        f"cut off or unknown dd summary {piece[:120]!r}; expected {SUMMARY_EXPECTED}",
    )


def _summary(match: re.Match[str], number: int, source: str) -> _Summary:
    digits = re.sub(r"\D", "", match.group("bytes"))
    seconds = float(match.group("seconds").replace(",", "."))
    if len(digits) > 24 or not math.isfinite(seconds):
        raise ParseError(source, number, "dd summary numbers are out of range")
    return _Summary(bytes=int(digits), seconds=seconds)


def _records(segments: list[tuple[int, str]], which: str) -> tuple[int | None, int | None]:
    """The last 'N+M records in' (or 'out') counts: (full, partial), or (None, None)."""
    found: tuple[int | None, int | None] = (None, None)
    for _, piece in segments:
        match = _RECORDS.match(piece)
        if match and match.group(3) == which:
            found = (int(match.group(1)), int(match.group(2)))
    return found


def _rate(nbytes: int, seconds: float) -> float:
    """bytes / seconds; a copy timed at 0 s has an infinite rate (0 when nothing moved)."""
    if seconds > 0:
        return nbytes / seconds
    return math.inf if nbytes else 0.0
