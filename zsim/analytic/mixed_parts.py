"""The mixed model's pure parts (:mod:`zsim.analytic.mixed`): a txg's leaf writes and the
share of a disk's time they take beside the reads, how often txgs sync, the share of time the
txg's CPU burst holds the taskq threads, and the fixed point the model solves.

Sources: ``module/zfs/vdev_queue.c`` (async writes aggregated, 2…10 active by dirty data),
``dsl_pool.c``/``txg.c`` (a sync at ``zfs_dirty_data_sync_percent`` or every
``zfs_txg_timeout`` s); regula falsi (Illinois) for the fixed point.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: the most network solutions the fixed point spends
FIXED_POINT_ITERATIONS = 40
#: relative tolerance of the fixed point X = X_net(1 − u_w(X))
FIXED_POINT_RTOL = 1e-4


@dataclass(frozen=True)
class LeafWrites:
    """One vdev's leaves' write load per call (averaged over the leaves: raidz rotates its
    columns, mirrors and stripes write every child alike).

    ``ios``: aggregated leaf writes per call; ``stream``: s of one such write streaming at
    the async-write depth; ``position``: s of one positioning back to the write area;
    ``tail``: s of the per-txg work on each leaf (the uberblock write and flush, and the
    positioning back to the data)."""

    ios: float
    stream: float
    position: float
    tail: float
    #: aggregated leaf writes per call with the txg's records spread evenly over the leaves
    #: (dRAID: ``ios`` is the busiest child's, which the reads wait for, while over time
    #: every child takes its turn; what a leaf is busy on average; else equal to ``ios``)
    mean_ios: float
    #: units of a flash leaf the txg's write burst holds (0 on disks)
    held: int
    #: s of that burst per aggregated write: one over the leaf's write rate at ``held``
    #: outstanding (0 on disks)
    burst: float


def leaf_write_share(
    calls_per_s: float, load: LeafWrites, txgs_per_s: float, read_busy: float
) -> float:
    """The share of a leaf's time its async writes take, 0…1 (may exceed 1: more than the
    leaf can write). Each aggregated write streams (``load.stream``) and, when a read took
    the head since the leaf's last write (probability ``read_busy``, the leaf's read
    utilisation), first seeks back (``load.position``); each txg adds ``load.tail``."""
    per_io = load.stream + min(1.0, max(0.0, read_busy)) * load.position
    return calls_per_s * load.ios * per_io + txgs_per_s * load.tail


def txgs_per_second(write_bytes_per_s: float, sync_bytes: float, timeout: float) -> float:
    """Txgs synced per second: one whenever the open txg reaches ``sync_bytes``
    (``zfs_dirty_data_sync_percent`` of ``zfs_dirty_data_max``), at least one per
    ``timeout`` (``zfs_txg_timeout``) while anything is dirty (``txg_sync_thread()``)."""
    if write_bytes_per_s <= 0:
        return 0.0
    return max(1.0 / timeout, write_bytes_per_s / sync_bytes)


def cpu_burst_share(writes_per_s: float, record_cpu: float, taskq: int) -> float:
    """The share of time the txg's CPU burst holds the taskq threads, 0…1. A sync hands
    every dirty record's checksum, compression and parity to the taskq at once
    (``ZfsModel._start_sync``); the ``taskq`` threads (80 % of the cores,
    ``zio_taskq_batch_pct``) run them at raised priority, so for that time the clients have
    the other cores only, and a read's completion (also taskq work, FIFO) waits for the burst
    to end. ``record_cpu`` s per record at ``writes_per_s`` records/s."""
    return min(1.0, max(0.0, writes_per_s * record_cpu / taskq)) if taskq > 0 else 0.0


def outside_burst(write_share: float, burst: float) -> float:
    """The leaves' write share of the time outside the txg's CPU burst. The sync writes
    each record as soon as its CPU work is done (``ZfsModel._write_record``), so the leaves
    write while the burst holds the clients, and only the writing that outlasts the
    burst, max(0, u_w − b), takes time from the reads: as a share of the 1 − b left."""
    if burst >= 1.0:
        return 0.0
    return max(0.0, write_share - burst) / (1.0 - burst)


def fixed_point(f: Callable[[float], float], hi: float) -> float:
    """The X in (0, ``hi``] with f(X) = X for a non-increasing ``f`` (the network's
    throughput when the leaves lose the writes' share at X); ``hi`` if f(hi) ≥ hi.
    Regula falsi (Illinois) on g(X) = f(X) − X, which is strictly decreasing."""
    g_hi = f(hi) - hi
    if g_hi >= 0:
        return hi
    lo, g_lo = 0.0, f(0.0)
    if g_lo <= 0:
        return 0.0
    side = 0
    x = hi
    for _ in range(FIXED_POINT_ITERATIONS):
        x = (lo * g_hi - hi * g_lo) / (g_hi - g_lo)
        gx = f(x) - x
        if abs(gx) <= FIXED_POINT_RTOL * max(x, 1e-12) or hi - lo <= FIXED_POINT_RTOL * hi:
            return x
        if gx > 0:
            lo, g_lo = x, gx
            if side == 1:
                g_hi /= 2
            side = 1
        else:
            hi, g_hi = x, gx
            if side == -1:
                g_lo /= 2
            side = -1
    return x
