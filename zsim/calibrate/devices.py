"""Host and device facts, and the safety checks that keep a plan off data in use.

Facts: :func:`read_ram_bytes` (MemTotal) and :func:`block_device` (a device as sysfs describes
it, :class:`BlockDevice`). Safety: writes to a block device destroy its data, so
:func:`~zsim.calibrate.plan.make_plan` refuses to plan writes to a device (or a partition of it)
that holds a filesystem, is mounted, is swap or is held by another device (LVM, dm-crypt, md)
unless ``allow_destroy`` is set. The checks are plain functions of paths and texts
(:func:`probe_signature`, :func:`mount_uses`, :func:`swap_uses`, :func:`holder_uses`,
:func:`block_device_problems`) so that they can be tested on files.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import stat
import struct
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from zsim.calibrate.plan_types import DATA_NAME, FINGERPRINT_BYTES, MARKER_SUFFIX, TargetState
from zsim.units import KiB, MiB

PROC_MOUNTS = Path("/proc/self/mounts")
PROC_SWAPS = Path("/proc/swaps")
PROC_MEMINFO = Path("/proc/meminfo")
SYS_DEV_BLOCK = Path("/sys/dev/block")
SYS_CLASS_BLOCK = Path("/sys/class/block")
DEV_DIR = Path("/dev")


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


def read_text_or_empty(path: str | Path) -> str:
    """The file's text (undecodable bytes replaced), or "" when it cannot be read."""
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


def block_device_in_use(
    name: str,
    *,
    sys_class_block: str | Path = SYS_CLASS_BLOCK,
    mounts_text: str | None = None,
    swaps_text: str | None = None,
) -> list[str]:
    """Why block device ``name`` (or any of its partitions) is in use right now: mounted, swap,
    or held by another device. ``--destroy-data`` never overrides these: writing would corrupt
    a live filesystem. Empty when nothing uses it."""
    names = [name, *partitions(name, sys_class_block)]
    mounts = read_text_or_empty(PROC_MOUNTS) if mounts_text is None else mounts_text
    swaps = read_text_or_empty(PROC_SWAPS) if swaps_text is None else swaps_text
    problems = mount_uses(names, mounts) + swap_uses(names, swaps)
    for each in names:
        problems += holder_uses(each, sys_class_block)
    return problems


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
    use: mounts, swap, holders (:func:`block_device_in_use`) and filesystem signatures. Empty
    when it looks unused.

    ``mounts_text``/``swaps_text`` default to ``/proc/self/mounts``/``/proc/swaps``; a device
    that cannot be read is reported too (its contents are unknown).
    """
    problems = block_device_in_use(
        name, sys_class_block=sys_class_block, mounts_text=mounts_text, swaps_text=swaps_text
    )
    for each in [name, *partitions(name, sys_class_block)]:
        path = Path(dev_dir) / each
        if not path.exists():
            continue
        try:
            found = filesystem_signature(path, blkid=blkid)
        except OSError as err:
            problems.append(f"cannot read {path} to look for a filesystem ({err.strerror})")
            continue
        if found:
            problems.append(f"{path} holds {with_article(found)} signature")
    return problems


# ---------------------------------------------------------------- the target's state


def target_state(path: str | Path) -> TargetState:
    """The :class:`TargetState` of ``path`` now (``exists=False`` when it does not exist).
    Raises OSError when it exists but cannot be examined or read."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return TargetState(exists=False)
    block = stat.S_ISBLK(info.st_mode)
    if not (block or stat.S_ISREG(info.st_mode)):
        raise OSError(errno.EINVAL, "not a regular file or a block device", str(path))
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        digest.update(handle.read(FINGERPRINT_BYTES))
        size = handle.seek(0, os.SEEK_END) if block else info.st_size
    return TargetState(
        exists=True,
        size=size,
        dev=info.st_dev,
        ino=info.st_ino,
        rdev=info.st_rdev if block else 0,
        sha256=digest.hexdigest(),
    )


def target_changes(
    then: TargetState, now: TargetState, *, block: bool, identity_only: bool = False
) -> list[str]:
    """What differs between two states of a target, in words (empty: unchanged). A block
    device is identified by its device number (``rdev``; the /dev node may be re-created),
    a file by ``dev``/``ino``. ``identity_only`` compares only existence and identity (after
    zsim's own write was interrupted, size and content are zsim's half-done work)."""
    if then.exists != now.exists:
        return ["it was created" if now.exists else "it was deleted"]
    if not now.exists:
        return []
    changes = []
    if block and then.rdev != now.rdev:
        changes.append(
            f"it is another device now (number {os.major(then.rdev)}:{os.minor(then.rdev)} → "
            f"{os.major(now.rdev)}:{os.minor(now.rdev)})"
        )
    if not block and (then.dev, then.ino) != (now.dev, now.ino):
        changes.append("it is another file now (its device and inode number changed)")
    if identity_only:
        return changes
    if then.size != now.size:
        changes.append(f"its size changed from {then.size} to {now.size} bytes")
    if then.sha256 != now.sha256:
        changes.append(f"the content of its first {FINGERPRINT_BYTES // MiB} MiB changed")
    return changes


def with_article(found: str) -> str:
    """``found`` with "a" or "an" before it (by its first letter)."""
    return f"an {found}" if found[:1].lower() in "aeiou" else f"a {found}"


def is_zsim_file(path: str | Path) -> bool:
    """True for zsim's own data file: named ``zsim-calibrate.dat``, or laid out by an earlier
    ``zsim calibrate run`` (which leaves ``<file>.zsim-calibrate`` beside it)."""
    path = Path(path)
    return path.name == DATA_NAME or Path(f"{path}{MARKER_SUFFIX}").exists()
