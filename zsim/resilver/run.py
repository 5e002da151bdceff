"""``zsim.resilver(sc)``: how long a pool (or md array) is exposed after a disk dies.

The time comes from windows of a discrete-event scan (:mod:`zsim.resilver.zfs_scan`,
:mod:`zsim.resilver.md_rebuild`) spread along the allocated space; each window's rate covers
its share of the bytes, so zoned disks (faster outside) and the scan's changing density are
in the curve. The loss probabilities (:mod:`zsim.reliability`) take the simulated times as
the rebuild windows.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections import OrderedDict
from typing import Any

import numpy as np

from zsim.analytic.validity import OutOfRange
from zsim.des.engine import Engine
from zsim.des.run import simulate_des
from zsim.des.vdev import MissingLeaf
from zsim.errors import ZsimError
from zsim.machine.collector import collector_paused
from zsim.machine.run_control import RunControl
from zsim.resilver.analytic import analytic_zfs, pool_allocated
from zsim.resilver.durability import failure_rate, no_rate_note, pool_durability
from zsim.resilver.md_analytic import analytic_md
from zsim.resilver.md_rebuild import simulate_md_rebuild
from zsim.resilver.result import ResilverResult
from zsim.resilver.target import ResilverTarget, resolve_target
from zsim.resilver.zfs_scan import WindowStats, ZfsScan, window_units
from zsim.scenario import Scenario
from zsim.zfs.arc import arc_max_bytes
from zsim.zfs.scan import scan_tunables
from zsim.zfs.version import parse_zfs_version

#: windows along the allocated space (idle pool / under load)
WINDOWS = 8
LOADED_WINDOWS = 4
WINDOW_WALL_CAP = 20.0  # s of wall time one window may take before it reports what it has
#: simulated seconds of one window under load: several txg cycles (zfs_txg_timeout 5 s)
LOADED_WINDOW = 30.0
BUSY = 0.85  # a resource this busy bounds the rate (as the simulate engines' `limit`)
SCRUB_LANES = 4  # data vdevs a scrub simulates at once
NOTHING_ALLOCATED = "nothing is allocated on the vdev (pool.fill = 0): nothing to copy"
#: resilvers already made in this process, kept by their inputs (the scenario with its
#: profiles in full, the seed, the engine): the same inputs give the same answer, and the app,
#: a sweep or a report asks for the same design again. The last this many are kept.
MEMO_SIZE = 64
_MEMO: OrderedDict[str, ResilverResult] = OrderedDict()
#: the rebuilds (without loss figures) by :func:`rebuild_key`: a change of the failure rate,
#: the years or the replacement delay computes only the loss figures again
_REBUILDS: OrderedDict[str, ResilverResult] = OrderedDict()
_MEMO_LOCK = threading.Lock()


def simulate_resilver(
    sc: Scenario, seed: int = 1, *, durability: bool = True, engine: str = "des"
) -> ResilverResult:
    """Simulate the resilver (rebuild) ``sc`` describes (``[resilver]``, ``pool.fill``).

    ``engine``: ``"des"`` (windows of the discrete-event scan), ``"analytic"`` (the same
    windows solved with formulas, :mod:`zsim.resilver.analytic`; raises
    :class:`zsim.analytic.validity.OutOfRange` for what it does not model) or ``"auto"``
    (the analytic engine where it answers, else the DES; the result's ``engine`` says
    which). Returns a
    :class:`ResilverResult`; raises :class:`ZsimError` for a resilver that cannot exist (a
    disk not in the layout, raidz asked to rebuild sequentially, ...). The same inputs again
    are answered from a memo of the last :data:`MEMO_SIZE` (:func:`forget_resilvers`).
    """
    key = _memo_key(sc, seed, durability, engine)
    made = _recall(_MEMO, key)
    if made is not None:
        return made
    with collector_paused():  # the windows' event loops and their set-up
        result = _simulate_resilver(sc, seed, durability=durability, engine=engine)
    _keep(_MEMO, key, result)
    return result


def _memo_key(sc: Scenario, seed: int, durability: bool, engine: str) -> str:
    return json.dumps([sc.to_dict(), seed, durability, engine], sort_keys=True, default=str)


def _recall(memo: OrderedDict[str, ResilverResult], key: str) -> ResilverResult | None:
    with _MEMO_LOCK:
        found = memo.get(key)
        if found is not None:
            memo.move_to_end(key)
        return found


def _keep(memo: OrderedDict[str, ResilverResult], key: str, result: ResilverResult) -> None:
    with _MEMO_LOCK:
        memo[key] = result
        memo.move_to_end(key)
        while len(memo) > MEMO_SIZE:
            memo.popitem(last=False)


def remember_resilver(
    sc: Scenario,
    result: ResilverResult,
    seed: int = 1,
    *,
    durability: bool = True,
    engine: str = "des",
) -> None:
    """Put a resilver made elsewhere — by :func:`simulate_resilver` with these arguments in
    another process, as the app's background worker does — in this process's memo, so that
    the same call here answers at once."""
    _keep(_MEMO, _memo_key(sc, seed, durability, engine), result)


def forget_resilvers() -> None:
    """Empty the memo of resilvers made in this process (:data:`MEMO_SIZE`), so the next
    call simulates again (e.g. to check that the same seed gives the same answer)."""
    with _MEMO_LOCK:
        _MEMO.clear()
        _REBUILDS.clear()


def _simulate_resilver(sc: Scenario, seed: int, *, durability: bool, engine: str) -> ResilverResult:
    if engine == "auto":
        try:
            return simulate_resilver(sc, seed, durability=durability, engine="analytic")
        except OutOfRange:
            return simulate_resilver(sc, seed, durability=durability, engine="des")
    started = time.perf_counter()
    if engine not in ("des", "analytic"):
        raise ZsimError(f"resilver engine {engine!r} is not known; use 'des', 'analytic' or 'auto'")
    target = resolve_target(sc)
    key = rebuild_key(sc, seed, engine)
    rebuilt = _recall(_REBUILDS, key)
    if rebuilt is None:
        rebuilt = _rebuild(sc, target, seed, engine)
        _keep(_REBUILDS, key, rebuilt)
    result = dataclasses.replace(rebuilt, scenario=sc.to_dict())
    if durability and failure_rate(sc) is None:
        # the time needs no failure rate: give it, and say why the loss figures are missing
        result = dataclasses.replace(result, notes=(*result.notes, no_rate_note(sc)))
    elif durability:
        result = dataclasses.replace(result, durability=pool_durability(sc, target, result, seed))
    return dataclasses.replace(result, wall_seconds=time.perf_counter() - started)


def rebuild_key(sc: Scenario, seed: int, engine: str) -> str:
    """What the rebuild itself depends on: the scenario but its name and the loss inputs of
    ``[durability]`` (the failure rate, years, replacement delay, trials), except
    ``busy_fraction``, which puts the workload beside the resilver and so changes its time."""
    doc = sc.to_dict()
    doc.pop("name", None)
    doc["durability"] = {"busy_fraction": sc.durability.busy_fraction}
    return json.dumps([doc, seed, engine], sort_keys=True, default=str)


def _rebuild(sc: Scenario, target: ResilverTarget, seed: int, engine: str) -> ResilverResult:
    """The rebuild (time, rate, limit, curve) without the loss figures."""
    if target.system == "lost":
        result = _lost(sc, target, seed)
    elif engine == "analytic" and target.system == "zfs" and target.resilver_bytes > 0:
        result = analytic_zfs(sc, target, seed)
    elif engine == "analytic" and target.system == "md":
        result = analytic_md(sc, target, seed)
    elif target.system == "md":
        result = simulate_md_rebuild(sc, target, seed)
    else:
        result = _zfs(sc, target, seed)
    if engine == "analytic":
        # a lost stripe or an empty vdev needs no engine: say which one was asked
        result = dataclasses.replace(result, engine="analytic")
    return result


def _lost(sc: Scenario, target: ResilverTarget, seed: int) -> ResilverResult:
    return ResilverResult(
        system=target.system,
        disk=target.disk,
        method="none",
        spare="none",
        seconds=None,
        bytes_resilvered=0,
        bytes_per_s=0.0,
        limit="no-redundancy",
        lost=True,
        seed=seed,
        scenario=sc.to_dict(),
        notes=(
            f"{target.disk} is a vdev of its own (no mirror or parity): when it fails the "
            f"pool loses the data on it — nothing can be resilvered",
        ),
    )


# ---------------------------------------------------------------- ZFS


def _degraded(sc: Scenario, disk: str | None) -> Scenario:
    failed = tuple(sc.pool.failed) + ((disk,) if disk else ())
    return dataclasses.replace(sc, pool=dataclasses.replace(sc.pool, failed=failed))


def _engine(sc: Scenario, seed: int) -> Engine:
    return Engine(sc, seed, RunControl())


def _ios_per_unit(target: ResilverTarget, mode: str) -> float:
    """Leaf I/Os of one block (segment) the scan issues, roughly: what a window costs."""
    vdev = target.vdev
    assert vdev is not None
    if vdev.kind == "mirror":
        return 2.0 if mode != "scrub" else float(vdev.width)
    return float(vdev.draid_groupwidth if vdev.kind == "draid" else vdev.width)


def _warm_up(engine: Engine) -> None:
    """Start the workload and run it past its start-up (the write buffer filled)."""
    for job in engine.jobs:
        job.start()
    env = engine.env
    writes = engine.read_fraction < 1.0
    while env.now < 2.0 or (writes and engine.zfs.filled_at is None and env.now < 30.0):
        if engine.run_for(env.now + 0.5):  # a cap (wall time, memory) of the engine's guard
            break


def _foreground(engine: Engine, start: float, end: float) -> dict[str, Any]:
    """The workload's read and write rates and mean latency between ``start`` and ``end``."""
    s = engine.stats
    times = np.asarray(s.times)
    keep = (times >= start) & (times < end)
    span = max(end - start, 1e-12)
    nbytes = np.asarray(s.nbytes)[keep]
    is_read = np.asarray(s.is_read, dtype=bool)[keep]
    lat = np.asarray(s.latencies)[keep]
    out = {}
    for name, mask in (("read", is_read), ("write", ~is_read)):
        out[name] = {
            "bytes_per_s": float(nbytes[mask].sum() / span),
            "iops": float(mask.sum() / span),
            "latency_mean_s": float(lat[mask].mean()) if mask.any() else 0.0,
        }
    return out


