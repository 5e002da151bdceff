"""The analytic engine: the discrete-event engine's scenario, layout maps, device models and
CPU costs, solved with queueing formulas instead of events (milliseconds, not seconds).

What it computes, per fio call (``DESIGN.md`` §1, issue 5):

* **Service demands** from the same maps the DES uses: a record's leaf I/Os come from
  :class:`zsim.des.vdev.TopVdev.leaf_ios` (the raidz/dRAID column map of capacity), record
  sizes from :func:`zsim.zfs.compression.compressed_psize` and
  :func:`zsim.layout.alloc.psize_to_asize`, CPU seconds from :mod:`zsim.machine.costs` and
  memory traffic from :mod:`zsim.machine.memory`, the ARC's hit probability from
  :mod:`zsim.zfs.arc` exactly as the DES draws it.
* **Device rates** from :mod:`zsim.analytic.devices`: the DES's own device model run in a
  closed loop at each queue depth.
* **Reads**: an exact closed queueing network (:mod:`zsim.analytic.queueing`) of the CPU and
  the vdevs, with ``numjobs`` (× ``iodepth`` under honoured O_DIRECT) customers. A raidz
  read touches the leaves the column map gives its record (records a whole row wide all
  land on the same leaves); each leaf holds a binomial number of the vdev's records'
  columns, and a record waits for its slowest column (fork-join: the expected maximum of
  the leaves' response times). Mirrors spread reads over their children. Latency
  percentiles sample each column's response at the depth it finds (a Poisson number of
  other calls' columns at its leaf, spread evenly over a mirror's children).
* **Writes**: the txg pipeline's bottleneck bound: what the clients can dirty (their calls'
  CPU, read-modify-write reads), what the vdevs can write per second (sequential aggregated
  leaf writes at ``zfs_vdev_async_write_max_active``, plus the indirect blocks each txg
  rewrites), what the cores can checksum, compress and parity per second, and what the
  memory bus, the HBA and the links can carry; each less the txg's own tail (the uberblock,
  and every leaf's positioning back to the data, the slowest of which the pool waits for).

Validity range: where a class of scenarios has no form here, :func:`simulate_analytic` raises
:class:`zsim.errors.ZsimError` saying so ("outside the analytic engine's validity range") —
it never answers a case it cannot model. See :func:`validity` and ``docs/analytic.md``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import simpy

from zsim.analytic import devices
from zsim.analytic.queueing import Station, solve
from zsim.des.vdev import CLASS_LIMITS, SYNC_READ, TopVdev
from zsim.errors import ZsimError
from zsim.hardware.catalog import Profile
from zsim.layout.alloc import psize_to_asize
from zsim.layout.tree import ZfsLayout
from zsim.machine import memory
from zsim.machine.costs import cpu_costs, zio_taskq_threads
from zsim.machine.links import bus_stages
from zsim.result import DirectionStats, SimResult
from zsim.scenario import Pool, Scenario
from zsim.zfs.arc import arc_data_bytes
from zsim.zfs.compression import compressed_psize
from zsim.zfs.indirect import BPS_PER_INDIRECT, INDIRECT_BYTES, indirect_block, indirect_levels
from zsim.zfs.txg import txg_tunables
from zsim.zfs.version import parse_zfs_version

KiB, MiB = 1024, 1024 * 1024

#: vdev_queue's sync-read ceiling per leaf (zfs_vdev_sync_read_max_active)
SYNC_READ_MAX = CLASS_LIMITS[SYNC_READ][1]
#: zfs_vdev_async_write_max_active: leaves run at it once the write path is the bottleneck
ASYNC_WRITE_MAX = CLASS_LIMITS[3][1]


#: most consecutive records whose column map gives a raidz vdev's per-leaf read shares
RECORDS_SAMPLED = 4096
#: least bytes of consecutive records sampled: raidz1 swaps its first two columns at odd
#: MiB offsets, so 8 MiB holds 8 alternations
SHARES_SPAN = 8 * 1024 * 1024

#: random writes over files this many times zfs_dirty_data_max rarely hit a record still
#: dirty in the open txg (at most ~1/this of calls do), so each call writes its records
COALESCE_FREE_MULTIPLE = 20


class OutOfRange(ZsimError):
    """The scenario is outside the analytic engine's validity range."""


