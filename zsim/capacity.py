"""Usable capacity of a pool, byte-exact against OpenZFS, and of md/btrfs arrays for comparison.

Integer arithmetic throughout, in the order OpenZFS does it. Each rule is a small pure function
naming the OpenZFS source it comes from (:mod:`zsim.zfs.space`); :func:`capacity` strings them
together:

per leaf       partition (Linux whole disk) → align to 256 KiB → − 4.5 MiB labels and boot area
per top vdev   asize by type → metaslab size and count → raw = metaslab space
               deflate ratio from a 128 KiB block → dspace; one metaslab to the embedded log
pool           normal-class dspace − slop (floor, cap, embedded-log credit)
               = ``zfs list`` USED+AVAIL

An expanded raidz (``raidz2 6+2``, OpenZFS 2.3+) keeps its creation's metaslab size and deflate
ratio; :mod:`zsim.zfs.expansion` gives its steps and the space really usable
(``usable_new_data_bytes``, ``usable_after_rewrite_bytes``); ``docs/grow.md`` explains them.

See ``docs/architecture.md`` for who owns what and ``../shared/notes/capacity-rules.md`` for the
derivation. Golden vectors from OpenZFS itself are in ``tests/data/openzfs-capacity-vectors.toml``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from zsim.errors import ZsimError, check_arg
from zsim.layout.alloc import psize_to_asize
from zsim.layout.grammar import parse_layout, to_compact, to_zpool
from zsim.layout.mdraid import md_array_bytes, md_data_offset, md_member_data_bytes
from zsim.layout.tree import (
    SIZED_CLASSES,
    BtrfsArray,
    Layout,
    MdArray,
    RawDevices,
    Vdev,
    ZfsLayout,
    ZpoolOnBlock,
)
from zsim.units import KiB, MiB, parse_ashift, parse_size
from zsim.version import __version__
from zsim.zfs.compression import compressed_psize
from zsim.zfs.expansion import (
    ExpansionStep,
    PoolStep,
    VdevSpace,
    pool_expansion_steps,
)
from zsim.zfs.space import (
    deflated,
    slop_shares,
    slop_space,
)
from zsim.zfs.space import metaslab_shift as metaslab_shift  # re-exported (zsim.des.engine)
from zsim.zfs.vdev_space import vdev_space
from zsim.zfs.version import ZfsVersion, check_layout_features, parse_zfs_version

Partitioning = Literal["linux", "none"]
PARTITIONINGS: tuple[str, ...] = ("linux", "none")


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class VdevCapacity:
    """One top-level vdev's space, from raw disk bytes down to what datasets can use.

    The breakdown fields are losses in bytes and add up to ``raw_bytes``::

        raw = labels + geometry + redundancy + padding + embedded_log + slop + usable

    ``labels``: partitioning, 256 KiB alignment, labels and boot area. ``geometry``: unequal
    children, dRAID reserve/row/group rounding, the metaslab tail and dRAID metaslab alignment.
    ``redundancy``: mirror copies, or parity at the ideal (n−p)/n rate. ``padding``: what the
    128 KiB deflate ratio loses beyond ideal parity (raidz skip sectors, dRAID full stripes).
    For special, dedup and log vdevs ``usable_bytes`` is that class's space, which is never
    part of the pool's AVAIL.

    An expanded raidz (``attached`` devices) reports with the ratio of ``original_width``:
    ``expansion_unreported_bytes`` is the part of ``padding`` a vdev created at the full width
    would report (not a separate loss); ``usable_after_rewrite_bytes`` and
    ``usable_new_data_bytes`` are the pool's figures' share on this vdev; ``steps`` its space
    as created and after each attach (:class:`~zsim.zfs.expansion.ExpansionStep`).
    """

    index: int
    vclass: str
    layout: str
    devices: tuple[str, ...]
    device_bytes: tuple[int, ...]
    leaf_asize: int
    vdev_asize: int
    metaslab_shift: int
    metaslab_count: int
    deflate_ratio: int
    raw_bytes: int  # Σ device bytes
    metaslab_bytes: int  # metaslab space: this vdev's part of `zpool list` SIZE
    dspace_bytes: int  # deflated metaslab space, embedded log included
    embedded_log_bytes: int  # deflated metaslab moved to the embedded-log class
    labels_bytes: int
    geometry_bytes: int
    redundancy_bytes: int
    padding_bytes: int
    slop_bytes: int
    usable_bytes: int
    effective_bytes: int  # logical data of the chosen recordsize/compression that fits
    original_width: int = 0
    attached_devices: tuple[str, ...] = ()
    width_deflate_ratio: int = 512
    expansion_unreported_bytes: int = 0
    usable_new_data_bytes: int = 0
    usable_after_rewrite_bytes: int = 0
    steps: tuple[ExpansionStep, ...] = ()


@dataclass(frozen=True)
class CapacityReport:
    """Capacity of one layout: the `zsim capacity` JSON (``DESIGN.md`` §5) and more.

    ``raw_bytes`` is Σ of the data disks (normal class, dRAID spares included); support
    devices (special, dedup, log, cache, spare) are in ``support_raw_bytes``.
    ``usable_bytes`` is ``zfs list`` USED+AVAIL of an empty pool's root dataset (AVAIL alone
    is 0.2–1.5 MiB less, the metadata a new pool writes), or the block-device size for md.

    With an expanded raidz (``raidz2 6+2``) ``usable_bytes`` stays what ``zfs list`` reports;
    ``usable_new_data_bytes`` is the data that really fits (old blocks at their old width,
    new ones at the new width, the pool ``fill_at_attach`` full at each attach) and
    ``usable_after_rewrite_bytes`` the data that fits once every block is rewritten; both
    equal ``usable_bytes`` for a pool never expanded. ``expansion_steps`` gives the pool after
    each ``zpool attach`` (``zpool_attach_commands``) of the pool ``zpool_create_form`` made.
    """

    layout: str
    zpool_form: str
    system: str
    ashift: int | None
    zfs_version: str | None
    partitioning: str
    recordsize: int
    compress_ratio: float
    disk_bytes: int
    raw_bytes: int
    support_raw_bytes: int
    usable_bytes: int
    efficiency: float
    slop_bytes: int
    zpool_size_bytes: int
    zpool_usable_bytes: int
    normal_dspace_bytes: int
    embedded_log_bytes: int
    special_embedded_log_bytes: int
    special_bytes: int
    log_bytes: int
    cache_bytes: int
    effective_bytes: int
    effective_efficiency: float
    fault_tolerance: int
    vdevs: tuple[VdevCapacity, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = field(default_factory=tuple)
    usable_new_data_bytes: int = 0
    usable_after_rewrite_bytes: int = 0
    zpool_create_form: str = ""
    zpool_attach_commands: tuple[str, ...] = ()
    fill_at_attach: float = 0.0
    written_between_attaches: bool = True
    expansion_steps: tuple[PoolStep, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: SI base units (bytes), keys of ``DESIGN.md`` §5 and more."""
        out = asdict(self)
        out["vdevs"] = [_lists(asdict(v)) for v in self.vdevs]
        out["expansion_steps"] = [_lists(asdict(s)) for s in self.expansion_steps]
        out["zpool_attach_commands"] = list(self.zpool_attach_commands)
        out["notes"] = list(self.notes)
        out["units"] = "bytes"
        out["zsim_version"] = __version__
        return out


