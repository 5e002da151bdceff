"""The ZFS model of the discrete-event engine: records, ARC and L2ARC, dirty data and txg sync
(data, indirect blocks, space maps, uberblocks) over a set of top-level vdevs.

:class:`ZfsModel` is built by :class:`zsim.des.engine.Engine` (which adds the clients) and driven
by the intent log (:mod:`zsim.des.zil`) and a resilver's scan (:mod:`zsim.resilver.zfs_scan`).
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable, Iterable

import numpy as np
import simpy

from zsim.des.file_layout import file_layout, pool_fill
from zsim.des.txg_meta import copies_by_block, indirect_writes, space_map_writes
from zsim.des.txg_runs import TxgState, WriteRun, uberblock_zio
from zsim.des.vdev import ASYNC_READ, ASYNC_WRITE, SYNC_READ, Countdown, LeafQueue, TopVdev, Zio
from zsim.layout.alloc import psize_to_asize
from zsim.machine import memory
from zsim.machine.costs import CpuCosts, cpu_costs
from zsim.machine.resources import CpuPool, after
from zsim.scenario import Scenario
from zsim.units import KiB, MiB
from zsim.zfs.arc import (
    L2ARC_WRITE_MAX,
    RecordCache,
    arc_data_bytes,
    dbuf_cache_bytes,
    dbuf_share_of_hits,
    l2arc_split,
)
from zsim.zfs.compression import compressed_psize, sparse_record_psize
from zsim.zfs.indirect import INDIRECT_BYTES, indirect_levels
from zsim.zfs.txg import async_write_max_active, throttle_delay, txg_tunables
from zsim.zfs.version import parse_zfs_version

Callback = Callable[[], None]

FREE_CPU_S = 2e-6
"""CPU for one freed block at 3 GHz: ``dsl_dataset_block_kill()`` → ``metaslab_free()`` adds
the range to the metaslab's freeing tree and, at sync, to its space map. Estimate: a few
range-tree (B-tree) operations of ~0.5 µs each; to be calibrated."""


#: memory traffic of a record's write pipeline by its physical size (sparse records vary)
_record_traffic = functools.cache(memory.write_record_bytes)


class ZfsModel:
    """Records, ARC, dirty data and txg sync over a set of top-level vdevs."""

    def __init__(
        self,
        env: simpy.Environment,
        sc: Scenario,
        tops: list[TopVdev],
        cpu: CpuPool,
        costs: CpuCosts,
        rng: np.random.Generator,
        special: list[TopVdev] | None = None,
        cache: list[TopVdev] | None = None,
    ):
        self.env, self.sc, self.cpu, self.costs = env, sc, cpu, costs
        pool, hw = sc.pool, sc.hardware
        self.version = parse_zfs_version(hw.zfs_version)
        self.recordsize = pool.recordsize
        self.ashift = pool.ashift
        ratio = pool.compress_ratio if pool.compression != "off" else 1.0
        self.compression = pool.compression
        self.compress_ratio = ratio
        self.psize = compressed_psize(self.recordsize, ratio, self.ashift)
        #: records of sparse files first written in this run and not yet written whole:
        #: (bytes of data written so far, separate writes into it). The rest of such a
        #: record is the hole's zeros, which compression stores as almost nothing
        #: (sparse_record_psize). Only kept with compression on (off, the zeros are written
        #: in full); an entry goes once the record is whole, so at most one per record of
        #: the jobs' files (njobs × file_records) and, for sequential writers, about one
        #: per job.
        self.partial: dict[tuple[int, int], tuple[int, int]] = {}
        self._psize_asize: dict[tuple[int, int], int] = {}
        special = list(special or [])
        # spa_preferred_class(): metadata to the special class when there is one, and data
        # blocks whose physical size is at most special_small_blocks
        self.data_on_special = bool(special) and self.psize <= pool.special_small_blocks
        self.all_tops = [*tops, *special]
        self.cache_tops = list(cache or [])
        self.l2_hit = 0.0  # P(L2ARC hit | ARC miss), set by warm_arc()
        self.l2_hits = 0
        self.l2_feed_bytes = 0
        self.l2_pending_feed = 0
        tops = special if self.data_on_special else tops
        self.tops = tops
        self.meta_tops = special or tops
        self.meta_rotor = 0
        self.runs: dict[int, WriteRun] = {}  # vdev index → the run of records being assembled
        self.meta_compress_per_byte = cpu_costs(
            hw.cpu_ghz,
            pool.checksum,
            0,
            "lz4",
            io_scale=hw.cpu_io_cost_scale,
            byte_scale=hw.cpu_byte_cost_scale,
        ).compress_per_byte
        self.redundant_metadata = pool.redundant_metadata
        self.meta_blocks_written = 0
        #: records written for the first time (holes of sparse or new files): nothing to free
        self.first_writes: set[tuple[int, int]] = set()
        self.all_first_writes = False  # dd into new files
        self.free_cpu = FREE_CPU_S * 3.0 / hw.cpu_ghz * hw.cpu_io_cost_scale
        self.frees = 0
        self.asizes = [psize_to_asize(t.vdev, self.psize, self.ashift) for t in tops]
        # child I/Os per record, for their CPU cost: every column written, data columns read
        self.children = max(len(t.leaf_ios(0, self.psize, True)) for t in tops)
        # memory traffic of one record's write and read pipelines (zsim.machine.memory); the
        # parity share is what the column map writes beyond psize (parity and skip sectors)
        parity_ratio = (
            max(
                (sum(io[2] for io in t.leaf_ios(0, self.psize, True)) - self.psize) / self.psize
                for t in tops
                if t.vdev.kind in ("raidz", "draid")
            )
            if any(t.vdev.kind in ("raidz", "draid") for t in tops)
            else 0.0
        )
        self.parity_ratio = parity_ratio
        self.write_traffic = memory.write_record_bytes(
            self.recordsize,
            self.psize,
            compressing=pool.compression != "off",
            checksumming=pool.checksum != "off",
            parity_ratio=parity_ratio,
        )
        self.read_traffic = memory.read_record_bytes(
            self.recordsize,
            self.psize,
            checksumming=pool.checksum != "off",
            compressed=self.psize < self.recordsize,
        )
        self.read_children = (
            max(
                1,
                self.children
                - max((t.vdev.parity for t in tops if t.vdev.kind != "mirror"), default=0),
            )
            if any(t.vdev.kind in ("raidz", "draid") for t in tops)
            else 1
        )
        cache_data = pool.primarycache == "all"
        records = arc_data_bytes(hw.ram, self.version, ratio) // self.recordsize
        self.arc = RecordCache(records if cache_data else 0)
        #: the dbuf cache: records held uncompressed (read by a caller, or written by a txg);
        #: a caller's ARC hit on a record stored compressed outside it decompresses
        self.dbufs = RecordCache(
            dbuf_cache_bytes(hw.ram, self.version) // self.recordsize if cache_data else 0
        )
        self.expands = 0
        self.txg = txg_tunables(hw.ram, self.version)
        self.dirty = 0
        # the write buffer's start-up: it fills (clients outrun the disks) until the
        # throttle's delay threshold, after which the rate is the steady one
        self.max_dirty = 0
        self.fill_mark = self.txg.delay_min_fraction * self.txg.dirty_max
        self.filled_at: float | None = None
        self.open = TxgState()
        self.syncing: TxgState | None = None
        self.sync_wanted = False
        self.last_sync_start = 0.0
        self.throttled: deque[Callback] = deque()
        self.last_wakeup = 0.0
        self.delay_time = 0.0
        self.inflight: dict[tuple[int, int], list[Callback]] = {}
        #: records in flight that a caller asked for (not a prefetch): decompressed on arrival
        self.demand_reads: set[tuple[int, int]] = set()
        # the leaf zios of records being read at async (prefetch) priority, which a demand
        # read may promote (arc_read() -> zio_change_priority(), 0.8.0+)
        self.async_zios: dict[tuple[int, int], list[tuple[LeafQueue, Zio]]] = {}
        self.promote_async = self.version.at_least(0, 8)
        self.location: dict[tuple[int, int], tuple[int, int]] = {}
        self.rng = rng
        self.leaf_queues = [leaf for t in self.all_tops for leaf in t.leaves]
        self.async_limit_set: int | None = None  # the async-write max_active every leaf has
        # no dirty data yet: min_active (2), what an idle pool's repair writes get
        self._update_async_limit()
        self.txgs_synced = 0
        #: simulated time at which each txg's sync finished: the write path's cycle marks
        self.sync_times: list[float] = []
        # a scan (resilver, scrub) runs inside spa_sync, after the txg's data is written:
        # ``scan_slice(done)`` runs its slice and calls ``done``; while ``scan_active()`` the
        # sync thread keeps syncing (an active scan is a reason to sync). Set by
        # attach_scan() (zsim.resilver); None in normal runs.
        self.scan_slice: Callable[[Callback], None] | None = None
        self.scan_active: Callable[[], bool] = lambda: False
        # the rotor: equal shares per vdev visit, weighted by vdev size (free space)
        spaces = np.array([t.space for t in tops], dtype=float)
        self.weights = spaces / spaces.sum()
        self.rotor = 0
        self.rotor_left = self._aliquot(0)
        after(env, self.txg.txg_timeout, self._timer)
        if self.cache_tops:
            after(env, 1.0, self._l2_feed)

    # ---- placement
    def _aliquot(self, index: int) -> int:
        """Bytes placed on a vdev per rotor visit (``mg_aliquot``): 512 KiB × children up to
        2.1, 1 MiB × data disks in 2.2–2.3, 2 MiB × data disks from 2.4 (metaslab.c)."""
        top = self.tops[index]
        if self.version.at_least(2, 4):
            base = 2 * MiB * top.data_disks
        elif self.version.at_least(2, 2):
            base = MiB * top.data_disks
        else:
            base = 512 * KiB * top.vdev.width
        return max(int(base * self.weights[index] * len(self.tops)), 1)

    def next_vdev(self, psize: int | None = None) -> int:
        """The rotor: stay on a vdev for its aliquot, then move on; returns the vdev index.
        ``psize``: the block's physical size (default: a full record's)."""
        if self.rotor_left <= 0:
            self.rotor = (self.rotor + 1) % len(self.tops)
            self.rotor_left = self._aliquot(self.rotor)
        self.rotor_left -= (
            self.asizes[self.rotor] if psize is None else self.asize(self.rotor, psize)
        )
        return self.rotor

    def asize(self, v: int, psize: int) -> int:
        """Allocated bytes of a block of ``psize`` physical bytes on data vdev ``v``."""
        if psize == self.psize:
            return self.asizes[v]
        found = self._psize_asize.get((v, psize))
        if found is None:
            found = self._psize_asize[v, psize] = psize_to_asize(
                self.tops[v].vdev, psize, self.ashift
            )
        return found

    # ---- records of sparse files
    def fill_hole(self, key: tuple[int, int], nbytes: int, first: bool) -> None:
        """A write of ``nbytes`` into a record of a sparse file that was a hole when the run
        began (``first``: its first write). Tracked with compression on only."""
        if self.compression == "off":
            return
        if first:
            done, writes = 0, 0
        else:
            entry = self.partial.get(key)
            if entry is None:  # written whole already: an ordinary record
                return
            done, writes = entry
        # fio's random map (on unless norandommap) writes every block of the file once
        # before any block twice, so each write adds new bytes
        done += nbytes
        if done >= self.recordsize:
            self.partial.pop(key, None)
        else:
            self.partial[key] = (done, writes + 1)

    def record_psize(self, key: tuple[int, int]) -> int:
        """Physical size of a record as it would be written now."""
        entry = self.partial.get(key)
        if entry is None:
            return self.psize
        return sparse_record_psize(
            self.recordsize,
            entry[0],
            self.compress_ratio,
            self.ashift,
            self.compression,
            extents=entry[1],
        )

    def place_files(self, njobs: int, file_records: int, new_files: bool = False) -> None:
        """Lay out the jobs' files as fio does before a run: written one after the other just
        below the pool's fill line, records in allocation order, spread over the vdevs by
        the rotor. Computed by formula (files may hold billions of records); only records
        rewritten during the run get an entry in ``location``. ``new_files``: the run
        creates its files (dd into new files), so every write is a record's first and
        frees nothing."""
        self.all_first_writes = new_files
        fill = min(0.95, max(0.0, pool_fill(self.sc.pool, [t.space for t in self.tops])))
        self.file_records = file_records
        self.indirect_levels = indirect_levels(file_records)
        aliquots = [self._aliquot(i) for i in range(len(self.tops))]
        lay = file_layout(
            self.tops, self.asizes, aliquots, self.psize, njobs * file_records, fill, self.ashift
        )
        self.per_visit, self.cycle, self.file_asizes = lay.per_visit, lay.cycle, lay.asizes
        self.file_start = []
        for t, (start, share) in zip(self.tops, lay.spans, strict=True):
            self.file_start.append(start)
            t.allocate_from(min(t.space, start + share))

    def locate(self, key: tuple[int, int]) -> tuple[int, int]:
        """(vdev index, vdev offset) of a record."""
        found = self.location.get(key)
        if found is not None:
            return found
        g = key[0] * self.file_records + key[1]
        cycle, within = divmod(g, self.cycle)
        for v, per_visit in enumerate(self.per_visit):
            if within < per_visit:
                index = cycle * per_visit + within
                asize = self.file_asizes[v]
                offset = self.file_start[v] + index * asize
                wrap = max(1, self.tops[v].space // asize) * asize
                return v, offset % wrap
            within -= per_visit
        raise AssertionError("unreachable: within < cycle")

    def warm_arc(self, njobs: int, file_records: int) -> None:
        """Uniform random access over N records with an ARC of C records: in steady state a
        read hits with probability min(1, C/N) whatever the policy (ARC, LRU and LFU agree
        when no record is hotter than another), so the engine draws hits with that
        probability instead of tracking millions of records."""
        total = njobs * file_records
        arc = self.arc.capacity
        if self.cache_tops and total:
            # L2ARC: compressed blocks on the cache devices; each block held there costs an
            # ARC header
            l2_records = sum(t.space for t in self.cache_tops) // self.psize
            arc, self.l2_hit = l2arc_split(
                arc, total, l2_records, self.sc.pool.cache_fill, self.recordsize
            )
            self.arc.capacity = arc
        self.arc.uniform_hit = min(1.0, arc / total) if total else 0.0
        self.dbufs.uniform_hit = dbuf_share_of_hits(self.dbufs.capacity, arc, total)

    # ---- reads
    def read_record(
        self, key: tuple[int, int], klass: int, done: Callback, use_cache: bool = True
    ) -> bool:
        """Bring a record into memory; returns True if it was already there (a hit)."""
        if key in self.open.records or (self.syncing and key in self.syncing.records):
            done()
            return True
        demand = klass == SYNC_READ and use_cache
        if use_cache and self.arc.lookup(key, self.rng):
            if demand:
                self._expand(key, done)
            else:
                done()
            return True
        waiting = self.inflight.get(key)
        if waiting is not None:
            # a caller joining a prefetch in flight gets the record as stored: it expands
            # it unless the read's own caller already did (the dbuf cache holds it then)
            waiting.append(functools.partial(self._expand, key, done) if demand else done)
            if klass == SYNC_READ and key in self.async_zios:
                # arc_read() (module/zfs/arc.c, 0.8.0+): a sync read that finds the block's
                # read in flight at async priority (ARC_FLAG_PRIO_ASYNC_READ) calls
                # zio_change_priority(), which re-queues each still-queued leaf zio as a
                # sync read (vdev_queue_change_io_priority()); 0.7 just waits
                for leaf, zio in self.async_zios.pop(key):
                    leaf.promote(zio)
            return False
        self.inflight[key] = [done]
        if demand:
            self.demand_reads.add(key)
        track: list[tuple[LeafQueue, Zio]] | None = None
        if klass == ASYNC_READ and self.promote_async:
            track = self.async_zios[key] = []
        if use_cache and self.l2_hit and self.rng.random() < self.l2_hit:
            # an L2ARC hit: one read of the compressed block from a cache device
            self.l2_hits += 1
            top = self.cache_tops[key[1] % len(self.cache_tops)]
            offset = (hash(key) % max(1, top.space // self.psize)) * self.psize
            top.io(
                offset,
                self.psize,
                False,
                klass,
                lambda: self._read_done(key, use_cache),
                track=track,
            )
            return False
        v, offset = self.locate(key)
        psize = self.record_psize(key)
        self.l2_pending_feed += psize  # evicts another record, which the feed may take
        top = self.tops[v]
        # a record rewritten in the run is a new block, at the current width wherever it is
        width = top.vdev.width if top.born and key in self.location else None
        top.io(
            offset, psize, False, klass, lambda: self._read_done(key, use_cache), track=track,
            width=width,
        )  # fmt: skip
        return False

    def _read_done(self, key: tuple[int, int], use_cache: bool) -> None:
        c = self.costs
        psize = self.record_psize(key)
        if key in self.demand_reads or not use_cache:
            # a caller's read: arc_read_done() fills its buffer, decompressed
            work = c.read_record(self.recordsize, psize)
        else:  # a prefetch keeps the record as stored (arc_read() with no callback)
            work = c.verify_record(psize)
        work += self.read_children * c.leaf_io
        if use_cache:  # the record gets an ARC buffer (and, once the ARC is full, evicts one)
            work += self.recordsize * c.cache_pages_per_byte
        self.cpu.run(
            work, lambda: self._read_ready(key, use_cache), self.read_traffic, background=True
        )

    def _read_ready(self, key: tuple[int, int], use_cache: bool) -> None:
        self.async_zios.pop(key, None)
        if use_cache:
            self.arc.insert(key)
            if key in self.demand_reads:
                self.demand_reads.discard(key)
                self.dbufs.insert(key)
        for cb in self.inflight.pop(key):
            cb()

    def _expand(self, key: tuple[int, int], done: Callback) -> None:
        """A caller needs a record the ARC holds: free from the dbuf cache; otherwise, if
        it is stored compressed, ``arc_buf_fill()`` decompresses it into a new buffer on
        the caller's core (:meth:`CpuCosts.arc_hit_expand`) and the dbuf cache keeps it."""
        psize = self.record_psize(key)
        work = self.costs.arc_hit_expand(self.recordsize, psize)
        if work <= 0 or self.dbufs.lookup(key, self.rng):  # stored as is, or held expanded
            done()
            return
        self.dbufs.insert(key)
        self.expands += 1
        traffic = memory.read_record_bytes(
            self.recordsize, psize, checksumming=False, compressed=True
        )
        self.cpu.run(work, done, traffic)

    # ---- writes
    def dirty_record(self, key: tuple[int, int], done: Callback) -> None:
        """Admit a write to a record: throttle, then mark it dirty in the open txg."""
        if self.dirty >= self.txg.dirty_max:
            self.throttled.append(lambda: self.dirty_record(key, done))
            return
        delay = throttle_delay(self.dirty, self.txg)
        if delay > 0:
            now = self.env.now
            wake = max(now + delay, self.last_wakeup + delay)
            self.last_wakeup = wake
            self.delay_time += wake - now
            after(self.env, wake - now, self._admit, key, done)
        else:
            self._admit(key, done)

    def _admit(self, key: tuple[int, int], done: Callback) -> None:
        if key not in self.open.records:
            self.open.records[key] = None
            self.open.bytes += self.recordsize
            self.dirty += self.recordsize
            self._update_async_limit()
            if self.dirty > self.max_dirty:
                self.max_dirty = self.dirty
                if self.filled_at is None and self.dirty >= self.fill_mark:
                    self.filled_at = self.env.now
        elif key in self.open.presynced:
            self.open.presynced.discard(key)  # dirtied again after dmu_sync: sync writes it
        if self.open.bytes >= self.txg.sync_bytes:
            self._want_sync()
        done()

    def _update_async_limit(self) -> None:
        limit = async_write_max_active(self.dirty, self.txg)
        if limit == self.async_limit_set:  # every leaf has it already
            return
        self.async_limit_set = limit
        for leaf in self.leaf_queues:
            leaf.set_async_write_max(limit)

    def add_leaf_queue(self, leaf: LeafQueue) -> None:
        """A leaf added to the pool during the run (a resilver's new disk): its async-write
        max_active follows the dirty data like every other leaf's (``min_active`` when idle)."""
        self.leaf_queues.append(leaf)
        leaf.set_async_write_max(async_write_max_active(self.dirty, self.txg))

    def _l2_feed(self) -> None:
        """``l2arc_feed_thread``: once a second, write up to ``l2arc_write_max`` of the
        blocks the ARC evicted (one per record read from the pool) to the cache devices,
        in 1 MiB writes at async-write priority."""
        nbytes = min(L2ARC_WRITE_MAX, self.l2_pending_feed)
        self.l2_pending_feed = 0
        self.l2_feed_bytes += nbytes
        top = self.cache_tops[int(self.env.now) % len(self.cache_tops)]
        while nbytes > 0:
            size = min(MiB, nbytes)
            top.io(top.allocate(size), size, True, ASYNC_WRITE, lambda: None)
            nbytes -= size
        after(self.env, 1.0, self._l2_feed)

    def _timer(self) -> None:
        if self.env.now - self.last_sync_start >= self.txg.txg_timeout - 1e-9 and self.open.records:
            self._want_sync()
        after(self.env, self.txg.txg_timeout, self._timer)

    def _want_sync(self) -> None:
        if self.syncing is None:
            self._start_sync()
        else:
            self.sync_wanted = True

    def presync(self, key: tuple[int, int]) -> None:
        """A ZIL commit wrote this dirty record to its final place (``dmu_sync``); the txg
        that holds it will not write it again unless it is dirtied again."""
        if key in self.open.records:
            self.open.presynced.add(key)

    def attach_scan(
        self, scan_slice: Callable[[Callback], None], scan_active: Callable[[], bool]
    ) -> None:
        """Run a scan (resilver, scrub) inside every txg sync from now on: ``scan_slice(done)``
        runs one slice and calls ``done``; while ``scan_active()`` the sync thread keeps
        syncing. Starts a sync at once when none is running."""
        self.scan_slice, self.scan_active = scan_slice, scan_active
        self.sync_if_idle()

    def sync_if_idle(self) -> None:
        """Start a txg sync now unless one is running (a scan wants its next slice)."""
        if self.syncing is None:
            self._start_sync()

    def _start_sync(self) -> None:
        if not self.open.records and not self.scan_active():
            return
        txg, self.open = self.open, TxgState()
        self.syncing = txg
        self.sync_wanted = False
        self.last_sync_start = self.env.now
        # dbuf sync order: by object, then block; blocks dmu_sync wrote are only released
        keys = sorted(k for k in txg.records if k not in txg.presynced)
        if txg.presynced:
            self.dirty -= len(txg.presynced) * self.recordsize
            self._update_async_limit()
            while self.throttled and self.dirty < self.txg.dirty_max:
                self.throttled.popleft()()
        meta = self.indirect_writes(txg.records)
        freed = self._frees(txg.records)
        meta += space_map_writes(freed, self.tops, self.ashift, self.version)
        if freed:
            self.cpu.run(len(freed) * self.free_cpu, lambda: None, background=True)
        if not keys and not meta:
            self._data_synced(txg)
            return
        txg.pending = len(keys) + len(meta)
        txg.cpu_left = len(keys)
        c = self.costs
        parity = max((t.vdev.parity for t in self.tops), default=0)
        per_record = c.write_record(self.recordsize, self.psize, bool(parity))
        per_record += self.children * c.leaf_io
        for key in keys:
            # the record as it is when the txg closes (later writes go to the next txg's
            # copy): a partly written record of a sparse file is smaller (fill_hole)
            psize = self.record_psize(key) if self.partial else self.psize
            work, traffic = per_record, self.write_traffic
            if psize != self.psize:
                work = c.write_record(self.recordsize, psize, bool(parity))
                work += self.children * c.leaf_io
                traffic = _record_traffic(
                    self.recordsize,
                    psize,
                    compressing=self.compression != "off",
                    checksumming=self.sc.pool.checksum != "off",
                    parity_ratio=self.parity_ratio,
                )
            self.cpu.run(
                work,
                functools.partial(self._write_record, txg, key, psize),
                traffic,
                background=True,
            )
        # a block's copies (ditto DVAs) are compressed and checksummed once, in its logical
        # zio; each copy is a child write (vdev_mirror_ops over the BP's DVAs, zio.c)
        for group in copies_by_block(meta):
            psize = group[0][0]
            work = c.zio + INDIRECT_BYTES * self.meta_compress_per_byte
            work += psize * c.checksum_per_byte
            self.cpu.run(
                work, functools.partial(self._write_meta_copies, txg, group), background=True
            )

    def indirect_writes(self, records: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
        """(psize, copy) of the indirect blocks above ``records`` (:func:`indirect_writes`)."""
        return indirect_writes(
            records, self.indirect_levels, self.file_records, self.ashift, self.redundant_metadata
        )

    def _frees(self, records: dict[tuple[int, int], None]) -> list[tuple[int, int]]:
        """(vdev, offset) of every block the txg frees: the old copy of each rewritten
        record (copy-on-write); a record's first write frees nothing."""
        if self.all_first_writes:
            return []
        first = self.first_writes
        freed = [self.locate(k) for k in records if k not in first]
        first.difference_update(records)
        self.frees += len(freed)
        return freed

    def _write_meta_copies(self, txg: TxgState, group: list[tuple[int, int]]) -> None:
        for psize, copy in group:
            self._write_meta(txg, psize, copy)

    def _write_meta(self, txg: TxgState, psize: int, copy: int) -> None:
        """One copy of a metadata block (an indirect block, a space-map append) to the
        metadata class (special vdevs, else the pool); each further copy goes to another
        vdev while there is one, else 1/8 of the vdev away on one already holding a copy
        (``metaslab_alloc_dva()``'s ditto distance)."""
        tops = self.meta_tops
        if copy == 0:
            self.meta_rotor = (self.meta_rotor + 1) % len(tops)
        top = tops[(self.meta_rotor + copy) % len(tops)]
        asize = psize_to_asize(top.vdev, psize, self.ashift)
        # a copy that comes round to a vdev holding one already goes a ditto distance away
        # (TopVdev.allocate_ditto): a MOS block's 3 copies on a pool of 1 or 2 vdevs
        offset = top.allocate_ditto(asize) if copy >= len(tops) else top.allocate(asize)
        self.meta_blocks_written += 1
        top.io(offset, psize, True, ASYNC_WRITE, lambda: self._txg_part_done(txg))

    def _write_record(self, txg: TxgState, key: tuple[int, int], psize: int | None = None) -> None:
        psize = self.psize if psize is None else psize
        v = self.next_vdev(psize)
        top = self.tops[v]
        offset = top.allocate(self.asize(v, psize))
        self.location[key] = (v, offset)
        columns = top.leaf_ios(offset, psize, True)
        limit = top.leaves[0].aggregation_limit
        run = self.runs.get(v)
        if run is not None and not run.accepts(columns, limit):
            self._issue_run(v)
            run = None
        if run is None:
            run = self.runs[v] = WriteRun(txg)
        run.add(columns, lambda: self._record_written(txg))
        txg.cpu_left -= 1
        if txg.cpu_left == 0:  # the last record of the txg: nothing more will join a run
            for u in list(self.runs):
                self._issue_run(u)

    def _issue_run(self, v: int) -> None:
        run = self.runs.pop(v)
        top = self.tops[v]
        callbacks = run.done

        def all_written() -> None:
            for cb in callbacks:
                cb()

        countdown = Countdown(len(run.extents), all_written)
        for leaf, (start, end) in run.extents.items():
            top.leaves[leaf].add(Zio(start, end - start, True, ASYNC_WRITE, countdown.tick))

    def _record_written(self, txg: TxgState) -> None:
        self.dirty -= self.recordsize
        self._update_async_limit()
        while self.throttled and self.dirty < self.txg.dirty_max:
            self.throttled.popleft()()
        self._txg_part_done(txg)

    def _txg_part_done(self, txg: TxgState) -> None:
        txg.pending -= 1
        if txg.pending == 0:
            self._data_synced(txg)

    def _data_synced(self, txg: TxgState) -> None:
        """The txg's data and metadata are written; a scan takes its slice (dsl_scan_sync in
        spa_sync's first pass), then the uberblocks."""
        if self.scan_slice is not None:
            self.scan_slice(lambda: self._write_uberblocks(txg))
        else:
            self._write_uberblocks(txg)

    def _write_uberblocks(self, txg: TxgState) -> None:
        """End of ``spa_sync()``: labels/uberblock written to every leaf with a cache flush."""
        leaves = [(t, i) for t in self.all_tops for i in range(len(t.leaves))]
        left = [len(leaves)]

        def one_done() -> None:
            left[0] -= 1
            if left[0] == 0:
                self._sync_done(txg)

        for top, i in leaves:
            top.leaves[i].add(uberblock_zio(top, one_done))

    def _sync_done(self, txg: TxgState) -> None:
        for key in txg.records:
            self.arc.insert(key)
            # the dirty dbuf, uncompressed, stays in the dbuf cache once released
            self.dbufs.insert(key)
        txg.synced = True
        self.syncing = None
        self.txgs_synced += 1
        self.sync_times.append(self.env.now)
        if self.sync_wanted or self.open.bytes >= self.txg.sync_bytes or self.scan_active():
            self._start_sync()
