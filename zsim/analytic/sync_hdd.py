"""Sync writes to HDD data vdevs without a SLOG, in the analytic engine: the commits between
txg syncs and during a txg's write-back, each from a table measured on the DES's own log,
vdev queues and drive model (:mod:`zsim.analytic.log_table`), in the shares of time the
write model's txg gives them.

* **Between syncs** a log table gives the commits' rate ``Q`` and the calls' latency
  distribution, pooled over draws of the platters' phases. Where those draws' rates differ
  by more than :data:`MAX_PHASE_SPREAD` the commits lock to the spindles' relative phases
  (the drive model's spindles keep exact time), the DES's answer depends on its seed, and
  the model declines.
* **The txg's write-back** (``spa_sync()``): every ``zfs_txg_timeout`` (or when the dirty
  records reach ``zfs_dirty_data_sync``) the txg writes its records and the indirect blocks
  they dirtied (:meth:`zsim.analytic.sync.SyncModel._metadata_per_record`; a random
  writer's records each dirty their own level-1 block, so the indirect blocks outweigh
  8 KiB records many times) to the same disks, the vdev queue aggregating them into writes
  of up to ``zfs_vdev_aggregation_limit``, then the uberblock with a flush. The drives take
  those into their caches at once and the next commit's flush destages them
  (``zil_lwb_flush_vdevs_done()`` → ``zio_flush()``; the drive model's destage on flush):
  a write-back the caches hold stops the commits for its destage, a larger one lets them
  through, slowly. A burst table runs one such write-back (:func:`write_back`) and gives its
  span ``B`` (from its start until the last call it overlapped returned) and the calls
  ``N_b`` that returned in it.
* **The mixture**: with ``T`` s between syncs, X = (Q·(T − B) + N_b) / T, solved by
  iteration within a shrinking bracket (``T`` and the write-back follow X; a new
  write-back is a new burst table).
  The calls' latencies mix the two tables' distributions by the calls made in each; the
  mean is the closed loop's (Little's law). The p99 is given only while the calls a
  write-back catches are under :data:`MAX_P99_BURST_CALLS` of all: past that it falls
  among them, and one txg's draw decides it.

Validity (:func:`zsim.analytic.sync_range.sync_validity`): whole-record O_SYNC or
``sync=always`` writes whose log records are ``WR_COPIED``; then, once solved, a phase
spread under :data:`MAX_PHASE_SPREAD` and bursts under :data:`MAX_BURST_SHARE` of the time
(the model takes each txg's write-back alone, not a backlog of them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zsim.analytic.log_table import (
    BurstTable,
    LogSpec,
    LogTable,
    WriteBack,
    burst_table,
    log_table,
)
from zsim.analytic.sync import SyncModel, sync_limit
from zsim.analytic.validity import OutOfRange
from zsim.analytic.zil_parts import mixture_percentiles
from zsim.layout.alloc import psize_to_asize
from zsim.result import DirectionStats
from zsim.zfs.indirect import indirect_block
from zsim.zfs.txg import async_write_max_active, txg_tunables

#: the largest share of time the txg's write-back may hold the disks: past it one txg's
#: write-back meets the next's, which this model does not queue
MAX_BURST_SHARE = 0.5
#: the largest spread of the log table's runs over the platters' phases
#: (:attr:`~zsim.analytic.log_table.LogTable.phase_spread`) the model answers at: past it
#: the commits lock to the spindles' relative phases and the DES's rate depends on its seed
MAX_PHASE_SPREAD = 0.1
#: the largest share of the calls a write-back may catch for the p99 to be given: past
#: half the 1 % tail the p99 falls among the calls it slowed, where one txg's draw in the
#: burst table decides it (the agreement runs missed by −47 … +750 % from 1 % up)
MAX_P99_BURST_CALLS = 0.005
#: the fixed point's relative tolerance and iterations (each new write-back is a burst
#: table's run)
TOLERANCE = 0.01
MAX_ITERATIONS = 10


def log_spec(m: SyncModel) -> LogSpec:
    """What the model's log tables run: its pool, jobs and CPU costs."""
    c = m.costs
    return LogSpec(
        profile=m.disk,
        vdevs=tuple((v.top.vdev, v.space) for v in m.vdevs),
        ashift=m.sc.pool.ashift,
        version=m.version,
        hardware=m.sc.hardware,
        jobs=m.njobs,
        nbytes=m.bs,
        recordsize=m.rs,
        call_cpu=m.call_cpu(),
        costs=c,
        cores=m.cores,
        taskq=m.taskq,
        at=tuple(v.hi for v in m.vdevs),
    )


