"""The pool's loss probabilities from its simulated rebuild times (:mod:`zsim.reliability`).

The redundancy groups come from the layout (a mirror, a raidz vdev, a dRAID vdev — its
children fail together as one group —, an md array or its RAID10 pairs, a stripe's single
disks); each group's rebuild window is ``durability.replace_after`` (0 for a dRAID distributed
spare, which ZED activates at once) plus the simulated resilver time, idle or under load in
the shares ``durability.busy_fraction`` gives. Vdevs of another shape than the one simulated
take its time: each of their disks holds about the same allocated bytes (an approximation).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from zsim.errors import ZsimError
from zsim.layout.tree import MdArray, ZfsLayout, ZpoolOnBlock
from zsim.reliability import FailureModel, GroupSpec, RebuildWindow, afr_from_mtbf, durability
from zsim.resilver.result import ResilverResult
from zsim.resilver.target import ResilverTarget
from zsim.scenario import Scenario


def failure_rate(sc: Scenario) -> float | None:
    """The annual failure rate: ``durability.afr``, else the disk profile's ``afr``, else
    its datasheet MTBF; ``None`` when none of them is given."""
    spec, disk = sc.durability, sc.hardware.disk
    if spec.afr is not None:
        return spec.afr
    if disk.afr is not None:
        return disk.afr
    if disk.mtbf_hours:
        return afr_from_mtbf(disk.mtbf_hours)
    return None


def no_rate_note(sc: Scenario) -> str:
    """What to say when :func:`failure_rate` is ``None``: the loss probability was not
    computed, and how to give a rate (the rebuild time needs none)."""
    return (
        f"loss probability not computed: no failure rate for {sc.hardware.disk.name!r} (its "
        "profile has neither afr nor mtbf_hours); set durability.afr = 0.015 in [durability] "
        "or give the disk an afr (e.g. afr = 0.015 in its profile or inline table)"
    )


def failure_model(sc: Scenario) -> FailureModel:
    """``[durability]`` and the disk profile → a :class:`FailureModel` (AFR from the
    table, else the profile's ``afr``, else its datasheet MTBF)."""
    spec = sc.durability
    afr = failure_rate(sc)
    if afr is None:
        raise ZsimError(no_rate_note(sc))
    return FailureModel(
        afr=afr,
        distribution=spec.distribution,
        weibull_shape=spec.weibull_shape,
        ure_per_bit=spec.ure_per_bit,
    )


def _windows(sc: Scenario, result: ResilverResult, scale: float, delay: float) -> RebuildWindow:
    idle = (result.seconds or 0.0) * scale + delay
    busy = sc.durability.busy_fraction
    loaded = result.under_load.get("seconds") if result.under_load else None
    if busy > 0 and loaded:
        return RebuildWindow((max(idle, 1.0), max(loaded * scale + delay, 1.0)), (1 - busy, busy))
    return RebuildWindow.fixed(max(idle, 1.0))


def pool_groups(sc: Scenario, target: ResilverTarget, result: ResilverResult) -> list[GroupSpec]:
    """The pool's redundancy groups, each with its rebuild window and read bytes."""
    layout = sc.layout_tree()
    if isinstance(layout, ZpoolOnBlock):
        layout = layout.block
    delay = sc.durability.replace_after
    if isinstance(layout, MdArray):
        window = _windows(sc, result, 1.0, delay)
        read = float(result.bytes_read)
        shape = layout.redundancy
        return [
            GroupSpec(
                shape.group_width, shape.tolerance, shape.groups, window, read, layout.compact()
            )
        ]
    assert isinstance(layout, ZfsLayout)
    shapes = Counter(v.compact() for v in layout.data_vdevs)
    first = {v.compact(): v for v in layout.data_vdevs}
    groups = []
    base = float(target.resilver_bytes or 1)
    for name, count in shapes.items():
        vdev = first[name]
        if vdev.kind == "disk":
            groups.append(GroupSpec(1, 0, count, RebuildWindow.fixed(1.0), 0.0, name))
            continue
        # every child of every shape holds about `fill` of its disk, so a vdev of another
        # shape rebuilds about the same bytes at the simulated rate: the same window
        scale = 1.0
        # a hot spare (ZED attaches it at once) or a dRAID distributed spare: no wait
        hot = bool(layout.of_class("spare"))
        wait = 0.0 if hot or (target.spare == "distributed" and vdev.kind == "draid") else delay
        window = _windows(sc, result, scale, wait)
        read = float(result.bytes_read) if result.bytes_read else base
        groups.append(GroupSpec(vdev.width, vdev.fault_tolerance, count, window, read, name))
    return groups


def pool_durability(
    sc: Scenario, target: ResilverTarget, result: ResilverResult, seed: int
) -> dict[str, Any]:
    """The :func:`zsim.reliability.durability` figures for ``sc``, as JSON-able data."""
    model = failure_model(sc)
    groups = pool_groups(sc, target, result)
    out = durability(
        groups, model, sc.durability.mission, trials=sc.durability.trials, seed=seed
    ).to_dict()
    out["afr"] = model.afr
    out["groups"] = [
        {
            "name": g.name,
            "disks": g.disks,
            "tolerance": g.tolerance,
            "count": g.count,
            "window_seconds": list(g.window.seconds),
            "window_weights": list(g.window.weights),
            "rebuild_read_bytes": g.rebuild_read_bytes,
        }
        for g in groups
    ]
    return out
