"""The ZIL model's pure sub-models (:mod:`zsim.analytic.sync` puts them together): log
records and blocks (``zil.c``, ``zfs_log.c``), commit chains and batching, the allocation
rotor's aliquot, the txg's CPU burst, and a flash leaf's units under the log's writes and
flushes (the DES's own ``Device`` rule and :func:`zsim.hardware.flash.service_time`).
Times in seconds, sizes in bytes, rates per second.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from zsim.hardware import flash
from zsim.units import KiB, MiB
from zsim.zfs.zil import LR_WRITE_BYTES, ZIL_CHAIN_BYTES, ZIL_MAX_BLOCK

#: a leaf's units may be offered at most this share of their time (beyond it, no steady state)
MAX_OFFERED = 0.98


def itx_log_bytes(nbytes: int, indirect: bool) -> int:
    """Bytes a write's log record takes in an lwb: the ``lr_write_t`` (192 B), plus the data
    rounded up to 8 B when it is copied into the log (``WR_COPIED``); ``zfs_log.c``
    ``zfs_log_write()``, as :meth:`zsim.des.zil.Zil.log_write`."""
    return LR_WRITE_BYTES + (0 if indirect else -(-nbytes // 8) * 8)


@dataclass(frozen=True)
class LwbPlan:
    """The log blocks one batch of commits fills (``zil_lwb_assign()``: an itx that does not
    fit issues the open lwb and starts a new one; a fresh lwb takes any one itx).

    ``lwbs``: log blocks per batch; ``full_bytes``: used bytes of each full one (issued at
    once); ``last_bytes``: used bytes of the last (issued at the commit timeout)."""

    lwbs: int
    full_bytes: int
    last_bytes: int


def lwb_plan(itxs: float, itx_bytes: int) -> LwbPlan:
    """How a batch of ``itxs`` log records of ``itx_bytes`` each fills lwbs of
    ``zil_maxblocksize`` = 128 KiB (``zil.c``; sizes include the 184 B ``zil_chain_t``)."""
    per_lwb = max(1, (ZIL_MAX_BLOCK - ZIL_CHAIN_BYTES) // itx_bytes)
    n = max(1.0, itxs)
    lwbs = max(1, math.ceil(n / per_lwb - 1e-9))
    last = n - (lwbs - 1) * per_lwb
    return LwbPlan(
        lwbs=lwbs,
        full_bytes=ZIL_CHAIN_BYTES + per_lwb * itx_bytes,
        last_bytes=round(ZIL_CHAIN_BYTES + last * itx_bytes),
    )


def commits_per_lwb(jobs: int, lone_split: bool) -> float:
    """Commits sharing an lwb when ``jobs`` jobs commit every call. Jobs released together
    commit together and share an lwb (chains); chains merge when one's commits find the
    other's lwb open. Without the single-threaded rule (before 2.2) nothing splits them: all
    ``jobs`` share each lwb. With it (``lone_split``) a chain that finds no commit waiting
    issues its first commit alone, so two chains alternate: ``jobs`` / 2 per lwb."""
    if jobs <= 1:
        return 1.0
    return jobs / 2.0 if lone_split else float(jobs)


def rotor_aliquot(version_2_2: bool, version_2_4: bool, data_disks: int, width: int) -> int:
    """Bytes the allocation rotor places on a vdev per visit (``mg_aliquot``, metaslab.c;
    ``ZfsModel._aliquot`` with equal vdevs): 512 KiB × children up to 2.1, 1 MiB × data
    disks in 2.2–2.3, 2 MiB × data disks from 2.4."""
    if version_2_4:
        return 2 * MiB * data_disks
    if version_2_2:
        return MiB * data_disks
    return 512 * KiB * width


def busiest_vdev_records(records: float, per_visit: int) -> float:
    """Of ``records`` consecutive records the rotor places ``per_visit`` to a vdev, the
    expected number on the vdev that gets the most, over where in a visit they start
    (uniformly): a batch of dmu_sync writes waits for that vdev's share."""
    n = max(1, round(records))
    a = max(1, per_visit)
    total = 0
    for start in range(a):
        first = min(n, a - start)
        parts = [first]
        left = n - first
        while left > 0:
            parts.append(min(a, left))
            left -= a
        total += max(parts)
    return total / a


