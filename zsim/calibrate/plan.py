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

The vocabulary (constants, :class:`PlanOptions`, :class:`Step`, :class:`Plan`,
:func:`check_options`) lives in :mod:`.plan_types`, the host and device facts and safety
checks in :mod:`.devices`, the fio job files and ``run.sh`` in :mod:`.jobfiles` and
``plan.toml`` in :mod:`.plan_file`; this module makes plans and re-exports their public names.
"""

from __future__ import annotations

import os
import platform
import shutil
import stat
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from zsim.calibrate.devices import (
    DEV_DIR,
    PROC_MEMINFO,
    PROC_MOUNTS,
    PROC_SWAPS,
    SYS_CLASS_BLOCK,
    SYS_DEV_BLOCK,
    BlockDevice,
    block_device,
    block_device_in_use,
    block_device_problems,
    filesystem_signature,
    holder_uses,
    is_zsim_file,
    mount_type,
    mount_uses,
    partitions,
    probe_signature,
    read_ram_bytes,
    read_text_or_empty,
    swap_uses,
    target_changes,
    target_state,
    with_article,
)
from zsim.calibrate.jobfiles import fio_jobfile_text, rate_cap_iops, run_script_text
from zsim.calibrate.plan_file import (
    PLAN_FILE,
    PLAN_FORMAT,
    plan_toml_text,
    read_plan,
    write_plan,
)
from zsim.calibrate.plan_types import (
    ALIGN,
    DATA_NAME,
    KINDS,
    MARKER_SUFFIX,
    MIN_SIZE,
    PURPOSES,
    TARGET_TYPES,
    TOOLS,
    Plan,
    PlanOptions,
    Step,
    TargetState,
    check_options,
    is_int,
    is_number,
    plan_error,
    zone_label,
)
from zsim.units import GiB, KiB, MiB, binary_multiple, format_binary_size, format_size
from zsim.version import __version__

DEFAULT_FILE_SIZE = 4 * GiB
CACHE_HIT_BYTES = 256 * MiB
DD_MAX_BYTES = 4 * GiB
LONG_WRITE_MAX = 64 * GiB
ZONE_MAX = GiB
#: Block sizes below this use ``depths_4k``; this and larger use ``depths_large``.
LARGE_BS = 64 * KiB


# ---------------------------------------------------------------- options


def _aligned(value: int) -> int:
    return value // ALIGN * ALIGN


def _resolve(
    options: PlanOptions, *, target_type: str, device_size: int | None, ram: int
) -> tuple[PlanOptions, list[str]]:
    """``options`` with every size chosen and rounded; notes on what was changed."""
    o = options
    notes: list[str] = []
    if o.kind not in KINDS:
        raise plan_error(f"unknown kind {o.kind!r}", "use --kind single-disk or --kind pool")
    pool = o.kind == "pool"
    floor = -(-2 * ram // ALIGN) * ALIGN if pool else 0  # 2 × RAM, rounded up to 1 MiB
    rates: dict[str, Any] = {}
    for key in ("rate_bw", "rate_iops"):
        value = getattr(o, key)
        if is_number(value) and value >= 0 and not is_int(value):
            value = round(value)
        rates[key] = value
    for key in ("size", "zone_bytes", "long_write_bytes"):
        value = getattr(o, key)
        if value is not None and (not is_int(value) or value <= 0):
            raise plan_error(
                f"{key} {value!r} must be a positive number of bytes", "give e.g. 4GiB"
            )
    size = o.size
    if size is None:
        size = device_size if target_type == "block" and device_size else DEFAULT_FILE_SIZE
    if target_type == "block" and device_size is not None and size > device_size:
        raise plan_error(
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
        raise plan_error(
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
        k: float(getattr(o, k)) for k in ("runtime_s", "ramp_s") if is_number(getattr(o, k))
    }
    resolved = replace(
        o,
        size=size,
        zone_bytes=zone_bytes,
        long_write_bytes=long_write,
        zones=tuple(float(z) if is_number(z) else z for z in o.zones),
        **times,
        depths_4k=tuple(o.depths_4k),
        depths_large=tuple(o.depths_large),
        block_sizes=tuple(o.block_sizes),
        **rates,
    )
    check_options(resolved)
    return resolved, notes


# ---------------------------------------------------------------- the plan


def _bs_label(nbytes: int) -> str:
    """4096 → "4K", 1048576 → "1M" (fio's spelling), 512 → "512B"."""
    count, prefix = binary_multiple(nbytes)
    return f"{count}{prefix or 'B'}"


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
        raise plan_error(
            f"{path} is a {'block device' if target_type == 'block' else 'file'}, but "
            "--kind pool needs a directory",
            "give the mount point of a dataset on the pool (e.g. /tank/bench)",
        )
    device_size = device.size if device else None
    if target_type == "block" and device_size is None:
        device_size = _seek_size(path)
    if target_type == "block" and device_size == 0:
        raise plan_error(
            f"{path} has no capacity (size 0: an unattached loop device or a drive without media)",
            "choose another device",
        )
    resolved, notes = _resolve(options, target_type=target_type, device_size=device_size, ram=ram)
    size = resolved.size or 0  # resolved: never None
    # A file that exists and is not zsim's is overwritten by the prepare step at least.
    foreign = target_type == "file" and data_path.exists() and not is_zsim_file(data_path)
    if foreign and not resolved.allow_destroy:
        raise plan_error(
            f"{data_path} exists and is not zsim's own file, and the plan overwrites it",
            "pass --destroy-data to overwrite it, or give a new file or a directory",
        )
    writes = resolved.include_writes
    warnings: list[str] = []
    if target_type == "block" and writes:
        in_use = _block_target_in_use(path, device)
        if in_use:
            raise plan_error(
                f"refusing to plan writes to {path}: " + "; ".join(in_use),
                "unmount it, swapoff it or stop what holds it, or choose another device "
                "(--destroy-data does not override a device in use)",
            )
        problems = _block_target_problems(path, device)
        if problems and not resolved.allow_destroy:
            raise plan_error(
                f"refusing to plan writes to {path}: " + "; ".join(problems),
                "pass --destroy-data to overwrite it, or choose another device",
            )
        warnings.append(f"writes to {path} will destroy its data")
        warnings += [f"{path}: {p} (overridden by --destroy-data)" for p in problems]
    elif foreign:
        warnings.append(f"writes to {data_path} will destroy its data")
    if target_type != "block":
        warnings += _space_warning(data_path, size)
    fstype = mount_type(path, read_text_or_empty(PROC_MOUNTS))
    if resolved.kind == "pool" and fstype is not None and fstype != "zfs":
        warnings.append(
            f"{path} is on {fstype}, not ZFS: --kind pool is meant for the mount point of a "
            "ZFS dataset"
        )
    destructive = (target_type == "block" and writes) or foreign
    steps = _steps(resolved, target_type, str(data_path), destructive)
    notes += _notes(resolved, ram, target_type)
    uname = platform.uname()
    try:
        state = target_state(data_path)
    except OSError as err:
        raise plan_error(
            f"cannot read {data_path} to record its state ({err.strerror})",
            "check the path and permissions",
        ) from None
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
        zsim_version=__version__,
        hostname=platform.node(),
        uname=" ".join((uname.system, uname.node, uname.release, uname.version, uname.machine)),
        warnings=tuple(warnings),
        notes=tuple(notes),
        target_state=state,
    )


