"""Parse and print sizes, rates, times and counts. The only place in zsim with unit logic.

Inside zsim every quantity is in SI base units: sizes in bytes (``int``), rates in bytes per
second (``float``), times in seconds (``float``). Human units exist only at the edges.

Parsing rules (the same in the CLI, scenario TOML, catalog profiles and the app):

* a plain number is already in base units: ``4096`` bytes, ``0.0085`` seconds;
* ``kB MB GB TB PB EB`` are decimal (10**3 …), as drive vendors sell them;
* ``KiB MiB GiB TiB PiB EiB`` are binary (2**10 …);
* a bare single letter ``K M G T P E`` (``128K``, ``1M``) is binary, the convention of
  ``zfs set recordsize=128K``, ``zpool`` and fio, so block sizes read as their authors meant;
* rates are a size unit per second (``180MB/s``, ``1.5GiB/s``, ``180MBps``); a lowercase ``b``
  after the prefix means bits (``6Gb/s``, ``12Gbit/s``), as for SAS/SATA/PCIe link rates;
* times take ``ns us µs ms s min h``;
* counts (IOPS) take decimal ``k M G`` (``780k``).

Printing always names the unit system: ``12.0 TB (10.91 TiB)``, never a bare ``T``. The
exception is an exact size spelled as fio, zfs and mdadm take it (``128K``, ``1M``:
:func:`format_binary_multiple`), which reads back as binary by the rules above.
"""

from __future__ import annotations

import math
import re
from typing import Any

from zsim.errors import UnitError

# The unit constants every module uses (``from zsim.units import MiB``); defined nowhere else.
KiB, MiB, GiB, TiB, PiB, EiB = 2**10, 2**20, 2**30, 2**40, 2**50, 2**60
"""Binary multiples of a byte, as ``int``."""
kB, MB, GB, TB, PB, EB = 10**3, 10**6, 10**9, 10**12, 10**15, 10**18
"""Decimal multiples of a byte (drive vendors' units), as ``int``."""

_NUMBER = r"([+-]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)"
_QUANTITY = re.compile(rf"^\s*{_NUMBER}\s*([A-Za-zµ/]*)\s*$")

_DECIMAL_PREFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "p": 10**15, "e": 10**18}
_BINARY_PREFIX = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50, "e": 2**60}

_TIME_UNITS = {
    "": 1.0,
    "s": 1.0,
    "sec": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "µs": 1e-6,
    "ns": 1e-9,
    "min": 60.0,
    "h": 3600.0,
    "d": 86400.0,
    "y": 365.25 * 86400.0,  # a Julian year, as AFRs and mission times use
}
_COUNT_UNITS = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9}

SIZE_EXAMPLES = "'12TB', '10.9TiB', '128K', '4096'"
RATE_EXAMPLES = "'180MB/s', '1.5GiB/s', '6Gb/s'"
TIME_EXAMPLES = "'8.5ms', '80us', '2s', '24h', '5y'"


def _split(text: str, what: str, examples: str) -> tuple[float, str]:
    match = _QUANTITY.match(text)
    if match is None:
        raise UnitError(f"cannot read {text!r} as a {what}; write it like {examples}")
    number = float(match.group(1).replace("_", ""))
    if not math.isfinite(number):
        raise UnitError(f"{what} {text!r} is not a finite number; write it like {examples}")
    if number < 0:
        raise UnitError(f"{what} {text!r} is negative; a {what} must be zero or more")
    return number, match.group(2)


