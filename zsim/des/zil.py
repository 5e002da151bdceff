"""The ZFS Intent Log in the engine: sync-write commits through log blocks on a SLOG or the pool.

Sources (OpenZFS ``module/zfs/zil.c``, ``zfs_log.c``, ``dmu.c``; ``man/man4/zfs.4``; the
project's notes ``zfs-internals.md`` §8):

* Every write makes an intent-log record (itx). Only a commit (``zil_commit``: O_SYNC, an
  fsync, ``sync=always``) writes them out; itxs of a txg that has synced are dropped.
* Record state (``zfs_log_write()``): ``WR_INDIRECT`` when ``logbias=throughput``, for
  O_DIRECT writes (2.3+), or with no SLOG and a write of at least ``zfs_immediate_write_sz``
  (32 KiB). From 2.4 (``zil_write_state()``, "Allow and prefer special vdevs as ZIL") also
  only when the write covers at least half a record or is not committed at once, and never
  with a SLOG. Otherwise the data is copied into the log (``WR_COPIED`` / ``WR_NEED_COPY``).
* ``WR_INDIRECT``: ``dmu_sync()`` writes the whole record to its final place in the pool now,
  at sync-write priority; the log record holds only its block pointer (192 B, an
  ``lr_write_t``) and the txg sync reuses the block unless the record is dirtied again.
* Log blocks (lwbs) are at most ``zil_maxblocksize`` = 128 KiB, each with a 184 B
  ``zil_chain_t``; they go to the log vdevs in turn, or without a SLOG to the data vdevs.
  A commit waits for its lwb and every earlier one, then for a cache flush of every vdev
  the lwbs and their indirect blocks touched (``zil_nocacheflush`` = 0).
* Batching: an lwb that is not full is issued when its commit waiter times out, after
  ``zfs_commit_timeout_pct`` (5 % before 2.2.4, 10 % from 2.2.4) of the last lwb's latency.
  From 2.2 a lone committer (no other commit waiting) issues at once. That is a
  simplification of ``zil_process_commit_list()``, checked against the source since: in
  2.2.0–2.2.3 an lwb goes out at once only when the commit found no lwb open or unflushed
  *and* the timeout would be under ``zil_min_commit_timeout`` (5 µs, i.e. lwbs faster than
  100 µs) or the lwb is nearly full; from 2.2.4 (``zl_parallel``, commit 7ea8331009;
  master 252f46be7d) when no commit met another's open or unflushed lwb over the last
  bursts (one job: always; several jobs: rarely). So this rule issues at once more often
  than the source for several jobs, and for one job on 2.2.0–2.2.3 with slow lwbs. Both
  engines share it, so the source's rule has to change both: the analytic engine's chains
  (:func:`zsim.analytic.zil_parts.commits_per_lwb`) as well as :meth:`Zil._schedule_issue`.

Not modelled: the ``zfs_wrlog_data_max`` throttle on log bytes (it delays writers only when
log data outruns the txg sync by 2 × the dirty limit), ``zil_slog_bulk`` (the class an lwb
is queued in makes no difference on a log device that only holds the log).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

import simpy

from zsim.des.txg_runs import TxgState
from zsim.des.vdev import SYNC_WRITE, TopVdev
from zsim.layout.alloc import psize_to_asize
from zsim.machine.costs import CpuCosts
from zsim.machine.resources import CpuPool, after
from zsim.zfs.zil import (
    LR_WRITE_BYTES,
    ZIL_CHAIN_BYTES,
    ZIL_MAX_BLOCK,
    commit_timeout_pct,
    is_indirect,
)

Callback = Callable[[], None]


class ZilPool(Protocol):
    """What the log asks of the pool: :class:`zsim.des.zfs_model.ZfsModel`, or the analytic
    engine's log tables (:mod:`zsim.analytic.log_table`), which run this log alone."""

    env: simpy.Environment
    version: Any
    tops: list[TopVdev]
    costs: CpuCosts
    cpu: CpuPool
    recordsize: int
    psize: int
    asizes: list[int]
    location: dict[tuple[int, int], tuple[int, int]]

    @property
    def open(self) -> TxgState:
        """The open txg: an itx of a txg that has synced is dropped."""

    def next_vdev(self, psize: int | None = None) -> int:
        """The data vdev the allocation rotor gives the next block."""

    def presync(self, key: tuple[int, int]) -> None:
        """Record ``key`` was written to its final place by ``dmu_sync()``."""


