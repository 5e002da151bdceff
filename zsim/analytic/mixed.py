"""Mixed random reads and writes in the analytic engine (fio ``rw=randrw`` with ``rwmixread``).

What the DES does with such a job (:mod:`zsim.des.engine`, :mod:`zsim.des.zfs_model`), and
how this module models each part:

* **One call at a time per job.** A buffered fio job makes its calls in the caller's thread,
  one after the other; each is a read with probability f_r = ``rwmixread``/100, else a write
  (``Engine.next_is_read``). Both directions' rates are therefore tied: reads/s = f_r · X,
  writes/s = (1 − f_r) · X, with X the calls/s of the closed loop of ``numjobs`` customers.
* **Reads** hit the ARC (probability min(1, C/N), :mod:`zsim.zfs.arc`) or a record still
  dirty in the open or syncing txg (``ZfsModel.read_record``), else go to the disks at
  ``SYNC_READ`` priority: the same closed queueing network as random reads
  (:mod:`zsim.analytic.reads`: fork-join raidz stations, balanced mirrors), visited by the
  read share of the calls only.
* **Writes** of whole records only dirty the record (``ZfsModel.dirty_record``): their call
  costs CPU (copy, ARC pages) and, when dirty data passes ``zfs_delay_min_dirty_percent``,
  the throttle's delay (``dmu_tx_delay()``, :func:`zsim.zfs.txg.throttle_delay`).
* **Writes of part of a record** (``bs`` < ``recordsize``, each call inside one record) need
  the rest of it: ``dmu_write_uio_dnode()`` → ``dmu_buf_will_dirty()`` → ``dbuf_read()``
  reads the record first unless it is in memory (the DES's ``Engine._write``, a
  ``SYNC_READ``), then dirty the whole record. So every call, read or write, visits the
  read network with the miss probability (``reading`` = 1 instead of f_r), a write's hit on
  a compressed record outside the dbuf cache is expanded in its call like a read's, and
  each write still dirties one whole record for the txg. This is fio's ``randrw`` with a
  small ``bs`` on laid-out files, or ``randwrite`` with ``overwrite=1``; a random write-only
  job on sparse files (fio's default) reads nothing for a hole and stays with the DES.
* **The txg's bursts share the leaves with the reads.** Each txg writes the dirty records
  in aggregated runs (:func:`zsim.analytic.writes.run_leaf_bytes`) plus its indirect blocks
  and an uberblock per leaf; those async writes take a share u_w of every leaf's time that
  the sync reads do not get: the read stations serve at (1 − u_w) of their rate
  (:func:`leaf_write_share`). A leaf write costs its streaming time at the async-write
  depth (the device table of sequential writes of that size), plus one positioning back to
  the write area when a read took the head away since the last write, which happens with
  the probability that the leaf is busy with reads (u_r) — on a pool whose reads all hit
  the ARC the writes stream, as in a write-only job. A flash leaf instead keeps serving
  reads on the units the writes do not hold, each slowed by the shared IOPS and bandwidth
  (:func:`zsim.analytic.flash_share.shared_read_table`). On dRAID a txg fills a few groups in
  a row: a child's share is the busiest child's
  (:func:`zsim.analytic.draid_load.draid_write_hot_share`).
* **The txg's CPU burst.** A sync hands every dirty record's checksum, compression and
  parity to the taskq threads at once; they run at raised priority, so for that time the
  clients have the other cores and a read's completion (taskq work too, FIFO) waits for
  the burst to end: a share b of the time (:func:`cpu_burst_share`) in which the loop
  hardly moves. X_net = (1 − b) · X(normal) + b · X(burst), the quasi-static average of
  the two networks (on NVMe pools with large records this is a third of the rate).
* **The fixed point.** u_w and b grow with X and the network slows as they do: X* solves
  X = X_net(X) (regula falsi on a decreasing function, ~8 network solutions; the txg's
  size, which sets each record's share of the indirect blocks, is re-solved once). When
  the calls could dirty data faster than the leaves can write it (the reads all hit the
  ARC), the throttle holds the writers to the write-only job's leaf bound
  (:class:`~zsim.analytic.writes.WriteModel`), limit ``txg`` unless a resource is ≥ 85 %
  busy; the write path's other bounds (taskq CPU, memory bus, HBA/links) cap X too.
* **Latency** as fio measures it, from submission: a job's ``iodepth`` calls wait in turn,
  so a call's latency is its own service plus the services of the (iodepth − 1) calls
  ahead of it: (iodepth − 1) · J/X + its own mean time (Little's law per job; a write's
  own time is its CPU, a read's the rest of the loop's time per call). **Percentiles are
  not given** (``None``): the tail is the txg's stalls meeting the reads — a disk's write
  cache destaging a whole txg's merged extent in one pass, flash sharing its bandwidth
  with the writes, the read completions queued behind the CPU burst — and a sampled
  model of these was 30-60 % off the DES's p99 on a third of the compared draws.

Sources: ``module/zfs/vdev_queue.c`` (sync reads 10/10 active, async writes 2…10 by dirty
data), ``dsl_pool.c``/``txg.c`` (sync at ``zfs_dirty_data_sync_percent``, every
``zfs_txg_timeout`` s), ``dmu_tx.c`` (the throttle); Lazowska et al., *Quantitative System
Performance* (1984) for the closed network.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from zsim.analytic import devices
from zsim.analytic.demands import ASYNC_WRITE_MAX, SYNC_READ_MAX, AnalyticVdev
from zsim.analytic.draid_load import draid_write_hot_share
from zsim.analytic.flash_share import held_units, shared_read_table
from zsim.analytic.mixed_parts import (
    LeafWrites,
    cpu_burst_share,
    fixed_point,
    leaf_write_share,
    outside_burst,
    txgs_per_second,
)
from zsim.analytic.queueing import Solution, Station, solve
from zsim.analytic.reads import ReadModel
from zsim.analytic.validity import OutOfRange
from zsim.analytic.writes import WriteModel, run_leaf_bytes
from zsim.des.vdev import aggregation_limit
from zsim.hardware import flash
from zsim.machine import memory
from zsim.result import DirectionStats
from zsim.zfs.txg import async_write_max_active, open_txg_bytes, txg_tunables

#: mean memory-bus utilisation from which a mixed job is declined: the DES's bus
#: (:class:`zsim.machine.resources.MemoryBus`) slows every core's job while the agents ask
#: more than its rate, and at this mean the txg's CPU bursts and the clients' copies do
#: (an NVMe pool of 1M records at 85 % was 26 % off the DES); a mean-value model has no
#: such peaks
MEMORY_BUSY_LIMIT = 0.8
#: a disk's write share u_w from which a mixed job is declined. A drive with its write
#: cache on takes the txg's writes at interface speed and destages them as merged extents,
#: in its idle time or when the cache is full (:mod:`zsim.hardware.hdd.access`), not as
#: one positioning per aggregated write between the reads as modelled here; with writes a
#: small share of the disk the two agree, at half of it they do not (HDD stripes of 512K-1M
#: records at 50 % reads, u_w 0.49-0.53: −13 … −17 % against the DES; the largest share
#: among the draws that agree is 0.32)
DISK_WRITE_SHARE_LIMIT = 0.4
#: mean core utilisation from which a mixed job is declined: bound by the cores, the
#: clients' calls and the txg's bursts at raised priority interleave in ways a mean-value
#: model does not follow (a 16-job NVMe 3x mirror 3 of 256K records at 90 % reads, cores
#: ≥ 85 % busy: +24 % against the DES); the DES's own "cpu" limit starts at 85 %
CPU_BUSY_LIMIT = 0.85


class MixedModel(ReadModel, WriteModel):
    """A ``randrw`` job solved: both directions' rates and latencies (:meth:`solve`)."""

    def solve(self) -> tuple[DirectionStats, DirectionStats, str, dict[str, float], dict]:
        w = self.sc.workload
        self.f_read = w.rwmixread / 100 if w.rw == "randrw" else 0.0
        f_r, f_w = self.f_read, 1.0 - self.f_read
        # a write of part of a record needs the rest of it: read-modify-write
        self.rmw = self.bs < self.rs
        self.reading = 1.0 if self.rmw else f_r  # calls that need their record in memory
        c = self.costs
        txg = txg_tunables(self.sc.hardware.ram, self.version)
        self.txg = txg
        self.leaf_flash = None if self.rotating else flash.flash_params(self.disk)
        self._flash_burst: dict[int, tuple[float, int]] = {}
        # the calls' CPU (Engine.call): the copy, the ARC pages a write fills, atime
        self.read_call = c.syscall + self.bs * c.copy_per_byte + c.atime_update
        # a hit outside the dbuf cache on a record stored compressed: decompressed in the call
        self.read_call += self.hit_expand * c.arc_hit_expand(self.rs, self.psize)
        self.write_call = c.syscall + self.bs * (c.copy_per_byte + c.cache_pages_per_byte)
        if self.rmw:  # the record read for the rest of it is expanded like a read's
            self.write_call += self.hit_expand * c.arc_hit_expand(self.rs, self.psize)
        self._call_cpu = f_r * self.read_call + f_w * self.write_call
        self.record_cpu = c.read_record(self.rs, self.psize) + self._read_children() * c.leaf_io
        self.record_cpu += self.rs * c.cache_pages_per_byte
        # a degraded raidz read rebuilds its missing data from parity in its completion
        # (vdev_raidz_reconstruct(); the DES's _charge_reconstruction)
        self.record_cpu += self._rebuilt_per_record() * c.parity_per_byte
        self._last: Solution | None = None
        self._groups: list[tuple[AnalyticVdev, Station]] = []
        # the write-only bounds: the leaves streaming with no reads (the most the throttle
        # lets the writers dirty), the taskq CPU, the memory bus, the HBA and links. With
        # txgs of 60 % of zfs_dirty_data_max they are the write job's lowest; the throttle's
        # txg size (WriteModel._write) only raises them, so it is solved for only when the
        # mixed job reaches them
        _, bounds = self._write(throttled_txgs=False)
        hi, other = self._write_cap(bounds, f_w)
        x = self._solve_mixed(hi)
        if f_w > 0 and x >= hi * (1 - 1e-6):
            _, bounds = self._write()
            hi, other = self._write_cap(bounds, f_w)
            x = self._solve_mixed(hi)
        net = self._throughput(x)
        solution = self._solution()
        throttled = f_w > 0 and x >= hi * (1 - 1e-6) and net > x * (1 + 1e-3)
        util, u_w = self._util(x, solution)
        if util["memory"] >= MEMORY_BUSY_LIMIT:
            raise OutOfRange(
                f"outside the analytic engine's validity range: a mixed job keeping the memory "
                f"bus {util['memory']:.0%} busy (≥ {MEMORY_BUSY_LIMIT:.0%}): the txg's bursts "
                f"push it past its rate and stall the cores, which the DES models and this "
                f"engine does not; use --engine des"
            )
        if util.get("cpu", 0.0) >= CPU_BUSY_LIMIT:
            raise OutOfRange(
                f"outside the analytic engine's validity range: a mixed job keeping the cores "
                f"{util['cpu']:.0%} busy (≥ {CPU_BUSY_LIMIT:.0%}): the txg's checksum and "
                f"parity bursts take the cores at raised priority against the calls, whose "
                f"timing a mean-value model does not follow; use --engine des"
            )
        busiest = max(u_w.values(), default=0.0)
        # (held by the throttle, the disks only write: the write-only model's case)
        if self.rotating and not throttled and busiest >= DISK_WRITE_SHARE_LIMIT:
            raise OutOfRange(
                f"outside the analytic engine's validity range: the txg's writes would take "
                f"{busiest:.0%} of a disk's time (≥ {DISK_WRITE_SHARE_LIMIT:.0%}): how the "
                f"drive's write cache merges and destages them between the reads sets the "
                f"rate, which the DES models and this engine does not; use --engine des"
            )
        if throttled:
            for key, bound in other.items():
                if bound / f_w <= hi * (1 + 1e-6):
                    util[key] = max(util.get(key, 0.0), min(1.0, x * f_w / bound))
        limit = self._mixed_limit(util, x, throttled)
        read, write = self._directions(x, throttled)
        details = {
            "arc_hit_ratio": 1.0 - self.miss,
            "clients": self.clients,
            "validity": "in range",
            "read_fraction": f_r,
            "read_modify_write": self.rmw,
            "write_throttled": throttled,
            "leaf_write_share": max(u_w.values(), default=0.0),
            # flash: the share of time the txg's writes hold their units beside the reads
            "leaf_write_burst_share": None if self.rotating else max(self._write_shares.values()),
            "txgs_per_s": txgs_per_second(x * f_w * self.rs, txg.sync_bytes, txg.txg_timeout),
        }
        return read, write, limit, util, details

    def _write_cap(self, bounds: dict[str, float], f_w: float) -> tuple[float, dict[str, float]]:
        """(calls/s the write-only ``bounds`` hold the job to, its bounds other than the
        vdevs', the clients' and the cores')."""
        leaf_cap = min((b for k, b in bounds.items() if k.startswith("vdev")), default=math.inf)
        other = {
            k: b
            for k, b in bounds.items()
            if not k.startswith("vdev") and k not in ("client", "cpu") and math.isfinite(b)
        }
        return (min([leaf_cap, *other.values()]) / f_w if f_w > 0 else math.inf), other

    def _solve_mixed(self, hi: float) -> float:
        """Calls/s of the network under the cap ``hi``. The txg's size sets each record's
        share of the indirect blocks: solved once with txgs of zfs_dirty_data_sync bytes,
        then with the size the rate gives."""
        x = 0.0
        per_txg = self.txg.sync_bytes / self.rs
        for _ in range(2):
            self._prepare(per_txg)
            top = hi if math.isfinite(hi) else 2.0 * self._network(0.0, {}).throughput + 1.0
            x = fixed_point(self._throughput, top)
            fitted = self._txg_bytes(x) / self.rs
            if abs(fitted - per_txg) <= 0.05 * per_txg:
                break  # the indirect blocks' share hardly moves
            per_txg = fitted
        return x

    # ---- demands
    def _prepare(self, per_txg: float) -> None:
        """The per-call demands that depend on the txg's size (``per_txg`` records)."""
        c = self.costs
        parity = any(v.top.vdev.kind == "raidz" for v in self.vdevs)
        children = max(len(v.top.leaf_ios(0, self.psize, True)) for v in self.vdevs)
        meta = self._metadata_per_record(per_txg)
        self.sync_cpu = c.write_record(self.rs, self.psize, parity) + children * c.leaf_io
        self.sync_cpu += meta["cpu"]
        self.miss = self._miss(0.0)
        self.loads = [self._leaf_writes(v, a, per_txg) for v, a in zip(self.vdevs, meta["asize"],
                                                              strict=True)]  # fmt: skip

    def _txg_bytes(self, x: float) -> float:
        """Bytes a txg holds at ``x`` calls/s: it syncs at ``zfs_dirty_data_sync`` bytes or
        after ``zfs_txg_timeout`` s, whichever comes first."""
        return max(float(self.rs), open_txg_bytes(x * (1.0 - self.f_read) * self.rs, self.txg))

    def _miss(self, x: float) -> float:
        """P(a read goes to the disks): not in the ARC (min(1, C/N) hits) and not a record
        of the open or syncing txg (``ZfsModel.read_record``), which hold about one txg of
        records between them at ``x`` calls/s."""
        if x <= 0 or self.f_read >= 1.0:
            return 1.0 - self.hit
        dirty = min(1.0, self._txg_bytes(x) / self.rs / self.total_records)
        return (1.0 - self.hit) * (1.0 - dirty)

    def _leaf_writes(self, v: AnalyticVdev, meta_asize: float, per_txg: float) -> LeafWrites:
        """One vdev's leaves' write load per call (:class:`LeafWrites`); ``meta_asize``:
        a record's share of the txg's indirect blocks on this vdev, bytes."""
        f_w = 1.0 - self.f_read
        ios = v.top.leaf_ios(0, self.psize, True)
        width = len(v.top.vdev.devices) - len(v.top.failed)  # a missing leaf gets nothing
        nbytes = self._run_bytes(v)
        # on all the vdev's leaves (each mirror child writes the indirect blocks whole)
        record_bytes = sum(io[2] for io in ios) + meta_asize * v.leaf_fan(self.psize)
        per_record_leaf = even = record_bytes / width
        if v.top.vdev.kind == "draid":
            # a txg's new blocks fill a few groups in a row, each on its own D + P children:
            # the busiest child takes a larger share than an even spread (draid_load), and
            # the reads whose columns wait at it wait for the slowest
            txg_space = per_txg * v.weight * v.asize
            per_record_leaf = record_bytes * draid_write_hot_share(v.top, txg_space)
        leaf_bytes = f_w * v.weight * per_record_leaf  # per call
        stream = devices.device_table(self.disk, nbytes, True, True, v.lo, v.hi, ASYNC_WRITE_MAX)
        positioning = devices.device_table(
            self.disk, 1 << v.top.ashift, False, False, v.lo, v.hi, 1
        )
        # at the async-write depth a disk's head writes one at a time and flash runs them
        # in parallel: either way the time share of a write is one over the table's rate
        per_io = 1.0 / stream.at(ASYNC_WRITE_MAX)
        # a disk's head must come back to the write area after reads took it away
        position = positioning.mean_service if self.rotating else 0.0
        # each txg: the uberblock (a positioning to the labels), and on disks the
        # positioning back, of which the pool waits for its slowest leaf's
        leaves = sum(len(u.top.vdev.devices) - len(u.top.failed) for u in self.vdevs)
        tail = positioning.mean_service
        if self.rotating:
            tail += positioning.expected_max(leaves)
        held, burst = 0, 0.0
        if not self.rotating:
            # writes per txg on the leaf: a record's share of them times the txg's records
            per_txg_ios = v.weight * per_record_leaf / nbytes * per_txg
            active = async_write_max_active(int(per_txg * self.rs), self.txg)
            assert self.leaf_flash is not None
            held = held_units(self.leaf_flash, active, per_txg_ios)
            if held < self.leaf_flash.parallelism:
                burst = 1.0 / stream.at(held)
            else:
                held = 0  # no unit left for the reads: shared in time, as a disk's head
        return LeafWrites(
            leaf_bytes / nbytes, per_io, position, tail, f_w * v.weight * even / nbytes,
            held, burst,
        )  # fmt: skip

    # ---- the network and its fixed point
    def _network(
        self, x: float, shares: dict[int, float], burst: bool = False, populations: bool = True
    ) -> Solution:
        """The closed network of the ``clients`` with each vdev's read stations at (1 − its
        leaves' write share at ``x`` calls/s) of their rate — on a flash leaf whose writes
        leave units free, on the read table those units give (:meth:`_read_table`, the share
        being the time the writes hold theirs); identical vdevs' stations are merged
        (``copies``), as in :meth:`ReadModel._read`. ``burst``: during the txg's CPU
        burst (:func:`cpu_burst_share`), when the taskq threads hold their cores and the
        read completions wait behind the burst in their FIFO."""
        miss = self._miss(x)
        self.miss = miss
        cores = max(1e-9, self.cores - self.taskq) if burst else float(self.cores)
        call = self._call_cpu
        stations = [Station("cpu", lambda k: min(k, cores) / call)]
        bg = self.reading * miss * self.record_cpu
        if bg > 0:
            taskq = 0.0 if burst else float(self.taskq)
            stations.append(Station("taskq", lambda k: min(k, taskq) / bg))
        groups: dict[tuple, tuple[list[AnalyticVdev], Station]] = {}
        for i, v in enumerate(self.vdevs):
            visits = self.reading * miss * v.weight
            if visits <= 0:
                continue
            share = min(1.0, shares.get(i, 0.0))
            if self.rotating or not self.loads[i].held:
                scale = max(1e-9, 1.0 - share)
            else:
                # a flash leaf keeps serving reads on its free units (flash_share)
                scale = 1.0
                self._flash_burst[id(v)] = (round(share, 9), self.loads[i].held)
            for sig, st in self._read_stations(i, v, visits):
                key = (*sig, round(scale, 9), self._flash_burst.get(id(v)))
                had = groups.get(key)
                if had is None:
                    groups[key] = ([v], Station(st.name, _scaled(st.rate, scale), st.visits))
                else:
                    members, old = had
                    members.append(v)
                    groups[key] = (
                        members,
                        Station(old.name, old.rate, old.visits + st.visits, old.copies + 1),
                    )
        self._groups = []
        for n, (members, st) in enumerate(groups.values()):
            named = Station(f"{st.name}{n}", st.rate, st.visits, st.copies)
            stations.append(named)
            seen: list[AnalyticVdev] = []
            for v in members:
                if not any(v is u for u in seen):
                    seen.append(v)
            self._groups.extend((v, named) for v in seen)
        return solve(stations, self.clients, populations)

    def _solution(self) -> Solution:
        """The network solved last (by :meth:`_throughput`)."""
        assert self._last is not None, "solved after _throughput()"
        return self._last

    def _throughput(self, x: float) -> float:
        """X_net at ``x`` calls/s: the quasi-static average of the network outside the txg's
        CPU burst (the leaves less the writes' share that falls outside it) and during it."""
        read_busy = self._read_busy(x, getattr(self, "_last", None))
        f_w = 1.0 - self.f_read
        txgs = txgs_per_second(x * f_w * self.rs, self.txg.sync_bytes, self.txg.txg_timeout)
        burst = cpu_burst_share(x * f_w, self.sync_cpu, self.taskq)
        shares = {}
        for i, load in enumerate(self.loads):
            if self.rotating or not load.held:
                share = leaf_write_share(x, load, txgs, read_busy.get(i, 0.0))
            else:  # the share of time a flash leaf's held units write
                share = x * load.ios * load.burst + txgs * load.tail
            shares[i] = outside_burst(share, burst)
        self._write_shares = shares
        solution = self._network(x, shares)
        self._last = solution
        if burst <= 0:
            return solution.throughput
        during = self._network(x, shares, burst=True, populations=False).throughput
        return (1.0 - burst) * solution.throughput + burst * during

    def _read_busy(self, x: float, solution: Solution | None) -> dict[int, float]:
        """Each vdev's busiest leaf's read utilisation at ``x`` calls/s (an HDD is busy while
        it holds a read: reads/s over its rate at the leaf's occupancy)."""
        out: dict[int, float] = {}
        for i, v in enumerate(self.vdevs):
            shares = self._read_shares(v)
            _, nbytes = self._leaf_reads(v)
            table = devices.device_table(self.disk, nbytes, False, False, v.lo, v.hi,
                                         SYNC_READ_MAX)  # fmt: skip
            k = self._occupancy(v, solution) if solution is not None else 1.0
            hot = float(shares.max())
            ios = x * self.reading * self.miss * v.weight * hot
            rate = table.at(max(1.0, k)) if self.rotating else table.rate[-1]
            out[i] = min(1.0, ios / rate) if rate > 0 else 0.0
        return out

    def _occupancy(self, v: AnalyticVdev, solution: Solution | None) -> float:
        """Mean reads at the vdev's busiest leaf, from the network's populations."""
        if solution is None:
            return 1.0
        pop = 0.0
        for u, st in self._groups:
            if u is v:
                pop = max(pop, solution.population.get(st.name, 0.0) / st.copies)
        kind = v.top.vdev.kind
        if kind == "mirror":
            pop /= len(v.top.vdev.devices)
        elif kind in ("raidz", "draid"):
            touched, _ = self._leaf_reads(v)
            if touched > 1:
                pop *= float(self._read_shares(v).max())
        return pop

    # ---- the answer
    def _util(self, x: float, solution: Solution) -> tuple[dict[str, float], dict[int, float]]:
        f_w = 1.0 - self.f_read
        read_busy = self._read_busy(x, solution)
        txgs = txgs_per_second(x * f_w * self.rs, self.txg.sync_bytes, self.txg.txg_timeout)
        u_w = {
            i: leaf_write_share(x, load, txgs, read_busy[i]) for i, load in enumerate(self.loads)
        }
        util: dict[str, float] = {}
        for i, (v, load) in enumerate(zip(self.vdevs, self.loads, strict=True)):
            shares = self._read_shares(v)
            hot = float(shares.max()) or 1.0
            # a leaf's mean busy time: the writes spread evenly (dRAID's busiest child moves)
            writing = u_w[i]
            if load.mean_ios < load.ios:
                even = replace(load, ios=load.mean_ios)
                writing = leaf_write_share(x, even, txgs, read_busy[i])
            for leaf, (name, p) in enumerate(zip(v.top.vdev.devices, shares, strict=True)):
                busy = 0.0 if leaf in v.top.failed else read_busy[i] * p / hot + writing
                util[f"disk:{name}"] = float(min(1.0, busy))
        bg = x * (self.reading * self.miss * self.record_cpu + f_w * self.sync_cpu)
        util["cpu"] = min(1.0, (x * self._call_cpu + bg) / self.cores)
        util["memory"] = min(1.0, x * self._memory_per_call() / self.mem_bw)
        leaf_load: dict[str, tuple[float, float]] = {}
        for v, load in zip(self.vdevs, self.loads, strict=True):
            _, nbytes = self._leaf_reads(v)
            for leaf, (name, p) in enumerate(zip(v.top.vdev.devices, self._read_shares(v),
                                                 strict=True)):  # fmt: skip
                if leaf in v.top.failed:
                    continue
                reads = x * self.reading * self.miss * v.weight * p
                writes = x * load.ios
                wbytes = writes * self._run_bytes(v)
                leaf_load[name] = (reads * nbytes + wbytes, reads + writes)
        bus, bus_name = self._bus_bound(leaf_load)
        if bus_name and math.isfinite(bus):
            util[bus_name] = min(1.0, 1.0 / bus)  # leaf_load is per second: bus is 1/busy
        return util, u_w

    def _memory_per_call(self) -> float:
        """Bytes a call moves over the memory bus (:mod:`zsim.machine.memory`): its copy;
        a missed read's DMA and verification; a written record's compression, checksum and
        parity passes and the DMA of its leaf writes."""
        pool = self.sc.pool
        f_w = 1.0 - self.f_read
        written = [sum(io[2] for io in v.top.leaf_ios(0, self.psize, True)) for v in self.vdevs]
        parity = max(
            (b - self.psize) / self.psize
            for v, b in zip(self.vdevs, written, strict=True)
            if v.top.vdev.kind == "raidz"
        ) if any(v.top.vdev.kind == "raidz" for v in self.vdevs) else 0.0  # fmt: skip
        read = memory.read_record_bytes(
            self.rs,
            self.psize,
            checksumming=pool.checksum != "off",
            compressed=self.psize < self.rs,
        )
        write = memory.write_record_bytes(
            self.rs,
            self.psize,
            compressing=pool.compression != "off",
            checksumming=pool.checksum != "off",
            parity_ratio=parity,
        )
        device = sum(v.weight * b for v, b in zip(self.vdevs, written, strict=True))
        return (
            memory.copy_bytes(self.bs)
            + self.reading * self.miss * (read + self.psize)
            + f_w * (write + device)
        )

    def _read_stations(self, i: int, v: AnalyticVdev, visits: float) -> list[tuple[tuple, Station]]:
        """:meth:`ReadModel._vdev_read_stations` of vdev ``i``, built once per visit count
        (the fixed point solves the network a dozen times with the same stations) and, on a
        flash leaf beside the txg's writes, per write share (a new table each step)."""
        cache = self.__dict__.setdefault("_station_cache", {})
        key = (i, visits, self._flash_burst.get(id(v)))
        found = cache.get(key)
        if found is None:
            found = cache[key] = [
                (sig, Station(st.name, _memo(st.rate), st.visits, st.copies))
                for sig, st in self._vdev_read_stations(v, visits)
            ]
        return found

    def _read_table(self, v: AnalyticVdev, nbytes: int) -> devices.DeviceTable:
        """A flash leaf's record reads beside the txg's writes (:func:`shared_read_table`
        at the share and units :meth:`_network` set); a disk's as a read-only job's."""
        table = super()._read_table(v, nbytes)
        found = self._flash_burst.get(id(v))
        if found is None or self.leaf_flash is None:
            return table
        share, held = found
        return shared_read_table(table, self.leaf_flash, held, share)

    def _run_bytes(self, v: AnalyticVdev) -> int:
        """Bytes of one aggregated leaf write (as :meth:`WriteModel._write` sizes them)."""
        agg = aggregation_limit(self.rotating, self.version)
        if v.top.vdev.kind == "raidz":
            return run_leaf_bytes(v.top, self.psize, v.asize, agg)
        per_leaf = max(io[2] for io in v.top.leaf_ios(0, self.psize, True))
        return max(per_leaf, (agg // per_leaf) * per_leaf) if per_leaf <= agg else per_leaf

    def _mixed_limit(self, util: dict[str, float], x: float, throttled: bool) -> str:
        """The DES's rule (``Engine._limit``): a resource ≥ 85 % busy; else ``txg`` when the
        throttle holds the writers; else the clients' own CPU, else ``client``."""
        if util.get("memory", 0.0) >= 0.85:
            return "memory"
        name, busiest = max(util.items(), key=lambda kv: kv[1])
        if busiest >= 0.85:
            return name
        if throttled:
            return "txg"
        threads = min(self.clients, self.cores)
        if x * self._call_cpu / threads >= 0.85:
            return "cpu"
        return "client"

    def _directions(self, x: float, throttled: bool) -> tuple[DirectionStats, DirectionStats]:
        """Both directions' rates and latencies (fio's: from submission)."""
        f_r, f_w = self.f_read, 1.0 - self.f_read
        if x <= 0:
            return DirectionStats(), DirectionStats()
        queued = self.slots
        call_mean = self.clients / x  # a job's mean time per call (Little)
        # a write's own time: its CPU (with the CPU station's queueing), or under the
        # throttle what the loop leaves it; a read's: the rest of the loop's time per call
        solution = self._solution()
        cpu_time = solution.population.get("cpu", 0.0) / x
        write_own = cpu_time * self.write_call / self._call_cpu if self._call_cpu else 0.0
        read_own = call_mean
        if self.rmw and f_r > 0:
            # either kind of call reads its record when it is not in memory: past the CPU,
            # the loop's time is that read, the same for both (the throttle's delay, when it
            # holds the writers, is the writes' alone)
            shared = self.miss * self._disk_time(x) if throttled else call_mean - cpu_time
            read_own = cpu_time * self.read_call / self._call_cpu + max(0.0, shared)
            write_own += max(0.0, shared)
            if throttled:
                write_own = max(write_own, (call_mean - f_r * read_own) / f_w)
        elif f_r > 0 and f_w > 0:
            if throttled:
                read_own = self._read_own(x, cpu_time)
                write_own = max(write_own, (call_mean - f_r * read_own) / f_w)
            read_own = max(0.0, (call_mean - f_w * write_own) / f_r)
        elif f_w > 0:
            write_own = call_mean
        ahead = (queued - 1) * call_mean
        read = DirectionStats()
        write = DirectionStats()
        # percentiles: not modelled (None), see the module docstring
        if f_r > 0:
            read = DirectionStats(
                bytes_per_s=x * f_r * self.bs,
                iops=x * f_r,
                latency_mean=ahead + read_own,
                latency_p50=None,
                latency_p99=None,
            )
        if f_w > 0:
            write = DirectionStats(
                bytes_per_s=x * f_w * self.bs,
                iops=x * f_w,
                latency_mean=ahead + write_own,
                latency_p50=None,
                latency_p99=None,
            )
        return read, write

    def _read_own(self, x: float, cpu_time: float) -> float:
        """A read's own mean time in the network: its CPU and, for a miss, the taskq's and
        the vdevs' (Little's law on the network's stations), s."""
        cpu = cpu_time * self.read_call / self._call_cpu if self._call_cpu else 0.0
        return cpu + self.miss * self._disk_time(x)

    def _disk_time(self, x: float) -> float:
        """A missed read's mean time at the taskq and the vdevs, s."""
        visits = x * self.reading * self.miss
        solution = self._last
        if visits <= 0 or solution is None:
            return 0.0
        pop = sum(n for name, n in solution.population.items() if name != "cpu")
        return pop / visits


def _scaled(rate: Callable[[int], float], scale: float) -> Callable[[int], float]:
    def scaled(k: int) -> float:
        return scale * rate(k)

    return scaled


def _memo(rate: Callable[[int], float]) -> Callable[[int], float]:
    """``rate`` remembered per k (a fork-join station's rate costs a binomial sum)."""
    seen: dict[int, float] = {}

    def remembered(k: int) -> float:
        found = seen.get(k)
        if found is None:
            found = seen[k] = rate(k)
        return found

    return remembered
