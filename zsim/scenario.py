"""Scenarios: the hardware, pool and workload of one simulation, read from TOML (``DESIGN.md`` §4).

A scenario file has three tables and an optional top-level ``name``::

    [hardware]  disk = "seagate-ironwolf-12tb", hba, ram, cpu_cores, zfs_version, ...
    [pool]      layout = "raidz2 8", ashift, recordsize, compression, sync, fill, ...
    [workload]  tool = "fio", rw = "randwrite", bs = "1M", numjobs, iodepth, size, ...

Every key but ``hardware.disk``, ``pool.layout`` and the workload's shape (``rw``/``bs`` for fio,
``direction``/``bs`` for dd, ``file`` for a trace) has a default, documented on the dataclasses
below. Validation is eager: unknown keys, wrong types, values out of range and combinations that
cannot work are :class:`ScenarioError` s of one line that start with where the problem is
(``pool.toml: pool.ashift = "twelve": expected a whole number 9…16, e.g. 12``).

Inside a :class:`Scenario` every quantity is in SI base units (bytes as ``int``, bytes/s as
``float``, seconds as ``float``); units are parsed only by :mod:`zsim.units`.
"""

from __future__ import annotations

import copy
import difflib
import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from zsim.capacity import PARTITIONINGS, CapacityReport, capacity
from zsim.errors import ZsimError
from zsim.hardware.catalog import DEVICE_KINDS, Profile, load_profile, parse_profile
from zsim.layout.grammar import parse_layout
from zsim.layout.tree import BtrfsArray, Layout, MdArray, VdevClass, ZfsLayout, ZpoolOnBlock
from zsim.toml_text import toml_key, toml_string, toml_value
from zsim.units import format_binary_size, parse_ashift, parse_rate, parse_size, parse_time
from zsim.zfs.version import CURRENT, ZfsVersion, check_layout_features, parse_zfs_version

__all__ = [
    "DurabilitySpec",
    "Hardware",
    "Pool",
    "ResilverSpec",
    "Scenario",
    "ScenarioError",
    "Workload",
    "apply_overrides",
    "load_scenario",
    "scenario_from_dict",
]

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
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
_PROFILE_KEYS = ("disk", "log_device", "cache_device", "special_device", "hba")


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
        "ram": _Key("size", "a size above 0", '"64GiB"'),
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
        "compress_ratio": _Key("float", "a number ≥ 1 (logical ÷ physical size)", "1.6"),
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
_TOP_KEYS = (*TABLES, "name")


def _profile_name(value: Any) -> str:
    if isinstance(value, Profile):
        return toml_string(value.name)
    raise ScenarioError(f"cannot write {value!r} ({type(value).__name__}) as TOML")


def _toml_value(value: Any) -> str:
    """``value`` as TOML text (:func:`zsim.toml_text.toml_value`); a profile as its name."""
    return toml_value(value, _profile_name)


def _show(value: Any) -> str:
    """A value as it would be written in TOML, for messages (long tables shortened)."""
    if isinstance(value, Profile):
        return toml_string(value.name)
    try:
        text = _toml_value(value)
    except ScenarioError:
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _bad(section: str, key: str, value: Any, detail: str | None = None) -> ScenarioError:
    """The error for a bad value: ``pool.ashift = "twelve": expected ..., e.g. 12``."""
    spec = KEYS[section][key]
    what = detail or f"expected {spec.expected}, e.g. {spec.example}"
    shown = _show(value)
    if spec.kind == "size" and isinstance(value, int) and value >= KiB:
        shown += f" ({format_binary_size(value)})"
    return ScenarioError(f"{section}.{key} = {shown}: {what}")


def _did_you_mean(word: str, options: tuple[str, ...] | list[str]) -> str:
    hint = difflib.get_close_matches(word, options, n=1)
    return f"did you mean {hint[0]!r}?" if hint else f"use one of {', '.join(options)}"


def _unknown_key(section: str, key: str) -> ScenarioError:
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


# ---------------------------------------------------------------- value checks


def _is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _check_enum(section: str, key: str, value: Any, options: tuple[str, ...]) -> None:
    if value not in options:
        raise _bad(section, key, value)


def _check_whole(section: str, key: str, value: Any, low: int, high: int | None = None) -> None:
    """``value`` must be an ``int`` (not a bool) in ``low``…``high``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(section, key, value)
    if value < low or (high is not None and value > high):
        raise _bad(section, key, value)


def _check_real(section: str, key: str, value: Any, low: float, high: float = math.inf) -> None:
    """``value`` must be a finite number in ``low``…``high`` (inclusive)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _bad(section, key, value)
    if not math.isfinite(value) or not low <= value <= high:
        raise _bad(section, key, value)


def _check_size(section: str, key: str, value: Any, minimum: int = 0) -> None:
    """``value`` must be a size in bytes (``int``) of at least ``minimum``."""
    _check_whole(section, key, value, minimum)


def _check_block(section: str, key: str, value: Any, zero_ok: bool = False) -> None:
    """A ZFS block size: a power of two 512 B … 16 MiB (``SPA_MINBLOCKSIZE``…``MAXBLOCKSIZE``)."""
    _check_size(section, key, value)
    if zero_ok and value == 0:
        return
    if not (_is_power_of_two(value) and MIN_RECORDSIZE <= value <= MAX_RECORDSIZE):
        raise _bad(section, key, value)


def _a(kind: str) -> str:
    """``"an HDD"``, ``"an SSD"``, ``"an NVMe"``, ``"an HBA"``: every kind reads with "an"."""
    return "an NVMe" if kind == "nvme" else f"an {kind.upper()}"


def _check_profile(key: str, profile: Any, kinds: tuple[str, ...]) -> None:
    if not isinstance(profile, Profile):
        raise _bad("hardware", key, profile)
    if profile.kind in kinds:
        return
    if kinds == ("hba",):
        detail = f'is {_a(profile.kind)} profile, not an HBA; use an HBA such as "lsi-9300-8i"'
    else:
        detail = (
            f"is {_a(profile.kind)} profile, not a storage device; give a disk such as "
            f'"seagate-ironwolf-12tb" (the HBA goes in hardware.hba)'
        )
    raise ScenarioError(f"hardware.{key} = {_show(profile)} {detail}")


# ---------------------------------------------------------------- the dataclasses


