"""The RAIDZ expansion's reflow on the discrete-event engine: how long ``zpool attach`` runs.

``spa_raidz_expand_thread()`` (``module/zfs/vdev_raidz.c``) walks the vdev's metaslabs in
offset order and copies every allocated segment from the old width to the new one
(:mod:`zsim.grow.reflow_map`), reading and writing the same disks at the removal priority,
with ``raidz_expand_max_copy_bytes`` in flight. zsim builds the grown pool with the engine's
own devices, buses, CPU and leaf queues (the new disk in its slot) and drives the copy with
the resilver's windows (:class:`zsim.resilver.zfs_scan.ZfsScan` with a planner): at several
positions along the allocated space a window issues copies the way the thread does and
measures their rate; the whole reflow is the allocated bytes divided among the windows at
their rates (:func:`zsim.resilver.run.integrate_windows`), so zoned disks, the distance
between the read and write rows and the allocation pattern are in the curve.

Added to that time: the txg syncs the copy must wait for at the start, while the rows it
may overwrite are still few (:func:`zsim.grow.reflow_map.gated_syncs`), each costing the
engine's own uberblock write round; and, reported apart, the scrub OpenZFS starts when the
reflow completes (``zfs_scrub_after_expand = 1``, ``raidz_reflow_complete_sync()``), since
the copy verified no checksums. Redundancy is kept all along: the vdev stays RAIDZ-P.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zsim.des.engine import Engine
from zsim.des.txg_runs import uberblock_zio
from zsim.des.vdev import TopVdev
from zsim.grow.reflow_map import (
    REFLOW_MAX_COPY_BYTES,
    copy_bytes,
    copy_ios,
    gated_syncs,
    scratch_bytes,
)
from zsim.machine.collector import collector_paused
from zsim.machine.run_control import RunControl
from zsim.resilver.run import (
    LOADED_WINDOW,
    WINDOW_WALL_CAP,
    busiest_limit,
    foreground_rates,
    integrate_windows,
    warm_up_workload,
    window_rows,
)
from zsim.resilver.zfs_scan import WindowStats, ZfsScan, window_quota
from zsim.scenario import Scenario
from zsim.zfs.arc import arc_max_bytes
from zsim.zfs.scan import scan_tunables
from zsim.zfs.txg import txg_tunables
from zsim.zfs.version import parse_zfs_version

#: ``zfs_vdev_removal_max_active`` (``module/zfs/vdev_queue.c``): the copy's I/Os per leaf
REMOVAL_MAX_ACTIVE = 2
#: windows along the allocated space (idle pool / under load)
REFLOW_WINDOWS = 6
LOADED_REFLOW_WINDOWS = 3


class ReflowPlanner:
    """The copy ``spa_raidz_expand_thread()`` issues, as units for :class:`ZfsScan`.

    ``allocated`` bytes (asize) sit in the old vdev's ``space``; ``packed``: written in one
    stream (metaslabs filled from the start, one segment each); otherwise aged free space:
    allocated runs and holes of whole blocks (``block`` bytes), geometric with the fill.
    Segments never cross a metaslab (each is its own range tree).
    """

    def __init__(
        self,
        *,
        old_children: int,
        ashift: int,
        space: int,
        allocated: int,
        metaslab_shift: int,
        block: int,
        packed: bool,
        seed: int,
    ):
        self.old_children, self.ashift = old_children, ashift
        self.space, self.allocated = space, allocated
        self.metaslab = 1 << metaslab_shift
        self.block, self.packed = block, packed
        self.fill = allocated / space if space else 0.0
        self.rng = np.random.default_rng(seed)

    def limit(self, top: TopVdev) -> int:
        """The thread waits while more than ``raidz_expand_max_copy_bytes`` are out."""
        return REFLOW_MAX_COPY_BYTES + 1

    def plan(
        self, top: TopVdev, offset: int, nbytes: int
    ) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]], int]:
        reads, writes = copy_ios(offset, nbytes, self.old_children, self.ashift)
        return reads, writes, nbytes

    def _segments(self, start: int, end: int) -> Iterator[tuple[int, int]]:
        """One allocated segment [start, end) cut at metaslab ends and into copies."""
        offset = start
        while offset < end:
            ms_end = (offset // self.metaslab + 1) * self.metaslab
            size = copy_bytes(min(end, ms_end) - offset, self.old_children, self.ashift)
            yield offset, size
            offset += size

    def units(self, top: TopVdev, position: float) -> Iterator[tuple[int, int]]:
        sector = 1 << self.ashift
        if self.packed:
            span = max(sector, self.allocated // sector * sector)
            offset = int(position * span) // sector * sector
            while True:
                yield from self._segments(offset, span)
                offset = 0  # the window wraps to the start of the allocated space
        block = self.block
        span = self.space // block * block
        offset = int(position * span) // block * block
        rng = self.rng
        while True:
            run = block * int(rng.geometric(max(1e-6, 1.0 - self.fill)))
            end = min(offset + run, span)
            yield from self._segments(offset, end)
            offset = end + block * int(rng.geometric(max(1e-6, self.fill)))
            if offset >= span:
                offset = 0


@dataclass(frozen=True)
class ReflowResult:
    """One ``zpool attach``'s reflow, simulated. Seconds, bytes, bytes/s.

    ``seconds``: from the attach to the new width in use (copy plus the syncs the copy
    waits for at its start); ``scrub_seconds``: the scrub that follows (``None`` when not
    simulated). ``bytes_copied``: the allocated bytes of the vdev, what ``zpool status``
    counts as copied. ``progress``: ``(seconds, bytes copied)`` from 0 to the end.
    ``limit``: the resource at least 85 % busy, else ``reflow`` (the copy's own in-flight
    limit). ``under_load``: the reflow and the workload, both slowed, when asked.
    """

    vdev: str
    old_width: int
    new_width: int
    seconds: float
    bytes_copied: int
    bytes_per_s: float
    limit: str
    progress: tuple[tuple[float, int], ...]
    gated_syncs: int
    sync_seconds: float
    scrub_seconds: float | None = None
    utilization: dict[str, float] = field(default_factory=dict)
    windows: tuple[dict[str, Any], ...] = ()
    under_load: dict[str, Any] | None = None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-able, SI units."""
        out = dataclasses.asdict(self)
        out["progress"] = [{"seconds": t, "bytes": b} for t, b in self.progress]
        out["windows"] = list(self.windows)
        out["notes"] = list(self.notes)
        return out