class Itx:
    """One intent-log record: a job's write to one record, waiting for a commit."""

    __slots__ = ("indirect", "job", "key", "log_bytes", "lwb", "sync", "txg")

    def __init__(
        self, job: int, key: tuple[int, int], log_bytes: int, indirect: bool, sync: bool, txg: Any
    ):
        self.job, self.key, self.log_bytes = job, key, log_bytes
        self.indirect, self.sync, self.txg = indirect, sync, txg
        self.lwb: Lwb | None = None


class Lwb:
    """A log write block: the itxs it holds, the I/Os it waits for, the commits waiting on it."""

    __slots__ = ("done", "issued", "pending", "seq", "start", "tops", "used", "waiters")

    def __init__(self, seq: int):
        self.seq = seq
        self.used = ZIL_CHAIN_BYTES
        self.issued = False
        self.done = False
        self.pending = 0
        self.waiters: list[Callback] = []
        self.tops: set[int] = set()  # data vdevs an indirect block of this lwb went to
        self.start = 0.0


class Zil:
    """One dataset's intent log (every fio job's file is in the same dataset)."""

    def __init__(self, zfs: ZilPool, log_tops: list[TopVdev], logbias: str, direct: bool):
        self.zfs, self.env = zfs, zfs.env
        self.log_tops = log_tops
        self.logbias = logbias
        self.direct = direct
        self.version = zfs.version
        self.pending: deque[Itx] = deque()
        self.lwbs: deque[Lwb] = deque()  # issued or open, oldest first, not yet released
        self.open: Lwb | None = None
        self.seq = 0
        self.rotor = 0
        self.last_latency = 0.0
        self.waiting_commits = 0
        # ZIL blocks in the pool go to each vdev's embedded log metaslab (2.1+), the one
        # with the most free space when the pool was opened (vdev.c, vdev_metaslab_init());
        # here the log starts at the allocation cursor after the working files (the Engine
        # makes the log once they are laid out), the empty space the txgs allocate from too
        # [inference]
        self.pool_log_cursor = [t.cursor for t in zfs.tops]
        # what the run did, for the result's details
        self.commits = 0
        self.commit_time = 0.0
        self.lwbs_written = 0
        self.log_bytes = 0
        self.indirect_writes = 0

    @property
    def has_slog(self) -> bool:
        return bool(self.log_tops)

    # ---- records
    def log_write(self, job: int, key: tuple[int, int], nbytes: int, commit_now: bool) -> None:
        """Make the itx for ``nbytes`` written to record ``key`` by ``job``."""
        indirect = is_indirect(
            nbytes,
            self.zfs.recordsize,
            has_slog=self.has_slog,
            logbias=self.logbias,
            direct=self.direct,
            commit_now=commit_now,
            version=self.version,
        )
        log_bytes = LR_WRITE_BYTES + (0 if indirect else -(-nbytes // 8) * 8)
        self.pending.append(Itx(job, key, log_bytes, indirect, commit_now, self.zfs.open))

    # ---- commits
    def commit(self, job: int, done: Callback) -> None:
        """``zil_commit()`` for ``job``'s file: its itxs and every sync itx reach stable
        storage, then ``done``."""
        self.commits += 1
        start = self.env.now

        def finished() -> None:
            self.waiting_commits -= 1
            self.commit_time += self.env.now - start
            done()

        self.waiting_commits += 1
        mine = [i for i in self.pending if i.job == job or i.sync]
        if mine:
            self.pending = deque(i for i in self.pending if not (i.job == job or i.sync))
        last: Lwb | None = None
        for itx in mine:
            if itx.txg.synced:  # its txg reached the disks already
                continue
            last = self._place(itx)
        if last is None:
            # nothing new: wait for the lwbs already under way, if any
            pending = [lwb for lwb in self.lwbs if not lwb.done]
            if not pending:
                finished()
                return
            last = pending[-1]
        last.waiters.append(finished)
        if last is self.open:
            self._schedule_issue(last)

    def _place(self, itx: Itx) -> Lwb:
        """Put an itx in the open lwb (issuing it when full); start its indirect write."""
        lwb = self.open
        if lwb is None or lwb.used + itx.log_bytes > ZIL_MAX_BLOCK:
            if lwb is not None:
                self._issue(lwb)
            lwb = self._new_lwb()
        lwb.used += itx.log_bytes
        itx.lwb = lwb
        if itx.indirect:
            self._dmu_sync(itx, lwb)
        return lwb

    def _new_lwb(self) -> Lwb:
        self.seq += 1
        lwb = Lwb(self.seq)
        self.open = lwb
        self.lwbs.append(lwb)
        return lwb

    def _schedule_issue(self, lwb: Lwb) -> None:
        lone = self.waiting_commits <= 1
        if lone and self.version.at_least(2, 2):
            self._issue(lwb)
            return
        timeout = self.last_latency * commit_timeout_pct(self.version) / 100
        after(self.env, timeout, self._timeout, lwb)

    def _timeout(self, lwb: Lwb) -> None:
        if not lwb.issued:
            self._issue(lwb)

    def _dmu_sync(self, itx: Itx, lwb: Lwb) -> None:
        """Write the record to its final place now; the txg sync will reuse the block."""
        zfs = self.zfs
        v = zfs.next_vdev()
        offset = zfs.tops[v].allocate(zfs.asizes[v])
        zfs.location[itx.key] = (v, offset)
        zfs.presync(itx.key)
        lwb.pending += 1
        lwb.tops.add(v)
        self.indirect_writes += 1
        zfs.tops[v].io(offset, zfs.psize, True, SYNC_WRITE, lambda: self._io_done(lwb))

    def _issue(self, lwb: Lwb) -> None:
        lwb.issued = True
        lwb.pending += 1  # the lwb's own write, issued once the CPU has checksummed it
        if self.open is lwb:
            self.open = None
        lwb.start = self.env.now
        self.lwbs_written += 1
        self.log_bytes += lwb.used
        c = self.zfs.costs
        work = c.zio + lwb.used * c.checksum_per_byte
        self.zfs.cpu.run(work, lambda: self._write_lwb(lwb), background=True)

    def _write_lwb(self, lwb: Lwb) -> None:
        zfs = self.zfs
        if self.log_tops:
            top = self.log_tops[self.rotor % len(self.log_tops)]
            self.rotor += 1
            size = _round_up(lwb.used, 1 << top.ashift)
            offset = top.allocate(size)
            top.io(offset, size, True, SYNC_WRITE, lambda: self._io_done(lwb), flush=True)
            return
        v = self.rotor % len(zfs.tops)
        self.rotor += 1
        top = zfs.tops[v]
        size = _round_up(lwb.used, 1 << top.ashift)
        asize = psize_to_asize(top.vdev, size, top.ashift)
        offset = self.pool_log_cursor[v] % max(1, top.space - asize)
        self.pool_log_cursor[v] = offset + asize
        lwb.tops.add(v)
        top.io(offset, size, True, SYNC_WRITE, lambda: self._io_done(lwb))

    def _io_done(self, lwb: Lwb) -> None:
        lwb.pending -= 1
        if lwb.pending or not lwb.issued:
            return
        if not lwb.tops:
            self._lwb_done(lwb)
            return
        # flush the write caches of every data vdev this lwb touched
        tops = [self.zfs.tops[v] for v in sorted(lwb.tops)]
        lwb.tops = set()
        lwb.pending = len(tops)
        for top in tops:
            top.flush(lambda: self._io_done(lwb))

    def _lwb_done(self, lwb: Lwb) -> None:
        lwb.done = True
        self.last_latency = self.env.now - lwb.start
        # commits are released in log order: an lwb's waiters go when every earlier lwb is done
        while self.lwbs and self.lwbs[0].done:
            head = self.lwbs.popleft()
            for waiter in head.waiters:
                waiter()


def _round_up(n: int, unit: int) -> int:
    return -(-n // unit) * unit