def _scan_phase(
    sc: Scenario,
    target: ResilverTarget,
    mode: str,
    seed: int,
    *,
    under_load: bool = False,
    windows: int = WINDOWS,
) -> tuple[list[WindowStats], list[dict[str, Any]]]:
    """Run ``windows`` windows of a scan; (window stats, the workload's rates per window)."""
    resilvering = mode != "scrub"
    degraded = _degraded(sc, target.disk if resilvering else None)
    engine = _engine(degraded, seed)
    version = parse_zfs_version(sc.hardware.zfs_version)
    tunables = scan_tunables(version, sc.hardware.ram, arc_max_bytes(sc.hardware.ram, version))
    n_data = len(sc.layout_tree().data_vdevs)  # type: ignore[union-attr]
    tops = engine.zfs.all_tops[:n_data]
    if resilvering:
        top = tops[target.vdev_index]
        leaf = next(
            i
            for i, q in enumerate(top.leaves)
            if isinstance(q, MissingLeaf) and q.device.name == target.disk
        )
        lanes: list[tuple[Any, int | None]] = [(top, leaf)]
    else:
        # a scrub walks every data vdev at once; up to SCRUB_LANES of them are simulated
        # (the vdevs of one shape scan alike) and the shared stages scaled (_scrub_rate)
        lanes = [(t, None) for t in tops[:SCRUB_LANES]]
    scan = ZfsScan(
        engine,
        mode,
        tunables,
        lanes=lanes,
        psize=target.psize,
        asize=target.asize,
        fill=target.fill,
        written=sc.resilver.written,
        spare=target.spare if resilvering else "new",
        seed=seed,
    )
    if under_load:
        _warm_up(engine)
        # with the workload's txgs to share, the scan runs in per-txg slices
        scan.enable_txg_slices()
    # the measurement runs from the ramp to the last issue: the quota must outlast the
    # blocks the scan may hold in flight several times over (window_units)
    quota = window_units(_ios_per_unit(target, mode), scan.inflight_units()) * len(lanes)
    stats, foreground = [], []
    for k in range(windows):
        position = (k + 0.5) / windows
        t0 = engine.env.now
        w = scan.run_window(
            position, quota, WINDOW_WALL_CAP, duration=LOADED_WINDOW if under_load else None
        )
        if w.seconds <= 0:
            raise ZsimError(
                f"the {mode} scan made no progress in its window at {position:.0%} of the "
                f"allocated space; this is a zsim bug — please report the scenario"
            )
        stats.append(w)
        if under_load:
            foreground.append(_foreground(engine, t0, engine.env.now))
    return stats, foreground


