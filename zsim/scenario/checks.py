"""Value and combination checks of the scenario dataclasses (:mod:`zsim.scenario.schema`).

Each check raises the one-line :class:`ScenarioError` of :mod:`zsim.scenario.keys`.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from zsim.capacity import MAX_COMPRESS_RATIO, PARTITIONINGS
from zsim.errors import ZsimError
from zsim.hardware.catalog import Profile
from zsim.layout.grammar import parse_layout
from zsim.layout.tree import BtrfsArray, Layout, MdArray, ZfsLayout, ZpoolOnBlock
from zsim.scenario.keys import (
    CHECKSUMS,
    COMPRESSIONS,
    DD_DIRECTIONS,
    DD_SOURCES,
    DIRECTS,
    IOENGINES,
    LOGBIASES,
    MAX_RECORDSIZE,
    MIN_RECORDSIZE,
    ON_OFF,
    PRIMARYCACHES,
    REDUNDANT_METADATAS,
    RWS,
    SYNCS,
    TOOL_KEYS,
    TRACE_FORMATS,
    XATTRS,
    ScenarioError,
    bad_value,
    show_value,
)
from zsim.scenario.protocols import HardwareFields, PoolFields, WorkloadFields
from zsim.units import GiB, KiB
from zsim.zfs.version import check_layout_features

# ---------------------------------------------------------------- value checks


def _is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def check_enum(section: str, key: str, value: Any, options: tuple[str, ...]) -> None:
    if value not in options:
        raise bad_value(section, key, value)


def check_whole(section: str, key: str, value: Any, low: int, high: int | None = None) -> None:
    """``value`` must be an ``int`` (not a bool) in ``low``…``high``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_value(section, key, value)
    if value < low or (high is not None and value > high):
        raise bad_value(section, key, value)


