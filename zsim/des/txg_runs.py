"""Per-txg bookkeeping of the ZFS model: a txg's state, a run of records written back to back
on one top-level vdev, and the uberblock write that ends a txg (``vdev_config_sync()``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from zsim.des.vdev import SYNC_WRITE, TopVdev, Zio
from zsim.units import KiB

Callback = Callable[[], None]


class WriteRun:
    """Records of one txg written back to back on one top-level vdev, issued as one I/O per
    leaf: what ``vdev_queue_aggregate()`` would make of their column writes anyway (adjacent
    async writes, up to the aggregation limit), without queueing each column on its own."""

    __slots__ = ("done", "extents", "txg")

    def __init__(self, txg: TxgState):
        self.txg = txg
        self.extents: dict[int, list[int]] = {}  # leaf → [start, end)
        self.done: list[Callback] = []

    def accepts(self, columns: list[tuple[int, int, int]], limit: int) -> bool:
        for leaf, offset, nbytes in columns:
            ext = self.extents.get(leaf)
            if ext is None:
                continue
            if offset != ext[1] or offset + nbytes - ext[0] > limit:
                return False
        return True

    def add(self, columns: list[tuple[int, int, int]], done: Callback) -> None:
        for leaf, offset, nbytes in columns:
            ext = self.extents.get(leaf)
            if ext is None:
                self.extents[leaf] = [offset, offset + nbytes]
            else:
                ext[1] = offset + nbytes
        self.done.append(done)


@dataclass
class TxgState:
    """One txg of :class:`zsim.des.zfs_model.ZfsModel`: its dirty records and bytes, its writes
    still in flight, and where its sync stands."""

    records: dict[tuple[int, int], None] = field(default_factory=dict)
    bytes: int = 0
    pending: int = 0
    synced: bool = False
    cpu_left: int = 0  # records whose sync CPU work has not run yet
    #: records a ZIL commit already wrote to their final place (dmu_sync): not rewritten
    presynced: set[tuple[int, int]] = field(default_factory=set)


def uberblock_zio(top: TopVdev, done: Callback) -> Zio:
    # the uberblock ring lives in the labels at the start of the device
    return Zio(
        offset=128 * KiB,
        nbytes=1 << top.ashift,
        is_write=True,
        klass=SYNC_WRITE,
        done=done,
        needs_flush=True,
    )
