"""Log tables: how fast HDD data vdevs commit the ZIL without a SLOG, measured on the
discrete-event engine's own intent log, vdev queues and drive model (the analytic engine's
model of those sync writes, :mod:`zsim.analytic.sync_hdd`, adds the txg's write-back).

Without a SLOG a commit's log block (lwb) goes to a data vdev in turn, and the commit waits
for a cache flush of every leaf of that vdev (``zil_lwb_write_issue()``,
``zil_lwb_flush_vdevs_done()``, ``module/zfs/zil.c``; :mod:`zsim.des.zil`). On a drive with
a volatile write cache the write is taken into the cache at once and the flush makes the
drive put it on the platter: the head is near the log's last block (the lwbs follow each
other in the vdev's embedded log metaslab), but the platter has turned since it was
written, so the commit waits for most of a rotation, a share that depends on the timing of
the jobs' commits against the turn of every spindle the lwb touches. That is what the
drive model simulates (:func:`zsim.hardware.hdd.access_time`: write-back cache, destage on
flush, the platter's angle) and no closed form gives, so this module runs it rather than
re-derive it, as :mod:`zsim.analytic.seqstreams` runs the vdev layer for sequential reads.

A table is the pool's data vdevs built as :class:`zsim.des.engine.Engine` builds them
(leaf queues, devices with a random platter phase, their bus stages) under the DES's own
:class:`zsim.des.zil.Zil` (batching, the commit timeout, a lone commit's lwb issued at once,
the vdev rotor, the flushes), with ``jobs`` closed-loop jobs each making one O_SYNC call at a
time as ``Engine.call`` and ``_log_and_commit`` do: the call's CPU (syscall and copy) on a
core, its log record, the commit. The table has no txg: the write-back's bursts on the same
disks are the caller's to add, from a *burst table*: the same loop over one txg's
write-back, issued at once on every vdev as ``spa_sync()`` issues it (data runs, then the
indirect blocks' copies, placed by the vdev's own allocator from the txg's cursor, a ditto
copy 1/8 of the vdev away; ``zfs_vdev_async_write_max_active`` in flight per leaf, as the
dirty data sets it). The drives take the writes into their caches and a commit's flush then
destages them: a write-back that fits the caches holds the commits for about its length,
a larger one lets them through, slowly, as each flush destages what arrived since the last.
The burst table measures how long the commits are held or slowed and the calls meanwhile.

A log table measures :data:`MEASURED_COMMITS` commits after :data:`WARMUP_COMMITS` per draw
of the platters' phases, a burst table one write-back after as many commits; tables are
cached in memory and on disk (:mod:`zsim.table_cache`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import simpy

from zsim.analytic.devices import quantize_fraction
from zsim.analytic.seqstreams import bus_signature, round_cpu, vdev_paths
from zsim.des.engine import spindle_phase
from zsim.des.txg_runs import TxgState, uberblock_zio
from zsim.des.vdev import ASYNC_WRITE, Countdown, LeafQueue, TopVdev, aggregation_limit
from zsim.des.zil import Zil
from zsim.hardware import hdd
from zsim.hardware.catalog import Profile
from zsim.layout.alloc import psize_to_asize
from zsim.layout.tree import Vdev
from zsim.machine.collector import collector_paused
from zsim.machine.costs import CpuCosts
from zsim.machine.resources import CpuPool, Device
from zsim.machine.resources import Path as BusPath
from zsim.scenario import Hardware
from zsim.table_cache import load_or_measure, profile_key, register_kind
from zsim.zfs.version import ZfsVersion

#: commits measured per seed, after :data:`WARMUP_COMMITS` (the platters' phases against
#: the commits' cycle settle within a few hundred)
MEASURED_COMMITS = 600
WARMUP_COMMITS = 150
#: the seeds of the platters' phases the table runs with and pools. The drive model's
#: spindles turn at exactly the rated speed, so a run keeps the relative phases it was
#: drawn with, and commits whose log blocks span a few spindles (a mirror's children) can
#: lock to them: the DES's rate then depends on its seed (913 or 1535 commits/s for
#: eight jobs on a 2x mirror 2 under 2.1, by seed). The table pools three draws and
#: reports their spread (:attr:`LogTable.phase_spread`)
PHASE_SEEDS = (12345, 23456, 34567)
#: two draws whose rates differ by less than this show a pool the phases do not move (most
#: do not: a commit then waits for the slowest of several spindles whatever their phases),
#: and the third is not run
SAME_RUNS = 0.005


@dataclass(frozen=True)
class LogSpec:
    """What a log table runs: ``jobs`` O_SYNC writers of ``nbytes`` per call (whole records
    of ``recordsize``, their log records ``WR_COPIED``), each call ``call_cpu`` s of CPU, on
    the data ``vdevs`` ((vdev, allocatable bytes) each, ``ashift``) of ``profile`` drives
    behind ``hardware``'s bus, ``cores`` cores of which ``taskq`` run the log's checksums;
    ``at``: per vdev, where the log and the txg allocate (a fraction of its space: the
    allocation cursor after the working files, ``ZfsModel.place_files``, from which the DES's
    ``Zil`` starts its log too)."""

    profile: Profile
    vdevs: tuple[tuple[Vdev, int], ...]
    ashift: int
    version: ZfsVersion
    hardware: Hardware
    jobs: int
    nbytes: int
    recordsize: int
    call_cpu: float
    costs: CpuCosts
    cores: int
    taskq: int
    at: tuple[float, ...]

    def key(self) -> tuple[Any, ...]:
        names = tuple(d for v, _ in self.vdevs for d in v.devices)
        p = self.profile
        return (
            profile_key(p),
            tuple(
                (v.kind, len(v.devices), v.parity, v.ndata, v.nspares, sp) for v, sp in self.vdevs
            ),
            int(self.ashift),
            str(self.version),
            tuple(bus_signature(self.hardware, names, v, p) for v, _ in self.vdevs),
            int(self.jobs),
            int(self.nbytes),
            int(self.recordsize),
            round_cpu(self.call_cpu),
            round_cpu(self.costs.zio),
            round_cpu(self.costs.checksum_per_byte),
            int(self.cores),
            int(self.taskq),
            tuple(quantize_fraction(a) for a in self.at),
        )


@dataclass(frozen=True)
class WriteBack:
    """One txg's write-back as a burst table issues it, per data vdev: ``runs`` aggregated
    data writes of ``run_bytes`` (vdev bytes each: a run of records, ``ZfsModel._issue_run``),
    ``blocks`` indirect-block copies of ``block_bytes`` allocated after them and ``dittos``
    more a ditto distance away (a second copy on a pool of one vdev,
    ``TopVdev.allocate_ditto``), from the txg's cursor (:attr:`LogSpec.at`); ``active`` async
    writes in flight per leaf."""

    runs: tuple[int, ...]
    run_bytes: tuple[int, ...]
    blocks: tuple[int, ...]
    dittos: tuple[int, ...]
    block_bytes: int
    active: int


@dataclass(frozen=True)
class LogTable:
    """``jobs`` O_SYNC writers committing through the log on the pool's data vdevs.

    ``commits_per_s``: commits of all jobs per second (the mean of the runs with the
    seeds of the platters' phases, :data:`PHASE_SEEDS`), ``phase_spread`` the largest
    over the smallest of those runs' rates, less one; ``call_mean``: a call's mean latency
    (its CPU and its commit), s, and ``call_quantiles`` its 0th, 1st, ..., 100th
    percentiles; ``commit_mean``: a commit's time, s; ``commits_per_lwb``: commits each log
    block carried; ``lwb_bytes``: its mean used bytes; ``leaf_busy``: each leaf's busy
    fraction (0-1, as the DES counts it), the leaves of every data vdev in order.
    """

    commits_per_s: float
    phase_spread: float
    call_mean: float
    call_quantiles: tuple[float, ...]
    commit_mean: float
    commits_per_lwb: float
    lwb_bytes: float
    leaf_busy: tuple[float, ...]


@dataclass(frozen=True)
class BurstTable:
    """The same writers over one txg's write-back (:class:`WriteBack`), issued at once as
    ``spa_sync()`` issues it: ``seconds`` from its start until the last call it overlapped
    returned (its last write done, or later), ``calls`` the calls that returned
    meanwhile and ``call_quantiles`` their latencies' 0th … 100th percentiles, s."""

    seconds: float
    calls: int
    call_quantiles: tuple[float, ...]


def log_table(spec: LogSpec) -> LogTable:
    """The table of ``spec`` between txg syncs. Cached."""
    key = spec.key()
    table = _CACHE.get(key)
    if table is None:
        table = load_or_measure("logs", key, lambda: measure(spec), _decode, dataclasses.asdict)
        _CACHE[key] = table
    return table


def burst_table(spec: LogSpec, write_back: WriteBack) -> BurstTable:
    """The table of ``spec`` over ``write_back`` (one draw of the phases: the write-back's
    seeks and transfers break the commits' lock to the platters). Cached."""
    wb = write_back
    key = (*spec.key(), wb.runs, wb.run_bytes, wb.blocks, wb.dittos, wb.block_bytes, wb.active)
    table = _BURSTS.get(key)
    if table is None:
        table = load_or_measure("logbursts", key, lambda: measure_burst(spec, wb),
                                _decode_burst, dataclasses.asdict)  # fmt: skip
        _BURSTS[key] = table
    return table


@dataclass
class _LogPool:
    """The pool as a lone :class:`Zil` sees it (:class:`zsim.des.zil.ZilPool`): its data
    vdevs, the CPU, the costs; a txg that never syncs. Log records here are ``WR_COPIED``:
    nothing is allocated for ``dmu_sync()``."""

    env: simpy.Environment
    version: ZfsVersion
    tops: list[TopVdev]
    costs: CpuCosts
    cpu: CpuPool
    recordsize: int
    psize: int
    asizes: list[int] = field(default_factory=list)
    location: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    txg: TxgState = field(default_factory=TxgState)

    @property
    def open(self) -> TxgState:
        return self.txg

    def next_vdev(self, psize: int | None = None) -> int:
        raise AssertionError("a log table's records are WR_COPIED: dmu_sync() never runs")

    def presync(self, key: tuple[int, int]) -> None:
        raise AssertionError("a log table's records are WR_COPIED: dmu_sync() never runs")


def measure(spec: LogSpec, seeds: tuple[int, ...] = PHASE_SEEDS) -> LogTable:
    """Run the closed loop the module docstring describes once per seed of the platters'
    phases (the first two only, when they agree within :data:`SAME_RUNS`) and pool the
    runs (uncached)."""
    runs: list[_Run] = []
    for seed in seeds:
        runs.append(_measure_one(spec, seed))
        rates = [r.rate for r in runs]
        if len(runs) == 2 and max(rates) / min(rates) - 1.0 < SAME_RUNS:
            break  # the phases do not matter here: a third draw would repeat the first two
    rates = [r.rate for r in runs]
    lat = np.concatenate([np.asarray(r.latencies) for r in runs])
    lwbs = max(1, sum(r.lwbs for r in runs))
    commits = sum(r.commits for r in runs)
    return LogTable(
        commits_per_s=float(np.mean(rates)),
        phase_spread=max(rates) / min(rates) - 1.0,
        call_mean=float(lat.mean()),
        call_quantiles=_quantiles(lat),
        commit_mean=sum(r.commit_time for r in runs) / max(1, commits),
        commits_per_lwb=commits / lwbs,
        lwb_bytes=sum(r.log_bytes for r in runs) / lwbs,
        leaf_busy=tuple(min(1.0, float(b)) for b in np.mean([r.busy for r in runs], axis=0)),
    )


def measure_burst(spec: LogSpec, write_back: WriteBack, seed: int = PHASE_SEEDS[0]) -> BurstTable:
    """Run the closed loop over one txg's ``write_back`` (uncached)."""
    run = _measure_one(spec, seed, write_back)
    lat = np.asarray(run.latencies)
    return BurstTable(
        seconds=run.span,
        calls=len(run.latencies),
        call_quantiles=_quantiles(lat) if len(lat) else (0.0,) * 101,
    )


@dataclass(frozen=True)
class _Run:
    """One run's measures: commits/s, the calls' latencies (s), the commits' summed time,
    commits, lwbs, log bytes, each leaf's busy share, and the span measured, s."""

    rate: float
    latencies: list[float]
    commit_time: float
    commits: int
    lwbs: int
    log_bytes: int
    busy: list[float]
    span: float


def _measure_one(spec: LogSpec, seed: int, write_back: WriteBack | None = None) -> _Run:
    """One run of the closed loop, the platters' phases drawn from ``seed``: between syncs
    over a count of commits, or during ``write_back`` over a span of time."""
    env = simpy.Environment()
    model = hdd.hdd_params(spec.profile)
    rng = np.random.default_rng(seed)
    agg = aggregation_limit(True, spec.version)
    names = tuple(d for v, _ in spec.vdevs for d in v.devices)
    # one set of bus stages for the whole pool, as the DES builds it
    paths = vdev_paths(env, spec.hardware, names, spec.vdevs[0][0], spec.profile)
    devices: list[Device] = []
    tops = []
    for (vdev, space), at in zip(spec.vdevs, spec.at, strict=True):
        leaves = []
        for name in vdev.devices:
            dev = Device(env, name, model, True, paths.get(name, BusPath([])),
                         spindle_phase(rng, model))  # fmt: skip
            devices.append(dev)
            leaves.append(LeafQueue(dev, agg, spec.version))
        top = TopVdev(vdev, leaves, spec.ashift, space, True)
        # the DES's Zil starts its log at the cursor after the files, as the txg does
        top.allocate_from(int(at * space) >> spec.ashift << spec.ashift)
        tops.append(top)
    cpu = CpuPool(env, spec.cores, None, background_cap=spec.taskq)
    pool = _LogPool(env, spec.version, tops, spec.costs, cpu, spec.recordsize, spec.recordsize)
    zil = Zil(pool, [], "latency", False)
    jobs = spec.jobs
    per_call = max(1, spec.nbytes // spec.recordsize)
    itx_bytes = min(spec.nbytes, spec.recordsize)
    clock = {"count": 0, "t0": -1.0, "end": -1.0, "commits": 0, "time": 0.0, "lwbs": 0,
             "bytes": 0}  # fmt: skip
    latencies: list[float] = []
    areas: list[float] = []
    records = [0] * jobs
    inflight: set[int] = set()  # jobs with a call under way
    waiting: set[int] = set()  # ... that began before the write-back's last write was done

    def start_measuring() -> None:
        clock["t0"] = env.now
        clock.update(commits=zil.commits, time=zil.commit_time, lwbs=zil.lwbs_written,
                     bytes=zil.log_bytes)  # fmt: skip
        areas.extend(_area(d, env.now) for d in devices)
        if write_back is not None:
            _write_back(tops, write_back, written_back)

    def written_back() -> None:
        waiting.update(inflight)
        if not waiting:
            stop_measuring()

    def stop_measuring() -> None:
        clock["end"] = env.now
        clock.update(commits=zil.commits - clock["commits"],
                     time=zil.commit_time - clock["time"],
                     lwbs=zil.lwbs_written - clock["lwbs"],
                     bytes=zil.log_bytes - clock["bytes"])  # fmt: skip
        areas[:] = [_area(d, env.now) - a for d, a in zip(devices, areas, strict=True)]

    def call(job: int) -> None:
        if clock["end"] >= 0:
            return
        started = env.now
        inflight.add(job)
        cpu.run(spec.call_cpu, lambda: commit(job, started))

    first: list[tuple[int, float]] = []

    def commit(job: int, started: float) -> None:
        for _ in range(per_call):
            records[job] += 1
            zil.log_write(job, (job, records[job]), itx_bytes, True)
        if len(first) < jobs:
            # the jobs' first commits go together, as every commit does after a txg's
            # write-back has held them: before 2.2 the chains they form only merge, so
            # this is where the DES's jobs settle (two chains started apart on two vdevs
            # may otherwise never meet without the bursts that merge them there)
            first.append((job, started))
            if len(first) == jobs:
                for j, t in first:
                    zil.commit(j, functools.partial(finished, j, t))
            return
        zil.commit(job, functools.partial(finished, job, started))

    def finished(job: int, started: float) -> None:
        inflight.discard(job)
        clock["count"] += 1
        n = clock["count"] - WARMUP_COMMITS
        if n == 0:
            start_measuring()
        elif n > 0 and clock["end"] < 0:
            latencies.append(env.now - started)
            if write_back is None and n >= MEASURED_COMMITS:
                stop_measuring()
            elif write_back is not None and job in waiting:
                waiting.discard(job)
                if not waiting:  # the last call the write-back overlapped is back
                    stop_measuring()
        call(job)

    for j in range(jobs):
        call(j)
    with collector_paused():
        env.run()
    span = clock["end"] - clock["t0"]
    if span <= 0 and write_back is None:
        raise AssertionError("the log loop measured no time")
    if write_back is not None:
        clock["commits"] = len(latencies)
    return _Run(len(latencies) / span if span > 0 else 0.0, latencies, clock["time"],
                int(clock["commits"]), int(clock["lwbs"]), int(clock["bytes"]),
                [a / span if span > 0 else 0.0 for a in areas], span)  # fmt: skip


def _write_back(tops: list[TopVdev], write_back: WriteBack, done: Callable[[], None]) -> None:
    """Issue one txg's write-back on every vdev at once, as ``spa_sync()`` does (placed by
    the vdev's own allocator from its cursor: data runs, then indirect-block copies, the
    ditto copies 1/8 of the vdev away), then, once written, the uberblock with a cache flush
    on every leaf (``ZfsModel._write_uberblocks``); ``done`` when those are. The space-map
    appends of the blocks a txg frees are left out (a block or two per vdev)."""
    writes = [
        (t, n, size, ditto)
        for t in range(len(tops))
        for n, size, ditto in (
            (write_back.runs[t], write_back.run_bytes[t], False),
            (write_back.blocks[t], write_back.block_bytes, False),
            (write_back.dittos[t], write_back.block_bytes, True),
        )
        if n > 0 and size > 0
    ]
    leaves = [(top, i) for top in tops for i in range(len(top.leaves))]

    def uberblocks() -> None:
        flushed = Countdown(len(leaves), done)
        for top, i in leaves:
            top.leaves[i].add(uberblock_zio(top, flushed.tick))

    if not writes:
        uberblocks()
        return
    countdown = Countdown(sum(n for _, n, _, _ in writes), uberblocks)
    for top in tops:
        for leaf in top.leaves:
            leaf.set_async_write_max(write_back.active)
    for t, n, size, ditto in writes:
        top = tops[t]
        asize = psize_to_asize(top.vdev, size, top.ashift)
        for _ in range(n):
            offset = top.allocate_ditto(asize) if ditto else top.allocate(asize)
            top.io(offset, size, True, ASYNC_WRITE, countdown.tick)


def _quantiles(lat: np.ndarray) -> tuple[float, ...]:
    return tuple(float(q) for q in np.percentile(lat, np.arange(101)))


def _area(dev: Device, now: float) -> float:
    b = dev.busy
    return b.area + b.active * (now - b.since)


# ---- the on-disk cache (zsim.table_cache): entries named by a hash of these modules' code
_LOG_MODULES = (
    "hardware/hdd",
    "machine/resources",
    "machine/links",
    "machine/costs",  # the Zil charges its CpuCosts' methods
    "des/vdev",
    "des/zil",
    "des/engine",
    "des/txg_runs",
    "zfs/zil",
    "analytic/seqstreams",
    "layout/raidz",
    "layout/draid",
    "layout/alloc",
    "analytic/log_table",
)
register_kind("logs", _LOG_MODULES)
register_kind("logbursts", _LOG_MODULES)


def _decode(data: Any) -> LogTable:
    return LogTable(
        commits_per_s=float(data["commits_per_s"]),
        phase_spread=float(data["phase_spread"]),
        call_mean=float(data["call_mean"]),
        call_quantiles=tuple(float(x) for x in data["call_quantiles"]),
        commit_mean=float(data["commit_mean"]),
        commits_per_lwb=float(data["commits_per_lwb"]),
        lwb_bytes=float(data["lwb_bytes"]),
        leaf_busy=tuple(float(x) for x in data["leaf_busy"]),
    )


def _decode_burst(data: Any) -> BurstTable:
    return BurstTable(
        seconds=float(data["seconds"]),
        calls=int(data["calls"]),
        call_quantiles=tuple(float(x) for x in data["call_quantiles"]),
    )


_CACHE: dict[tuple, LogTable] = {}
_BURSTS: dict[tuple, BurstTable] = {}
