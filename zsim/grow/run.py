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
from typing import Any

from zsim.analytic.validity import validity
from zsim.capacity import CapacityReport, VdevCapacity, capacity
from zsim.errors import ZsimError
from zsim.grow.alloc_bias import bias_shares, group_aliquot, throttled_split
from zsim.grow.plan import GrowPlan, plan_grow
from zsim.grow.reflow import ReflowInput, ReflowResult, simulate_reflow
from zsim.grow.result import SPACE_KEYS, GrowResult
from zsim.layout.alloc import psize_to_asize
from zsim.layout.tree import Vdev, ZfsLayout
from zsim.resilver.run import pool_scrub_seconds
from zsim.scenario import Scenario
from zsim.simulate import simulate
from zsim.zfs.compression import compressed_psize
from zsim.zfs.version import parse_zfs_version


def _capacity(sc: Scenario, disk_sizes: dict[str, int], fill: float) -> CapacityReport:
    return capacity(
        sc.layout_tree(),
        sc.hardware.disk.size_bytes,
        ashift=sc.pool.ashift,
        zfs_version=parse_zfs_version(sc.hardware.zfs_version),
        partitioning=sc.pool.partitioning,  # type: ignore[arg-type]
        logical_sector=sc.hardware.disk.logical_sector_bytes,
        disk_sizes=disk_sizes or None,
        fill_at_attach=fill,
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
    sector = 1 << ashift
    vcap = _normal(cap_before)[plan.vdev_index]
    steps = _normal(cap_after)[plan.vdev_index].steps
    allocated = int(fill * vcap.metaslab_bytes) // sector * sector
    ratio = sc.pool.compress_ratio if sc.pool.compression != "off" else 1.0
    psize = compressed_psize(sc.pool.recordsize, ratio, ashift)
    block = psize_to_asize(target.as_created(), psize, ashift)
    reported = int(fill * cap_before.usable_bytes)
    out = []
    for k, step_sc in enumerate(plan.steps):
        at = steps[target.attached + k]  # the vdev before this attach
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
    r = simulate(sc, engine="analytic", seed=seed)
    return {
        "engine": "analytic",
        "layout": sc.pool.layout,
        "read": r.read.to_dict(),
        "write": r.write.to_dict(),
        "limit": r.limit,
    }


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
        before = _normal(_capacity(plan.before, {}, fill))
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
    if "declined" in after_perf or total <= 0:
        out["note"] = "no write rate from the analytic engine: shares only"
        return out
    capacities = [total * b for b in balanced]
    for throttle, key in ((True, "throttled"), (False, "unthrottled")):
        split = throttled_split(preferred, capacities, total, throttle=throttle)
        out[key] = {
            "write_bytes_per_s": split.total,
            "vdev_write_bytes_per_s": list(split.rates),
            "vdev_busy": [
                r / c if c else 0.0 for r, c in zip(split.rates, capacities, strict=True)
            ],
        }
    return out


def _notes(plan: GrowPlan, reflows: tuple[ReflowResult, ...]) -> list[str]:
    notes = []
    if plan.kind == "attach":
        notes.append(
            "redundancy is kept during the reflow (the vdev stays raidz"
            f"{_data_vdevs(plan.before)[plan.vdev_index].parity}): no degraded window"
        )
        notes.append(
            "the performance after is for data written after the attach (the new width); "
            "blocks written before keep their old width until rewritten"
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
) -> GrowResult:
    """Grow ``sc``'s pool (see the module docstring); ``reflow=False`` skips the DES."""
    started = time.perf_counter()
    if not isinstance(sc, Scenario):
        raise ZsimError("grow: sc must be a Scenario (from load_scenario)")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ZsimError(f"grow: seed {seed!r} must be a whole number ≥ 0")
    plan = plan_grow(sc, attach=attach, add_vdev=add_vdev, vdev=vdev, new_disk_size=new_disk_size)
    cap_before = _capacity(plan.before, {}, 0.0)
    fill = _fill(sc, cap_before.usable_bytes)
    cap_before = _capacity(plan.before, {}, fill)
    cap_after = _capacity(plan.after, plan.disk_sizes, fill)
    reflows: tuple[ReflowResult, ...] = ()
    seconds: float | None = None
    if plan.kind == "attach" and reflow:
        reflows = _reflows(plan, cap_before, cap_after, fill, seed, under_load)
        seconds = float(sum(r.seconds for r in reflows))
    before_perf = _analytic(plan.before, seed)
    after_perf = _analytic(_with_allocated(plan.after, int(fill * cap_before.usable_bytes)), seed)
    performance: dict[str, Any] = {"before": before_perf, "after": after_perf}
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