@dataclass(frozen=True)
class Hardware:
    """The machine: devices, HBA, memory, CPU and the OpenZFS release.

    Attributes (unit; default):
        disk: profile of the pool's data disks (required; TOML: a catalog name, a path to a
            profile TOML, relative to the scenario file, or an inline table).
        disk_spec: what ``disk`` was given as: the catalog name, the resolved path, or
            ``"inline"`` (required).
        log_device: profile for ``log`` vdevs (default ``None``: the disk profile is used).
        cache_device: profile for ``cache`` vdevs (default ``None``: the disk profile).
        special_device: profile for ``special`` and ``dedup`` vdevs (default ``None``: the disk).
        hba: host bus adapter profile, kind ``"hba"`` (default ``None``: no HBA limit modelled).
        ram: memory, bytes (default 64 GiB; TOML ``"64GiB"``).
        cpu_cores: CPU cores (default 8).
        cpu_ghz: nominal clock, GHz (default 3.0).
        cpu_io_cost_scale: multiplier, above 0, of every per-call, per-record and per-I/O CPU
            cost (:func:`zsim.des.costs.cpu_costs` ``io_scale``), calibrated for a host whose
            kernel or CPU differs from the model's reference (default 1.0: the sourced costs).
        cpu_byte_cost_scale: multiplier, above 0, of every per-byte CPU cost (copies,
            checksums, parity, compression; ``cpu_costs`` ``byte_scale``), calibrated likewise,
            e.g. for slower memory (default 1.0).
        zfs_version: OpenZFS release as given, e.g. ``"2.2"`` or ``"master"`` (default
            :data:`zsim.zfs.version.CURRENT`); checked with :func:`parse_zfs_version`.
        expander_bw: bytes/s shared by all disks behind one expander/backplane (default
            ``None``: no shared limit; TOML ``"2.4GB/s"``).
        disks_per_link: devices sharing one HBA lane (default 1, direct attach; 4 for a SATA
            port multiplier or an expander fan-out).
        memory_bandwidth: sustained host memory bandwidth shared by the cores' data passes
            and the devices' DMA, bytes/s (default ``None``:
            :data:`zsim.des.memory.DEFAULT_MEMORY_BANDWIDTH`, 80 GB/s; TOML ``"136GB/s"``).
        log_device_spec, cache_device_spec, special_device_spec, hba_spec: what those
            profiles were given as, like ``disk_spec`` (default ``None``: not given).
    """

    disk: Profile
    disk_spec: str
    log_device: Profile | None = None
    cache_device: Profile | None = None
    special_device: Profile | None = None
    hba: Profile | None = None
    ram: int = 64 * GiB
    cpu_cores: int = 8
    cpu_ghz: float = 3.0
    zfs_version: str = CURRENT
    expander_bw: float | None = None
    disks_per_link: int = 1
    memory_bandwidth: float | None = None
    log_device_spec: str | None = None
    cache_device_spec: str | None = None
    special_device_spec: str | None = None
    hba_spec: str | None = None
    cpu_io_cost_scale: float = 1.0
    cpu_byte_cost_scale: float = 1.0

    def __post_init__(self) -> None:
        _check_profile("disk", self.disk, DEVICE_KINDS)
        for key in ("log_device", "cache_device", "special_device"):
            if getattr(self, key) is not None:
                _check_profile(key, getattr(self, key), DEVICE_KINDS)
        if self.hba is not None:
            _check_profile("hba", self.hba, ("hba",))
        _check_size("hardware", "ram", self.ram, 1)
        _check_whole("hardware", "cpu_cores", self.cpu_cores, 1)
        _check_real("hardware", "cpu_ghz", self.cpu_ghz, math.ulp(0))
        _check_real("hardware", "cpu_io_cost_scale", self.cpu_io_cost_scale, math.ulp(0))
        _check_real("hardware", "cpu_byte_cost_scale", self.cpu_byte_cost_scale, math.ulp(0))
        if not isinstance(self.zfs_version, str):
            raise _bad("hardware", "zfs_version", self.zfs_version)
        try:
            parse_zfs_version(self.zfs_version)
        except ZsimError as err:
            raise ScenarioError(
                f"hardware.zfs_version = {_show(self.zfs_version)}: {err}"
            ) from None
        if self.expander_bw is not None:
            _check_real("hardware", "expander_bw", self.expander_bw, math.ulp(0))
        _check_whole("hardware", "disks_per_link", self.disks_per_link, 1)
        if self.memory_bandwidth is not None:
            _check_real("hardware", "memory_bandwidth", self.memory_bandwidth, math.ulp(0))

    @property
    def zfs(self) -> ZfsVersion:
        """The OpenZFS release as a comparable :class:`ZfsVersion`."""
        return parse_zfs_version(self.zfs_version)

    def device_for(self, vclass: VdevClass) -> Profile:
        """The profile of the devices in a vdev of class ``vclass``.

        ``log`` → ``log_device``, ``cache`` → ``cache_device``, ``special``/``dedup`` →
        ``special_device``; each falls back to ``disk`` when not given (as do ``normal`` and
        ``spare``).
        """
        chosen = {
            "log": self.log_device,
            "cache": self.cache_device,
            "special": self.special_device,
            "dedup": self.special_device,
        }.get(vclass)
        return chosen or self.disk


