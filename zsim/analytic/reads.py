"""Random reads in the analytic engine: an exact closed queueing network
(:mod:`zsim.analytic.queueing`) of the CPU and the vdevs, with ``numjobs`` (× ``iodepth`` under
honoured O_DIRECT) customers. A raidz read touches the leaves the column map gives its record
(records a whole row wide all land on the same leaves); each leaf holds a binomial number of
the vdev's records' columns, and a record waits for its slowest column (fork-join: the
expected maximum of the leaves' response times). Mirrors spread reads over their children.
Latency percentiles sample each column's response at the depth it finds (a binomial number of
the other calls' columns at its leaf, spread evenly over a mirror's children).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from zsim.analytic import devices
from zsim.analytic.demands import ASYNC_WRITE_MAX, SYNC_READ_MAX, AnalyticVdev, PoolModel
from zsim.analytic.draid_load import draid_read_shares
from zsim.analytic.queueing import Station, solve
from zsim.des.vdev import TopVdev
from zsim.units import MiB
from zsim.zfs.arc import L2ARC_WRITE_MAX

#: most consecutive records whose column map gives a raidz vdev's per-leaf read shares
RECORDS_SAMPLED = 4096
#: least bytes of consecutive records sampled: raidz1 swaps its first two columns at odd
#: MiB offsets, so 8 MiB holds 8 alternations
SHARES_SPAN = 8 * MiB


def binomial_pmf(n: int, p: float) -> np.ndarray:
    """P(X = 0 … n) for X ~ Binomial(n, p), computed in log space (n in the thousands)."""
    i = np.arange(n + 1)
    if p <= 0.0 or p >= 1.0:
        return (i == (n if p >= 1.0 else 0)).astype(float)
    log_choose = np.array(
        [math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) for j in i]
    )
    return np.exp(log_choose + i * math.log(p) + (n - i) * math.log1p(-p))


@dataclass(frozen=True)
class RecordReads:
    """What reading a vdev's records costs its leaves, over consecutive records (see
    :func:`record_reads`): each leaf's expected I/Os per record (``shares``), the leaves a
    record read touches on average (``touched``), the largest leaf I/O (bytes) and the data
    bytes a degraded read rebuilds from parity, per record (0 on a healthy vdev)."""

    shares: np.ndarray
    touched: float
    leaf_bytes: int
    rebuilt: float


_READS: dict[tuple, RecordReads] = {}


def record_reads(
    top: TopVdev, psize: int, asize: int, column: int, records: int, width: int | None = None
) -> RecordReads:
    """Record reads of a raidz vdev over consecutive records ``asize`` apart starting on
    ``column`` (see :meth:`ReadModel._leaf_shares`), through the DES's column map
    (:meth:`TopVdev.leaf_ios`, which reads every surviving column of a block whose data a
    missing leaf held). The start column repeats every width / gcd(asize in sectors,
    width) records, so a whole number of those cycles, and at least :data:`SHARES_SPAN`
    bytes of records (raidz1 swaps its parity column at odd MiB offsets), gives the
    long-run figures. Cached across scenarios (sweeps repeat vdevs)."""
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
        width,
        tuple(sorted(top.failed)),
    )
    found = _READS.get(key)
    if found is not None:
        return found
    sector = 1 << top.ashift
    cycle = width // math.gcd(max(1, asize // sector), width)
    n = cycle * max(1, -(-max(4 * width, -(-SHARES_SPAN // asize)) // cycle))
    n = int(min(n, records, RECORDS_SAMPLED))
    count = np.zeros(width)
    touched, largest = 0, 0
    rebuilt_before = top.reconstruct_bytes
    for i in range(n):
        for leaf, _, nbytes in top.leaf_ios(column * sector + i * asize, psize, False, width):
            if nbytes:
                count[leaf] += 1
                touched += 1
                largest = max(largest, nbytes)
    rebuilt = (top.reconstruct_bytes - rebuilt_before) / n
    found = RecordReads(count / n, touched / n, largest, rebuilt)
    _READS[key] = found
    return found


class ReadModel(PoolModel):
    """Calls/s, utilisations and latency of a random-read job."""

    # ---- reads
    def _leaf_reads(self, v: AnalyticVdev) -> tuple[int, int]:
        """(leaves a record read touches, bytes per leaf I/O); found once per vdev (the
        mixed model's fixed point asks for it at every step)."""
        memo = self.__dict__.setdefault("_leaf_reads_memo", {})
        held = memo.get(id(v))
        if held is None or held[0] is not v:
            held = memo[id(v)] = (v, self._leaf_reads_of(v))
        return held[1]

    def _leaf_reads_of(self, v: AnalyticVdev) -> tuple[int, int]:
        """:meth:`_leaf_reads`, worked out."""
        kind = v.top.vdev.kind
        sector = 1 << v.top.ashift
        if kind in ("disk", "mirror"):
            return 1, -(-self.psize // sector) * sector
        if v.top.failed:
            # some records read their data columns, those whose data a missing leaf held
            # every surviving column: the mean over the file's records
            reads = self._record_reads(v)
            return max(1, round(reads.touched)), reads.leaf_bytes
        ios = v.top.leaf_ios(0, self.psize, False, v.read_width)
        per_leaf = max(io[2] for io in ios)
        return len(ios), per_leaf

    def _record_reads(self, v: AnalyticVdev) -> RecordReads:
        """:func:`record_reads` of a raidz vdev over the records as the files lie."""
        sector = 1 << v.top.ashift
        column = (int(v.lo * v.space) // sector) % len(v.top.vdev.devices)
        records = max(1, v.space // max(1, v.read_asize))
        return record_reads(v.top, self.psize, v.read_asize, column, records, v.read_width)

    def _rebuilt_per_record(self) -> float:
        """Data bytes a record read rebuilds from parity, on average over the vdevs."""
        return sum(
            v.weight * self._record_reads(v).rebuilt
            for v in self.vdevs
            if v.top.failed and v.top.vdev.kind == "raidz"
        )

    def _leaf_shares(self, v: AnalyticVdev) -> np.ndarray:
        """P(a record read touches leaf ``l``) for each leaf of a raidz/dRAID vdev (they sum
        to the leaves a read touches), from the DES's column map over consecutive records
        as the file layout allocates them (offsets ``asize`` apart). Records whose asize is
        a multiple of the width all start on the same column, so their data columns land on
        the same leaves and the others idle (``raidz2 12`` with 32K records reads 8 of 12
        disks); the map shows that, a uniform spread would not."""
        cached = self._shares.get(id(v))
        if cached is None:
            if v.top.vdev.kind == "draid":
                # random reads over the files' span: its groups' children, not the few
                # groups consecutive records fill (draid_load)
                span = (int(v.lo * v.space), int(v.hi * v.space))
                cached = draid_read_shares(v.top, self.psize, *span)
            else:
                cached = self._record_reads(v).shares
            self._shares[id(v)] = cached
        return cached

    def _read_table(self, v: AnalyticVdev, nbytes: int) -> devices.DeviceTable:
        """The closed-loop table of a leaf's ``nbytes`` record reads on vdev ``v`` (a model
        that shares the leaves with other work gives its own)."""
        return devices.device_table(self.disk, nbytes, False, False, v.lo, v.hi, SYNC_READ_MAX)

    def _vdev_read_stations(self, v: AnalyticVdev, visits: float) -> list[tuple[tuple, Station]]:
        """The vdev's stations for record reads (``visits`` records per call), each with a
        signature: stations of equal signature are identical and get merged."""
        kind = v.top.vdev.kind
        width = len(v.top.vdev.devices)
        touched, nbytes = self._leaf_reads(v)
        table = self._read_table(v, nbytes)
        sig = self._sig(v, nbytes)

        def leaf_rate(k: float) -> float:
            """A leaf's I/O/s at mean occupancy ``k`` (below 1: busy that fraction)."""
            if k < 1.0:
                return k * table.at(1)
            return table.at(min(k, SYNC_READ_MAX))

        if kind == "disk":
            return [(sig, Station("leaf", leaf_rate, visits=visits))]
        if kind == "mirror":
            # vdev_mirror sends each read to the least-loaded child: balanced children (the
            # ones still there)
            alive = width - len(v.top.failed)

            def mirror_rate(k: int) -> float:
                return alive * leaf_rate(k / alive)

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
        # a hit on a record stored compressed, outside the dbuf cache: decompressed in the
        # caller (CpuCosts.arc_hit_expand)
        call_cpu += records * self.hit_expand * c.arc_hit_expand(self.rs, self.psize)
        read_children = self._read_children()
        record_cpu = c.read_record(self.rs, self.psize) + read_children * c.leaf_io
        # a degraded raidz read rebuilds its missing data from parity in the read's
        # completion (vdev_raidz_reconstruct(); the DES's _charge_reconstruction)
        record_cpu += self._rebuilt_per_record() * c.parity_per_byte
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
        pool_share = 1.0 - self.l2_hit  # of the misses: the rest read a cache device
        cache_sig: tuple | None = None
        if self.l2_hit > 0 and miss > 0:
            cache_sig, cache_station = self._cache_read_station(miss * records * self.l2_hit)
            groups[cache_sig] = cache_station
        for v in self.vdevs:
            visits = miss * pool_share * records * v.weight
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
                ios = miss * pool_share * records * v.weight * p
                leaf_load[name] = (ios * nbytes, ios)
        bus, bus_name = self._bus_bound(leaf_load)
        if cache_sig is not None:  # the L2ARC hits cross the cache devices' links
            per_device = miss * records * self.l2_hit / len(self.cache_names)
            sector = 1 << self.sc.pool.ashift
            block = -(-self.psize // sector) * sector
            cache_load = dict.fromkeys(self.cache_names, (per_device * block, per_device))
            cache_bus, cache_bus_name = self._bus_bound(cache_load, self.cache_paths)
            if cache_bus < bus:
                bus, bus_name = cache_bus, cache_bus_name
        util = {"cpu": min(1.0, x * cpu_demand / self.cores)}
        if bus_name:
            util[bus_name] = min(1.0, x / bus)
        x = min(x, bus)
        util["cpu"] = min(1.0, x * cpu_demand / self.cores)
        # the busiest leaf's mean occupancy per vdev signature, from the stations' populations
        occupancy: dict[tuple, float] = {}
        for sig, station in zip(groups, stations[-len(groups) :] if groups else [], strict=True):
            if sig == cache_sig:
                occupancy[sig] = solution.population[station.name] / station.copies
                continue
            kind, width = sig[0], sig[1] - len(sig[6])  # the leaves still there
            base = sig[:7]  # the vdev's signature (self._sig), without a leaf's share
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
                leaf_ios = x * miss * pool_share * records * v.weight * p
                # an HDD is busy while anything is outstanding (rate at its occupancy);
                # flash is busy as the DES counts it, by the share of its saturated rate
                k_leaf = k * p / hottest if hottest > 0 else k
                capacity = table.at(max(1.0, k_leaf)) if self.rotating else table.rate[-1]
                util[f"disk:{name}"] = float(min(1.0, leaf_ios / capacity))
            # vdev_mirror sends a read to its least-loaded child: one finds the others spread
            # evenly over the children, not a child's own random share
            balance = (
                len(v.top.vdev.devices) - len(v.top.failed) if v.top.vdev.kind == "mirror" else 1
            )
            p99_parts.append((v.weight * pool_share, table, k, touched, balance))
        if cache_sig is not None:
            table, busy = self._cache_table()
            k = occupancy.get(cache_sig, 1.0)
            per_device = x * miss * records * self.l2_hit / len(self.cache_names)
            capacity = table.at(max(1.0, k)) if self.cache_disk.kind == "hdd" else table.rate[-1]
            for name in self.cache_names:
                util[f"disk:{name}"] = float(min(1.0, per_device / (capacity * (1 - busy)) + busy))
            p99_parts.append((self.l2_hit, table, k, 1, 1))
        self._p99_parts = p99_parts
        return x, util

    def _cache_table(self) -> tuple[devices.DeviceTable, float]:
        """The cache devices' table for reads of a block (anywhere on the device, as the
        L2ARC places them), and the share of each device's time the L2ARC feed takes:
        ``l2arc_write_max`` a second (the DES's ``ZfsModel._l2_feed``, 1 MiB writes at
        async-write priority) over the devices."""
        sector = 1 << self.sc.pool.ashift
        nbytes = -(-self.psize // sector) * sector
        table = devices.device_table(self.cache_disk, nbytes, False, False, 0.0, 1.0, SYNC_READ_MAX)
        feed = devices.device_table(self.cache_disk, MiB, True, True, 0.0, 1.0, ASYNC_WRITE_MAX)
        feed_bytes = L2ARC_WRITE_MAX / len(self.cache_names)
        return table, min(0.5, feed_bytes / (MiB * feed.rate[-1]))

    def _cache_read_station(self, visits: float) -> tuple[tuple, Station]:
        """The cache devices as one merged station: an L2ARC hit reads its block from one of
        them (spread evenly), each at its own rate less the feed's share of its time."""
        table, busy = self._cache_table()

        def rate(k: int) -> float:
            return (1.0 - busy) * (k * table.at(1) if k < 1 else table.at(min(k, SYNC_READ_MAX)))

        n = len(self.cache_names)
        sig = ("cache", n, table.mean_service)
        return sig, Station("cache", rate, visits=visits, copies=n)

    def _sig(self, v: AnalyticVdev, nbytes: int) -> tuple:
        top = v.top
        return (
            top.vdev.kind,
            len(top.vdev.devices),
            top.vdev.parity,
            v.lo,
            v.hi,
            nbytes,
            tuple(sorted(top.failed)),
        )

    def _read_shares(self, v: AnalyticVdev) -> np.ndarray:
        """Each leaf's share of the vdev's record reads (its expected I/Os per record)."""
        width = len(v.top.vdev.devices)
        if v.top.vdev.kind in ("raidz", "draid"):
            return self._leaf_shares(v)
        if v.top.vdev.kind == "mirror":
            alive = np.array([i not in v.top.failed for i in range(width)], dtype=float)
            return alive / alive.sum()
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
        # closed networks: the network with one call fewer): each of the other C − 1
        # customers is at a leaf with the probability that puts the leaf's mean occupancy
        # k there, k / C — a binomial, which never counts more calls than there are
        customers = max(1, self.clients)
        # all of a job's queued calls at once: row = the call's place in the job's queue
        t = np.full((queued, draws), self._call_cpu)
        is_miss = rng.random((queued, draws)) < miss
        for i, (_, table, k, touched, balance) in enumerate(parts):
            pick = is_miss & (which == i)
            n = int(pick.sum())
            if n:
                # each column finds a binomial number of others at its leaf (mean: the leaf's
                # occupancy by the other calls; a mirror's spread evenly over its children),
                # and is served as at that depth; a record waits for its slowest column
                here = min(1.0, k * balance / customers)
                others = rng.binomial(customers - 1, here, size=(touched, n)) // balance
                t[pick] = table.sample_at(1 + others, rng).max(axis=0)
        total = t.sum(axis=0)
        # scale the sampled shape to the network's mean call time
        sampled = total.mean() / queued
        if sampled > 0 and call_mean > 0:
            total *= call_mean / sampled
        return mean, float(np.percentile(total, 50)), float(np.percentile(total, 99))

    def _read_children(self) -> int:
        return max(self._leaf_reads(v)[0] for v in self.vdevs)
