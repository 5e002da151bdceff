"""The scenario key table, its constants and the one-line error messages built from it.

:data:`KEYS` lists every key of every table with its kind, how a good value is described and an
example; :func:`bad_value` and :func:`unknown_key` turn a bad value or key into the one-line
:class:`ScenarioError` the rest of :mod:`zsim.scenario` raises.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zsim.capacity import PARTITIONINGS
from zsim.errors import ZsimError
from zsim.hardware.catalog import Profile
from zsim.toml_text import toml_string, toml_value
from zsim.units import KiB, MiB, format_binary_size

MIN_RECORDSIZE = 512  # SPA_MINBLOCKSIZE
MAX_RECORDSIZE = 16 * MiB  # SPA_MAXBLOCKSIZE (include/sys/spa.h)

COMPRESSIONS = ("off", "lz4", "zstd", "gzip", "zle")
CHECKSUMS = ("fletcher4", "sha256", "sha512", "blake3", "skein", "edonr", "off")
ON_OFF = ("off", "on")
XATTRS = ("sa", "dir", "on", "off")
SYNCS = ("standard", "always", "disabled")
LOGBIASES = ("latency", "throughput")
PRIMARYCACHES = ("all", "metadata", "none")
DIRECTS = ("standard", "always", "disabled")
REDUNDANT_METADATAS = ("all", "most", "some", "none")
TOOLS = ("fio", "dd", "trace")
RWS = ("read", "write", "randread", "randwrite", "randrw", "readwrite")
RW_ALIASES = {"rw": "readwrite"}  # fio accepts rw=rw for readwrite
IOENGINES = ("libaio", "psync", "sync", "io_uring", "posixaio")
DD_DIRECTIONS = ("write", "read")
DD_SOURCES = ("zero", "urandom", "file")
TRACE_FORMATS = ("disksim-validate",)
WRITTEN_PATTERNS = ("sequential", "random")
RESILVER_METHODS = ("auto", "healing", "sequential")
SPARE_KINDS = ("auto", "new", "distributed")
FAILURE_DISTRIBUTIONS = ("exponential", "weibull")

#: Which workload keys each tool reads (``tool`` itself is read by all).
TOOL_KEYS: dict[str, tuple[str, ...]] = {
    "fio": ("rw", "bs", "rwmixread", "numjobs", "iodepth", "sync", "fsync", "direct", "size",
            "ioengine", "overwrite", "offset"),
    "dd": ("direction", "bs", "bytes", "streams", "source"),
    "trace": ("file", "format"),
}  # fmt: skip
PROFILE_KEYS = ("disk", "log_device", "cache_device", "special_device", "hba")


class ScenarioError(ZsimError):
    """A scenario that cannot be read or cannot exist. The message is always one line."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).splitlines()))


# ---------------------------------------------------------------- the key table


@dataclass(frozen=True)
class _Key:
    """How one scenario key is read: its kind, how a good value is described, an example."""

    kind: str  # size | rate | time | int | float | bool | text | enum | ashift | profile | names
    expected: str  # completes "expected ...", e.g. "a whole number 9…16"
    example: str  # a good value as TOML text, e.g. '"128K"'


def _enum(options: tuple[str, ...], example: str) -> _Key:
    return _Key("enum", f"one of {', '.join(options)}", f'"{example}"')


