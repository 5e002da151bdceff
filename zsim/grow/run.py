"""``zsim.grow(sc, attach=N | add_vdev=LAYOUT)``: space, reflow time and speed of a grown pool.

* **Space** before and after: :func:`zsim.capacity` of both layouts (SIZE, ``zfs list``
  USED+AVAIL, real, after rewrite; :mod:`zsim.zfs.expansion` for an expanded raidz), with
  the pool ``pool.fill`` full at each attach.
* **Reflow** (``--attach``): each attach's copy on the discrete-event engine
  (:mod:`zsim.grow.reflow`), one after another as OpenZFS runs them, and the scrub each one
  starts. Redundancy is kept throughout: no degraded window.
* **Performance**: the scenario's workload before and after on the analytic engine, when it
  answers (when it declines, the reason is given and nothing else is run); and for a pool of
  several normal vdevs how new writes spread over them (:mod:`zsim.grow.alloc_bias`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from zsim.analytic.validity import validity
from zsim.capacity import CapacityReport, VdevCapacity, capacity
from zsim.errors import ZsimError
from zsim.grow.alloc_bias import bias_shares, evening_out, group_aliquot, throttled_split
from zsim.grow.plan import GrowPlan, plan_grow
from zsim.grow.reflow import ReflowInput, ReflowResult, simulate_reflow
from zsim.grow.result import SPACE_KEYS, GrowResult
from zsim.layout.alloc import psize_to_asize
from zsim.layout.tree import Vdev, ZfsLayout
from zsim.resilver.run import pool_scrub_seconds
from zsim.scenario import Scenario
from zsim.simulate import simulate
from zsim.zfs.compression import compressed_psize
from zsim.zfs.expansion import allocated_before_attach
from zsim.zfs.version import parse_zfs_version


def grow_capacity(sc: Scenario, disk_sizes: Mapping[str, int], fill: float) -> CapacityReport:
    """:func:`zsim.capacity` of a scenario's pool as ``zsim grow`` reads it: the pool ``fill``
    full before its first attach, each later attach moving the same data."""
    return capacity(
        sc.layout_tree(),
        sc.hardware.disk.size_bytes,
        ashift=sc.pool.ashift,
        zfs_version=parse_zfs_version(sc.hardware.zfs_version),
        partitioning=sc.pool.partitioning,  # type: ignore[arg-type]
        logical_sector=sc.hardware.disk.logical_sector_bytes,
        disk_sizes=dict(disk_sizes) or None,
        fill_at_attach=fill,
        written_between_attaches=False,  # zpool attach one after another: the same data
    )


def _space(cap: CapacityReport) -> dict[str, int]:
    out = {key: int(getattr(cap, key)) for key in SPACE_KEYS}
    out["raw_bytes"] = cap.raw_bytes
    return out


def _fill(sc: Scenario, usable: int) -> float:
    """``pool.allocated`` over the usable space, else ``pool.fill`` (below 1)."""
    if sc.pool.allocated is not None:
        if sc.pool.allocated > usable:
            raise ZsimError(
                f"pool.allocated ({sc.pool.allocated} B) is more than the pool's usable "
                f"{usable} B; give at most the usable size, or a fill fraction"
            )
        fill = sc.pool.allocated / usable if usable else 0.0
    else:
        fill = sc.pool.fill
    return min(fill, 0.999)


def _normal(cap: CapacityReport) -> list[VdevCapacity]:
    return [v for v in cap.vdevs if v.vclass == "normal"]


def _data_vdevs(sc: Scenario) -> tuple[Vdev, ...]:
    tree = sc.layout_tree()
    assert isinstance(tree, ZfsLayout)
    return tree.data_vdevs


def _with_allocated(sc: Scenario, allocated: int) -> Scenario:
    """The scenario with its data as an absolute amount, so a larger pool holds the same."""
    pool = dataclasses.replace(sc.pool, allocated=allocated, fill=type(sc.pool).fill)
    return dataclasses.replace(sc, pool=pool)


def _reflows(
    plan: GrowPlan,
    cap_before: CapacityReport,
    cap_after: CapacityReport,
    fill: float,
    seed: int,
    under_load: bool,
) -> tuple[ReflowResult, ...]:
    sc = plan.before
    target = _data_vdevs(sc)[plan.vdev_index]
    ashift = sc.pool.ashift
    steps = _normal(cap_after)[plan.vdev_index].steps
    # what each attach copies: the data there before the first, moved again by each later
    # one (the reading of the space figures and of the engines' old-width regions)
    allocated_at = allocated_before_attach(steps, fill, ashift, refill=False)
    ratio = sc.pool.compress_ratio if sc.pool.compression != "off" else 1.0
    psize = compressed_psize(sc.pool.recordsize, ratio, ashift)
    block = psize_to_asize(target.as_created(), psize, ashift)
    reported = int(fill * cap_before.usable_bytes)
    out = []
    for k, step_sc in enumerate(plan.steps):
        at = steps[target.attached + k]  # the vdev before this attach
        allocated = allocated_at[target.attached + k]
        ri = ReflowInput(
            scenario=_with_allocated(step_sc, reported),
            vdev_index=plan.vdev_index,
            old_children=target.width + k,
            space=at.metaslab_bytes,
            allocated=allocated,
            metaslab_shift=at.metaslab_shift,
            block_asize=block,
            packed=sc.resilver.written == "sequential",
        )
        result = simulate_reflow(
            ri, seed + k, under_load=under_load, vdev_name=f"{target.type_word()}-{k}"
        )
        scrub = pool_scrub_seconds(ri.scenario, seed + k) if allocated else 0.0
        out.append(dataclasses.replace(result, vdev=target.compact(), scrub_seconds=scrub))
    return tuple(out)


def _analytic(sc: Scenario, seed: int) -> dict[str, Any]:
    """The workload on the analytic engine, or why it declines (no DES is run instead)."""
    reason = validity(sc)
    if reason is not None:
        return {"engine": "analytic", "declined": reason}
    return _answer(sc, simulate(sc, engine="analytic", seed=seed), "analytic")


def _des(sc: Scenario, seed: int) -> dict[str, Any]:
    """The workload on the discrete-event engine, bounded (5 % CI, 120 simulated s, 60 s of
    wall time): what the analytic answer is checked against."""
    r = simulate(sc, engine="des", seed=seed, target_ci=0.05, max_sim_seconds=120.0)
    out = _answer(sc, r, "des")
    out["ci_rel"] = r.ci_rel
    return out


def _answer(sc: Scenario, r: Any, engine: str) -> dict[str, Any]:
    return {
        "engine": engine,
        "layout": sc.pool.layout,
        "fill_at_attach": sc.pool.fill_at_attach,
        "read": r.read.to_dict(),
        "write": r.write.to_dict(),
        "limit": r.limit,
    }


def _old_blocks(sc: Scenario, fill: float) -> Scenario:
    """``sc`` (the grown pool) with the blocks written before the attaches at the width they
    were born at: the pool was ``fill`` full before the first (``pool.fill_at_attach``)."""
    tree = sc.layout_tree()
    if not fill or not any(v.attached for v in getattr(tree, "vdevs", ())):
        return sc
    pool = dataclasses.replace(sc.pool, fill_at_attach=fill, written_between_attaches=False)
    return dataclasses.replace(sc, pool=pool)


def _reads_only(sc: Scenario) -> bool:
    w = sc.workload
    return w.rw in ("read", "randread") if w.tool == "fio" else w.direction == "read"


def _performance(
    plan: GrowPlan, fill: float, usable_before: int, seed: int, engine: Any
) -> dict[str, Any]:
    """The workload before; after, on the data already there; and on data written since.

    After an attach the data already there keeps its blocks' width (``after``), data written
    since has the new one (``after_new_data``). ``zpool add`` copies nothing: the data
    already there stays on the old vdevs, so reads of it run as before, and only data
    written since spreads over every vdev (``after_new_data``; for writes the rotor and the
    allocation throttle, which keeps every vdev busy, :func:`_spread`).
    """
    after = _with_allocated(plan.after, int(fill * usable_before))
    out = {"before": engine(plan.before, seed)}
    if plan.kind == "attach":
        out["after"] = engine(_old_blocks(after, fill), seed)
        if fill:
            new = dataclasses.replace(after.pool, fill_at_attach=0.0)
            out["after_new_data"] = engine(dataclasses.replace(after, pool=new), seed)
        return out
    out["after_new_data"] = spread = engine(after, seed)
    if _reads_only(plan.before):
        out["after"] = {**out["before"], "data": "on the vdevs that held it before zpool add"}
    else:
        out["after"] = {**spread, "data": "reads spread over every vdev, as for data written "
                        "since; data written before zpool add stays on the old vdevs"}  # fmt: skip
    return out


def _spread(
    plan: GrowPlan, cap_after: CapacityReport, fill: float, after_perf: dict[str, Any]
) -> dict[str, Any] | None:
    """How new writes spread over the grown pool's normal vdevs (several of them)."""
    vdevs = _data_vdevs(plan.after)
    caps = _normal(cap_after)
    if len(vdevs) < 2:
        return None
    n_old = len(_data_vdevs(plan.before))
    space = [v.metaslab_bytes for v in caps]
    if plan.kind == "add-vdev":
        alloc = [int(fill * s) if i < n_old else 0 for i, s in enumerate(space)]
    else:
        before = _normal(grow_capacity(plan.before, {}, fill))
        alloc = [int(fill * b.metaslab_bytes) for b in before]
    free = [s - a for s, a in zip(space, alloc, strict=True)]
    aliquots = [group_aliquot(v) for v in vdevs]
    block = plan.before.pool.recordsize
    preferred = bias_shares(free, aliquots, block)
    balanced = bias_shares(space, aliquots, block)
    out: dict[str, Any] = {
        "vdevs": [
            {
                "vdev": v.compact(),
                "devices": list(v.devices),
                "allocated_fraction": a / s if s else 0.0,
                "share_by_free_space": p,
                "share_empty_pool": b,
            }
            for v, a, s, p, b in zip(vdevs, alloc, space, preferred, balanced, strict=True)
        ],
    }
    total = after_perf.get("write", {}).get("bytes_per_s", 0.0)

    def by_bias(free: Sequence[int]) -> Sequence[float]:
        return bias_shares(free, aliquots, block)

    if "declined" in after_perf or total <= 0:
        out["note"] = "no write rate from the analytic engine: shares only"
        out["evening_out"] = {"unthrottled": _evening(alloc, space, by_bias, 0.0)}
        return out
    capacities = [total * b for b in balanced]
    evening: dict[str, Any] = {}
    for throttle, key in ((True, "throttled"), (False, "unthrottled")):
        split = throttled_split(preferred, capacities, total, throttle=throttle)
        out[key] = {
            "write_bytes_per_s": split.total,
            "vdev_write_bytes_per_s": list(split.rates),
            "vdev_busy": [
                r / c if c else 0.0 for r, c in zip(split.rates, capacities, strict=True)
            ],
        }

        def placed(free: Sequence[int], throttle: bool = throttle) -> Sequence[float]:
            # where a rewrite's new copy goes at the workload's write rate
            cut = throttled_split(by_bias(free), capacities, total, throttle=throttle)
            return [r / cut.total for r in cut.rates] if cut.total else by_bias(free)

        evening[key] = _evening(alloc, space, placed, split.total)
    out["evening_out"] = evening
    return out


