"""Writing TOML values: the one place zsim turns Python values into TOML text.

``tomllib`` only reads. Scenarios (``Scenario.to_toml``), calibration plans and fitted
profiles are written with these; every value they write reads back with ``tomllib`` as the
same value (TOML 1.0: basic strings with escapes, ``nan``/``inf`` floats, inline tables).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from zsim.errors import ZsimError


def toml_string(text: str) -> str:
    """A TOML basic string: backslash, quote and control characters escaped."""
    out = []
    for char in text:
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def toml_key(key: str) -> str:
    """A key, bare when TOML allows it, else quoted."""
    bare = key and all(c.isascii() and (c.isalnum() or c in "_-") for c in key)
    return key if bare else toml_string(key)


def toml_value(value: Any, convert: Callable[[Any], str] | None = None) -> str:
    """``value`` as TOML text: booleans, integers, floats (``nan``, ``inf``), strings, inline
    tables and arrays, recursively. ``convert`` writes any other type (it raises when it
    cannot); without it another type is a :class:`ZsimError` (a bug in the caller)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, Mapping):
        items = ", ".join(f"{toml_key(k)} = {toml_value(v, convert)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v, convert) for v in value) + "]"
    if convert is not None:
        return convert(value)
    raise ZsimError(f"cannot write {value!r} ({type(value).__name__}) as TOML")