def validity(sc: Scenario) -> str | None:
    """Why the analytic engine cannot answer ``sc``, or ``None`` when it can."""
    layout = sc.layout_tree()
    pool, w = sc.pool, sc.workload
    if not isinstance(layout, ZfsLayout):
        return f"{pool.layout!r} is not a ZFS pool (md RAID, btrfs, zpool-on and raw are DES-only)"
    if any(layout.of_class(c) for c in ("log", "special", "dedup", "cache")):
        return "support vdevs (log, special, dedup, cache) are modelled by the DES only"
    if pool.failed:
        return "degraded pools (pool.failed) are modelled by the DES only"
    if w.tool != "fio":
        return f"workload tool {w.tool!r}: the analytic engine models fio jobs"
    if w.rw in ("randrw", "rw", "readwrite"):
        return (
            f"fio rw={w.rw!r}: mixed jobs — reads queued behind the txg's bursts of writes on "
            f"the same disks, and the write throttle's delays to the same callers — are "
            f"modelled by the DES only"
        )
    if w.rw not in ("randread", "write", "randwrite"):
        return (
            f"fio rw={w.rw!r}: sequential reads (zfetch's prefetch against the vdev queue's "
            f"LBA-ordered aggregation of several streams) are modelled by the DES only"
        )
    if any(v.kind == "draid" for v in layout.data_vdevs):
        return (
            "dRAID (its redundancy groups rotating over the children) is modelled by the DES only"
        )
    if _direct(sc) and w.rw != "randread":
        return "O_DIRECT writes (issued from the caller, verified) are modelled by the DES only"
    if _direct(sc) and w.bs > pool.recordsize:
        return "O_DIRECT reads of several records per call are modelled by the DES only"
    if w.sync or w.fsync or pool.sync == "always":
        return "sync writes (O_SYNC, fsync, sync=always) and the ZIL are modelled by the DES only"
    if pool.dedup == "on":
        return "dedup is modelled by the DES only"
    rs = pool.recordsize
    if w.bs % rs and rs % w.bs:
        return f"bs {w.bs} B neither divides nor is a multiple of recordsize {rs} B"
    if w.rw != "randread" and w.bs % rs:
        return (
            f"bs {w.bs} B below recordsize {rs} B: partial-record writes (read-modify-write, "
            f"sparse files filling up) are modelled by the DES only"
        )
    if w.rw == "randwrite":
        dirty_max = txg_tunables(sc.hardware.ram, parse_zfs_version(sc.hardware.zfs_version))
        files = w.numjobs * w.size
        if files < COALESCE_FREE_MULTIPLE * dirty_max.dirty_max:
            return (
                f"random writes over {files} B of files, under {COALESCE_FREE_MULTIPLE} × "
                f"zfs_dirty_data_max: rewrites of a record still dirty in the open txg "
                f"coalesce, which the DES models and this engine does not"
            )
    if w.rw == "randread" and w.bs > rs and not _direct(sc):
        return "buffered reads of several records per call are modelled by the DES only"
    return None


def binomial_pmf(n: int, p: float) -> np.ndarray:
    """P(X = 0 … n) for X ~ Binomial(n, p), computed in log space (n in the thousands)."""
    i = np.arange(n + 1)
    if p <= 0.0 or p >= 1.0:
        return (i == (n if p >= 1.0 else 0)).astype(float)
    log_choose = np.array(
        [math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) for j in i]
    )
    return np.exp(log_choose + i * math.log(p) + (n - i) * math.log1p(-p))


def _direct(sc: Scenario) -> bool:
    w, pool = sc.workload, sc.pool
    version = parse_zfs_version(sc.hardware.zfs_version)
    return (
        (w.tool == "fio" and w.direct and pool.direct != "disabled") or pool.direct == "always"
    ) and version.at_least(2, 3)


@dataclass
class _Vdev:
    """One data vdev as the analytic engine sees it."""

    top: TopVdev
    space: int
    asize: int
    weight: float
    lo: float = 0.0  # region of its leaves the working files occupy (fractions)
    hi: float = 1.0


def simulate_analytic(sc: Scenario, seed: int = 1) -> SimResult:
    """Predict the scenario's fio job with the analytic engine (see the module docstring)."""
    start = time.perf_counter()
    reason = validity(sc)
    if reason is not None:
        raise OutOfRange(
            f"outside the analytic engine's validity range: {reason}; use --engine des"
        )
    model = _Model(sc, seed)
    read, write, limit, util, details = model.solve()
    return SimResult(
        engine="analytic",
        read=read,
        write=write,
        limit=limit,
        utilization=util,
        seed=seed,
        scenario=sc.to_dict(),
        wall_seconds=time.perf_counter() - start,
        details=details,
    )