def _integrate(
    total: float, stats: list[WindowStats], rate_of: Any
) -> tuple[float, tuple[tuple[float, int], ...], dict[str, float]]:
    """Time to do ``total`` bytes when window k does ``total / K`` at its rate; the
    progress curve; the time-weighted utilisation."""
    share = total / len(stats)
    t, done, points = 0.0, 0.0, [(0.0, 0)]
    util: dict[str, float] = {}
    times = []
    for w in stats:
        rate = rate_of(w)
        seconds = share / rate if rate > 0 else float("inf")
        times.append(seconds)
        t += seconds
        done += share
        points.append((t, round(done)))
    for w, seconds in zip(stats, times, strict=True):
        for name, value in w.utilization.items():
            util[name] = util.get(name, 0.0) + value * seconds / t
    return t, tuple(points), util


def _limit(util: dict[str, float], fallback: str = "scan") -> str:
    if not util:
        return fallback
    name, busiest = max(util.items(), key=lambda kv: kv[1])
    return name if busiest >= BUSY else fallback


def _window_dicts(stats: list[WindowStats]) -> tuple[dict[str, Any], ...]:
    out = []
    for w in stats:
        busiest = sorted(w.utilization.items(), key=lambda kv: -kv[1])[:4]
        out.append(
            {
                "position": w.position,
                "bytes_per_s": w.rate,
                "examined_bytes_per_s": w.examine_rate,
                "sim_seconds": w.seconds,
                "busiest": {k: round(v, 4) for k, v in busiest},
            }
        )
    return tuple(out)


