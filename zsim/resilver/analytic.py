"""Resilver, rebuild and scrub time by formulas: ``zsim.resilver(sc, engine="analytic")``.

The same scan as :mod:`zsim.resilver.zfs_scan` (module text there; ``module/zfs/dsl_scan.c``,
``vdev_rebuild.c``, ``vdev_raidz.c``, ``vdev_mirror.c``, ``vdev_queue.c``), on the same maps
(:func:`zsim.layout.raidz.raidz_columns`, :func:`zsim.layout.draid.draid_columns`), tunables
(:func:`zsim.zfs.scan.scan_tunables`), CPU costs (:func:`zsim.machine.costs.cpu_costs`) and
device model (:func:`zsim.analytic.devices.device_table`: the DES's device in a closed loop),
at the same window positions as :mod:`zsim.resilver.run`. At each position:

1. the blocks (segments) the scan issues there are laid out as the DES's window issues them
   (packed in offset order; a sorted scan's thinned sample of randomly written data; the
   legacy scan's random block order), and each disk's work is read off the column map:
   bytes and leaf I/Os read from the surviving columns (adjacent ones merged by the vdev
   queue up to ``zfs_vdev_aggregation_limit``, ``vdev_queue_aggregate()``), bytes written to
   the replacement (or to the dRAID slice's spare column), one indirect-block read per 1024
   blocks (healing scan);
2. each disk's service time for that work: reads from the device table for the request size
   and pattern at the queue depth the scrub class allows (``zfs_vdev_scrub_max_active``, or
   the scan's in-flight blocks on that disk if fewer); writes onto a drive with a write
   cache at the media rate where the head is (a resilver writes the disk for hours and each
   txg flushes it, as :meth:`ZfsScan._with_cached_writes` charges them);
3. the CPU's time (zio, leaf I/Os, checksum, parity reconstruction per byte) over the zio
   taskq threads (``zio_taskq_batch_pct``);
4. the window's time is the busiest of these (the scan keeps every queue full: the in-flight
   limits hold far more than the scrub class's active I/Os); its rate is the bytes
   resilvered over that time, and the busy fractions name the limit as the DES does.

The windows integrate to the time like :func:`zsim.resilver.run.integrate_windows`.
Outside this model (under load, a dRAID distributed spare, already-missing disks, mirrors
wider than two, data vdevs of different shapes) :class:`zsim.analytic.validity.OutOfRange`
says why; callers then run the DES. md RAID is :mod:`zsim.resilver.md_analytic`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zsim.analytic.devices import device_table
from zsim.analytic.validity import OutOfRange
from zsim.des.vdev import (
    ASYNC_WRITE,
    CLASS_LIMITS,
    READ_GAP_LIMIT,
    WRITE_GAP_LIMIT,
    aggregation_limit,
)
from zsim.hardware import flash
from zsim.hardware.catalog import Profile
from zsim.layout.draid import DRAID_ROWHEIGHT, draid_columns
from zsim.layout.raidz import raidz_columns
from zsim.layout.tree import Vdev
from zsim.machine.costs import CpuCosts, cpu_costs, zio_taskq_threads
from zsim.resilver.result import ResilverResult
from zsim.resilver.scan_disk import (
    ascending_rate,
    merge_extents,
    quantize_size,
    read_rate,
    region_start,
    region_width,
    write_rate,
)
from zsim.resilver.target import ResilverTarget
from zsim.resilver.zfs_scan import (
    rebuild_group_bytes,
    scan_data_disks,
    window_quota,
    window_units,
)
from zsim.scenario import Scenario
from zsim.zfs.arc import arc_max_bytes
from zsim.zfs.indirect import BPS_PER_INDIRECT, indirect_block
from zsim.zfs.scan import SCAN_IO_BYTES, ScanTunables, rebuild_chunk, scan_tunables
from zsim.zfs.version import parse_zfs_version

#: blocks sampled per window from the column map for raidz and mirrors (the map's pattern
#: repeats every ``width`` blocks; random layouts need a few hundred to average)
SAMPLE_PACKED = 96
SAMPLE_RANDOM = 128
#: a run of this many aggregates streams at the sequential rate (its seek is < 1/16 of it)
LONG_RUN = 16
BUSY = 0.85  # as zsim.resilver.run.BUSY: a resource this busy bounds the rate


@dataclass(frozen=True)
class WindowEstimate:
    """One window solved: seconds for its units, bytes done, busy fractions."""

    position: float
    seconds: float
    resilvered: float  # bytes written to the replacement (scrub: verified), in the window
    read: float
    examined: float
    utilization: dict[str, float] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.resilvered / self.seconds if self.seconds > 0 else 0.0

    @property
    def examine_rate(self) -> float:
        return self.examined / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class ScanShape:
    """What a scan of one vdev needs, resolved from the scenario (bytes, counts)."""

    mode: str  # healing | sequential | scrub
    vdev: Vdev
    names: tuple[str, ...]
    target: int | None  # leaf index being resilvered (None: scrub)
    spare: str
    psize: int
    asize: int
    ashift: int
    space: int
    fill: float
    packed: bool
    tunables: ScanTunables
    aggregation: int
    profile: Profile
    costs: CpuCosts
    threads: int
    meta_psize: int
    batch_share: float
    servers: int  # the device's parallel servers (HDD 1, flash: its parallelism)
    chunk: tuple[int, int]  # one sequential-rebuild read: (allocated, data) bytes
    top_vdevs: int  # top-level data vdevs of the pool (the rebuild's ARC share)


def check_supported(sc: Scenario, target: ResilverTarget) -> None:
    """Raise :class:`OutOfRange` for a resilver this model does not solve."""
    if sc.resilver.under_load or sc.durability.busy_fraction > 0:
        raise OutOfRange(
            "a resilver under load (resilver.under_load, durability.busy_fraction) shares the "
            "disks with the workload's txgs; only the DES models that — use engine='des'"
        )
    if sc.pool.failed:
        raise OutOfRange(
            "pool.failed lists disks already missing; the analytic resilver models one failed "
            "disk — use engine='des'"
        )
    vdev = target.vdev
    if vdev is not None and vdev.kind == "mirror" and vdev.width > 2:
        raise OutOfRange(
            f"a {vdev.width}-way mirror's healing reads follow vdev_mirror's load balancing, "
            f"which the analytic resilver does not model — use engine='des'"
        )
    if target.spare == "distributed":
        raise OutOfRange(
            "a dRAID distributed spare's writes land a slice at a time on one disk and ride "
            "its write cache in bursts; the analytic model is 25-55 % off the DES there — "
            "use engine='des'"
        )
    layout = sc.layout_tree()
    shapes = {v.compact() for v in layout.data_vdevs}  # type: ignore[union-attr]
    if len(shapes) > 1:
        raise OutOfRange(
            "the data vdevs differ in shape; the analytic scrub assumes one shape — use "
            "engine='des'"
        )


def scan_shape(sc: Scenario, target: ResilverTarget, mode: str, vdev_index: int) -> ScanShape:
    """The :class:`ScanShape` of ``mode`` on data vdev ``vdev_index`` of ``sc``."""
    hw, pool = sc.hardware, sc.pool
    version = parse_zfs_version(hw.zfs_version)
    tunables = scan_tunables(version, hw.ram, arc_max_bytes(hw.ram, version))
    layout = sc.layout_tree()
    data = layout.data_vdevs  # type: ignore[union-attr]
    vdev = data[vdev_index]
    parity = max(v.parity for v in data)
    costs = cpu_costs(
        hw.cpu_ghz,
        pool.checksum,
        parity,
        pool.compression,
        compress_ratio=pool.compress_ratio,
        dedup=pool.dedup == "on",
        atime=pool.atime == "on",
        io_scale=hw.cpu_io_cost_scale,
        byte_scale=hw.cpu_byte_cost_scale,
    )
    meta_psize, _ = indirect_block(1, 1 << 40, pool.ashift, "none")
    n_lanes = 1 if mode != "scrub" else min(len(data), 4)
    total_blocks = n_lanes * max(1, int(target.fill * target.space) // target.asize)
    resilvering = mode != "scrub"
    return ScanShape(
        mode=mode,
        vdev=vdev,
        names=tuple(vdev.devices),
        target=target.leaf_index if resilvering else None,
        spare=target.spare if resilvering else "new",
        psize=target.psize,
        asize=target.asize,
        ashift=pool.ashift,
        space=target.space,
        fill=target.fill,
        packed=sc.resilver.written == "sequential",
        tunables=tunables,
        aggregation=aggregation_limit(hw.disk.kind == "hdd", version),
        profile=hw.disk,
        costs=costs,
        threads=zio_taskq_threads(hw.cpu_cores),
        meta_psize=meta_psize,
        batch_share=min(1.0, tunables.memory_limit / SCAN_IO_BYTES / total_blocks),
        servers=1 if hw.disk.kind == "hdd" else flash.flash_params(hw.disk).parallelism,
        chunk=rebuild_chunk(vdev, pool.ashift, tunables.rebuild_segment),
        top_vdevs=len(data),
    )


# ---------------------------------------------------------------- the units of a window


def _span(s: ScanShape) -> int:
    span = int(s.fill * s.space) if s.packed else s.space
    return max(s.asize, span // s.asize * s.asize)


def _units(
    s: ScanShape, position: float, n: int, rng: np.random.Generator
) -> list[tuple[int, int]]:
    """(vdev offset, bytes) of ``n`` blocks (segments) the scan issues from ``position``, as
    :meth:`ZfsScan._units` lays them out (packed, a sorted scan's thinned sample, the legacy
    scan's random order, a rebuild's allocated runs)."""
    asize, span = s.asize, _span(s)
    offset = int(position * span) // asize * asize
    out: list[tuple[int, int]] = []
    if s.mode == "sequential":
        segment = s.chunk[0]
        group = rebuild_group_bytes(s.vdev)
        while len(out) < n:
            if s.packed:
                size = min(segment, group - offset % span % group)
                out.append((offset % span, size))
                offset += size
                continue
            run = asize * int(rng.geometric(max(1e-6, 1.0 - s.fill)))
            while run > 0 and len(out) < n:
                size = min(segment, run, group - offset % span % group)
                out.append((offset % span, size))
                offset += size
                run -= size
            offset += asize * int(rng.geometric(max(1e-6, s.fill)))
        return out
    if not s.tunables.sorted and not s.packed:
        picks = rng.integers(0, span // asize, size=n)
        return [(int(p) * asize, asize) for p in picks]
    density = 1.0 if s.packed else max(1e-6, s.fill * s.batch_share)
    for _ in range(n):
        out.append((offset % span, asize))
        offset += asize if density >= 1.0 else asize * int(rng.geometric(density))
    return out


def _plan(
    s: ScanShape, offset: int, nbytes: int
) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]], int] | None:
    """(reads, writes, data bytes) of one unit, as :meth:`ZfsScan._plan`; ``None`` when the
    unit misses the failed leaf. A mirror's read goes to the surviving child."""
    vdev = s.vdev
    if s.mode != "sequential":
        nbytes = s.psize
    if vdev.kind == "mirror":
        size = -(-nbytes // (1 << s.ashift)) << s.ashift
        if s.mode == "scrub":
            return [(i, offset, size) for i in range(vdev.width)], [], size
        assert s.target is not None
        other = next(i for i in range(vdev.width) if i != s.target)
        return [(other, offset, size)], [(s.target, offset, size)], size
    if s.mode == "sequential":
        row = vdev.draid_groupwidth << s.ashift
        nbytes = max(1, nbytes // row) * (vdev.ndata << s.ashift)
    if vdev.kind == "raidz":
        columns, _, _ = raidz_columns(offset, nbytes, s.ashift, vdev.width, vdev.parity)
        spares: tuple[int, ...] = ()
    else:
        columns, spares = _draid(s, offset, nbytes)
    data = sum(c[2] for c in columns[vdev.parity :])
    if s.mode == "scrub":
        return [c for c in columns if c[2]], [], data
    lost = [c for c in columns if c[2] and c[0] == s.target]
    if not lost:
        return None
    reads = [c for c in columns if c[2] and c[0] != s.target]
    writes = lost
    if s.spare == "distributed":
        alive = [i for i in spares if i != s.target]
        writes = [(alive[0], lost[0][1], lost[0][2])]
    return reads, writes, data


def _draid(
    s: ScanShape, offset: int, nbytes: int
) -> tuple[list[tuple[int, int, int]], tuple[int, ...]]:
    v = s.vdev
    return draid_columns(offset, nbytes, s.ashift, v.width, v.nspares, v.ndata, v.parity)


def _relevant_groups(s: ScanShape, offset: int, span: int, count: int) -> list[int]:
    """The first ``count`` dRAID groups from ``offset`` that hold the failed child (all
    groups for a scrub): a rebuild skips the others (:meth:`ZfsScan._relevant`)."""
    v = s.vdev
    groupsz = v.draid_groupwidth * DRAID_ROWHEIGHT
    ngroups_span = max(1, span // groupsz)
    g = (offset % span) // groupsz
    out: list[int] = []
    for _ in range(64 * max(1, count) * v.width):
        if len(out) >= count:
            break
        gg = g % ngroups_span
        if s.target is None:
            out.append(gg)
        else:
            columns, _ = _draid(s, gg * groupsz, 1 << s.ashift)
            if any(c[0] == s.target for c in columns):
                out.append(gg)
        g += 1
    return out


# ---------------------------------------------------------------- per-disk work


@dataclass
class _Acc:
    reads: list[tuple[int, int, int]] = field(default_factory=list)  # (offset, bytes, zios)
    writes: list[tuple[int, int, int]] = field(default_factory=list)
    read_cols: int = 0


def _window_work(
    s: ScanShape, position: float, rng: np.random.Generator
) -> tuple[dict[int, _Acc], int, float, float, float, float]:
    """The disks' work in one window: (per leaf, units issued, data bytes resilvered or
    verified, bytes read, bytes examined, CPU seconds)."""
    acc = {i: _Acc() for i in range(s.vdev.width)}
    c = s.costs
    units = resilvered = read = examined = cpu = 0.0
    span = _span(s)
    if s.vdev.kind == "draid" and s.packed:
        plans = _draid_plans(s, position, span)
    else:
        n = SAMPLE_PACKED if s.packed else SAMPLE_RANDOM
        plans = []
        for off, nb in _units(s, position, n, rng):
            plans.append((_plan(s, off, nb), off, nb))
    grouped = s.vdev.kind == "draid" and s.packed
    for plan, _, count in plans:
        n = count if grouped else 1  # a dRAID group's units come as one scaled plan
        if s.mode != "sequential":
            examined += s.asize * n
        if plan is None:
            continue
        reads, writes, data = plan
        units += n
        for leaf, off, size in reads:
            acc[leaf].reads.append((off, size, n))
            acc[leaf].read_cols += n
        for leaf, off, size in writes:
            acc[leaf].writes.append((off, size, n))
        rb = sum(r[2] for r in reads)
        read += rb
        resilvered += sum(w[2] for w in writes) if writes else data
        seconds = n * (c.zio + (len(reads) + len(writes)) * c.leaf_io)
        if s.mode != "sequential":
            seconds += data * c.checksum_per_byte
        if s.vdev.kind != "mirror" and s.mode != "scrub":
            seconds += data * c.parity_per_byte
        cpu += seconds
    return acc, int(units), resilvered, read, examined, cpu


def _draid_plans(s: ScanShape, position: float, span: int) -> list[tuple[Any, int, int]]:
    """A dRAID window's units, a group at a time: every unit of a group touches the same
    children, so one unit per group is planned and repeated (DES quota: about
    :data:`zsim.resilver.zfs_scan.WINDOW_LEAF_IOS` leaf I/Os per window)."""
    v = s.vdev
    groupsz = v.draid_groupwidth * DRAID_ROWHEIGHT
    unit = s.chunk[0] if s.mode == "sequential" else s.asize
    per_group = max(1, groupsz // unit)
    quota = window_quota(v.draid_groupwidth)
    if s.mode == "sequential":  # as run._scan_phase: the in-flight limit may hold more
        quota = window_units(v.draid_groupwidth, _inflight_units(s))
    groups = max(1, math.ceil(quota / per_group))
    offset = int(position * span) // s.asize * s.asize
    plans: list[tuple[Any, int, int]] = []
    for g in _relevant_groups(s, offset, span, groups):
        plan = _plan(s, g * groupsz, unit)
        if plan is None:
            plans.append((None, g * groupsz, per_group))
            continue
        reads, writes, data = plan
        # every unit of the group: the same children, contiguous rows on each
        plans.append(
            (
                (
                    [(leaf, off, size * per_group) for leaf, off, size in reads],
                    [(leaf, off, size * per_group) for leaf, off, size in writes],
                    data * per_group,
                ),
                g * groupsz,
                per_group,
            )
        )
    return plans


# ---------------------------------------------------------------- disk service


def _disk_seconds(s: ScanShape, leaf: int, a: _Acc, units: int, capacity: int) -> float:
    """Seconds the disk needs for its share of the window."""
    seconds = 0.0
    k_max = s.tunables.scrub_max_active
    if a.reads:
        ios, merged = merge_extents(list(a.reads), s.aggregation, READ_GAP_LIMIT)
        total = sum(m[1] for m in merged)
        size = quantize_size(total / ios, s.ashift)
        first, last = merged[0][0], merged[-1][0] + merged[-1][1]
        lo = min(first / capacity, 0.999)
        # the scan's blocks in flight on this disk, if fewer than the class allows
        per_unit = a.read_cols / max(1, units)
        inflight = _inflight_units(s)
        k = max(1, min(k_max, int(inflight * per_unit)))
        gaps = (last - first - total) / len(merged)
        # runs many aggregates long (dRAID rows) stream, their few seeks aside
        sequential = gaps <= READ_GAP_LIMIT or total / len(merged) >= LONG_RUN * s.aggregation
        if sequential:
            rate = read_rate(s.profile, size, True, region_start(lo), 1 / 64, k)
        elif s.tunables.sorted:
            # the sorted scan's reads reach the disk in ascending order, ``gaps`` apart
            rate = ascending_rate(s.profile, size, gaps, lo, k)
        else:
            # legacy: random block order; the queue issues the disk's waiting reads in LBA
            # order (vdev_queue's elevator), so a seek spans the region over those waiting
            queued = max(1.0, inflight * per_unit)
            width = 3 * max(gaps, (last - first) / queued) / capacity
            rate = read_rate(s.profile, size, False, region_start(lo), region_width(width), k)
        seconds += ios / rate
    if a.writes:
        ios, runs = merge_extents(list(a.writes), s.aggregation, WRITE_GAP_LIMIT)
        total = sum(r[1] for r in runs)
        first, last = runs[0][0], runs[-1][0] + runs[-1][1]
        lo = min(first / capacity, 0.999)
        gaps = (last - first - total) / max(1, len(runs))
        # the async-write class at its min_active: an idle pool has no dirty data
        k = CLASS_LIMITS[ASYNC_WRITE][0]
        if gaps <= WRITE_GAP_LIMIT or total / len(runs) >= LONG_RUN * s.aggregation:
            size = quantize_size(total / ios, s.ashift)
            seconds += total / write_rate(s.profile, size, region_start(lo), k)
        elif s.tunables.sorted:
            # scattered (randomly written data): the drive's cache is full and each write
            # waits for a destage with its seek (the DES's device, ascending offsets)
            size = quantize_size(total / len(runs), s.ashift)
            seconds += len(runs) / ascending_rate(s.profile, size, gaps, lo, k, is_write=True)
        else:
            # legacy scan: random offsets over the allocated span, through the drive's cache
            size = quantize_size(total / len(runs), s.ashift)
            width = region_width((last - first) / capacity)
            table = device_table(
                s.profile, size, True, False, region_start(lo), region_start(lo) + width, k
            )
            seconds += len(runs) / table.at(k)
    return seconds


def _inflight_units(s: ScanShape) -> float:
    """Blocks (segments) the scan's limits allow in flight on the vdev."""
    t = s.tunables
    if s.mode == "sequential":
        inflight = t.rebuild_inflight_bytes(s.vdev.width, s.top_vdevs, s.chunk[1])
        return inflight / s.chunk[1]
    if not t.sorted:
        return float(t.legacy_max_blocks)
    return max(1.0, t.inflight_bytes(scan_data_disks(s.vdev)) / s.asize)


def _meta_seconds(s: ScanShape, units: int, capacity: int) -> float:
    """The indirect-block reads of a healing scan: one random read of ``meta_psize`` per
    :data:`BPS_PER_INDIRECT` blocks, spread over the vdev's children."""
    if s.mode == "sequential" or units == 0:
        return 0.0
    per_disk = (
        units / BPS_PER_INDIRECT / max(1, s.vdev.width) * max(1, s.vdev.width - s.vdev.parity)
    )
    size = quantize_size(s.meta_psize / max(1, s.vdev.width - s.vdev.parity), s.ashift)
    rate = read_rate(s.profile, size, False, 0.0, 1.0, 1)
    return per_disk / rate


def window_busy(
    s: ScanShape, position: float, seed: int
) -> tuple[dict[str, float], dict[str, float], float, float, float]:
    """Busy seconds per resource (disks, CPU-seconds of work) for one window of ``s`` at
    ``position`` (0…1 of the allocated span), the share of each disk's servers the scan
    keeps busy meanwhile, and the window's bytes resilvered (scrub: verified), read and
    examined."""
    rng = np.random.default_rng(seed + int(position * 1e6))
    acc, units, resilvered, read, examined, cpu = _window_work(s, position, rng)
    if units == 0:
        raise OutOfRange(f"the {s.mode} scan finds no block on the failed leaf at {position:.0%}")
    capacity = s.profile.size_bytes
    meta = _meta_seconds(s, units, capacity)
    busy: dict[str, float] = {}
    share: dict[str, float] = {}
    for leaf, a in acc.items():
        seconds = _disk_seconds(s, leaf, a, units, capacity)
        if a.reads:
            seconds += meta
        # the busy share of the device's servers (resources.Device: one for a drive, the
        # flash model's parallel units for an SSD) the scan's queue depth can fill
        depth = s.tunables.scrub_max_active if a.reads else CLASS_LIMITS[ASYNC_WRITE][0]
        busy[f"disk:{s.names[leaf]}"] = seconds
        share[f"disk:{s.names[leaf]}"] = min(1.0, depth / s.servers)
    busy["cpu"] = cpu
    return busy, share, resilvered, read, examined


def solve_window(
    lanes: list[tuple[ScanShape, float]], seed: int, position: float
) -> WindowEstimate:
    """One window: the lanes' (vdevs') scans at their positions run at once; the window
    lasts as long as its busiest disk, or the CPU's work over the zio taskq threads."""
    busy: dict[str, float] = {}
    share: dict[str, float] = {}
    resilvered = read = examined = 0.0
    for s, at in lanes:
        b, sh, r, rd, ex = window_busy(s, at, seed)
        share.update(sh)
        for k, v in b.items():
            busy[k] = busy.get(k, 0.0) + v
        resilvered += r
        read += rd
        examined += ex
    busy["cpu"] /= lanes[0][0].threads
    seconds = max(busy.values())
    util = {k: min(1.0, v / seconds) * share.get(k, 1.0) for k, v in busy.items()}
    return WindowEstimate(position, seconds, resilvered, read, examined, util)


# ---------------------------------------------------------------- the whole scan

WINDOWS = 8  # as zsim.resilver.run: windows along the allocated space
SCRUB_WINDOWS = 4
SCRUB_LANES = 4  # data vdevs a scrub window holds (run.SCRUB_LANES)


def _integrate(
    total: float, windows: list[WindowEstimate], rate_of: Any
) -> tuple[float, tuple[tuple[float, int], ...], dict[str, float]]:
    """Seconds for ``total`` bytes when each window does an equal share at ``rate_of(w)``,
    the progress curve and the time-weighted busy fractions (as ``run.integrate_windows``)."""
    share = total / len(windows)
    t, done, points, times = 0.0, 0.0, [(0.0, 0)], []
    for w in windows:
        rate = rate_of(w)
        seconds = share / rate if rate > 0 else math.inf
        times.append(seconds)
        t += seconds
        done += share
        points.append((t, round(done)))
    util: dict[str, float] = {}
    for w, seconds in zip(windows, times, strict=True):
        for name, value in w.utilization.items():
            util[name] = util.get(name, 0.0) + value * seconds / t
    return t, tuple(points), util


def _limit(util: dict[str, float]) -> str:
    name, busiest = max(util.items(), key=lambda kv: kv[1])
    return name if busiest >= BUSY else "scan"


def scan_windows(
    sc: Scenario, target: ResilverTarget, mode: str, seed: int, windows: int
) -> list[WindowEstimate]:
    """The windows of ``mode`` (resilver: the target's vdev; scrub: up to
    :data:`SCRUB_LANES` data vdevs, each at its own position as the DES places them)."""
    if mode != "scrub":
        shapes = [scan_shape(sc, target, mode, target.vdev_index)]
    else:
        n = len(sc.layout_tree().data_vdevs)  # type: ignore[union-attr]
        shapes = [scan_shape(sc, target, mode, i) for i in range(min(n, SCRUB_LANES))]
    out = []
    for k in range(windows):
        position = (k + 0.5) / windows
        lanes = [(s, (position + i * 0.37) % 1.0 if i else position) for i, s in enumerate(shapes)]
        out.append(solve_window(lanes, seed, position))
    return out


def _scrub_rate(w: WindowEstimate, n_data: int) -> float:
    """As ``run._scrub_rate``: scaled to every data vdev unless the CPU would then be over
    100 % busy."""
    simulated = min(n_data, SCRUB_LANES)
    scale = n_data / simulated
    busiest = w.utilization.get("cpu", 0.0)
    if busiest * scale > 1.0:
        scale = 1.0 / busiest
    return w.examine_rate * scale


def pool_allocated(sc: Scenario, target: ResilverTarget) -> float:
    """Allocated bytes (asize) over every data vdev at the target's fill fraction."""
    cap = sc.pool_capacity()
    return sum(target.fill * v.metaslab_bytes for v in cap.vdevs if v.vclass == "normal")


def analytic_zfs(sc: Scenario, target: ResilverTarget, seed: int) -> ResilverResult:
    """The ZFS resilver (or sequential rebuild) and the pool's scrub, solved window by
    window; the same :class:`ResilverResult` as the DES's, ``details["engine"]`` = analytic."""
    check_supported(sc, target)
    mode = target.method
    total = float(target.resilver_bytes)
    stats = scan_windows(sc, target, mode, seed, WINDOWS)
    seconds, progress, util = _integrate(total, stats, lambda w: w.rate)
    read_ratio = sum(w.read for w in stats) / max(1.0, sum(w.resilvered for w in stats))
    n_data = len(sc.layout_tree().data_vdevs)  # type: ignore[union-attr]
    scrub = scan_windows(sc, target, "scrub", seed + 1, SCRUB_WINDOWS)
    allocated_all = pool_allocated(sc, target)
    scrub_seconds, _, _ = _integrate(allocated_all, scrub, lambda w: _scrub_rate(w, n_data))
    notes: list[str] = []
    total_seconds = seconds
    if mode == "sequential":
        total_seconds = seconds + scrub_seconds
        notes.append(
            f"sequential rebuild: redundancy is back after {seconds / 3600:.2f} h; the scrub "
            f"that verifies the rebuilt blocks' checksums (zfs_rebuild_scrub_enabled) takes "
            f"{scrub_seconds / 3600:.2f} h more"
        )
    windows = tuple(
        {
            "position": w.position,
            "bytes_per_s": w.rate,
            "examined_bytes_per_s": w.examine_rate,
            "sim_seconds": w.seconds,
            "busiest": {
                k: round(v, 4) for k, v in sorted(w.utilization.items(), key=lambda kv: -kv[1])[:4]
            },
        }
        for w in stats
    )
    assert target.vdev is not None
    return ResilverResult(
        system="zfs",
        disk=target.disk,
        method=mode,
        spare=target.spare,
        seconds=seconds,
        bytes_resilvered=target.resilver_bytes,
        bytes_per_s=total / seconds if seconds > 0 else 0.0,
        limit=_limit(util),
        total_seconds=total_seconds,
        scrub_seconds=scrub_seconds,
        bytes_read=int(total * read_ratio),
        bytes_examined=target.allocated,
        progress=progress,
        utilization={k: round(v, 4) for k, v in util.items()},
        windows=windows,
        seed=seed,
        scenario=sc.to_dict(),
        notes=tuple(notes),
        details={
            "vdev": target.vdev.compact(),
            "block_psize": target.psize,
            "block_asize": target.asize,
            "allocated_on_vdev": target.allocated,
            "fill": target.fill,
            "written": sc.resilver.written,
            "pool_allocated": allocated_all,
        },
        engine="analytic",
    )