def _size_multiplier(unit: str, text: str, what: str, examples: str) -> tuple[int, bool]:
    """Return (bytes per unit, is_bits) for a size unit such as ``TB``, ``TiB``, ``K``, ``Gb``."""
    if unit in ("", "B"):
        return 1, False
    if unit in ("b", "bit"):
        if what == "size":
            raise UnitError(
                f"size {text!r} is in bits; sizes are in bytes, write 'B' (e.g. {examples})"
            )
        return 1, True
    bits = False
    body = unit
    if what == "size" and unit.islower() and unit.endswith("b") and not unit.endswith("bit"):
        # '12tb', '512mib': typed in lower case, meant as bytes (a size in bits means nothing)
        body = unit[:-1] + "B"
    if body.lower().endswith("bit"):
        bits, body = True, body[:-3]
    elif body.endswith("b") and len(body) >= 2:
        bits, body = True, body[:-1]
    elif body.endswith("B"):
        body = body[:-1]
    if bits and what == "size":
        raise UnitError(
            f"size {text!r} is in bits; sizes are in bytes, write 'B' (e.g. {examples})"
        )
    binary = body.endswith(("i", "I")) and len(body) == 2
    if binary:
        body = body[:-1]
    prefix = body.lower()
    if len(body) != 1 or prefix not in _DECIMAL_PREFIX or prefix == "":
        raise UnitError(f"unknown unit {unit!r} in {text!r}; write it like {examples}")
    # A bare letter with no B (128K, 1M) is binary, as in zfs/zpool/fio.
    bare_letter = unit == body
    if binary or bare_letter:
        return _BINARY_PREFIX[prefix], bits
    return _DECIMAL_PREFIX[prefix], bits


def parse_size(value: str | int | float) -> int:
    """Parse a size to bytes (int). ``'12TB'`` → 12_000_000_000_000, ``'128K'`` → 131072.

    Fractional byte counts (``'10.9TiB'``) are rounded to the nearest byte.
    """
    if isinstance(value, bool):
        raise UnitError(f"size {value!r} is a boolean; write it like {SIZE_EXAMPLES}")
    if isinstance(value, int):
        if value < 0:
            raise UnitError(f"size {value} is negative; a size must be zero or more")
        return value
    if isinstance(value, float):
        value = repr(value)
    if not isinstance(value, str):
        raise UnitError(f"size {value!r} is not text or a number; write it like {SIZE_EXAMPLES}")
    number, unit = _split(value, "size", SIZE_EXAMPLES)
    multiplier, _ = _size_multiplier(unit, value, "size", SIZE_EXAMPLES)
    exact = _exact_product(value, unit, multiplier)
    return exact if exact is not None else round(number * multiplier)


def _exact_product(text: str, unit: str, multiplier: int) -> int | None:
    """Integer-exact number × multiplier for decimal literals, so '1.5TB' is exactly 1.5e12."""
    literal = text.strip()[: len(text.strip()) - len(unit)].strip().replace("_", "")
    if "e" in literal.lower():
        return None
    whole, _, frac = literal.lstrip("+").partition(".")
    numerator = int((whole or "0") + frac) * multiplier
    denominator = 10 ** len(frac)
    quotient, remainder = divmod(numerator, denominator)
    return quotient + (1 if 2 * remainder >= denominator else 0)


def parse_rate(value: str | int | float) -> float:
    """Parse a data rate to bytes/s. ``'180MB/s'`` → 1.8e8, ``'6Gb/s'`` → 7.5e8 (bits ÷ 8)."""
    if isinstance(value, bool):
        raise UnitError(f"rate {value!r} is a boolean; write it like {RATE_EXAMPLES}")
    if isinstance(value, int | float):
        if not math.isfinite(value) or value < 0:
            raise UnitError(f"rate {value!r} must be a finite number, zero or more")
        return float(value)
    if not isinstance(value, str):
        raise UnitError(f"rate {value!r} is not text or a number; write it like {RATE_EXAMPLES}")
    number, unit = _split(value, "rate", RATE_EXAMPLES)
    if unit.endswith(("/s", "ps")):
        unit = unit[:-2]
    elif unit:
        raise UnitError(f"rate {value!r} has no '/s'; write it like {RATE_EXAMPLES}")
    multiplier, bits = _size_multiplier(unit, value, "rate", RATE_EXAMPLES)
    return number * multiplier / (8 if bits else 1)


def parse_time(value: str | int | float) -> float:
    """Parse a duration to seconds. ``'8.5ms'`` → 0.0085."""
    if isinstance(value, bool):
        raise UnitError(f"time {value!r} is a boolean; write it like {TIME_EXAMPLES}")
    if isinstance(value, int | float):
        if not math.isfinite(value) or value < 0:
            raise UnitError(f"time {value!r} must be a finite number of seconds, zero or more")
        return float(value)
    if not isinstance(value, str):
        raise UnitError(f"time {value!r} is not text or a number; write it like {TIME_EXAMPLES}")
    number, unit = _split(value, "time", TIME_EXAMPLES)
    if unit not in _TIME_UNITS:
        raise UnitError(f"unknown time unit {unit!r} in {value!r}; write it like {TIME_EXAMPLES}")
    return number * _TIME_UNITS[unit]