def _lists(d: dict[str, Any]) -> dict[str, Any]:
    """Tuples in a JSON dict (one level, and inside ``steps``) as lists."""
    out = {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}
    if "steps" in out:
        out["steps"] = [_lists(s) for s in out["steps"]]
    return out


# ---------------------------------------------------------------- ZFS


def _device_bytes(
    device: str,
    vclass: str,
    disk_size: int,
    class_disk_size: Mapping[str, int],
    disk_sizes: Mapping[str, int],
) -> int:
    if device in disk_sizes:
        return disk_sizes[device]
    return class_disk_size.get(vclass, disk_size)


def _zfs_capacity(
    layout: ZfsLayout,
    disk_size: int,
    ashift: int,
    version: ZfsVersion,
    partitioning: str,
    recordsize: int,
    compress_ratio: float,
    class_disk_size: Mapping[str, int],
    disk_sizes: Mapping[str, int],
    logical_sector: int,
    fill: float,
    refill: bool = True,
) -> tuple[dict[str, Any], list[VdevCapacity]]:
    check_layout_features(layout, version)
    parts: list[tuple[Vdev, tuple[int, ...], dict[str, int]]] = []
    spaces: list[VdevSpace] = []
    for index, vdev in enumerate(layout.vdevs):
        sizes = tuple(
            _device_bytes(d, vdev.vclass, disk_size, class_disk_size, disk_sizes)
            for d in vdev.devices
        )
        if vdev.vclass in ("cache", "spare"):
            parts.append((vdev, sizes, {}))
            continue
        info, steps = vdev_space(vdev, sizes, ashift, version, partitioning, logical_sector)
        parts.append((vdev, sizes, info))
        spaces.append(VdevSpace(index, vdev.vclass, vdev.type_word(), steps))
    pool_steps = pool_expansion_steps(spaces, version, fill, refill)
    final = pool_steps[-1]
    normal = [p for p in parts if p[0].vclass == "normal"]
    elog_normal = sum(p[2]["embedded_log_bytes"] for p in normal)
    elog_special = sum(p[2]["embedded_log_bytes"] for p in parts if p[0].vclass == "special")
    normal_dspace = sum(p[2]["dspace_bytes"] for p in normal) - elog_normal
    slop = slop_space(normal_dspace, elog_normal + elog_special, version)
    usable = max(0, normal_dspace - slop)
    zpool_size = sum(p[2]["metaslab_bytes"] for p in parts if p[0].vclass in SIZED_CLASSES)
    zpool_usable = sum(p[2]["dspace_bytes"] for p in parts if p[0].vclass in SIZED_CLASSES)
    rds = [p[2]["dspace_bytes"] - p[2]["embedded_log_bytes"] for p in normal]
    shares = dict(zip([id(p[0]) for p in normal], slop_shares(rds, slop), strict=True))

    record_psize = compressed_psize(recordsize, compress_ratio, ashift)
    vdevs: list[VdevCapacity] = []
    for index, (vdev, sizes, info) in enumerate(parts):
        if not info:
            vdevs.append(_support_device(index, vdev, sizes))
            continue
        rd_v = info["dspace_bytes"] - info["embedded_log_bytes"]
        position = next(n for n, space in enumerate(spaces) if space.index == index)
        steps = spaces[position].steps
        if vdev.vclass == "normal":
            share = shares[id(vdev)]
            usable_v = rd_v - share
            raw_avail = usable_v * 512 // info["deflate_ratio"]
            effective = raw_avail * recordsize // psize_to_asize(vdev, record_psize, ashift)
        else:  # special/dedup/log: the class's own space, never in AVAIL
            share, usable_v, effective = 0, rd_v, 0
        vdevs.append(
            VdevCapacity(
                index=index,
                vclass=vdev.vclass,
                layout=vdev.compact(),
                devices=vdev.devices,
                device_bytes=sizes,
                slop_bytes=share,
                usable_bytes=usable_v,
                effective_bytes=effective,
                original_width=vdev.original_width,
                attached_devices=vdev.attached_devices,
                width_deflate_ratio=steps[-1].width_deflate_ratio,
                expansion_unreported_bytes=(
                    deflated(info["metaslab_bytes"], steps[-1].width_deflate_ratio)
                    - info["dspace_bytes"]
                ),
                usable_new_data_bytes=final.vdev_new_data_bytes[position],
                usable_after_rewrite_bytes=final.vdev_after_rewrite_bytes[position],
                steps=steps if vdev.attached else (),
                **info,
            )
        )
    totals = {
        "usable_bytes": usable,
        "slop_bytes": slop,
        "zpool_size_bytes": zpool_size,
        "zpool_usable_bytes": zpool_usable,
        "normal_dspace_bytes": normal_dspace,
        "embedded_log_bytes": elog_normal,
        "special_embedded_log_bytes": elog_special,
        "effective_bytes": sum(v.effective_bytes for v in vdevs),
        "usable_new_data_bytes": final.usable_new_data_bytes,
        "usable_after_rewrite_bytes": final.usable_after_rewrite_bytes,
        "expansion_steps": pool_steps if len(pool_steps) > 1 else (),
        "fill_at_attach": fill,
        "written_between_attaches": refill,
    }
    return totals, vdevs