def _zfs(sc: Scenario, target: ResilverTarget, seed: int) -> ResilverResult:
    mode = target.method
    notes: list[str] = []
    if target.resilver_bytes == 0:
        return ResilverResult(
            system="zfs",
            disk=target.disk,
            method=mode,
            spare=target.spare,
            seconds=0.0,
            bytes_resilvered=0,
            bytes_per_s=0.0,
            limit="nothing-allocated",
            total_seconds=0.0,
            scrub_seconds=0.0,
            progress=((0.0, 0),),
            seed=seed,
            scenario=sc.to_dict(),
            notes=(NOTHING_ALLOCATED,),
        )
    stats, _ = _scan_phase(sc, target, mode, seed)
    total = float(target.resilver_bytes)
    seconds, progress, util = _integrate(total, stats, lambda w: w.rate)
    read_ratio = sum(w.read for w in stats) / max(1, sum(w.resilvered for w in stats))
    limit = _limit(util)
    scrub_seconds = None
    total_seconds = seconds
    scrub_stats, _ = _scan_phase(sc, target, "scrub", seed + 1, windows=WINDOWS // 2)
    allocated_all = pool_allocated(sc, target)
    n_data = len(sc.layout_tree().data_vdevs)  # type: ignore[union-attr]
    scrub_seconds, _, _ = _integrate(allocated_all, scrub_stats, lambda w: _scrub_rate(w, n_data))
    if mode == "sequential":
        total_seconds = seconds + scrub_seconds
        notes.append(
            f"sequential rebuild: redundancy is back after {seconds / 3600:.2f} h; the scrub "
            f"that verifies the rebuilt blocks' checksums (zfs_rebuild_scrub_enabled) takes "
            f"{scrub_seconds / 3600:.2f} h more"
        )
    under_load = None
    if sc.resilver.under_load or sc.durability.busy_fraction > 0:
        under_load = _under_load(sc, target, seed, total)
    return ResilverResult(
        system="zfs",
        disk=target.disk,
        method=mode,
        spare=target.spare,
        seconds=seconds,
        bytes_resilvered=target.resilver_bytes,
        bytes_per_s=total / seconds if seconds > 0 else 0.0,
        limit=limit,
        total_seconds=total_seconds,
        scrub_seconds=scrub_seconds,
        bytes_read=int(total * read_ratio),
        bytes_examined=target.allocated,
        progress=progress,
        utilization={k: round(v, 4) for k, v in util.items()},
        windows=_window_dicts(stats),
        under_load=under_load,
        seed=seed,
        scenario=sc.to_dict(),
        notes=tuple(notes),
        details={
            "vdev": target.vdev.compact() if target.vdev else "",
            "block_psize": target.psize,
            "block_asize": target.asize,
            "allocated_on_vdev": target.allocated,
            "fill": target.fill,
            "written": sc.resilver.written,
            "pool_allocated": allocated_all,
        },
    )


def _scrub_rate(w: WindowStats, n_data: int) -> float:
    """The pool's scrub rate from a window that scanned ``min(n_data, SCRUB_LANES)`` vdevs:
    scaled by the vdevs not simulated, unless a stage all of them share (the HBA, an
    expander, the CPU) would then be over 100 % busy — then that stage's capacity."""
    simulated = min(n_data, SCRUB_LANES)
    scale = n_data / simulated
    shared = [v for k, v in w.utilization.items() if not k.startswith(("disk:", "link:"))]
    busiest = max(shared, default=0.0)
    if busiest * scale > 1.0:
        scale = 1.0 / busiest
    return w.examine_rate * scale


def _under_load(sc: Scenario, target: ResilverTarget, seed: int, total: float) -> dict[str, Any]:
    """The resilver with the scenario's workload running, and the workload with and without
    the resilver."""
    stats, foreground = _scan_phase(
        sc, target, target.method, seed, under_load=True, windows=LOADED_WINDOWS
    )
    seconds, progress, util = _integrate(total, stats, lambda w: w.rate)
    weights = [w.seconds for w in stats]
    during: dict[str, Any] = {}
    for direction in ("read", "write"):
        during[direction] = {
            key: float(np.average([f[direction][key] for f in foreground], weights=weights))
            for key in ("bytes_per_s", "iops", "latency_mean_s")
        }
    # the workload alone, to 5 % CI within 120 simulated seconds: a cap in simulated time,
    # so the figure does not depend on the machine's speed (the wall cap only guards)
    baseline = simulate_des(
        sc,
        seed=seed,
        control=RunControl(target_ci=0.05, max_sim_seconds=120.0, max_wall_seconds=600.0),
    )
    return {
        "seconds": seconds,
        "bytes_per_s": total / seconds if seconds > 0 else 0.0,
        "limit": _limit(util, "foreground"),
        "progress": [{"seconds": t, "bytes": b} for t, b in progress],
        "foreground_during": during,
        "foreground_alone": {
            "read": baseline.read.to_dict(),
            "write": baseline.write.to_dict(),
            "limit": baseline.limit,
        },
        "windows": list(_window_dicts(stats)),
    }


# ---------------------------------------------------------------- public hooks
# Other packages run their own copies on the same window machinery (zsim.grow's RAIDZ
# expansion): these are the functions above by public names, unchanged.


def integrate_windows(
    total: float, stats: list[WindowStats], rate_of: Any
) -> tuple[float, tuple[tuple[float, int], ...], dict[str, float]]:
    """Seconds to do ``total`` bytes when each window does an equal share at ``rate_of(w)``
    bytes/s, the progress curve ``(seconds, bytes)`` and the time-weighted utilisation."""
    return _integrate(total, stats, rate_of)


def busiest_limit(util: dict[str, float], fallback: str = "scan") -> str:
    """The resource at least :data:`BUSY` busy that bounds a rate, else ``fallback``."""
    return _limit(util, fallback)


def window_rows(stats: list[WindowStats]) -> tuple[dict[str, Any], ...]:
    """The windows as JSON rows (position, bytes/s, simulated seconds, busiest resources)."""
    return _window_dicts(stats)


def warm_up_workload(engine: Engine) -> None:
    """Start the scenario's workload on ``engine`` and run it past its start-up."""
    _warm_up(engine)


def foreground_rates(engine: Engine, start: float, end: float) -> dict[str, Any]:
    """The workload's read and write rates and mean latency between two simulated times."""
    return _foreground(engine, start, end)


def pool_scrub_seconds(sc: Scenario, seed: int = 1) -> float:
    """Seconds to scrub every allocated byte of ``sc``'s pool (idle), on the DES windows —
    the scrub :func:`simulate_resilver` adds after a sequential rebuild."""
    target = resolve_target(sc)
    if target.system != "zfs" or target.allocated == 0:
        return 0.0
    stats, _ = _scan_phase(sc, target, "scrub", seed, windows=WINDOWS // 2)
    n_data = len(sc.layout_tree().data_vdevs)  # type: ignore[union-attr]
    allocated = pool_allocated(sc, target)
    seconds, _, _ = _integrate(allocated, stats, lambda w: _scrub_rate(w, n_data))
    return seconds
