"""The vocabulary of a calibration plan: its constants, the data classes :class:`PlanOptions`,
:class:`Step` and :class:`Plan`, and :func:`check_options`, which says what is wrong with a
resolved :class:`PlanOptions`.

:mod:`.plan` makes plans, :mod:`.jobfiles` writes their fio job files and ``run.sh``,
:mod:`.plan_file` writes and reads ``plan.toml`` and :mod:`.devices` holds the host and device
facts and safety checks; all of them use what is here, and :mod:`.plan` re-exports it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zsim.errors import ZsimError
from zsim.units import KiB, MiB, format_binary_size, format_size

KINDS = ("single-disk", "pool")
TOOLS = ("fio", "dd")
PURPOSES = (
    "prepare",
    "zone-read",
    "zone-write",
    "random",
    "short-seek",
    "cache-hit",
    "sync-latency",
    "long-write",
    "dd-write",
    "dd-read",
)
TARGET_TYPES = ("block", "file", "directory")

#: The data file zsim creates in a directory target; a file of this name is always zsim's own.
DATA_NAME = "zsim-calibrate.dat"
#: A file beside a file target, written by ``zsim calibrate run`` after it lays the file out,
#: marking the file as zsim's own so that a later plan may overwrite it without asking.
MARKER_SUFFIX = ".zsim-calibrate"

#: Offsets and region sizes are multiples of 1 MiB: aligned for O_DIRECT on any sector size.
ALIGN = MiB
#: The smallest region a plan accepts: room for the zones, the short-seek region and 1 MiB jobs.
MIN_SIZE = 16 * MiB

#: fio engines a plan may use: the ordinary kernel interfaces. Never ``external:`` (it loads a
#: shared object) or engines that run programs or reach the network.
FIO_ENGINES = (
    "libaio",
    "io_uring",
    "psync",
    "sync",
    "pvsync",
    "pvsync2",
    "posixaio",
    "mmap",
    "vsync",
)


# ---------------------------------------------------------------- data


@dataclass(frozen=True)
class PlanOptions:
    """What to measure and how hard. Sizes in bytes, times in seconds, rates in bytes/s.

    ``None`` means "choose for me" (see :func:`make_plan`); a :class:`Plan` always holds the
    resolved values.

    * ``kind``: ``"single-disk"`` (one device, or a file on it) or ``"pool"`` (a directory on
      a ZFS dataset: no zones, short-seek or cache-hit jobs, every region ≥ 2 × RAM).
    * ``size``: bytes of the target to use. Default: the whole block device; 4 GiB for a file
      or directory; for a pool at least 2 × RAM. Rounded down to a multiple of 1 MiB.
    * ``runtime_s`` / ``ramp_s``: seconds each timed job measures / warms up before measuring.
    * ``zones``: offsets of the zone jobs as fractions (0 ≤ f < 1) of ``size``.
    * ``zone_bytes``: bytes each zone job (and the sync-latency job) covers from its offset;
      default min(1 GiB, size / 20), so the zones do not overlap.
    * ``depths_4k``: queue depths for block sizes below 64 KiB; ``depths_large`` for 64 KiB and
      larger; ``block_sizes``: bytes per I/O of the random jobs.
    * ``long_write_bytes`` / ``long_write_segments``: the write-cache cliff run (default
      min(size, 64 GiB) in 8 segments).
    * ``rate_bw`` (bytes/s) / ``rate_iops``: caps on every measuring job (0 = no cap) — to
      emulate a slower disk; dd is not rate limited. fio takes ``rate=`` or ``rate_iops=``,
      not both, so with both given each job gets ``rate_iops`` = min(rate_iops, rate_bw / bs):
      what a disk with both ceilings would allow at that block size
      (:func:`rate_cap_iops`).
    * ``ioengine``: fio's engine (the sync-latency job always uses psync); ``direct``: O_DIRECT.
    * ``include_writes``: plan the write jobs (and dd write); ``include_dd``: plan the dd steps.
    * ``allow_destroy``: overwrite a device that holds a filesystem or is in use, or a file
      that is not zsim's (the CLI's ``--destroy-data``).
    """

    kind: str = "single-disk"
    size: int | None = None
    runtime_s: float = 20.0
    ramp_s: float = 2.0
    zones: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 0.95)
    zone_bytes: int | None = None
    depths_4k: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
    depths_large: tuple[int, ...] = (1, 4, 32)
    block_sizes: tuple[int, ...] = (4 * KiB, 64 * KiB, MiB)
    long_write_bytes: int | None = None
    long_write_segments: int = 8
    rate_bw: int = 0
    rate_iops: int = 0
    ioengine: str = "libaio"
    direct: bool = True
    include_writes: bool = True
    include_dd: bool = True
    allow_destroy: bool = False


@dataclass(frozen=True)
class Step:
    """One measurement: a fio job file or a dd command, and the shape of its I/O.

    ``purpose`` is one of :data:`PURPOSES`; ``destructive`` is True when the step overwrites
    data that is not zsim's own. ``jobfile`` (fio) is relative to the plan directory;
    ``argv`` (dd) starts with ``"dd"``. ``rw``/``bs`` (bytes)/``iodepth``/``offset`` (bytes)/
    ``size`` (bytes) describe the I/O for display; ``timed`` says whether the step runs for
    ``runtime_s`` (else until ``size`` is moved); ``segments`` is the number of fio jobs in
    the file (the long write's stonewalled segments, 1 otherwise).
    """

    name: str
    tool: str
    purpose: str
    destructive: bool
    description: str = ""
    jobfile: str | None = None
    argv: tuple[str, ...] = ()
    rw: str = ""
    bs: int = 0
    iodepth: int = 1
    offset: int = 0
    size: int = 0
    timed: bool = False
    segments: int = 1

    @property
    def writes(self) -> bool:
        """True when the step writes to the data path."""
        return self.rw in ("write", "randwrite")


#: How much of the start of the target :func:`target_state` fingerprints.
FINGERPRINT_BYTES = MiB


@dataclass(frozen=True)
class TargetState:
    """What a target looked like: whether it ``exists``, its ``size`` in bytes, its identity
    (``dev``/``ino`` of the file or device node, ``rdev`` of a block device) and ``sha256`` of
    its first :data:`FINGERPRINT_BYTES` (hex). A plan records it when it is made, and
    ``zsim calibrate run`` compares the target with it before every step that writes."""

    exists: bool
    size: int = 0
    dev: int = 0
    ino: int = 0
    rdev: int = 0
    sha256: str = ""


@dataclass(frozen=True)
class Plan:
    """A complete calibration plan: what to run on which target, and where it was planned.

    ``target`` is the absolute path given; ``target_type`` one of :data:`TARGET_TYPES`;
    ``data_path`` the device or file fio and dd act on (``DIR/zsim-calibrate.dat`` for a
    directory). ``rotational`` comes from ``/sys/block/<disk>/queue/rotational`` of the disk
    behind the target (None when unknown, e.g. on ZFS, tmpfs or btrfs); ``device_name`` and
    ``device_size`` (bytes) are those of the block device holding the data (the target itself
    for a block target). ``ram_bytes`` is MemTotal. ``warnings`` are for the user before
    running (destructive writes, little free space); ``notes`` explain choices made.
    ``target_state`` is what ``data_path`` looked like when the plan was made (None in plans
    made before zsim recorded it; ``zsim calibrate run`` refuses those).
    """

    target: str
    target_type: str
    data_path: str
    options: PlanOptions
    steps: tuple[Step, ...]
    rotational: bool | None
    device_name: str | None
    device_size: int | None
    ram_bytes: int
    created: str
    zsim_version: str
    hostname: str
    uname: str
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    target_state: TargetState | None = None

    @property
    def destructive(self) -> bool:
        """True when any step overwrites data that is not zsim's own."""
        return any(step.destructive for step in self.steps)

    @property
    def timed_seconds(self) -> float:
        """Seconds the timed steps take (runtime + ramp each); untimed writes come on top."""
        timed = sum(1 for step in self.steps if step.timed)
        return timed * (self.options.runtime_s + self.options.ramp_s)

    def step(self, name: str) -> Step:
        """The step called ``name``."""
        for step in self.steps:
            if step.name == name:
                return step
        raise ZsimError(f"the plan has no step {name!r}; the steps are {_names(self.steps)}")


def _names(steps: Sequence[Step]) -> str:
    names = [step.name for step in steps]
    shown = ", ".join(names[:8])
    return shown + (f", … ({len(names)} in all)" if len(names) > 8 else "")


# ---------------------------------------------------------------- options


def plan_error(problem: str, fix: str) -> ZsimError:
    """The error a bad plan option or step raises: "``problem``; ``fix``"."""
    return ZsimError(f"{problem}; {fix}")


def is_int(value: Any) -> bool:
    """An ``int`` and not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """A finite ``int`` (not ``bool``) or ``float``."""
    return (is_int(value) or isinstance(value, float)) and math.isfinite(value)


def check_options(options: PlanOptions) -> None:
    """Raise :class:`ZsimError` naming the first resolved option that is wrong, and the fix.

    Expects every size resolved (not None), as in a :class:`Plan`.
    """
    o = options
    if o.kind not in KINDS:
        raise plan_error(f"unknown kind {o.kind!r}", "use --kind single-disk or --kind pool")
    for key in ("size", "zone_bytes", "long_write_bytes"):
        value = getattr(o, key)
        if not is_int(value) or value <= 0:
            raise plan_error(
                f"{key} {value!r} must be a positive number of bytes", "give e.g. 4GiB"
            )
    size, long_write = o.size or 0, o.long_write_bytes or 0  # positive ints: checked above
    if size < MIN_SIZE:
        raise plan_error(
            f"size {format_size(size)} is too small",
            f"use at least {format_binary_size(MIN_SIZE)} (e.g. --size 4GiB)",
        )
    for key in ("zone_bytes", "long_write_bytes"):
        if getattr(o, key) > size:
            raise plan_error(
                f"{key} {format_size(getattr(o, key))} is larger than size {format_size(size)}",
                f"make {key} at most the size",
            )
    for key in ("runtime_s", "ramp_s"):
        value = getattr(o, key)
        if not is_number(value) or value < 0 or (key == "runtime_s" and value == 0):
            need = "more than 0" if key == "runtime_s" else "0 or more"
            raise plan_error(
                f"{key} {value!r} is not a valid time", f"give a number of seconds, {need}"
            )
    if not is_int(o.long_write_segments) or o.long_write_segments < 1:
        raise plan_error(
            f"long_write_segments {o.long_write_segments!r} must be a whole number ≥ 1",
            "use e.g. 8",
        )
    if long_write < o.long_write_segments * ALIGN:
        raise plan_error(
            f"long_write_bytes {format_size(long_write)} is too small for "
            f"{o.long_write_segments} segments",
            f"give at least {o.long_write_segments} MiB or fewer segments",
        )
    zones = tuple(o.zones)
    if any(not is_number(z) or not 0 <= z < 1 for z in zones):
        raise plan_error(
            f"zones {list(zones)!r} must be fractions 0 ≤ f < 1 of the size",
            "give e.g. 0,0.2,0.4,0.6,0.8,0.95",
        )
    if len({zone_label(z) for z in zones}) != len(zones):
        raise plan_error(f"zones {list(zones)!r} repeat an offset", "give each zone once")
    for key in ("depths_4k", "depths_large"):
        depths = tuple(getattr(o, key))
        if any(not is_int(d) or d < 1 for d in depths):
            raise plan_error(f"{key} {list(depths)!r} must be whole numbers ≥ 1", "use e.g. 1,4,32")
        if len(set(depths)) != len(depths):
            raise plan_error(f"{key} {list(depths)!r} repeat a depth", "give each depth once")
    sizes = tuple(o.block_sizes)
    if any(not is_int(b) or b <= 0 or b % 512 for b in sizes):
        raise plan_error(
            f"block_sizes {list(sizes)!r} must be positive multiples of 512 bytes",
            "use e.g. 4K,64K,1M",
        )
    if len(set(sizes)) != len(sizes):
        raise plan_error(f"block_sizes {list(sizes)!r} repeat a size", "give each block size once")
    if any(b > size for b in sizes):
        raise plan_error(f"block size {max(sizes)} is larger than size {size}", "use a larger size")
    for key in ("rate_bw", "rate_iops"):
        value = getattr(o, key)
        if not is_int(value) or value < 0:
            raise plan_error(f"{key} {value!r} must be a whole number ≥ 0", "use 0 for no limit")
    if not isinstance(o.ioengine, str) or o.ioengine not in FIO_ENGINES:
        raise plan_error(
            f"ioengine {o.ioengine[:40] if isinstance(o.ioengine, str) else o.ioengine!r} is not "
            "a fio engine zsim uses",
            "use one of " + ", ".join(FIO_ENGINES),
        )
    for key in ("direct", "include_writes", "include_dd", "allow_destroy"):
        if not isinstance(getattr(o, key), bool):
            raise plan_error(f"{key} {getattr(o, key)!r} must be true or false", "give a boolean")


def zone_label(fraction: float) -> str:
    """0.2 → "20", 0.95 → "95", 0.333 → "33p3": a zone's label in step names."""
    return f"{fraction * 100:.1f}".rstrip("0").rstrip(".").replace(".", "p").zfill(2)