_PROFILE_WORDS = 'a catalog name, a path to a profile TOML or an inline table ("zsim models" lists)'
KEYS: dict[str, dict[str, _Key]] = {
    "hardware": {
        "disk": _Key("profile", _PROFILE_WORDS, '"seagate-ironwolf-12tb"'),
        "log_device": _Key("profile", _PROFILE_WORDS, '"intel-optane-p4800x-375gb"'),
        "cache_device": _Key("profile", _PROFILE_WORDS, '"samsung-pm9a3-3.84tb"'),
        "special_device": _Key("profile", _PROFILE_WORDS, '"samsung-pm9a3-3.84tb"'),
        "hba": _Key("profile", "an HBA profile: " + _PROFILE_WORDS, '"lsi-9300-8i"'),
        "ram": _Key("size", "a size of at least 1 GiB", '"64GiB"'),
        "cpu_cores": _Key("int", "a whole number ≥ 1", "8"),
        "cpu_ghz": _Key("float", "a clock in GHz above 0", "3.0"),
        "cpu_io_cost_scale": _Key("float", "a multiplier above 0", "1.3"),
        "cpu_byte_cost_scale": _Key("float", "a multiplier above 0", "1.3"),
        "zfs_version": _Key("text", "an OpenZFS release as text", '"2.2"'),
        "expander_bw": _Key("rate", "a rate above 0", '"2.4GB/s"'),
        "memory_bandwidth": _Key("rate", "a rate above 0", '"136GB/s"'),
        "disks_per_link": _Key("int", "a whole number ≥ 1", "4"),
    },
    "pool": {
        "layout": _Key("text", "a layout", '"raidz2 8"'),
        "ashift": _Key("ashift", "a whole number 9…16", "12"),
        "recordsize": _Key("size", "a power of two 512 B … 16 MiB", '"128K"'),
        "compression": _enum(COMPRESSIONS, "lz4"),
        "compress_ratio": _Key("float", "a number from 1 to 1e4 (logical ÷ physical size)", "1.6"),
        "checksum": _enum(CHECKSUMS, "fletcher4"),
        "dedup": _enum(ON_OFF, "off"),
        "atime": _enum(ON_OFF, "off"),
        "xattr": _enum(XATTRS, "sa"),
        "sync": _enum(SYNCS, "standard"),
        "logbias": _enum(LOGBIASES, "latency"),
        "primarycache": _enum(PRIMARYCACHES, "all"),
        "redundant_metadata": _enum(REDUNDANT_METADATAS, "all"),
        "direct": _enum(DIRECTS, "standard"),
        "special_small_blocks": _Key("size", "0 or a power of two 512 B … 16 MiB", '"32K"'),
        "cache_fill": _Key("float", "a fraction 0…1 of the cache devices", "0.5"),
        "fill": _Key("float", "a fraction 0…1 of usable space", "0.5"),
        "allocated": _Key("size", "a size", '"659GiB"'),
        "fill_at_attach": _Key("float", "a fraction 0…1 (below 1) of each expanded vdev", "0.6"),
        "written_between_attaches": _Key("bool", "true or false", "false"),
        "partitioning": _enum(PARTITIONINGS, "linux"),
        "failed": _Key("names", "a list of device names from pool.layout", '["sdc"]'),
    },
    "workload": {
        "tool": _enum(TOOLS, "fio"),
        "rw": _enum(RWS, "randwrite"),
        "bs": _Key("size", "a block size above 0", '"128K"'),
        "rwmixread": _Key("int", "a percentage 0…100", "70"),
        "numjobs": _Key("int", "a whole number ≥ 1", "8"),
        "iodepth": _Key("int", "a whole number ≥ 1", "8"),
        "sync": _Key("bool", "true or false", "false"),
        "fsync": _Key("int", "a whole number ≥ 0 (writes per fsync, 0 = never)", "0"),
        "direct": _Key("bool", "true or false", "false"),
        "size": _Key("size", "a size above 0 (per job)", '"16GiB"'),
        "ioengine": _enum(IOENGINES, "libaio"),
        "overwrite": _Key("bool", "true or false", "true"),
        "offset": _Key("size", "a size, zero or more (raw layouts only)", '"6TB"'),
        "direction": _enum(DD_DIRECTIONS, "write"),
        "bytes": _Key("size", "a size above 0 (per stream)", '"10GiB"'),
        "streams": _Key("int", "a whole number ≥ 1", "1"),
        "source": _enum(DD_SOURCES, "zero"),
        "file": _Key("text", "a path to a trace file", '"traces/run1.txt"'),
        "format": _enum(TRACE_FORMATS, "disksim-validate"),
    },
    "resilver": {
        "disk": _Key("text", "a device name from pool.layout", '"sdc"'),
        "written": _enum(WRITTEN_PATTERNS, "sequential"),
        "block_size": _Key("size", "0 or a power of two 512 B … 16 MiB", '"16K"'),
        "method": _enum(RESILVER_METHODS, "healing"),
        "spare": _enum(SPARE_KINDS, "new"),
        "under_load": _Key("bool", "true or false", "true"),
        "md_speed_limit_min": _Key("rate", "a rate above 0", '"1000KiB/s"'),
        "md_speed_limit_max": _Key("rate", "a rate above 0", '"200000KiB/s"'),
    },
    "durability": {
        "afr": _Key("float", "an annualized failure rate, a fraction 0…1", "0.015"),
        "distribution": _enum(FAILURE_DISTRIBUTIONS, "exponential"),
        "weibull_shape": _Key("float", "a Weibull shape above 0", "1.12"),
        "ure_per_bit": _Key("float", "unrecoverable read errors per bit read, 0…1", "1e-15"),
        "mission": _Key("time", "a duration above 0", '"5y"'),
        "replace_after": _Key("time", "a duration, zero or more", '"24h"'),
        "busy_fraction": _Key("float", "a fraction 0…1 of the time", "0.3"),
        "trials": _Key("int", "a whole number ≥ 100", "20000"),
    },
}
TABLES = tuple(KEYS)
TOP_KEYS = (*TABLES, "name")


