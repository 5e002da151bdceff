"""The discrete-event engine: fio/dd clients → ZPL/ARC → DMU/txg → vdev queues → bus → devices.

One SimPy environment; every component schedules its own next event with a timeout callback.
The run stops when the 95 % half-width of the I/O rate (batch means after MSER-5 warm-up
removal) is within ``target_ci`` of the mean, or at the simulated-time or wall-time cap.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import simpy

from zsim.capacity import capacity, metaslab_shift
from zsim.des import memory
from zsim.des.costs import CpuCosts, cpu_costs
from zsim.des.hardware import BandwidthStage, CpuPool, Device, MemoryBus, Path, after
from zsim.des.stats import batch_means_halfwidth, mser5_truncation
from zsim.des.vdev import (
    ASYNC_READ,
    ASYNC_WRITE,
    SYNC_READ,
    SYNC_WRITE,
    Countdown,
    LeafQueue,
    TopVdev,
    Zio,
)
from zsim.des.zil import Zil
from zsim.des.zpool_on import build_md_leaf
from zsim.errors import ZsimError
from zsim.hardware import flash, hdd
from zsim.hardware.catalog import Profile
from zsim.layout.alloc import psize_to_asize
from zsim.layout.grammar import parse_layout
from zsim.layout.tree import BtrfsArray, MdArray, RawDevices, ZfsLayout, ZpoolOnBlock
from zsim.result import DirectionStats, SimResult
from zsim.zfs.arc import RecordCache, arc_data_bytes
from zsim.zfs.compression import compressed_psize
from zsim.zfs.indirect import (
    BPS_PER_INDIRECT,
    INDIRECT_BYTES,
    indirect_block,
    indirect_levels,
)
from zsim.zfs.txg import async_write_max_active, throttle_delay, txg_tunables
from zsim.zfs.version import parse_zfs_version

Callback = Callable[[], None]
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

SPACE_MAP_ENTRY_BYTES = 16
"""One two-word space-map entry (``SM2``, space_map.h): a freed block, or one allocated run."""
FREE_CPU_S = 2e-6
"""CPU for one freed block at 3 GHz: ``dsl_dataset_block_kill()`` → ``metaslab_free()`` adds
the range to the metaslab's freeing tree and, at sync, to its space map. Estimate: a few
range-tree (B-tree) operations of ~0.5 µs each; to be calibrated."""
L2ARC_WRITE_MAX = 8 * MiB
"""``l2arc_write_max``: bytes the L2ARC feed thread writes per ``l2arc_feed_secs`` (1 s)."""
L2ARC_HEADER_BYTES = 96
"""ARC memory per block held only in the L2ARC (the L2-only ``arc_buf_hdr_t``, ``arc.c``
``HDR_L2ONLY_SIZE``; about 70–100 B by release)."""


ZIO_TASKQ_BATCH_PCT = 80
"""``zio_taskq_batch_pct``: the zio write-issue and interrupt taskqs get this share of the
CPUs as threads (module/zfs/spa.c, zfs.4)."""


def zio_taskq_threads(cores: int) -> int:
    """Worker threads of ZFS's batch taskqs on ``cores`` CPUs (at least one)."""
    return max(1, cores * ZIO_TASKQ_BATCH_PCT // 100)


@dataclass(frozen=True)
class RunControl:
    """When to stop: ``target_ci`` relative half-width, caps in simulated and wall seconds."""

    target_ci: float = 0.02
    max_sim_seconds: float = 600.0
    max_wall_seconds: float = 60.0
    min_sim_seconds: float = 2.0
    check_every: float = 1.0
    #: called after every check with (simulated seconds, wall seconds, ci_rel so far — inf
    #: before there is one), e.g. to draw a progress bar; ``None`` calls nothing
    on_check: Callable[[float, float, float], None] | None = None


# ---------------------------------------------------------------- bus


def _encoding(rate_line: float) -> float:
    """Payload bytes/s of a serial link from its line rate (bytes/s of raw bits ÷ 8):
    SATA and SAS-1/2/3 use 8b/10b (80 %); SAS-4 (22.5 Gb/s) 128b/150b."""
    return rate_line * (128 / 150 if rate_line > 2e9 else 0.8)


_PCIE_GTS = {1: 2.5e9, 2: 5e9, 3: 8e9, 4: 16e9, 5: 32e9}


def pcie_bytes_per_s(gen: int, lanes: int) -> float:
    """Usable PCIe bandwidth: GT/s × lanes × encoding (8b/10b to gen 2, 128b/130b after)
    × 0.91 for TLP headers (24 B per 256 B payload)."""
    gts = _PCIE_GTS.get(gen, 8e9)
    encoding = 0.8 if gen <= 2 else 128 / 130
    return gts * lanes * encoding / 8 * (256 / 280)


# Controller I/O ceiling by SAS generation when the profile gives no max_iops: Broadcom's
# briefs quote ~1 M IOPS for SAS3 (SAS3008) and several hundred thousand for SAS2 (SAS2008,
# commonly measured at ~450 k); an estimate to be replaced by a profile figure.
HBA_DEFAULT_IOPS = {2: 450_000, 3: 1_000_000}


def _bus(
    env: simpy.Environment, sc: Any, names: list[str], disk: Profile, behind_hba: bool = True
) -> dict[str, Path]:
    """Each device's path to memory: its own link, then the shared expander and HBA when
    ``behind_hba`` (log devices are modelled on their own ports: onboard SATA or NVMe)."""
    stages: dict[str, list[BandwidthStage]] = {n: [] for n in names}
    hw = sc.hardware
    link_line = disk.link_rate
    if disk.kind in ("hdd", "ssd"):
        if link_line is None:
            link_line = 750e6  # SATA 6 Gb/s line rate when the profile does not say
        if hw.hba is not None and hw.hba.lane_rate:
            link_line = min(link_line, hw.hba.lane_rate)
        per_link = max(1, hw.disks_per_link)
        for start in range(0, len(names), per_link):
            lane = BandwidthStage(env, f"link:{names[start]}", _encoding(link_line))
            for n in names[start : start + per_link]:
                stages[n].append(lane)
    else:  # NVMe: each drive has its own PCIe link
        gen, lanes = disk.pcie_gen or 3, disk.pcie_lanes or 4
        for n in names:
            stages[n].append(BandwidthStage(env, f"link:{n}", pcie_bytes_per_s(gen, lanes)))
    if hw.expander_bw and behind_hba:
        expander = BandwidthStage(env, "expander", hw.expander_bw)
        for n in names:
            stages[n].append(expander)
    # tri-mode HBAs carry NVMe traffic through their own uplink too
    if hw.hba is not None and behind_hba:
        iops = hw.hba.max_iops or HBA_DEFAULT_IOPS[3 if (hw.hba.lane_rate or 0) >= 1.5e9 else 2]
        hba = BandwidthStage(
            env, "hba", pcie_bytes_per_s(hw.hba.pcie_gen, hw.hba.pcie_lanes), per_io=1.0 / iops
        )
        for n in names:
            stages[n].append(hba)
    _mark_passive(stages, disk)
    return {n: Path(stages[n]) for n in names}


def _peak(disk: Profile) -> tuple[float, float]:
    """A device's peak bytes/s and I/Os per second over its link (media or datasheet)."""
    if disk.kind == "hdd":
        # read-ahead and write-cache hits move at interface speed but are bounded by the
        # command rate; sustained, an HDD moves at most its outer-zone rate
        return float(disk.max_sustained or 0.0), 10_000.0
    bw = max(disk.read_bw or 0.0, disk.write_bw or 0.0)
    iops = float(max(disk.read_iops or 0, disk.write_iops or 0) or bw / 4096)
    return bw, iops


def _mark_passive(stages: dict[str, list[BandwidthStage]], disk: Profile) -> None:
    peak_bw, peak_iops = _peak(disk)
    users: dict[int, tuple[BandwidthStage, int]] = {}
    for chain in stages.values():
        for stage in chain:
            users[id(stage)] = (stage, users.get(id(stage), (stage, 0))[1] + 1)
    for stage, count in users.values():
        if count * peak_bw < stage.rate and count * peak_iops * stage.per_io < 1.0:
            stage.make_passive()


# ---------------------------------------------------------------- the ZFS model


class _Run:
    """Records of one txg written back to back on one top-level vdev, issued as one I/O per
    leaf: what ``vdev_queue_aggregate()`` would make of their column writes anyway (adjacent
    async writes, up to the aggregation limit), without queueing each column on its own."""

    __slots__ = ("done", "extents", "txg")

    def __init__(self, txg: _Txg):
        self.txg = txg
        self.extents: dict[int, list[int]] = {}  # leaf → [start, end)
        self.done: list[Callback] = []

    def accepts(self, columns: list[tuple[int, int, int]], limit: int) -> bool:
        for leaf, offset, nbytes in columns:
            ext = self.extents.get(leaf)
            if ext is None:
                continue
            if offset != ext[1] or offset + nbytes - ext[0] > limit:
                return False
        return True

    def add(self, columns: list[tuple[int, int, int]], done: Callback) -> None:
        for leaf, offset, nbytes in columns:
            ext = self.extents.get(leaf)
            if ext is None:
                self.extents[leaf] = [offset, offset + nbytes]
            else:
                ext[1] = offset + nbytes
        self.done.append(done)


@dataclass
class _Txg:
    records: dict[tuple[int, int], None] = field(default_factory=dict)
    bytes: int = 0
    pending: int = 0
    synced: bool = False
    cpu_left: int = 0  # records whose sync CPU work has not run yet
    #: records a ZIL commit already wrote to their final place (dmu_sync): not rewritten
    presynced: set[tuple[int, int]] = field(default_factory=set)


class ZfsModel:
    """Records, ARC, dirty data and txg sync over a set of top-level vdevs."""

    def __init__(
        self,
        env: simpy.Environment,
        sc: Any,
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
        self.psize = compressed_psize(self.recordsize, ratio, self.ashift)
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
        self.runs: dict[int, _Run] = {}  # vdev index → the run of records being assembled
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
        # memory traffic of one record's write and read pipelines (zsim.des.memory); the
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
        self.txg = txg_tunables(hw.ram, self.version)
        self.dirty = 0
        # the write buffer's start-up: it fills (clients outrun the disks) until the
        # throttle's delay threshold, after which the rate is the steady one
        self.max_dirty = 0
        self.fill_mark = self.txg.delay_min_fraction * self.txg.dirty_max
        self.filled_at: float | None = None
        self.open = _Txg()
        self.syncing: _Txg | None = None
        self.sync_wanted = False
        self.last_sync_start = 0.0
        self.throttled: deque[Callback] = deque()
        self.last_wakeup = 0.0
        self.delay_time = 0.0
        self.inflight: dict[tuple[int, int], list[Callback]] = {}
        self.location: dict[tuple[int, int], tuple[int, int]] = {}
        self.rng = rng
        self.leaf_queues = [leaf for t in self.all_tops for leaf in t.leaves]
        self.txgs_synced = 0
        # a scan (resilver, scrub) runs inside spa_sync, after the txg's data is written:
        # ``scan_slice(done)`` runs its slice and calls ``done``; while ``scan_active()`` the
        # sync thread keeps syncing (an active scan is a reason to sync). Set by
        # zsim.resilver; None in normal runs.
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

    def _next_vdev(self) -> int:
        """The rotor: stay on a vdev for its aliquot, then move on; returns the vdev index."""
        if self.rotor_left <= 0:
            self.rotor = (self.rotor + 1) % len(self.tops)
            self.rotor_left = self._aliquot(self.rotor)
        self.rotor_left -= self.asizes[self.rotor]
        return self.rotor

    def _fill(self) -> float:
        """Allocated fraction of the pool: ``pool.allocated`` over usable space, else ``fill``."""
        pool = self.sc.pool
        if pool.allocated is not None:
            usable = sum(t.space for t in self.tops)
            return pool.allocated / usable if usable else 0.0
        return pool.fill

    def place_files(self, njobs: int, file_records: int) -> None:
        """Lay out the jobs' files as fio does before a run: written one after the other just
        below the pool's fill line, records in allocation order, spread over the vdevs by
        the rotor. Computed by formula (files may hold billions of records); only records
        rewritten during the run get an entry in ``location``."""
        fill = min(0.95, max(0.0, self._fill()))
        self.file_records = file_records
        self.indirect_levels = indirect_levels(file_records)
        self.per_visit = [max(1, -(-self._aliquot(i) // a)) for i, a in enumerate(self.asizes)]
        self.cycle = sum(self.per_visit)
        total = njobs * file_records
        self.file_start = []
        for t, per_visit, asize in zip(self.tops, self.per_visit, self.asizes, strict=True):
            share = -(-total // self.cycle) * per_visit * asize
            sector = 1 << self.ashift
            start = max(0, int(t.space * fill) - share) // sector * sector
            self.file_start.append(start)
            t.cursor = min(t.space, start + share)

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
                offset = self.file_start[v] + index * self.asizes[v]
                wrap = max(1, self.tops[v].space // self.asizes[v]) * self.asizes[v]
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
            held = min(l2_records, total - min(arc, total)) * self.sc.pool.cache_fill
            arc = max(0, arc - int(held * L2ARC_HEADER_BYTES) // self.recordsize)
            self.arc.capacity = arc
            beyond = total - min(arc, total)
            held = min(held, beyond)
            self.l2_hit = held / beyond if beyond else 0.0
        self.arc.uniform_hit = min(1.0, arc / total) if total else 0.0

    # ---- reads
    def read_record(
        self, key: tuple[int, int], klass: int, done: Callback, use_cache: bool = True
    ) -> bool:
        """Bring a record into memory; returns True if it was already there (a hit)."""
        if key in self.open.records or (self.syncing and key in self.syncing.records):
            done()
            return True
        if use_cache and self.arc.lookup(key, self.rng):
            done()
            return True
        waiting = self.inflight.get(key)
        if waiting is not None:
            waiting.append(done)
            return False
        self.inflight[key] = [done]
        if use_cache and self.l2_hit and self.rng.random() < self.l2_hit:
            # an L2ARC hit: one read of the compressed block from a cache device
            self.l2_hits += 1
            top = self.cache_tops[key[1] % len(self.cache_tops)]
            offset = (hash(key) % max(1, top.space // self.psize)) * self.psize
            top.io(offset, self.psize, False, klass, lambda: self._read_done(key, use_cache))
            return False
        v, offset = self.locate(key)
        self.l2_pending_feed += self.psize  # evicts another record, which the feed may take
        self.tops[v].io(offset, self.psize, False, klass, lambda: self._read_done(key, use_cache))
        return False

    def _read_done(self, key: tuple[int, int], use_cache: bool) -> None:
        c = self.costs
        work = c.read_record(self.psize) + self.read_children * c.leaf_io
        if use_cache:  # the record gets an ARC buffer (and, once the ARC is full, evicts one)
            work += self.recordsize * c.cache_pages_per_byte
        self.cpu.run(
            work, lambda: self._read_ready(key, use_cache), self.read_traffic, background=True
        )

    def _read_ready(self, key: tuple[int, int], use_cache: bool) -> None:
        if use_cache:
            self.arc.insert(key)
        for cb in self.inflight.pop(key):
            cb()

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
        for leaf in self.leaf_queues:
            leaf.async_write_max = limit

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

    def _start_sync(self) -> None:
        if not self.open.records and not self.scan_active():
            return
        txg, self.open = self.open, _Txg()
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
        meta = self._indirect_blocks(txg.records)
        freed = self._frees(txg.records)
        meta += self._space_map_blocks(freed)
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
            self.cpu.run(
                per_record,
                lambda k=key: self._write_record(txg, k),
                self.write_traffic,
                background=True,
            )
        for psize, copy in meta:
            work = c.zio + INDIRECT_BYTES * self.meta_compress_per_byte
            work += psize * c.checksum_per_byte
            self.cpu.run(work, lambda p=psize, k=copy: self._write_meta(txg, p, k), background=True)

    def _indirect_blocks(self, records: dict[tuple[int, int], None]) -> list[tuple[int, int]]:
        """(psize, copy) of every indirect block the txg rewrites: each dirty record's
        parent at every level (one dnode pointer covers a one-record file). Copies by
        ``redundant_metadata``: ``all`` writes every indirect block twice (a ditto block),
        ``most`` and below write level-1 blocks once (zfs.4)."""
        out: list[tuple[int, int]] = []
        for level in range(1, self.indirect_levels + 1):
            span = BPS_PER_INDIRECT**level
            parents = {(job, rec // span) for job, rec in records}
            psize, copies = indirect_block(
                level, self.file_records, self.ashift, self.redundant_metadata
            )
            out.extend((psize, k) for _ in parents for k in range(copies))
        return out

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

    def _space_map_blocks(self, freed: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """(psize, copy) of the space-map appends of a txg: one block per metaslab that
        frees blocks (an entry each) or allocates (one entry per contiguous run: new
        blocks go out sequentially), written with a ditto copy like all pool metadata."""
        entries: dict[tuple[int, int], int] = {}
        for v, offset in freed:
            ms = (v, offset >> self.tops[v].metaslab_shift)
            entries[ms] = entries.get(ms, 0) + 1
        for v, top in enumerate(self.tops):
            ms = (v, top.cursor >> top.metaslab_shift)
            entries[ms] = entries.get(ms, 0) + 1
        sector = 1 << self.ashift
        out = []
        for n in entries.values():
            psize = -(-n * SPACE_MAP_ENTRY_BYTES // sector) * sector
            copies = 1 if self.redundant_metadata == "none" else 2
            out.extend((psize, k) for k in range(copies))
        return out

    def _write_meta(self, txg: _Txg, psize: int, copy: int) -> None:
        """One indirect block copy to the metadata class (special vdevs, else the pool);
        a ditto copy goes to another vdev, or 1/8 of the vdev away on the same one
        (``metaslab_alloc_dva()``'s ditto distance)."""
        tops = self.meta_tops
        if copy == 0:
            self.meta_rotor = (self.meta_rotor + 1) % len(tops)
        top = tops[(self.meta_rotor + copy) % len(tops)]
        asize = psize_to_asize(top.vdev, psize, self.ashift)
        if copy and len(tops) == 1:
            ditto = getattr(top, "ditto_cursor", None)
            if ditto is None or ditto + asize > top.space:
                ditto = (top.cursor + top.space // 8) % max(1, top.space - asize)
            offset, top.ditto_cursor = ditto, ditto + asize
        else:
            offset = top.allocate(asize)
        self.meta_blocks_written += 1
        top.io(offset, psize, True, ASYNC_WRITE, lambda: self._txg_part_done(txg))

    def _write_record(self, txg: _Txg, key: tuple[int, int]) -> None:
        v = self._next_vdev()
        top = self.tops[v]
        offset = top.allocate(self.asizes[v])
        self.location[key] = (v, offset)
        columns = top.leaf_ios(offset, self.psize, True)
        limit = top.leaves[0].aggregation_limit
        run = self.runs.get(v)
        if run is not None and not run.accepts(columns, limit):
            self._issue_run(v)
            run = None
        if run is None:
            run = self.runs[v] = _Run(txg)
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

    def _record_written(self, txg: _Txg) -> None:
        self.dirty -= self.recordsize
        self._update_async_limit()
        while self.throttled and self.dirty < self.txg.dirty_max:
            self.throttled.popleft()()
        self._txg_part_done(txg)

    def _txg_part_done(self, txg: _Txg) -> None:
        txg.pending -= 1
        if txg.pending == 0:
            self._data_synced(txg)

    def _data_synced(self, txg: _Txg) -> None:
        """The txg's data and metadata are written; a scan takes its slice (dsl_scan_sync in
        spa_sync's first pass), then the uberblocks."""
        if self.scan_slice is not None:
            self.scan_slice(lambda: self._write_uberblocks(txg))
        else:
            self._write_uberblocks(txg)

    def _write_uberblocks(self, txg: _Txg) -> None:
        """End of ``spa_sync()``: labels/uberblock written to every leaf with a cache flush."""
        leaves = [(t, i) for t in self.all_tops for i in range(len(t.leaves))]
        left = [len(leaves)]

        def one_done() -> None:
            left[0] -= 1
            if left[0] == 0:
                self._sync_done(txg)

        for top, i in leaves:
            top.leaves[i].add(_ub_zio(top, one_done))

    def _sync_done(self, txg: _Txg) -> None:
        for key in txg.records:
            self.arc.insert(key)
        txg.synced = True
        self.syncing = None
        self.txgs_synced += 1
        if self.sync_wanted or self.open.bytes >= self.txg.sync_bytes or self.scan_active():
            self._start_sync()


def _ub_zio(top: TopVdev, done: Callback) -> Zio:
    # the uberblock ring lives in the labels at the start of the device
    return Zio(
        offset=128 * KiB,
        nbytes=1 << top.ashift,
        is_write=True,
        klass=SYNC_WRITE,
        done=done,
        needs_flush=True,
    )


# ---------------------------------------------------------------- clients


@dataclass
class _Stats:
    times: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    nbytes: list[int] = field(default_factory=list)
    is_read: list[bool] = field(default_factory=list)


class Job:
    """One fio job (or dd stream): ``iodepth`` slots, calls into ZFS one at a time unless
    direct I/O is honoured (then ``iodepth`` at once)."""

    def __init__(self, engine: Engine, index: int, concurrency: int, slots: int):
        self.engine, self.index = engine, index
        self.concurrency, self.slots = concurrency, slots
        self.waiting: deque[tuple[float, bool, int]] = deque()
        self.running = 0
        self.cursor = 0  # sequential position, bytes
        self.writes = 0  # writes done, for fsync=N
        self.prefetched_to = 0  # next record a sequential stream has not yet prefetched

    def start(self) -> None:
        for _ in range(self.slots):
            self.submit()

    def submit(self) -> None:
        e = self.engine
        is_read = e.next_is_read()
        offset = e.next_offset(self)
        self.waiting.append((e.env.now, is_read, offset))
        self._pump()

    def _pump(self) -> None:
        while self.waiting and self.running < self.concurrency:
            issued, is_read, offset = self.waiting.popleft()
            self.running += 1
            self.engine.call(self, issued, is_read, offset)

    def finished_batch(self) -> None:
        """A batch of calls (recorded by the engine) is done: the slot goes on."""
        self.running -= 1
        if not self.engine.stopped:
            self.submit()
        self._pump()

    def finished(self, issued: float, is_read: bool, nbytes: int) -> None:
        self.running -= 1
        self.engine.record(issued, is_read, nbytes)
        if not self.engine.stopped:
            self.submit()
        self._pump()


class Engine:
    """Builds the model from a scenario and runs it."""

    def __init__(self, sc: Any, seed: int, control: RunControl):
        self.sc, self.seed, self.control = sc, seed, control
        self.env = simpy.Environment()
        self.rng = np.random.default_rng(seed)
        self.stopped = False
        self.stats = _Stats()
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
        paths = _bus(self.env, sc, names, disk)
        self.stages = {s.name: s for p in paths.values() for s in p.stages}
        model = hdd.hdd_params(disk) if rotating else flash.flash_params(disk)
        agg = (MiB if self.version.at_least(0, 8) else 128 * KiB) if rotating else 128 * KiB
        self.devices: dict[str, Device] = {}
        leaf_size = disk.size_bytes
        block_leaf = None
        if block is not None:
            for name in block.devices:
                phase = float(self.rng.uniform(0.0, model.period)) if rotating else 0.0
                self.devices[name] = Device(self.env, name, model, rotating, paths[name], phase)
            parity = {5: 1, 6: 2}.get(block.level, 0)
            c = cpu_costs(
                hw.cpu_ghz,
                "off",
                parity,
                "off",
                io_scale=hw.cpu_io_cost_scale,
                byte_scale=hw.cpu_byte_cost_scale,
            )
            block_leaf = build_md_leaf(
                self, block, self.devices, disk.size_bytes, c.parity_per_byte,
                c.copy_per_byte, 3.0 / hw.cpu_ghz * hw.cpu_io_cost_scale, rotating,
            )  # fmt: skip
            leaf_size = block_leaf.size
            block_leaf.md.failed = frozenset(
                i for i, name in enumerate(block.devices) if name in pool.failed
            )
        cap = capacity(
            layout,
            leaf_size,
            ashift=pool.ashift,
            zfs_version=self.version,
            partitioning=pool.partitioning if block is None else "none",
            logical_sector=disk.logical_sector_bytes,
        )
        data_vdevs = [v for v in cap.vdevs if v.vclass == "normal"]
        tops = []
        for vdev, vcap in zip(layout.data_vdevs, data_vdevs, strict=True):
            leaves = []
            for name in vdev.devices:
                if block_leaf is not None:  # the pool's one leaf is the md array
                    leaves.append(LeafQueue(block_leaf, agg))  # type: ignore[arg-type]
                    continue
                phase = float(self.rng.uniform(0.0, model.period)) if rotating else 0.0
                dev = Device(self.env, name, model, rotating, paths[name], phase)
                self.devices[name] = dev
                leaves.append(LeafQueue(dev, agg))
            # a failed leaf keeps its Device, which stays idle (0 % busy: never the limit)
            failed = {i for i, name in enumerate(vdev.devices) if name in pool.failed}
            top = TopVdev(vdev, leaves, pool.ashift, vcap.metaslab_bytes, rotating, failed)
            top.metaslab_shift = vcap.metaslab_shift
            tops.append(top)
        self.log_tops = self._support_vdevs(layout, "log", hw.log_device)
        self.special_tops = self._support_vdevs(layout, "special", hw.special_device)
        self.cache_tops = self._support_vdevs(layout, "cache", hw.cache_device)
        self.memory = MemoryBus(self.env, hw.memory_bandwidth or memory.DEFAULT_MEMORY_BANDWIDTH)
        for dev in self.devices.values():
            dev.path.memory = self.memory
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
        for top in tops:
            if top.failed:  # degraded reads rebuild the missing column from parity
                top.on_reconstruct = self._charge_reconstruction
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

    def _charge_reconstruction(self, nbytes: int, done: Callback) -> None:
        self.cpu.run(nbytes * self.costs.parity_per_byte, done, nbytes, background=True)

    def _support_vdevs(
        self, layout: ZfsLayout, vclass: str, profile: Profile | None
    ) -> list[TopVdev]:
        """``log`` or ``special`` vdevs, on their device profile (else the data disk's)."""
        vdevs = layout.of_class(vclass)
        if not vdevs:
            return []
        hw, pool = self.sc.hardware, self.sc.pool
        profile = profile or hw.disk
        rotating = profile.kind == "hdd"
        model = hdd.hdd_params(profile) if rotating else flash.flash_params(profile)
        aggregation = MiB if rotating and self.version.at_least(0, 8) else 128 * KiB
        names = [d for v in vdevs for d in v.devices]
        paths = _bus(self.env, self.sc, names, profile, behind_hba=False)
        self.stages.update({s.name: s for p in paths.values() for s in p.stages})
        tops = []
        for vdev in vdevs:
            leaves = []
            for name in vdev.devices:
                phase = float(self.rng.uniform(0.0, model.period)) if rotating else 0.0
                dev = Device(self.env, name, model, rotating, paths[name], phase)
                self.devices[name] = dev
                leaves.append(LeafQueue(dev, aggregation))
            # allocatable space: the device less labels and the boot area (a log vdev's
            # blocks are short-lived, a special vdev's metadata small: neither fills up here)
            space = max(1 << 30, profile.size_bytes - (8 << 20))
            top = TopVdev(vdev, leaves, pool.ashift, space, rotating)
            top.metaslab_shift = metaslab_shift(space, self.version)
            tops.append(top)
        return tops

    # ---- workload shape
    def _setup_workload(self) -> None:
        w, rs = self.sc.workload, self.sc.pool.recordsize
        if w.tool == "dd":
            self.rw = "write" if w.direction == "write" else "read"
            self.bs, njobs, slots, self.file_bytes = w.bs, w.streams, 1, w.bytes
        else:
            self.rw, self.bs, njobs = w.rw, w.bs, w.numjobs
            slots = 1 if w.ioengine in ("psync", "sync") else w.iodepth
            self.file_bytes = w.size
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
        self.zfs.place_files(njobs, self.file_records)
        self.zfs.all_first_writes = self.new_files
        if self.random and not self.sparse:
            # reads, and read-modify-writes of existing records, meet a warm ARC
            self.zfs.warm_arc(njobs, self.file_records)
        self.prefetch_records = max(
            1, (64 * MiB if self.version.at_least(2, 2) else 8 * MiB) // self.sc.pool.recordsize
        )

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
        rs = self.sc.pool.recordsize
        if is_read or self.random or job.slots != 1 or self.zil is not None:
            return 1
        if rs % self.bs or offset % rs or self.zfs.throttled:
            return 1
        if not (self.new_files or self._hole(job.index, offset // rs)):
            return 1
        if throttle_delay(self.zfs.dirty, self.zfs.txg) > 0:
            return 1
        return max(1, min(rs // self.bs, (self.file_bytes - offset) // self.bs))

    def call(self, job: Job, issued: float, is_read: bool, offset: int) -> None:
        c = self.costs
        rs = self.sc.pool.recordsize
        if self.direct and offset % rs == 0 and self.bs % rs == 0:
            # Direct I/O (2.3+) of whole records maps the user pages: no copy through the
            # ARC; writes verify the checksum of the pages once more (direct_write_verify)
            work = c.syscall + (0.0 if is_read else self.bs * c.direct_verify_per_byte)
            traffic = 0.0 if is_read else self.bs * memory.CHECKSUM_PASSES
        else:
            work = c.syscall + self.bs * c.copy_per_byte
            traffic = memory.copy_bytes(self.bs)
            if not is_read:  # the dirty record's ARC buffer (read misses pay at the insert)
                work += self.bs * c.cache_pages_per_byte
        if is_read:
            work += c.atime_update
        if not is_read and self.sc.workload.tool == "dd":
            work += self.bs * c.source_per_byte
        batch = self._batchable(job, is_read, offset)
        if batch > 1:
            self._call_batch(job, issued, offset, work, batch, traffic)
            return
        self.client_cpu += work
        rs = self.sc.pool.recordsize
        first, last = offset // rs, (offset + self.bs - 1) // rs
        keys = [(job.index, r % self.file_records) for r in range(first, last + 1)]

        def finish() -> None:
            job.finished(issued, is_read, self.bs)

        def after_cpu() -> None:
            if is_read:
                self._read(job, keys, finish)
            else:
                self._write(job, keys, offset, issued, finish)

        self.cpu.run(work, after_cpu, traffic)

    def _call_batch(
        self, job: Job, issued: float, offset: int, work: float, n: int, traffic: float
    ) -> None:
        self.client_cpu += work * n
        key = (job.index, (offset // self.sc.pool.recordsize) % self.file_records)
        if self._hole(*key):
            self.written.add(key)
            self.zfs.first_writes.add(key)
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
        rs = self.sc.pool.recordsize
        whole = offset % rs == 0 and self.bs % rs == 0
        left = [len(keys)]

        def one() -> None:
            left[0] -= 1
            if left[0] == 0:
                if self.zil is None:
                    done()
                else:
                    self._log_and_commit(job, keys, offset, issued, done)

        for key in keys:
            if whole or self.new_files or self._hole(*key):
                # whole records, or records of a file being created (a hole reads as zeros
                # without I/O): no read first
                if self._hole(*key):
                    self.written.add(key)
                    self.zfs.first_writes.add(key)
                self.zfs.dirty_record(key, one)
            else:
                # partial record: read-modify-write unless the record is in memory
                self.zfs.read_record(key, SYNC_READ, lambda k=key: self.zfs.dirty_record(k, one))

    def _log_and_commit(
        self, job: Job, keys: list[tuple[int, int]], offset: int, issued: float, done: Callback
    ) -> None:
        """The write's intent-log records; O_SYNC commits them before the call returns,
        fsync=N commits every N-th write's job (fio counts the fsync apart from the write)."""
        zil = self.zil
        assert zil is not None
        rs = self.sc.pool.recordsize
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
        s = self.stats
        s.times.append(done)
        s.latencies.append(done - issued)
        s.nbytes.append(nbytes)
        s.is_read.append(is_read)

    # ---- run and measure
    def run(self) -> SimResult:
        wall_start = time.perf_counter()
        for job in self.jobs:
            job.start()
        control = self.control
        ci_rel, warmup, window = math.inf, 0.0, 0.0
        while True:
            self.env.run(until=self.env.now + control.check_every)
            wall = time.perf_counter() - wall_start
            if self.env.now >= control.min_sim_seconds:
                ci_rel, warmup, window = self._precision()
                if ci_rel <= control.target_ci and self._settled():
                    break
            if control.on_check is not None:
                control.on_check(self.env.now, wall, ci_rel)
            if self.env.now >= control.max_sim_seconds or wall >= control.max_wall_seconds:
                break
        self.stopped = True
        return self._result(ci_rel, warmup, window, time.perf_counter() - wall_start)

    #: a write run whose buffer has not filled must have written this many times the most
    #: dirty data it held before it may stop: until then the clients' rate may include the
    #: buffer filling (absorbed faster than the disks drain it), which batch means cannot see
    SETTLE_DIRTY_MULTIPLE = 10

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
        written = sum(n for n, r in zip(self.stats.nbytes, self.stats.is_read, strict=True)
                      if not r)  # fmt: skip
        return self.zfs.max_dirty / written if written else math.inf

    def _series(self, window: float) -> np.ndarray:
        times = np.asarray(self.stats.times)
        bins = int(self.env.now // window)
        counts = np.bincount((times // window).astype(int), minlength=bins + 1)[:bins]
        return counts / window

    def _window(self) -> float:
        """Width of the rate series' bins: ≥ one txg period for writes (the rate breathes
        with each sync), else long enough for ~20 completions per bin."""
        n = len(self.stats.times)
        rate = n / max(self.env.now, 1e-9)
        window = 20 / rate if rate > 0 else self.env.now / 10
        if self.read_fraction < 1.0:
            sync_period = self.env.now / max(1, self.zfs.txgs_synced)
            window = max(window, min(sync_period, self.zfs.txg.txg_timeout) / 2)
        return max(window, self.env.now / 400)

    def _precision(self) -> tuple[float, float, float]:
        if len(self.stats.times) < 200:
            return math.inf, 0.0, 0.0
        window = self._window()
        series = self._series(window)
        if len(series) < 20:
            return math.inf, 0.0, window
        cut = mser5_truncation(series)
        filled_at = getattr(getattr(self, "zfs", None), "filled_at", None)
        if filled_at is not None:  # measure after the write buffer has filled
            cut = max(cut, math.ceil(filled_at / window))
        kept = series[cut:]
        if len(kept) < 10:
            return math.inf, cut * window, window
        mean, half = batch_means_halfwidth(kept, batches=min(20, len(kept) // 2))
        if mean <= 0:
            return math.inf, cut * window, window
        # Batch means miss slow swings longer than a batch (the write path can alternate big
        # and small txgs over tens of seconds): the two halves of the kept series must agree
        # too, and their gap counts as the precision when it is the larger.
        first, second = np.array_split(kept, 2)
        drift = abs(float(first.mean()) - float(second.mean())) / mean
        return max(half / mean, drift), cut * window, window

    def _directions(self, warmup: float) -> tuple[DirectionStats, DirectionStats]:
        """Read and write rates and completion latencies of the calls done after ``warmup``."""
        s = self.stats
        keep = np.asarray(s.times) >= warmup
        span = self.env.now - warmup
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

    #: the quantiles ``details["latency_quantiles_s"]`` reports per direction
    LATENCY_QUANTILES = (0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999)

    def latency_quantiles(self, warmup: float) -> dict[str, dict[str, float]]:
        """Completion-latency quantiles (seconds) of the calls done after ``warmup``, per
        direction that had any: ``{"read": {"0.5": ..., "0.99": ...}, ...}`` — the latency
        distribution behind the mean/p50/p99 of the result."""
        s = self.stats
        keep = np.asarray(s.times) >= warmup
        lat = np.asarray(s.latencies)[keep]
        is_read = np.asarray(s.is_read, dtype=bool)[keep]
        out: dict[str, dict[str, float]] = {}
        for name, mask in (("read", is_read), ("write", ~is_read)):
            if mask.any():
                values = np.quantile(lat[mask], self.LATENCY_QUANTILES)
                out[name] = {
                    f"{q:g}": float(v) for q, v in zip(self.LATENCY_QUANTILES, values, strict=True)
                }
        return out

    def _result(self, ci_rel: float, warmup: float, window: float, wall: float) -> SimResult:
        read, write = self._directions(warmup)

        util = self._utilization()
        limit = self._limit(util)
        notes = []
        if not math.isfinite(ci_rel) or ci_rel > self.control.target_ci:
            notes.append(
                f"stopped at the time cap before the 95% CI reached "
                f"{self.control.target_ci:.0%} (ci_rel {ci_rel:.3f})"
            )
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
                "txgs_synced": self.zfs.txgs_synced,
                "reconstructed_reads": sum(t.reconstructions for t in self.zfs.all_tops),
                "indirect_blocks_written": self.zfs.meta_blocks_written,
                "blocks_freed": self.zfs.frees,
                **self._l2_details(),
                "data_on_special": self.zfs.data_on_special,
                "throttle_delay_s": self.zfs.delay_time,
                "dirty_max_bytes": self.zfs.txg.dirty_max,
                "transient_share": self.transient_share(),
                "device_ios": {n: d.ios for n, d in self.devices.items()},
                "device_write_bytes": {n: d.bytes - d.read_bytes for n, d in self.devices.items()},
                "window_s": window,
                "latency_quantiles_s": self.latency_quantiles(warmup),
                **self._zil_details(),
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

    def _l2_details(self) -> dict[str, Any]:
        zfs = self.zfs
        if not zfs.cache_tops:
            return {}
        cache_bytes = sum(t.space for t in zfs.cache_tops)
        return {
            "l2arc_hits": zfs.l2_hits,
            "l2arc_hit_probability": zfs.l2_hit,
            "l2arc_feed_bytes": zfs.l2_feed_bytes,
            "l2arc_bytes": cache_bytes,
            # time the feed needs to fill the cache devices from cold, s
            "l2arc_warm_seconds": cache_bytes / L2ARC_WRITE_MAX,
        }

    def _zil_details(self) -> dict[str, Any]:
        zil = self.zil
        if zil is None:
            return {}
        return {
            "zil_commits": zil.commits,
            "zil_commit_mean_s": zil.commit_time / zil.commits if zil.commits else None,
            "zil_lwbs": zil.lwbs_written,
            "zil_log_bytes": zil.log_bytes,
            "zil_indirect_writes": zil.indirect_writes,
            "slog": bool(zil.log_tops),
        }

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


def simulate_des(sc: Any, seed: int = 1, control: RunControl | None = None) -> SimResult:
    """Run the discrete-event engine on a scenario (see :func:`zsim.simulate`): ZFS pools
    here, md RAID with an ext4-like file system and btrfs in :mod:`zsim.des.blockfs`."""
    if isinstance(sc.layout_tree(), MdArray | BtrfsArray | RawDevices):
        from zsim.des.blockfs import simulate_blockfs

        return simulate_blockfs(sc, seed, control)
    return Engine(sc, seed, control or RunControl()).run()
