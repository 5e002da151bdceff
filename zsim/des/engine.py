"""The discrete-event engine: fio/dd clients → ZPL/ARC → DMU/txg → vdev queues → bus → devices.

One SimPy environment; every component schedules its own next event with a timeout callback.
The run stops when the 95 % half-width of the I/O rate (batch means after MSER-5 warm-up
removal) is within ``target_ci`` of the mean, or at the simulated-time or wall-time cap, or
when the completion log is full. A scenario must fit the resource budget
(:func:`zsim.machine.budget.check_budget`) before anything is built; the wall-time and memory
caps are checked inside the event loop (:mod:`zsim.machine.run_guard`).
The ZFS side is :class:`zsim.des.zfs_model.ZfsModel`, the clients :class:`zsim.des.clients.Job`,
the machine :mod:`zsim.machine`; :func:`zsim.des.run.simulate_des` picks this engine or the
Linux block engine (:mod:`zsim.des.linux.blockfs`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import cast

import numpy as np
import simpy

from zsim.capacity import Partitioning, capacity, metaslab_shift
from zsim.des import precision
from zsim.des.clients import Job
from zsim.des.details import l2arc_details, zil_details
from zsim.des.linux.zpool_on import build_md_leaf
from zsim.des.vdev import ASYNC_READ, SYNC_READ, LeafQueue, TopVdev, aggregation_limit
from zsim.des.zfs_model import ZfsModel
from zsim.des.zil import Zil
from zsim.errors import ZsimError
from zsim.hardware import flash, hdd
from zsim.hardware.catalog import Profile
from zsim.layout.alloc import support_vdev_space
from zsim.layout.grammar import parse_layout
from zsim.layout.tree import VdevClass, ZfsLayout, ZpoolOnBlock
from zsim.machine import memory
from zsim.machine.budget import check_budget
from zsim.machine.costs import cpu_costs, zio_taskq_threads
from zsim.machine.links import bus_stages
from zsim.machine.resources import CpuPool, Device, MemoryBus
from zsim.machine.run_control import RunControl
from zsim.machine.run_guard import CapReached, RunGuard, run_until
from zsim.machine.stats import CompletionLog, latency_quantiles
from zsim.result import DirectionStats, SimResult
from zsim.scenario import Scenario
from zsim.zfs.arc import zfetch_max_distance
from zsim.zfs.txg import throttle_delay
from zsim.zfs.version import parse_zfs_version

Callback = Callable[[], None]


def spindle_phase(rng: np.random.Generator, model: hdd.HddParams | flash.FlashParams) -> float:
    """A drive's platter angle at time 0, as seconds into a revolution (spindles are not
    synchronised): one draw for an HDD, none (0) for flash."""
    return float(rng.uniform(0.0, model.period)) if isinstance(model, hdd.HddParams) else 0.0


class Engine:
    """Builds the model from a scenario and runs it."""

    def __init__(self, sc: Scenario, seed: int, control: RunControl):
        self.sc, self.seed, self.control = sc, seed, control
        check_budget(sc)
        self.stats = CompletionLog()
        self.measured_until: float | None = None  # end of the measured span, see _precision
        self.guard = self.make_guard(control)
        self.env = simpy.Environment()
        self.rng = np.random.default_rng(seed)
        self.stopped = False
        w, pool, hw = sc.workload, sc.pool, sc.hardware
        layout = sc.layout_tree()
        block = layout.block if isinstance(layout, ZpoolOnBlock) else None
        if block is not None:
            # ZFS sees the md array as its one disk: a single-disk pool named "md0"
            layout = parse_layout("md0")
        if not isinstance(layout, ZfsLayout):
            raise ZsimError(
                f"the discrete-event engine models ZFS pools, md RAID, btrfs and raw devices; "
                f"{pool.layout!r} is a {layout.system} layout, which it does not model yet"
            )
        if layout.of_class("dedup"):
            raise ZsimError(
                f"{pool.layout!r} has dedup vdevs, which the engine does not model yet; "
                f"simulate the data, special, log and cache vdevs alone for now"
            )
        if w.tool == "trace":
            raise ZsimError("trace workloads replay on one disk: call zsim.simulate(), not Engine")
        self.version = parse_zfs_version(hw.zfs_version)
        disk = hw.disk
        rotating = disk.kind == "hdd"
        names = list(block.devices) if block else [d for v in layout.data_vdevs for d in v.devices]
        self.memory = MemoryBus(self.env, hw.memory_bandwidth or memory.DEFAULT_MEMORY_BANDWIDTH)
        paths = bus_stages(self.env, sc.hardware, names, disk, memory=self.memory)
        self.stages = {s.name: s for p in paths.values() for s in p.stages}
        model = hdd.hdd_params(disk) if rotating else flash.flash_params(disk)
        agg = aggregation_limit(rotating, self.version)
        self.devices: dict[str, Device] = {}
        leaf_size = disk.size_bytes
        block_leaf = None
        if block is not None:
            for name in block.devices:
                phase = spindle_phase(self.rng, model)
                self.devices[name] = Device(self.env, name, model, rotating, paths[name], phase)
            parity = {5: 1, 6: 2}.get(block.level, 0)
            c = cpu_costs(
                hw.cpu_ghz, "off", parity, "off",
                io_scale=hw.cpu_io_cost_scale, byte_scale=hw.cpu_byte_cost_scale,
            )  # fmt: skip
            block_leaf = build_md_leaf(
                self.env, block, self.devices, disk.size_bytes, c.parity_per_byte,
                c.copy_per_byte, 3.0 / hw.cpu_ghz * hw.cpu_io_cost_scale, rotating,
                failed={i for i, name in enumerate(block.devices) if name in pool.failed},
            )  # fmt: skip
            leaf_size = block_leaf.size
        cap = capacity(
            layout,
            leaf_size,
            ashift=pool.ashift,
            zfs_version=self.version,
            # the scenario's checks hold pool.partitioning to the Partitioning values
            partitioning=cast(Partitioning, pool.partitioning) if block is None else "none",
            logical_sector=disk.logical_sector_bytes,
        )
        data_vdevs = [v for v in cap.vdevs if v.vclass == "normal"]
        tops = []
        for vdev, vcap in zip(layout.data_vdevs, data_vdevs, strict=True):
            leaves = []
            for name in vdev.devices:
                if block_leaf is not None:  # the pool's one leaf is the md array
                    leaves.append(LeafQueue(block_leaf, agg, self.version))  # type: ignore[arg-type]
                    continue
                phase = spindle_phase(self.rng, model)
                dev = Device(self.env, name, model, rotating, paths[name], phase)
                self.devices[name] = dev
                leaves.append(LeafQueue(dev, agg, self.version))
            # a failed leaf keeps its Device, which stays idle (0 % busy: never the limit)
            failed = {i for i, name in enumerate(vdev.devices) if name in pool.failed}
            top = TopVdev(
                vdev,
                leaves,
                pool.ashift,
                vcap.metaslab_bytes,
                rotating,
                failed,
                metaslab_shift=vcap.metaslab_shift,
                # degraded reads rebuild the missing column from parity: charge the CPU
                on_reconstruct=self._charge_reconstruction if failed else None,
                born=sc.born_regions(vcap.steps),
            )
            tops.append(top)
        self.log_tops = self._support_vdevs(layout, "log", hw.log_device)
        self.special_tops = self._support_vdevs(layout, "special", hw.special_device)
        self.cache_tops = self._support_vdevs(layout, "cache", hw.cache_device)
        self.cpu = CpuPool(
            self.env, hw.cpu_cores, self.memory, background_cap=zio_taskq_threads(hw.cpu_cores)
        )
        parity = max(v.parity for v in layout.data_vdevs)
        self.costs = cpu_costs(
            hw.cpu_ghz,
            pool.checksum,
            parity,
            pool.compression,
            w.source if w.tool == "dd" else "zero",
            compress_ratio=pool.compress_ratio,
            dedup=pool.dedup == "on",
            atime=pool.atime == "on",
            io_scale=hw.cpu_io_cost_scale,
            byte_scale=hw.cpu_byte_cost_scale,
        )
        self.zfs = ZfsModel(
            self.env,
            sc,
            tops,
            self.cpu,
            self.costs,
            self.rng,
            special=self.special_tops,
            cache=self.cache_tops,
        )
        self._setup_workload()
        # sync writes: O_SYNC (fio sync=1) or pool sync=always commit every write; fio
        # fsync=N commits a job's writes every N; sync=disabled makes commits no-ops
        self.o_sync = (w.tool == "fio" and w.sync) or pool.sync == "always"
        self.fsync_every = w.fsync if w.tool == "fio" else 0
        self.zil: Zil | None = None
        if pool.sync != "disabled" and (self.o_sync or self.fsync_every):
            self.zil = Zil(self.zfs, self.log_tops, pool.logbias, self.direct)
        self.recordsize = pool.recordsize
        self.call_work = {
            (r, d): self._call_work(r, d) for r in (False, True) for d in (False, True)
        }

    def _charge_reconstruction(self, nbytes: int, done: Callback) -> None:
        self.cpu.run(nbytes * self.costs.parity_per_byte, done, nbytes, background=True)

    def _support_vdevs(
        self, layout: ZfsLayout, vclass: VdevClass, profile: Profile | None
    ) -> list[TopVdev]:
        """``log`` or ``special`` vdevs, on their device profile (else the data disk's)."""
        vdevs = layout.of_class(vclass)
        if not vdevs:
            return []
        hw, pool = self.sc.hardware, self.sc.pool
        profile = profile or hw.disk
        rotating = profile.kind == "hdd"
        model = hdd.hdd_params(profile) if rotating else flash.flash_params(profile)
        aggregation = aggregation_limit(rotating, self.version)
        names = [d for v in vdevs for d in v.devices]
        paths = bus_stages(
            self.env, self.sc.hardware, names, profile, behind_hba=False, memory=self.memory
        )
        self.stages.update({s.name: s for p in paths.values() for s in p.stages})
        tops = []
        for vdev in vdevs:
            leaves = []
            for name in vdev.devices:
                phase = spindle_phase(self.rng, model)
                dev = Device(self.env, name, model, rotating, paths[name], phase)
                self.devices[name] = dev
                leaves.append(LeafQueue(dev, aggregation, self.version))
            space = support_vdev_space(profile.size_bytes)
            shift = metaslab_shift(space, self.version)
            top = TopVdev(vdev, leaves, pool.ashift, space, rotating, metaslab_shift=shift)
            tops.append(top)
        return tops

    # ---- workload shape
    def _setup_workload(self) -> None:
        w, rs = self.sc.workload, self.sc.pool.recordsize
        if w.tool == "dd":
            rw: str | None = "write" if w.direction == "write" else "read"
            bs, njobs, slots, self.file_bytes = w.bs, w.streams, 1, w.bytes
        else:
            rw, bs, njobs = w.rw, w.bs, w.numjobs
            slots = 1 if w.ioengine in ("psync", "sync") else w.iodepth
            self.file_bytes = w.size
        assert rw is not None and bs is not None, "the scenario's checks require fio/dd rw and bs"
        self.rw: str = rw
        self.bs: int = bs
        if self.bs <= 0:
            raise ZsimError("workload bs must be more than 0")
        self.file_records = max(1, -(-self.file_bytes // rs))
        self.random = self.rw.startswith("rand")
        self.read_fraction = {"read": 1.0, "randread": 1.0, "write": 0.0, "randwrite": 0.0}.get(
            self.rw, (w.rwmixread / 100) if w.tool == "fio" else 0.5
        )
        # dd writes a new file. fio lays a job's files out (writes them) before the run only
        # when the job reads or `overwrite` is set; a write-only job starts on sparse files
        # (fio's extend_file() just truncates them), so a record's first write reads nothing.
        self.new_files = w.tool == "dd" and self.rw == "write"
        self.sparse = w.tool == "fio" and self.read_fraction == 0.0 and not w.overwrite
        self.written: set[tuple[int, int]] = set()
        self.direct = (
            (w.tool == "fio" and w.direct and self.sc.pool.direct != "disabled")
            or self.sc.pool.direct == "always"
        ) and self.version.at_least(2, 3)
        concurrency = slots if self.direct else 1
        self.jobs = [Job(self, j, concurrency, slots) for j in range(njobs)]
        self.client_threads = njobs * concurrency
        self.client_cpu = 0.0
        self.zfs.place_files(njobs, self.file_records, new_files=self.new_files)
        if self.random and not self.sparse:
            # reads, and read-modify-writes of existing records, meet a warm ARC
            self.zfs.warm_arc(njobs, self.file_records)
        self.prefetch_records = max(1, zfetch_max_distance(self.version) // self.sc.pool.recordsize)

    def next_is_read(self) -> bool:
        f = self.read_fraction
        return f >= 1.0 or (f > 0.0 and self.rng.random() < f)

    def next_offset(self, job: Job) -> int:
        if self.random:
            blocks = max(1, self.file_bytes // self.bs)
            return int(self.rng.integers(blocks)) * self.bs
        offset = job.cursor
        job.cursor += self.bs
        if job.cursor + self.bs > self.file_bytes:
            job.cursor = 0
            job.prefetched_to = 0
        return offset

    # ---- one call
    def _batchable(self, job: Job, is_read: bool, offset: int) -> int:
        """How many consecutive calls of a single-slot sequential writer into a new file can
        be simulated as one: the calls that fill one record share their fate (same CPU
        core, same dirty record, no read), so one CPU job and one admission stand for all of
        them; their completions are spread over the batch exactly as one by one."""
        rs = self.recordsize
        if is_read or self.random or job.slots != 1 or self.zil is not None:
            return 1
        if rs % self.bs or offset % rs or self.zfs.throttled:
            return 1
        if not (self.new_files or self._hole(job.index, offset // rs)):
            return 1
        if throttle_delay(self.zfs.dirty, self.zfs.txg) > 0:
            return 1
        return max(1, min(rs // self.bs, (self.file_bytes - offset) // self.bs))

    def _call_work(self, is_read: bool, direct: bool) -> tuple[float, float]:
        """CPU seconds and memory bytes of one call (the same for every call of a run)."""
        work = self.costs.call(self.bs, is_read, direct, self.sc.workload.tool == "dd")
        if direct:  # Direct I/O maps the user pages; a write's checksum reads them once more
            return work, 0.0 if is_read else self.bs * memory.CHECKSUM_PASSES
        return work, memory.copy_bytes(self.bs)

    def call(self, job: Job, issued: float, is_read: bool, offset: int) -> None:
        rs = self.recordsize
        direct = self.direct and offset % rs == 0 and self.bs % rs == 0
        work, traffic = self.call_work[is_read, direct]
        batch = self._batchable(job, is_read, offset)
        if batch > 1:
            self._call_batch(job, issued, offset, work, batch, traffic)
            return
        self.client_cpu += work
        first, last = offset // rs, (offset + self.bs - 1) // rs
        if first == last:
            keys = [(job.index, first % self.file_records)]
        else:
            keys = [(job.index, r % self.file_records) for r in range(first, last + 1)]

        finish = functools.partial(job.finished, issued, is_read, self.bs)
        if is_read:
            after_cpu = functools.partial(self._read, job, keys, finish)
        else:
            after_cpu = functools.partial(self._write, job, keys, offset, issued, finish)
        self.cpu.run(work, after_cpu, traffic)

    def _call_batch(
        self, job: Job, issued: float, offset: int, work: float, n: int, traffic: float
    ) -> None:
        self.client_cpu += work * n
        key = (job.index, (offset // self.recordsize) % self.file_records)
        first = self._hole(*key)
        if first:
            self.written.add(key)
            self.zfs.first_writes.add(key)
        if self.sparse:  # the batch's calls fill one record of a sparse file
            self.zfs.fill_hole(key, n * self.bs, first)
        job.cursor = offset + n * self.bs
        if job.cursor + self.bs > self.file_bytes:
            job.cursor = 0

        def admitted() -> None:
            end = self.env.now
            start = end - n * work
            for i in range(n):
                done_at = start + (i + 1) * work
                self.record_at(done_at, issued if i == 0 else start + i * work, False, self.bs)
            job.finished_batch()

        self.cpu.run(work * n, lambda: self.zfs.dirty_record(key, admitted), traffic * n)

    def _read(self, job: Job, keys: list[tuple[int, int]], done: Callback) -> None:
        left = [len(keys)]

        def one() -> None:
            left[0] -= 1
            if left[0] == 0:
                done()

        use_cache = not self.direct
        for key in keys:
            self.zfs.read_record(key, SYNC_READ, one, use_cache)
        if not self.random:
            self._prefetch(job, keys[-1][1])

    def _prefetch(self, job: Job, record: int) -> None:
        """zfetch: keep ``prefetch_records`` records ahead of a sequential stream."""
        if job.prefetched_to > record + 1 + self.prefetch_records:
            # the stream wrapped to the file's start (a new pass): prefetch from there again
            job.prefetched_to = 0
        start = max(job.prefetched_to, record + 1)
        end = min(self.file_records, record + 1 + self.prefetch_records)
        for r in range(start, end):
            self.zfs.read_record((job.index, r), ASYNC_READ, lambda: None, not self.direct)
        job.prefetched_to = max(job.prefetched_to, end)

    def _write(
        self,
        job: Job,
        keys: list[tuple[int, int]],
        offset: int,
        issued: float,
        done: Callback,
    ) -> None:
        rs = self.recordsize
        whole = offset % rs == 0 and self.bs % rs == 0
        one: Callback = done  # one record and no log: its admission ends the call
        if self.zil is not None or len(keys) > 1:
            left = [len(keys)]

            def each() -> None:
                left[0] -= 1
                if left[0] == 0:
                    if self.zil is None:
                        done()
                    else:
                        self._log_and_commit(job, keys, offset, issued, done)

            one = each

        end = offset + self.bs
        for i, key in enumerate(keys):
            first = self._hole(*key)
            if self.sparse:
                # how much of a sparse file's record holds data: the rest is the hole's
                # zeros, which compression stores as almost nothing (ZfsModel.fill_hole)
                start = (offset // rs + i) * rs
                self.zfs.fill_hole(key, min(end, start + rs) - max(offset, start), first)
            if whole or self.new_files or first:
                # whole records, or a new file's records (a hole reads as zeros): no read
                if first:
                    self.written.add(key)
                    self.zfs.first_writes.add(key)
                self.zfs.dirty_record(key, one)
            else:
                # partial record: read-modify-write unless the record is in memory (an ARC
                # copy stored compressed is decompressed first, ZfsModel._expand)
                rewrite = functools.partial(self.zfs.dirty_record, key, one)
                self.zfs.read_record(key, SYNC_READ, rewrite)

    def _log_and_commit(
        self, job: Job, keys: list[tuple[int, int]], offset: int, issued: float, done: Callback
    ) -> None:
        """The write's intent-log records; O_SYNC commits them before the call returns,
        fsync=N commits every N-th write's job (fio counts the fsync apart from the write)."""
        zil = self.zil
        assert zil is not None
        rs = self.recordsize
        end = offset + self.bs
        for key in keys:
            start = key[1] * rs
            nbytes = min(end, start + rs) - max(offset, start)
            zil.log_write(job.index, key, nbytes, self.o_sync)
        if self.o_sync:
            zil.commit(job.index, done)
            return
        job.writes += 1
        if job.writes % self.fsync_every:
            done()
            return
        self.record(issued, False, self.bs)
        zil.commit(job.index, job.finished_batch)

    def _hole(self, job: int, record: int) -> bool:
        """Is this record of a sparse file still a hole (never written in the run)?"""
        return self.sparse and (job, record % self.file_records) not in self.written

    def record(self, issued: float, is_read: bool, nbytes: int) -> None:
        self.record_at(self.env.now, issued, is_read, nbytes)

    def record_at(self, done: float, issued: float, is_read: bool, nbytes: int) -> None:
        self.stats.add(done, done - issued, nbytes, is_read)

    # ---- run and measure
    def make_guard(self, control: RunControl) -> RunGuard:
        """The run's in-loop caps, counted from now (the engine's construction): wall time,
        memory growth and a full completion log."""
        return RunGuard(control.max_wall_seconds, control.max_memory_bytes, self.stats.full)

    def run_for(self, until: float) -> str | None:
        """Run the model to simulated time ``until``, or until a cap of the guard: returns
        the cap's name (``"wall"``, ``"completions"``) if one cut the chunk short."""
        try:
            run_until(self.env, until, self.guard)
        except CapReached as cap:
            return cap.reason
        return None

    def run(self) -> SimResult:
        guard = self.guard
        for job in self.jobs:
            job.start()
        control = self.control
        ci_rel, warmup, window = math.inf, 0.0, 0.0
        self.capped: str | None = None
        while True:
            now, early = self.env.now, self.env.now < control.min_sim_seconds
            if early and self._early_blocker() is None:  # may stop before the floor: look often
                until = precision.next_check(now, len(self.stats.times), control.check_every)
            else:
                until, early = now + control.check_every, False
            self.capped = self.run_for(until)
            wall = guard.wall()
            floor = self.env.now >= control.min_sim_seconds - 1e-9
            enough = len(self.stats.times) >= precision.EARLY_STOP_CALLS // 4
            if floor or self.capped or (early and enough):
                ci_rel, warmup, window = self._precision()
                precise = self.capped is None and ci_rel <= control.target_ci
                if precise and self._settled() and (floor or self.may_stop_early(warmup)):
                    break
            if control.on_check is not None:
                control.on_check(self.env.now, wall, ci_rel)
            if self.capped or self.env.now >= control.max_sim_seconds:
                break
            if wall >= control.max_wall_seconds:
                self.capped = "wall"
                break
        self.stopped = True
        return self._result(ci_rel, warmup, window, guard.wall())

    #: a write run whose buffer has not filled must have written this many times the most
    #: dirty data it held before it may stop: until then the clients' rate may include the
    #: buffer filling (absorbed faster than the disks drain it), which batch means cannot see
    SETTLE_DIRTY_MULTIPLE = 10

    def _early_blocker(self) -> str | None:
        """What holds the run to its floor of simulated time (:mod:`zsim.des.precision`)."""
        zfs = getattr(self, "zfs", None)
        return precision.early_stop_blocker(
            read_only=self.read_fraction >= 1.0,
            cache_or_scan=zfs is not None and bool(zfs.cache_tops or zfs.scan_active()),
            txgs_synced=None if zfs is None else zfs.txgs_synced,
        )

    def may_stop_early(self, warmup: float) -> bool:
        """May the run stop before ``RunControl.min_sim_seconds``?"""
        zfs = getattr(self, "zfs", None)
        return self._early_blocker() is None and precision.may_stop_early(
            self.stats.times,
            warmup,
            read_only=self.read_fraction >= 1.0,
            sync_times=zfs.sync_times if zfs is not None else None,
            end=self.measured_until,
        )

    def _settled(self) -> bool:
        """Is the write buffer's start-up out of what is measured, or a small part of it?"""
        return self.transient_share() <= 1.0 / self.SETTLE_DIRTY_MULTIPLE

    def transient_share(self) -> float:
        """How much the write buffer's start-up can still inflate the measured write rate:
        0 for read-only runs and once the buffer has filled to the throttle's threshold (the
        measurement starts after that, see :meth:`_precision`), else the most dirty data held
        over the bytes written so far."""
        if self.read_fraction >= 1.0 or self.zfs.filled_at is not None:
            return 0.0
        written = self.stats.write_bytes
        return self.zfs.max_dirty / written if written else math.inf

    def _precision(self) -> tuple[float, float, float]:
        """(relative 95 % half-width, start of the measured span, bin width) of the rate
        (:func:`zsim.des.precision.rate_precision`); the span ends now, or at the last txg
        sync of a write run measured by cycle (``self.measured_until``)."""
        zfs = getattr(self, "zfs", None)  # the Linux block engine has no txgs
        p = precision.rate_precision(
            self.stats.times,
            self.env.now,
            writes=self.read_fraction < 1.0 and zfs is not None,
            txgs_synced=zfs.txgs_synced if zfs is not None else 0,
            txg_timeout=zfs.txg.txg_timeout if zfs is not None else 5.0,
            filled_at=zfs.filled_at if zfs is not None else None,
            sync_times=zfs.sync_times if zfs is not None else (),
        )
        self.measured_until = p.end
        return p.ci_rel, p.start, p.window

    def _directions(self, warmup: float) -> tuple[DirectionStats, DirectionStats]:
        """Read and write rates and completion latencies of the calls done in the measured
        span: after ``warmup``, up to the last whole txg cycle when measured by cycle."""
        s = self.stats
        keep, end = self._kept(warmup)
        span = end - warmup
        lat = np.asarray(s.latencies)[keep]
        nbytes = np.asarray(s.nbytes)[keep]
        is_read = np.asarray(s.is_read, dtype=bool)[keep]

        def direction(mask: np.ndarray) -> DirectionStats:
            if not mask.any() or span <= 0:
                return DirectionStats()
            values = lat[mask]
            return DirectionStats(
                bytes_per_s=float(nbytes[mask].sum() / span),
                iops=float(mask.sum() / span),
                latency_mean=float(values.mean()),
                latency_p50=float(np.percentile(values, 50)),
                latency_p99=float(np.percentile(values, 99)),
            )

        return direction(is_read), direction(~is_read)

    def _kept(self, warmup: float) -> tuple[np.ndarray, float]:
        """(mask of the logged calls in the measured span, the span's end)."""
        times = np.asarray(self.stats.times)
        end = getattr(self, "measured_until", None)
        if end is None or end <= warmup:
            return times >= warmup, self.env.now
        return (times >= warmup) & (times < end), end

    def latency_quantiles(self, warmup: float) -> dict[str, dict[str, float]]:
        """:func:`zsim.machine.stats.latency_quantiles` of the calls in the measured span."""
        keep, _ = self._kept(warmup)
        return latency_quantiles(self.stats, keep)

    def _cap_notes(self, ci_rel: float) -> list[str]:
        """Why the run stopped short of its precision target, if it did."""
        notes = []
        if not math.isfinite(ci_rel) or ci_rel > self.control.target_ci:
            notes.append(
                f"stopped at the time cap before the 95% CI reached "
                f"{self.control.target_ci:.0%} (ci_rel {ci_rel:.3f})"
            )
        capped = getattr(self, "capped", None)
        if capped == "completions":
            notes.append(
                f"stopped with the completion log full ({self.stats.capacity:,} calls; raise "
                f"it with the environment variable ZSIM_MAX_COMPLETIONS)"
            )
        elif capped == "wall":
            notes.append(
                f"stopped at the wall-time cap of {self.control.max_wall_seconds:g} s "
                f"(set-up included): the figures depend on the machine's speed"
            )
        return notes

    def _result(self, ci_rel: float, warmup: float, window: float, wall: float) -> SimResult:
        read, write = self._directions(warmup)

        util = self._utilization()
        limit = self._limit(util)
        notes = []
        notes.extend(self._cap_notes(ci_rel))
        if self.sc.workload.direct and not self.direct:
            notes.append(
                f"O_DIRECT is buffered through the ARC on OpenZFS {self.version} "
                f"(Direct I/O arrived in 2.3)"
            )
        hits, misses = self.zfs.arc.hits, self.zfs.arc.misses
        return SimResult(
            engine="des",
            read=read,
            write=write,
            limit=limit,
            utilization=util,
            seed=self.seed,
            scenario=self.sc.to_dict(),
            ci_rel=ci_rel if math.isfinite(ci_rel) else None,
            sim_seconds=self.env.now,
            wall_seconds=wall,
            events=next(self.env._eid),  # events scheduled so far
            warmup_seconds=warmup,
            notes=tuple(notes),
            details={
                "arc_hit_ratio": hits / (hits + misses) if hits + misses else None,
                "arc_records": self.zfs.arc.capacity,
                "arc_hit_expands": self.zfs.expands,  # decompressed outside the dbuf cache
                "txgs_synced": self.zfs.txgs_synced,
                "reconstructed_reads": sum(t.reconstructions for t in self.zfs.all_tops),
                "indirect_blocks_written": self.zfs.meta_blocks_written,
                "blocks_freed": self.zfs.frees,
                **l2arc_details(self.zfs),
                "data_on_special": self.zfs.data_on_special,
                "throttle_delay_s": self.zfs.delay_time,
                "dirty_max_bytes": self.zfs.txg.dirty_max,
                "transient_share": self.transient_share(),
                "device_ios": {n: d.ios for n, d in self.devices.items()},
                "device_write_bytes": {n: d.bytes - d.read_bytes for n, d in self.devices.items()},
                "window_s": window,
                "latency_quantiles_s": self.latency_quantiles(warmup),
                **zil_details(self.zil),
            },
        )

    def _write_latency_sum(self) -> float:
        s = self.stats
        return float(sum(lat for lat, r in zip(s.latencies, s.is_read, strict=True) if not r))

    def _utilization(self) -> dict[str, float]:
        now = self.env.now
        util = {f"disk:{n}": d.utilization(now) for n, d in self.devices.items()}
        for name, stage in self.stages.items():
            util[name] = stage.utilization(now)
        util["cpu"] = self.cpu.busy.utilization(now)
        util["memory"] = self.memory.utilization(now)
        return util

    def _limit(self, util: dict[str, float]) -> str:
        # cores stalled on a saturated memory bus count as busy: the bus is the cause
        if util.get("memory", 0.0) >= 0.85:
            return "memory"
        name, busiest = max(util.items(), key=lambda kv: kv[1])
        if busiest >= 0.85:
            return name
        if self.read_fraction < 1.0 and self.zfs.delay_time > 0.2 * self.env.now:
            return "txg"
        if self.zil is not None and self.zil.commit_time > 0.5 * self._write_latency_sum():
            return "zil"
        # a few client threads each busy on their own core: bound by per-call CPU cost
        threads = min(self.client_threads, self.cpu.cores)
        if self.client_cpu >= 0.85 * threads * self.env.now:
            return "cpu"
        return "client"
