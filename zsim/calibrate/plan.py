"""Plan the fio and dd runs that measure what zsim's device models need.

``make_plan(target, options)`` decides the steps; ``write_plan(plan, out_dir)`` writes them as

* ``plan.toml`` — a ``[plan]`` table (target, device, host, resolved options, warnings, notes)
  and one ``[[step]]`` per step; :func:`read_plan` reads it back (and validates it);
* ``jobs/<step>.fio`` — one fio job file per fio step;
* ``run.sh`` — a bash script that runs every step, storing ``results/<step>.json`` (fio's JSON)
  and ``results/<step>.dd.txt`` (dd's report). ``zsim calibrate run`` (:mod:`.run`) does the
  same with progress, richer result files and resume.

What a single-disk plan measures, and why (sizes in bytes, times in seconds):

* ``zoneread-P`` / ``zonewrite-P``: sequential 1 MiB transfers at QD4 around P % of the region
  — an HDD's outer tracks are faster than its inner ones (zoned bit recording);
* ``randread-4k-qdN`` … ``randwrite-1m-qdN``: random I/O over the whole region at queue depths
  1…32 — seek and rotation at QD1, then how much the drive's queue reordering (NCQ) or an SSD's
  internal parallelism gains as the depth grows;
* ``short-seek``: random 4K reads at QD1 within 1 % of the region — the seek is short, so
  what remains is mostly rotational latency;
* ``cache-hit``: sequential 4K reads at QD1 over 256 MiB, which the drive's read-ahead
  serves from its cache — the per-command overhead without media positioning (a random
  re-read of a tiny region would also hit, but only in drives whose cache keeps data already
  read, which zsim's drive model, like many drives' segment caches, does not);
* ``sync-latency``: 4K ``O_SYNC`` writes at QD1 (psync) — the latency a ZIL or a database
  sees, including the drive's cache flush;
* ``long-write``: one long sequential write as stonewalled segments — each segment is reported
  on its own, so the bandwidth drop when a write cache (SLC cache, SMR media cache, DRAM)
  fills shows up as a step between segments;
* ``dd-write`` / ``dd-read``: GNU dd over up to 4 GiB, a cross-check with a second tool.

Every timed job runs ``runtime_s`` after ``ramp_s`` of warm-up. The page cache is bypassed
with ``direct=1`` (O_DIRECT). For a *pool* (the mount point of a ZFS dataset) the ARC is the
cache to defeat, and ZFS before 2.3 accepts O_DIRECT but ignores it, so every job's region is
made at least 2 × RAM: the ARC can never hold more than RAM, so at least half of every region
must come from the disks.

Safety: writes to a block device destroy its data. :func:`make_plan` refuses to plan writes to
a device (or a partition of it) that holds a filesystem, is mounted, is swap or is held by
another device (LVM, dm-crypt, md) unless ``allow_destroy`` is set, and puts a warning in
:attr:`Plan.warnings` whenever a plan writes to a device. The checks are plain functions of
paths and texts (:func:`probe_signature`, :func:`mount_uses`, :func:`swap_uses`,
:func:`holder_uses`, :func:`block_device_problems`) so that they can be tested on files.
"""

from __future__ import annotations

import math
import os
import platform
import re
import shlex
import shutil
import stat
import struct
import subprocess
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import zsim
from zsim.errors import ZsimError
from zsim.files import atomic_write_text
from zsim.units import format_binary_size, format_size, format_time

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
PLAN_FILE = "plan.toml"
PLAN_FORMAT = 1

KiB, MiB, GiB = 2**10, 2**20, 2**30
#: Offsets and region sizes are multiples of 1 MiB: aligned for O_DIRECT on any sector size.
ALIGN = MiB
#: The smallest region a plan accepts: room for the zones, the short-seek region and 1 MiB jobs.
MIN_SIZE = 16 * MiB
DEFAULT_FILE_SIZE = 4 * GiB
CACHE_HIT_BYTES = 256 * MiB
DD_MAX_BYTES = 4 * GiB
LONG_WRITE_MAX = 64 * GiB
ZONE_MAX = GiB
#: Block sizes below this use ``depths_4k``; this and larger use ``depths_large``.
LARGE_BS = 64 * KiB

PROC_MOUNTS = Path("/proc/mounts")
PROC_SWAPS = Path("/proc/swaps")
PROC_MEMINFO = Path("/proc/meminfo")
SYS_DEV_BLOCK = Path("/sys/dev/block")
SYS_CLASS_BLOCK = Path("/sys/class/block")
DEV_DIR = Path("/dev")

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_ENGINE = re.compile(r"^[A-Za-z0-9_.:/+-]+$")
_REPLAN = "re-create the plan with `zsim calibrate plan`"


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
    block_sizes: tuple[int, ...] = (4096, 65536, 1048576)
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


# ---------------------------------------------------------------- host and device facts