def _support_device(index: int, vdev: Vdev, sizes: tuple[int, ...]) -> VdevCapacity:
    """Cache and spare devices: whole devices outside the pool's space accounting."""
    raw = sum(sizes)
    return VdevCapacity(
        index=index,
        vclass=vdev.vclass,
        layout=vdev.compact(),
        devices=vdev.devices,
        device_bytes=sizes,
        leaf_asize=0,
        vdev_asize=0,
        metaslab_shift=0,
        metaslab_count=0,
        deflate_ratio=512,
        raw_bytes=raw,
        metaslab_bytes=0,
        dspace_bytes=0,
        embedded_log_bytes=0,
        labels_bytes=0,
        geometry_bytes=0,
        redundancy_bytes=raw,
        padding_bytes=0,
        slop_bytes=0,
        usable_bytes=0,
        effective_bytes=0,
    )


# ---------------------------------------------------------------- public API


_LAYOUT_TYPES = (ZfsLayout, MdArray, BtrfsArray, ZpoolOnBlock, RawDevices)

#: The largest device zsim takes (bytes): 2**53, about 9 PB — far above any disk made, and
#: still exact in a float. A larger size is a typo (1 EB, 1e308), refused with a message.
MAX_DEVICE_BYTES = 2**53
#: The largest compression ratio zsim takes (ZFS records compress at most about this much).
MAX_COMPRESS_RATIO = 1e4


