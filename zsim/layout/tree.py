"""The vdev tree and the other array kinds a layout string describes.

These frozen dataclasses are what the grammar produces and what capacity, the engines and
resilver read. They hold structure only (kinds, widths, parity, device names); sizes come from
the hardware.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal, NamedTuple

from zsim.errors import LayoutError
from zsim.units import KiB, format_binary_multiple

VdevKind = Literal["disk", "mirror", "raidz", "draid"]
VdevClass = Literal["normal", "special", "dedup", "log", "cache", "spare"]

#: Support classes in the order ``zpool status`` lists them and zsim prints them.
SUPPORT_CLASSES: tuple[VdevClass, ...] = ("special", "dedup", "log", "cache", "spare")
#: Classes whose metaslab space counts in ``zpool list`` SIZE (log vdevs do not; OpenZFS
#: ``spa_prop_get_config`` sums the normal, special and dedup classes).
SIZED_CLASSES: tuple[VdevClass, ...] = ("normal", "special", "dedup")


@dataclass(frozen=True)
class Vdev:
    """One top-level vdev (or one cache/spare device).

    ``devices`` are the leaf device names in order. For ``raidz`` and ``draid`` ``parity`` is
    the parity level; for ``draid`` ``ndata`` is data disks per redundancy group and
    ``nspares`` the distributed spares (OpenZFS ``vdev_draid_config_t``).

    ``attached`` (raidz only) counts the devices added since creation by RAIDZ expansion
    (``zpool attach POOL raidzP-N DISK``, OpenZFS 2.3+): they are the last ``attached`` names
    of ``devices``, in the order they were attached. The vdev was created
    :attr:`original_width` wide (OpenZFS ``vd_original_width``) and is now :attr:`width`
    wide (``vd_physical_width``).
    """

    kind: VdevKind
    devices: tuple[str, ...]
    parity: int = 0
    ndata: int = 0
    nspares: int = 0
    vclass: VdevClass = "normal"
    attached: int = 0

    def __post_init__(self) -> None:
        if self.attached and (self.kind != "raidz" or not 0 < self.attached < self.width):
            raise LayoutError(
                f"only a raidz vdev can have disks attached (RAIDZ expansion), and fewer than "
                f"its width; got {self.attached} attached to a {self.width}-wide {self.kind}"
            )

    @property
    def original_width(self) -> int:
        """Width when the vdev was created (``vd_original_width``); :attr:`width` if never
        expanded."""
        return self.width - self.attached

    @property
    def attached_devices(self) -> tuple[str, ...]:
        """The devices attached since creation, in attach order (empty if none)."""
        return self.devices[self.original_width :]

    def as_created(self) -> Vdev:
        """This vdev as ``zpool create`` made it, before any disk was attached."""
        if not self.attached:
            return self
        return replace(self, devices=self.devices[: self.original_width], attached=0)

    def at_full_width(self) -> Vdev:
        """A vdev of this width that was never expanded (every block at the full width)."""
        return replace(self, attached=0) if self.attached else self

    @property
    def width(self) -> int:
        """Number of leaf devices (dRAID: all children, distributed spares' disks included)."""
        return len(self.devices)

    @property
    def draid_groupwidth(self) -> int:
        """dRAID redundancy-group width, data + parity (``vdc_groupwidth``)."""
        return self.ndata + self.parity

    @property
    def draid_ngroups(self) -> int:
        """dRAID groups per slice: the smallest n with n·(D+P) divisible by children − spares.

        Source: ``draid_config_by_type()`` in OpenZFS ``cmd/zpool/zpool_vdev.c``.
        """
        ndisks = self.width - self.nspares
        ngroups = 1
        while (ngroups * self.draid_groupwidth) % ndisks:
            ngroups += 1
        return ngroups

    @property
    def fault_tolerance(self) -> int:
        """Leaf failures the vdev survives (mirror: n−1; raidz/draid: parity; disk: 0)."""
        if self.kind == "mirror":
            return self.width - 1
        if self.kind in ("raidz", "draid"):
            return self.parity
        return 0

    def type_word(self) -> str:
        """The type as ``zpool create`` spells it: ``mirror``, ``raidz2``, ``draid2:8d:24c:2s``."""
        if self.kind == "raidz":
            return f"raidz{self.parity}"
        if self.kind == "draid":
            return f"draid{self.parity}:{self.ndata}d:{self.width}c:{self.nspares}s"
        return self.kind

    def compact(self) -> str:
        """Compact spelling of this one vdev: ``raidz2 6``, ``raidz2 6+2`` (created 6 wide, 2
        disks attached since), ``mirror 2``, ``draid2:8d:2s:24c``."""
        if self.kind == "raidz" and self.attached:
            return f"raidz{self.parity} {self.original_width}+{self.attached}"
        if self.kind == "raidz":
            return f"raidz{self.parity} {self.width}"
        if self.kind == "mirror":
            return f"mirror {self.width}"
        if self.kind == "draid":
            return f"draid{self.parity}:{self.ndata}d:{self.nspares}s:{self.width}c"
        return "disk"

    def shape(self) -> tuple[object, ...]:
        """Everything but the device names: two vdevs of equal shape are interchangeable."""
        return (
            self.kind,
            self.width,
            self.parity,
            self.ndata,
            self.nspares,
            self.vclass,
            self.attached,
        )


@dataclass(frozen=True)
class ZfsLayout:
    """A ZFS pool: top-level vdevs of every class, in creation order."""

    vdevs: tuple[Vdev, ...]
    system: Literal["zfs"] = field(default="zfs", init=False)

    def of_class(self, *classes: VdevClass) -> tuple[Vdev, ...]:
        return tuple(v for v in self.vdevs if v.vclass in classes)

    @property
    def data_vdevs(self) -> tuple[Vdev, ...]:
        return self.of_class("normal")

    @property
    def devices(self) -> tuple[str, ...]:
        return tuple(d for v in self.vdevs for d in v.devices)

    @property
    def fault_tolerance(self) -> int:
        """Leaf failures the pool always survives: the weakest data vdev decides."""
        return min(v.fault_tolerance for v in self.data_vdevs)

    def shape(self) -> tuple[tuple[object, ...], ...]:
        return tuple(v.shape() for v in self.vdevs)


MdLevel = Literal[0, 1, 10, 5, 6]


class MdRedundancy(NamedTuple):
    """How an md array survives failures: ``groups`` independent groups of ``group_width``
    disks, each surviving any ``tolerance`` failures among its own disks (the data disks of
    a group are ``group_width − tolerance``)."""

    group_width: int
    tolerance: int
    groups: int


def md_redundancy(level: int, width: int) -> MdRedundancy:
    """The redundancy groups of an md RAID ``level`` array of ``width`` disks: RAID0 ``width``
    single disks (no redundancy), RAID1 one group of all (survives ``width − 1``), RAID10
    (near 2) ``width // 2`` pairs, RAID5/6 one group surviving 1/2. ``KeyError`` for another
    level."""
    n = width
    return MdRedundancy(
        *{0: (1, 0, n), 1: (n, n - 1, 1), 10: (2, 1, n // 2), 5: (n, 1, 1), 6: (n, 2, 1)}[level]
    )


@dataclass(frozen=True)
class MdArray:
    """A Linux md array (``mdadm --create --level=N``), metadata 1.2, with ``chunk`` bytes.

    RAID10 is md's default ``near=2`` layout, RAID5/6 md's default ``left-symmetric``.
    """

    level: MdLevel
    devices: tuple[str, ...]
    chunk: int = 512 * KiB  # mdadm's default chunk since 3.1
    system: Literal["md"] = field(default="md", init=False)

    @property
    def width(self) -> int:
        return len(self.devices)

    @property
    def fault_tolerance(self) -> int:
        """Failures always survived: RAID1 n−1, RAID10 (near 2) 1, RAID5 1, RAID6 2, RAID0 0."""
        return self.redundancy.tolerance

    @property
    def redundancy(self) -> MdRedundancy:
        """Its redundancy groups (:func:`md_redundancy`)."""
        return md_redundancy(self.level, self.width)

    def compact(self) -> str:
        # md chunk sizes print as mdadm's binary ``512K`` / ``1M``
        return f"md-raid{self.level} {self.width} chunk={format_binary_multiple(self.chunk)}"

    def shape(self) -> tuple[object, ...]:
        return ("md", self.level, self.width, self.chunk)


@dataclass(frozen=True)
class BtrfsArray:
    """A btrfs filesystem with the same data and metadata profile (``raid1`` or ``raid10``)."""

    profile: Literal["raid1", "raid10"]
    devices: tuple[str, ...]
    system: Literal["btrfs"] = field(default="btrfs", init=False)

    @property
    def width(self) -> int:
        return len(self.devices)

    @property
    def fault_tolerance(self) -> int:
        return 1

    def compact(self) -> str:
        return f"btrfs-{self.profile} {self.width}"

    def shape(self) -> tuple[object, ...]:
        return ("btrfs", self.profile, self.width)


@dataclass(frozen=True)
class ZpoolOnBlock:
    """A single-vdev ZFS pool on one RAID block device (``zpool-on md-raid6 16 chunk=64K``)."""

    block: MdArray
    system: Literal["zpool-on"] = field(default="zpool-on", init=False)

    @property
    def fault_tolerance(self) -> int:
        return self.block.fault_tolerance

    def compact(self) -> str:
        return f"zpool-on {self.block.compact()}"

    def shape(self) -> tuple[object, ...]:
        return ("zpool-on", self.block.shape())


@dataclass(frozen=True)
class RawDevices:
    """``raw N``: N bare devices, no filesystem (what fio measures during calibration)."""

    devices: tuple[str, ...]
    system: Literal["raw"] = field(default="raw", init=False)

    @property
    def fault_tolerance(self) -> int:
        return 0

    def compact(self) -> str:
        return f"raw {len(self.devices)}"

    def shape(self) -> tuple[object, ...]:
        return ("raw", len(self.devices))


Layout = ZfsLayout | MdArray | BtrfsArray | ZpoolOnBlock | RawDevices


def linux_disk_name(index: int) -> str:
    """The Linux sd name of the index-th disk: 0 → ``sda``, 25 → ``sdz``, 26 → ``sdaa``."""
    letters = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(ord("a") + rem) + letters
    return "sd" + letters