def _profile_name(value: Any) -> str:
    if isinstance(value, Profile):
        return toml_string(value.name)
    raise ScenarioError(f"cannot write {value!r} ({type(value).__name__}) as TOML")


def scenario_toml_value(value: Any) -> str:
    """``value`` as TOML text (:func:`zsim.toml_text.toml_value`); a profile as its name."""
    return toml_value(value, _profile_name)


def show_value(value: Any) -> str:
    """A value as it would be written in TOML, for messages (long tables shortened)."""
    if isinstance(value, Profile):
        return toml_string(value.name)
    try:
        text = scenario_toml_value(value)
    except ScenarioError:
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def bad_value(section: str, key: str, value: Any, detail: str | None = None) -> ScenarioError:
    """The error for a bad value: ``pool.ashift = "twelve": expected ..., e.g. 12``."""
    spec = KEYS[section][key]
    what = detail or f"expected {spec.expected}, e.g. {spec.example}"
    shown = show_value(value)
    if spec.kind == "size" and isinstance(value, int) and value >= KiB:
        shown += f" ({format_binary_size(value)})"
    return ScenarioError(f"{section}.{key} = {shown}: {what}")


def did_you_mean(word: str, options: tuple[str, ...] | list[str]) -> str:
    hint = difflib.get_close_matches(word, options, n=1)
    return f"did you mean {hint[0]!r}?" if hint else f"use one of {', '.join(options)}"


def unknown_key(section: str, key: str) -> ScenarioError:
    """Unknown ``section.key``: suggest a near spelling, or the table the key belongs in."""
    homes = [t for t in TABLES if t != section and key in KEYS[t]]
    hint = difflib.get_close_matches(key, list(KEYS[section]), n=1)
    if hint:
        fix = f"did you mean {hint[0]!r}?"
    elif homes:
        fix = f"did you mean '{homes[0]}.{key}'? (it belongs in [{homes[0]}])"
    else:
        fix = f"the keys of [{section}] are {', '.join(KEYS[section])}"
    return ScenarioError(f"unknown key {section}.{key}; {fix}")


# ---------------------------------------------------------------- paths in values


def looks_like_path(text: str) -> bool:
    """The rule of :func:`load_profile`: a ``.toml`` name or anything with a ``/`` is a path."""
    return text.endswith(".toml") or "/" in text


def resolve_path(text: str, base: Path) -> Path:
    """``text`` as a path; relative paths are taken from ``base`` (the scenario's folder)."""
    path = Path(text).expanduser()
    return path if path.is_absolute() else base / path