_SHARES: dict[tuple, np.ndarray] = {}


def _column_shares(top: TopVdev, psize: int, asize: int, column: int, records: int) -> np.ndarray:
    """Each leaf's share of record reads over consecutive records ``asize`` apart starting
    on ``column`` (see :meth:`_Model._leaf_shares`). The start column repeats every
    width / gcd(asize in sectors, width) records, so a whole number of those cycles, and at
    least :data:`SHARES_SPAN` bytes of records (raidz1 swaps its parity column at odd MiB
    offsets), gives the long-run shares. Cached across scenarios (sweeps repeat vdevs)."""
    vdev = top.vdev
    width = len(vdev.devices)
    key = (
        vdev.kind,
        width,
        vdev.parity,
        vdev.ndata,
        vdev.nspares,
        top.ashift,
        psize,
        asize,
        column,
    )
    found = _SHARES.get(key)
    if found is not None:
        return found
    sector = 1 << top.ashift
    cycle = width // math.gcd(max(1, asize // sector), width)
    n = cycle * max(1, -(-max(4 * width, -(-SHARES_SPAN // asize)) // cycle))
    n = int(min(n, records, RECORDS_SAMPLED))
    count = np.zeros(width)
    for i in range(n):
        for leaf, _, nbytes in top.leaf_ios(column * sector + i * asize, psize, False):
            if nbytes:
                count[leaf] += 1
    shares = count / n
    _SHARES[key] = shares
    return shares


class _Model:
    def __init__(self, sc: Scenario, seed: int = 1):
        self.sc, self.seed = sc, seed
        hw, pool, w = sc.hardware, sc.pool, sc.workload
        self.version = parse_zfs_version(hw.zfs_version)
        self.disk: Profile = hw.disk
        self.rotating = self.disk.kind == "hdd"
        layout = sc.layout_tree()
        self.rs, self.bs = pool.recordsize, w.bs
        ratio = pool.compress_ratio if pool.compression != "off" else 1.0
        self.psize = compressed_psize(self.rs, ratio, pool.ashift)
        cap = sc.pool_capacity()
        data_caps = [v for v in cap.vdevs if v.vclass == "normal"]
        vdevs = []
        for vdev, vcap in zip(layout.data_vdevs, data_caps, strict=True):
            top = TopVdev(vdev, [None] * len(vdev.devices), pool.ashift, vcap.metaslab_bytes,
                          self.rotating)  # type: ignore[list-item]  # fmt: skip
            asize = psize_to_asize(vdev, self.psize, pool.ashift)
            vdevs.append(_Vdev(top, vcap.metaslab_bytes, asize, 0.0))
        total_space = sum(v.space for v in vdevs)
        for v in vdevs:
            v.weight = v.space / total_space
        self.vdevs = vdevs
        self.direct = _direct(sc)
        slots = 1 if w.ioengine in ("psync", "sync") else w.iodepth
        self.slots = slots
        self.njobs = w.numjobs
        self.clients = self.njobs * (slots if self.direct else 1)
        self.file_records = max(1, -(-w.size // self.rs))
        self.total_records = self.njobs * self.file_records
        self.costs = cpu_costs(
            hw.cpu_ghz,
            pool.checksum,
            max(v.parity for v in layout.data_vdevs),
            pool.compression,
            "zero",
            compress_ratio=pool.compress_ratio,
            dedup=False,
            atime=pool.atime == "on",
            io_scale=hw.cpu_io_cost_scale,
            byte_scale=hw.cpu_byte_cost_scale,
        )
        self.cores = hw.cpu_cores
        self._shares: dict[int, np.ndarray] = {}
        self.taskq = zio_taskq_threads(hw.cpu_cores)
        self.mem_bw = hw.memory_bandwidth or memory.DEFAULT_MEMORY_BANDWIDTH
        arc_records = arc_data_bytes(hw.ram, self.version, ratio) // self.rs
        cached = pool.primarycache == "all" and not self.direct
        self.hit = min(1.0, arc_records / self.total_records) if cached else 0.0
        self.reads = w.rw == "randread"
        self.random = w.rw.startswith("rand")
        self._place_files(pool)
        names = [d for v in layout.data_vdevs for d in v.devices]
        self.paths = bus_stages(simpy.Environment(), sc.hardware, names, self.disk)

    # ---- where the files sit (as ZfsModel.place_files: just below the fill line)
    def _place_files(self, pool: Pool) -> None:
        fill = pool.fill
        if pool.allocated is not None:
            fill = pool.allocated / sum(v.space for v in self.vdevs)
        fill = min(0.95, max(0.0, fill))
        for v in self.vdevs:
            share = self.total_records * v.weight * v.asize
            start = max(0.0, v.space * fill - share)
            v.lo = start / v.space
            v.hi = min(1.0, (start + max(share, 1)) / v.space)

    # ---- the bus: links, expander, HBA (the DES's own stages, rates only)
    def _bus_bound(self, leaf_load: dict[str, tuple[float, float]]) -> tuple[float, str]:
        """Calls/s the bus stages allow, and the busiest stage's name. ``leaf_load``: per
        device, (bytes, I/Os) per call."""
        stages: dict[int, Any] = {}
        load: dict[int, list[float]] = {}
        for name, path in self.paths.items():
            nbytes, ios = leaf_load.get(name, (0.0, 0.0))
            for stage in path.stages:
                stages[id(stage)] = stage
                acc = load.setdefault(id(stage), [0.0, 0.0])
                acc[0] += nbytes
                acc[1] += ios
        best, name = math.inf, ""
        for key, (nbytes, ios) in load.items():
            st = stages[key]
            seconds = nbytes / st.rate + ios * st.per_io
            if seconds > 0 and 1.0 / seconds < best:
                best, name = 1.0 / seconds, st.name
        return best, name

    # ---- reads
    def _leaf_reads(self, v: _Vdev) -> tuple[int, int]:
        """(leaves a record read touches, bytes per leaf I/O)."""
        kind = v.top.vdev.kind
        sector = 1 << v.top.ashift
        if kind in ("disk", "mirror"):
            return 1, -(-self.psize // sector) * sector
        ios = v.top.leaf_ios(0, self.psize, False)
        per_leaf = max(io[2] for io in ios)
        return len(ios), per_leaf

    def _leaf_shares(self, v: _Vdev) -> np.ndarray:
        """P(a record read touches leaf ``l``) for each leaf of a raidz/dRAID vdev (they sum
        to the leaves a read touches), from the DES's column map over consecutive records
        as the file layout allocates them (offsets ``asize`` apart). Records whose asize is
        a multiple of the width all start on the same column, so their data columns land on
        the same leaves and the others idle (``raidz2 12`` with 32K records reads 8 of 12
        disks); the map shows that, a uniform spread would not."""
        cached = self._shares.get(id(v))
        if cached is None:
            sector = 1 << v.top.ashift
            column = (int(v.lo * v.space) // sector) % len(v.top.vdev.devices)
            records = max(1, v.space // max(1, v.asize))
            cached = _column_shares(v.top, self.psize, v.asize, column, records)
            self._shares[id(v)] = cached
        return cached

    def _vdev_read_stations(self, v: _Vdev, visits: float) -> list[tuple[tuple, Station]]:
        """The vdev's stations for record reads (``visits`` records per call), each with a
        signature: stations of equal signature are identical and get merged."""
        kind = v.top.vdev.kind
        width = len(v.top.vdev.devices)
        touched, nbytes = self._leaf_reads(v)
        table = devices.device_table(self.disk, nbytes, False, False, v.lo, v.hi, SYNC_READ_MAX)
        sig = self._sig(v, nbytes)

        def leaf_rate(k: float) -> float:
            """A leaf's I/O/s at mean occupancy ``k`` (below 1: busy that fraction)."""
            if k < 1.0:
                return k * table.at(1)
            return table.at(min(k, SYNC_READ_MAX))

        if kind == "disk":
            return [(sig, Station("leaf", leaf_rate, visits=visits))]
        if kind == "mirror":
            # vdev_mirror sends each read to the least-loaded child: balanced children
            def mirror_rate(k: int) -> float:
                return width * leaf_rate(k / width)

            return [(sig, Station("mirror", mirror_rate, visits=visits))]
        shares = self._leaf_shares(v)
        if touched == 1:
            # one leaf per record, on the column the record's offset gives: independent
            # leaves, each visited by its share of the records
            return [
                ((*sig, round(float(p), 6)), Station("leaf", leaf_rate, visits=visits * p))
                for p in shares
                if p > 0
            ]
        straggle = table.expected_max(touched) - table.mean_service
        hot = sorted({round(float(p), 6) for p in shares if p > 0}, reverse=True)

        def fork_join_rate(k: int) -> float:
            # k records in the vdev; a leaf touched by a share p of them holds N ~
            # Binomial(k, p) of their columns, so some leaves idle while others queue (the
            # mean spread evenly would hide both), and the records get through no faster
            # than the leaf that is shortest of I/Os for its share; a record then waits for
            # its slowest column (the expected maximum of the QD1 response times)
            depth = np.minimum(np.arange(1, k + 1), SYNC_READ_MAX)
            rates = np.interp(depth, table.depths, table.rate)
            spread = min(float(binomial_pmf(k, p)[1:] @ rates) / p for p in hot)
            return k / (k / spread + straggle)

        return [(sig, Station("raidz", fork_join_rate, visits=visits))]

    def _read(self) -> tuple[float, dict[str, float]]:
        """Calls/s and utilisations of a random-read job."""
        c = self.costs
        miss = 1.0 - self.hit
        records = max(1, self.bs // self.rs)
        call_cpu = c.syscall + (0.0 if self.direct else self.bs * c.copy_per_byte)
        call_cpu += c.atime_update
        read_children = self._read_children()
        record_cpu = c.read_record(self.psize) + read_children * c.leaf_io
        if not self.direct:
            record_cpu += self.rs * c.cache_pages_per_byte
        self._call_cpu = call_cpu
        # the clients' calls on any core; the read completions (checksum, decompression)
        # in ZFS's taskqs, whose threads are 80 % of the cores
        bg_demand = miss * records * record_cpu
        call_demand = self._call_cpu
        cpu_demand = call_demand + bg_demand
        cpu = Station("cpu", lambda k: min(k, self.cores) / call_demand)
        groups: dict[tuple, Station] = {}
        for v in self.vdevs:
            visits = miss * records * v.weight
            if visits <= 0:
                continue
            for sig, st in self._vdev_read_stations(v, visits):
                had = groups.get(sig)
                if had is None:
                    groups[sig] = st
                else:
                    groups[sig] = Station(
                        st.name, st.rate, visits=had.visits + st.visits, copies=had.copies + 1
                    )
        stations = [cpu]
        if bg_demand > 0:
            stations.append(Station("taskq", lambda k: min(k, self.taskq) / bg_demand))
        for i, st in enumerate(groups.values()):
            stations.append(Station(f"{st.name}{i}", st.rate, st.visits, st.copies))
        solution = solve(stations, self.clients)
        x = solution.throughput
        leaf_load = {}
        for v in self.vdevs:
            _, nbytes = self._leaf_reads(v)
            for name, p in zip(v.top.vdev.devices, self._read_shares(v), strict=True):
                ios = miss * records * v.weight * p
                leaf_load[name] = (ios * nbytes, ios)
        bus, bus_name = self._bus_bound(leaf_load)
        util = {"cpu": min(1.0, x * cpu_demand / self.cores)}
        if bus_name:
            util[bus_name] = min(1.0, x / bus)
        x = min(x, bus)
        util["cpu"] = min(1.0, x * cpu_demand / self.cores)
        # the busiest leaf's mean occupancy per vdev signature, from the stations' populations
        occupancy: dict[tuple, float] = {}
        for sig, station in zip(groups, stations[-len(groups) :] if groups else [], strict=True):
            kind, width = sig[0], sig[1]
            base = sig[:6]  # the vdev's signature (self._sig), without a leaf's share
            pop = solution.population[station.name] / station.copies
            if kind == "mirror":
                pop /= width
            elif kind in ("raidz", "draid") and station.name.startswith("raidz"):
                pop *= self._hot_share_sig(base)
            occupancy[base] = max(occupancy.get(base, 0.0), pop)
        p99_parts = []
        for v in self.vdevs:
            touched, nbytes = self._leaf_reads(v)
            shares = self._read_shares(v)
            hottest = float(shares.max())
            table = devices.device_table(self.disk, nbytes, False, False, v.lo, v.hi, SYNC_READ_MAX)
            k = occupancy.get(self._sig(v, nbytes), 1.0)
            for name, p in zip(v.top.vdev.devices, shares, strict=True):
                leaf_ios = x * miss * records * v.weight * p
                # an HDD is busy while anything is outstanding (rate at its occupancy);
                # flash is busy as the DES counts it, by the share of its saturated rate
                k_leaf = k * p / hottest if hottest > 0 else k
                capacity = table.at(max(1.0, k_leaf)) if self.rotating else table.rate[-1]
                util[f"disk:{name}"] = float(min(1.0, leaf_ios / capacity))
            # vdev_mirror sends a read to its least-loaded child: one finds the others spread
            # evenly over the children, not a child's own random share
            balance = len(v.top.vdev.devices) if v.top.vdev.kind == "mirror" else 1
            p99_parts.append((v.weight, table, k, touched, balance))
        self._p99_parts = p99_parts
        return x, util

    def _sig(self, v: _Vdev, nbytes: int) -> tuple:
        return (v.top.vdev.kind, len(v.top.vdev.devices), v.top.vdev.parity, v.lo, v.hi, nbytes)

    def _read_shares(self, v: _Vdev) -> np.ndarray:
        """Each leaf's share of the vdev's record reads (its expected I/Os per record)."""
        width = len(v.top.vdev.devices)
        if v.top.vdev.kind in ("raidz", "draid"):
            return self._leaf_shares(v)
        if v.top.vdev.kind == "mirror":
            return np.full(width, 1.0 / width)
        return np.ones(width)

    def _hot_share_sig(self, sig: tuple) -> float:
        for v in self.vdevs:
            _, nbytes = self._leaf_reads(v)
            if self._sig(v, nbytes) == sig:
                return float(self._read_shares(v).max())
        return 1.0

    def _read_latency(self, x: float, seed: int) -> tuple[float, float, float]:
        """(mean, p50, p99) of a read's latency, s, as fio reports it: from submission, so a
        buffered job's ``iodepth`` I/Os wait in turn behind each other's calls (ZFS serves a
        buffered call in the caller's thread). A call is a hit (its CPU time) or a miss: a
        device response at the leaf's occupancy, the slowest column's for a raidz read,
        sampled from the device table and scaled so the mean obeys Little's law."""
        queued = self.slots if not self.direct else 1
        concurrency = self.clients * (queued if not self.direct else 1)
        mean = concurrency / x if x > 0 else 0.0
        miss = 1.0 - self.hit
        rng = np.random.default_rng(seed)
        draws = 4000
        call_mean = self.clients / x if x > 0 else 0.0
        merged: dict[tuple, list] = {}
        for weight, table, k, touched, balance in self._p99_parts:  # identical vdevs: one
            key = (id(table), round(k, 3), touched, balance)
            if key in merged:
                merged[key][0] += weight
            else:
                merged[key] = [weight, table, k, touched, balance]
        parts = list(merged.values())
        weights = np.array([p[0] for p in parts])
        which = rng.choice(len(weights), size=(queued, draws), p=weights / weights.sum())
        # an arriving call sees the others' load, not its own (the arrival theorem of
        # closed networks: the network with one call fewer)
        crowd = 1.0 - 1.0 / max(1, concurrency)
        # all of a job's queued calls at once: row = the call's place in the job's queue
        t = np.full((queued, draws), self._call_cpu)
        is_miss = rng.random((queued, draws)) < miss
        for i, (_, table, k, touched, balance) in enumerate(parts):
            pick = is_miss & (which == i)
            n = int(pick.sum())
            if n:
                # each column finds a Poisson number of others at its leaf (mean: the leaf's
                # occupancy by the other calls; a mirror's spread evenly over its children),
                # and is served as at that depth; a record waits for its slowest column
                others = rng.poisson(k * crowd * balance, size=(touched, n)) // balance
                t[pick] = table.sample_at(1 + others, rng).max(axis=0)
        total = t.sum(axis=0)
        # scale the sampled shape to the network's mean call time
        sampled = total.mean() / queued
        if sampled > 0 and call_mean > 0:
            total *= call_mean / sampled
        return mean, float(np.percentile(total, 50)), float(np.percentile(total, 99))

    def _read_children(self) -> int:
        return max(self._leaf_reads(v)[0] for v in self.vdevs)

    # ---- writes
    def _write(self) -> tuple[float, dict[str, float]]:
        """Calls/s of a buffered write job and each bound's calls/s."""
        c = self.costs
        rs, bs = self.rs, self.bs
        records_per_call = bs / rs if not self.random or bs >= rs else 1.0
        if bs >= rs:
            records_per_call = bs / rs
        call_cpu = c.syscall + (
            bs * c.direct_verify_per_byte if self.direct else bs * (c.copy_per_byte
                                                                     + c.cache_pages_per_byte)
        )  # fmt: skip
        parity = any(v.top.vdev.kind in ("raidz", "draid") for v in self.vdevs)
        children = max(len(v.top.leaf_ios(0, self.psize, True)) for v in self.vdevs)
        record_cpu = c.write_record(rs, self.psize, parity) + children * c.leaf_io
        meta = self._metadata_per_record()
        record_cpu += meta["cpu"]
        bounds: dict[str, float] = {}
        # the cores: client calls plus the txg sync's per-record work, which runs in the
        # zio taskqs (80 % of the cores as threads)
        sync_cpu = records_per_call * record_cpu
        bounds["cpu"] = min(self.cores / (call_cpu + sync_cpu), self.taskq / sync_cpu)
        # the clients: each job makes one call at a time (buffered), on a core the taskq
        # threads leave free: X = min(jobs, cores − min(taskq, X · sync)) / call (fixed point)
        bounds["client"] = _client_bound(self.clients, self.cores, self.taskq, call_cpu, sync_cpu)
        # the vdevs: sequential aggregated leaf writes at the async-write ceiling
        leaf_io_bytes = []
        for i, v in enumerate(self.vdevs):
            ios = v.top.leaf_ios(0, self.psize, True)
            per_leaf = max(io[2] for io in ios)
            width = len(v.top.vdev.devices)
            leaves = width - v.top.vdev.nspares if v.top.vdev.kind == "draid" else width
            # vdev_queue's aggregation limit, as the DES's (1 MiB on HDDs from 0.8, else 128K)
            agg = MiB if self.rotating and self.version.at_least(0, 8) else 128 * KiB
            nbytes = max(per_leaf, (agg // per_leaf) * per_leaf) if per_leaf <= agg else per_leaf
            table = devices.device_table(self.disk, nbytes, True, True, v.lo, v.hi, ASYNC_WRITE_MAX)
            seconds = 1.0 / table.at(ASYNC_WRITE_MAX)
            leaf_bytes_per_s = nbytes / seconds
            leaf_io_bytes.append(nbytes)
            # bytes per record on each leaf: the column map's share, plus the record's share
            # of the txg's indirect blocks (spread over the vdevs like the data)
            per_record_leaf = (sum(io[2] for io in ios) + meta["asize"][i]) / leaves
            vdev_records = leaf_bytes_per_s / per_record_leaf
            bounds[f"vdev{i}"] = vdev_records / v.weight / records_per_call
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
        leaf_load = {}
        for v, nbytes in zip(self.vdevs, leaf_io_bytes, strict=True):
            ios = v.top.leaf_ios(0, self.psize, True)
            width = len(v.top.vdev.devices)
            per_leaf = records_per_call * v.weight * sum(io[2] for io in ios) / width
            for name in v.top.vdev.devices:
                leaf_load[name] = (per_leaf, per_leaf / nbytes)
        bus, bus_name = self._bus_bound(leaf_load)
        if bus_name:
            bounds[bus_name] = bus
        self._txg_cycle(bounds, leaf_io_bytes, records_per_call)
        return min(bounds.values()), bounds

    def _metadata_per_record(self) -> dict[str, Any]:
        """A record's share of the indirect blocks its txg rewrites (as the DES writes them:
        every dirty record's parent at every level, ditto copies by ``redundant_metadata``):
        allocated bytes per vdev and CPU seconds. A txg holds B = 0.6 × dirty_max of records
        (see :meth:`_txg_cycle`); of the P parents at a level, random calls of R records each
        dirty P · (1 − (1 − q/P)^(D/R)) distinct ones (D records per txg, q = 1 + (R − 1)/span
        parents per call), sequential ones D / span + one per job."""
        pool, c = self.sc.pool, self.costs
        txg = txg_tunables(self.sc.hardware.ram, self.version)
        per_txg = max(1.0, 0.6 * txg.dirty_max / self.rs)
        call_records = max(1.0, self.bs / self.rs)
        asize = [0.0] * len(self.vdevs)
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
            for i, v in enumerate(self.vdevs):
                asize[i] += blocks * psize_to_asize(v.top.vdev, psize, pool.ashift)
            cpu += blocks * (c.zio + INDIRECT_BYTES * meta_compress + psize * c.checksum_per_byte)
        return {"asize": asize, "cpu": cpu}

    def _txg_cycle(
        self, bounds: dict[str, float], leaf_io_bytes: list[int], records_per_call: float
    ) -> None:
        """The txg pipeline's own loss: a txg's sync must finish before the next starts
        (``spa_sync``), so every sync ends with a tail no other work overlaps — its last
        aggregated leaf writes and the uberblock write and flush to the labels. With B bytes
        per txg and a resource that moves R bytes/s, the rate is B / (B/R + tail). In steady
        state the write throttle holds dirty data near its delay threshold
        (``zfs_delay_min_dirty_percent`` = 60 % of ``zfs_dirty_data_max``), which the
        syncing txg takes: B = 0.6 × dirty_max. Disks already busy through the tail lose
        the uberblock's positioning, and the positioning back to the data, of which the
        txg waits for the slowest leaf's."""
        txg = txg_tunables(self.sc.hardware.ram, self.version)
        calls_per_txg = 0.6 * txg.dirty_max / (records_per_call * self.rs)
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
        leaves = sum(len(x.top.vdev.devices) for x in self.vdevs)
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
            if key.startswith("vdev"):
                for disk in self.vdevs[int(key[4:])].top.vdev.devices:
                    util[f"disk:{disk}"] = min(1.0, x / bound)
            else:
                util[key] = min(1.0, x / bound)
        return util

    def _bound_limit(self, bounds: dict[str, float]) -> str:
        """The binding bound, named as the DES names resources (the clients' own CPU is
        ``cpu``, as the DES says when its client threads are ≥ 85 % busy)."""
        name = min(bounds, key=bounds.__getitem__)
        if name.startswith("vdev"):
            return f"disk:{self.vdevs[int(name[4:])].top.vdev.devices[0]}"
        if name == "client":
            return "cpu"
        return name

    def solve(self) -> tuple[DirectionStats, DirectionStats, str, dict[str, float], dict]:
        details: dict[str, Any] = {
            "arc_hit_ratio": self.hit if self.reads else None,
            "clients": self.clients,
            "validity": "in range",
        }
        if self.reads:
            x, util = self._read()
            read = _direction(x, self.bs, *self._read_latency(x, self.seed))
            threads = min(self.clients, self.cores)
            limit = _limit(util, x * self._call_cpu / threads)
            return read, DirectionStats(), limit, util, details
        x, bounds = self._write()
        details.update({f"bound_{k}_calls_per_s": v for k, v in bounds.items()})
        queued = 1 if self.direct else self.slots
        latency = self.clients * queued / x if x > 0 else 0.0
        # the mean is Little's law; the spread of buffered write latency comes from the
        # write throttle and the txg cycle, which this engine does not model: no percentiles
        write = _direction(x, self.bs, latency, None, None)
        util = self._bound_util(x, bounds)
        limit = self._bound_limit(bounds)
        return DirectionStats(), write, limit, util, details


def _direction(x: float, bs: int, mean: float, p50: float | None, p99: float | None):
    return DirectionStats(
        bytes_per_s=x * bs, iops=x, latency_mean=mean, latency_p50=p50, latency_p99=p99
    )


def _client_bound(clients: int, cores: int, taskq: int, call: float, sync: float) -> float:
    """Calls/s ``clients`` single-threaded callers reach when each call costs ``call`` s of
    CPU and leaves ``sync`` s of taskq work: the largest X with
    X · call ≤ min(clients, cores − min(taskq, X · sync)), by bisection."""
    if call <= 0:
        return math.inf

    def room(x: float) -> float:
        return min(clients, cores - min(taskq, x * sync)) / call - x

    lo, hi = 0.0, min(clients, cores) / call
    if room(hi) >= 0:
        return hi
    for _ in range(60):
        mid = (lo + hi) / 2
        if room(mid) >= 0:
            lo = mid
        else:
            hi = mid
    return lo


def _limit(util: dict[str, float], client_busy: float) -> str:
    """The DES's rule (``Engine._limit``): a resource ≥ 85 % busy, else the clients' own
    CPU when their threads are ≥ 85 % busy, else the clients (too few I/Os in flight)."""
    if util.get("memory", 0.0) >= 0.85:
        return "memory"
    name, busiest = max(util.items(), key=lambda kv: kv[1])
    if busiest >= 0.85:
        return name
    if client_busy >= 0.85:
        return "cpu"
    return "client"
