"""The page cache of the Linux block engine (:mod:`zsim.des.linux.blockfs`): buffered
writes' dirty pages, the dirty throttle and the flusher, and sequential readers' readahead.
Units are SI (bytes, seconds, bytes/s).

* page cache (``mm/filemap.c``): uniform random reads over W bytes with C bytes of cache
  hit with probability min(1, C/W) (as :class:`zsim.zfs.arc.RecordCache` ``uniform_hit``,
  drawn by the engine); a miss reads the block from the device. Sequential reads go through
  readahead (``mm/readahead.c``, :class:`Readahead`): ``read_ahead_kb`` 128 KiB
  (``VM_READAHEAD_PAGES``), raised by md to two full stripes for RAID0/10/5/6 (``raid0.c``,
  ``raid10.c``, ``raid5.c`` ``*_run()``), 4 MiB on btrfs (``fs/btrfs/disk-io.c``); one
  window is read ahead of the reader.
* buffered writes (``mm/page-writeback.c``, :class:`Writeback`): the call copies into dirty
  pages. Dirty limits are shares of dirtyable memory: ``dirty_background_ratio`` 10 % starts
  the flusher, ``dirty_ratio`` 20 % is the limit and ``balance_dirty_pages()`` holds writers
  around the set point (limit + (background + limit)/2)/2, i.e. 17.5 %; pages under
  writeback count as dirty for the throttle. The flusher (``fs/fs-writeback.c``) writes each
  inode's dirty pages in index order, ``MAX_WRITEBACK_PAGES`` (4 MiB) per inode per turn,
  under one plug (md gathers a plug's bios into stripes). Random writers' dirty pages are not
  tracked one by one: at density ρ = dirty/W the flusher's next dirty page is a geometric gap
  away (mean field), and a write hits an already dirty page with probability ρ. Runs start
  with dirty memory at the set point (where a fio run is after its first seconds), so the
  measured rate is the sustained write-back rate, as fio's ``end_fsync=1`` reports it.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable
from typing import Protocol

import numpy as np
import simpy

from zsim.des.clients import Job
from zsim.des.linux.filesystems import FsParams
from zsim.des.linux.mdraid_map import BlockDevice

Callback = Callable[[], None]


class PageCacheHost(Protocol):
    """What the page cache uses of its engine (:class:`zsim.des.linux.blockfs.BlockFsEngine`)."""

    env: simpy.Environment
    rng: np.random.Generator
    fs_params: FsParams
    dev: BlockDevice
    bs: int
    file_bytes: int

    def device_read(self, job: int, offset: int, nbytes: int, done: Callback) -> None:
        """Read file bytes of job ``job`` from the device."""

    def writeback_out(self, ranges: list[tuple[int, int, int]], done: Callback) -> None:
        """Write (job, file offset, bytes) ranges back to the device."""

    def count_page_lookup(self, hit: bool) -> None:
        """Count one page-cache lookup, a hit or a miss."""


class Writeback:
    """Dirty pages, the dirty throttle and the flusher for buffered writers.

    ``unit`` bytes is the dirtying granule (the page, or the block size of random writers);
    ``random`` selects the mean-field dirty set, else per-job FIFOs of dirty extents.
    """

    def __init__(
        self,
        engine: PageCacheHost,
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
            self.engine.writeback_out(ranges, functools.partial(self._written, nbytes))

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

    def __init__(self, engine: PageCacheHost, job: int, size: int):
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
            self.engine.count_page_lookup(True)
            done()
            return
        self.engine.count_page_lookup(False)

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