def _evening(
    alloc: list[int],
    space: list[int],
    shares: Callable[[Sequence[int]], Sequence[float]],
    rate: float,
    points: int = 21,
) -> dict[str, Any]:
    """The vdevs evening out as the data is rewritten (:func:`evening_out`), for JSON: the
    bytes (and seconds at ``rate``) until within 5 points, and the curve thinned to
    ``points``."""
    ev = evening_out(alloc, space, shares)
    keep = max(1, -(-len(ev.curve) // points))
    curve = [*ev.curve[::keep], *([ev.curve[-1]] if (len(ev.curve) - 1) % keep else [])]
    return {
        "within": ev.within,
        "bytes_rewritten": ev.bytes_to_even,
        "seconds": ev.bytes_to_even / rate if ev.bytes_to_even is not None and rate else None,
        "curve": [{"bytes_rewritten": b, "vdev_allocated_fraction": list(f)} for b, f in curve],
    }


def _notes(plan: GrowPlan, reflows: tuple[ReflowResult, ...]) -> list[str]:
    notes = []
    if plan.kind == "attach":
        notes.append(
            "redundancy is kept during the reflow (the vdev stays raidz"
            f"{_data_vdevs(plan.before)[plan.vdev_index].parity}): no degraded window"
        )
        notes.append(
            "performance after: reads of the data already there, whose blocks keep the width "
            "they were born at (OpenZFS's expanded map); 'after, new data' is for data written "
            "since (or rewritten), at the new width"
        )
    else:
        notes.append(
            "zpool add copies nothing; existing data stays on the old vdevs until rewritten"
        )
    return notes


def simulate_grow(
    sc: Scenario,
    *,
    attach: int | None = None,
    add_vdev: str | None = None,
    vdev: int = 0,
    new_disk_size: int | str | None = None,
    reflow: bool = True,
    under_load: bool = False,
    seed: int = 1,
    des: bool = False,
) -> GrowResult:
    """Grow ``sc``'s pool (see the module docstring); ``reflow=False`` skips the reflow's
    DES; ``des=True`` also runs the workload before and after on the discrete-event engine
    (``performance.des``), bounded, beside the analytic answers."""
    started = time.perf_counter()
    if not isinstance(sc, Scenario):
        raise ZsimError("grow: sc must be a Scenario (from load_scenario)")
    if not isinstance(des, bool):
        raise ZsimError(f"grow: des {des!r} must be True or False")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ZsimError(f"grow: seed {seed!r} must be a whole number ≥ 0")
    plan = plan_grow(sc, attach=attach, add_vdev=add_vdev, vdev=vdev, new_disk_size=new_disk_size)
    cap_before = grow_capacity(plan.before, {}, 0.0)
    fill = _fill(sc, cap_before.usable_bytes)
    cap_before = grow_capacity(plan.before, {}, fill)
    cap_after = grow_capacity(plan.after, plan.disk_sizes, fill)
    reflows: tuple[ReflowResult, ...] = ()
    seconds: float | None = None
    if plan.kind == "attach" and reflow:
        reflows = _reflows(plan, cap_before, cap_after, fill, seed, under_load)
        seconds = float(sum(r.seconds for r in reflows))
    performance: dict[str, Any] = _performance(plan, fill, cap_before.usable_bytes, seed, _analytic)
    if des:
        performance["des"] = _performance(plan, fill, cap_before.usable_bytes, seed, _des)
    after_perf = performance.get("after_new_data", performance["after"])
    spread = _spread(plan, cap_after, fill, after_perf)
    if spread is not None:
        performance["spread"] = spread
    notes = _notes(plan, reflows)
    if plan.kind == "attach" and not reflow:
        notes.append("reflow not simulated (reflow=False)")
    return GrowResult(
        kind=plan.kind,
        layout_before=plan.before.pool.layout,
        layout_after=plan.after.pool.layout,
        commands=plan.commands,
        fill=fill,
        space_before=_space(cap_before),
        space_after=_space(cap_after),
        seconds=seconds,
        reflows=reflows,
        performance=performance,
        seed=seed,
        scenario=sc.to_dict(),
        wall_seconds=time.perf_counter() - started,
        notes=tuple(notes),
    )