@dataclass(frozen=True)
class Pool:
    """The pool: its layout and the ZFS properties that matter for speed and space.

    Attributes (unit; default):
        layout: layout text, ``DESIGN.md`` §3 (required), e.g. ``"raidz2 8"``; checked with
            :func:`parse_layout`, kept as written.
        ashift: log2 of the allocation sector, 9…16 (default 12).
        recordsize: bytes, a power of two 512 B … 16 MiB (default 128 KiB).
        compression: off | lz4 | zstd | gzip | zle (default ``"off"``).
        compress_ratio: assumed logical ÷ physical size, ≥ 1 (default 1.0; must be 1.0
            when compression is off).
        checksum: fletcher4 | sha256 | sha512 | blake3 | skein | edonr | off
            (default ``"fletcher4"``).
        dedup: off | on (default ``"off"``).
        atime: on | off (default ``"on"``).
        xattr: sa | dir | on | off (default ``"sa"``).
        sync: standard | always | disabled (default ``"standard"``).
        logbias: latency | throughput (default ``"latency"``).
        primarycache: all | metadata | none (default ``"all"``).
        redundant_metadata: all | most | some | none, extra copies of metadata (default
            ``"all"``: indirect blocks are written twice; ``most`` and below write level-1
            indirect blocks once).
        direct: standard | always | disabled, the ``direct`` property of OpenZFS ≥ 2.3
            (default ``"standard"``).
        special_small_blocks: bytes; blocks up to this size go to special vdevs; 0 or a
            power of two 512 B … 16 MiB (default 0).
        cache_fill: fraction 0…1 of the ``cache`` (L2ARC) devices holding the workload's
            records when the run starts (default 1.0: warm, the steady state reached after
            the cache's size ÷ ``l2arc_write_max`` (8 MiB/s) of feeding).
        fill: fraction 0…1 of usable space allocated (default 0.5); ignored when
            ``allocated`` is given.
        allocated: bytes allocated, instead of ``fill`` (default ``None``); giving both is
            an error.
        partitioning: linux | none, see :mod:`zsim.capacity` (default ``"linux"``).
        failed: leaf devices that are missing (FAULTED or removed), by the names the layout
            gives them (``"raidz2 8"`` names sda…sdh), as a tuple (default ``()``: healthy;
            TOML ``failed = ["sdc"]``, ``--set pool.failed=sdc,sdd``). The pool runs
            degraded: reads go to another mirror child or rebuild from parity (raidz/dRAID
            read all surviving columns of a block whose data is on a missing disk), writes
            skip the missing disk. Each data vdev may lose at most what it survives (mirror
            n−1, raidz/dRAID parity); a single-disk vdev none. ZFS layouts (data vdevs
            only), md arrays (RAID1 n−1, RAID10 1, RAID5 1, RAID6 2) and btrfs RAID1/RAID10
            (1 device, a filesystem mounted ``-o degraded``).
    """

    layout: str
    ashift: int = 12
    recordsize: int = 128 * KiB
    compression: str = "off"
    compress_ratio: float = 1.0
    checksum: str = "fletcher4"
    dedup: str = "off"
    atime: str = "on"
    xattr: str = "sa"
    sync: str = "standard"
    logbias: str = "latency"
    primarycache: str = "all"
    redundant_metadata: str = "all"
    direct: str = "standard"
    special_small_blocks: int = 0
    cache_fill: float = 1.0
    fill: float = 0.5
    allocated: int | None = None
    partitioning: str = "linux"
    failed: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _layout_of(self.layout)
        if isinstance(self.ashift, bool) or not isinstance(self.ashift, int):
            raise _bad("pool", "ashift", self.ashift)
        try:
            parse_ashift(self.ashift)
        except ZsimError:
            raise _bad("pool", "ashift", self.ashift) from None
        _check_block("pool", "recordsize", self.recordsize)
        for key, options in _POOL_ENUMS.items():
            _check_enum("pool", key, getattr(self, key), options)
        _check_compression(self.compression, self.compress_ratio)
        _check_block("pool", "special_small_blocks", self.special_small_blocks, zero_ok=True)
        _check_real("pool", "cache_fill", self.cache_fill, 0.0, 1.0)
        _check_real("pool", "fill", self.fill, 0.0, 1.0)
        if self.allocated is not None:
            _check_size("pool", "allocated", self.allocated)
            if self.fill != Pool.fill:
                raise _both_fill_and_allocated()
        _check_failed(self)


_POOL_ENUMS = {
    "compression": COMPRESSIONS,
    "checksum": CHECKSUMS,
    "dedup": ON_OFF,
    "atime": ON_OFF,
    "xattr": XATTRS,
    "sync": SYNCS,
    "logbias": LOGBIASES,
    "primarycache": PRIMARYCACHES,
    "redundant_metadata": REDUNDANT_METADATAS,
    "direct": DIRECTS,
    "partitioning": PARTITIONINGS,
}


def _layout_of(text: Any) -> Layout:
    """Parse ``pool.layout``; a :class:`LayoutError` becomes a :class:`ScenarioError`."""
    if not isinstance(text, str):
        raise _bad("pool", "layout", text)
    try:
        return parse_layout(text)
    except ZsimError as err:
        raise ScenarioError(f"pool.layout = {_show(text)}: {err}") from None


def _check_compression(compression: str, ratio: Any) -> None:
    """``compress_ratio`` ≥ 1, and exactly 1 with compression off (nothing is compressed)."""
    _check_real("pool", "compress_ratio", ratio, 1.0)
    if compression == "off" and ratio != 1.0:
        raise ScenarioError(
            f'pool.compress_ratio = {_show(ratio)} but pool.compression = "off"; set '
            f'compression = "lz4" (or zstd, gzip, zle) or remove compress_ratio'
        )


def _check_failed(pool: Pool) -> None:
    """``pool.failed``: distinct names of data-vdev leaves, no more per vdev than it survives."""
    names: Any = pool.failed  # a list when built in code
    if isinstance(names, list):
        object.__setattr__(pool, "failed", names := tuple(names))
    if not isinstance(names, tuple) or not all(isinstance(n, str) for n in names):
        raise _bad("pool", "failed", names)
    if not names:
        return
    where = f"pool.failed = {_show(list(names))}"
    layout = _layout_of(pool.layout)
    md = layout.block if isinstance(layout, ZpoolOnBlock) else layout
    if isinstance(md, MdArray | BtrfsArray):
        _check_failed_block(where, md, names, pool.layout)
        return
    if not isinstance(layout, ZfsLayout):
        raise ScenarioError(
            f"{where}: degraded operation is modelled for ZFS pools, md arrays and btrfs "
            f"RAID1/RAID10, and {_show(pool.layout)} is a {layout.system} layout; remove "
            f"pool.failed"
        )
    vdev_of = {d: v for v in layout.vdevs for d in v.devices}
    for name in names:
        if names.count(name) > 1:
            raise ScenarioError(f"{where}: {name!r} is listed twice; list each device once")
        if name not in vdev_of:
            hint = difflib.get_close_matches(name, list(vdev_of), n=1)
            fix = f"did you mean {hint[0]!r}?" if hint else "use a name the layout gives"
            raise ScenarioError(
                f"{where}: no device {name!r} in pool.layout {_show(pool.layout)} "
                f"({layout.devices[0]} … {layout.devices[-1]}); {fix}"
            )
        vdev = vdev_of[name]
        if vdev.vclass != "normal":
            raise ScenarioError(
                f"{where}: {name!r} is a {vdev.vclass} device; failing {vdev.vclass} devices "
                f"is not modelled yet, fail devices of the data vdevs only"
            )
    for vdev in layout.data_vdevs:
        lost = [d for d in vdev.devices if d in names]
        if len(lost) <= vdev.fault_tolerance:
            continue
        span = f"{vdev.devices[0]} … {vdev.devices[-1]}" if vdev.width > 1 else vdev.devices[0]
        if vdev.kind == "disk":
            raise ScenarioError(
                f"{where}: {lost[0]!r} is a single-disk vdev with no redundancy; losing it "
                f"FAULTS the pool (data lost); fail devices of mirror, raidz or dRAID vdevs only"
            )
        raise ScenarioError(
            f"{where}: {len(lost)} failed devices in the {vdev.type_word()} vdev "
            f"({span}), which survives {vdev.fault_tolerance}; the pool would be FAULTED "
            f"(data lost): fail at most {vdev.fault_tolerance} there"
        )