def _device_size(value: int | str, what: str) -> int:
    size = parse_size(value)
    if size <= 0:
        raise ZsimError(f"{what} must be more than 0 bytes; give one like '12TB'")
    if size > MAX_DEVICE_BYTES:
        raise ZsimError(
            f"{what} {str(value)[:30]} is more than zsim models (9 PB per device); give the size "
            "of one disk, e.g. '12TB'"
        )
    return size


def capacity(
    layout: str | Layout,
    disk_size: int | str,
    *,
    ashift: int | str = 12,
    recordsize: int | str = 128 * KiB,
    compress_ratio: float = 1.0,
    zfs_version: str | ZfsVersion | None = None,
    partitioning: Partitioning = "linux",
    logical_sector: int = 512,
    class_disk_size: Mapping[str, int | str] | None = None,
    disk_sizes: Mapping[str, int | str] | None = None,
    fill_at_attach: float = 0.0,
    written_between_attaches: bool = True,
) -> CapacityReport:
    """Usable capacity of ``layout`` built from disks of ``disk_size`` bytes.

    Parameters
    ----------
    layout : layout string (``DESIGN.md`` §3) or a parsed layout.
    disk_size : bytes per disk (int, or text such as ``"12TB"``).
    ashift : log2 sector size ZFS uses (9…16); default 12 (4 KiB).
    recordsize : block size for the *effective* capacity (bytes or ``"1M"``). ``zfs list``
        figures do not depend on it (they always use the 128 KiB deflate ratio).
    compress_ratio : assumed logical ÷ physical size of a record, for effective capacity.
    zfs_version : release that creates the pool (``"2.2"``, ``"master"``); default current.
    partitioning : ``"linux"`` — what ``zpool create`` does with a whole disk on Linux
        (1 MiB start, 8 MiB partition 9); ``"none"`` — the device is given to ZFS as it is
        (a partition, file or LUN of exactly ``disk_size`` bytes).
    logical_sector : the disks' logical sector size (512 or 4096), for the partition table.
    class_disk_size : per-class device size, e.g. ``{"log": "400GB", "special": "960GB"}``.
    disk_sizes : per-device size by name (``zpool create`` spelling), e.g. ``{"sdc": "10TB"}``.
    fill_at_attach : for an expanded raidz (``raidz2 6+2``), how full the pool was (``zfs
        list`` USED over USED+AVAIL, 0 ≤ f < 1) when each disk was attached; the data written
        before keeps its old width. Only ``usable_new_data_bytes`` depends on it.
    written_between_attaches : with ``fill_at_attach``: True (default), the pool was that
        full before *each* attach (data written between them); False, before the first
        attach of each vdev only, and later attaches (``zpool attach`` one after another)
        moved the same data.
    """
    check_arg("capacity", "layout", layout, (str, *_LAYOUT_TYPES), "layout text such as 'raidz2 8'")
    check_arg("capacity", "disk_size", disk_size, (int, str), "bytes (int) or text such as '12TB'")
    tree = parse_layout(layout) if isinstance(layout, str) else layout
    disk = _device_size(disk_size, "disk size")
    shift = parse_ashift(ashift)
    record = parse_size(recordsize)
    if record < 512 or record > 16 * MiB or record & (record - 1):
        raise ZsimError(
            f"recordsize {record} B must be a power of two from 512 B to 16 MiB, e.g. '128K'"
        )
    if (
        not isinstance(compress_ratio, int | float)
        or isinstance(compress_ratio, bool)
        or not 1 <= compress_ratio <= MAX_COMPRESS_RATIO
    ):
        shown = repr(compress_ratio)[:40]
        raise ZsimError(
            f"compress_ratio {shown} must be a number ≥ 1 and ≤ {MAX_COMPRESS_RATIO:g} "
            "(1.0 = incompressible)"
        )
    if (
        not isinstance(fill_at_attach, int | float)
        or isinstance(fill_at_attach, bool)
        or not 0 <= fill_at_attach < 1
    ):
        raise ZsimError(
            f"fill_at_attach {repr(fill_at_attach)[:40]} must be a number ≥ 0 and < 1 "
            "(0.8 = the pool was 80 % full when each disk was attached)"
        )
    if partitioning not in PARTITIONINGS:
        raise ZsimError(f"partitioning {partitioning!r} is not one of {', '.join(PARTITIONINGS)}")
    version = parse_zfs_version(zfs_version)
    per_class = {k: _device_size(v, f"{k} size") for k, v in (class_disk_size or {}).items()}
    per_device = {k: _device_size(v, f"size of {k}") for k, v in (disk_sizes or {}).items()}
    if isinstance(tree, ZfsLayout):
        unknown = set(per_device) - set(tree.devices)
        if unknown:
            raise ZsimError(
                f"disk_sizes names {sorted(unknown)} that are not in the layout; use the names "
                f"of {to_zpool(tree)!r}"
            )
        totals, vdevs = _zfs_capacity(
            tree,
            disk,
            shift,
            version,
            partitioning,
            record,
            compress_ratio,
            per_class,
            per_device,
            logical_sector,
            float(fill_at_attach),
            bool(written_between_attaches),
        )
        return _report(
            tree, disk, shift, version, partitioning, record, compress_ratio, totals, vdevs
        )
    if isinstance(tree, ZpoolOnBlock):
        block = md_capacity(tree.block, disk)
        inner = capacity(
            "stripe 1",
            block.usable_bytes,
            ashift=shift,
            recordsize=record,
            compress_ratio=compress_ratio,
            zfs_version=version,
            partitioning="none",
        )
        return replace(
            inner,
            layout=to_compact(tree),
            zpool_form=to_zpool(tree),
            system="zpool-on",
            disk_bytes=disk,
            raw_bytes=block.raw_bytes,
            efficiency=inner.usable_bytes / block.raw_bytes,
            effective_efficiency=inner.effective_bytes / block.raw_bytes,
            fault_tolerance=tree.fault_tolerance,
            notes=(
                *inner.notes,
                f"ZFS sees one {block.usable_bytes} B block device: "
                f"the md array's parity is below it",
            ),
        )
    if isinstance(tree, MdArray):
        return md_capacity(tree, disk, recordsize=record)
    if isinstance(tree, BtrfsArray):
        return _btrfs_capacity(tree, disk, record)
    return _raw_capacity(tree, disk, record)


