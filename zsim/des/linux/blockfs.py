"""Linux md RAID with an ext4-like filesystem, and btrfs RAID1/RAID10, in the discrete-event
engine: the same clients, devices, bus, CPU, stop rule and result as the ZFS engine
(:mod:`zsim.des.engine`), with the Linux page cache, writeback, jbd2 and the md/btrfs block
maps in place of the ARC, txgs and vdevs.

Entry point: :func:`simulate_blockfs`. Units inside are SI (bytes, seconds, bytes/s). The
parts: :mod:`zsim.des.linux.filesystems` (ext4, btrfs and raw devices: file placement,
write-back targets, journal and log commits), :mod:`zsim.des.linux.pagecache` (dirty pages,
the dirty throttle, the flusher, readahead) and :mod:`zsim.des.linux.mdraid_map` (md and
btrfs block devices, member queues); this module builds them from a scenario and runs the
clients' calls through them.

* O_DIRECT: bs-sized I/Os straight to the block device, ``iodepth`` at once per job for
  asynchronous engines; buffered calls are one at a time per job (psync semantics).
* buffered random reads hit the page cache with probability min(1, C/W) (C bytes of cache,
  W of files); sequential reads go through :class:`zsim.des.linux.pagecache.Readahead`.

Not modelled: ext4 metadata beyond the journal commit (block allocation of sparse files,
extent tree updates), the md write-intent bitmap, kupdate-style expiry of old dirty pages,
btrfs metadata copy-on-write of the extent/checksum trees (small random writes on btrfs are
therefore optimistic), reads served from the md stripe cache, and the periodic commits
(ext4's jbd2 every 5 s, ``JBD2_DEFAULT_MAX_COMMIT_AGE``; btrfs's transaction every 30 s),
whose cache flush empties the drives' write caches: until an fsync, a write run's drive
caches only fill, and a run that stops while they still hold a tenth of what was written to
them says so in its notes (:meth:`BlockFsEngine.drive_cache_share`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import simpy

from zsim.des.clients import Job
from zsim.des.engine import Engine, spindle_phase
from zsim.des.linux.filesystems import Btrfs, Ext4, Filesystem, FsParams, RawFs
from zsim.des.linux.mdraid_map import (
    PAGE,
    BlockDevice,
    BlockParams,
    BtrfsDevice,
    MdDevice,
    MemberQueue,
    RawBlock,
    md_stripe_bytes,
)
from zsim.des.linux.pagecache import Readahead, Writeback
from zsim.errors import ZsimError
from zsim.hardware import flash, hdd
from zsim.layout.mdraid import md_array_bytes, md_data_offset, md_member_data_bytes
from zsim.layout.tree import BtrfsArray, MdArray, RawDevices
from zsim.machine import memory
from zsim.machine.budget import check_budget
from zsim.machine.costs import REFERENCE_GHZ, cpu_costs
from zsim.machine.links import bus_stages
from zsim.machine.resources import CpuPool, Device, MemoryBus
from zsim.machine.run_control import RunControl
from zsim.machine.stats import CompletionLog
from zsim.result import SimResult
from zsim.scenario import Scenario
from zsim.units import MiB

Callback = Callable[[], None]


class BlockFsEngine(Engine):
    """fio/dd clients → page cache / O_DIRECT → ext4-like fs on md, or btrfs → disks.

    Reuses :class:`zsim.des.engine.Engine`'s clients (:class:`~zsim.des.clients.Job`), stop rule
    (``run``/``_precision``) and result shape; builds its own storage stack.
    """

    def __init__(
        self,
        sc: Scenario,
        seed: int,
        control: RunControl,
        partition_bytes: int | None = None,
        block: BlockParams | None = None,
        fs: FsParams | None = None,
    ):
        self.sc, self.seed, self.control = sc, seed, control
        check_budget(sc)
        self.stats = CompletionLog()
        self.guard = self.make_guard(control)
        self.env = simpy.Environment()
        self.rng = np.random.default_rng(seed)
        self.stopped = False
        self.block_params = block or BlockParams()
        self.fs_params = fs or FsParams()
        w, hw = sc.workload, sc.hardware
        layout = sc.layout_tree()
        if not isinstance(layout, MdArray | BtrfsArray | RawDevices):
            raise ZsimError(
                f"the block-filesystem engine models md arrays, btrfs and raw devices; "
                f"{sc.pool.layout!r} "
                f"is a {layout.system} layout: use zsim.des.run.simulate_des for ZFS pools"
            )
        if w.tool not in ("fio", "dd"):
            raise ZsimError(
                f'md/btrfs runs take tool = "fio" or "dd", not {w.tool!r}; trace replay '
                f"drives one raw disk: use layout 'raw 1'"
            )
        self.layout = layout
        disk = hw.disk
        self.rotating = disk.kind == "hdd"
        names = list(layout.devices)
        self.memory = MemoryBus(self.env, hw.memory_bandwidth or memory.DEFAULT_MEMORY_BANDWIDTH)
        paths = bus_stages(self.env, sc.hardware, names, disk, memory=self.memory)
        self.stages = {s.name: s for p in paths.values() for s in p.stages}
        model = hdd.hdd_params(disk) if self.rotating else flash.flash_params(disk)
        self.devices: dict[str, Device] = {}
        for name in names:
            phase = spindle_phase(self.rng, model)
            self.devices[name] = Device(self.env, name, model, self.rotating, paths[name], phase)
        self.cpu = CpuPool(self.env, hw.cpu_cores, self.memory)
        self.raid5d = CpuPool(self.env, 1)
        parity = {5: 1, 6: 2}.get(getattr(layout, "level", 0), 0)
        source = w.source if w.tool == "dd" else "zero"
        self.costs = cpu_costs(
            hw.cpu_ghz,
            "off",
            parity,
            "off",
            source,
            io_scale=hw.cpu_io_cost_scale,
            byte_scale=hw.cpu_byte_cost_scale,
        )
        # md's per-stripe work scales like a per-I/O cost, btrfs's crc32c like a per-byte one
        self.cost_scale = REFERENCE_GHZ / hw.cpu_ghz * hw.cpu_io_cost_scale
        crc_scale = REFERENCE_GHZ / hw.cpu_ghz * hw.cpu_byte_cost_scale
        self.crc_per_byte = (
            crc_scale / self.fs_params.crc32c_rate if isinstance(layout, BtrfsArray) else 0.0
        )
        member_bytes = partition_bytes or disk.size_bytes
        if member_bytes > disk.size_bytes:
            raise ZsimError("the partition is larger than the disk; give a smaller partition")
        start = self.fs_params.partition_start if partition_bytes else 0
        self.partition_bytes = partition_bytes
        if isinstance(layout, MdArray):
            self._build_md(layout, member_bytes, start)
        elif isinstance(layout, RawDevices):
            self._build_raw(layout, member_bytes, start)
        else:
            self._build_btrfs(layout, member_bytes, start)
        self._setup_workload()

    # ---- storage
    def _build_md(self, md: MdArray, member_bytes: int, start: int) -> None:
        base = start + md_data_offset(member_bytes)
        queues = [MemberQueue(self.devices[n], self.block_params, base) for n in md.devices]
        data = md_member_data_bytes(member_bytes, md.level, md.chunk)
        size = md_array_bytes(md.level, [data] * md.width, md.chunk)
        c = self.costs
        self.dev: BlockDevice = MdDevice(
            md.level,
            md.chunk,
            queues,
            self.block_params,
            self.raid5d,
            c.parity_per_byte,
            c.copy_per_byte,
            self.cost_scale,
            self.rotating,
            failed={i for i, name in enumerate(md.devices) if name in self.sc.pool.failed},
        )
        self.fs: Filesystem = Ext4(self.env, self.dev, size, self.fs_params)
        if md.level == 1:
            self.stripe = PAGE
            self.read_ahead = self.fs_params.read_ahead
        else:
            self.stripe = md_stripe_bytes(md.level, md.width, md.chunk)
            self.read_ahead = max(self.fs_params.read_ahead, 2 * self.stripe)

    def _build_raw(self, layout: RawDevices, member_bytes: int, start: int) -> None:
        queues = [MemberQueue(self.devices[n], self.block_params, start) for n in layout.devices]
        self.dev = RawBlock(queues, self.block_params, member_bytes)
        self.fs = RawFs(self.dev, self.fs_params, self.sc.workload.offset)
        self.stripe = PAGE
        self.read_ahead = self.fs_params.read_ahead

    def _build_btrfs(self, layout: BtrfsArray, member_bytes: int, start: int) -> None:
        queues = [MemberQueue(self.devices[n], self.block_params, start) for n in layout.devices]
        failed = frozenset(
            i for i, name in enumerate(layout.devices) if name in self.sc.pool.failed
        )
        dev = BtrfsDevice(layout.profile, queues, self.block_params, failed=failed)
        self.dev = dev
        size = (member_bytes - MiB) * layout.width // 2
        keep = self.sc.workload.tool == "fio" and self.sc.workload.rw in ("randrw", "readwrite")
        self.fs = Btrfs(self.env, dev, size, self.fs_params, keep)
        self.stripe = PAGE
        self.read_ahead = max(self.fs_params.read_ahead, self.fs_params.btrfs_read_ahead)

    # ---- workload shape
    def _setup_workload(self) -> None:
        w, hw = self.sc.workload, self.sc.hardware
        if w.tool == "dd":
            rw: str | None = "write" if w.direction == "write" else "read"
            bs, njobs, slots, self.file_bytes = w.bs, w.streams, 1, w.bytes
            direct, self.o_sync, self.fsync_every = False, False, 0
        else:
            rw, bs, njobs = w.rw, w.bs, w.numjobs
            slots = 1 if w.ioengine in ("psync", "sync") else w.iodepth
            self.file_bytes = w.size
            direct, self.o_sync, self.fsync_every = w.direct, w.sync, w.fsync
        assert rw is not None and bs is not None, "the scenario's checks require fio/dd rw and bs"
        self.rw: str = rw
        self.bs: int = bs
        if self.bs <= 0:
            raise ZsimError("workload bs must be more than 0")
        self.direct = direct
        self.random = self.rw.startswith("rand")
        self.read_fraction = {"read": 1.0, "randread": 1.0, "write": 0.0, "randwrite": 0.0}.get(
            self.rw, (w.rwmixread / 100) if w.tool == "fio" else 0.5
        )
        concurrency = slots if direct else 1
        self.jobs = [Job(self, j, concurrency, slots) for j in range(njobs)]
        self.client_threads = njobs * concurrency
        self.client_cpu = 0.0
        self.fs.place_files(njobs, self.file_bytes, self.sc.pool.fill, max(self.stripe, MiB))
        working_set = njobs * self.file_bytes
        self.dirtyable = max(0, hw.ram - self.fs_params.reserved_memory)
        self.cache_hit = min(1.0, self.dirtyable / working_set) if working_set else 0.0
        self.page_hits = self.page_misses = 0
        self.readahead = [Readahead(self, j, self.read_ahead) for j in range(njobs)]
        self.synced = not direct and (self.o_sync or self.fsync_every > 0)
        self.pending: list[list[tuple[int, int]]] = [[] for _ in range(njobs)]
        self.writes_since_sync = [0] * njobs
        unit = max(PAGE, self.bs) if self.random else PAGE
        batch = -(-self.fs_params.writeback_chunk // self.stripe) * self.stripe
        self.wb = Writeback(self, unit, self.random, njobs, self.file_bytes, self.dirtyable, batch)
        if self.read_fraction < 1.0 and not direct and not self.synced:
            self.wb.warm(self.jobs)

    # ---- one call
    def call(self, job: Job, issued: float, is_read: bool, offset: int) -> None:
        c = self.costs
        work = c.syscall + (0.0 if self.direct else self.bs * c.copy_per_byte)
        traffic = 0.0 if self.direct else memory.copy_bytes(self.bs)
        if not is_read and not self.direct:  # the page cache pages a buffered write fills
            work += self.bs * c.cache_pages_per_byte
        if not is_read and self.sc.workload.tool == "dd":
            work += self.bs * c.source_per_byte
        self.client_cpu += work

        def finish() -> None:
            job.finished(issued, is_read, self.bs)

        if is_read:
            self.cpu.run(work, lambda: self._read_call(job.index, offset, finish), traffic)
        else:
            self.cpu.run(work, lambda: self._write_call(job.index, offset, finish), traffic)

    def count_page_lookup(self, hit: bool) -> None:
        """One page-cache lookup of a buffered read: a hit or a miss."""
        if hit:
            self.page_hits += 1
        else:
            self.page_misses += 1

    def _read_call(self, job: int, offset: int, done: Callback) -> None:
        """A read call of job ``job`` (by index) once its CPU work is done (not
        :meth:`Engine._read`, which reads ZFS records)."""
        if self.direct:
            self.device_read(job, offset, self.bs, done)
        elif self.random:
            if self.rng.random() < self.cache_hit:
                self.page_hits += 1
                done()
                return
            self.page_misses += 1
            start = offset // PAGE * PAGE
            end = -(-(offset + self.bs) // PAGE) * PAGE
            self.device_read(job, start, end - start, done)
        else:
            self.readahead[job].read(offset, self.bs, done)

    def device_read(self, job: int, offset: int, nbytes: int, done: Callback) -> None:
        """Read file bytes from the device; btrfs verifies checksums on completion, and a
        buffered read pays the page cache pages it fills."""
        work = nbytes * self.crc_per_byte
        if not self.direct:
            work += nbytes * self.costs.cache_pages_per_byte
        traffic = nbytes * memory.CHECKSUM_PASSES if self.crc_per_byte else 0.0
        self.fs.read(job, offset, nbytes, lambda: self.cpu.run(work, done, traffic))

    def _write_call(self, job: int, offset: int, done: Callback) -> None:
        """A write call of job ``job`` (by index) once its CPU work is done (not
        :meth:`Engine._write`, which dirties ZFS records)."""
        if self.direct:
            self._out([(job, offset, self.bs)], lambda: self._after_write(job, done), sync=True)
        elif self.synced:
            self.pending[job].append((offset, self.bs))
            self._after_write(job, done)
        else:
            self.wb.admit(job, offset, self.bs, done)

    def _after_write(self, job: int, done: Callback) -> None:
        """O_SYNC / fsync every N writes: write the job's dirty pages back, then commit."""
        self.writes_since_sync[job] += 1
        if not (
            self.o_sync or (self.fsync_every and self.writes_since_sync[job] >= self.fsync_every)
        ):
            done()
            return
        self.writes_since_sync[job] = 0
        ranges = sorted(self.pending[job])
        self.pending[job] = []
        merged: list[tuple[int, int, int]] = []
        for off, n in ranges:
            if merged and merged[-1][1] + merged[-1][2] >= off:
                end = max(merged[-1][1] + merged[-1][2], off + n)
                merged[-1] = (job, merged[-1][1], end - merged[-1][1])
            else:
                merged.append((job, off, n))
        if merged:
            # fsync and O_SYNC write back with WB_SYNC_ALL: REQ_SYNC bios
            self._out(merged, lambda: self.fs.commit(done), sync=True)
        else:
            self.fs.commit(done)

    def writeback_out(self, ranges: list[tuple[int, int, int]], done: Callback) -> None:
        self._out(ranges, done)

    def _out(self, ranges: list[tuple[int, int, int]], done: Callback, sync: bool = False) -> None:
        if self.crc_per_byte:
            nbytes = sum(n for _, _, n in ranges)
            self.cpu.run(nbytes * self.crc_per_byte, lambda: self.fs.write(ranges, done, sync=sync))
        else:
            self.fs.write(ranges, done, sync=sync)

    # ---- measurement (the stop rule is Engine.run / Engine._precision: no txgs here, so
    # bins of ~20 completions, zsim.des.precision)
    def transient_share(self) -> float:
        """0: buffered writes start with the page cache at its dirty set point
        (:meth:`Writeback.warm`), direct and synced writes have no buffer to fill."""
        return 0.0

    def drive_cache_share(self) -> tuple[int, int]:
        """(bytes the HDDs' write caches hold now, bytes written to the HDDs in the run): the
        second buffer a write run can fill faster than the media drain it. The ZFS engine's
        txg flushes empty it every cycle; here nothing does unless an fsync commits. A drive
        counts a write as held when it starts it and pays idle-time destage at its next
        command, so at the end of a run the first figure can be a little high."""
        held = written = 0
        for d in self.devices.values():
            if d.state is not None:
                held += d.state.dirty_bytes
                written += d.bytes - d.read_bytes
        return held, written

    def _utilization(self) -> dict[str, float]:
        util = super()._utilization()
        if isinstance(self.layout, MdArray) and self.layout.level in (5, 6):
            util["cpu:raid5d"] = self.raid5d.busy.utilization(self.env.now)
        return util

    def _limit(self, util: dict[str, float]) -> str:
        if util.get("memory", 0.0) >= 0.85:  # stalled cores count as busy; the bus is why
            return "memory"
        name, busiest = max(util.items(), key=lambda kv: kv[1])
        if busiest >= 0.85:
            return name
        now = max(self.env.now, 1e-9)
        if self.wb.throttle_time > 0.2 * now * len(self.jobs):
            stripe_wait = getattr(self.dev, "stripe_wait_time", 0.0)
            return "md-stripe-cache" if stripe_wait > 0.2 * now else "writeback"
        threads = min(self.client_threads, self.cpu.cores)
        if self.client_cpu >= 0.85 * threads * now:
            return "cpu"
        return "client"

    def _result(self, ci_rel: float, warmup: float, window: float, wall: float) -> SimResult:
        read, write = self._directions(warmup)

        util = self._utilization()
        notes = []
        notes.extend(self._cap_notes(ci_rel))
        if self.read_fraction < 1.0 and not self.direct and not self.synced:
            notes.append(
                "buffered writes: dirty memory starts at the throttle set point; the rate "
                "is the sustained write-back rate (what fio reports with end_fsync=1)"
            )
        lookups = self.page_hits + self.page_misses
        fs_name = {BtrfsArray: "btrfs", RawDevices: "none"}.get(type(self.layout), "ext4")
        held, written = self.drive_cache_share()
        if written and held >= written / self.SETTLE_DIRTY_MULTIPLE:
            flushes = {
                "ext4": " (ext4's 5-s journal commits, which flush them, are not modelled)",
                "btrfs": " (btrfs's 30-s transaction commits, which flush them, are not modelled)",
            }.get(fs_name, "")
            notes.append(
                f"the drives' write caches still hold {held / MiB:,.0f} MiB of the "
                f"{written / MiB:,.0f} MiB written to them ({held / written:.0%}): the rate "
                f"includes their filling, and a run long enough to reach their destage rate "
                f"would be lower{flushes}"
            )
        details: dict[str, Any] = {
            "filesystem": fs_name,
            "page_cache_hit_ratio": self.page_hits / lookups if lookups else None,
            "page_cache_bytes": self.dirtyable,
            "dirty_setpoint_bytes": self.wb.setpoint,
            "dirty_background_bytes": self.wb.background,
            "writeback_batches": self.wb.batches,
            "throttle_wait_s": self.wb.throttle_time,
            "journal_commits": getattr(self.fs, "commits", 0),
            "read_ahead_bytes": self.read_ahead,
            "device_ios": {n: d.ios for n, d in self.devices.items()},
            "window_s": window,
            "latency_quantiles_s": self.latency_quantiles(warmup),
        }
        details.update(self.dev.details())
        return SimResult(
            engine="des",
            read=read,
            write=write,
            limit=self._limit(util),
            utilization=util,
            seed=self.seed,
            scenario=self.sc.to_dict(),
            ci_rel=ci_rel if math.isfinite(ci_rel) else None,
            sim_seconds=self.env.now,
            wall_seconds=wall,
            events=next(self.env._eid),
            warmup_seconds=warmup,
            notes=tuple(notes),
            details=details,
        )


def simulate_blockfs(
    sc: Scenario,
    seed: int = 1,
    control: RunControl | None = None,
    *,
    partition_bytes: int | None = None,
) -> SimResult:
    """Run the discrete-event engine on an md (ext4-like filesystem) or btrfs scenario.

    ``partition_bytes``: each member is a partition of this size at the head of its disk
    (default: the whole disk), as in benchmarks that build md on small partitions.
    """
    return BlockFsEngine(sc, seed, control or RunControl(), partition_bytes).run()