def _check_failed_block(
    where: str, array: MdArray | BtrfsArray, names: tuple[str, ...], text: str
) -> None:
    """Missing members of an md array or devices of a btrfs filesystem: known names, at
    most what the array survives (btrfs RAID1/RAID10 keep 2 copies of every chunk: 1)."""
    for name in names:
        if names.count(name) > 1:
            raise ScenarioError(f"{where}: {name!r} is listed twice; list each device once")
        if name not in array.devices:
            hint = difflib.get_close_matches(name, list(array.devices), n=1)
            fix = f"did you mean {hint[0]!r}?" if hint else "use a name the layout gives"
            raise ScenarioError(
                f"{where}: no device {name!r} in pool.layout {_show(text)} "
                f"({array.devices[0]} … {array.devices[-1]}); {fix}"
            )
    most = array.fault_tolerance
    if isinstance(array, BtrfsArray) and len(names) > most:
        raise ScenarioError(
            f"{where}: btrfs {array.profile.upper()} of {array.width} keeps 2 copies of every "
            f"chunk and survives {most} missing device, not {len(names)}; some chunks would "
            f"lose both copies and the filesystem would not mount (data lost): fail at most "
            f"{most}"
        )
    if isinstance(array, MdArray) and len(names) > most:
        raise ScenarioError(
            f"{where}: md RAID{array.level} of {array.width} survives {most} missing "
            f"member(s), not {len(names)}; the array would FAIL (data lost): fail at most "
            f"{most}"
        )


def _both_fill_and_allocated() -> ScenarioError:
    return ScenarioError(
        "pool.fill and pool.allocated are both given; they are alternatives, keep one "
        '(fill = 0.5 is a fraction of usable space, allocated = "659GiB" an amount)'
    )


@dataclass(frozen=True)
class Workload:
    """What the clients do: a fio job, a dd run or a trace replay.

    Attributes (unit; default):
        tool: fio | dd | trace (default ``"fio"``).

        fio (``rw`` and ``bs`` are required: a workload's shape has no default):
        rw: read | write | randread | randwrite | randrw | readwrite (``"rw"`` is read as
            ``"readwrite"``, as fio does) (default ``None``).
        bs: block size, bytes, above 0 (default ``None``; dd needs it too).
        rwmixread: percent of reads for randrw/readwrite, 0…100 (default 50, fio's).
        numjobs: jobs (processes), ≥ 1 (default 1).
        iodepth: I/Os in flight per job, ≥ 1 (default 1).
        sync: O_SYNC writes, fio ``--sync=1`` (default ``False``).
        fsync: fsync after every N writes, 0 = never (default 0).
        direct: O_DIRECT (default ``False``).
        size: bytes per job, one file per job, above 0 (default 4 GiB).
        ioengine: libaio | psync | sync | io_uring | posixaio (default ``"libaio"``).
        overwrite: fio's ``overwrite``: the job's files exist, fully written, before the run
            (default ``False``, fio's: a job that only writes starts on sparse files, which
            fio creates without writing data, so the first write to a record reads nothing;
            a job that reads lays its files out first whatever this says). Set it for files
            left by an earlier run, as in "rewrite" benchmarks.
        offset: where each job's region starts on its device, bytes, as fio's ``offset``
            (default 0). Raw layouts only (``raw N``: fio on bare devices, as calibration
            runs measure zones); a file in a pool or a file system has no LBA offset.

        dd (``direction`` and ``bs`` are required):
        direction: write | read (default ``None``).
        bytes: bytes per stream, above 0 (default 10 GiB).
        streams: concurrent dd processes, ≥ 1 (default 1).
        source: zero | urandom | file, what a write reads from; /dev/urandom costs CPU per
            byte (default ``"zero"``).

        trace replay (``file`` is required):
        file: path of the trace, relative to the scenario file in TOML (default ``None``).
        format: disksim-validate, queue depth 1 with a think time per line
            (default ``"disksim-validate"``).

    Keys of another tool must keep their defaults (``numjobs`` means nothing to dd).
    """

    tool: str = "fio"
    rw: str | None = None
    bs: int | None = None
    rwmixread: int = 50
    numjobs: int = 1
    iodepth: int = 1
    sync: bool = False
    fsync: int = 0
    direct: bool = False
    size: int = 4 * GiB
    ioengine: str = "libaio"
    overwrite: bool = False
    offset: int = 0
    direction: str | None = None
    bytes: int = 10 * GiB
    streams: int = 1
    source: str = "zero"
    file: str | None = None
    format: str = "disksim-validate"

    def __post_init__(self) -> None:
        _check_enum("workload", "tool", self.tool, TOOLS)
        if self.rw in RW_ALIASES:
            object.__setattr__(self, "rw", RW_ALIASES[self.rw])
        _check_foreign_defaults(self)
        _check_required(self)
        {"fio": _check_fio, "dd": _check_dd, "trace": _check_trace}[self.tool](self)


_REQUIRED = {
    "fio": ({"rw": 'rw = "randwrite"', "bs": 'bs = "1M"'}, "a fio job's shape has no default"),
    "dd": (
        {"direction": 'direction = "write"', "bs": 'bs = "1M"'},
        "a dd run's shape has no default",
    ),
    "trace": ({"file": 'file = "traces/run1.txt"'}, "trace replay needs the trace to replay"),
}


def _check_required(work: Workload) -> None:
    examples, why = _REQUIRED[work.tool]
    missing = [k for k in examples if getattr(work, k) is None]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise ScenarioError(
            f"{' and '.join(f'workload.{k}' for k in missing)} {verb} missing for tool = "
            f'"{work.tool}"; {why}: add e.g. {", ".join(examples[k] for k in missing)} to '
            f"[workload]"
        )


def _check_foreign_defaults(work: Workload) -> None:
    """Keys of another tool must keep their defaults; they would be silently ignored."""
    own = {"tool", *TOOL_KEYS[work.tool]}
    for f in fields(Workload):
        if f.name not in own and getattr(work, f.name) != f.default:
            raise _foreign_key(f.name, work.tool, getattr(work, f.name))


