"""The vdev layer of the engine: per-leaf I/O queues (classes, aggregation) and top-level vdevs
that turn one block into leaf I/Os with the same maps capacity uses.

Sources: ``module/zfs/vdev_queue.c`` (classes, min/max active, aggregation limits and gap
rules), ``vdev_mirror.c`` (child selection by load and seek penalty), ``vdev_raidz.c`` via
:func:`zsim.layout.raidz.raidz_column_map` (data columns only on reads; all columns on writes).

Degraded vdevs (``TopVdev(failed=...)``): a missing leaf takes no I/O. ``vdev_mirror.c`` never
selects an unreadable child; ``vdev_raidz_io_start()`` walks a read's columns from the last
data column back to the parity and, once a data column is missing (``rr_missingdata > 0``),
reads every parity column too, so a block whose data touches the missing leaf reads all its
surviving columns and is reconstructed (dRAID reads its redundancy group the same way, through
the same raidz map code); writes skip the missing column.
"""

from __future__ import annotations

import functools
import heapq
import itertools
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass

from zsim.layout.draid import draid_columns
from zsim.layout.raidz import raidz_columns
from zsim.layout.tree import Vdev
from zsim.machine.resources import Device, DevIO
from zsim.units import KiB, MiB
from zsim.zfs.version import ZfsVersion

Callback = Callable[[], None]

SYNC_READ, SYNC_WRITE, ASYNC_READ, ASYNC_WRITE, SCRUB, REBUILD = 0, 1, 2, 3, 4, 5
# (min_active, max_active) per class, vdev_queue.c defaults (async_write max is dynamic;
# scrub's max was 2 before 2.1, see LeafQueue.scan_max). SCRUB carries scrub and healing
# resilver I/O, REBUILD sequential rebuild (2.0+).
CLASS_LIMITS = ((10, 10), (10, 10), (1, 3), (2, 10), (1, 3), (1, 3))
NCLASSES = len(CLASS_LIMITS)
INTERACTIVE = 4  # classes below this are interactive (vdev_queue_is_interactive())
# zfs_vdev_nia_delay: non-interactive completions, since the last interactive one, before a
# leaf counts as idle and scrub/rebuild may use their max_active (2.1+)
NIA_DELAY = 5
READ_GAP_LIMIT = 32 * KiB  # zfs_vdev_read_gap_limit
# zfs_vdev_write_gap_limit: raidz skip (padding) sectors are written as optional I/Os that
# bridge gaps up to this size, so adjacent blocks still aggregate
WRITE_GAP_LIMIT = 4 * KiB
#: ``zfs_vdev_mirror_rotating_seek_offset`` (``module/zfs/vdev_mirror.c``, 1 MiB): a rotating
#: mirror child whose last offset is this near counts a smaller seek penalty
MIRROR_ROTATING_SEEK_OFFSET = 1 * MiB
#: ``vdev_mirror_shift`` (``vdev_mirror.c``, 21): equally loaded children are told apart by
#: the I/O offset shifted right this far (``vdev_mirror_preferred_child_randomize()``)
MIRROR_SHIFT = 21


def aggregation_limit(rotating: bool, version: ZfsVersion) -> int:
    """Largest aggregated leaf I/O, bytes: ``zfs_vdev_aggregation_limit`` on rotating leaves
    (1 MiB from 0.8, 128 KiB before), ``zfs_vdev_aggregation_limit_non_rotating`` (128 KiB)
    on flash (``module/zfs/vdev_queue.c``)."""
    return MiB if rotating and version.at_least(0, 8) else 128 * KiB


@dataclass
class Zio:
    """One leaf I/O waiting in a vdev queue."""

    offset: int
    nbytes: int
    is_write: bool
    klass: int
    done: Callback
    needs_flush: bool = False


