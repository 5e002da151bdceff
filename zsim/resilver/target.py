"""What a resilver has to do: which disk, which vdev, how, and how much data.

Pure functions of the scenario and the layout maps: no simulation here. The engine in
:mod:`zsim.resilver.zfs_scan` (or :mod:`zsim.resilver.md_rebuild`) turns a
:class:`ResilverTarget` into time.
"""

from __future__ import annotations

from dataclasses import dataclass

from zsim.errors import ZsimError
from zsim.layout.alloc import psize_to_asize
from zsim.layout.draid import draid_asize
from zsim.layout.raidz import raidz_columns
from zsim.layout.tree import MdArray, Vdev, ZfsLayout, ZpoolOnBlock
from zsim.scenario import Scenario
from zsim.zfs.compression import compressed_psize
from zsim.zfs.version import parse_zfs_version


@dataclass(frozen=True)
class ResilverTarget:
    """One resilver, resolved.

    ``system``: ``zfs``, ``md`` or ``lost`` (the failed disk was a vdev of its own: a stripe
    loses data, nothing to rebuild). For ZFS ``vdev_index`` / ``leaf_index`` locate the failed
    leaf among the data vdevs, ``method`` is ``healing`` or ``sequential`` and ``spare`` ``new``
    or ``distributed``; ``psize`` / ``asize`` are one block's sizes (bytes) and
    ``allocated`` the bytes allocated on the vdev (asize, parity included);
    ``resilver_bytes`` what is written to the replacement, ``space`` the vdev's allocatable
    bytes. For md ``member_bytes`` is the size of a member to rebuild.
    """

    system: str
    disk: str
    vdev: Vdev | None = None
    vdev_index: int = -1
    leaf_index: int = -1
    method: str = "healing"
    spare: str = "new"
    psize: int = 0
    asize: int = 0
    allocated: int = 0
    space: int = 0
    fill: float = 0.0
    resilver_bytes: int = 0
    md: MdArray | None = None
    member_bytes: int = 0

    @property
    def blocks(self) -> int:
        """Blocks allocated on the vdev."""
        return self.allocated // self.asize if self.asize else 0


def _fill_fraction(sc: Scenario, usable: int) -> float:
    """Allocated fraction of usable space: ``pool.allocated`` over usable, else ``pool.fill``."""
    pool = sc.pool
    if pool.allocated is not None:
        if pool.allocated > usable:
            raise ZsimError(
                f"pool.allocated ({pool.allocated} B) is more than the pool's usable "
                f"{usable} B; give at most the usable size, or a fill fraction"
            )
        return pool.allocated / usable if usable else 0.0
    return pool.fill


def leaf_share(vdev: Vdev, leaf: int, psize: int, ashift: int) -> float:
    """Fraction of a vdev's allocated bytes that sit on ``leaf`` and are written back by a
    resilver of it: the column map averaged over a whole cycle of block start positions
    (raidz skip sectors are allocated but never written, so they are not resilvered)."""
    if vdev.kind == "mirror":
        return 1.0
    asize = psize_to_asize(vdev, psize, ashift)
    if vdev.kind == "draid":
        ndisks = vdev.width - vdev.nspares
        return draid_asize(psize, ashift, vdev.ndata, vdev.parity) / asize / ndisks
    width, on_leaf, offset = vdev.width, 0, 0
    for _ in range(width):
        columns, _, _ = raidz_columns(offset, psize, ashift, width, vdev.parity)
        on_leaf += sum(size for child, _, size in columns if child == leaf)
        offset += asize
    return on_leaf / (width * asize)