def read_ram_bytes(meminfo: str | Path = PROC_MEMINFO) -> int:
    """MemTotal in bytes from ``/proc/meminfo`` (``sysconf`` when it cannot be read)."""
    try:
        for line in Path(meminfo).read_text(encoding="ascii", errors="replace").splitlines():
            if line.startswith("MemTotal:"):
                parts = line.split()
                return int(parts[1]) * (KiB if parts[2:] == ["kB"] else 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (OSError, ValueError):
        return 0


@dataclass(frozen=True)
class BlockDevice:
    """A block device as sysfs describes it: its kernel ``name`` (``sdb1``), the whole
    ``disk`` it belongs to (``sdb``; itself when not a partition), ``size`` in bytes and the
    disk's ``rotational`` flag (None when unknown)."""

    name: str
    disk: str
    size: int | None
    rotational: bool | None


def block_device(
    major: int, minor: int, sys_dev_block: str | Path = SYS_DEV_BLOCK
) -> BlockDevice | None:
    """The block device MAJ:MIN via ``/sys/dev/block/MAJ:MIN``, following a partition to its
    disk for the rotational flag; None when sysfs does not know it (tmpfs, ZFS, btrfs…)."""
    link = Path(sys_dev_block) / f"{major}:{minor}"
    if not link.exists():
        return None
    here = link.resolve()
    disk_dir = here.parent if (here / "partition").exists() else here
    size = _read_int(here / "size")
    return BlockDevice(
        name=here.name,
        disk=disk_dir.name,
        size=size * 512 if size is not None else None,  # sysfs counts 512-byte sectors
        rotational=_read_flag(disk_dir / "queue" / "rotational"),
    )


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None


def _read_flag(path: Path) -> bool | None:
    value = _read_int(path)
    return None if value is None else value != 0


def _read_text(path: str | Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


# ---------------------------------------------------------------- safety checks

# (name, offset, magic bytes) — the first bytes of each format's superblock or label.
_MAGICS: tuple[tuple[str, int, bytes], ...] = (
    ("ext2/3/4", 1080, b"\x53\xef"),
    ("xfs", 0, b"XFSB"),
    ("btrfs", 65600, b"_BHRfS_M"),
    ("swap", 4086, b"SWAPSPACE2"),
    ("swap", 4086, b"SWAP-SPACE"),
    ("ntfs", 3, b"NTFS    "),
    ("vfat", 54, b"FAT"),
    ("vfat", 82, b"FAT"),
    ("crypto_LUKS", 0, b"LUKS\xba\xbe"),
    ("LVM2_member", 512, b"LABELONE"),
)
_ZFS_UBERBLOCK_MAGIC = 0x00BAB10C
_ZFS_UB_AREA = (128 * KiB, 128 * KiB)  # offset and length of label 0's uberblock ring


def probe_signature(path: str | Path) -> str | None:
    """The filesystem or volume signature at the start of ``path`` by magic number, or None.

    Looks for ext2/3/4 (0xEF53 at byte 1080), XFS, btrfs, swap, NTFS, FAT, LUKS, LVM and a
    ZFS label (uberblock magic 0x00bab10c, either byte order, in any 1 KiB slot of label 0's
    uberblock ring at 128 KiB). Raises OSError when ``path`` cannot be read.
    """
    with open(path, "rb") as handle:
        head = handle.read(_ZFS_UB_AREA[0] + _ZFS_UB_AREA[1])
    for name, offset, magic in _MAGICS:
        if head[offset : offset + len(magic)] == magic:
            return name
    start, length = _ZFS_UB_AREA
    ring = head[start : start + length]
    for slot in range(0, len(ring) - 7, KiB):
        (little,) = struct.unpack_from("<Q", ring, slot)
        (big,) = struct.unpack_from(">Q", ring, slot)
        if _ZFS_UBERBLOCK_MAGIC in (little, big):
            return "zfs_member"
    return None


def filesystem_signature(path: str | Path, blkid: str | None = "auto") -> str | None:
    """What ``path`` holds — ``blkid -p`` (TYPE, else PTTYPE: a partition table) when blkid is
    installed, else (or when blkid finds nothing or fails) :func:`probe_signature`.

    ``blkid="auto"`` finds blkid on PATH; None skips it. Raises OSError when ``path`` cannot
    be read at all.
    """
    program = shutil.which("blkid") if blkid == "auto" else blkid
    if program:
        try:
            done = subprocess.run(
                [program, "-p", "-o", "export", str(path)],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            done = None
        if done is not None and done.returncode == 0:
            found = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
            if found.get("TYPE"):
                return found["TYPE"]
            if found.get("PTTYPE"):
                return f"{found['PTTYPE']} partition table"
    return probe_signature(path)


def _unescape_mount(field_text: str) -> str:
    """/proc/mounts escapes space, tab, newline and backslash as octal (``\\040``)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field_text)


def _device_key(source: str) -> str | None:
    """The kernel name a mount or swap source refers to (``/dev/sdb1`` → ``sdb1``)."""
    if not source.startswith("/dev/"):
        return None
    real = os.path.realpath(source)  # /dev/disk/by-uuid/… and /dev/mapper/… are symlinks
    return os.path.basename(real)


def mount_uses(names: Iterable[str], mounts_text: str) -> list[str]:
    """Findings like ``"/dev/sdb1 is mounted on /data"`` for every line of ``mounts_text``
    (the format of ``/proc/mounts``) whose source is one of the kernel device ``names``."""
    wanted = set(names)
    found = []
    for line in mounts_text.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        source, where = _unescape_mount(parts[0]), _unescape_mount(parts[1])
        if _device_key(source) in wanted:
            found.append(f"{source} is mounted on {where}")
    return found


def mount_type(path: str | Path, mounts_text: str) -> str | None:
    """The filesystem type (``zfs``, ``ext4``…) of the mount holding ``path``, by the longest
    mount point in ``mounts_text`` (``/proc/mounts`` format) that contains it; None if none."""
    where = os.path.realpath(path)
    best, fstype = -1, None
    for line in mounts_text.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        point = _unescape_mount(parts[1]).rstrip("/") or "/"
        inside = where == point or where.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= best:  # later lines mount over earlier ones
            best, fstype = len(point), parts[2]
    return fstype


def swap_uses(names: Iterable[str], swaps_text: str) -> list[str]:
    """Findings like ``"/dev/sdb2 is in use as swap"`` from ``/proc/swaps`` text."""
    wanted = set(names)
    found = []
    for line in swaps_text.splitlines()[1:]:  # the first line is the header
        parts = line.split()
        if parts and _device_key(_unescape_mount(parts[0])) in wanted:
            found.append(f"{parts[0]} is in use as swap")
    return found


def partitions(name: str, sys_class_block: str | Path = SYS_CLASS_BLOCK) -> list[str]:
    """Kernel names of the partitions of disk ``name`` (``sdb1``, ``nvme0n1p2``…), from the
    ``/sys/class/block/<name>/<name>N`` folders that have a ``partition`` file."""
    base = Path(sys_class_block) / name
    try:
        entries = sorted(base.iterdir())
    except OSError:
        return []
    return [e.name for e in entries if e.name.startswith(name) and (e / "partition").exists()]


def holder_uses(name: str, sys_class_block: str | Path = SYS_CLASS_BLOCK) -> list[str]:
    """Findings like ``"sdb is held by dm-0"``: devices stacked on ``name`` (LVM, dm-crypt,
    md, multipath) as listed in ``/sys/class/block/<name>/holders``."""
    try:
        holders = sorted(p.name for p in (Path(sys_class_block) / name / "holders").iterdir())
    except OSError:
        return []
    return [f"{name} is held by {h} (LVM, dm-crypt, md or multipath)" for h in holders]


def block_device_problems(
    name: str,
    *,
    dev_dir: str | Path = DEV_DIR,
    sys_class_block: str | Path = SYS_CLASS_BLOCK,
    mounts_text: str | None = None,
    swaps_text: str | None = None,
    blkid: str | None = "auto",
) -> list[str]:
    """Why writing to block device ``name`` (or any of its partitions) would destroy data in
    use: mounts, swap, holders and filesystem signatures. Empty when it looks unused.

    ``mounts_text``/``swaps_text`` default to ``/proc/mounts``/``/proc/swaps``; a device that
    cannot be read is reported too (its contents are unknown).
    """
    names = [name, *partitions(name, sys_class_block)]
    mounts = _read_text(PROC_MOUNTS) if mounts_text is None else mounts_text
    swaps = _read_text(PROC_SWAPS) if swaps_text is None else swaps_text
    problems = mount_uses(names, mounts) + swap_uses(names, swaps)
    for each in names:
        problems += holder_uses(each, sys_class_block)
        path = Path(dev_dir) / each
        if not path.exists():
            continue
        try:
            found = filesystem_signature(path, blkid=blkid)
        except OSError as err:
            problems.append(f"cannot read {path} to look for a filesystem ({err.strerror})")
            continue
        if found:
            problems.append(f"{path} holds {_article(found)} signature")
    return problems


def _article(found: str) -> str:
    return f"an {found}" if found[:1].lower() in "aeiou" else f"a {found}"


def is_zsim_file(path: str | Path) -> bool:
    """True for zsim's own data file: named ``zsim-calibrate.dat``, or laid out by an earlier
    ``zsim calibrate run`` (which leaves ``<file>.zsim-calibrate`` beside it)."""
    path = Path(path)
    return path.name == DATA_NAME or Path(f"{path}{MARKER_SUFFIX}").exists()


# ---------------------------------------------------------------- options


def _fail(problem: str, fix: str) -> ZsimError:
    return ZsimError(f"{problem}; {fix}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


def check_options(options: PlanOptions) -> None:
    """Raise :class:`ZsimError` naming the first resolved option that is wrong, and the fix.

    Expects every size resolved (not None), as in a :class:`Plan`.
    """
    o = options
    if o.kind not in KINDS:
        raise _fail(f"unknown kind {o.kind!r}", "use --kind single-disk or --kind pool")
    for key in ("size", "zone_bytes", "long_write_bytes"):
        value = getattr(o, key)
        if not _is_int(value) or value <= 0:
            raise _fail(f"{key} {value!r} must be a positive number of bytes", "give e.g. 4GiB")
    size, long_write = o.size or 0, o.long_write_bytes or 0  # positive ints: checked above
    if size < MIN_SIZE:
        raise _fail(
            f"size {format_size(size)} is too small",
            f"use at least {format_binary_size(MIN_SIZE)} (e.g. --size 4GiB)",
        )
    for key in ("zone_bytes", "long_write_bytes"):
        if getattr(o, key) > size:
            raise _fail(
                f"{key} {format_size(getattr(o, key))} is larger than size {format_size(size)}",
                f"make {key} at most the size",
            )
    for key in ("runtime_s", "ramp_s"):
        value = getattr(o, key)
        if not _is_number(value) or value < 0 or (key == "runtime_s" and value == 0):
            need = "more than 0" if key == "runtime_s" else "0 or more"
            raise _fail(f"{key} {value!r} is not a valid time", f"give a number of seconds, {need}")
    if not _is_int(o.long_write_segments) or o.long_write_segments < 1:
        raise _fail(
            f"long_write_segments {o.long_write_segments!r} must be a whole number ≥ 1",
            "use e.g. 8",
        )
    if long_write < o.long_write_segments * ALIGN:
        raise _fail(
            f"long_write_bytes {format_size(long_write)} is too small for "
            f"{o.long_write_segments} segments",
            f"give at least {o.long_write_segments} MiB or fewer segments",
        )
    zones = tuple(o.zones)
    if any(not _is_number(z) or not 0 <= z < 1 for z in zones):
        raise _fail(
            f"zones {list(zones)!r} must be fractions 0 ≤ f < 1 of the size",
            "give e.g. 0,0.2,0.4,0.6,0.8,0.95",
        )
    if len({_pct(z) for z in zones}) != len(zones):
        raise _fail(f"zones {list(zones)!r} repeat an offset", "give each zone once")
    for key in ("depths_4k", "depths_large"):
        depths = tuple(getattr(o, key))
        if any(not _is_int(d) or d < 1 for d in depths):
            raise _fail(f"{key} {list(depths)!r} must be whole numbers ≥ 1", "use e.g. 1,4,32")
        if len(set(depths)) != len(depths):
            raise _fail(f"{key} {list(depths)!r} repeat a depth", "give each depth once")
    sizes = tuple(o.block_sizes)
    if any(not _is_int(b) or b <= 0 or b % 512 for b in sizes):
        raise _fail(
            f"block_sizes {list(sizes)!r} must be positive multiples of 512 bytes",
            "use e.g. 4K,64K,1M",
        )
    if len(set(sizes)) != len(sizes):
        raise _fail(f"block_sizes {list(sizes)!r} repeat a size", "give each block size once")
    if any(b > size for b in sizes):
        raise _fail(f"block size {max(sizes)} is larger than size {size}", "use a larger size")
    for key in ("rate_bw", "rate_iops"):
        value = getattr(o, key)
        if not _is_int(value) or value < 0:
            raise _fail(f"{key} {value!r} must be a whole number ≥ 0", "use 0 for no limit")
    if not isinstance(o.ioengine, str) or not _ENGINE.match(o.ioengine):
        raise _fail(f"ioengine {o.ioengine!r} is not a fio engine name", "use e.g. libaio")
    for key in ("direct", "include_writes", "include_dd", "allow_destroy"):
        if not isinstance(getattr(o, key), bool):
            raise _fail(f"{key} {getattr(o, key)!r} must be true or false", "give a boolean")


def _aligned(value: int) -> int:
    return value // ALIGN * ALIGN


def _resolve(
    options: PlanOptions, *, target_type: str, device_size: int | None, ram: int
) -> tuple[PlanOptions, list[str]]:
    """``options`` with every size chosen and rounded; notes on what was changed."""
    o = options
    notes: list[str] = []
    if o.kind not in KINDS:
        raise _fail(f"unknown kind {o.kind!r}", "use --kind single-disk or --kind pool")
    pool = o.kind == "pool"
    floor = -(-2 * ram // ALIGN) * ALIGN if pool else 0  # 2 × RAM, rounded up to 1 MiB
    rates: dict[str, Any] = {}
    for key in ("rate_bw", "rate_iops"):
        value = getattr(o, key)
        if _is_number(value) and value >= 0 and not _is_int(value):
            value = round(value)
        rates[key] = value
    for key in ("size", "zone_bytes", "long_write_bytes"):
        value = getattr(o, key)
        if value is not None and (not _is_int(value) or value <= 0):
            raise _fail(f"{key} {value!r} must be a positive number of bytes", "give e.g. 4GiB")
    size = o.size
    if size is None:
        size = device_size if target_type == "block" and device_size else DEFAULT_FILE_SIZE
    if target_type == "block" and device_size is not None and size > device_size:
        raise _fail(
            f"size {format_size(size)} is larger than the device ({format_size(device_size)})",
            "give a smaller --size or omit it to use the whole device",
        )
    if size < floor:
        notes.append(
            f"size raised from {format_size(size)} to {format_size(floor)} (2 × RAM) so that "
            "the ARC cannot hold the data"
        )
        size = floor
    if size < MIN_SIZE:
        raise _fail(
            f"size {format_size(size)} is too small",
            f"use at least {format_binary_size(MIN_SIZE)} (e.g. --size 4GiB)",
        )
    size = _aligned(size)
    zone_bytes = o.zone_bytes if o.zone_bytes is not None else min(ZONE_MAX, size // 20)
    zone_bytes = max(ALIGN, _aligned(zone_bytes))
    if pool:
        zone_bytes = max(zone_bytes, min(size, floor))
    long_write = o.long_write_bytes
    if long_write is None:
        long_write = min(size, max(LONG_WRITE_MAX, floor))
    if long_write < floor:
        notes.append(
            f"long write raised from {format_size(long_write)} to "
            f"{format_size(min(size, floor))} (2 × RAM)"
        )
        long_write = min(size, floor)
    long_write = _aligned(long_write)
    times: dict[str, Any] = {
        k: float(getattr(o, k)) for k in ("runtime_s", "ramp_s") if _is_number(getattr(o, k))
    }
    resolved = replace(
        o,
        size=size,
        zone_bytes=zone_bytes,
        long_write_bytes=long_write,
        zones=tuple(float(z) if _is_number(z) else z for z in o.zones),
        **times,
        depths_4k=tuple(o.depths_4k),
        depths_large=tuple(o.depths_large),
        block_sizes=tuple(o.block_sizes),
        **rates,
    )
    check_options(resolved)
    return resolved, notes


# ---------------------------------------------------------------- the plan


def _pct(fraction: float) -> str:
    """0.2 → "20", 0.95 → "95", 0.333 → "33p3": a zone's label in step names."""
    return f"{fraction * 100:.1f}".rstrip("0").rstrip(".").replace(".", "p").zfill(2)


def _bs_label(nbytes: int) -> str:
    """4096 → "4K", 1048576 → "1M" (fio's spelling)."""
    for unit, scale in (("M", MiB), ("K", KiB)):
        if nbytes % scale == 0:
            return f"{nbytes // scale}{unit}"
    return f"{nbytes}B"


def make_plan(target: str | os.PathLike[str], options: PlanOptions | None = None) -> Plan:
    """Plan the calibration runs for ``target`` — a block device, a file, or a directory
    (zsim creates ``DIR/zsim-calibrate.dat``; for ``kind="pool"`` the mount point of a
    dataset). Reads only stat, sysfs, ``/proc`` and the device's first 256 KiB.

    Raises :class:`ZsimError` for bad options, a missing target, a pool target that is not a
    directory, writes to a device that holds a filesystem or is in use, and writes to an
    existing file that is not zsim's own — the last two unless ``options.allow_destroy``.
    """
    options = options or PlanOptions()
    path = Path(os.path.abspath(os.fspath(target)))
    ram = read_ram_bytes(PROC_MEMINFO)
    target_type, data_path, device = _inspect_target(path)
    if options.kind == "pool" and target_type != "directory":
        raise _fail(
            f"{path} is a {'block device' if target_type == 'block' else 'file'}, but "
            "--kind pool needs a directory",
            "give the mount point of a dataset on the pool (e.g. /tank/bench)",
        )
    device_size = device.size if device else None
    if target_type == "block" and device_size is None:
        device_size = _seek_size(path)
    if target_type == "block" and device_size == 0:
        raise _fail(
            f"{path} has no capacity (size 0: an unattached loop device or a drive without media)",
            "choose another device",
        )
    resolved, notes = _resolve(options, target_type=target_type, device_size=device_size, ram=ram)
    size = resolved.size or 0  # resolved: never None
    # A file that exists and is not zsim's is overwritten by the prepare step at least.
    foreign = target_type == "file" and data_path.exists() and not is_zsim_file(data_path)
    if foreign and not resolved.allow_destroy:
        raise _fail(
            f"{data_path} exists and is not zsim's own file, and the plan overwrites it",
            "pass --destroy-data to overwrite it, or give a new file or a directory",
        )
    writes = resolved.include_writes
    warnings: list[str] = []
    if target_type == "block" and writes:
        problems = _block_target_problems(path, device)
        if problems and not resolved.allow_destroy:
            raise _fail(
                f"refusing to plan writes to {path}: " + "; ".join(problems),
                "pass --destroy-data to overwrite it, or choose another device",
            )
        warnings.append(f"writes to {path} will destroy its data")
        warnings += [f"{path}: {p} (overridden by --destroy-data)" for p in problems]
    elif foreign:
        warnings.append(f"writes to {data_path} will destroy its data")
    if target_type != "block":
        warnings += _space_warning(data_path, size)
    fstype = mount_type(path, _read_text(PROC_MOUNTS))
    if resolved.kind == "pool" and fstype is not None and fstype != "zfs":
        warnings.append(
            f"{path} is on {fstype}, not ZFS: --kind pool is meant for the mount point of a "
            "ZFS dataset"
        )
    destructive = (target_type == "block" and writes) or foreign
    steps = _steps(resolved, target_type, str(data_path), destructive)
    notes += _notes(resolved, ram, target_type)
    uname = platform.uname()
    return Plan(
        target=str(path),
        target_type=target_type,
        data_path=str(data_path),
        options=resolved,
        steps=tuple(steps),
        rotational=device.rotational if device else None,
        device_name=device.name if device else None,
        device_size=device_size,
        ram_bytes=ram,
        created=datetime.now().astimezone().isoformat(timespec="seconds"),
        zsim_version=zsim.__version__,
        hostname=platform.node(),
        uname=" ".join((uname.system, uname.node, uname.release, uname.version, uname.machine)),
        warnings=tuple(warnings),
        notes=tuple(notes),
    )


def _inspect_target(path: Path) -> tuple[str, Path, BlockDevice | None]:
    """(target_type, data_path, backing block device or None) for ``path``."""
    try:
        info = path.stat()
    except FileNotFoundError:
        parent = path.parent
        if not parent.is_dir():
            raise _fail(
                f"{path} does not exist and neither does its folder {parent}",
                "give an existing device, directory, or a new file in an existing directory",
            ) from None
        dev = parent.stat().st_dev
        return "file", path, block_device(os.major(dev), os.minor(dev), SYS_DEV_BLOCK)
    except OSError as err:
        raise _fail(
            f"cannot examine {path} ({err.strerror})", "check the path and permissions"
        ) from None
    if stat.S_ISBLK(info.st_mode):
        rdev = info.st_rdev
        return "block", path, block_device(os.major(rdev), os.minor(rdev), SYS_DEV_BLOCK)
    device = block_device(os.major(info.st_dev), os.minor(info.st_dev), SYS_DEV_BLOCK)
    if stat.S_ISDIR(info.st_mode):
        data = path / DATA_NAME
        if data.exists() and not data.is_file():
            raise _fail(
                f"{data} exists and is not a regular file", "remove it or pick another directory"
            )
        return "directory", data, device
    if stat.S_ISREG(info.st_mode):
        return "file", path, device
    raise _fail(
        f"{path} is neither a block device, a regular file nor a directory",
        "give a disk (/dev/sdX), a file or a directory",
    )


def _block_target_problems(path: Path, device: BlockDevice | None) -> list[str]:
    """:func:`block_device_problems` of the target; by its own path when sysfs lacks it."""
    if device is not None:
        return block_device_problems(device.name)
    mounts = mount_uses([os.path.basename(os.path.realpath(path))], _read_text(PROC_MOUNTS))
    try:
        found = filesystem_signature(path)
    except OSError as err:
        return [*mounts, f"cannot read {path} to look for a filesystem ({err.strerror})"]
    return mounts + ([f"{path} holds {_article(found)} signature"] if found else [])


def _seek_size(path: Path) -> int | None:
    try:
        with open(path, "rb") as handle:
            return handle.seek(0, os.SEEK_END)
    except OSError:
        return None


def _space_warning(data_path: Path, size: int) -> list[str]:
    try:
        free = shutil.disk_usage(data_path.parent).free
        have = data_path.stat().st_size if data_path.exists() else 0
    except OSError:
        return []
    if free + have < size:
        return [
            f"{data_path.parent} has {format_size(free)} free but the plan lays out "
            f"{format_size(size)}; free space or give a smaller --size"
        ]
    return []


def _notes(o: PlanOptions, ram: int, target_type: str) -> list[str]:
    notes = []
    size = o.size or 0  # resolved: never None
    if o.kind == "pool":
        notes.append(
            "pool kind: no zone, short-seek or cache-hit steps — a pool spreads data over many "
            "disks and has no single LBA space; the sequential steps cover the whole region"
        )
        notes.append(
            f"direct=1 is set, but ZFS before 2.3 ignores O_DIRECT and reads through the ARC; "
            f"every job's region is therefore ≥ 2 × RAM ({format_size(2 * ram)}), so the ARC "
            "can hold at most half of it"
        )
        if o.include_dd:
            notes.append(
                "dd writes zeros from /dev/zero: on a dataset with compression they measure "
                "little; the fio jobs write incompressible data"
            )
    elif not o.direct and size < 2 * ram:
        notes.append(
            f"direct=0 and size {format_size(size)} < 2 × RAM: reads may come from the page cache"
        )
    if (o.rate_bw or o.rate_iops) and o.include_dd:
        notes.append("the rate limits apply to the fio jobs only; dd runs at full speed")
    if target_type != "block":
        notes.append(f"the prepare step lays out {format_size(size)} so that reads read real data")
    return notes


def _steps(o: PlanOptions, target_type: str, data: str, destructive: bool) -> list[Step]:
    """The steps in run order: prepare, reads, then writes (so a stopped run has its reads)."""
    assert o.size is not None and o.zone_bytes is not None and o.long_write_bytes is not None
    size, zone = o.size, o.zone_bytes
    pool = o.kind == "pool"
    reads: list[Step] = []
    writes: list[Step] = []
    if target_type != "block":
        reads.append(
            Step(
                name="prepare",
                tool="fio",
                purpose="prepare",
                destructive=destructive,
                description=f"lay out {format_binary_size(size)} with sequential 1M writes",
                jobfile="jobs/prepare.fio",
                rw="write",
                bs=MiB,
                iodepth=4,
                offset=0,
                size=size,
            )
        )

    def fio(name: str, purpose: str, description: str, **shape: Any) -> Step:
        timed = shape.pop("timed", True)
        step = Step(
            name=name,
            tool="fio",
            purpose=purpose,
            destructive=destructive and shape["rw"] in ("write", "randwrite"),
            description=description,
            jobfile=f"jobs/{name}.fio",
            timed=timed,
            **shape,
        )
        (writes if step.writes else reads).append(step)
        return step

    if pool:
        for rw, word in (("read", "read"), ("write", "write")):
            if rw == "write" and not o.include_writes:
                continue
            fio(
                f"seq{rw}-1m",
                f"zone-{word}",
                f"sequential 1M {word} of the whole region, QD4",
                rw=rw,
                bs=MiB,
                iodepth=4,
                offset=0,
                size=size,
            )
    else:
        for rw in ("read", "write"):
            if rw == "write" and not o.include_writes:
                continue
            for fraction in o.zones:
                offset = min(_aligned(int(fraction * size)), size - zone)
                fio(
                    f"zone{rw}-{_pct(fraction)}",
                    f"zone-{rw}",
                    f"sequential 1M {rw} at {fraction * 100:g}% = "
                    f"{format_binary_size(offset)}, QD4",
                    rw=rw,
                    bs=MiB,
                    iodepth=4,
                    offset=offset,
                    size=zone,
                )
    for rw in ("randread", "randwrite"):
        if rw == "randwrite" and not o.include_writes:
            continue
        word = rw[4:]
        for bs in o.block_sizes:
            depths = o.depths_4k if bs < LARGE_BS else o.depths_large
            for depth in depths:
                fio(
                    f"{rw}-{_bs_label(bs).lower()}-qd{depth}",
                    "random",
                    f"random {_bs_label(bs)} {word}, QD{depth}",
                    rw=rw,
                    bs=bs,
                    iodepth=depth,
                    offset=0,
                    size=size,
                )
    if not pool:
        short = max(ALIGN, _aligned(size // 100))
        fio(
            "short-seek",
            "short-seek",
            f"random 4K read over the first 1% = {format_binary_size(short)}, QD1",
            rw="randread",
            bs=4096,
            iodepth=1,
            offset=0,
            size=short,
        )
        fio(
            "cache-hit",
            "cache-hit",
            f"sequential 4K read over {format_binary_size(min(CACHE_HIT_BYTES, size))} from "
            f"the drive's read-ahead, QD1",
            rw="read",
            bs=4096,
            iodepth=1,
            offset=0,
            size=min(CACHE_HIT_BYTES, size),
        )
    if o.include_writes:
        fio(
            "sync-latency",
            "sync-latency",
            "4K O_SYNC writes with psync, QD1",
            rw="write",
            bs=4096,
            iodepth=1,
            offset=0,
            size=zone,
        )
        fio(
            "long-write",
            "long-write",
            f"sequential 1M write of {format_binary_size(o.long_write_bytes)} in "
            f"{o.long_write_segments} segments, write-cache cliff",
            rw="write",
            bs=MiB,
            iodepth=4,
            offset=0,
            size=o.long_write_bytes,
            timed=False,
            segments=o.long_write_segments,
        )
    if o.include_dd:
        # a pool's dd covers the whole region (≥ 2 × RAM) like every other pool job
        count = (size if pool else min(size, DD_MAX_BYTES)) // MiB
        direct_in = ("iflag=direct",) if o.direct else ()
        direct_out = ("oflag=direct",) if o.direct else ()
        reads.append(
            Step(
                name="dd-read",
                tool="dd",
                purpose="dd-read",
                destructive=False,
                description=f"dd read of {format_binary_size(count * MiB)}",
                argv=("dd", f"if={data}", "of=/dev/null", "bs=1M", f"count={count}", *direct_in),
                rw="read",
                bs=MiB,
                size=count * MiB,
            )
        )
        if o.include_writes:
            writes.append(
                Step(
                    name="dd-write",
                    tool="dd",
                    purpose="dd-write",
                    destructive=destructive,
                    description=f"dd write of {format_binary_size(count * MiB)} from /dev/zero",
                    # notrunc: dd would otherwise cut a file target down to what it wrote
                    argv=(
                        "dd",
                        "if=/dev/zero",
                        f"of={data}",
                        "bs=1M",
                        f"count={count}",
                        *direct_out,
                        "conv=fsync,notrunc",
                    ),
                    rw="write",
                    bs=MiB,
                    size=count * MiB,
                )
            )
    return reads + writes


# ---------------------------------------------------------------- fio job files


def _fio_value(text: str) -> str:
    """A fio filename: ':' separates several files, so a literal ':' is written '\\:'."""
    return text.replace(":", "\\:")


def _fio_time(seconds: float) -> str:
    """fio times: whole seconds as ``20``, fractions as milliseconds (``1500ms``)."""
    if float(seconds).is_integer():
        return str(int(seconds))
    return f"{round(seconds * 1000)}ms"


def rate_cap_iops(options: PlanOptions, bs: int) -> int | None:
    """The ``rate_iops=`` a job of ``bs`` bytes gets when an IOPS cap is set: the IOPS cap,
    or the bandwidth cap / bs when that is tighter (at least 1). None: no IOPS cap (a
    bandwidth cap alone is written as fio's ``rate=``)."""
    if not options.rate_iops:
        return None
    cap = options.rate_iops
    if options.rate_bw and bs > 0:
        cap = min(cap, options.rate_bw // bs)
    return max(1, int(cap))


def fio_jobfile_text(plan: Plan, step: Step) -> str:
    """The fio job file of ``step``: a ``[global]`` section for the target and one job section
    named after the step (the long write: one stonewalled section per segment)."""
    if step.tool != "fio":
        raise ZsimError(f"step {step.name} runs {step.tool}, not fio; it has no job file")
    o = plan.options
    lines = [
        f"; zsim calibration step {step.name}: {step.description}",
        f"; purpose {step.purpose}; plan for {plan.target} ({plan.target_type}), "
        f"zsim {plan.zsim_version}, {plan.created}",
    ]
    if step.destructive:
        lines.append(f"; WARNING: writes to {plan.data_path} and destroys the data there")
    lines += [
        "[global]",
        f"ioengine={o.ioengine}",
        f"direct={int(o.direct)}",
        f"filename={_fio_value(plan.data_path)}",
        "group_reporting=1",
    ]
    if step.timed:
        lines += ["time_based=1", f"runtime={_fio_time(o.runtime_s)}"]
        if o.ramp_s:
            lines.append(f"ramp_time={_fio_time(o.ramp_s)}")
    if step.purpose != "prepare":  # laying the file out is not a measurement: full speed
        cap = rate_cap_iops(o, step.bs)
        if cap is not None:
            lines.append(f"rate_iops={cap}")
        elif o.rate_bw:
            lines.append(f"rate={o.rate_bw}")
    if step.purpose == "long-write":
        # Stonewalled segments run one after another and each starts a new reporting group,
        # so fio reports every segment's bandwidth on its own: the write-cache cliff is the
        # segment where bandwidth drops.
        # Segments are whole MiB; the last one takes what is left over.
        segment = step.size // step.segments // ALIGN * ALIGN
        for index in range(step.segments):
            last = index == step.segments - 1
            lines += [
                "",
                f"[{step.name}-seg{index}]",
                f"rw={step.rw}",
                f"bs={step.bs}",
                f"iodepth={step.iodepth}",
                f"offset={step.offset + index * segment}",
                f"size={step.size - index * segment if last else segment}",
                "stonewall",
            ]
        return "\n".join(lines) + "\n"
    lines += [
        "",
        f"[{step.name}]",
        f"rw={step.rw}",
        f"bs={step.bs}",
        f"iodepth={step.iodepth}",
        f"offset={step.offset}",
        f"size={step.size}",
    ]
    if step.rw.startswith("rand"):
        # time-based random I/O: no map of visited blocks, a fresh seed per run, and a
        # generator that reaches every block of a large device
        lines += ["norandommap=1", "randrepeat=0", "random_generator=tausworthe64"]
    if step.purpose == "sync-latency":
        lines += ["ioengine=psync", "sync=1"]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- run.sh


def run_script_text(plan: Plan) -> str:
    """``run.sh``: bash that runs every step in order and skips steps already done."""
    q = shlex.quote
    o = plan.options
    destructive = [s for s in plan.steps if s.destructive]
    lines = [
        "#!/usr/bin/env bash",
        f"# zsim calibration plan: {len(plan.steps)} steps measuring {plan.target} "
        f"({plan.target_type}, kind {o.kind}).",
        f"# Written by zsim {plan.zsim_version} on {plan.hostname} at {plan.created}.",
        "#",
        "# What it does: runs the fio jobs in jobs/ and the dd commands below in order, storing",
        "# each result as results/<step>.json (fio --output-format=json) or results/<step>.dd.txt",
        "# (dd's report). A step whose result exists is skipped, so a stopped run resumes.",
        "# `zsim calibrate run <this folder>` does the same with progress and fuller results.",
        f"# Timed steps take about {format_time(plan.timed_seconds)}; the long and dd writes "
        "come on top.",
        "#",
    ]
    if destructive:
        lines += [
            f"# WARNING: {len(destructive)} steps WRITE to {plan.data_path} and DESTROY the "
            "data on it.",
            "# Set ZSIM_CONFIRM_DESTROY to that path to run without being asked.",
        ]
    else:
        lines.append(f"# It writes only to zsim's own data ({plan.data_path}), if at all.")
    lines += [
        "",
        "set -euo pipefail",
        'cd "$(dirname "$0")"',
        "mkdir -p results",
        'FIO="${FIO:-fio}"',
        'DD="${DD:-dd}"',
        "",
    ]
    if destructive:
        target = q(plan.data_path)
        lines += [
            f'if [ "${{ZSIM_CONFIRM_DESTROY:-}}" != {target} ]; then',
            f"  echo 'This plan overwrites '{target}' and destroys its data.' >&2",
            "  answer=''",
            f"  if [ -t 0 ]; then read -r -p 'Type '{target}' to go on: ' answer; fi",
            f'  if [ "$answer" != {target} ]; then',
            f"    echo 'not confirmed; set ZSIM_CONFIRM_DESTROY='{target}' to run' >&2",
            "    exit 1",
            "  fi",
            "fi",
            "",
        ]
    lines += [
        "done_already() {  # a result file that exists and does not record a failure",
        '  [ -s "$1" ] && ! grep -q \'"returncode": -\\?[1-9]\' "$1"',
        "}",
        "",
        "run_fio() {  # step name",
        '  if done_already "results/$1.json"; then echo "skip $1"; return 0; fi',
        '  echo "run  $1"',
        '  "$FIO" --output-format=json --output="results/.$1.json.part" "jobs/$1.fio"',
        '  mv "results/.$1.json.part" "results/$1.json"',
        "}",
        "",
        "run_dd() {  # step name, dd arguments",
        "  local name=$1",
        "  shift",
        '  if [ -s "results/$name.dd.txt" ]; then echo "skip $name"; return 0; fi',
        '  echo "run  $name"',
        '  "$DD" "$@" 2> "results/.$name.dd.txt.part"',
        '  mv "results/.$name.dd.txt.part" "results/$name.dd.txt"',
        "}",
        "",
    ]
    for step in plan.steps:
        lines.append(f"# {step.name}: {step.description}")
        if step.tool == "fio":
            lines.append(f"run_fio {q(step.name)}")
        else:
            lines.append(f"run_dd {q(step.name)} " + " ".join(q(a) for a in step.argv[1:]))
    lines += ["", 'echo "all steps done; results in $(pwd)/results"', ""]
    return "\n".join(lines)


# ---------------------------------------------------------------- plan.toml


def _toml_string(text: str) -> str:
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


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise ZsimError(f"cannot write {value!r} to {PLAN_FILE}")  # a bug, not bad input


def _toml_lines(table: Mapping[str, Any]) -> list[str]:
    """``key = value`` lines; None values are left out (TOML has no null)."""
    return [f"{key} = {_toml_value(value)}" for key, value in table.items() if value is not None]


_PLAN_KEYS = (
    "target",
    "target_type",
    "data_path",
    "rotational",
    "device_name",
    "device_size",
    "ram_bytes",
    "created",
    "zsim_version",
    "hostname",
    "uname",
    "warnings",
    "notes",
)


def plan_toml_text(plan: Plan) -> str:
    """``plan.toml``: ``[plan]``, ``[plan.options]`` and one ``[[step]]`` per step."""
    head = {"format": PLAN_FORMAT} | {key: getattr(plan, key) for key in _PLAN_KEYS}
    lines = [
        f"# zsim calibration plan for {plan.target}: {len(plan.steps)} steps.",
        "# Run it with `zsim calibrate run <this folder>` (or bash run.sh). Sizes in bytes,",
        "# times in seconds, rates in bytes/s. Written by zsim; edit with care.",
        "",
        "[plan]",
        *_toml_lines(head),
        "",
        "[plan.options]",
        *_toml_lines({f.name: getattr(plan.options, f.name) for f in fields(PlanOptions)}),
    ]
    for step in plan.steps:
        lines += [
            "",
            "[[step]]",
            *_toml_lines({f.name: getattr(step, f.name) for f in fields(Step)}),
        ]
    return "\n".join(lines) + "\n"


def write_plan(plan: Plan, out_dir: str | os.PathLike[str]) -> Path:
    """Write ``plan.toml``, ``jobs/<step>.fio`` and ``run.sh`` into ``out_dir`` (created if
    needed; job files of steps no longer in the plan are removed) and return ``out_dir``.

    Refuses a folder that already holds results of a run, so results of two plans never mix.
    """
    out = Path(out_dir)
    results = out / "results"
    if results.is_dir() and any(p.suffix in (".json", ".txt") for p in results.iterdir()):
        raise _fail(
            f"{out} already holds results of a calibration run",
            f"choose a new --out folder, or delete {results} first",
        )
    if out.exists() and not out.is_dir():
        raise _fail(f"{out} exists and is not a folder", "choose another --out folder")
    jobs = out / "jobs"
    try:
        jobs.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _fail(
            f"cannot create {jobs} ({err.strerror})", "choose a writable --out folder"
        ) from None
    wanted = set()
    for step in plan.steps:
        if step.tool == "fio" and step.jobfile:
            wanted.add(Path(step.jobfile).name)
            atomic_write_text(out / step.jobfile, fio_jobfile_text(plan, step))
    for stale in jobs.glob("*.fio"):
        if stale.name not in wanted:
            stale.unlink()
    script = out / "run.sh"
    atomic_write_text(script, run_script_text(plan))
    script.chmod(0o755)
    atomic_write_text(out / PLAN_FILE, plan_toml_text(plan))
    return out


def read_plan(plan_dir: str | os.PathLike[str]) -> Plan:
    """Read and validate ``plan_dir/plan.toml``; :class:`ZsimError` naming the file and the
    problem on anything missing, mistyped or unknown."""
    path = Path(plan_dir) / PLAN_FILE
    where = str(path)
    if not path.is_file():
        raise _fail(
            f"{where} does not exist",
            "give the folder that `zsim calibrate plan --out` wrote",
        )
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise _fail(f"{where} is not valid TOML ({err})", _REPLAN) from None
    except OSError as err:
        raise _fail(f"cannot read {where} ({err.strerror})", "check the permissions") from None
    try:
        return _plan_from_dict(data)
    except ZsimError as err:
        raise ZsimError(f"{where}: {err}") from None


def _take(
    table: Mapping[str, Any], key: str, kind: Any, where: str, *, optional: bool = False
) -> Any:
    if key not in table:
        if optional:
            return None
        raise _fail(f"{where} has no {key!r}", _REPLAN)
    value = table[key]
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if kind is float:
        ok = _is_number(value)
    if not ok:
        raise _fail(f"{where}: {key} = {value!r} has the wrong type", _REPLAN)
    return value


def _no_unknown(table: Mapping[str, Any], known: Iterable[str], where: str) -> None:
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise _fail(f"{where} has unknown keys {unknown}", "remove them or " + _REPLAN)


def _plan_from_dict(data: Mapping[str, Any]) -> Plan:
    _no_unknown(data, ("plan", "step"), "the file")
    head = _take(data, "plan", dict, "the file")
    if head.get("format") != PLAN_FORMAT:
        raise _fail(
            f"[plan] format = {head.get('format')!r}, this zsim reads format {PLAN_FORMAT}",
            _REPLAN,
        )
    _no_unknown(head, ("format", "options", *_PLAN_KEYS), "[plan]")
    values: dict[str, Any] = {}
    for key in (
        "target",
        "target_type",
        "data_path",
        "created",
        "zsim_version",
        "hostname",
        "uname",
    ):
        values[key] = _take(head, key, str, "[plan]")
    if values["target_type"] not in TARGET_TYPES:
        raise _fail(f"[plan] target_type {values['target_type']!r} is unknown", _REPLAN)
    values["rotational"] = _take(head, "rotational", bool, "[plan]", optional=True)
    values["device_name"] = _take(head, "device_name", str, "[plan]", optional=True)
    values["device_size"] = _take(head, "device_size", int, "[plan]", optional=True)
    values["ram_bytes"] = _take(head, "ram_bytes", int, "[plan]")
    for key in ("warnings", "notes"):
        items = _take(head, key, list, "[plan]", optional=True) or []
        if not all(isinstance(i, str) for i in items):
            raise _fail(f"[plan] {key} must be a list of strings", _REPLAN)
        values[key] = tuple(items)
    options = _options_from_dict(_take(head, "options", dict, "[plan]"))
    raw_steps = data.get("step", [])
    if not isinstance(raw_steps, list) or not raw_steps:
        raise _fail("the plan has no [[step]] tables", _REPLAN)
    steps = tuple(_step_from_dict(raw, index) for index, raw in enumerate(raw_steps, 1))
    seen: set[str] = set()
    for step in steps:
        if step.name in seen:
            raise _fail(f"step name {step.name!r} appears twice", _REPLAN)
        seen.add(step.name)
    return Plan(options=options, steps=steps, **values)


def _options_from_dict(table: Mapping[str, Any]) -> PlanOptions:
    where = "[plan.options]"
    _no_unknown(table, (f.name for f in fields(PlanOptions)), where)
    kinds: dict[str, Any] = {
        "kind": str,
        "size": int,
        "runtime_s": float,
        "ramp_s": float,
        "zones": list,
        "zone_bytes": int,
        "depths_4k": list,
        "depths_large": list,
        "block_sizes": list,
        "long_write_bytes": int,
        "long_write_segments": int,
        "rate_bw": int,
        "rate_iops": int,
        "ioengine": str,
        "direct": bool,
        "include_writes": bool,
        "include_dd": bool,
        "allow_destroy": bool,
    }
    values: dict[str, Any] = {}
    for key, kind in kinds.items():
        value = _take(table, key, kind, where)
        values[key] = tuple(value) if isinstance(value, list) else value
    options = PlanOptions(**values)
    check_options(options)
    return options


def _step_from_dict(raw: Any, index: int) -> Step:
    where = f"[[step]] number {index}"
    if not isinstance(raw, dict):
        raise _fail(f"{where} is not a table", _REPLAN)
    _no_unknown(raw, (f.name for f in fields(Step)), where)
    name = _take(raw, "name", str, where)
    if not _NAME.match(name):
        raise _fail(
            f"{where}: step name {name!r} has characters outside A-Z a-z 0-9 . _ -", _REPLAN
        )
    where = f"step {name!r}"
    tool = _take(raw, "tool", str, where)
    purpose = _take(raw, "purpose", str, where)
    if tool not in TOOLS:
        raise _fail(f"{where}: tool {tool!r} is not one of {', '.join(TOOLS)}", _REPLAN)
    if purpose not in PURPOSES:
        raise _fail(f"{where}: purpose {purpose!r} is unknown", _REPLAN)
    jobfile = _take(raw, "jobfile", str, where, optional=True)
    argv = tuple(_take(raw, "argv", list, where, optional=True) or ())
    if not all(isinstance(a, str) for a in argv):
        raise _fail(f"{where}: argv must be a list of strings", _REPLAN)
    if tool == "fio" and jobfile != f"jobs/{name}.fio":
        raise _fail(f"{where}: jobfile must be 'jobs/{name}.fio', not {jobfile!r}", _REPLAN)
    if tool == "dd" and (jobfile is not None or not argv or argv[0] != "dd"):
        raise _fail(f"{where}: a dd step needs argv starting with 'dd' and no jobfile", _REPLAN)
    values = {
        "name": name,
        "tool": tool,
        "purpose": purpose,
        "jobfile": jobfile,
        "argv": argv,
        "destructive": _take(raw, "destructive", bool, where),
        "description": _take(raw, "description", str, where, optional=True) or "",
        "rw": _take(raw, "rw", str, where, optional=True) or "",
        "timed": bool(_take(raw, "timed", bool, where, optional=True)),
    }
    for key, default in (("bs", 0), ("iodepth", 1), ("offset", 0), ("size", 0), ("segments", 1)):
        value = _take(raw, key, int, where, optional=True)
        value = default if value is None else value
        if value < 0 or (key in ("iodepth", "segments") and value < 1):
            raise _fail(f"{where}: {key} = {value} is out of range", _REPLAN)
        values[key] = value
    return Step(**values)


__all__ = [
    "DATA_NAME",
    "KINDS",
    "MARKER_SUFFIX",
    "PURPOSES",
    "BlockDevice",
    "Plan",
    "PlanOptions",
    "Step",
    "block_device",
    "block_device_problems",
    "check_options",
    "filesystem_signature",
    "fio_jobfile_text",
    "holder_uses",
    "is_zsim_file",
    "make_plan",
    "mount_type",
    "mount_uses",
    "partitions",
    "probe_signature",
    "read_plan",
    "read_ram_bytes",
    "run_script_text",
    "swap_uses",
    "write_plan",
]
