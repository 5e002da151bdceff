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
* **Mixed random reads and writes, and random writes of part of a record**
  (:mod:`zsim.analytic.mixed`): the read network with the txg's write bursts taking their
  share of the leaves; a write inside a record reads the record first when it is not in
  memory (read-modify-write), so it visits the read network too.
* **Sequential reads** (:mod:`zsim.analytic.seqread`): the jobs' zfetch streams served by a
  stream table (:mod:`zsim.analytic.seqstreams`: the DES's vdev layer run in a closed loop
  of the jobs), bounded by the clients, the CPU, the memory bus and the bus stages.

Validity range: where a class of scenarios has no form here, :func:`simulate_analytic` raises
:class:`zsim.analytic.validity.OutOfRange` saying so ("outside the analytic engine's validity
range") — it never answers a case it cannot model. See :func:`zsim.analytic.validity.validity`
and ``docs/analytic.md``.

Modules: :mod:`~zsim.analytic.validity` (the range), :mod:`~zsim.analytic.demands` (the pool,
clients and machine as both models see them), :mod:`~zsim.analytic.reads`,
:mod:`~zsim.analytic.writes`; this one puts them together and shapes the result.
"""

from __future__ import annotations

import time
from typing import Any

from zsim.analytic.mixed import MixedModel
from zsim.analytic.reads import ReadModel
from zsim.analytic.seqread import SeqReadModel
from zsim.analytic.sync import SyncModel
from zsim.analytic.sync_hdd import solve_hdd_pool
from zsim.analytic.sync_range import hdd_log_path, sync_writes
from zsim.analytic.validity import OutOfRange, validity
from zsim.analytic.writes import WriteModel
from zsim.result import DirectionStats, SimResult
from zsim.scenario import Scenario


def simulate_analytic(sc: Scenario, seed: int = 1) -> SimResult:
    """Predict the scenario's fio job with the analytic engine (see the module docstring)."""
    start = time.perf_counter()
    reason = validity(sc)
    if reason is not None:
        raise OutOfRange(
            f"outside the analytic engine's validity range: {reason}; use --engine des"
        )
    w = sc.workload
    partial = w.bs is not None and w.bs < sc.pool.recordsize
    if w.rw == "randrw" or (w.rw == "randwrite" and partial):
        # (random writes of part of a record read it first: the mixed model's network)
        read, write, limit, util, details = MixedModel(sc, seed).solve()
    elif sc.workload.rw == "read":
        read, limit, util, details = SeqReadModel(sc, seed).solve()
        write = DirectionStats()
    elif sync_writes(sc):  # O_SYNC / sync=always commits through the ZIL
        model = SyncModel(sc, seed)
        if hdd_log_path(sc):  # HDD data vdevs without a SLOG: log and burst tables
            write, limit, util, details = solve_hdd_pool(model)
        else:
            write, limit, util, details = model.solve_sync()
        read = DirectionStats()
    else:
        read, write, limit, util, details = _Model(sc, seed).solve()
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


class _Model(ReadModel, WriteModel):
    """The scenario's read or write job, solved (:meth:`solve`)."""

    def solve(self) -> tuple[DirectionStats, DirectionStats, str, dict[str, float], dict]:
        details: dict[str, Any] = {
            "arc_hit_ratio": self.hit if self.reads else None,
            "clients": self.clients,
            "validity": "in range",
        }
        if self.reads:
            x, util = self._read()
            mean, p50_s, p99_s = self._read_latency(x, self.seed)
            p50: float | None = p50_s
            p99: float | None = p99_s
            if any(v.top.vdev.kind == "draid" for v in self.vdevs):
                # a dRAID record's columns sit on the children its slice's permutation
                # gives, a different set along the file: the tail of the slowest column
                # over those is not modelled (−40 … +31 % against the DES's p99); the mean
                # is Little's law
                p50 = p99 = None
            read = _direction(x, self.bs, mean, p50, p99)
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


def _direction(
    x: float, bs: int, mean: float, p50: float | None, p99: float | None
) -> DirectionStats:
    return DirectionStats(
        bytes_per_s=x * bs, iops=x, latency_mean=mean, latency_p50=p50, latency_p99=p99
    )


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