def check_real(section: str, key: str, value: Any, low: float, high: float = math.inf) -> None:
    """``value`` must be a finite number in ``low``…``high`` (inclusive)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise bad_value(section, key, value)
    if not math.isfinite(value) or not low <= value <= high:
        raise bad_value(section, key, value)


def check_size(section: str, key: str, value: Any, minimum: int = 0) -> None:
    """``value`` must be a size in bytes (``int``) of at least ``minimum``."""
    check_whole(section, key, value, minimum)


def check_block(section: str, key: str, value: Any, zero_ok: bool = False) -> None:
    """A ZFS block size: a power of two 512 B … 16 MiB (``SPA_MINBLOCKSIZE``…``MAXBLOCKSIZE``)."""
    check_size(section, key, value)
    if zero_ok and value == 0:
        return
    if not (_is_power_of_two(value) and MIN_RECORDSIZE <= value <= MAX_RECORDSIZE):
        raise bad_value(section, key, value)


def _a(kind: str) -> str:
    """``"an HDD"``, ``"an SSD"``, ``"an NVMe"``, ``"an HBA"``: every kind reads with "an"."""
    return "an NVMe" if kind == "nvme" else f"an {kind.upper()}"


def check_profile(key: str, profile: Any, kinds: tuple[str, ...]) -> None:
    if not isinstance(profile, Profile):
        raise bad_value("hardware", key, profile)
    if profile.kind in kinds:
        return
    if kinds == ("hba",):
        detail = f'is {_a(profile.kind)} profile, not an HBA; use an HBA such as "lsi-9300-8i"'
    else:
        detail = (
            f"is {_a(profile.kind)} profile, not a storage device; give a disk such as "
            f'"seagate-ironwolf-12tb" (the HBA goes in hardware.hba)'
        )
    raise ScenarioError(f"hardware.{key} = {show_value(profile)} {detail}")


# ---------------------------------------------------------------- pool checks


POOL_ENUMS = {
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


def layout_of(text: Any) -> Layout:
    """Parse ``pool.layout``; a :class:`LayoutError` becomes a :class:`ScenarioError`."""
    if not isinstance(text, str):
        raise bad_value("pool", "layout", text)
    try:
        return parse_layout(text)
    except ZsimError as err:
        raise ScenarioError(f"pool.layout = {show_value(text)}: {err}") from None


#: The least ``hardware.ram`` zsim accepts. At 1 GiB OpenZFS's ARC floor ``arc_c_min`` =
#: max(RAM/32, 32 MiB) stops being its 32 MiB (2 × SPA_MAXBLOCKSIZE) minimum, and
#: ``zfs_dirty_data_max`` (10 % of RAM, :func:`zsim.zfs.txg.txg_tunables`) still holds six
#: 16 MiB records; below it the ARC and write-throttle formulas zsim uses leave no room.
MIN_RAM = GiB


def check_ram(value: Any) -> None:
    """``hardware.ram``: a size in bytes of at least :data:`MIN_RAM`."""
    check_size("hardware", "ram", value, 1)
    if value < MIN_RAM:
        raise bad_value(
            "hardware",
            "ram",
            value,
            f"below the {MIN_RAM // GiB} GiB minimum (OpenZFS's ARC floor of 32 MiB "
            "and its dirty-data limit of 10 % of RAM leave nothing for the pool below it); "
            'give the memory of the machine, at least "1GiB"',
        )


def check_compression(compression: str, ratio: Any) -> None:
    """``compress_ratio`` 1 … :data:`~zsim.capacity.MAX_COMPRESS_RATIO` (finite), and exactly
    1 with compression off (nothing is compressed)."""
    if (
        isinstance(ratio, bool)
        or not isinstance(ratio, int | float)
        or not math.isfinite(ratio)
        or not 1.0 <= ratio <= MAX_COMPRESS_RATIO
    ):
        raise bad_value(
            "pool",
            "compress_ratio",
            ratio,
            f"expected a finite number from 1 to {MAX_COMPRESS_RATIO:g} "
            "(logical ÷ physical size), e.g. 1.6",
        )
    if compression == "off" and ratio != 1.0:
        raise ScenarioError(
            f'pool.compress_ratio = {show_value(ratio)} but pool.compression = "off"; set '
            f'compression = "lz4" (or zstd, gzip, zle) or remove compress_ratio'
        )


def check_failed(pool: PoolFields) -> None:
    """``pool.failed``: distinct names of data-vdev leaves, no more per vdev than it survives."""
    names: Any = pool.failed  # a list when built in code
    if isinstance(names, list):
        object.__setattr__(pool, "failed", names := tuple(names))
    if not isinstance(names, tuple) or not all(isinstance(n, str) for n in names):
        raise bad_value("pool", "failed", names)
    if not names:
        return
    where = f"pool.failed = {show_value(list(names))}"
    layout = layout_of(pool.layout)
    md = layout.block if isinstance(layout, ZpoolOnBlock) else layout
    if isinstance(md, MdArray | BtrfsArray):
        _check_failed_block(where, md, names, pool.layout)
        return
    if not isinstance(layout, ZfsLayout):
        raise ScenarioError(
            f"{where}: degraded operation is modelled for ZFS pools, md arrays and btrfs "
            f"RAID1/RAID10, and {show_value(pool.layout)} is a {layout.system} layout; remove "
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
                f"{where}: no device {name!r} in pool.layout {show_value(pool.layout)} "
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
                f"{where}: no device {name!r} in pool.layout {show_value(text)} "
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


def check_fill_at_attach(pool: Any) -> None:
    """``pool.fill_at_attach`` (above 0) needs a raidz vdev with disks attached, below 1, and
    a healthy pool (degraded reads of older-width blocks are not modelled)."""
    if pool.fill_at_attach >= 1:
        raise bad_value("pool", "fill_at_attach", pool.fill_at_attach)
    layout = layout_of(pool.layout)
    vdevs = getattr(layout, "vdevs", ())
    if not any(getattr(v, "attached", 0) for v in vdevs):
        raise ScenarioError(
            f"pool.fill_at_attach applies to a raidz vdev with disks attached (RAIDZ "
            f'expansion, e.g. "raidz2 6+2"); {pool.layout!r} has none: remove the key, or '
            f"spell the layout as created plus attached"
        )
    if pool.failed:
        raise ScenarioError(
            "pool.failed together with pool.fill_at_attach: zsim does not model degraded reads "
            "of blocks born before an attach; drop one of the two"
        )


def both_fill_and_allocated() -> ScenarioError:
    return ScenarioError(
        "pool.fill and pool.allocated are both given; they are alternatives, keep one "
        '(fill = 0.5 is a fraction of usable space, allocated = "659GiB" an amount)'
    )


# ---------------------------------------------------------------- workload checks


_REQUIRED = {
    "fio": ({"rw": 'rw = "randwrite"', "bs": 'bs = "1M"'}, "a fio job's shape has no default"),
    "dd": (
        {"direction": 'direction = "write"', "bs": 'bs = "1M"'},
        "a dd run's shape has no default",
    ),
    "trace": ({"file": 'file = "traces/run1.txt"'}, "trace replay needs the trace to replay"),
}


def check_required(work: WorkloadFields) -> None:
    examples, why = _REQUIRED[work.tool]
    missing = [k for k in examples if getattr(work, k) is None]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise ScenarioError(
            f"{' and '.join(f'workload.{k}' for k in missing)} {verb} missing for tool = "
            f'"{work.tool}"; {why}: add e.g. {", ".join(examples[k] for k in missing)} to '
            f"[workload]"
        )


def check_foreign_defaults(work: WorkloadFields) -> None:
    """Keys of another tool must keep their defaults; they would be silently ignored."""
    own = {"tool", *TOOL_KEYS[work.tool]}
    for f in fields(work):
        if f.name not in own and getattr(work, f.name) != f.default:
            raise foreign_key(f.name, work.tool, getattr(work, f.name))


def foreign_key(key: str, tool: str, value: Any) -> ScenarioError:
    owners = [t for t, keys in TOOL_KEYS.items() if key in keys]
    return ScenarioError(
        f'workload.{key} = {show_value(value)} is a key of tool = "{owners[0]}" but tool = '
        f'"{tool}" ignores it; remove it or change workload.tool'
    )


def check_fio(work: WorkloadFields) -> None:
    check_enum("workload", "rw", work.rw, RWS)
    check_size("workload", "bs", work.bs, 1)
    check_whole("workload", "rwmixread", work.rwmixread, 0, 100)
    check_whole("workload", "numjobs", work.numjobs, 1)
    check_whole("workload", "iodepth", work.iodepth, 1)
    for key in ("sync", "direct", "overwrite"):
        if not isinstance(getattr(work, key), bool):
            raise bad_value("workload", key, getattr(work, key))
    check_whole("workload", "fsync", work.fsync, 0)
    check_size("workload", "size", work.size, 1)
    check_enum("workload", "ioengine", work.ioengine, IOENGINES)
    check_size("workload", "offset", work.offset, 0)


def check_dd(work: WorkloadFields) -> None:
    check_enum("workload", "direction", work.direction, DD_DIRECTIONS)
    check_size("workload", "bs", work.bs, 1)
    check_size("workload", "bytes", work.bytes, 1)
    check_whole("workload", "streams", work.streams, 1)
    check_enum("workload", "source", work.source, DD_SOURCES)


def check_trace(work: WorkloadFields) -> None:
    if not isinstance(work.file, str) or not work.file:
        raise bad_value("workload", "file", work.file)
    check_enum("workload", "format", work.format, TRACE_FORMATS)


# Features a pool property or layout needs, and the first OpenZFS release that has it.
# Sources: OpenZFS release notes — 0.6.5 large_blocks (records > 128 KiB); 0.7.0 sha512,
# skein and edonr checksums; 0.8.0 allocation classes (special/dedup vdevs,
# special_small_blocks); 2.0.0 zstd; 2.1.0 dRAID; 2.2.0 blake3; 2.3.0 Direct I/O (``direct``).
_FEATURES: tuple[tuple[str, Callable[[PoolFields, Layout], bool], tuple[int, ...], str], ...] = (
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


def check_features(hardware: HardwareFields, pool: PoolFields) -> None:
    """Pool settings that the chosen OpenZFS release does not have are errors."""
    version, layout = hardware.zfs, layout_of(pool.layout)
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
                f"{show_value(hardware.zfs_version)}; set zfs_version ≥ {needed} or use {instead}"
            )