def _foreign_key(key: str, tool: str, value: Any) -> ScenarioError:
    owners = [t for t, keys in TOOL_KEYS.items() if key in keys]
    return ScenarioError(
        f'workload.{key} = {_show(value)} is a key of tool = "{owners[0]}" but tool = '
        f'"{tool}" ignores it; remove it or change workload.tool'
    )


def _check_fio(work: Workload) -> None:
    _check_enum("workload", "rw", work.rw, RWS)
    _check_size("workload", "bs", work.bs, 1)
    _check_whole("workload", "rwmixread", work.rwmixread, 0, 100)
    _check_whole("workload", "numjobs", work.numjobs, 1)
    _check_whole("workload", "iodepth", work.iodepth, 1)
    for key in ("sync", "direct", "overwrite"):
        if not isinstance(getattr(work, key), bool):
            raise _bad("workload", key, getattr(work, key))
    _check_whole("workload", "fsync", work.fsync, 0)
    _check_size("workload", "size", work.size, 1)
    _check_enum("workload", "ioengine", work.ioengine, IOENGINES)
    _check_size("workload", "offset", work.offset, 0)


def _check_dd(work: Workload) -> None:
    _check_enum("workload", "direction", work.direction, DD_DIRECTIONS)
    _check_size("workload", "bs", work.bs, 1)
    _check_size("workload", "bytes", work.bytes, 1)
    _check_whole("workload", "streams", work.streams, 1)
    _check_enum("workload", "source", work.source, DD_SOURCES)


def _check_trace(work: Workload) -> None:
    if not isinstance(work.file, str) or not work.file:
        raise _bad("workload", "file", work.file)
    _check_enum("workload", "format", work.format, TRACE_FORMATS)


# Features a pool property or layout needs, and the first OpenZFS release that has it.
# Sources: OpenZFS release notes — 0.6.5 large_blocks (records > 128 KiB); 0.7.0 sha512,
# skein and edonr checksums; 0.8.0 allocation classes (special/dedup vdevs,
# special_small_blocks); 2.0.0 zstd; 2.1.0 dRAID; 2.2.0 blake3; 2.3.0 Direct I/O (``direct``).
_FEATURES: tuple[tuple[str, Callable[[Pool, Layout], bool], tuple[int, ...], str], ...] = (
    ("pool.recordsize above 128 KiB (large_blocks)", lambda p, _: p.recordsize > 128 * KiB,
     (0, 6, 5), "recordsize = \"128K\""),
    ("pool.checksum = sha512/skein/edonr", lambda p, _: p.checksum in ("sha512", "skein", "edonr"),
     (0, 7), 'checksum = "sha256"'),
    ("pool.special_small_blocks", lambda p, _: p.special_small_blocks > 0, (0, 8),
     "special_small_blocks = 0"),
    ('pool.compression = "zstd"', lambda p, _: p.compression == "zstd", (2, 0),
     'compression = "lz4"'),
    ('pool.checksum = "blake3"', lambda p, _: p.checksum == "blake3", (2, 2),
     'checksum = "sha256"'),
    ("pool.direct (Direct I/O)", lambda p, _: p.direct != "standard", (2, 3),
     'direct = "standard"'),
)  # fmt: skip


def _check_features(hardware: Hardware, pool: Pool) -> None:
    """Pool settings that the chosen OpenZFS release does not have are errors."""
    version, layout = hardware.zfs, _layout_of(pool.layout)
    if isinstance(layout, ZfsLayout):
        try:
            check_layout_features(layout, version)  # the layout rules live in zsim.zfs.version
        except ZsimError as err:
            raise ScenarioError(f"pool.layout: {err}") from None
    for what, used, release, instead in _FEATURES:
        if used(pool, layout) and not version.at_least(*release):
            needed = ".".join(str(n) for n in release)
            raise ScenarioError(
                f"{what} needs OpenZFS {needed} or later, but hardware.zfs_version = "
                f"{_show(hardware.zfs_version)}; set zfs_version ≥ {needed} or use {instead}"
            )


@dataclass(frozen=True)
class ResilverSpec:
    """The optional ``[resilver]`` table: which disk fails and how the data was written.

    Attributes (unit; default):
        disk: the leaf that fails, a device name from ``pool.layout`` (default ``""``: the
            first leaf of the first data vdev, or the md array's first member).
        written: sequential | random — how the data was written: large files streamed
            (blocks contiguous on disk) or small random overwrites (blocks scattered, the
            scan's extents short) (default ``"sequential"``).
        block_size: bytes; the size of the blocks the data is in, when not
            ``pool.recordsize`` (a zvol's volblocksize, e.g. 16 KiB); 0 = recordsize
            (default 0).
        method: auto | healing | sequential — ``healing`` walks the block tree and verifies
            checksums (the only way on raidz); ``sequential`` is ``zpool replace -s`` on
            mirrors and the rebuild to a dRAID distributed spare, followed by a scrub;
            ``auto`` picks sequential for a dRAID distributed spare, else healing.
        spare: auto | new | distributed — the replacement: a new disk in the failed disk's
            slot, or a dRAID distributed spare (``auto``: distributed when the dRAID vdev
            has spares).
        under_load: run the scenario's workload during the resilver too, and report both
            slowed down (default false).
        md_speed_limit_min / md_speed_limit_max: bytes/s, md's
            ``/proc/sys/dev/raid/speed_limit_min|max`` (defaults 1000 KiB/s and
            200000 KiB/s, ``md.4``).
    """

    disk: str = ""
    written: str = "sequential"
    block_size: int = 0
    method: str = "auto"
    spare: str = "auto"
    under_load: bool = False
    md_speed_limit_min: float = 1000 * KiB
    md_speed_limit_max: float = 200000 * KiB

    def __post_init__(self) -> None:
        if not isinstance(self.disk, str):
            raise _bad("resilver", "disk", self.disk)
        _check_enum("resilver", "written", self.written, WRITTEN_PATTERNS)
        _check_enum("resilver", "method", self.method, RESILVER_METHODS)
        _check_enum("resilver", "spare", self.spare, SPARE_KINDS)
        _check_block("resilver", "block_size", self.block_size, zero_ok=True)
        if not isinstance(self.under_load, bool):
            raise _bad("resilver", "under_load", self.under_load)
        for key in ("md_speed_limit_min", "md_speed_limit_max"):
            _check_real("resilver", key, getattr(self, key), 1e-9)
        if self.md_speed_limit_min > self.md_speed_limit_max:
            raise ScenarioError(
                f"resilver.md_speed_limit_min ({self.md_speed_limit_min:.0f} B/s) is above "
                f"md_speed_limit_max ({self.md_speed_limit_max:.0f} B/s); md needs min ≤ max"
            )