def parse_count(value: str | int) -> int:
    """Parse a count such as IOPS: ``780000`` or ``'780k'`` (decimal prefixes only)."""
    if isinstance(value, bool):
        raise UnitError(f"count {value!r} is a boolean; write a whole number like 780000 or '780k'")
    if isinstance(value, int):
        if value < 0:
            raise UnitError(f"count {value} is negative; it must be zero or more")
        return value
    if not isinstance(value, str):
        raise UnitError(f"count {value!r} is not a whole number; write it like 780000 or '780k'")
    number, unit = _split(value, "count", "780000 or '780k'")
    if unit not in _COUNT_UNITS:
        raise UnitError(f"unknown count unit {unit!r} in {value!r}; use k, M or G")
    return round(number * _COUNT_UNITS[unit])


def parse_fio_size(value: str | int, kb_base: int = 1024) -> int:
    """Parse a size as fio reads it (job option ``bs``, ``size``, ``offset``, ``rate``…) to bytes.

    fio's own rules (HOWTO "Parameter types" and ``kb_base``; ``get_mult_bytes`` in fio's
    parse.c, checked against fio 3.33): suffixes are case-insensitive, a trailing ``b`` is
    optional, a plain number (or ``0x`` hex) is bytes.

    * ``kb_base=1024`` (fio's default, its "compatibility mode"): ``k``/``kb``/``K``/``KB`` are
      1024, ``m``/``mb`` 1024², … ``p`` 1024⁵ — but the IEC spellings ``KiB``/``MiB``… are
      *powers of 1000* (fio inverts them "to avoid breaking old scripts": ``size=100KiB`` makes
      fio move 100000 bytes);
    * ``kb_base=1000``: ``k``/``kB``/``KB`` are 1000 and ``KiB``/``MiB``… are 1024.

    fio reads only whole numbers (``1.5M`` is 1 byte to fio), so a fraction is rejected, as is
    a percentage (``offset=25%``), which fio resolves against the file size: the caller handles
    it. Raises :class:`UnitError` on anything else.
    """
    examples = "'4k', '1M', '64KiB', '0x1000', '4096'"
    if kb_base not in (1000, 1024):
        raise UnitError(f"fio kb_base {kb_base!r} is not 1000 or 1024, the only values fio accepts")
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise UnitError(f"fio size {value!r} is not text or a whole number of bytes")
    if isinstance(value, int):
        if value < 0:
            raise UnitError(f"fio size {value} is negative; a size must be zero or more")
        return value
    if "%" in value:
        raise UnitError(
            f"fio size {value!r} is a percentage of the file; read the percentage separately"
        )
    match = re.match(r"^\s*(0[xX][0-9a-fA-F]+|\d+)\s*([A-Za-z]*)\s*$", value)
    if match is None:
        raise UnitError(
            f"cannot read {value!r} as a fio size (a whole number with an optional k/m/g/t/p "
            f"suffix); write it like {examples}"
        )
    digits, suffix = match.group(1), match.group(2).lower()
    if len(digits) > 24:
        raise UnitError(f"fio size {value[:30]!r}… has {len(digits)} digits, too many for bytes")
    number = int(digits, 16) if digits[:2].lower() == "0x" else int(digits)
    if suffix in ("", "b"):
        return number
    power = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}.get(suffix[0])
    if power is None or suffix[1:] not in ("", "b", "ib"):
        raise UnitError(
            f"unknown fio size suffix {suffix!r} in {value!r}; use k, m, g, t or p "
            f"(optionally with B or iB), like {examples}"
        )
    iec_base = 1024 if kb_base == 1000 else 1000  # fio's compatibility inversion
    base = iec_base if suffix.endswith("ib") else kb_base
    return number * base**power