class LeafQueue:
    """``vdev_queue`` of one leaf: issue by class limits, aggregate adjacent I/Os.

    FIFO classes are deques; LBA-ordered classes are heaps of ``(offset, seq, zio)``.
    Non-interactive classes (scrub, rebuild) get ``scan_max`` active I/Os only while the leaf
    is idle when ``nia`` is set (OpenZFS 2.1+: no interactive I/O active and
    :data:`NIA_DELAY` non-interactive completions since the last interactive one), else
    their min_active of 1 — on a busy pool a resilver runs about one I/O deep per disk.
    """

    _seq = itertools.count()

    def __init__(self, device: Device, aggregation_limit: int):
        self.device = device
        self.aggregation_limit = aggregation_limit
        self.fifo: list[deque[Zio]] = [deque(), deque()]  # sync_read, sync_write
        # async_read, async_write, scrub, rebuild
        self.heaps: list[list[tuple[int, int, Zio]]] = [[] for _ in range(NCLASSES - 2)]
        self.active = [0] * NCLASSES
        self.async_write_max = CLASS_LIMITS[ASYNC_WRITE][1]
        self.scan_max = CLASS_LIMITS[SCRUB][1]
        self.nia = False
        self.nia_completions = NIA_DELAY  # non-interactive completions since an interactive one
        self.last_offset = 0
        self.waiting = 0
        self.qlen = [0] * NCLASSES  # queued (not yet issued) I/Os per class

    def set_async_write_max(self, limit: int) -> None:
        """The async-write class's max_active, which the dirty data sets
        (``vdev_queue_max_async_writes()``, :func:`zsim.zfs.txg.async_write_max_active`)."""
        self.async_write_max = limit

    def set_scan_limits(self, scan_max: int, nia: bool) -> None:
        """The scrub/rebuild classes' max_active and whether they wait for an idle leaf
        (``nia``), from the scan tunables of the pool's OpenZFS version."""
        self.scan_max, self.nia = scan_max, nia

    def add(self, zio: Zio) -> None:
        if zio.klass < ASYNC_READ:
            self.fifo[zio.klass].append(zio)
        else:
            heapq.heappush(self.heaps[zio.klass - ASYNC_READ], (zio.offset, next(self._seq), zio))
        self.waiting += 1
        self.qlen[zio.klass] += 1
        # only this class gained work: if it is at its limit nothing new can be issued
        if self.active[zio.klass] < self._max_active(zio.klass):
            self._issue()

    @property
    def queued(self) -> int:
        return self.waiting + sum(self.active)

    def _max_active(self, klass: int) -> int:
        if klass == ASYNC_WRITE:
            return self.async_write_max
        if klass >= INTERACTIVE:
            if self.nia and (self.nia_completions < NIA_DELAY or any(self.active[:INTERACTIVE])):
                return CLASS_LIMITS[klass][0]
            return self.scan_max
        return CLASS_LIMITS[klass][1]

    def _next_class(self) -> int | None:
        active, qlen = self.active, self.qlen
        for klass in range(NCLASSES):
            if qlen[klass] and active[klass] < CLASS_LIMITS[klass][0]:
                return klass
        for klass in range(INTERACTIVE):
            if qlen[klass] and active[klass] < (
                self.async_write_max if klass == ASYNC_WRITE else CLASS_LIMITS[klass][1]
            ):
                return klass
        for klass in range(INTERACTIVE, NCLASSES):
            if qlen[klass] and active[klass] < self._max_active(klass):
                return klass
        return None

    def _issue(self) -> None:
        while self.waiting and (klass := self._next_class()) is not None:
            if klass == SYNC_READ:
                group = self._take_fifo_aggregate(self.fifo[klass])
            elif klass < ASYNC_READ:
                group = [self.fifo[klass].popleft()]
            else:
                group = self._take_aggregate(self.heaps[klass - ASYNC_READ])
            self.waiting -= len(group)
            self.qlen[klass] -= len(group)
            first = group[0]
            end = group[-1].offset + group[-1].nbytes
            self.active[klass] += 1
            self.last_offset = end
            self.device.submit(
                DevIO(
                    offset=first.offset,
                    nbytes=end - first.offset,
                    is_write=first.is_write,
                    needs_flush=any(z.needs_flush for z in group),
                    done=functools.partial(self._complete, group, klass),
                )
            )

    def _take_aggregate(self, heap: list[tuple[int, int, Zio]]) -> list[Zio]:
        """The lowest-offset I/O plus the adjacent ones that fit the aggregation limit
        (``vdev_queue_aggregate()``: reads bridge gaps ≤ 32 KiB, writes ≤ 4 KiB)."""
        first = heapq.heappop(heap)[2]
        group = [first]
        end = first.offset + first.nbytes
        allowed = WRITE_GAP_LIMIT if first.is_write else READ_GAP_LIMIT
        while heap:
            nxt = heap[0][2]
            gap = nxt.offset - end
            if gap < 0 or gap > allowed:
                break
            if nxt.offset + nxt.nbytes - first.offset > self.aggregation_limit:
                break
            group.append(heapq.heappop(heap)[2])
            end = nxt.offset + nxt.nbytes
        return group

    def _take_fifo_aggregate(self, queue: deque[Zio]) -> list[Zio]:
        """Oldest sync read first (FIFO), then the queued reads that continue it: the read
        tree of ``vdev_queue_aggregate()`` holds every class, so demand reads merge too."""
        first = queue.popleft()
        group = [first]
        end = first.offset + first.nbytes
        found = True
        while found and queue:
            found = False
            for i, nxt in enumerate(queue):
                gap = nxt.offset - end
                if 0 <= gap <= READ_GAP_LIMIT and (
                    nxt.offset + nxt.nbytes - first.offset <= self.aggregation_limit
                ):
                    del queue[i]
                    group.append(nxt)
                    end = nxt.offset + nxt.nbytes
                    found = True
                    break
        return group

    def _complete(self, group: list[Zio], klass: int) -> None:
        self.active[klass] -= 1
        self.nia_completions = 0 if klass < INTERACTIVE else self.nia_completions + 1
        for zio in group:
            zio.done()
        self._issue()