YEAR = 365.25 * 86400.0


@dataclass(frozen=True)
class DurabilitySpec:
    """The optional ``[durability]`` table: how disks fail, for the loss probability.

    Attributes (unit; default):
        afr: annualized failure rate, a fraction (default ``None``: the disk profile's
            ``afr``, else 1 − exp(−8766 h / ``mtbf_hours``) from its datasheet MTBF; field
            rates are usually higher — Schroeder & Gibson, FAST 2007).
        distribution: exponential | weibull time to failure (default ``"exponential"``).
        weibull_shape: the Weibull shape β (default 1.12, Elerath & Pecht's field fit).
        ure_per_bit: unrecoverable read errors per bit read (default 1e-15, the NAS and
            enterprise datasheet class; desktop drives state 1e-14).
        mission: seconds of service to assess (default 5 years of 365.25 days).
        replace_after: seconds from a failure to the start of its rebuild — finding the
            failure and putting a disk in (default 24 h; a dRAID distributed spare and a hot
            spare start at once: set 0).
        busy_fraction: share of the time the pool runs its workload; that share of
            rebuilds runs under load (default 0: rebuilds run on an idle pool).
        trials: Monte Carlo trials (default 20000).
    """

    afr: float | None = None
    distribution: str = "exponential"
    weibull_shape: float = 1.12
    ure_per_bit: float = 1e-15
    mission: float = 5 * YEAR
    replace_after: float = 24 * 3600.0
    busy_fraction: float = 0.0
    trials: int = 20000

    def __post_init__(self) -> None:
        if self.afr is not None:
            _check_real("durability", "afr", self.afr, 1e-12, 1.0 - 1e-12)
        _check_enum("durability", "distribution", self.distribution, FAILURE_DISTRIBUTIONS)
        _check_real("durability", "weibull_shape", self.weibull_shape, 1e-6, 100.0)
        _check_real("durability", "ure_per_bit", self.ure_per_bit, 0.0, 1.0)
        _check_real("durability", "mission", self.mission, 1.0)
        _check_real("durability", "replace_after", self.replace_after, 0.0)
        _check_real("durability", "busy_fraction", self.busy_fraction, 0.0, 1.0)
        _check_whole("durability", "trials", self.trials, 100, 10_000_000)


@dataclass(frozen=True)
class Scenario:
    """One simulation's input: hardware, pool and workload, plus an optional ``name``.

    Build it with :func:`load_scenario` or :func:`scenario_from_dict`, or in code.
    """

    hardware: Hardware
    pool: Pool
    workload: Workload
    name: str = ""
    resilver: ResilverSpec = ResilverSpec()
    durability: DurabilitySpec = DurabilitySpec()

    def __post_init__(self) -> None:
        for key, kind in (
            ("hardware", Hardware),
            ("pool", Pool),
            ("workload", Workload),
            ("resilver", ResilverSpec),
            ("durability", DurabilitySpec),
        ):
            if not isinstance(getattr(self, key), kind):
                raise ScenarioError(f"Scenario.{key} must be a {kind.__name__}")
        if not isinstance(self.name, str):
            raise ScenarioError(f'name = {_show(self.name)}: expected text, e.g. "ars raidz2"')
        _check_features(self.hardware, self.pool)
        if self.workload.offset and self.layout_tree().system != "raw":
            raise ScenarioError(
                f"workload.offset = {self.workload.offset} applies to raw layouts (fio on bare "
                f"devices, 'raw N'); {self.pool.layout!r} keeps files in a file system: remove it"
            )

    def layout_tree(self) -> Layout:
        """The parsed vdev tree of ``pool.layout``."""
        return parse_layout(self.pool.layout)

    def pool_capacity(self) -> CapacityReport:
        """:func:`zsim.capacity` of the pool on its disks: the disk profile's size and logical
        sector, ``pool.ashift``, ``pool.partitioning`` and ``hardware.zfs_version``."""
        return capacity(
            self.layout_tree(),
            self.hardware.disk.size_bytes,
            ashift=self.pool.ashift,
            zfs_version=parse_zfs_version(self.hardware.zfs_version),
            partitioning=self.pool.partitioning,  # type: ignore[arg-type]
            logical_sector=self.hardware.disk.logical_sector_bytes,
        )

    def to_dict(self) -> dict[str, Any]:
        """The resolved scenario as plain JSON-able data (profiles in full, SI base units)."""
        hardware = {f.name: getattr(self.hardware, f.name) for f in fields(Hardware)}
        for key in _PROFILE_KEYS:
            profile = hardware[key]
            hardware[key] = profile.to_dict() if profile is not None else None
        return {
            "name": self.name,
            "hardware": hardware,
            "pool": asdict(self.pool),
            "workload": asdict(self.workload),
            "resilver": asdict(self.resilver),
            "durability": asdict(self.durability),
        }

    def to_toml(self) -> str:
        """TOML text that :func:`load_scenario` reads back to an equal scenario."""
        lines = ["# zsim scenario, written by Scenario.to_toml() (DESIGN.md §4)"]
        if self.name:
            lines.append(f"name = {_toml_value(self.name)}")
        for table, items in (
            ("hardware", _hardware_items(self.hardware)),
            ("pool", _pool_items(self.pool)),
            ("workload", _workload_items(self.workload)),
            ("resilver", _changed_items(self.resilver, ResilverSpec())),
            ("durability", _changed_items(self.durability, DurabilitySpec())),
        ):
            if not items and table in ("resilver", "durability"):
                continue
            lines += ["", f"[{table}]"]
            lines += [f"{toml_key(k)} = {_toml_value(v)}" for k, v in items.items()]
        return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- writing TOML


def _size_text(nbytes: int) -> str | int:
    """A size as exact text in the largest binary unit that divides it (``"128KiB"``)."""
    for unit, scale in (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", GiB),
                        ("MiB", MiB), ("KiB", KiB)):  # fmt: skip
        if nbytes and nbytes % scale == 0:
            return f"{nbytes // scale}{unit}"
    return nbytes


