"""A ZFS scan (healing resilver, sequential rebuild or scrub) on the discrete-event engine.

The pool is the engine's own model (devices, bus, CPU, vdev queues, the column maps), built
degraded, with the replacement disk on the failed disk's slot. A scan is simulated in
*windows*: at each of several positions along the vdev's allocated space the scan issues a
quota of blocks the way OpenZFS does and the window measures the rate; the whole resilver is
the allocated bytes divided among the windows at their rates. The per-block events the result
does not need (billions of 128K blocks on a 20 TB disk) are never simulated.

How blocks are issued (``shared/notes/zfs-internals.md`` §2, §9; ``module/zfs/dsl_scan.c``,
``vdev_rebuild.c``, ``vdev_raidz.c``, ``vdev_mirror.c``):

* **healing resilver**: every block whose columns touch the failed leaf is read — raidz and
  dRAID read every surviving column, parity included (``ZIO_FLAG_RESILVER``), and rebuild
  the missing one; a mirror reads one healthy child chosen by load — its checksum verified,
  and the missing column written to the new disk (async-write class). Narrow raidz blocks
  that miss the failed leaf are skipped (``vdev_raidz_need_resilver()``). Sorted scan (0.8+):
  blocks are issued in offset order; when the data was written randomly the blocks a scan
  batch holds (its memory: 5 % of RAM) are a thinned sample of the span, so the issued
  offsets skip over the rest. Legacy scan (< 0.8): blocks in block-tree order, i.e. random
  offsets when the data was written randomly. An indirect block (1024 block pointers) is
  read per 1024 blocks. In flight: ``zfs_scan_vdev_limit`` × data disks (sorted) or 32
  blocks (legacy); scrub class per leaf, 2 or 3 active, 1 while the leaf is busy (2.1+).
* **sequential rebuild** (mirrors, dRAID): allocated ranges in offset order, in reads of
  1 MiB (a mirror) or 1 MiB per data column (dRAID, never past a group's end:
  :func:`zsim.zfs.scan.rebuild_chunk`), no checksums; a mirror copies from one child, dRAID
  reads every surviving column of the segment's groups that include the failed child and
  writes the missing one — to the new disk, or for a distributed spare to a surviving child
  outside the group. In flight: :meth:`ScanTunables.rebuild_inflight_bytes` of data;
  rebuild class.
* **scrub**: every block of every data vdev, all columns (raidz/dRAID) or all children
  (mirror), checksums verified.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import simpy

from zsim.des.engine import Engine
from zsim.des.vdev import (
    ASYNC_WRITE,
    REBUILD,
    SCRUB,
    LeafQueue,
    MissingLeaf,
    TopVdev,
    Zio,
    aggregation_limit,
)
from zsim.hardware import hdd
from zsim.layout.draid import DRAID_ROWHEIGHT, draid_columns
from zsim.machine.collector import collector_paused
from zsim.machine.resources import Busy, after
from zsim.machine.run_guard import CapReached, RunGuard, run_until
from zsim.zfs.indirect import BPS_PER_INDIRECT, indirect_block
from zsim.zfs.scan import SCAN_IO_BYTES, ScanTunables, rebuild_chunk

#: leaf I/Os a window aims to complete: enough for the disks' mechanics to average out
#: (hundreds of I/Os per disk), few enough that a window costs well under a second of wall
WINDOW_LEAF_IOS = 12000
MIN_WINDOW_UNITS = 48
#: the first share of a window's quota fills the queues; the rate is measured after it
WINDOW_RAMP = 0.15
#: ... and measured until this share is done at the latest (the last unit's issue, when that
#: comes first), before the queues drain
WINDOW_TAIL = 0.7


@dataclass
class WindowStats:
    """One window's measurement. Times in simulated seconds, bytes."""

    position: float  # where in the allocated span, 0…1
    seconds: float
    resilvered: int  # bytes written to the replacement (scrub: bytes verified)
    read: int  # bytes read from the surviving disks
    examined: int  # allocated bytes the scan walked (asize), including skipped blocks
    utilization: dict[str, float] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.resilvered / self.seconds if self.seconds > 0 else 0.0

    @property
    def examine_rate(self) -> float:
        return self.examined / self.seconds if self.seconds > 0 else 0.0