def _inspect_target(path: Path) -> tuple[str, Path, BlockDevice | None]:
    """(target_type, data_path, backing block device or None) for ``path``."""
    try:
        info = path.stat()
    except FileNotFoundError:
        parent = path.parent
        if not parent.is_dir():
            raise plan_error(
                f"{path} does not exist and neither does its folder {parent}",
                "give an existing device, directory, or a new file in an existing directory",
            ) from None
        dev = parent.stat().st_dev
        return "file", path, block_device(os.major(dev), os.minor(dev), SYS_DEV_BLOCK)
    except OSError as err:
        raise plan_error(
            f"cannot examine {path} ({err.strerror})", "check the path and permissions"
        ) from None
    if stat.S_ISBLK(info.st_mode):
        rdev = info.st_rdev
        return "block", path, block_device(os.major(rdev), os.minor(rdev), SYS_DEV_BLOCK)
    device = block_device(os.major(info.st_dev), os.minor(info.st_dev), SYS_DEV_BLOCK)
    if stat.S_ISDIR(info.st_mode):
        data = path / DATA_NAME
        if data.exists() and not data.is_file():
            raise plan_error(
                f"{data} exists and is not a regular file", "remove it or pick another directory"
            )
        return "directory", data, device
    if stat.S_ISREG(info.st_mode):
        return "file", path, device
    raise plan_error(
        f"{path} is neither a block device, a regular file nor a directory",
        "give a disk (/dev/sdX), a file or a directory",
    )


def _block_target_in_use(path: Path, device: BlockDevice | None) -> list[str]:
    """:func:`block_device_in_use` of the target; its mounts by its own path when sysfs lacks
    it."""
    if device is not None:
        return block_device_in_use(device.name)
    name = os.path.basename(os.path.realpath(path))
    return mount_uses([name], read_text_or_empty(PROC_MOUNTS)) + swap_uses(
        [name], read_text_or_empty(PROC_SWAPS)
    )


def _block_target_problems(path: Path, device: BlockDevice | None) -> list[str]:
    """:func:`block_device_problems` of the target; by its own path when sysfs lacks it."""
    if device is not None:
        return block_device_problems(device.name)
    mounts = mount_uses([os.path.basename(os.path.realpath(path))], read_text_or_empty(PROC_MOUNTS))
    try:
        found = filesystem_signature(path)
    except OSError as err:
        return [*mounts, f"cannot read {path} to look for a filesystem ({err.strerror})"]
    return mounts + ([f"{path} holds {with_article(found)} signature"] if found else [])


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
                    f"zone{rw}-{zone_label(fraction)}",
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


__all__ = [
    "DATA_NAME",
    "DEV_DIR",
    "KINDS",
    "MARKER_SUFFIX",
    "PLAN_FILE",
    "PLAN_FORMAT",
    "PROC_SWAPS",
    "PURPOSES",
    "SYS_CLASS_BLOCK",
    "TARGET_TYPES",
    "TOOLS",
    "BlockDevice",
    "Plan",
    "PlanOptions",
    "Step",
    "TargetState",
    "block_device",
    "block_device_in_use",
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
    "plan_toml_text",
    "probe_signature",
    "rate_cap_iops",
    "read_plan",
    "read_ram_bytes",
    "run_script_text",
    "swap_uses",
    "target_changes",
    "target_state",
    "write_plan",
]