def _profile_value(profile: Profile, spec: str | None) -> str | dict[str, Any]:
    """How to write a profile: its catalog name or path, else an inline table of its fields."""
    if spec is not None and spec != "inline":
        return spec
    if spec is None and profile.name != "inline":
        try:
            if load_profile(profile.name) == profile:
                return profile.name
        except ZsimError:
            pass
    table = {k: v for k, v in profile.to_dict().items() if k not in ("name", "sources")}
    if profile.sources:
        table["sources"] = dict(profile.sources)
    return table


def _hardware_items(hw: Hardware) -> dict[str, Any]:
    items: dict[str, Any] = {}
    for key in _PROFILE_KEYS:
        profile = getattr(hw, key)
        if profile is not None:
            items[key] = _profile_value(profile, getattr(hw, f"{key}_spec"))
    items.update(
        ram=_size_text(hw.ram),
        cpu_cores=hw.cpu_cores,
        cpu_ghz=hw.cpu_ghz,
        cpu_io_cost_scale=hw.cpu_io_cost_scale,
        cpu_byte_cost_scale=hw.cpu_byte_cost_scale,
        zfs_version=hw.zfs_version,
    )
    if hw.expander_bw is not None:
        items["expander_bw"] = hw.expander_bw
    items["disks_per_link"] = hw.disks_per_link
    if hw.memory_bandwidth is not None:
        items["memory_bandwidth"] = hw.memory_bandwidth
    return items


def _pool_items(pool: Pool) -> dict[str, Any]:
    items = asdict(pool)
    for key in ("recordsize", "special_small_blocks"):
        items[key] = _size_text(items[key])
    if not pool.failed:
        del items["failed"]
    if pool.allocated is None:
        del items["allocated"]
    else:
        items["allocated"] = _size_text(pool.allocated)
        del items["fill"]
    return items


def _changed_items(spec: Any, default: Any) -> dict[str, Any]:
    """The keys of an optional table that differ from its defaults (sizes as exact text)."""
    items = {}
    for f in fields(spec):
        value = getattr(spec, f.name)
        if value != getattr(default, f.name):
            items[f.name] = _size_text(value) if f.name == "block_size" else value
    return items


def _workload_items(work: Workload) -> dict[str, Any]:
    items: dict[str, Any] = {"tool": work.tool}
    for key in TOOL_KEYS[work.tool]:
        value = getattr(work, key)
        if value is not None:
            items[key] = _size_text(value) if KEYS["workload"][key].kind == "size" else value
    return items


# ---------------------------------------------------------------- reading TOML data


def _convert(section: str, key: str, raw: Any) -> Any:
    """A TOML value to the field's type (sizes to bytes, rates to bytes/s); types checked here,
    ranges by the dataclasses."""
    kind = KEYS[section][key].kind
    try:
        if kind == "size":
            return parse_size(raw)
        if kind == "rate":
            return parse_rate(raw)
        if kind == "time":
            return parse_time(raw)
    except ZsimError as err:
        raise _bad(section, key, raw, str(err)) from None
    valid = {
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "ashift": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "float": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "bool": lambda v: isinstance(v, bool),
        "text": lambda v: isinstance(v, str),
        "enum": lambda v: isinstance(v, str),
        "profile": lambda v: isinstance(v, str | Mapping),
        "names": lambda v: isinstance(v, str | list) and all(isinstance(n, str) for n in v),
    }[kind]
    if not valid(raw):
        raise _bad(section, key, raw)
    if kind == "float":
        return float(raw)
    if kind == "names":  # a TOML list, or "sdc,sdd" as --set gives it
        items = raw.split(",") if isinstance(raw, str) else raw
        return tuple(n.strip() for n in items if n.strip())
    if kind == "enum":
        return raw.strip().lower()
    return raw


def _looks_like_path(text: str) -> bool:
    """The rule of :func:`load_profile`: a ``.toml`` name or anything with a ``/`` is a path."""
    return text.endswith(".toml") or "/" in text


def _resolve_path(text: str, base: Path) -> Path:
    """``text`` as a path; relative paths are taken from ``base`` (the scenario's folder)."""
    path = Path(text).expanduser()
    return path if path.is_absolute() else base / path


def _load_profile(key: str, spec: str | Mapping[str, Any], base: Path) -> tuple[Profile, str]:
    """Resolve a profile given as a catalog name, a path or an inline table → (profile, spec)."""
    if isinstance(spec, Mapping):
        where = f"hardware.{key} (inline table)"
        return parse_profile(dict(spec), "inline", where=where), "inline"
    try:
        if _looks_like_path(spec):
            path = _resolve_path(spec, base)
            if not path.is_file():
                raise ScenarioError(
                    f"hardware.{key} = {_show(spec)}: no profile file at {path}; give a path "
                    f"relative to the scenario file, or a catalog name such as "
                    f"{KEYS['hardware'][key].example}"
                )
            return load_profile(path), str(path)
        return load_profile(spec), spec
    except ScenarioError:
        raise
    except ZsimError as err:
        raise ScenarioError(f"hardware.{key}: {err}") from None


def _table(data: Mapping[str, Any], section: str) -> dict[str, Any]:
    """One table, its keys checked and its values converted (not yet range-checked)."""
    raw = data.get(section, {})
    if not isinstance(raw, Mapping):
        raise ScenarioError(
            f"{section} = {_show(raw)}: expected a table; write [{section}] on a line of its own "
            f"with its keys below"
        )
    values = {}
    for key, value in raw.items():
        if key not in KEYS[section]:
            raise _unknown_key(section, key)
        values[key] = _convert(section, key, value)
    return values


def _hardware(values: dict[str, Any], base: Path) -> Hardware:
    if "disk" not in values:
        raise ScenarioError(
            'hardware.disk is missing; name the pool\'s disks, e.g. disk = "seagate-ironwolf-12tb" '
            "in [hardware] (a catalog name, a profile path or an inline table)"
        )
    for key in _PROFILE_KEYS:
        if key in values:
            profile, spec = _load_profile(key, values[key], base)
            values[key] = profile
            values["disk_spec" if key == "disk" else f"{key}_spec"] = spec
    return Hardware(**values)


def _pool(values: dict[str, Any]) -> Pool:
    if "layout" not in values:
        raise ScenarioError('pool.layout is missing; add e.g. layout = "raidz2 8" to [pool]')
    if "fill" in values and "allocated" in values:
        raise _both_fill_and_allocated()
    return Pool(**values)


