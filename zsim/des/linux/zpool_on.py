"""``zpool-on md-raid6 16 chunk=64K``: a one-vdev ZFS pool on a RAID block device.

Some appliances and vendor RAID engines put ZFS on one big RAID5/6 device: ZFS sees a single
fast disk and has no redundancy of its own; parity, read-modify-write and the stripe cache
happen below it, in md (:class:`zsim.des.linux.mdraid_map.MdDevice`, the same model the md/ext4
engine uses). This module builds that block device and :class:`BlockLeaf`, which stands in
the ZFS engine's leaf queue where a :class:`zsim.machine.resources.Device` would.
"""

from __future__ import annotations

from collections.abc import Collection

import simpy

from zsim.des.linux.mdraid_map import BlockParams, MdDevice, MemberQueue
from zsim.layout.mdraid import md_array_bytes, md_data_offset, md_member_data_bytes
from zsim.layout.tree import MdArray
from zsim.machine.resources import CpuPool, Device, DevIO


class BlockLeaf:
    """The ZFS leaf that is an md array: reads and writes become md requests; a write that
    must reach stable media becomes an md write with FUA (md passes flushes to every
    member); a bare flush flushes every member."""

    def __init__(self, name: str, md: MdDevice, size: int):
        self.name, self.md, self.size = name, md, size
        self.env = md.env
        self.ios = 0
        self.bytes = 0
        self.read_bytes = 0

    def submit(self, io: DevIO) -> None:
        self.ios += 1
        self.bytes += io.nbytes
        if not io.is_write:
            self.read_bytes += io.nbytes
            self.md.read(io.offset, io.nbytes, io.done)
        elif io.nbytes == 0:
            self.md.flush(io.done)
        else:
            self.md.write([(io.offset, io.nbytes)], io.done, fua=io.needs_flush)


def build_md_leaf(
    env: simpy.Environment,
    md: MdArray,
    devices: dict[str, Device],
    member_bytes: int,
    parity_per_byte: float,
    copy_per_byte: float,
    cost_scale: float,
    rotating: bool,
    failed: Collection[int] = (),
) -> BlockLeaf:
    """The md array over ``devices`` (its members, already on their bus paths) as one leaf;
    ``failed``: indices into ``md.devices`` of missing members (a degraded array)."""
    params = BlockParams()
    base = md_data_offset(member_bytes)
    queues = [MemberQueue(devices[n], params, base) for n in md.devices]
    data = md_member_data_bytes(member_bytes, md.level, md.chunk)
    size = md_array_bytes(md.level, [data] * md.width, md.chunk)
    raid5d = CpuPool(env, 1)  # md's raid5d: one kernel thread per array
    dev = MdDevice(
        md.level,
        md.chunk,
        queues,
        params,
        raid5d,
        parity_per_byte,
        copy_per_byte,
        cost_scale,
        rotating,
        failed=failed,
    )
    return BlockLeaf("md0", dev, size)