def lone_probability(jobs: int, think: float, commit: float, lone_split: bool) -> float:
    """P(a commit finds no other commit waiting), which from 2.2 issues its lwb at once: each
    other job is outside its commit a share ``think`` / (``think`` + ``commit``) of its
    cycle. One job is always alone; before 2.2 the rule does not exist (0)."""
    if not lone_split:
        return 0.0
    if jobs <= 1:
        return 1.0
    free = think / (think + commit) if think + commit > 0 else 1.0
    return float(free ** (jobs - 1))


def burst_stall(burst: float, cycle: float) -> float:
    """Seconds a job loses to one txg's burst of taskq CPU work, s. ``spa_sync()`` queues a
    whole txg's record and indirect-block work on the zio taskq threads at once, and an
    lwb's checksum (its zio's issue) queues behind it (``CpuPool``: background work FIFO),
    so a commit reaching its lwb's CPU during the ``burst`` s waits for its end. A job's
    lwb CPU falls at a uniform point of its ``cycle``: with burst ≥ cycle it is caught
    within the first cycle and waits burst − cycle/2 on average; with a shorter burst it
    is caught with probability burst/cycle and waits burst/2: burst²/(2·cycle)."""
    if burst <= 0 or cycle <= 0:
        return 0.0
    if burst >= cycle:
        return burst - cycle / 2
    return burst * burst / (2 * cycle)


@dataclass(frozen=True)
class LeafLoad:
    """One stream of I/Os at a flash leaf: ``rate`` per s of writes of ``nbytes`` (0: a bare
    cache flush); ``flush``: it carries a cache flush (FUA, or the bare flush itself).
    ``together``: I/Os of the stream issued at once (a batch's records or lwbs on this
    leaf), which share the leaf's units and bandwidth; ``closed``: the stream belongs to the
    commit chains (a chain has one batch in flight), not to the open txg write-back."""

    rate: float
    nbytes: int
    flush: bool
    together: float = 1.0
    closed: bool = True


def flash_hold(params: flash.FlashParams, nbytes: int, flush: bool, busy: float) -> float:
    """Seconds one I/O holds a unit of a flash drive with ``busy`` units busy (itself
    included): the drive model's write service (:func:`zsim.hardware.flash.service_time`,
    write cache not past its cliff), plus the flush time when it carries one — as
    ``zsim.machine.resources.Device._start``: ``flush_latency + (service if nbytes)``."""
    service = flash.service_time(params, nbytes, True, 0, busy=max(1.0, busy)) if nbytes else 0.0  # type: ignore[arg-type]
    return (params.flush_latency if flush else 0.0) + service


def erlang_c_wait(offered: float, units: int, hold: float) -> float:
    """Mean wait for a unit in an M/M/c queue with ``units`` servers offered ``offered``
    Erlangs, mean hold ``hold`` s (Erlang C by the Erlang B recursion; Kleinrock,
    *Queueing Systems* I, 1975, §3.5). ``inf`` at or past saturation."""
    if offered <= 0 or hold <= 0:
        return 0.0
    if offered >= units:
        return math.inf
    b = 1.0
    for k in range(1, units + 1):
        b = offered * b / (k + offered * b)
    c = units * b / (units - offered * (1.0 - b))
    return c * hold / (units - offered)


def batch_completion(
    params: flash.FlashParams, n: float, nbytes: int, flush: bool, others: float
) -> float:
    """Seconds until the last of ``n`` I/Os issued at once to a flash drive is done, with
    ``others`` units held by other work: the DES's ``Device`` rule replayed — an I/O starts
    when a unit is free and holds it for :func:`flash_hold` at the units busy as it starts
    (itself included), so the batch shares the drive's bandwidth as it would there."""
    units = params.parallelism
    count = max(1, round(n))
    free_units = max(1, units - min(units - 1, int(others)))
    running: list[float] = []
    t = 0.0
    for _ in range(count):
        if len(running) >= free_units:
            t = heapq.heappop(running)
        busy = min(float(units), others + len(running) + 1)
        heapq.heappush(running, t + flash_hold(params, nbytes, flush, busy))
    return max(running)


