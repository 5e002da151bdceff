"""Stream tables: how fast a pool serves several sequential read streams, measured on the
discrete-event engine's own vdev layer (the analytic engine's sequential-read model,
:mod:`zsim.analytic.seqread`, bounds them by the CPU, the memory bus and the bus).

A sequential fio job reads its file in order while zfetch keeps ``zfetch_max_distance`` bytes
of records in flight ahead of it (``module/zfs/dmu_zfetch.c``, ``dmu_zfetch()``; the DES's
``Engine._prefetch``). What a vdev makes of that depends on mechanisms that interact at the
leaf, all in the DES's code, which this module runs rather than re-derives — as
:mod:`zsim.analytic.devices` runs the DES's device model for its device tables:

* the record's leaf I/Os from :meth:`zsim.des.vdev.TopVdev.leaf_ios` (raidz reads skip the
  parity columns, so a leaf's stream has holes where parity sits; a mirror read goes to one
  child chosen by ``vdev_mirror_child_select()``: least active I/Os plus the rotating-media
  seek penalty, 0 at the child's last offset and 2 within
  ``zfs_vdev_mirror_rotating_seek_offset``);
* the leaf's ``vdev_queue`` (:class:`zsim.des.vdev.LeafQueue`): prefetch reads at async-read
  priority (at most 3 active), LBA-ordered (by time slot first from 2.2), aggregated with
  queued neighbours within ``zfs_vdev_read_gap_limit`` up to ``zfs_vdev_aggregation_limit``;
  the record a job waits for promoted to a sync read (``arc_read()`` →
  ``zio_change_priority()``, 0.8+);
* the device (:class:`zsim.machine.resources.Device`): HDD mechanics with SATF over NCQ and
  the drive's read-ahead buffer, or the flash model.

A table is the pool's vdevs in a closed loop of jobs as the DES runs them (``Engine.call`` /
``_read`` / ``_prefetch``): one stream per job, every record where ``ZfsModel.locate`` puts it
(the files laid one after the other, going round the vdevs in the rotor's runs). A job
spends its call's CPU (syscall and copy), then demands the call's records and prefetches up
to ``window`` records past them; a record it demands still in flight is
promoted to a sync read (``arc_read()`` → ``zio_change_priority()``, 0.8+) and waited for;
a record read reaches the ARC after its completion's CPU (checksum, in a taskq thread). The
leaves' reads cross their bus stages (links, expander, HBA) before they complete. The rate
is measured over :data:`MEASURED_RECORDS` records (or :data:`MEASURED_IOS` device I/Os) after
a window of warm-up; a dRAID table over as many records as its streams need to cross 20 of
the vdev's groups each (:mod:`zsim.analytic.stream_sample`).
Tables are cached in memory and on disk beside the device tables (:mod:`zsim.table_cache`),
named by a hash of the vdev and device models' code.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import simpy

from zsim.analytic.stream_sample import (
    MEASURED_IOS,
    MEASURED_IOS_PER_LEAF,
    MEASURED_RECORDS,
    MIN_MEASURED,
    stream_records,
    stream_warmup,
)
from zsim.des.vdev import ASYNC_READ, LeafQueue, TopVdev, Zio, aggregation_limit
from zsim.hardware import flash, hdd
from zsim.hardware.catalog import Profile
from zsim.layout.tree import Vdev
from zsim.machine.collector import collector_paused
from zsim.machine.links import bus_stages
from zsim.machine.resources import Device, after
from zsim.machine.resources import Path as BusPath
from zsim.scenario import Hardware
from zsim.table_cache import load_or_measure, profile_key, register_kind
from zsim.zfs.version import ZfsVersion


@dataclass(frozen=True)
class StreamTable:
    """One vdev serving ``streams`` sequential read streams at ``window`` records each.

    ``records_per_s``: records the vdev completes per second (all streams); ``leaf_busy``:
    each leaf's busy fraction meanwhile (0-1, as the DES counts a device busy);
    ``leaf_bytes_per_record``: bytes each leaf moves per record of the vdev (its aggregated
    I/Os' bytes over the records); ``leaf_ios_per_record``: device I/Os each leaf issues per
    record (after aggregation); ``record_latency``: mean time from a record's issue to its
    completion, s.
    """

    records_per_s: float
    leaf_busy: tuple[float, ...]
    leaf_bytes_per_record: tuple[float, ...]
    leaf_ios_per_record: tuple[float, ...]
    record_latency: float


def pool_table(
    profile: Profile,
    vdevs: list[tuple[Vdev, int, int]],
    ashift: int,
    psize: int,
    per_visit: tuple[int, ...],
    bases: tuple[int, ...],
    file_records: int,
    jobs: int,
    window: int,
    version: ZfsVersion,
    hardware: Hardware | None = None,
    call_cpu: float = 0.0,
    records_per_call: float = 1.0,
    complete: float = 0.0,
    born: tuple[tuple[tuple[int, int], ...], ...] = (),
    records: int = MEASURED_RECORDS,
) -> StreamTable:
    """The table of the whole pool: ``jobs`` streams whose records go round ``vdevs``
    ((vdev, allocatable bytes, asize) each) in runs of ``per_visit`` as the rotor placed
    them, the files (``file_records`` each) one after the other from ``bases`` (each vdev's
    byte offset of the first file's first record), as ``ZfsModel.locate`` finds them; each
    job ``window`` records deep, its calls ``call_cpu`` s of CPU for ``records_per_call``
    records (below 1: several calls per record), a record's completion ``complete`` s of
    taskq CPU; ``born``: each vdev's regions of blocks born before an attach
    (:attr:`~zsim.des.vdev.TopVdev.born`); ``records``: how many are measured at most, or
    on dRAID exactly (:func:`~zsim.analytic.stream_sample.draid_records`: a dRAID table
    counts records, not device I/Os). The leaves' figures run over every vdev's devices in
    order. Cached."""
    key: tuple[Any, ...] = (
        profile_key(profile),
        tuple((v.kind, len(v.devices), v.parity, v.ndata, v.nspares, sp, a) for v, sp, a in vdevs),
        int(ashift),
        int(psize),
        per_visit,
        bases,
        int(file_records),
        int(jobs),
        int(window),
        str(version),
        tuple(bus_signature(hardware, (), v, profile) for v, _, _ in vdevs),
        round_cpu(call_cpu),
        float(records_per_call),
        round_cpu(complete),
        born,
    )
    draid = any(v.kind == "draid" for v, _, _ in vdevs)
    if draid:  # a dRAID table counts records only; the other tables keep their keys
        key = (*key, int(records), "records only")
    table = _CACHE.get(key)
    if table is None:

        def run() -> StreamTable:
            locate = rotor_locate([(sp, a) for _, sp, a in vdevs], per_visit, bases,
                                  file_records)  # fmt: skip
            names = tuple(d for v, _, _ in vdevs for d in v.devices)
            return measure(profile, [(v, sp) for v, sp, _ in vdevs], ashift, psize, locate,
                           jobs, window, version, hardware, names, round_cpu(call_cpu),
                           records_per_call, round_cpu(complete), born=born,
                           records=records, ios_end=not draid)  # fmt: skip

        table = _CACHE[key] = load_or_measure("streams", key, run, _decode, dataclasses.asdict)
    return table


def rotor_locate(
    vdevs: list[tuple[int, int]],
    per_visit: tuple[int, ...],
    bases: tuple[int, ...],
    file_records: int,
) -> Callable[[int, int], tuple[int, int]]:
    """``locate(job, record)`` → (vdev index, vdev byte offset), as ``ZfsModel.locate``
    finds a record: the jobs' files one after the other, ``file_records`` each, going round
    ``vdevs`` ((allocatable bytes, asize) each) in runs of ``per_visit`` from ``bases``."""
    cycle = sum(per_visit)
    before = [sum(per_visit[:v]) for v in range(len(per_visit))]
    wraps = [max(1, space // size) * size for space, size in vdevs]

    def locate(job: int, record: int) -> tuple[int, int]:
        turn, within = divmod(job * file_records + record % file_records, cycle)
        for v, visit in enumerate(per_visit):
            if within < before[v] + visit:
                index = turn * visit + within - before[v]
                return v, (bases[v] + index * vdevs[v][1]) % wraps[v]
        raise AssertionError("unreachable: within < cycle")

    return locate


def measure(
    profile: Profile,
    vdevs: list[tuple[Vdev, int]],
    ashift: int,
    psize: int,
    locate: Callable[[int, int], tuple[int, int]],
    streams: int,
    window: int,
    version: ZfsVersion,
    hardware: Hardware | None = None,
    pool_devices: tuple[str, ...] = (),
    call_cpu: float = 0.0,
    records_per_call: float = 1.0,
    complete: float = 0.0,
    seed: int = 12345,
    born: tuple[tuple[tuple[int, int], ...], ...] = (),
    records: int = MEASURED_RECORDS,
    ios_end: bool = True,
) -> StreamTable:
    """Run ``vdevs`` ((vdev, allocatable bytes) each) in the closed loop the module
    docstring describes (uncached): ``streams`` jobs, record ``i`` of job ``j`` at
    ``locate(j, i)`` = (vdev index, vdev byte offset); ``born`` and ``records`` as
    :func:`pool_table`; ``ios_end``: the device I/Os may end the sample before ``records``
    (not on dRAID, whose tables must cross their groups)."""
    env = simpy.Environment()
    rotating = profile.kind == "hdd"
    model = hdd.hdd_params(profile) if rotating else flash.flash_params(profile)
    rng = np.random.default_rng(seed)
    agg = aggregation_limit(rotating, version)
    devices = []
    tops = []
    for i, (vdev, space) in enumerate(vdevs):
        leaves = []
        paths = vdev_paths(env, hardware, pool_devices, vdev, profile)
        for name in vdev.devices:
            # spindles are not synchronised (as Engine builds them: a random platter phase)
            phase = (
                float(rng.uniform(0.0, model.period)) if isinstance(model, hdd.HddParams) else 0.0
            )
            dev = Device(env, name, model, rotating, paths.get(name, BusPath([])), phase)
            devices.append(dev)
            leaves.append(LeafQueue(dev, agg, version))
        tops.append(TopVdev(vdev, leaves, ashift, space, rotating, born=born[i] if born else ()))
    # calls per record (bs below recordsize) or records per call (bs a multiple of it)
    per_call = records_per_call
    share = max(1, round(1 / per_call)) if per_call < 1 else 1
    reads = max(1, round(per_call))
    warmup = stream_warmup(streams, window, rotating)
    records = stream_records(streams, window, records, rotating)
    least = stream_records(streams, window, 0, rotating)  # before the I/Os may end it
    warmup_calls = math.ceil(warmup / per_call)
    target_ios = max(MEASURED_IOS, MEASURED_IOS_PER_LEAF * len(devices))
    state = [_Stream(j) for j in range(streams)]
    clock = {"count": 0, "t0": -1.0, "end": -1.0}
    latencies: list[float] = []
    snapshot: dict[str, float] = {}

    def issue(s: _Stream) -> None:
        i = s.issued
        s.issued += 1
        v, offset = locate(s.index, i)
        track: list[tuple[LeafQueue, Zio]] = []
        issued_at = env.now
        s.track[i] = track
        tops[v].io(offset, psize, False, ASYNC_READ, lambda: read(s, i, issued_at), track=track)

    def read(s: _Stream, i: int, issued_at: float) -> None:
        s.track.pop(i, None)
        if complete > 0:  # the completion's checksum in a taskq thread (ZfsModel._read_done)
            after(env, complete, ready, s, i, issued_at)
        else:
            ready(s, i, issued_at)

    def ready(s: _Stream, i: int, issued_at: float) -> None:
        s.done.add(i)
        if clock["t0"] >= 0 and clock["end"] < 0:
            latencies.append(env.now - issued_at)
        if s.waiting:
            s.waiting = False
            check(s)

    def call(s: _Stream) -> None:
        """The job's next call (Engine.call): its CPU, then its demand reads."""
        if clock["end"] >= 0:
            return
        s.started = env.now
        if call_cpu > 0:
            after(env, call_cpu, demand, s)
        else:
            demand(s)

    def demand(s: _Stream) -> None:
        """The call's demand reads (Engine._read), then zfetch's prefetch up to ``window``
        records past the last of them (Engine._prefetch)."""
        first = s.calls // share if share > 1 else s.calls * reads
        s.need = first + (reads - 1 if share == 1 else 0)
        while s.issued <= s.need + window:
            issue(s)
        check(s)

    def check(s: _Stream) -> None:
        while s.consumed <= s.need and s.consumed in s.done:
            s.done.discard(s.consumed)
            s.consumed += 1
        if s.consumed > s.need:
            finish(s)
            return
        s.waiting = True
        # a demand read finds its record's prefetch in flight: arc_read() promotes it
        if version.at_least(0, 8):
            for i in range(s.consumed, s.need + 1):
                for leaf, zio in s.track.get(i, ()):
                    leaf.promote(zio)

    def finish(s: _Stream) -> None:
        s.calls += 1
        clock["count"] += 1
        if clock["count"] == warmup_calls + 1 and clock["t0"] < 0:
            clock["t0"] = env.now
            snapshot.update(_snap(devices, env.now))
            clock["ios"] = sum(d.ios for d in devices)
        n = (clock["count"] - warmup_calls - 1) * per_call
        if clock["t0"] >= 0 and clock["end"] < 0 and n >= MIN_MEASURED:
            ios = sum(d.ios for d in devices) - clock["ios"]
            if n >= records or (ios_end and ios >= target_ios and n >= least):
                clock["end"] = env.now
                clock["measured"] = n
                snapshot.update({f"end_{k}": v for k, v in _snap(devices, env.now).items()})
        call(s)

    for s in state:
        call(s)
    with collector_paused():
        env.run()
    span = clock["end"] - clock["t0"]
    measured = clock["measured"]
    if span <= 0:
        raise AssertionError("the stream loop measured no time")
    busy, nbytes, ios = [], [], []
    for i, dev in enumerate(devices):
        area = snapshot[f"end_area{i}"] - snapshot[f"area{i}"]
        moved = snapshot[f"end_bytes{i}"] - snapshot[f"bytes{i}"]
        count = snapshot[f"end_ios{i}"] - snapshot[f"ios{i}"]
        b = area / (span * dev.slots)
        if not rotating:
            # flash counts busy by the larger of units in use and bytes over its rated rate
            b = max(b, moved / model.read_bw / span)  # type: ignore[union-attr]
        busy.append(min(1.0, b))
        nbytes.append(moved / measured)
        ios.append(count / measured)
    return StreamTable(
        records_per_s=measured / span,
        leaf_busy=tuple(busy),
        leaf_bytes_per_record=tuple(nbytes),
        leaf_ios_per_record=tuple(ios),
        record_latency=float(np.mean(latencies)) if latencies else 0.0,
    )


def round_cpu(seconds: float) -> float:
    """A CPU time to 3 significant digits (tables of nearly equal CPUs are shared)."""
    return float(f"{seconds:.3g}") if seconds > 0 else 0.0


def vdev_paths(
    env: simpy.Environment,
    hardware: Hardware | None,
    pool_devices: tuple[str, ...],
    vdev: Vdev,
    profile: Profile,
) -> dict[str, BusPath]:
    """The vdev's leaves' bus paths (links, expander, HBA) as the DES builds them for the
    pool; the shared stages carry only this vdev's reads here (the pool's bus bound is the
    sequential-read model's own)."""
    if hardware is None:
        return {}
    names = list(pool_devices) or list(vdev.devices)
    return bus_stages(env, hardware, names, profile)


def bus_signature(
    hardware: Hardware | None, pool_devices: tuple[str, ...], vdev: Vdev, profile: Profile
) -> tuple:
    """What of the bus a table depends on: each leaf's stages (kind, rate, per-I/O time,
    passive) and which leaves share a stage."""
    paths = vdev_paths(simpy.Environment(), hardware, pool_devices, vdev, profile)
    seen: dict[int, int] = {}
    out = []
    for name in vdev.devices:
        path = paths.get(name)
        stages = path.stages if path is not None else []
        out.append(
            tuple(
                (
                    st.name.split(":")[0],
                    st.rate,
                    st.per_io,
                    st.passive,
                    seen.setdefault(id(st), len(seen)),
                )
                for st in stages
            )
        )
    return tuple(out)


class _Stream:
    __slots__ = ("calls", "consumed", "done", "index", "issued", "need", "started", "track",
                 "waiting")  # fmt: skip

    def __init__(self, index: int):
        self.index = index
        self.waiting = False
        self.issued = 0
        self.consumed = 0
        self.calls = 0
        self.need = 0
        self.started = 0.0
        self.done: set[int] = set()
        self.track: dict[int, list[tuple[LeafQueue, Zio]]] = {}


def _snap(devices: list[Device], now: float) -> dict[str, float]:
    out: dict[str, float] = {}
    for i, dev in enumerate(devices):
        b = dev.busy
        out[f"area{i}"] = b.area + b.active * (now - b.since)
        out[f"bytes{i}"] = float(dev.read_bytes)
        out[f"ios{i}"] = float(dev.ios)
    return out


# ---- the on-disk cache (zsim.table_cache): entries named by a hash of these modules' code
register_kind(
    "streams",
    (
        "hardware/hdd",
        "hardware/flash",
        "machine/resources",
        "machine/links",
        "des/vdev",
        "layout/raidz",
        "layout/draid",
        "layout/alloc",
        "analytic/seqstreams",
        "analytic/stream_sample",
    ),
)


def _decode(data: Any) -> StreamTable:
    return StreamTable(
        records_per_s=float(data["records_per_s"]),
        leaf_busy=tuple(float(x) for x in data["leaf_busy"]),
        leaf_bytes_per_record=tuple(float(x) for x in data["leaf_bytes_per_record"]),
        leaf_ios_per_record=tuple(float(x) for x in data["leaf_ios_per_record"]),
        record_latency=float(data["record_latency"]),
    )


_CACHE: dict[tuple, StreamTable] = {}