def resolve_target(sc: Scenario) -> ResilverTarget:
    """The resilver ``sc`` asks for (``[resilver]``), checked: one :class:`ZsimError` naming
    the problem and the fix when it cannot exist."""
    spec, pool = sc.resilver, sc.pool
    layout = sc.layout_tree()
    if isinstance(layout, ZpoolOnBlock):
        layout = layout.block
    if isinstance(layout, MdArray):
        return _md_target(sc, layout)
    if not isinstance(layout, ZfsLayout):
        raise ZsimError(
            f"resilver models ZFS pools and md RAID; {pool.layout!r} is a {layout.system} "
            f"layout, which has no rebuild model (btrfs replace is not modelled; raw devices "
            f"have no redundancy) — simulate a ZFS or md layout"
        )
    data = layout.data_vdevs
    names = [d for v in data for d in v.devices]
    disk = spec.disk or next((d for d in names if d not in pool.failed), "")
    if disk not in names:
        support = [d for v in layout.vdevs for d in v.devices if d not in names]
        where = (
            " (a log, cache or special device: only data vdevs are modelled)"
            if (disk in support)
            else ""
        )
        raise ZsimError(
            f"resilver.disk = {disk!r} is not a data-vdev device of {pool.layout!r}{where}; "
            f"name one of {', '.join(names[:8])}{' …' if len(names) > 8 else ''}"
        )
    if disk in pool.failed:
        raise ZsimError(
            f"resilver.disk = {disk!r} is also in pool.failed; the disk being resilvered is "
            f"the one that failed — list only other missing disks in pool.failed"
        )
    index = next(i for i, v in enumerate(data) if disk in v.devices)
    vdev = data[index]
    leaf = vdev.devices.index(disk)
    missing = sum(1 for d in vdev.devices if d in pool.failed) + 1
    if vdev.kind == "disk":
        return ResilverTarget(system="lost", disk=disk, vdev=vdev, vdev_index=index)
    if missing > vdev.fault_tolerance:
        raise ZsimError(
            f"{disk!r} failing with {missing - 1} other disk(s) of its "
            f"{vdev.type_word()} vdev already missing is {missing} failures where it survives "
            f"{vdev.fault_tolerance}: the pool is lost; drop some from pool.failed"
        )
    spare = spec.spare
    if spare == "auto":
        spare = "distributed" if vdev.kind == "draid" and vdev.nspares else "new"
    if spare == "distributed" and not (vdev.kind == "draid" and vdev.nspares):
        raise ZsimError(
            f"resilver.spare = 'distributed' needs a dRAID vdev with distributed spares "
            f"(e.g. draid2:8d:1s:20c); {vdev.compact()!r} has none — use spare = 'new'"
        )
    method = spec.method
    if method == "auto":
        method = "sequential" if spare == "distributed" else "healing"
    version = parse_zfs_version(sc.hardware.zfs_version)
    if method == "sequential":
        if vdev.kind == "raidz":
            raise ZsimError(
                "resilver.method = 'sequential' is for mirrors and dRAID; raidz can only be "
                "healed block by block (its stripe width varies, vdev_rebuild.c) — use "
                "method = 'healing'"
            )
        if not version.at_least(2, 0):
            raise ZsimError(
                f"sequential rebuild arrived in OpenZFS 2.0; hardware.zfs_version = "
                f"{sc.hardware.zfs_version!r} — set zfs_version ≥ 2.0 or method = 'healing'"
            )
    if spare == "distributed" and method == "healing":
        raise ZsimError(
            "a dRAID distributed spare is always rebuilt sequentially (then scrubbed); "
            "set resilver.method = 'sequential' or 'auto'"
        )
    cap = sc.pool_capacity()
    vcap = [v for v in cap.vdevs if v.vclass == "normal"][index]
    fill = _fill_fraction(sc, cap.usable_bytes)
    block = spec.block_size or pool.recordsize
    ratio = pool.compress_ratio if pool.compression != "off" else 1.0
    psize = compressed_psize(block, ratio, pool.ashift)
    asize = psize_to_asize(vdev, psize, pool.ashift)
    space = vcap.metaslab_bytes
    allocated = int(fill * space) // asize * asize
    share = leaf_share(vdev, leaf, psize, pool.ashift)
    return ResilverTarget(
        system="zfs",
        disk=disk,
        vdev=vdev,
        vdev_index=index,
        leaf_index=leaf,
        method=method,
        spare=spare,
        psize=psize,
        asize=asize,
        allocated=allocated,
        space=space,
        fill=fill,
        resilver_bytes=int(allocated * share),
    )


def _md_target(sc: Scenario, md: MdArray) -> ResilverTarget:
    pool, spec = sc.pool, sc.resilver
    disk = spec.disk or next((d for d in md.devices if d not in pool.failed), "")
    if disk not in md.devices:
        raise ZsimError(
            f"resilver.disk = {disk!r} is not a member of {md.compact()!r}; name one of "
            f"{', '.join(md.devices[:8])}"
        )
    if disk in pool.failed:
        raise ZsimError(
            f"resilver.disk = {disk!r} is also in pool.failed; list only other missing "
            f"members there"
        )
    if md.level == 0:
        return ResilverTarget(system="lost", disk=disk, md=md)
    missing = sum(1 for d in md.devices if d in pool.failed) + 1
    if missing > md.fault_tolerance:
        raise ZsimError(
            f"{disk!r} failing with {missing - 1} other member(s) missing is more than "
            f"{md.compact()!r} survives ({md.fault_tolerance}): the array is lost"
        )
    size = sc.hardware.disk.size_bytes
    return ResilverTarget(
        system="md",
        disk=disk,
        md=md,
        member_bytes=size,
        resilver_bytes=size,
        method="rebuild",
    )
