"""Linux md RAID with an ext4-like filesystem, and btrfs RAID1/RAID10, in the discrete-event
engine: the same clients, devices, bus, CPU, stop rule and result as the ZFS engine
(:mod:`zsim.des.engine`), with the Linux page cache, writeback, jbd2 and the md/btrfs block
maps in place of the ARC, txgs and vdevs.

Entry point: :func:`simulate_blockfs`. Units inside are SI (bytes, seconds, bytes/s).

The filesystem (ext4 on md; btrfs on its own devices):

* files: one per job, laid out before the run (fio lays files out; a read job always does)
  one after the other just below the fill line, each starting on a full stripe (mkfs.ext4
  sets ``stride``/``stripe_width`` from md and ``mballoc`` aligns large allocations to it);
  ext4 overwrites in place, btrfs writes copy-on-write: every write-back goes to a new,
  sequentially allocated logical range (``fs/btrfs/extent-tree.c``, the data cluster).
* page cache (``mm/filemap.c``): uniform random reads over W bytes with C bytes of cache
  hit with probability min(1, C/W) (as :class:`zsim.zfs.arc.RecordCache` ``uniform_hit``);
  a miss reads the block from the device. Sequential reads go through readahead
  (``mm/readahead.c``): ``read_ahead_kb`` 128 KiB (``VM_READAHEAD_PAGES``), raised by md to
  two full stripes for RAID0/10/5/6 (``raid0.c``, ``raid10.c``, ``raid5.c`` ``*_run()``),
  4 MiB on btrfs (``fs/btrfs/disk-io.c``); one window is read ahead of the reader.
* buffered writes (``mm/page-writeback.c``): the call copies into dirty pages. Dirty limits
  are shares of dirtyable memory: ``dirty_background_ratio`` 10 % starts the flusher,
  ``dirty_ratio`` 20 % is the limit and ``balance_dirty_pages()`` holds writers around the
  set point (limit + (background + limit)/2)/2, i.e. 17.5 %; pages under writeback count
  as dirty for the throttle. The flusher (``fs/fs-writeback.c``) writes each inode's dirty
  pages in index order, ``MAX_WRITEBACK_PAGES`` (4 MiB) per inode per turn, under one plug
  (md gathers a plug's bios into stripes). Random writers' dirty pages are not tracked one
  by one: at density ρ = dirty/W the flusher's next dirty page is a geometric gap away
  (mean field), and a write hits an already dirty page with probability ρ.
  Runs start with dirty memory at the set point (where a fio run is after its first
  seconds), so the measured rate is the sustained write-back rate, as fio's
  ``end_fsync=1`` reports it.
* O_DIRECT: bs-sized I/Os straight to the block device, ``iodepth`` at once per job for
  asynchronous engines; buffered calls are one at a time per job (psync semantics).
* fsync / O_SYNC: the data is written back, then the journal commits (``fs/jbd2/commit.c``:
  descriptor + inode block, a cache flush of every member — ``REQ_PREFLUSH`` — then the
  commit block with FUA); fsyncs that arrive during a commit share the next one (group
  commit). btrfs: a log-tree leaf, a flush of every device, then the superblock on every
  device with FUA (``fs/btrfs/tree-log.c`` ``btrfs_sync_log()``, ``write_all_supers()``).
  The ext4 journal (128 MiB, e2fsprogs 1.44 default for filesystems ≥ 16 GiB) sits in the
  middle of the filesystem (``get_midpoint_journal_block()`` in ``lib/ext2fs/mkjournal.c``).

Not modelled: ext4 metadata beyond the journal commit (block allocation of sparse files,
extent tree updates), the md write-intent bitmap, kupdate-style expiry of old dirty pages,
btrfs metadata copy-on-write of the extent/checksum trees (small random writes on btrfs are
therefore optimistic), reads served from the md stripe cache.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import simpy

from zsim.des.clients import Job
from zsim.des.engine import Engine
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
from zsim.des.vdev import Countdown
from zsim.errors import ZsimError
from zsim.hardware import flash, hdd
from zsim.layout.mdraid import md_array_bytes, md_data_offset, md_member_data_bytes
from zsim.layout.tree import BtrfsArray, MdArray, RawDevices
from zsim.machine import memory
from zsim.machine.costs import REFERENCE_GHZ, cpu_costs
from zsim.machine.links import bus_stages
from zsim.machine.resources import CpuPool, Device, MemoryBus
from zsim.machine.run_control import RunControl
from zsim.machine.stats import CompletionLog
from zsim.result import SimResult
from zsim.scenario import Scenario

Callback = Callable[[], None]
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


@dataclass(frozen=True)
class FsParams:
    """Linux memory-management and filesystem constants (defaults of Linux 4.15).

    ``reserved_memory`` bytes of RAM not available to the page cache: kernel, slab and
    user processes of an idle server (an estimate; ``MemAvailable`` of an idle Ubuntu
    server is typically RAM − 1 to 3 GiB). ``dirty_background_ratio``/``dirty_ratio``
    (``vm.dirty_*``, ``Documentation/admin-guide/sysctl/vm.rst``). ``read_ahead`` bytes
    (``VM_READAHEAD_PAGES`` = 128 KiB); ``btrfs_read_ahead`` 4 MiB (btrfs raises its bdi's
    ``ra_pages`` to 4 MiB). ``writeback_chunk`` bytes per inode per flusher turn
    (``MAX_WRITEBACK_PAGES`` 1024 pages). ``journal_bytes`` the ext4 journal (e2fsprogs
    1.44: 32768 blocks); ``commit_blocks`` 4 KiB blocks of a small jbd2 commit (descriptor,
    inode-table block, commit block). ``btrfs_log_bytes`` one log-tree leaf (``nodesize``
    16 KiB). ``crc32c_rate`` bytes/s per core at 3 GHz of the kernel's ``crc32c-intel``
    (the SSE4.2 ``crc32`` instruction: 8 bytes per ~3-cycle latency on one stream, ≈ 8 GB/s).
    ``partition_start`` where a Linux partition starts on its disk (1 MiB alignment of
    parted/fdisk).
    """

    reserved_memory: int = 2 * GiB
    dirty_background_ratio: float = 0.10
    dirty_ratio: float = 0.20
    read_ahead: int = 128 * KiB
    btrfs_read_ahead: int = 4 * MiB
    writeback_chunk: int = 4 * MiB
    journal_bytes: int = 128 * MiB
    commit_blocks: int = 3
    btrfs_log_bytes: int = 16 * KiB
    crc32c_rate: float = 8e9
    partition_start: int = MiB


# ---------------------------------------------------------------- filesystems


class Filesystem(ABC):
    """Where files live on the block device, and how data is written back."""

    def __init__(self, dev: BlockDevice, size: int, params: FsParams):
        self.dev, self.size, self.params = dev, size, params
        self.file_start: list[int] = []
        self.file_bytes = 0
        self.waiting: list[Callback] = []  # fsyncs waiting for the next commit
        self.committing = False
        self.commits = 0

    def place_files(self, njobs: int, file_bytes: int, fill: float, align: int) -> None:
        """Files one after the other just below the fill line, each on an ``align`` boundary."""
        per_file = -(-file_bytes // align) * align
        total = njobs * per_file
        start = max(0, int(self.size * min(0.95, max(0.0, fill))) - total)
        start = self.data_origin() + start // align * align
        if start + total > self.size:
            raise ZsimError(
                f"the jobs' files ({total} B) do not fit the {self.size} B filesystem; "
                f"lower workload size or numjobs"
            )
        self.file_start = [start + j * per_file for j in range(njobs)]
        self.file_bytes = file_bytes

    def data_origin(self) -> int:
        return 0

    def logical(self, job: int, offset: int) -> int:
        return self.file_start[job] + offset

    def read(self, job: int, offset: int, nbytes: int, done: Callback) -> None:
        self.dev.read(self.logical(job, offset), nbytes, done, reader=job)

    def write(self, ranges: list[tuple[int, int, int]], done: Callback) -> None:
        """Write (job, file offset, bytes) ranges to the device (write-back or O_DIRECT)."""
        self.dev.write([(self.logical(j, o), n) for j, o, n in ranges], done)

    def commit(self, done: Callback) -> None:
        """Make the written data durable: join the next group commit (every fsync that
        arrives while one commit is being written waits for the next, and shares it)."""
        self.waiting.append(done)
        if not self.committing:
            self._start_commit()

    def _start_commit(self) -> None:
        self.committing = True
        batch, self.waiting = self.waiting, []
        self._write_commit(lambda: self._committed(batch))

    def _committed(self, batch: list[Callback]) -> None:
        self.commits += 1
        self.committing = False
        for cb in batch:
            cb()
        if self.waiting and not self.committing:
            self._start_commit()

    @abstractmethod
    def _write_commit(self, done: Callback) -> None:
        """Write one commit to stable media (a jbd2 journal commit, a btrfs log tree)."""


class Ext4(Filesystem):
    """ext4 overwrites in place; fsync commits the jbd2 journal in the middle of the fs."""

    def __init__(self, env: simpy.Environment, dev: BlockDevice, size: int, params: FsParams):
        super().__init__(dev, size, params)
        self.env = env
        self.journal_start = size // 2 // PAGE * PAGE
        self.journal_cursor = 0

    def _write_commit(self, done: Callback) -> None:
        """A jbd2 commit: the journal blocks, a flush, then the commit block with FUA."""
        p = self.params
        size = p.commit_blocks * PAGE
        if self.journal_cursor + size > p.journal_bytes:
            self.journal_cursor = 0
        at = self.journal_start + self.journal_cursor
        self.journal_cursor += size
        body, tail = at, at + size - PAGE

        def flushed() -> None:
            self.dev.write([(tail, PAGE)], done, fua=True)

        self.dev.write([(body, size - PAGE)], lambda: self.dev.flush(flushed))


class Btrfs(Filesystem):
    """btrfs: copy-on-write data in a sequential allocation stream; fsync writes the log
    tree and the superblocks. The first data chunk holds the log (metadata) area."""

    def __init__(
        self, env: simpy.Environment, dev: BtrfsDevice, size: int, params: FsParams, keep: bool
    ):
        super().__init__(dev, size, params)
        self.env = env
        self.btrfs = dev
        self.cursor = 0
        self.location: dict[tuple[int, int], int] = {}
        self.keep_locations = keep
        self.log_cursor = 0

    def data_origin(self) -> int:
        return self.btrfs._chunk(0).logical_bytes  # after the first (metadata/log) chunk

    def place_files(self, njobs: int, file_bytes: int, fill: float, align: int) -> None:
        super().place_files(njobs, file_bytes, fill, align)
        self.cursor = self.file_start[-1] + -(-file_bytes // align) * align

    def read(self, job: int, offset: int, nbytes: int, done: Callback) -> None:
        moved = self.location.get((job, offset)) if self.location else None
        logical = moved if moved is not None else self.logical(job, offset)
        self.dev.read(logical, nbytes, done, reader=job)

    def write(self, ranges: list[tuple[int, int, int]], done: Callback) -> None:
        """Copy-on-write: the ranges go, in order, to fresh space at the allocation cursor."""
        out = []
        for job, offset, nbytes in ranges:
            if self.cursor + nbytes > self.size:
                self.cursor = self.data_origin()  # wrap like a log once the space is used
            if self.keep_locations:
                self.location[(job, offset)] = self.cursor
            out.append((self.cursor, nbytes))
            self.cursor += nbytes
        merged: list[tuple[int, int]] = []
        for logical, nbytes in out:
            if merged and merged[-1][0] + merged[-1][1] == logical:
                merged[-1] = (merged[-1][0], merged[-1][1] + nbytes)
            else:
                merged.append((logical, nbytes))
        self.dev.write(merged, done)

    def _write_commit(self, done: Callback) -> None:
        """An fsync's log tree, a flush, then the superblock of every device with FUA."""
        size = self.params.btrfs_log_bytes
        at = self.log_cursor
        self.log_cursor = (self.log_cursor + size) % max(size, self.data_origin() // 2)
        # write_all_supers() skips a missing device (no bdev) of a degraded mount
        queues = [q for i, q in enumerate(self.dev.queues) if i not in self.dev.failed]

        def flushed() -> None:
            countdown = Countdown(len(queues), done)
            for q in queues:  # primary superblock at 64 KiB of every present device, FUA
                q.submit(64 * KiB, PAGE, True, countdown.tick, flush=True)

        self.dev.write([(at, size)], lambda: self.dev.flush(flushed))


# ---------------------------------------------------------------- page cache write-back


class RawFs(Filesystem):
    """No file system: fio on bare block devices (layout ``raw N``), as calibration measures.

    Job ``j`` works on device ``j mod N``, on ``[offset, offset + size)`` (fio's ``offset``
    and ``size``); every job on one device shares that region, as fio jobs naming the same
    device do. The block layer, page cache and O_DIRECT rules are the engine's, unchanged:
    Linux buffers a block device's pages like a file's. O_SYNC or fsync makes the data
    durable with a cache flush of the job's device (``blkdev_fsync``: no journal).
    """

    def __init__(self, dev: RawBlock, params: FsParams, offset: int):
        super().__init__(dev, dev.member_bytes * len(dev.queues), params)
        self.raw, self.offset = dev, offset

    def place_files(self, njobs: int, file_bytes: int, fill: float, align: int) -> None:
        end = self.offset + file_bytes
        if end > self.raw.member_bytes:
            raise ZsimError(
                f"workload offset + size ({end} B) runs past the end of the device "
                f"({self.raw.member_bytes} B); lower workload.offset or workload.size"
            )
        members = len(self.raw.queues)
        self.file_start = [
            (j % members) * self.raw.member_bytes + self.offset for j in range(njobs)
        ]
        self.file_bytes = file_bytes

    def _write_commit(self, done: Callback) -> None:
        self.dev.flush(done)


class Writeback:
    """Dirty pages, the dirty throttle and the flusher for buffered writers.

    ``unit`` bytes is the dirtying granule (the page, or the block size of random writers);
    ``random`` selects the mean-field dirty set, else per-job FIFOs of dirty extents.
    """

    def __init__(
        self,
        engine: BlockFsEngine,
        unit: int,
        random: bool,
        njobs: int,
        file_bytes: int,
        dirtyable: int,
        batch: int,
    ):
        self.engine, self.unit, self.random = engine, unit, random
        p = engine.fs_params
        self.background = p.dirty_background_ratio * dirtyable
        limit = p.dirty_ratio * dirtyable
        self.setpoint = (limit + (self.background + limit) / 2) / 2
        self.njobs, self.file_bytes = njobs, file_bytes
        self.units_per_file = max(1, file_bytes // unit)
        self.total_units = self.units_per_file * njobs
        self.batch = batch
        self.dirty = 0  # bytes dirty, not yet under write-back
        self.writeback = 0  # bytes under write-back
        self.throttled: deque[Callback] = deque()
        self.throttle_time = 0.0
        self.cursors = [0] * njobs
        self.extents: list[deque[list[int]]] = [deque() for _ in range(njobs)]
        self.turn = 0
        self.batches = 0

    @property
    def density(self) -> float:
        return min(1.0, self.dirty / (self.total_units * self.unit))

    def warm(self, jobs: list[Job]) -> None:
        """Start at the throttle's set point, as a writer faster than the disks is after
        its first seconds (random: ρ = set point / W; sequential: each job's last bytes)."""
        cap = self.total_units * self.unit
        target = int(min(self.setpoint, cap))
        if self.random:
            self.dirty = target // self.unit * self.unit
            return
        per_job = min(self.file_bytes, target // self.njobs) // self.unit * self.unit
        for job in jobs:
            if per_job > 0:
                self.extents[job.index].append([0, per_job])
                job.cursor = per_job % max(1, self.file_bytes - self.engine.bs)
                self.dirty += per_job

    # ---- writers
    def admit(self, job: int, offset: int, nbytes: int, done: Callback) -> None:
        """``balance_dirty_pages()``: wait while dirty + write-back is at the set point."""
        if self.dirty + self.writeback >= self.setpoint or self.throttled:
            since = self.engine.env.now

            def resume() -> None:
                self.throttle_time += self.engine.env.now - since
                self._dirty(job, offset, nbytes)
                done()

            self.throttled.append(resume)
            self.pump()
            return
        self._dirty(job, offset, nbytes)
        done()

    def _dirty(self, job: int, offset: int, nbytes: int) -> None:
        if self.random:
            units = max(1, -(-nbytes // self.unit))
            rng = self.engine.rng
            fresh = units if self.density <= 0 else int((rng.random(units) >= self.density).sum())
            self.dirty += fresh * self.unit
        else:
            queue = self.extents[job]
            if queue and queue[-1][1] == offset:
                queue[-1][1] += nbytes
            else:
                queue.append([offset, offset + nbytes])
            self.dirty += nbytes
        self.pump()

    # ---- the flusher
    def pump(self) -> None:
        dev = self.engine.dev
        while self.dirty >= self.background and self.dirty > 0:
            if dev.busy():
                return
            ranges = self._take()
            if not ranges:
                return
            nbytes = sum(n for _, _, n in ranges)
            self.dirty -= nbytes
            self.writeback += nbytes
            self.batches += 1
            self.engine.writeback_out(ranges, lambda n=nbytes: self._written(n))

    def _written(self, nbytes: int) -> None:
        self.writeback -= nbytes
        while self.throttled and self.dirty + self.writeback < self.setpoint:
            self.throttled.popleft()()
        self.pump()

    def _take(self) -> list[tuple[int, int, int]]:
        for _ in range(self.njobs):
            job = self.turn
            self.turn = (self.turn + 1) % self.njobs
            ranges = self._take_random(job) if self.random else self._take_extent(job)
            if ranges:
                return ranges
        return []

    def _take_random(self, job: int) -> list[tuple[int, int, int]]:
        rho = self.density
        if rho <= 0:
            return []
        want = min(max(1, self.batch // self.unit), max(1, self.dirty // self.unit))
        gaps = self.engine.rng.geometric(rho, size=want)
        positions = self.cursors[job] + np.cumsum(gaps) - 1
        positions = positions[positions < self.units_per_file]
        if len(positions) == 0:
            self.cursors[job] = 0  # end of this inode's pass: start over next turn
            return []
        self.cursors[job] = int(positions[-1]) + 1
        if self.cursors[job] >= self.units_per_file:
            self.cursors[job] = 0
        ranges: list[tuple[int, int, int]] = []
        for u in positions.tolist():
            off = u * self.unit
            if ranges and ranges[-1][1] + ranges[-1][2] == off:
                ranges[-1] = (job, ranges[-1][1], ranges[-1][2] + self.unit)
            else:
                ranges.append((job, off, self.unit))
        return ranges

    def _take_extent(self, job: int) -> list[tuple[int, int, int]]:
        queue = self.extents[job]
        if not queue:
            return []
        start, end = queue[0]
        n = min(end - start, self.batch)
        if n < end - start:
            queue[0][0] = start + n
        else:
            queue.popleft()
        return [(job, start, n)]


# ---------------------------------------------------------------- readahead


class _Window:
    __slots__ = ("end", "ready", "start", "waiters")

    def __init__(self, start: int, end: int):
        self.start, self.end, self.ready = start, end, False
        self.waiters: list[Callback] = []


class Readahead:
    """One sequential reader's readahead: windows of ``size`` bytes, one kept ahead."""

    def __init__(self, engine: BlockFsEngine, job: int, size: int):
        self.engine, self.job, self.size = engine, job, size
        self.windows: deque[_Window] = deque()
        self.issued_to = 0

    def read(self, offset: int, nbytes: int, done: Callback) -> None:
        end = offset + nbytes
        if not self.windows or offset < self.windows[0].start or offset > self.issued_to:
            self.windows.clear()  # a jump (or the file wrapped): start a new stream
            self.issued_to = offset
        limit = self.engine.file_bytes
        while self.issued_to < min(limit, end + self.size):
            self._issue(self.issued_to, min(limit, self.issued_to + self.size))
        while self.windows and self.windows[0].end <= offset:
            self.windows.popleft()
        waiting = [w for w in self.windows if not w.ready and w.start < end]
        left = [len(waiting)]
        if not waiting:
            self.engine.page_hits += 1
            done()
            return
        self.engine.page_misses += 1

        def one() -> None:
            left[0] -= 1
            if left[0] == 0:
                done()

        for w in waiting:
            w.waiters.append(one)

    def _issue(self, start: int, end: int) -> None:
        window = _Window(start, end)
        self.windows.append(window)
        self.issued_to = end

        def ready() -> None:
            window.ready = True
            for cb in window.waiters:
                cb()
            window.waiters.clear()

        self.engine.device_read(self.job, start, end - start, ready)


# ---------------------------------------------------------------- the engine


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
        self.env = simpy.Environment()
        self.rng = np.random.default_rng(seed)
        self.stopped = False
        self.stats = CompletionLog()
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
        paths = bus_stages(self.env, sc.hardware, names, disk)
        self.stages = {s.name: s for p in paths.values() for s in p.stages}
        model = hdd.hdd_params(disk) if self.rotating else flash.flash_params(disk)
        self.devices: dict[str, Device] = {}
        for name in names:
            phase = float(self.rng.uniform(0.0, model.period)) if self.rotating else 0.0
            self.devices[name] = Device(self.env, name, model, self.rotating, paths[name], phase)
        self.memory = MemoryBus(self.env, hw.memory_bandwidth or memory.DEFAULT_MEMORY_BANDWIDTH)
        for dev in self.devices.values():
            dev.path.memory = self.memory
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
        )
        self.dev.failed = frozenset(
            i for i, name in enumerate(md.devices) if name in self.sc.pool.failed
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
            self.rw = "write" if w.direction == "write" else "read"
            self.bs, njobs, slots, self.file_bytes = w.bs, w.streams, 1, w.bytes
            direct, self.o_sync, self.fsync_every = False, False, 0
        else:
            self.rw, self.bs, njobs = w.rw, w.bs, w.numjobs
            slots = 1 if w.ioengine in ("psync", "sync") else w.iodepth
            self.file_bytes = w.size
            direct, self.o_sync, self.fsync_every = w.direct, w.sync, w.fsync
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
            self.cpu.run(work, lambda: self._read(job.index, offset, finish), traffic)
        else:
            self.cpu.run(work, lambda: self._write(job.index, offset, finish), traffic)

    def _read(self, job: int, offset: int, done: Callback) -> None:
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

    def _write(self, job: int, offset: int, done: Callback) -> None:
        if self.direct:
            self._out([(job, offset, self.bs)], lambda: self._after_write(job, done))
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
            self._out(merged, lambda: self.fs.commit(done))
        else:
            self.fs.commit(done)

    def writeback_out(self, ranges: list[tuple[int, int, int]], done: Callback) -> None:
        self._out(ranges, done)

    def _out(self, ranges: list[tuple[int, int, int]], done: Callback) -> None:
        if self.crc_per_byte:
            nbytes = sum(n for _, _, n in ranges)
            self.cpu.run(nbytes * self.crc_per_byte, lambda: self.fs.write(ranges, done))
        else:
            self.fs.write(ranges, done)

    # ---- measurement (the stop rule is Engine.run / Engine._precision)
    def _window(self) -> float:
        """Width of the rate series' bins: long enough for ~20 completions per bin."""
        n = len(self.stats.times)
        rate = n / max(self.env.now, 1e-9)
        window = 20 / rate if rate > 0 else self.env.now / 10
        return max(window, self.env.now / 400)

    def transient_share(self) -> float:
        """0: buffered writes start with the page cache at its dirty set point
        (:meth:`Writeback.warm`), direct and synced writes have no buffer to fill."""
        return 0.0

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
        if not math.isfinite(ci_rel) or ci_rel > self.control.target_ci:
            notes.append(
                f"stopped at the time cap before the 95% CI reached "
                f"{self.control.target_ci:.0%} (ci_rel {ci_rel:.3f})"
            )
        if self.read_fraction < 1.0 and not self.direct and not self.synced:
            notes.append(
                "buffered writes: dirty memory starts at the throttle set point; the rate "
                "is the sustained write-back rate (what fio reports with end_fsync=1)"
            )
        lookups = self.page_hits + self.page_misses
        fs_name = {BtrfsArray: "btrfs", RawDevices: "none"}.get(type(self.layout), "ext4")
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
