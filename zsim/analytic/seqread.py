"""Sequential reads (fio ``rw=read``) in the analytic engine.

A buffered sequential fio job reads its file in order, one call at a time (ZFS serves a
buffered call in the caller's thread), while zfetch keeps ``zfetch_max_distance`` bytes of
records in flight ahead of it (``module/zfs/dmu_zfetch.c``: 64 MiB from 2.2, 8 MiB before;
the DES's ``Engine._prefetch``). A call finds its records prefetched (ARC hits: the call's
CPU only) or waits for them. The job rate is the least of:

* **the pool and the jobs together**: a stream table (:mod:`zsim.analytic.seqstreams`)
  runs the DES's own vdev layer in a closed loop of the jobs — each call's CPU, its demand
  reads and zfetch's window, each record's completion CPU, every record where the rotor put
  it (:func:`place`, as ``ZfsModel.place_files``/``locate``). What the vdevs make of several
  streams — raidz leaves skipping parity columns, ``vdev_queue`` aggregation within the
  read gap limit up to ``zfs_vdev_aggregation_limit``, its LBA ordering, the mirror's child
  selection with the rotating seek offset bonus, the HDD's read-ahead buffer, the vdevs
  taking turns with a short window — comes from that loop;
* **the clients** on the cores the zio taskq threads leave: ``numjobs`` single-threaded
  callers, each call ``syscall`` + the copy of ``bs`` bytes out of the ARC (+ ``atime``)
  (:func:`zsim.analytic.writes.client_bound`);
* **the CPU**: each record read's checksum (and decompression), child I/Os and ARC buffer in
  the zio taskqs (80 % of the cores, ``zio_taskq_threads``), with the calls on all cores;
* **the memory bus** (each record's DMA, verification passes and the copy to the caller,
  :mod:`zsim.machine.memory`) and **the bus** stages (links, expander, HBA, rates only).

The jobs' files are larger than the ARC (files it holds whole are declined, see
:func:`zsim.analytic.validity.validity`): the DES's LRU over records read cyclically never
hits on a record read a pass before, so every record comes from the disks, once.

Latency: the mean by Little's law (``numjobs`` × ``iodepth`` calls outstanding: a buffered
job's queued calls wait in turn). Percentiles are not modelled (``None``): see :meth:`solve`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from zsim.analytic.demands import AnalyticVdev, PoolModel
from zsim.analytic.seqstreams import StreamTable, pool_table
from zsim.analytic.stream_sample import draid_records
from zsim.analytic.writes import client_bound
from zsim.machine import memory
from zsim.result import DirectionStats
from zsim.units import KiB, MiB
from zsim.zfs.arc import zfetch_max_distance
from zsim.zfs.version import ZfsVersion

#: the DES's limit rule (``Engine._limit``): a resource this busy is the limit
BUSY = 0.85


@dataclass(frozen=True)
class SeqReadAnswer:
    """A sequential-read job, solved: ``calls_per_s``; ``bounds`` (calls/s each stage allows);
    ``util`` (busy fractions, as the DES names resources); ``limit`` (the DES's rule);
    ``window`` (records zfetch keeps in flight per job); ``client_busy`` (the busy share of
    the jobs' own threads, which the rule calls ``cpu`` at 85 %); ``latency`` (a call's mean
    latency as fio measures it, s)."""

    calls_per_s: float
    bounds: dict[str, float]
    util: dict[str, float]
    limit: str
    window: int
    client_busy: float
    latency: float


def prefetch_window(distance: int, recordsize: int) -> int:
    """Records zfetch keeps in flight ahead of a stream: ``zfetch_max_distance`` bytes of
    ``recordsize`` records, at least one (the DES's ``Engine.prefetch_records``)."""
    return max(1, distance // recordsize)


def aliquot(version: ZfsVersion, data_disks: int, width: int, weight: float, vdevs: int) -> int:
    """Bytes the rotor places on a vdev per visit (``mg_aliquot``, ``metaslab.c``; the DES's
    ``ZfsModel._aliquot``): 512 KiB × children up to 2.1, 1 MiB × data disks in 2.2-2.3,
    2 MiB × data disks from 2.4, scaled by the vdev's share of the space × the vdevs."""
    if version.at_least(2, 4):
        base = 2 * MiB * data_disks
    elif version.at_least(2, 2):
        base = MiB * data_disks
    else:
        base = 512 * KiB * width
    return max(int(base * weight * vdevs), 1)


@dataclass(frozen=True)
class Placement:
    """Where the jobs' files lie, as ``ZfsModel.place_files`` / ``locate`` lay them:
    ``per_visit`` records per rotor visit on each vdev, ``cycle`` their sum; ``starts[v][j]``
    the vdev byte offset of job ``j``'s first record on vdev ``v``; ``bases[v]`` where the
    files start on vdev ``v`` (``ZfsModel.file_start``)."""

    per_visit: tuple[int, ...]
    cycle: int
    starts: tuple[tuple[int, ...], ...]
    bases: tuple[int, ...]


def place(
    spaces: list[int],
    asizes: list[int],
    aliquots: list[int],
    njobs: int,
    file_records: int,
    fill: float,
    sector: int,
) -> Placement:
    """The files' placement (see :class:`Placement`): records go round the vdevs in runs of
    ``per_visit`` (the rotor's aliquot over the record's asize), a job's file after the
    previous job's, all just below the fill line."""
    per_visit = [max(1, -(-a // size)) for a, size in zip(aliquots, asizes, strict=True)]
    cycle = sum(per_visit)
    total = njobs * file_records
    fill = min(0.95, max(0.0, fill))
    starts: list[tuple[int, ...]] = []
    bases: list[int] = []
    for v, (space, size, visit) in enumerate(zip(spaces, asizes, per_visit, strict=True)):
        share = -(-total // cycle) * visit * size
        base = max(0, int(space * fill) - share) // sector * sector
        bases.append(base)
        wrap = max(1, space // size) * size
        before = sum(per_visit[:v])
        offsets = []
        for j in range(njobs):
            turn, within = divmod(j * file_records, cycle)
            if within < before:
                index = turn * visit
            elif within < before + visit:
                index = turn * visit + within - before
            else:
                index = (turn + 1) * visit
            offsets.append((base + index * size) % wrap)
        starts.append(tuple(offsets))
    return Placement(tuple(per_visit), cycle, tuple(starts), tuple(bases))


def leaf_busy(vdevs: list[AnalyticVdev], table: StreamTable) -> list[float]:
    """Each leaf's busy share, the leaves of a vdev taken as equally busy per byte they read
    (one device model, one pattern of streams): the vdev's measured busy time spread by each
    leaf's bytes, which the column map fixes. The loop measures a few hundred I/Os per leaf,
    so each leaf's own busy share scatters by ±20 % and the busiest of 36 reads high."""
    out: list[float] = []
    i = 0
    for v in vdevs:
        n = len(v.top.vdev.devices)
        busy = table.leaf_busy[i : i + n]
        nbytes = table.leaf_bytes_per_record[i : i + n]
        total = sum(nbytes)
        per_byte = sum(busy) / total if total > 0 else 0.0
        out.extend(b * per_byte for b in nbytes)
        i += n
    return out


def busiest(util: dict[str, float]) -> tuple[str, float]:
    name, value = max(util.items(), key=lambda kv: kv[1])
    return name, value


def limit_of(util: dict[str, float], client_busy: float) -> str:
    """The DES's rule (``Engine._limit``): memory when ≥ 85 % busy, else the busiest resource
    when ≥ 85 %, else the clients' own CPU when their threads are ≥ 85 % busy, else the
    clients (too few I/Os in flight)."""
    if util.get("memory", 0.0) >= BUSY:
        return "memory"
    name, value = busiest(util)
    if value >= BUSY:
        return name
    if client_busy >= BUSY:
        return "cpu"
    return "client"


class SeqReadModel(PoolModel):
    """The scenario's sequential-read job (:meth:`solve`)."""

    def solve(self) -> tuple[DirectionStats, str, dict[str, float], dict]:
        answer = self.answer()
        x = answer.calls_per_s
        # percentiles are not given: a call waits for its record only when the pool is the
        # bottleneck, and then as the records arrive — in bursts of aggregated leaf I/Os,
        # gaps while the queue serves other streams, the disks' relative rotational phases —
        # which the loop and the DES each realise their own way (the loop's p99 was within
        # 2 % of the DES's on the median draw, but 43-80 % off on 3 of 26)
        read = DirectionStats(
            bytes_per_s=x * self.bs, iops=x, latency_mean=answer.latency, latency_p50=None,
            latency_p99=None,
        )  # fmt: skip
        details = {
            "arc_hit_ratio": None,
            "clients": self.clients,
            "validity": "in range",
            "prefetch_records": answer.window,
            "client_busy": answer.client_busy,
            **{f"bound_{k}_calls_per_s": v for k, v in answer.bounds.items()},
        }
        return read, answer.limit, answer.util, details

    def answer(self) -> SeqReadAnswer:
        c = self.costs
        rs, bs = self.rs, self.bs
        records_per_call = bs / rs
        call_cpu = c.syscall + bs * c.copy_per_byte + c.atime_update
        # the calls find their records prefetched and kept as stored: each caller
        # decompresses its records (CpuCosts.arc_hit_expand; zfetch's reads do not)
        call_cpu += records_per_call * c.arc_hit_expand(rs, self.psize)
        children = max(len(v.top.leaf_ios(0, self.psize, True)) for v in self.vdevs)
        parity = [v.top.vdev.parity for v in self.vdevs if v.top.vdev.kind in ("raidz", "draid")]
        # ZfsModel.read_children: a raidz read's data columns (its columns less parity)
        read_children = max(1, children - max(parity)) if parity else 1
        record_cpu = c.verify_record(self.psize) + read_children * c.leaf_io
        record_cpu += rs * c.cache_pages_per_byte
        window = prefetch_window(zfetch_max_distance(self.version), rs)
        placed = self._placement()
        bounds: dict[str, float] = {}
        sync_cpu = records_per_call * record_cpu
        bounds["client"] = client_bound(self.njobs, self.cores, self.taskq, call_cpu, sync_cpu)
        bounds["cpu"] = min(self.cores / (call_cpu + sync_cpu), self.taskq / sync_cpu)
        read_traffic = memory.read_record_bytes(
            rs,
            self.psize,
            checksumming=self.sc.pool.checksum != "off",
            compressed=self.psize < rs,
        )
        # the memory bus: the copy to the caller, each record's verification passes and its
        # DMA (a read moves the record's data columns: psize)
        per_call = memory.copy_bytes(bs) + records_per_call * read_traffic
        per_call += memory.dma_bytes(int(records_per_call * self.psize))
        bounds["memory"] = self.mem_bw / per_call
        # where the host holds the jobs back (cores shared with the taskq threads, the
        # memory bus), each job's call takes that much longer: the loop runs them so
        host = min(bounds["client"], bounds["cpu"], bounds["memory"])
        call_time = max(call_cpu, self.njobs / host)
        # the whole pool in one loop of the jobs: every record where the rotor put it, each
        # call's CPU, its demand reads and zfetch's window, each record's completion CPU
        t = self._pool_table(placed, window, call_time, records_per_call, record_cpu)
        names = [d for v in self.vdevs for d in v.top.vdev.devices]
        bounds["pool"] = t.records_per_s / records_per_call
        leaf_load = {
            name: (records_per_call * nbytes, records_per_call * ios)
            for name, nbytes, ios in zip(
                names, t.leaf_bytes_per_record, t.leaf_ios_per_record, strict=True
            )
        }
        bus, bus_name = self._bus_bound(leaf_load)
        if bus_name and math.isfinite(bus):
            bounds[bus_name] = bus
        x = min(bounds.values())
        util: dict[str, float] = {
            "cpu": min(1.0, x * (call_cpu + sync_cpu) / self.cores),
            "memory": min(1.0, x * per_call / self.mem_bw),
        }
        for key, bound in bounds.items():
            if key not in ("client", "cpu", "memory", "pool"):
                util[key] = min(1.0, x / bound)
        # the pool runs at the pace the bounds allow: its leaves busy in proportion
        load = x * records_per_call / t.records_per_s
        for name, b in zip(names, leaf_busy(self.vdevs, t), strict=True):
            util[f"disk:{name}"] = min(1.0, b * load)
        threads = min(self.njobs, self.cores)
        client_busy = x * call_cpu / threads
        limit = limit_of(util, client_busy)
        # latency: the mean by Little's law (numjobs × iodepth calls outstanding)
        mean = self.njobs * self.slots / x if x > 0 else 0.0
        return SeqReadAnswer(x, bounds, util, limit, window, client_busy, mean)

    def _placement(self) -> Placement:
        pool = self.sc.pool
        fill = pool.fill
        if pool.allocated is not None:
            fill = pool.allocated / sum(v.space for v in self.vdevs)
        n = len(self.vdevs)
        return place(
            [v.space for v in self.vdevs],
            [v.read_asize for v in self.vdevs],
            [
                aliquot(self.version, v.top.data_disks, v.top.vdev.width, v.weight, n)
                for v in self.vdevs
            ],
            self.njobs,
            self.file_records,
            fill,
            1 << pool.ashift,
        )

    def _pool_table(
        self, placed: Placement, window: int, call_cpu: float, per_call: float, record: float
    ) -> StreamTable:
        """The whole pool's stream table: a stream per job over every vdev as the rotor
        placed its records, ``window`` records deep; a call ``call_cpu`` s of CPU for
        ``per_call`` records, a record's completion ``record`` s."""
        return pool_table(
            self.disk,
            [(v.top.vdev, v.space, v.read_asize) for v in self.vdevs],
            self.sc.pool.ashift,
            self.psize,
            placed.per_visit,
            placed.bases,
            self.file_records,
            self.njobs,
            window,
            self.version,
            self.sc.hardware,
            call_cpu,
            per_call,
            record,
            tuple(v.top.born for v in self.vdevs),
            draid_records(
                self.psize, self.sc.pool.ashift, [v.top.vdev for v in self.vdevs], self.njobs
            ),
        )