class ScanPlanner(Protocol):
    """A copy that is not a scan, driven by :class:`ZfsScan`'s windows (``planner=``).

    Its units are issued, limited and measured like a sequential rebuild's segments (no
    checksums, no reconstruction, the rebuild class); it says what they are. The RAIDZ
    expansion (:mod:`zsim.grow.reflow`) is one.
    """

    def units(self, top: TopVdev, position: float) -> Iterator[tuple[int, int]]:
        """(vdev offset, bytes) of the units issued from ``position`` (0…1), in order."""
        ...

    def plan(
        self, top: TopVdev, offset: int, nbytes: int
    ) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]], int]:
        """(reads, writes, bytes done) of one unit; reads and writes are (leaf, offset,
        bytes); the writes are issued once every read is done."""
        ...

    def limit(self, top: TopVdev) -> int:
        """Bytes of units in flight at most."""
        ...


def _area(busy: Busy, now: float) -> float:
    return busy.area + busy.active * (now - busy.since)


class _Lane:
    """The scan of one top-level vdev: its unit generator, in-flight accounting, writes."""

    def __init__(self, scan: ZfsScan, top: TopVdev, target_leaf: int | None):
        self.scan, self.top = scan, top
        self.target = target_leaf
        self.inflight = 0  # bytes (sorted scan, rebuild) or blocks (legacy)
        self.units: Iterator[tuple[int, int]] = iter(())
        self.new_leaf: LeafQueue | None = None
        self.alive = [i for i in range(len(top.leaves)) if i not in top.failed]


