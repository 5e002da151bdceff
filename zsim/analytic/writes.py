"""Buffered writes in the analytic engine: the txg pipeline's bottleneck bound — what the
clients can dirty (their calls' CPU, read-modify-write reads), what the vdevs can write per
second (sequential aggregated leaf writes at ``zfs_vdev_async_write_max_active``, plus the
indirect blocks each txg rewrites), what the cores can checksum, compress and parity per
second, and what the memory bus, the HBA and the links can carry; each less the txg's own
tail (the uberblock, and every leaf's positioning back to the data, the slowest of which the
pool waits for).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from zsim.analytic import devices
from zsim.analytic.demands import ASYNC_WRITE_MAX, PoolModel
from zsim.analytic.draid_load import draid_write_hot_share
from zsim.analytic.roots import brent_root
from zsim.des.txg_runs import TxgState, WriteRun
from zsim.des.vdev import TopVdev, aggregation_limit
from zsim.layout.alloc import psize_to_asize
from zsim.machine import memory
from zsim.machine.costs import cpu_costs
from zsim.table_cache import load_or_measure, register_kind
from zsim.zfs.indirect import BPS_PER_INDIRECT, INDIRECT_BYTES, indirect_block, indirect_levels
from zsim.zfs.txg import open_txg_bytes, throttle_fill, txg_tunables

#: how closely the throttle's txg size is solved (:meth:`WriteModel._throttled_txg_records`),
#: a share of ``zfs_dirty_data_max``
THROTTLE_TOLERANCE = 2e-3
#: the largest txg the search for the throttle's txg size tries, a share of
#: ``zfs_dirty_data_max``
FULLEST = 0.999


class WriteModel(PoolModel):
    """Calls/s of a buffered write job and each bound's calls/s."""

    # ---- writes
    def _write(self, throttled_txgs: bool = True) -> tuple[float, dict[str, float]]:
        """Calls/s of a buffered write job and each bound's calls/s.

        A txg's size sets each record's share of the indirect blocks it rewrites. While the
        disks (or their bus) bound the rate, the write throttle sets it
        (:meth:`_throttled_txg_records`): from 60 % of ``zfs_dirty_data_max`` toward all of
        it as the rate falls and as the sync's indirect blocks outlast its data. When the CPU, the
        memory bus or the clients bound it, each sync ends before the next txg fills: a txg
        closes at ``zfs_dirty_data_sync`` or at ``zfs_txg_timeout`` (``ZfsModel._admit``,
        ``_timer``), so it holds fewer records and rewrites more indirect blocks per record;
        the rate is then solved again at that size (a fixed point, three passes at most) —
        unless the sync cannot keep up with the writers at that size (its taskq threads or
        the disks are slower than the open txg fills): then each txg grows while the last
        syncs, up to the throttle's size, as in the DES. ``throttled_txgs=False`` stops at
        txgs of 60 % of ``zfs_dirty_data_max`` where the disks bind: bounds no higher than
        the answer's, for a caller that needs them only if they bind (the mixed model)."""
        x, bounds = self._write_bounds(None)
        if min(bounds, key=bounds.__getitem__) not in ("cpu", "client", "memory"):
            if not throttled_txgs:  # the bounds at 60 %: lower, and cheaper
                return x, bounds
            records = self._throttled_txg_records()
            return self._write_bounds(records, cycle_records=records)
        per_txg = self._open_txg_records(x)
        for _ in range(3):
            x_small, small = self._write_bounds(per_txg)
            following = self._open_txg_records(x_small)
            if abs(following - per_txg) <= 1e-3 * per_txg:
                break
            per_txg = following
        if self._sync_keeps_up(x_small, small, per_txg):
            return x_small, small
        return x, bounds

    def _sync_keeps_up(self, x: float, bounds: dict[str, float], per_txg: float) -> bool:
        """Whether a txg of ``zfs_dirty_data_sync`` bytes syncs before the next one fills, at
        ``x`` calls/s. The sync takes a call's share of taskq CPU on its threads (they run
        first, ``CpuPool``) or of the disks' time, whichever is longer; meanwhile the
        writers fill the open txg at their rate, on at most the cores the taskq threads
        leave. When the taskq threads are what bounds the CPU, the sync cannot keep up.
        ``bounds``: :meth:`_write_bounds` at txgs of ``per_txg`` records."""
        call, sync, _ = self._cpu_per_call(per_txg)
        if sync <= 0:
            return True
        if self.taskq / sync <= self.cores / (call + sync):
            return False
        pool = min(
            (b for k, b in bounds.items() if k not in ("cpu", "client", "memory")),
            default=math.inf,
        )
        sync_per_call = max(sync / self.taskq, 1.0 / pool if pool > 0 else math.inf)
        fill = min(x, max(0, self.cores - self.taskq) / call) if call > 0 else x
        return fill * sync_per_call < 1.0

    def _throttled_txg_records(self) -> float:
        """Records a txg holds in the steady state the write throttle keeps while the disks
        bound the rate: the D with :func:`~zsim.zfs.txg.throttle_fill` = D, the writers
        filling the open txg under ``dmu_tx_delay()`` for as long as a txg of D records
        takes to sync (its data, then the indirect blocks and the uberblock, which release
        no dirty space), by Brent's method between the delay's threshold and
        ``zfs_dirty_data_max``. A slower sync, or a longer metadata tail, lets the open txg
        grow further up the delay curve (the DES's txgs: 0.66-1.0 of
        ``zfs_dirty_data_max``, where 0.6 was taken before)."""
        txg = txg_tunables(self.sc.hardware.ram, self.version)
        most = txg.dirty_max / self.rs
        per_call = self._records_per_call()

        def excess(records: float) -> float:
            data: dict[str, float] = {}
            # (the clients' stretched bound is left out: the disks bind here, and it costs
            # 60 memory-bus solutions a step)
            x, bounds = self._write_bounds(
                records, data_rates=data, cycle_records=records, memory_stretched=False
            )
            sync = records / (x * per_call)
            data_seconds = min(sync, records / (min(data.values()) * per_call)) if data else sync
            free = min(bounds.get(k, math.inf) for k in ("client", "cpu", "memory")) * per_call
            return throttle_fill(most, txg, free, records, data_seconds, sync) - records

        # (a txg of exactly zfs_dirty_data_max is a fixed point too, but not one a sync
        # reaches: the writers then take each record the sync frees; any less relaxes down)
        lo, hi = txg.delay_min_fraction * most, FULLEST * most
        if excess(lo) <= 0.0:
            return lo
        if excess(hi) >= 0.0:
            return hi
        return brent_root(excess, lo, hi, THROTTLE_TOLERANCE * most)

    def _open_txg_records(self, x: float) -> float:
        """Records a txg holds at ``x`` calls/s when each sync ends before the next txg fills:
        it closes at ``zfs_dirty_data_sync`` or at ``zfs_txg_timeout``, never past the write
        throttle's 60 % of ``zfs_dirty_data_max``."""
        txg = txg_tunables(self.sc.hardware.ram, self.version)
        closed = open_txg_bytes(x * self._records_per_call() * self.rs, txg) / self.rs
        return max(1.0, min(0.6 * txg.dirty_max / self.rs, closed))

    def _records_per_call(self) -> float:
        """Records a call dirties: a random call smaller than a record one, else its bytes'
        share of records."""
        return self.bs / self.rs if not self.random or self.bs >= self.rs else 1.0

    def _cpu_per_call(self, per_txg: float | None) -> tuple[float, float, dict[str, Any]]:
        """(a call's own CPU s, the taskq CPU s its records cost the txg sync, the records'
        share of the indirect blocks) with txgs of ``per_txg`` records."""
        c = self.costs
        bs = self.bs
        call_cpu = c.syscall + (
            bs * c.direct_verify_per_byte if self.direct else bs * (c.copy_per_byte
                                                                     + c.cache_pages_per_byte)
        )  # fmt: skip
        parity = any(v.top.vdev.kind in ("raidz", "draid") for v in self.vdevs)
        children = max(len(v.top.leaf_ios(0, self.psize, True)) for v in self.vdevs)
        record_cpu = c.write_record(self.rs, self.psize, parity) + children * c.leaf_io
        meta = self._metadata_per_record(per_txg)
        record_cpu += meta["cpu"]
        return call_cpu, self._records_per_call() * record_cpu, meta

    def _write_bounds(
        self,
        per_txg: float | None,
        data_rates: dict[str, float] | None = None,
        cycle_records: float | None = None,
        memory_stretched: bool = True,
    ) -> tuple[float, dict[str, float]]:
        """Calls/s and each bound's calls/s with txgs of ``per_txg`` records (None: 60 % of
        ``zfs_dirty_data_max``, :meth:`_metadata_per_record`). ``data_rates``, when given,
        receives each vdev's calls/s for its data alone (no indirect blocks, no txg tail);
        ``cycle_records``: the txg's records for the sync's tail (:meth:`_txg_cycle`);
        ``memory_stretched=False`` leaves the clients' bound unstretched by the memory bus (an upper
        end of it, and most of the cost of a call)."""
        rs, bs = self.rs, self.bs
        records_per_call = self._records_per_call()
        parity = any(v.top.vdev.kind in ("raidz", "draid") for v in self.vdevs)
        # the cores: client calls plus the txg sync's per-record work, which runs in the
        # zio taskqs (80 % of the cores as threads)
        call_cpu, sync_cpu, meta = self._cpu_per_call(per_txg)
        bounds: dict[str, float] = {}
        bounds["cpu"] = min(self.cores / (call_cpu + sync_cpu), self.taskq / sync_cpu)
        # the clients: each job makes one call at a time (buffered), on a core the taskq
        # threads leave free: X = min(jobs, cores − min(taskq, X · sync)) / call (fixed point)
        bounds["client"] = client_bound(self.clients, self.cores, self.taskq, call_cpu, sync_cpu)
        # the vdevs: sequential aggregated leaf writes at the async-write ceiling
        txg = txg_tunables(self.sc.hardware.ram, self.version)
        leaf_io_bytes = []
        for i, v in enumerate(self.vdevs):
            ios = v.top.leaf_ios(0, self.psize, True)
            per_leaf = max(io[2] for io in ios)
            # the leaves still there share the writes (a missing one takes none)
            width = len(v.top.vdev.devices) - len(v.top.failed)
            # vdev_queue's aggregation limit, as the DES's (1 MiB on HDDs from 0.8, else 128K)
            agg = aggregation_limit(self.rotating, self.version)
            nbytes = max(per_leaf, (agg // per_leaf) * per_leaf) if per_leaf <= agg else per_leaf
            if v.top.vdev.kind == "raidz":
                # raidz columns differ in size (parity, the skip sectors OpenZFS 2.2+ writes
                # into the data columns) and rotate over the leaves: the DES's WriteRun closes
                # a run when its fullest leaf would pass the limit, so its leaf writes are
                # records-per-run × the *average* column, not a multiple of the largest one
                # (3x raidz2 10, 128K: 60 × 16.8K = 1008K, not 51 × 20K = 1020K)
                nbytes = run_leaf_bytes(v.top, self.psize, v.asize, agg)
            table = devices.device_table(self.disk, nbytes, True, True, v.lo, v.hi, ASYNC_WRITE_MAX)
            seconds = 1.0 / table.at(ASYNC_WRITE_MAX)
            leaf_bytes_per_s = nbytes / seconds
            leaf_io_bytes.append(nbytes)
            # bytes per record on each leaf: the column map's share, plus the record's share
            # of the txg's indirect blocks (spread over the vdevs like the data)
            # the txg's indirect blocks on the leaves: each mirror child writes them whole
            meta_leaf = meta["asize"][i] * v.leaf_fan(self.psize)
            column_bytes = sum(io[2] for io in ios)
            per_record_leaf = (column_bytes + meta_leaf) / width
            if v.top.vdev.kind == "draid":
                # a txg's new blocks fill a few groups in a row, each on its own D + P
                # children: the busiest child's share, not an even spread, sets the sync.
                # Writers the disks hold back keep the open txg near zfs_dirty_data_max
                # (dmu_tx_delay()'s delay grows without bound toward it), so a txg
                # allocates about that much data
                txg_space = txg.dirty_max / self.rs * v.weight * v.asize
                per_record_leaf = (column_bytes + meta_leaf) * (
                    draid_write_hot_share(v.top, txg_space)
                )
            vdev_records = leaf_bytes_per_s / per_record_leaf
            bounds[f"vdev{i}"] = vdev_records / v.weight / records_per_call
            if data_rates is not None:  # the same leaves without the indirect blocks
                with_meta = (column_bytes + meta_leaf) / column_bytes
                data_rates[f"vdev{i}"] = bounds[f"vdev{i}"] * with_meta
        if self.special_tops and meta["special"] > 0:
            bounds["special"] = self._special_bound(meta["special"]) / records_per_call
        # memory bus
        write_traffic = memory.write_record_bytes(
            rs,
            self.psize,
            compressing=self.sc.pool.compression != "off",
            checksumming=self.sc.pool.checksum != "off",
            parity_ratio=max(
                ((sum(io[2] for io in v.top.leaf_ios(0, self.psize, True)) - self.psize)
                 / self.psize) for v in self.vdevs if v.top.vdev.kind in ("raidz", "draid")
            ) if parity else 0.0,
        )  # fmt: skip
        call_traffic = bs * memory.CHECKSUM_PASSES if self.direct else memory.copy_bytes(bs)
        device_bytes = sum(
            v.weight * sum(io[2] for io in v.top.leaf_ios(0, self.psize, True)) for v in self.vdevs
        )
        per_call = call_traffic + records_per_call * (write_traffic + device_bytes)
        bounds["memory"] = self.mem_bw / per_call
        # each call's copy runs slower while the bus is asked for more than it moves
        bounds["client"] = (
            bounds["client"]
            if not memory_stretched
            else stretched_client_bound(
                bounds["client"],
                lambda stretch: client_bound(
                    self.clients, self.cores, self.taskq, call_cpu * stretch, sync_cpu
                ),
                lambda x: memory_stretch(
                    x,
                    self.clients,
                    (call_cpu, call_traffic),
                    (sync_cpu - records_per_call * meta["cpu"], records_per_call * write_traffic),
                    records_per_call * device_bytes,
                    self.taskq,
                    self.mem_bw,
                ),
            )
        )
        leaf_load: dict[str, tuple[float, float]] = {}
        for v, nbytes in zip(self.vdevs, leaf_io_bytes, strict=True):
            ios = v.top.leaf_ios(0, self.psize, True)
            width = len(v.top.vdev.devices) - len(v.top.failed)
            leaf_bytes = records_per_call * v.weight * sum(io[2] for io in ios) / width
            for i, name in enumerate(v.top.vdev.devices):
                if i not in v.top.failed:
                    leaf_load[name] = (leaf_bytes, leaf_bytes / nbytes)
        bus, bus_name = self._bus_bound(leaf_load)
        if bus_name:
            bounds[bus_name] = bus
        self._txg_cycle(bounds, leaf_io_bytes, records_per_call, cycle_records)
        return min(bounds.values()), bounds

    def _special_bound(self, per_vdev: float) -> float:
        """Records/s the special vdevs take the txg's indirect blocks at: each vdev gets
        ``per_vdev`` allocated bytes per record, every child of a mirror all of them, in
        writes the leaf queue aggregates (a txg's metadata is allocated back to back)."""
        top = self.special_tops[0]
        agg = aggregation_limit(self.special_disk.kind == "hdd", self.version)
        per_leaf = per_vdev * (1.0 if top.vdev.kind == "mirror" else 1.0 / len(top.vdev.devices))
        table = devices.device_table(self.special_disk, agg, True, True, 0.0, 1.0, ASYNC_WRITE_MAX)
        leaf_bytes_per_s = agg * table.at(ASYNC_WRITE_MAX)
        return leaf_bytes_per_s / per_leaf

    def _metadata_per_record(self, per_txg: float | None = None) -> dict[str, Any]:
        """A record's share of the indirect blocks its txg rewrites (as the DES writes them:
        every dirty record's parent at every level, ditto copies by ``redundant_metadata``):
        allocated bytes per vdev (a mirror's children each write them whole,
        :meth:`AnalyticVdev.leaf_fan`) and CPU seconds (once per block, whatever its copies).
        Of the P parents at a level, random calls of R records each dirty
        P · (1 − (1 − q/P)^(D/R)) distinct ones (D records per txg, q = 1 + (R − 1)/span
        parents per call), sequential ones D / span + one per job. ``per_txg``: D; None for
        0.6 × dirty_max of records (the callers that do not solve the throttle's size, e.g.
        the sync models' write-back bounds); the write throttle's own steady state
        (:meth:`_throttled_txg_records`) when the disks bind; smaller txgs: the writes when
        the CPU binds and the sync keeps up (:meth:`_write`), a mixed job's
        (:mod:`zsim.analytic.mixed`), the sync writers' (:mod:`.sync`)."""
        pool, c = self.sc.pool, self.costs
        txg = txg_tunables(self.sc.hardware.ram, self.version)
        per_txg = max(1.0, 0.6 * txg.dirty_max / self.rs if per_txg is None else per_txg)
        call_records = max(1.0, self.bs / self.rs)
        asize = [0.0] * len(self.vdevs)
        special = 0.0  # bytes per record on each special vdev (they share it evenly)
        cpu = 0.0
        meta_compress = cpu_costs(
            self.sc.hardware.cpu_ghz,
            pool.checksum,
            0,
            "lz4",
            io_scale=self.sc.hardware.cpu_io_cost_scale,
            byte_scale=self.sc.hardware.cpu_byte_cost_scale,
        ).compress_per_byte
        for level in range(1, indirect_levels(self.file_records) + 1):
            span = BPS_PER_INDIRECT**level
            parents = self.njobs * -(-self.file_records // span)
            if self.random:
                # the calls land at random, their records in a row: a call of R records
                # dirties 1 + (R − 1)/span parents at this level (it crosses a boundary
                # that often), and the txg holds D/R such calls
                per_call = min(float(parents), 1.0 + (call_records - 1.0) / span)
                calls = per_txg / call_records
                dirty = (
                    parents * -math.expm1(calls * math.log1p(-per_call / parents))
                    if per_call < parents
                    else float(parents)
                )
            else:
                dirty = min(parents, per_txg / span + self.njobs)
            psize, copies = indirect_block(level, self.file_records, pool.ashift,
                                           pool.redundant_metadata)  # fmt: skip
            blocks = dirty * copies / per_txg  # indirect block copies per record
            if self.special_tops:  # the metadata class: the special vdevs, in turn
                tops = self.special_tops
                special += blocks * psize_to_asize(tops[0].vdev, psize, pool.ashift) / len(tops)
            else:
                for i, v in enumerate(self.vdevs):
                    asize[i] += blocks * psize_to_asize(v.top.vdev, psize, pool.ashift)
            # compressed and checksummed once per block, whatever its copies (the DES's
            # ZfsModel._start_sync; OpenZFS writes the copies as one zio's DVAs)
            cpu += (blocks / copies) * (
                c.zio + INDIRECT_BYTES * meta_compress + psize * c.checksum_per_byte
            )
        return {"asize": asize, "special": special, "cpu": cpu}

    def _txg_cycle(
        self,
        bounds: dict[str, float],
        leaf_io_bytes: list[int],
        records_per_call: float,
        records: float | None = None,
    ) -> None:
        """The txg pipeline's own loss: a txg's sync must finish before the next starts
        (``spa_sync``), so every sync ends with a tail no other work overlaps — its last
        aggregated leaf writes and the uberblock write and flush to the labels. With B bytes
        per txg and a resource that moves R bytes/s, the rate is B / (B/R + tail). In steady
        state the write throttle holds dirty data near its delay threshold
        (``zfs_delay_min_dirty_percent`` = 60 % of ``zfs_dirty_data_max``), which the
        syncing txg takes: B = 0.6 × dirty_max, or ``records`` when given (the throttle's
        steady state, :meth:`_throttled_txg_records`). Disks already busy through the tail
        lose the uberblock's positioning, and the positioning back to the data, of which the
        txg waits for the slowest leaf's."""
        txg = txg_tunables(self.sc.hardware.ram, self.version)
        if records is None:
            records = 0.6 * txg.dirty_max / self.rs
        calls_per_txg = records / records_per_call
        v = self.vdevs[0]
        last_write = devices.device_table(
            self.disk, leaf_io_bytes[0], True, True, v.lo, v.hi, 1
        ).mean_service
        positioning = devices.device_table(
            self.disk, 1 << v.top.ashift, False, False, v.lo, v.hi, 1
        )
        uberblock = positioning.mean_service
        # every leaf starts the next txg's writes with a positioning back from the labels,
        # and the sync ends when the last leaf is done: the pool waits for the slowest of
        # its leaves' positionings (negligible on flash)
        leaves = sum(len(x.top.vdev.devices) - len(x.top.failed) for x in self.vdevs)
        leaves += sum(len(t.vdev.devices) for t in self.special_tops)  # uberblocks there too
        restart = positioning.expected_max(leaves)
        for key, bound in bounds.items():
            if key == "client" or not math.isfinite(bound):
                continue
            tail = uberblock + restart if key.startswith("vdev") else last_write + uberblock
            bounds[key] = calls_per_txg / (calls_per_txg / bound + tail)

    # ---- the answer
    def _bound_util(self, x: float, bounds: dict[str, float]) -> dict[str, float]:
        util: dict[str, float] = {}
        for key, bound in bounds.items():
            if key == "client":
                continue
            if key == "special":
                for t in self.special_tops:
                    for disk in t.vdev.devices:
                        util[f"disk:{disk}"] = min(1.0, x / bound)
                continue
            if key.startswith("vdev"):
                top = self.vdevs[int(key[4:])].top
                for i, disk in enumerate(top.vdev.devices):
                    # a missing leaf's device stays idle, as in the DES
                    util[f"disk:{disk}"] = 0.0 if i in top.failed else min(1.0, x / bound)
            else:
                util[key] = min(1.0, x / bound)
        return util

    def _bound_limit(self, bounds: dict[str, float]) -> str:
        """The binding bound, named as the DES names resources (the clients' own CPU is
        ``cpu``, as the DES says when its client threads are ≥ 85 % busy)."""
        name = min(bounds, key=bounds.__getitem__)
        if name == "special":
            return f"disk:{self.special_tops[0].vdev.devices[0]}"
        if name.startswith("vdev"):
            top = self.vdevs[int(name[4:])].top
            alive = [d for i, d in enumerate(top.vdev.devices) if i not in top.failed]
            return f"disk:{alive[0]}"
        if name == "client":
            return "cpu"
        return name


#: the stretched clients' bound is found to this share of the unstretched one
STRETCH_TOLERANCE = 1e-12


def client_bound(clients: int, cores: int, taskq: int, call: float, sync: float) -> float:
    """Calls/s ``clients`` single-threaded callers reach when each call costs ``call`` s of
    CPU and leaves ``sync`` s of taskq work: the largest X with
    X · call ≤ min(clients, cores − min(taskq, X · sync)). The right side falls with X, so X
    is where the line meets it: min(clients / call, max((cores − taskq) / call,
    cores / (call + sync)))."""
    if call <= 0:
        return math.inf
    return min(clients / call, max((cores - taskq) / call, cores / (call + sync)))


def memory_stretch(
    x: float,
    clients: int,
    call: tuple[float, float],
    records: tuple[float, float],
    dma: float,
    taskq: int,
    rate: float,
) -> float:
    """How much longer a client's call runs at ``x`` calls/s than its CPU alone, as the
    DES's :class:`~zsim.machine.resources.MemoryBus` stretches it: a CPU job moving ``b``
    bytes in ``s`` seconds runs alone × max(1, load ÷ ``rate``), alone = max(s, b ÷ rate),
    load = what the running jobs ask of the bus (b ÷ alone each, for as long as they run),
    its own ask and the devices' recent DMA (``MemoryBus.start``).

    ``call``, ``records``: (CPU seconds, bus bytes) of a call and of the txg's record jobs
    per call (compress, checksum, parity; the metadata's jobs move no modelled bytes);
    ``dma``: device bytes per call. The txg's records become runnable together when its
    sync starts, so the ``taskq`` threads ask in bursts, all at once; between bursts the bus
    carries the other clients' copies and the DMA. A call's stretch is the mean of the two
    states' over the share of time the bursts fill (at the burst's own pace). The other
    clients' calls last as long as this one, so their asks weigh by the same mean: solved
    by iteration. The taskq jobs' own stretch is left out of the CPU bounds."""
    call_cpu, call_bytes = call
    record_cpu, record_bytes = records
    if call_bytes <= 0 or rate <= 0 or call_cpu <= 0:
        return 1.0
    alone = max(call_cpu, call_bytes / rate)
    others = x * call_bytes * (clients - 1) / max(1, clients)
    record_alone = max(record_cpu, record_bytes / rate)
    thread_ask = record_bytes / record_alone if record_alone > 0 and taskq > 0 else 0.0
    mean = 1.0
    for _ in range(100):
        quiet = call_bytes / alone + x * dma + others * mean
        burst = quiet + taskq * thread_ask
        share = min(1.0, x * record_alone * max(1.0, burst / rate) / taskq) if thread_ask else 0.0
        step = share * max(1.0, burst / rate) + (1.0 - share) * max(1.0, quiet / rate)
        if step > 1e6:
            return math.inf  # the other calls' asks alone fill the bus: no such rate
        if abs(step - mean) <= 1e-12 * step:
            mean = step
            break
        mean = step
    return alone / call_cpu * mean


def stretched_client_bound(
    plain: float, bound: Callable[[float], float], stretch: Callable[[float], float]
) -> float:
    """The calls/s x with x = ``bound(stretch(x))``: the clients' bound with each call
    lengthened by ``stretch`` at the rate it reaches (``plain``: the bound unstretched, an
    upper end; the stretch grows with x, so the bound falls with it and the gap
    bound(stretch(x)) − x falls from positive at 0): ``plain`` if the gap is not negative
    there, else its zero by Brent's method to :data:`STRETCH_TOLERANCE` of ``plain``."""
    if not math.isfinite(plain) or plain <= 0:
        return plain

    def gap(x: float) -> float:
        return bound(stretch(x)) - x

    if gap(plain) >= 0:
        return plain
    return brent_root(gap, 0.0, plain, STRETCH_TOLERANCE * plain)


def run_leaf_bytes(top: TopVdev, psize: int, asize: int, limit: int) -> int:
    """Mean bytes of a leaf write the DES issues for records of ``psize`` written back to back
    (``top.allocate()`` hands out consecutive ``asize`` extents): :class:`WriteRun`'s own
    aggregation replayed over a few runs, rounded to whole sectors. Remembered per vdev
    shape, in memory and in the disk cache (:mod:`zsim.table_cache`): a replay of small
    records costs ~0.1 s, and sweeps, their worker processes and mixed jobs ask again."""
    vdev = top.vdev
    key = (vdev.kind, vdev.width, vdev.parity, vdev.ndata, vdev.nspares, top.ashift,
           sorted(top.failed), psize, asize, limit)  # fmt: skip
    memo = repr(key)
    found = _RUN_LEAF_BYTES.get(memo)
    if found is None:
        found = _RUN_LEAF_BYTES[memo] = load_or_measure(
            "runs", key, lambda: _replay_runs(top, psize, asize, limit), _leaf_bytes, int
        )
    return found


def _leaf_bytes(kept: Any) -> int:
    """A kept :func:`run_leaf_bytes`: a positive whole number of bytes."""
    if isinstance(kept, bool) or not isinstance(kept, int) or kept <= 0:
        raise ValueError(f"not a leaf write size: {kept!r}")
    return kept


#: :func:`run_leaf_bytes` by vdev shape, record and aggregation limit
_RUN_LEAF_BYTES: dict[str, int] = {}
# what a replay runs: the column map, the vdev's leaf I/Os and WriteRun's aggregation
register_kind(
    "runs",
    (
        "layout/raidz",
        "layout/draid",
        "layout/alloc",
        "layout/tree",
        "des/vdev",
        "des/txg_runs",
        "analytic/writes",
    ),
)


def _replay_runs(top: TopVdev, psize: int, asize: int, limit: int) -> int:
    sector = 1 << top.ashift
    offset, runs, total, count = 0, 0, 0, 0
    run = WriteRun(TxgState())
    for _ in range(4096):
        columns = top.leaf_ios(offset, psize, True)
        if not run.accepts(columns, limit):
            total += sum(end - start for start, end in run.extents.values())
            count += len(run.extents)
            runs += 1
            if runs == 8:
                break
            run = WriteRun(TxgState())
        run.add(columns, lambda: None)
        offset += asize
    if count == 0:  # no run closed: the one still open
        total = sum(end - start for start, end in run.extents.values())
        count = max(1, len(run.extents))
    return max(sector, round(total / count / sector) * sector)