def parse_ashift(value: str | int) -> int:
    """Parse an ashift (log2 of the sector size), 9…16 as OpenZFS accepts (ASHIFT_MIN/MAX)."""
    try:
        raw: Any = value  # callers pass anything; refuse bools, fractions, inf and nan
        if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
            raise TypeError(raw)
        ashift = int(raw)
    except (TypeError, ValueError, OverflowError):
        raise UnitError(
            f"ashift {value!r} is not a whole number; use 9 (512 B) … 16 (64 KiB)"
        ) from None
    if not 9 <= ashift <= 16:
        raise UnitError(f"ashift {ashift} is out of range; OpenZFS accepts 9 (512 B) … 16 (64 KiB)")
    return ashift


# ---------------------------------------------------------------- printing

_DEC_NAMES = ["B", "kB", "MB", "GB", "TB", "PB", "EB"]
_BIN_NAMES = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]


def _scaled(value: float, base: int, names: list[str]) -> tuple[float, str]:
    index = 0
    while index < len(names) - 1 and abs(value) >= base ** (index + 1):
        index += 1
    return value / base**index, names[index]


def _three_significant(value: float) -> str:
    if value == 0 or abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def format_decimal_size(nbytes: float) -> str:
    """``12.0 TB`` (three significant digits, decimal prefixes)."""
    value, name = _scaled(nbytes, 1000, _DEC_NAMES)
    if name == "B":
        return f"{nbytes:.0f} B"
    return f"{_three_significant(value)} {name}"


def format_binary_size(nbytes: float) -> str:
    """``10.91 TiB`` (two decimals, binary prefixes)."""
    value, name = _scaled(nbytes, 1024, _BIN_NAMES)
    if name == "B":
        return f"{nbytes:.0f} B"
    return f"{value:.2f} {name}"


def format_size(nbytes: float) -> str:
    """Both systems, always labelled: ``12.0 TB (10.91 TiB)``."""
    if abs(nbytes) < 1000:
        return f"{nbytes:.0f} B"
    return f"{format_decimal_size(nbytes)} ({format_binary_size(nbytes)})"


_BINARY_MULTIPLES = (("E", 2**60), ("P", 2**50), ("T", 2**40), ("G", 2**30), ("M", 2**20))


def binary_multiple(nbytes: int, largest: str = "M") -> tuple[int, str]:
    """``nbytes`` as a whole number of the largest binary unit, from ``largest`` (``"K"`` …
    ``"E"``) down to K, that divides it: ``(count, prefix)``, e.g. 1048576 → (1, "M"),
    12288 → (12, "K"); ``(nbytes, "")`` when not even KiB divides it; 0 → (0, ``largest``)."""
    names = [name for name, _ in _BINARY_MULTIPLES] + ["K"]
    units = [*_BINARY_MULTIPLES, ("K", 2**10)][names.index(largest) :]
    for prefix, scale in units:
        if nbytes % scale == 0:
            return nbytes // scale, prefix
    return nbytes, ""


def format_binary_multiple(nbytes: int) -> str:
    """An exact size in fio's, zfs's and mdadm's spelling: ``512K``, ``1M``, ``1024M``
    (at most M), else the plain number of bytes (``1536``, which they read as bytes too)."""
    count, prefix = binary_multiple(nbytes)
    return f"{count}{prefix}"


def format_rate(bytes_per_s: float) -> str:
    """``180 MB/s (171.66 MiB/s)``."""
    if abs(bytes_per_s) < 1000:
        return f"{bytes_per_s:.0f} B/s"
    return f"{format_decimal_size(bytes_per_s)}/s ({format_binary_size(bytes_per_s)}/s)"


def format_time(seconds: float) -> str:
    """``8.50 ms``, ``80.0 µs``, ``3.2 h`` — the largest unit that keeps the number ≥ 1."""
    magnitude = abs(seconds)
    if magnitude == 0:
        return "0 s"
    for limit, scale, name in ((1e-6, 1e9, "ns"), (1e-3, 1e6, "µs"), (1.0, 1e3, "ms")):
        if magnitude < limit:
            return f"{_three_significant(seconds * scale)} {name}"
    if magnitude < 120:
        return f"{_three_significant(seconds)} s"
    if magnitude < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