@dataclass(frozen=True)
class LeafState:
    """A flash leaf in steady state: mean units ``busy``, each stream's time from issue to
    the last of its batch done (s, in the order given: the wait for a unit, then the batch),
    and the busy share the DES reports."""

    busy: float
    done: tuple[float, ...]
    util: float


def leaf_state(
    params: flash.FlashParams, loads: list[LeafLoad], chains: int, held: float = 0.0
) -> LeafState:
    """A flash leaf serving ``loads``, ``chains`` commit chains sharing it, ``held`` units
    kept busy by other work (a txg's write-back burst). Units busy by Little's law
    (Σ rate × hold: a fixed point, each hold at the units an I/O finds busy as it starts,
    itself included — ``Device._start``). An I/O of a chain finds the open streams' units,
    the *other* chains' (the arrival theorem: a closed chain does not meet itself) and its
    own batch (:func:`batch_completion`). The wait for a unit is M/M/c's
    (:func:`erlang_c_wait`) for the units ``held`` leaves free. The busy share is
    ``Device.utilization``'s: the larger of units in use and bytes over the rated write
    bandwidth."""
    units = params.parallelism
    others = (chains - 1) / chains if chains > 1 else 0.0
    k_open = k_closed = 0.0
    holds: tuple[float, ...] = ()
    for _ in range(80):
        seen = [
            held + (k_open + k_closed * others + min(ld.together, units) if ld.closed
                    else k_open + k_closed + 1.0)
            for ld in loads
        ]  # fmt: skip
        holds = tuple(
            flash_hold(params, ld.nbytes, ld.flush, min(float(units), b))
            for ld, b in zip(loads, seen, strict=True)
        )
        new_open = sum(ld.rate * h for ld, h in zip(loads, holds, strict=True) if not ld.closed)
        new_closed = sum(ld.rate * h for ld, h in zip(loads, holds, strict=True) if ld.closed)
        change = abs(new_open - k_open) + abs(new_closed - k_closed)
        k_open, k_closed = new_open, new_closed
        if change <= 1e-7 * max(1.0, k_open + k_closed):
            break
    busy = held + k_open + k_closed
    rate = sum(ld.rate for ld in loads)
    mean_hold = (k_open + k_closed) / rate if rate > 0 else 0.0
    # units a burst holds are taken out of service; the others' I/Os queue for the rest
    free = max(1, units - int(held))
    offered = min(k_open + k_closed * others, MAX_OFFERED * free)
    # a closed population queues no more than the units the others hold: the wait is at
    # most their work ahead, spread over the free units
    wait = min(erlang_c_wait(offered, free, mean_hold), offered * mean_hold / free)
    background = held + k_open + k_closed * others
    done = tuple(
        wait + batch_completion(params, ld.together, ld.nbytes, ld.flush, background)
        if ld.rate > 0
        else 0.0
        for ld in loads
    )
    by_bytes = sum(ld.rate * ld.nbytes for ld in loads) / params.write_bw
    return LeafState(busy, done, min(1.0, max(busy / units, by_bytes)))


def mixture_percentiles(values: list[float], weights: list[float]) -> tuple[float, float]:
    """p50 and p99 of a discrete distribution: ``values`` (s) with ``weights`` summing to 1
    (the first value whose cumulative weight reaches each level)."""
    order = np.argsort(values)
    v = np.asarray(values)[order]
    cum = np.cumsum(np.asarray(weights)[order])
    p50 = float(v[min(len(v) - 1, int(np.searchsorted(cum, 0.5)))])
    p99 = float(v[min(len(v) - 1, int(np.searchsorted(cum, 0.99)))])
    return p50, p99