def _workload(values: dict[str, Any], base: Path) -> Workload:
    tool = values.get("tool", Workload.tool)
    if tool in TOOL_KEYS:
        for key in values:
            if key != "tool" and key not in TOOL_KEYS[tool]:
                raise _foreign_key(key, tool, values[key])
    if tool == "trace" and values.get("file"):
        path = _resolve_path(values["file"], base)
        if not path.is_file():
            detail = f"no trace file at {path}; give a path relative to the scenario file"
            raise _bad("workload", "file", values["file"], detail)
        values["file"] = str(path)
    return Workload(**values)


_TABLE_EXAMPLES = {
    "hardware": 'disk = "seagate-ironwolf-12tb"',
    "pool": 'layout = "raidz2 8"',
    "workload": 'tool = "fio", rw = "randwrite", bs = "1M"',
}


def _build(data: Mapping[str, Any], base: Path) -> Scenario:
    if not isinstance(data, Mapping):
        raise ScenarioError(
            f"a scenario is a table with [{'], ['.join(TABLES)}], not {_show(data)}"
        )
    for key in data:
        if key not in _TOP_KEYS:
            raise ScenarioError(f"unknown table [{key}]; {_did_you_mean(key, list(_TOP_KEYS))}")
    for section, example in _TABLE_EXAMPLES.items():
        if section not in data:
            raise ScenarioError(f"the [{section}] table is missing; add it with {example}")
    return Scenario(
        hardware=_hardware(_table(data, "hardware"), base),
        pool=_pool(_table(data, "pool")),
        workload=_workload(_table(data, "workload"), base),
        name=data.get("name", ""),
        resilver=ResilverSpec(**_table(data, "resilver")),
        durability=DurabilitySpec(**_table(data, "durability")),
    )


def scenario_from_dict(
    data: Mapping[str, Any], *, source: str = "scenario", base_dir: str | Path | None = None
) -> Scenario:
    """Validate scenario data (as :mod:`tomllib` reads it) into a :class:`Scenario`.

    ``source`` starts every error message (the file name); relative profile and trace paths
    are taken from ``base_dir`` (default: the current directory).
    """
    base = Path(base_dir if base_dir is not None else Path.cwd()).resolve()
    try:
        return _build(data, base)
    except ZsimError as err:
        raise ScenarioError(f"{source}: {err}") from None


def _read_toml(path: Path, source: str) -> dict[str, Any]:
    """The TOML document at ``path``; a missing, unreadable or invalid file is an error."""
    if not path.is_file():
        what = "is a folder" if path.is_dir() else "does not exist"
        raise ScenarioError(
            f"{source}: the scenario file {what}; give the path of a .toml file "
            f"(examples in examples/scenarios/)"
        )
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError(
            f"{source}: not valid TOML: {err}; fix the syntax at that place"
        ) from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{source}: not UTF-8 text; save it as UTF-8 TOML") from None
    except OSError as err:
        raise ScenarioError(
            f"{source}: cannot read it ({err.strerror}); check permissions"
        ) from None


def load_scenario(path: str | Path, overrides: list[str] | None = None) -> Scenario:
    """Read a scenario TOML file; ``overrides`` (``"pool.recordsize=1M"``, …) apply first.

    Relative profile and trace paths in the file are taken from the file's folder.
    """
    file = Path(path)
    data = _read_toml(file, str(path))
    if overrides:
        try:
            data = apply_overrides(data, overrides)
        except ZsimError as err:
            raise ScenarioError(f"{path}: {err}") from None
    return scenario_from_dict(data, source=str(path), base_dir=file.parent)


# ---------------------------------------------------------------- overrides


def _split_override(text: str) -> tuple[str | None, str, str]:
    """``"pool.recordsize=1M"`` → ``("pool", "recordsize", "1M")``; ``name=x`` → (None, ...)."""
    where = f"override {text!r}"
    if not isinstance(text, str) or "=" not in text:
        raise ScenarioError(f"{where}: write section.key=value, e.g. pool.recordsize=1M")
    target, _, value = text.partition("=")
    target = target.strip()
    if target == "name":
        return None, "name", value.strip()
    section, dot, key = target.partition(".")
    if not dot or not key or "." in key:
        raise ScenarioError(f"{where}: write section.key=value, e.g. pool.recordsize=1M")
    if section not in KEYS:
        raise ScenarioError(f"{where}: unknown table [{section}]; {_did_you_mean(section, TABLES)}")
    if key not in KEYS[section]:
        raise ScenarioError(f"{where}: {_unknown_key(section, key)}")
    return section, key, value.strip()


def _override_value(section: str, key: str, text: str, where: str) -> Any:
    """Override text → the TOML type the key expects; sizes, rates and names stay text."""
    spec = KEYS[section][key]
    fail = ScenarioError(f"{where}: expected {spec.expected}, e.g. {section}.{key}={spec.example}")
    if spec.kind in ("int", "ashift"):
        try:
            return int(text.replace("_", ""), 10)
        except ValueError:
            raise fail from None
    if spec.kind == "float":
        try:
            return float(text)
        except ValueError:
            raise fail from None
    if spec.kind == "bool":
        if text.lower() not in ("true", "false"):
            raise fail
        return text.lower() == "true"
    if spec.kind == "profile" and text.startswith("{"):
        try:
            return tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError as err:
            raise ScenarioError(f"{where}: the inline table is not valid TOML: {err}") from None
    if (spec.kind == "profile" and _looks_like_path(text)) or (section, key) == (
        "workload",
        "file",
    ):
        return str(_resolve_path(text, Path.cwd()))  # typed on a command line: from here
    return text


def apply_overrides(data: Mapping[str, Any], overrides: list[str]) -> dict[str, Any]:
    """A copy of scenario ``data`` with ``section.key=value`` overrides applied, in order.

    Values become the type the key expects (``workload.numjobs=8`` → 8,
    ``workload.direct=true`` → True); sizes, rates and names stay text for validation to parse.
    Relative paths are taken from the current directory. ``pool.fill`` and ``pool.allocated``
    are alternatives: setting one drops the other. ``data`` is not changed.
    """
    out = copy.deepcopy(dict(data))
    for text in overrides:
        section, key, raw = _split_override(text)
        if section is None:
            out["name"] = raw
            continue
        value = _override_value(section, key, raw, f"override {text!r}")
        table = out.get(section)
        table = dict(table) if isinstance(table, Mapping) else {}
        table[key] = value
        if section == "pool" and key in ("fill", "allocated"):
            table.pop("allocated" if key == "fill" else "fill", None)
        out[section] = table
    return out