class MissingLeaf(LeafQueue):
    """A leaf that is gone (FAULTED, REMOVED): it takes no I/O and its device stays idle.

    Only zios addressed to every leaf reach it (the engine's label/uberblock writes, cache
    flushes); ``vdev_config_sync()`` and ``zio_flush()`` skip an unwritable child, so they
    complete at once.
    """

    def add(self, zio: Zio) -> None:
        zio.done()


class Countdown:
    """Calls ``done`` after ``n`` calls to ``tick`` (a block waiting for its leaf I/Os)."""

    __slots__ = ("done", "left")

    def __init__(self, n: int, done: Callback):
        self.left, self.done = n, done
        if n == 0:
            done()

    def tick(self) -> None:
        self.left -= 1
        if self.left == 0:
            self.done()


class TopVdev:
    """A top-level vdev: maps a block at a vdev offset to leaf I/Os and waits for them.

    ``failed``: indices (into ``leaves``, i.e. ``vdev.devices``) of leaves that are missing;
    at most the vdev's fault tolerance. Their queues are replaced by :class:`MissingLeaf`, so
    their devices stay idle. ``reconstructions`` / ``reconstruct_bytes`` count the degraded
    reads that rebuilt data from parity (and the data bytes rebuilt), for the CPU they cost
    (``CpuCosts.parity_per_byte`` per byte); when ``on_reconstruct`` is set, such a read's
    completion goes through ``on_reconstruct(nbytes, done)`` so the caller can charge it.
    """

    def __init__(
        self,
        vdev: Vdev,
        leaves: list[LeafQueue],
        ashift: int,
        space: int,
        rotating: bool,
        failed: Collection[int] = (),
        metaslab_shift: int | None = None,
        on_reconstruct: Callable[[int, Callback], None] | None = None,
    ):
        self.vdev, self.leaves, self.ashift = vdev, leaves, ashift
        self.space = space  # allocatable bytes (metaslab space)
        self.rotating = rotating
        #: log2 of the metaslab size, for the space-map writes of a txg (None: not modelled)
        self.metaslab_shift = metaslab_shift
        self.cursor = 0  # allocation pointer for new (COW) writes
        self.ditto_cursor: int | None = None  # where the next ditto copy goes (one vdev)
        self.data_disks = {
            "disk": 1,
            "mirror": 1,
            "raidz": vdev.width - vdev.parity,
            "draid": vdev.ndata,
        }[vdev.kind]
        self.ndisks = vdev.width - vdev.nspares
        self.failed: frozenset[int] = frozenset()
        self.reconstructions = 0
        self.reconstruct_bytes = 0
        self.on_reconstruct = on_reconstruct
        self._rebuilt = 0  # data bytes the last degraded read reconstructs
        self._readable = list(enumerate(leaves))  # mirror children a read may pick
        if failed:
            self._set_failed(set(failed))

    def _set_failed(self, failed: set[int]) -> None:
        vdev = self.vdev
        if any(not 0 <= i < len(self.leaves) for i in failed):
            raise ValueError(f"failed leaves {sorted(failed)} outside 0…{len(self.leaves) - 1}")
        if len(failed) > vdev.fault_tolerance:
            raise ValueError(
                f"{len(failed)} failed leaves in a {vdev.type_word()} vdev that survives "
                f"{vdev.fault_tolerance}: the pool is FAULTED"
            )
        self.leaves = leaves = list(self.leaves)
        for i in failed:
            leaves[i] = MissingLeaf(leaves[i].device, leaves[i].aggregation_limit)
        self.failed = frozenset(failed)
        self._alive = [i for i in range(len(leaves)) if i not in failed]
        self._readable = [(i, leaves[i]) for i in self._alive]

    def allocate_from(self, offset: int) -> None:
        """New blocks go from vdev offset ``offset`` on (after files laid out before the run)."""
        self.cursor = offset

    def allocate(self, asize: int) -> int:
        """Offset of a new block of ``asize`` bytes (sequential; wraps like a log)."""
        if self.cursor + asize > self.space:
            self.cursor = 0
        offset = self.cursor
        self.cursor += asize
        return offset

    def metaslab(self, offset: int) -> int:
        """Index of the metaslab that holds vdev offset ``offset``."""
        if self.metaslab_shift is None:
            raise ValueError("this vdev was built without its metaslab size")
        return offset >> self.metaslab_shift

    def allocate_ditto(self, asize: int) -> int:
        """Offset of a ditto copy on a pool of this one vdev: 1/8 of the vdev away from the
        allocation cursor, then sequential (``metaslab_alloc_dva()``'s ditto distance)."""
        ditto = self.ditto_cursor
        if ditto is None or ditto + asize > self.space:
            ditto = (self.cursor + self.space // 8) % max(1, self.space - asize)
        self.ditto_cursor = ditto + asize
        return ditto

    def leaf_ios(self, offset: int, psize: int, is_write: bool) -> list[tuple[int, int, int]]:
        """(leaf index, leaf offset, bytes) for a block; reads skip parity."""
        if self.failed:
            return self._degraded_leaf_ios(offset, psize, is_write)
        kind = self.vdev.kind
        sector = 1 << self.ashift
        if kind == "disk":
            return [(0, offset, -(-psize // sector) * sector)]
        if kind == "mirror":
            size = -(-psize // sector) * sector
            if is_write:
                return [(i, offset, size) for i in range(len(self.leaves))]
            return [(self._pick_mirror_child(offset), offset, size)]
        if kind == "raidz":
            columns, _, _ = raidz_columns(
                offset, psize, self.ashift, self.vdev.width, self.vdev.parity
            )
            skip = 0 if is_write else self.vdev.parity
            return [col for col in columns[skip:] if col[2]]
        # dRAID: whole rows of D data + P parity sectors in one group, read without parity
        columns = self.block_columns(offset, psize)
        return columns[self.vdev.parity :] if not is_write else columns

    def _degraded_leaf_ios(
        self, offset: int, psize: int, is_write: bool
    ) -> list[tuple[int, int, int]]:
        """:meth:`leaf_ios` with leaves missing: nothing goes to them; a read whose data
        touches one reads every surviving column of the block (``_rebuilt`` = its data)."""
        self._rebuilt = 0
        vdev, failed = self.vdev, self.failed
        sector = 1 << self.ashift
        if vdev.kind in ("disk", "mirror"):  # a failed single disk is refused at construction
            size = -(-psize // sector) * sector
            if is_write:
                return [(i, offset, size) for i in self._alive]
            return [(self._pick_mirror_child(offset), offset, size)]
        columns = self.block_columns(offset, psize)
        surviving = [col for col in columns if col[2] and col[0] not in failed]
        if is_write:
            return surviving
        data = [col for col in columns[vdev.parity :] if col[2]]
        if not any(col[0] in failed for col in data):
            return data
        self._rebuilt = sum(col[2] for col in data)
        self.reconstructions += 1
        self.reconstruct_bytes += self._rebuilt
        return surviving

    def block_columns(self, offset: int, psize: int) -> list[tuple[int, int, int]]:
        """Every column of a raidz or dRAID block, parity first: (leaf, leaf offset, bytes),
        whatever is missing (what a scrub or resilver reads and writes)."""
        vdev = self.vdev
        if vdev.kind == "raidz":
            columns, _, _ = raidz_columns(offset, psize, self.ashift, vdev.width, vdev.parity)
            return columns
        if vdev.kind != "draid":
            raise ValueError(f"{vdev.kind} vdevs have no columns")
        columns, _ = draid_columns(
            offset, psize, self.ashift, vdev.width, vdev.nspares, vdev.ndata, vdev.parity
        )
        return columns

    def draid_spares(self, offset: int, psize: int) -> tuple[int, ...]:
        """The children holding the distributed spare space of the slice ``offset`` is in."""
        vdev = self.vdev
        _, spares = draid_columns(
            offset, psize, self.ashift, vdev.width, vdev.nspares, vdev.ndata, vdev.parity
        )
        return spares

    def _pick_mirror_child(self, offset: int) -> int:
        """``vdev_mirror_child_select()``: least load = active I/Os + seek penalty
        (rotating: 0 at the last offset, 2 within 1 MiB, else 5; SSD: 0 or 1)."""
        best, best_load, tied = 0, None, []
        for i, leaf in self._readable:
            distance = abs(offset - leaf.last_offset)
            if self.rotating:
                near = distance <= MIRROR_ROTATING_SEEK_OFFSET
                penalty = 0 if distance == 0 else (2 if near else 5)
            else:
                penalty = 0 if distance == 0 else 1
            load = leaf.queued + penalty
            if best_load is None or load < best_load:
                best, best_load, tied = i, load, [i]
            elif load == best_load:
                tied.append(i)
        if len(tied) > 1:
            best = tied[(offset >> MIRROR_SHIFT) % len(tied)]
        return best

    def io(
        self,
        offset: int,
        psize: int,
        is_write: bool,
        klass: int,
        done: Callback,
        flush: bool = False,
    ) -> int:
        """Issue a block read or write; ``done`` when every leaf I/O finished (``flush``: each
        leaf write also reaches stable media, as a ZIL block on a log device does). Returns
        the number of leaf I/Os."""
        ios = self.leaf_ios(offset, psize, is_write)
        if self.failed and self._rebuilt and self.on_reconstruct is not None:
            done = functools.partial(self.on_reconstruct, self._rebuilt, done)
        countdown = Countdown(len(ios), done)
        for leaf, leaf_offset, nbytes in ios:
            self.leaves[leaf].add(
                Zio(leaf_offset, nbytes, is_write, klass, countdown.tick, needs_flush=flush)
            )
        return len(ios)

    def flush(self, done: Callback) -> None:
        """``zio_flush()``: a cache flush on every leaf, ``done`` when all answered."""
        countdown = Countdown(len(self.leaves), done)
        for leaf in self.leaves:
            leaf.add(Zio(0, 0, True, SYNC_WRITE, countdown.tick, needs_flush=True))