class ZfsScan:
    """Drives one scan mode over an :class:`Engine` whose pool is already degraded."""

    def __init__(
        self,
        engine: Engine,
        mode: str,
        tunables: ScanTunables,
        *,
        lanes: list[tuple[TopVdev, int | None]],
        psize: int,
        asize: int,
        fill: float,
        written: str,
        spare: str = "new",
        seed: int = 1,
        planner: ScanPlanner | None = None,
    ):
        self.engine, self.env = engine, engine.env
        self.planner = planner
        self.mode, self.t = mode, tunables
        self.psize, self.asize, self.fill, self.written = psize, asize, fill, written
        self.spare = spare
        self.rng = np.random.default_rng(seed)
        costs = engine.costs
        self.checksum_s = costs.checksum_per_byte
        self.parity_s = costs.parity_per_byte
        self.leaf_io_s = costs.leaf_io
        self.zio_s = costs.zio
        self.klass = REBUILD if mode == "sequential" else SCRUB
        self.write_klass = REBUILD if mode == "sequential" else ASYNC_WRITE
        version = engine.version
        rotating = engine.sc.hardware.disk.kind == "hdd"
        self.aggregation = aggregation_limit(rotating, version)
        self.lanes = [_Lane(self, top, leaf) for top, leaf in lanes]
        for lane in self.lanes:
            for leaf in lane.top.leaves:
                leaf.set_scan_limits(tunables.scrub_max_active, tunables.nia)
            if lane.target is not None:
                self._attach_replacement(lane)
        meta_psize, _ = indirect_block(1, 1 << 40, engine.sc.pool.ashift, "none")
        self.meta_psize = meta_psize
        # the blocks one sorted-scan batch holds, over the blocks on the vdev
        total_blocks = sum(max(1, int(fill * lane.top.space) // asize) for lane in self.lanes)
        self.batch_share = min(1.0, tunables.memory_limit / SCAN_IO_BYTES / total_blocks)
        # one sequential-rebuild read: (allocated, data) bytes (vdev_op_rebuild_asize)
        self.chunk = rebuild_chunk(
            self.lanes[0].top.vdev, engine.sc.pool.ashift, tunables.rebuild_segment
        )
        self.window_open = False
        self.quota = 0
        self.issued_units = 0
        self.done_units = 0
        self.resilvered = 0
        self.read = 0
        self.examined = 0
        self.walked = 0
        self.meta_every = BPS_PER_INDIRECT  # block pointers per indirect block
        self.finished: simpy.Event | None = None
        self.mark: dict[str, Any] | None = None
        self.end_mark: dict[str, Any] | None = None
        self.sliced = False
        self.slice_open = False
        self.slice_done: Callable[[], None] | None = None
        self.slice_gen = 0

    def enable_txg_slices(self) -> None:
        """Issue only inside each txg's sync, as ``dsl_scan_sync()`` does (module text of
        :mod:`zsim.zfs.scan`): on a pool that is writing, the scan gets its minimum time per
        txg and each txg's sync waits for the scan's slice and its I/O to finish."""
        zfs = self.engine.zfs
        self.sliced = True
        self.slice_open = False
        self.slice_done = None
        zfs.attach_scan(self._slice, lambda: self.window_open)

    def _slice(self, done: Callable[[], None]) -> None:
        if not self.window_open:
            done()
            return
        env, t = self.env, self.t
        self.slice_open, self.slice_done = True, done
        self.slice_gen += 1
        gen, start = self.slice_gen, env.now
        minimum = t.scrub_min_time if self.mode == "scrub" else t.resilver_min_time
        timeout = self.engine.zfs.txg.txg_timeout
        zfs = self.engine.zfs

        def check() -> None:
            if not self.slice_open or gen != self.slice_gen:
                return
            waiting = zfs.dirty >= t.suspend_dirty_fraction * zfs.txg.dirty_max or bool(
                zfs.throttled
            )
            if env.now - start >= timeout - 1e-9 or (env.now - start >= minimum and waiting):
                self._end_slice()
            else:
                after(env, 0.05, check)

        after(env, minimum, check)
        for lane in self.lanes:
            self._pump(lane)

    def _end_slice(self) -> None:
        self.slice_open = False
        self._maybe_release()

    def _maybe_release(self) -> None:
        """The slice is over and its I/O done: the txg's sync goes on."""
        if (
            self.sliced
            and not self.slice_open
            and self.slice_done is not None
            and not any(lane.inflight for lane in self.lanes)
        ):
            done, self.slice_done = self.slice_done, None
            done()

    def inflight_units(self) -> int:
        """Blocks (segments) the in-flight limits let the scan have out at once, per lane."""
        lane = self.lanes[0]
        limit = self._limit(lane)
        if self.mode == "sequential":
            return max(1, limit // self.chunk[1])
        if not self.t.sorted:
            return limit
        return max(1, limit // self.asize)

    # ---- set-up
    def _attach_replacement(self, lane: _Lane) -> None:
        top = lane.top
        assert lane.target is not None
        missing = top.leaves[lane.target]
        if not isinstance(missing, MissingLeaf):
            raise AssertionError("the resilvered leaf must be missing in the engine's pool")
        if self.spare == "distributed":
            return  # the slice's spare columns on surviving children take the writes
        # the new disk sits in the failed disk's slot: same device model and bus path
        leaf = LeafQueue(missing.device, self.aggregation, missing.version)
        leaf.set_scan_limits(self.t.scrub_max_active, self.t.nia)
        lane.new_leaf = leaf
        self.engine.zfs.add_leaf_queue(leaf)  # follows the async-write ramp

    def _limit(self, lane: _Lane) -> int:
        top = lane.top
        if self.planner is not None:
            return self.planner.limit(top)
        if self.mode == "sequential":
            tops = len(self.engine.zfs.tops)
            return self.t.rebuild_inflight_bytes(len(top.leaves), tops, self.chunk[1])
        if not self.t.sorted:
            return self.t.legacy_max_blocks
        return self.t.inflight_bytes(scan_data_disks(top.vdev))

    # ---- what the window walks
    def _units(self, lane: _Lane, position: float) -> Iterator[tuple[int, int]]:
        """(vdev offset, bytes) of the blocks (segments) the scan issues from ``position``."""
        top, asize, fill = lane.top, self.asize, self.fill
        rng = self.rng
        packed = self.written == "sequential"
        span = int(fill * top.space) if packed else top.space
        span = max(asize, span // asize * asize)
        offset = int(position * span) // asize * asize
        if self.mode == "sequential":
            segment = self.chunk[0]
            group = rebuild_group_bytes(top.vdev)
            while True:
                offset = self._relevant(lane, offset, span)
                if packed:
                    size = min(segment, group - offset % span % group)
                    yield offset % span, size
                    offset += size
                    continue
                # aged free space: allocated runs and holes, geometric in blocks
                run = asize * int(rng.geometric(max(1e-6, 1.0 - fill)))
                while run > 0:
                    size = min(segment, run, group - offset % span % group)
                    yield offset % span, size
                    offset += size
                    run -= size
                offset += asize * int(rng.geometric(max(1e-6, fill)))
        if not self.t.sorted and not packed:
            while True:  # legacy scan: block-tree order is random on disk
                yield int(rng.integers(0, span // asize)) * asize, asize
        density = 1.0 if packed else max(1e-6, fill * self.batch_share)
        while True:
            if density >= 1.0:
                jumped = self._relevant(lane, offset, span)
                self._walk(lane, (jumped - offset) // asize)
                offset = jumped
            yield offset % span, asize
            offset += asize if density >= 1.0 else asize * int(rng.geometric(density))

    def _relevant(self, lane: _Lane, offset: int, span: int) -> int:
        """``offset``, or the start of the next dRAID group that holds the failed child: a
        resilver has nothing to do in the others, and walking their blocks one by one would
        only cost wall time (the scan still walks their metadata, see :meth:`_walk`)."""
        top = lane.top
        if lane.target is None or top.vdev.kind != "draid":
            return offset
        vdev = top.vdev
        groupsz = vdev.draid_groupwidth * DRAID_ROWHEIGHT
        group = (offset % span) // groupsz
        base = offset - offset % span
        for g in range(group, group + 4 * vdev.width):
            columns, _ = draid_columns(
                g * groupsz, 1, top.ashift, vdev.width, vdev.nspares, vdev.ndata, vdev.parity
            )
            if any(c[0] == lane.target for c in columns):
                return max(offset, base + g * groupsz)
        return offset

    def _walk(self, lane: _Lane, blocks: int) -> None:
        """The healing scan visits ``blocks`` more blocks: one indirect block read per 1024."""
        if self.mode == "sequential" or blocks <= 0:
            return
        before = self.walked // self.meta_every
        self.walked += blocks
        for _ in range(min(self.walked // self.meta_every - before, 64)):
            self._meta_read(lane)

    # ---- a window
    def run_window(
        self, position: float, quota: int, wall_cap: float, duration: float | None = None
    ) -> WindowStats:
        """Issue ``quota`` blocks (segments) from ``position`` (0…1 of the span) and measure
        from when :data:`WINDOW_RAMP` of them are done (the queues have filled) to when the
        last is issued (the pipeline is still full); stop early at ``wall_cap`` seconds.

        With ``duration`` (simulated seconds) the window is timed instead: it issues without
        a quota and measures from 10 % of ``duration`` to its end — for a scan sharing the
        pool with a workload, whose rate breathes with the txgs."""
        env = self.env
        if duration is not None:
            quota = 1 << 62
        self.quota, self.issued_units, self.done_units = quota, 0, 0
        self.ramp_units = max(1, int(quota * WINDOW_RAMP))
        self.tail_units = max(self.ramp_units + 1, int(quota * WINDOW_TAIL))
        self.mark = None
        self.end_mark = None
        finished = self.finished = env.event()
        for k, lane in enumerate(self.lanes):
            at = (position + k * 0.37) % 1.0 if k else position
            if self.planner is not None:
                lane.units = self.planner.units(lane.top, at)
            else:
                lane.units = self._units(lane, at)
        self.window_open = True
        if self.sliced:
            self.engine.zfs.sync_if_idle()
        for lane in self.lanes:
            self._pump(lane)
        # the window's wall cap, checked inside the event loop too (a chunk of simulated
        # time may hold millions of events), and the engine's memory cap
        guard = RunGuard(wall_cap, self.engine.guard.max_memory)
        guard.base_rss = self.engine.guard.base_rss

        def run(until: float) -> bool:
            """Run to ``until``; False if the wall cap cut it short."""
            try:
                run_until(env, until, guard)
            except CapReached:
                return False
            return True

        if duration is not None:
            sim_start = env.now
            if run(sim_start + 0.1 * duration):
                self.mark = self._snapshot()
                while env.now < sim_start + duration and guard.wall() <= wall_cap:
                    if not run(min(sim_start + duration, env.now + 1.0)):
                        break
            self.end_mark = self._snapshot()
        while not finished.triggered and duration is None:
            if not run(env.now + 0.25) or guard.wall() > wall_cap:
                break
        self.window_open = False
        if self.sliced:
            self._end_slice()
        end = self.end_mark or self._snapshot()
        mark = self.mark or end
        seconds = end["now"] - mark["now"]
        busy = {name: area - mark["areas"][name] for name, area in end["areas"].items()}
        seconds = self._with_cached_writes(mark, end, seconds, busy)
        util = {}
        for name, area in busy.items():
            servers = end["servers"][name]
            util[name] = min(1.0, area / (seconds * servers)) if seconds > 0 else 0
        stats = WindowStats(
            position=position,
            seconds=seconds,
            resilvered=end["resilvered"] - mark["resilvered"],
            read=end["read"] - mark["read"],
            examined=end["examined"] - mark["examined"],
            utilization=util,
        )
        # let the window's stragglers finish so the next window starts clean
        settle = 0
        with collector_paused():
            while any(lane.inflight for lane in self.lanes) and settle < 400:
                env.run(until=env.now + 0.05)
                settle += 1
        return stats

    def _with_cached_writes(
        self, mark: dict[str, Any], end: dict[str, Any], seconds: float, busy: dict[str, float]
    ) -> float:
        """The window's length once the bytes the steadily written disks' caches took in
        during it reach the media. A resilver onto a new disk (or a RAIDZ reflow) writes
        the same disks for hours and every txg ends with a cache flush to every leaf
        (``spa_sync()`` → ``vdev_config_sync()`` → ``zio_flush()``), so their write caches
        hide nothing in the long run; a window shorter than the time to fill one (256 MiB
        take ~1 s at 250 MB/s) would count what the cache absorbed as throughput (a window
        measured 566 MB/s onto a 261 MB/s disk). The bytes such a disk's cache gained in the
        window still need their media time (at the rate where its head is); what its idle
        time could not hold (the drive destages in idle time,
        :mod:`zsim.hardware.hdd.access`) lengthens the window, which lasts until the slowest
        is done. A distributed spare's writes move from child to child with the dRAID slice
        (a burst per child, absorbed and drained between bursts), so they are left as
        simulated. Adds the media time to ``busy`` (the disks' busy seconds).

        The time the head was idle in the window may already have gone to destaging part of
        the window's own writes (the drive destages whenever it is idle), so the cache's
        growth alone undercounts: a window is also never shorter than all the bytes the
        disk took in over its media rate (a 0.4 s window at 289 MB/s onto a 253 MB/s disk
        got past the growth rule)."""
        steady = {
            f"disk:{lane.new_leaf.device.name}" for lane in self.lanes if lane.new_leaf is not None
        }
        if self.planner is not None:  # a reflow rewrites every child of its vdev
            steady.update(end["cached"])
        extra = 0.0
        for name in steady & end["cached"].keys():
            absorbed = end["cached"][name] - mark["cached"][name]
            if absorbed <= 0 or seconds <= 0:
                continue
            dev = self.engine.devices[name.removeprefix("disk:")]
            assert dev.state is not None, "only drives with a write cache state are listed"
            where = min(dev.state.head_offset / dev.model.capacity, 1.0)
            rate = hdd.media_rate(dev.model, where)
            media = absorbed / rate
            idle = max(0.0, seconds - busy[name])
            busy[name] += media
            wrote = end["written"][name] - mark["written"][name]
            extra = max(extra, media - idle, wrote / rate - seconds)
        return seconds + extra

    def _snapshot(self) -> dict[str, Any]:
        eng, now = self.engine, self.env.now
        areas, servers = {}, {}
        for name, dev in eng.devices.items():
            areas[f"disk:{name}"] = _area(dev.busy, now)
            servers[f"disk:{name}"] = dev.busy.servers
        for name, stage in eng.stages.items():
            areas[name] = stage.passive_area if stage.passive else _area(stage.busy, now)
            servers[name] = 1
        areas["cpu"] = _area(eng.cpu.busy, now)
        servers["cpu"] = eng.cpu.busy.servers
        return {
            "now": now,
            "areas": areas,
            "servers": servers,
            "cached": {
                f"disk:{name}": dev.state.dirty_bytes
                for name, dev in eng.devices.items()
                if dev.state is not None
            },
            "written": {
                f"disk:{name}": dev.bytes - dev.read_bytes for name, dev in eng.devices.items()
            },
            "resilvered": self.resilvered,
            "read": self.read,
            "examined": self.examined,
        }

    def _pump(self, lane: _Lane) -> None:
        limit = self._limit(lane)
        legacy = not self.t.sorted and self.mode != "sequential"
        skipped = 0
        while self.window_open and self.issued_units < self.quota:
            if lane.inflight >= limit or (self.sliced and not self.slice_open):
                return
            offset, nbytes = next(lane.units)
            self._walk(lane, 1)
            plan = self._plan(lane, offset, nbytes)
            if plan is None:  # the block misses the failed leaf: nothing to do
                self.examined += self.asize
                skipped += 1
                if skipped > 100 * self.quota:
                    raise AssertionError("the scan finds no block on the failed leaf")
                continue
            self.issued_units += 1
            if legacy:
                cost = 1
            elif self.mode != "sequential":
                cost = self.asize
            else:  # a rebuild counts its reads' data bytes in flight (vr_bytes_inflight)
                cost = nbytes if self.planner is not None else plan[2]
            lane.inflight += cost
            self._issue(lane, plan, cost)
            if self.issued_units == self.quota and self.mark is not None:
                # the last unit is out: measure up to here, while the pipeline is still full
                self.end_mark = self._snapshot()

    def _unit_done(self, lane: _Lane, cost: int) -> None:
        lane.inflight -= cost
        self.done_units += 1
        if self.sliced and not self.slice_open:
            self._maybe_release()
        if self.window_open:
            if self.done_units == self.ramp_units:
                self.mark = self._snapshot()
            elif self.done_units == self.tail_units and self.end_mark is None:
                # all of the quota went out early (the in-flight limit is larger): stop the
                # measurement before the queues drain unevenly
                self.end_mark = self._snapshot()
            finished = self.finished
            if self.done_units >= self.quota and finished is not None and not finished.triggered:
                finished.succeed()
            self._pump(lane)

    # ---- one block or segment
    def _plan(
        self, lane: _Lane, offset: int, nbytes: int
    ) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]], int] | None:
        """(reads, writes, data bytes) of one block or segment; ``None`` when it needs no
        I/O (a resilver's block that misses the failed leaf)."""
        top = lane.top
        if self.planner is not None:
            return self.planner.plan(top, offset, nbytes)
        if self.mode != "sequential":
            nbytes = self.psize  # a block: the units walk its allocation, asize apart
        if top.vdev.kind == "mirror":
            size = -(-nbytes // (1 << top.ashift)) << top.ashift
            if self.mode == "scrub":
                return [(i, offset, size) for i in lane.alive], [], size
            reads = [(top._pick_mirror_child(offset, size), offset, size)]
            assert lane.target is not None
            return reads, [(lane.target, offset, size)], size
        if self.mode == "sequential":
            # a rebuild segment is allocated (vdev) space: whole rows of D + P columns
            row = top.vdev.draid_groupwidth << top.ashift
            nbytes = max(1, nbytes // row) * (top.vdev.ndata << top.ashift)
        columns = top.block_columns(offset, nbytes)
        data = sum(c[2] for c in columns[top.vdev.parity :])
        if self.mode == "scrub":
            return [c for c in columns if c[2]], [], data
        lost = [c for c in columns if c[2] and c[0] == lane.target]
        if not lost:
            return None
        reads = [c for c in columns if c[2] and c[0] not in top.failed]
        writes = lost
        if self.spare == "distributed":
            spares = [i for i in top.draid_spares(offset, nbytes) if i not in top.failed]
            if not spares:
                raise AssertionError("a dRAID slice without a surviving spare column")
            writes = [(spares[0], lost[0][1], lost[0][2])]
        return reads, writes, data

    def _issue(
        self,
        lane: _Lane,
        plan: tuple[list[tuple[int, int, int]], list[tuple[int, int, int]], int],
        cost: int,
    ) -> None:
        top = lane.top
        reads, writes, data = plan
        reconstruct = top.vdev.kind != "mirror" and self.mode != "scrub" and not self.planner
        read_bytes = sum(r[2] for r in reads)
        written = sum(w[2] for w in writes)

        def finish() -> None:
            if self.mode != "sequential":
                self.examined += self.asize
            self.read += read_bytes
            self.resilvered += written if writes else data
            self._unit_done(lane, cost)

        def write_done() -> None:
            left[1] -= 1
            if left[1] == 0:
                finish()

        def issue_writes() -> None:
            if not writes:
                finish()
                return
            for leaf, leaf_offset, size in writes:
                if lane.new_leaf is not None and leaf == lane.target:
                    queue = lane.new_leaf
                else:
                    queue = top.leaves[leaf]
                queue.add(Zio(leaf_offset, size, True, self.write_klass, write_done))

        def read_done() -> None:
            left[0] -= 1
            if left[0]:
                return
            seconds = self.zio_s + (len(reads) + len(writes)) * self.leaf_io_s
            traffic = float(read_bytes)
            if self.mode != "sequential":  # checksums verified on every block
                seconds += data * self.checksum_s
                traffic += data
            if reconstruct:
                seconds += data * self.parity_s
                traffic += data
            self.engine.cpu.run(seconds, issue_writes, traffic, background=True)

        left = [len(reads), len(writes)]
        for leaf, leaf_offset, size in reads:
            top.leaves[leaf].add(Zio(leaf_offset, size, False, self.klass, read_done))

    def _meta_read(self, lane: _Lane) -> None:
        """The indirect block above the next 1024 blocks: one random read of one copy."""
        top = lane.top
        offset = int(self.rng.integers(0, max(1, top.space // self.asize))) * self.asize
        top.io(offset, self.meta_psize, False, self.klass, lambda: None)


def scan_data_disks(vdev: Any) -> int:
    """``dsl_scan_count_data_disks()``: children less parity (mirror: 1; dRAID: its children
    less spares and parity, not one group's D)."""
    if vdev.kind == "mirror" or vdev.kind == "disk":
        return 1
    return vdev.width - vdev.nspares - vdev.parity


def rebuild_group_bytes(vdev: Any) -> int:
    """Vdev bytes a sequential-rebuild read may not cross: a dRAID group
    (``vdev_draid_rebuild_asize()`` cuts a read at the group's end); unbounded otherwise."""
    if vdev.kind == "draid":
        return int(vdev.draid_groupwidth * DRAID_ROWHEIGHT)
    return 1 << 62


def window_quota(ios_per_unit: float) -> int:
    """Blocks (segments) per window: about :data:`WINDOW_LEAF_IOS` leaf I/Os (before the
    queues aggregate them) — what a window costs in wall time."""
    by_ios = WINDOW_LEAF_IOS / max(1.0, ios_per_unit)
    return max(MIN_WINDOW_UNITS, math.ceil(by_ios))


def window_units(ios_per_unit: float, inflight_units: float) -> int:
    """Blocks (segments) one window issues from one vdev: :func:`window_quota`, or up to
    four times it where the scan may hold more in flight — at least three in-flight limits'
    worth, so the measurement (:data:`WINDOW_RAMP` to :data:`WINDOW_TAIL`) sees the scan
    sliding along the vdev, not one batch draining from its busiest disks."""
    base = window_quota(ios_per_unit)
    return max(base, min(int(3 * inflight_units), 4 * base))