def write_back(m: SyncModel, x: float) -> tuple[WriteBack, float]:
    """At ``x`` calls/s: one txg's write-back as a burst table issues it, and the s between
    syncs. Its records go in runs that put :func:`~zsim.analytic.writes.run_leaf_bytes` on
    each leaf (``WriteRun``'s aggregation), as many as carry the txg's allocated record
    bytes to each leaf (a mirror's children each write them whole; raidz and dRAID spread
    them, parity and padding included, over their children); its indirect blocks' copies
    as :meth:`SyncModel._metadata_per_record` counts them, each a level-1 block, a second
    copy a ditto distance away on a pool of one vdev."""
    records, period = m._txg_records(x)
    txg = txg_tunables(m.sc.hardware.ram, m.version)
    active = async_write_max_active(int(records * m.rs), txg)
    pool = m.sc.pool
    block, copies = indirect_block(1, m.file_records, pool.ashift, pool.redundant_metadata)
    meta = m._metadata_per_record(per_txg=records)["asize"]
    ditto = (copies - 1) / copies if len(m.vdevs) == 1 else 0.0
    runs, run_bytes, blocks, dittos = [], [], [], []
    for i, (v, (data, _, leaf_run, _)) in enumerate(zip(m.vdevs, m._vdev_shapes(), strict=True)):
        here = records * v.weight
        vdev = v.top.vdev
        spread = vdev.kind in ("raidz", "draid")
        per_leaf = here * v.asize / (len(vdev.devices) if spread else 1)
        runs.append(max(1, round(per_leaf / leaf_run)) if data > 0 else 0)
        # a block whose columns are leaf_run on each child: leaf_run on each data column
        run_bytes.append(leaf_run * v.top.data_disks)
        copies_here = here * meta[i] / psize_to_asize(vdev, block, pool.ashift)
        blocks.append(round(copies_here * (1.0 - ditto)))
        dittos.append(round(copies_here * ditto))
    wb = WriteBack(tuple(runs), tuple(run_bytes), tuple(blocks), tuple(dittos), block, active)
    return wb, period