@dataclass(frozen=True)
class ReflowInput:
    """What one reflow copies: the grown scenario (its layout the vdev one column wider),
    which data vdev, the old width, the old vdev's metaslab space and what is allocated."""

    scenario: Scenario
    vdev_index: int
    old_children: int
    space: int
    allocated: int
    metaslab_shift: int
    block_asize: int
    packed: bool


def _scan(engine: Engine, ri: ReflowInput, seed: int) -> tuple[ZfsScan, TopVdev]:
    sc = ri.scenario
    version = parse_zfs_version(sc.hardware.zfs_version)
    tunables = scan_tunables(version, sc.hardware.ram, arc_max_bytes(sc.hardware.ram, version))
    top = engine.zfs.all_tops[ri.vdev_index]
    planner = ReflowPlanner(
        old_children=ri.old_children,
        ashift=sc.pool.ashift,
        space=ri.space,
        allocated=ri.allocated,
        metaslab_shift=ri.metaslab_shift,
        block=ri.block_asize,
        packed=ri.packed,
        seed=seed,
    )
    scan = ZfsScan(
        engine,
        "sequential",
        tunables,
        lanes=[(top, None)],
        psize=ri.block_asize,
        asize=ri.block_asize,
        fill=ri.allocated / ri.space if ri.space else 0.0,
        written="sequential" if ri.packed else "random",
        seed=seed,
        planner=planner,
    )
    for leaf in top.leaves:  # ZIO_PRIORITY_REMOVAL: min 1, max 2, idle-only (nia) like scans
        leaf.set_scan_limits(REMOVAL_MAX_ACTIVE, tunables.nia)
    return scan, top