def _report(
    tree: ZfsLayout,
    disk: int,
    ashift: int,
    version: ZfsVersion,
    partitioning: str,
    record: int,
    compress_ratio: float,
    totals: dict[str, Any],
    vdevs: list[VdevCapacity],
) -> CapacityReport:
    raw = sum(v.raw_bytes for v in vdevs if v.vclass == "normal")
    support = sum(v.raw_bytes for v in vdevs if v.vclass != "normal")
    by_class = {
        c: sum(v.metaslab_bytes for v in vdevs if v.vclass == c) for c in ("special", "log")
    }
    notes = _expansion_notes(tree, version, totals)
    if compress_ratio > 1 or record != 128 * KiB:
        notes.append(
            "effective_bytes is the logical data of this recordsize/compression that fits; "
            "zfs list always charges blocks at the 128 KiB deflate ratio"
        )
    steps: tuple[PoolStep, ...] = totals["expansion_steps"]
    return CapacityReport(
        layout=to_compact(tree),
        zpool_form=to_zpool(tree),
        zpool_create_form=to_zpool(ZfsLayout(tuple(v.as_created() for v in tree.vdevs))),
        zpool_attach_commands=tuple(s.command for s in steps if s.command),
        system="zfs",
        ashift=ashift,
        zfs_version=str(version),
        partitioning=partitioning,
        recordsize=record,
        compress_ratio=float(compress_ratio),
        disk_bytes=disk,
        raw_bytes=raw,
        support_raw_bytes=support,
        efficiency=totals["usable_bytes"] / raw if raw else 0.0,
        special_bytes=by_class["special"],
        log_bytes=by_class["log"],
        cache_bytes=sum(v.raw_bytes for v in vdevs if v.vclass == "cache"),
        effective_efficiency=totals["effective_bytes"] / raw if raw else 0.0,
        fault_tolerance=tree.fault_tolerance,
        vdevs=tuple(vdevs),
        notes=tuple(notes),
        **totals,
    )