def solve_hdd_pool(m: SyncModel) -> tuple[DirectionStats, str, dict[str, float], dict[str, Any]]:
    """The job's write direction, ``limit``, utilisations and details."""
    m._sync_setup()
    spec = log_spec(m)
    table = log_table(spec)
    q = table.commits_per_s
    if table.phase_spread > MAX_PHASE_SPREAD:
        _decline(
            f"the commits lock to the platters' relative phases (runs with three draws of "
            f"them differ by more than {MAX_PHASE_SPREAD:.0%}): a simulation's rate then "
            f"depends on its seed"
        )
    # X = (Q·(T − B) + N_b) / T: the burst table over the txg's write-back at X gives its
    # span B and the calls N_b that returned in it; T and the write-back follow X
    # X = g(X) with g falling in X: each step keeps a bracket [lo, hi] of the root and
    # moves to g(x) inside it, else to its middle
    x, lo, hi = q, 0.0, q
    bursts: BurstTable | None = None
    period = 0.0
    for _ in range(MAX_ITERATIONS):
        wb, period = write_back(m, x)
        bursts = burst_table(spec, wb)
        new_x = (q * (period - min(bursts.seconds, period)) + bursts.calls) / period
        if abs(new_x - x) <= TOLERANCE * x:
            break
        lo, hi = (lo, x) if new_x < x else (x, hi)
        x = new_x if lo < new_x < hi else 0.5 * (lo + hi)
    else:
        _decline("the rate and the txg's write-back it sets did not settle")
    assert bursts is not None
    burst = min(bursts.seconds, period)
    if bursts.seconds > MAX_BURST_SHARE * period:
        _decline(
            f"the txg write-back holds the disks more than {MAX_BURST_SHARE:.0%} of the time: "
            f"one txg's write-back then meets the next's, which this engine does not queue"
        )
    _, txg_bounds = m._write_bounds(None)
    txg_bounds.pop("client", None)
    host = {k: b for k, b in txg_bounds.items() if not k.startswith("vdev")}
    if any(x >= b for b in host.values()):
        _decline("the txg write-back cannot keep up with the sync writes (the host)")
    share = burst / period
    util: dict[str, float] = {k: min(1.0, x / b) for k, b in host.items()}
    i = 0
    for v in m.vdevs:
        width = len(v.top.vdev.devices)
        # the platters' phases set which leaf of a vdev waits longest for its flushes; the
        # DES draws its own, so each leaf gets its vdev's mean; in a burst the disks are busy
        mean = float(np.mean(table.leaf_busy[i : i + width]))
        for name in v.top.vdev.devices:
            util[f"disk:{name}"] = min(1.0, mean * (1.0 - share) + share)
        i += width
    c = m.costs
    lwb_cpu = (c.zio + table.lwb_bytes * c.checksum_per_byte) / table.commits_per_lwb
    cpu = m.call_cpu()
    util["cpu"] = max(util.get("cpu", 0.0), min(1.0, x * (cpu + lwb_cpu) / m.cores))
    n, per = m.njobs, m.per_commit
    cycle = n * per / x  # a job's time between commits, bursts included
    commit = cycle - per * cpu
    mean = m.slots * cycle
    p50: float | None = None
    p99: float | None = None
    if m.slots == 1:
        p50, p99 = _percentiles(table, bursts, q * (period - burst), float(bursts.calls))
        if bursts.calls > MAX_P99_BURST_CALLS * x * period:
            p99 = None
    write = DirectionStats(
        bytes_per_s=x * m.bs, iops=x, latency_mean=mean, latency_p50=p50, latency_p99=p99
    )
    details = {
        "clients": m.clients,
        "validity": "in range",
        "zil_commits_per_lwb": table.commits_per_lwb,
        "zil_lwb_bytes": table.lwb_bytes,
        "zil_indirect": False,
        "zil_commit_mean_s": commit,
        "zil_commits_between_txgs_per_s": q,
        "zil_calls_per_write_back": bursts.calls,
        "zil_phase_spread": table.phase_spread,
        "txg_write_back_s": burst,
        "txg_period_s": period,
        "p99_modelled": p99 is not None,
        "slog": False,
        "call_cycle_s": cycle,
        **{f"bound_{k}_calls_per_s": b for k, b in txg_bounds.items()},
    }
    limit = sync_limit(util, commit > 0.5 * per * mean, cpu * x, min(m.clients, m.cores))
    return write, limit, util, details


def _decline(reason: str) -> None:
    raise OutOfRange(
        f"outside the analytic engine's validity range: {reason} (modelled by the DES only); "
        f"use --engine des"
    )


def _percentiles(
    quiet: LogTable, burst: BurstTable, quiet_calls: float, burst_calls: float
) -> tuple[float, float]:
    """p50 and p99 of a call's latency: the two tables' distributions (101 percentiles
    each) weighted by the calls made between syncs and during write-backs."""
    values = [*quiet.call_quantiles, *burst.call_quantiles]
    total = quiet_calls + burst_calls
    wq = quiet_calls / total / len(quiet.call_quantiles)
    wb = burst_calls / total / len(burst.call_quantiles)
    weights = [wq] * len(quiet.call_quantiles) + [wb] * len(burst.call_quantiles)
    return mixture_percentiles(values, weights)
