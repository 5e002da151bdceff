"""What a grow is: the pool before and after ``zpool attach`` or ``zpool add``, checked.

Pure functions of the scenario and the layout grammar; no simulation here. The refusals are
the ones OpenZFS makes (``spa_vdev_attach()`` in ``module/zfs/spa.c``,
``vdev_raidz_attach_check()`` in ``module/zfs/vdev_raidz.c``, ``is_grouping()`` in
``cmd/zpool/zpool_vdev.c``), each as one :class:`ZsimError` naming the fix.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from zsim.errors import ZsimError
from zsim.layout.grammar import MAX_RAIDZ_CHILDREN, parse_layout, to_zpool
from zsim.layout.tree import Vdev, ZfsLayout, linux_disk_name
from zsim.scenario import Scenario
from zsim.units import parse_size
from zsim.zfs.expansion import EXPANSION_RELEASE, POOL_NAME
from zsim.zfs.version import parse_zfs_version


@dataclass(frozen=True)
class GrowPlan:
    """One grow, resolved.

    ``kind``: ``attach`` (RAIDZ expansion of data vdev ``vdev_index`` by ``attach`` disks)
    or ``add-vdev``. ``before``/``after``: the scenario with the pool as it is and as grown
    (``after.pool.layout`` in the ``zpool`` device form, attached disks spelled ``attach``).
    ``steps``: for an attach, the scenario after each single attach (the reflow of step k
    runs on ``steps[k]``). ``disk_sizes``: the new devices' sizes in bytes when they differ
    from the profile's. ``commands``: the ``zpool`` commands that do it, in order.
    """

    kind: str
    before: Scenario
    after: Scenario
    vdev_index: int
    attach: int
    new_devices: tuple[str, ...]
    steps: tuple[Scenario, ...]
    disk_sizes: dict[str, int]
    commands: tuple[str, ...]


def _fresh_names(used: set[str], count: int) -> list[str]:
    names: list[str] = []
    i = 0
    while len(names) < count:
        name = linux_disk_name(i)
        if name not in used:
            names.append(name)
            used.add(name)
        i += 1
    return names


def _with_layout(sc: Scenario, layout: ZfsLayout) -> Scenario:
    return dataclasses.replace(sc, pool=dataclasses.replace(sc.pool, layout=to_zpool(layout)))


def _zfs_layout(sc: Scenario) -> ZfsLayout:
    tree = sc.layout_tree()
    if not isinstance(tree, ZfsLayout):
        raise ZsimError(
            f"zsim grow models ZFS pools; {sc.pool.layout!r} is a {tree.system} layout — "
            f"give a scenario whose pool.layout is a ZFS layout"
        )
    if sc.pool.failed:
        raise ZsimError(
            f"the pool is degraded (pool.failed = {list(sc.pool.failed)}); OpenZFS pauses an "
            f"expansion until the vdev is healthy — grow a healthy pool (remove pool.failed)"
        )
    return tree


def plan_grow(
    sc: Scenario,
    *,
    attach: int | None,
    add_vdev: str | None,
    vdev: int = 0,
    new_disk_size: int | str | None = None,
) -> GrowPlan:
    """The grow ``sc`` + (``attach`` disks on data vdev ``vdev`` | the vdevs ``add_vdev``)."""
    if (attach is None) == (add_vdev is None):
        raise ZsimError(
            "give exactly one of --attach N (RAIDZ expansion) or --add-vdev LAYOUT "
            "(zpool add), not " + ("both" if attach is not None else "neither")
        )
    tree = _zfs_layout(sc)
    size = None
    if new_disk_size is not None:
        size = parse_size(new_disk_size) if isinstance(new_disk_size, str) else new_disk_size
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            raise ZsimError(f"new disk size {new_disk_size!r} must be a size > 0, e.g. 12TB")
    if attach is not None:
        return _plan_attach(sc, tree, attach, vdev, size)
    assert add_vdev is not None
    return _plan_add(sc, tree, add_vdev, size)


def _plan_attach(
    sc: Scenario, tree: ZfsLayout, attach: int, index: int, size: int | None
) -> GrowPlan:
    if not isinstance(attach, int) or isinstance(attach, bool) or attach < 1:
        raise ZsimError(f"--attach {attach!r}: give the number of disks to attach, 1 or more")
    data = tree.data_vdevs
    if not isinstance(index, int) or not 0 <= index < len(data):
        raise ZsimError(
            f"--vdev {index!r}: the pool has {len(data)} data vdev(s); give 0…{len(data) - 1}"
        )
    target = data[index]
    if target.kind == "draid":
        raise ZsimError(
            f"zpool attach cannot expand a dRAID vdev ({target.compact()}): its width is "
            f"fixed at creation — grow the pool with --add-vdev instead"
        )
    if target.kind != "raidz":
        raise ZsimError(
            f"attaching a disk to a {target.type_word()} vdev ({target.compact()}) adds a "
            f"copy, not space; RAIDZ expansion needs a raidz vdev — use --add-vdev to grow"
        )
    version = parse_zfs_version(sc.hardware.zfs_version)
    if not version.at_least(*EXPANSION_RELEASE):
        raise ZsimError(
            f"RAIDZ expansion needs OpenZFS 2.3 or later; the scenario runs {version} — set "
            f"--set hardware.zfs_version=2.3 (or later), or use --add-vdev"
        )
    if target.width + attach > MAX_RAIDZ_CHILDREN:
        raise ZsimError(
            f"{target.compact()} + {attach} disks is {target.width + attach} columns, more "
            f"than a raidz vdev can have ({MAX_RAIDZ_CHILDREN}); attach at most "
            f"{MAX_RAIDZ_CHILDREN - target.width}, or add a vdev"
        )
    new = _fresh_names(set(tree.devices), attach)
    data_pos = [i for i, v in enumerate(tree.vdevs) if v.vclass == "normal"][index]
    steps = []
    for k in range(1, attach + 1):
        grown = Vdev(
            "raidz",
            target.devices + tuple(new[:k]),
            parity=target.parity,
            vclass=target.vclass,
            attached=target.attached + k,
        )
        vdevs = list(tree.vdevs)
        vdevs[data_pos] = grown
        steps.append(_with_layout(sc, ZfsLayout(tuple(vdevs))))
    commands = tuple(f"zpool attach {POOL_NAME} {target.type_word()}-{data_pos} {d}" for d in new)
    return GrowPlan(
        kind="attach",
        before=sc,
        after=steps[-1],
        vdev_index=index,
        attach=attach,
        new_devices=tuple(new),
        steps=tuple(steps),
        disk_sizes=dict.fromkeys(new, size) if size is not None else {},
        commands=commands,
    )


def _plan_add(sc: Scenario, tree: ZfsLayout, add_vdev: str, size: int | None) -> GrowPlan:
    if not isinstance(add_vdev, str) or not add_vdev.strip():
        raise ZsimError("--add-vdev needs a layout, e.g. 'raidz2 6' or 'mirror 2'")
    added = parse_layout(add_vdev)
    if not isinstance(added, ZfsLayout):
        raise ZsimError(
            f"--add-vdev {add_vdev!r} is a {added.system} layout; give ZFS vdevs, e.g. 'raidz2 6'"
        )
    if any(v.attached for v in added.vdevs):
        raise ZsimError(
            f"--add-vdev {add_vdev!r}: a new vdev has nothing attached yet; write it at its "
            f"width (e.g. 'raidz2 8') and use --attach to expand"
        )
    version = parse_zfs_version(sc.hardware.zfs_version)
    used = set(tree.devices)
    renamed = [
        dataclasses.replace(v, devices=tuple(_fresh_names(used, len(v.devices))))
        for v in added.vdevs
    ]
    data = [v for v in tree.vdevs if v.vclass == "normal"]
    support = [v for v in tree.vdevs if v.vclass != "normal"]
    new_data = [v for v in renamed if v.vclass == "normal"]
    new_support = [v for v in renamed if v.vclass != "normal"]
    grown = ZfsLayout(tuple(data + new_data + support + new_support))
    after = _with_layout(sc, grown)
    new_devices = tuple(d for v in renamed for d in v.devices)
    added_text = to_zpool(ZfsLayout(tuple(renamed)))
    if new_data and any(v.kind == "draid" for v in new_data) and not version.at_least(2, 1):
        raise ZsimError(
            f"dRAID arrived in OpenZFS 2.1; the scenario runs {version} — set "
            f"hardware.zfs_version ≥ 2.1 or add another vdev kind"
        )
    return GrowPlan(
        kind="add-vdev",
        before=sc,
        after=after,
        vdev_index=len(data),
        attach=0,
        new_devices=new_devices,
        steps=(after,),
        disk_sizes=dict.fromkeys(new_devices, size) if size is not None else {},
        commands=(f"zpool add {POOL_NAME} {added_text}",),
    )