def _expansion_notes(tree: ZfsLayout, version: ZfsVersion, totals: dict[str, Any]) -> list[str]:
    if not any(v.attached for v in tree.vdevs):
        return []
    notes = [
        "usable_bytes is what zfs list reports: an expanded raidz keeps the data:parity ratio "
        "of its original width (vdev_set_deflate_ratio, txg 0); see docs/grow.md"
    ]
    if totals["usable_new_data_bytes"] == totals["usable_after_rewrite_bytes"]:
        notes.append(
            "usable_new_data_bytes assumes the pool was empty at each attach (fill_at_attach "
            "0); give the fill to count the old blocks that keep their old width"
        )
    if not version.at_least(2, 4):
        notes.append(
            f"OpenZFS {version} has no 'zfs rewrite' (2.4+): reaching "
            "usable_after_rewrite_bytes takes copying the data (cp, zfs send | recv)"
        )
    return notes


def _plain_report(
    layout: Layout,
    system: str,
    disk: int,
    raw: int,
    usable: int,
    record: int,
    fault_tolerance: int,
    notes: tuple[str, ...],
) -> CapacityReport:
    return CapacityReport(
        layout=to_compact(layout),
        zpool_form=to_zpool(layout),
        system=system,
        ashift=None,
        zfs_version=None,
        partitioning="none",
        recordsize=record,
        compress_ratio=1.0,
        disk_bytes=disk,
        raw_bytes=raw,
        support_raw_bytes=0,
        usable_bytes=usable,
        efficiency=usable / raw,
        slop_bytes=0,
        zpool_size_bytes=0,
        zpool_usable_bytes=0,
        normal_dspace_bytes=0,
        embedded_log_bytes=0,
        special_embedded_log_bytes=0,
        special_bytes=0,
        log_bytes=0,
        cache_bytes=0,
        effective_bytes=usable,
        effective_efficiency=usable / raw,
        fault_tolerance=fault_tolerance,
        notes=notes,
        usable_new_data_bytes=usable,
        usable_after_rewrite_bytes=usable,
    )


def md_capacity(
    layout: str | MdArray, disk_size: int | str, *, recordsize: int | str = 128 * KiB
) -> CapacityReport:
    """Size of a Linux md array's block device (metadata 1.2, mdadm defaults).

    ``usable_bytes`` is the array size; a filesystem on top takes its own share (ext4's
    inode tables and journal are about 1.6 % with mkfs defaults) and is not subtracted.
    """
    check_arg("md_capacity", "layout", layout, (str, MdArray), "layout text such as 'md-raid6 8'")
    check_arg("md_capacity", "disk_size", disk_size, (int, str), "bytes or text such as '12TB'")
    tree = parse_layout(layout) if isinstance(layout, str) else layout
    if not isinstance(tree, MdArray):
        raise ZsimError(f"{to_compact(tree)!r} is not an md array; write e.g. 'md-raid6 8'")
    disk = parse_size(disk_size)
    members = [md_member_data_bytes(disk, tree.level, tree.chunk)] * tree.width
    if members[0] <= 0:
        raise ZsimError(f"disks of {disk} B are too small for md metadata; use larger disks")
    usable = md_array_bytes(tree.level, members, tree.chunk)
    offset = md_data_offset(disk)
    notes = (
        f"each member starts its data {offset} B in (metadata 1.2: superblock, bitmap, "
        f"reshape headroom)",
        "usable_bytes is the md block device; the filesystem on it is not subtracted",
    )
    return _plain_report(
        tree,
        "md",
        disk,
        disk * tree.width,
        usable,
        parse_size(recordsize),
        tree.fault_tolerance,
        notes,
    )


def _btrfs_capacity(tree: BtrfsArray, disk: int, record: int) -> CapacityReport:
    """btrfs RAID1/RAID10 data space: every chunk twice; the first 1 MiB of each device is
    reserved (``BTRFS_DEVICE_RANGE_RESERVED``). Metadata chunks and the global reserve come
    out of this space as the filesystem fills and are not subtracted here."""
    per_device = disk - MiB
    usable = per_device * tree.width // 2
    return _plain_report(
        tree,
        "btrfs",
        disk,
        disk * tree.width,
        usable,
        record,
        1,
        ("metadata chunks and the global reserve are not subtracted",),
    )


def _raw_capacity(tree: RawDevices, disk: int, record: int) -> CapacityReport:
    raw = disk * len(tree.devices)
    return _plain_report(tree, "raw", disk, raw, raw, record, 0, ("bare devices, no redundancy",))