def _windows(
    scan: ZfsScan, ri: ReflowInput, count: int, duration: float | None
) -> tuple[list[WindowStats], list[tuple[float, float]]]:
    # about WINDOW_LEAF_IOS leaf I/Os per window, and at least a few times what is in flight
    ios = ri.old_children * 2 + 1
    ashift = ri.scenario.pool.ashift
    unit = copy_bytes(ri.allocated if ri.packed else 4 * ri.block_asize, ri.old_children, ashift)
    quota = max(window_quota(ios), 3 * (REFLOW_MAX_COPY_BYTES // max(1, unit) + 1))
    stats, spans = [], []
    for k in range(count):
        t0 = scan.env.now
        w = scan.run_window((k + 0.5) / count, quota, WINDOW_WALL_CAP, duration=duration)
        if w.seconds <= 0:
            raise AssertionError(f"the reflow made no progress in window {k}")
        stats.append(w)
        spans.append((t0, scan.env.now))
    return stats, spans


def _sync_round(engine: Engine, top: TopVdev) -> float:
    """Seconds of one uberblock write round (write + cache flush on every leaf), the end of
    a ``txg_wait_synced()`` the copy waits for: the engine's own sync model."""
    env = engine.env
    start, left = env.now, [len(top.leaves)]
    done = env.event()

    def one() -> None:
        left[0] -= 1
        if left[0] == 0:
            done.succeed()

    for leaf in top.leaves:
        leaf.add(uberblock_zio(top, one))
    with collector_paused():
        env.run(until=done)
    return env.now - start


def simulate_reflow(
    ri: ReflowInput, seed: int = 1, *, under_load: bool = False, vdev_name: str = ""
) -> ReflowResult:
    """Simulate one reflow (idle pool; with ``under_load`` also the scenario's workload
    running alongside, and the workload's rates during it)."""
    sc = ri.scenario
    new_width = ri.old_children + 1
    if ri.allocated <= scratch_bytes(new_width, sc.pool.ashift):
        return ReflowResult(
            vdev=vdev_name,
            old_width=ri.old_children,
            new_width=new_width,
            seconds=0.0,
            bytes_copied=ri.allocated,
            bytes_per_s=0.0,
            limit="nothing-allocated",
            progress=((0.0, 0), (0.0, ri.allocated)),
            gated_syncs=0,
            sync_seconds=0.0,
            notes=("nothing beyond the scratch rows is allocated: the reflow is immediate",),
        )
    engine = Engine(sc, seed, RunControl())
    scan, top = _scan(engine, ri, seed)
    stats, _ = _windows(scan, ri, REFLOW_WINDOWS, None)
    copy_s, progress, util = integrate_windows(float(ri.allocated), stats, lambda w: w.rate)
    round_s = _sync_round(engine, top)
    version = parse_zfs_version(sc.hardware.zfs_version)
    timeout = txg_tunables(sc.hardware.ram, version).txg_timeout
    syncs = gated_syncs(ri.allocated, ri.old_children, sc.pool.ashift, stats[0].rate * timeout)
    seconds = copy_s + syncs * round_s
    shifted = tuple((t + syncs * round_s if t else 0.0, b) for t, b in progress)
    loaded = _under_load(ri, seed, float(ri.allocated)) if under_load else None
    return ReflowResult(
        vdev=vdev_name,
        old_width=ri.old_children,
        new_width=new_width,
        seconds=seconds,
        bytes_copied=ri.allocated,
        bytes_per_s=ri.allocated / seconds if seconds > 0 else 0.0,
        limit=busiest_limit(util, "reflow"),
        progress=shifted,
        gated_syncs=syncs,
        sync_seconds=syncs * round_s,
        utilization={k: round(v, 4) for k, v in util.items()},
        windows=window_rows(stats),
        under_load=loaded,
    )


def _under_load(ri: ReflowInput, seed: int, total: float) -> dict[str, Any]:
    """The reflow with the scenario's workload on the grown pool: both rates."""
    engine = Engine(ri.scenario, seed, RunControl())
    scan, _ = _scan(engine, ri, seed)
    warm_up_workload(engine)
    stats, spans = _windows(scan, ri, LOADED_REFLOW_WINDOWS, LOADED_WINDOW)
    seconds, progress, util = integrate_windows(total, stats, lambda w: w.rate)
    weights = [w.seconds for w in stats]
    rates = [foreground_rates(engine, a, b) for a, b in spans]
    during: dict[str, Any] = {}
    for direction in ("read", "write"):
        during[direction] = {
            key: float(np.average([r[direction][key] for r in rates], weights=weights))
            for key in ("bytes_per_s", "iops", "latency_mean_s")
        }
    return {
        "seconds": seconds,
        "bytes_per_s": total / seconds if seconds > 0 else 0.0,
        "limit": busiest_limit(util, "foreground"),
        "progress": [{"seconds": t, "bytes": b} for t, b in progress],
        "foreground_during": during,
        "windows": list(window_rows(stats)),
    }
