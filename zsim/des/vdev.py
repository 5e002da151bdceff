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

import bisect
import functools
import itertools
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass

from zsim.layout.alloc import psize_to_asize
from zsim.layout.draid import draid_columns
from zsim.layout.raidz import raidz_asize, raidz_columns, raidz_expanded_reads
from zsim.layout.tree import Vdev
from zsim.machine.resources import Device, DevIO
from zsim.units import KiB, MiB
from zsim.zfs.version import ZfsVersion, parse_zfs_version

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


@dataclass(eq=False, slots=True)
class Zio:
    """One leaf I/O waiting in a vdev queue (``eq=False``: zios are told apart by identity).

    ``seq``, ``slot`` and ``queued_at`` are set by :meth:`LeafQueue.add`: the arrival order,
    the ``io_timestamp >> VDQ_T_SHIFT`` time slot (2.2+) and the arrival time; ``queued``
    while the zio waits in its leaf's queue (``ZIO_QS_QUEUED``).
    """

    offset: int
    nbytes: int
    is_write: bool
    klass: int
    done: Callback
    needs_flush: bool = False
    seq: int = 0
    slot: int = 0
    queued_at: float = 0.0
    queued: bool = False


#: ``VDQ_T_SHIFT`` (``module/zfs/vdev_queue.c``, 2.2.0+): LBA-ordered classes sort queued
#: I/Os by ``io_timestamp >> 29`` (ns, slots of ~0.54 s) before offset, so no I/O waits
#: behind a stream for more than about a slot (``vdev_queue_to_compare()``)
VDQ_T_SHIFT = 29
#: the offset tree each class's I/Os aggregate in: sync and async reads share one, as
#: ``vq_read_offset_tree`` holds both and their ``ZIO_FLAG_AGG_INHERIT`` flags agree; scrub
#: and rebuild I/O carry ``ZIO_FLAG_SCRUB``/``ZIO_FLAG_RESILVER`` so they only meet their
#: own class; sync writes (ZIL blocks, flushes) are issued alone here
_TREE = (0, None, 0, 1, 2, 3)


class LeafQueue:
    """``vdev_queue`` of one leaf: issue by class limits, aggregate adjacent I/Os.

    Sync classes are FIFOs; the LBA-ordered classes (async read/write, scrub, rebuild) are
    sorted lists keyed ``(slot, offset, seq)`` and issued the way the release's
    ``vdev_queue_io_to_issue()`` does (:meth:`_pick_lba`). Each aggregating class also sits
    in an offset-ordered tree (``vq_read_offset_tree`` / ``vq_write_offset_tree``) that
    :meth:`_aggregate` walks both ways from the I/O chosen.

    Non-interactive classes (scrub, rebuild) get ``scan_max`` active I/Os only while the leaf
    is idle when ``nia`` is set (OpenZFS 2.1+: no interactive I/O active and
    :data:`NIA_DELAY` non-interactive completions since the last interactive one), else
    their min_active of 1 — on a busy pool a resilver runs about one I/O deep per disk.
    """

    _seq = itertools.count(1)

    def __init__(self, device: Device, aggregation_limit: int, version: ZfsVersion | None = None):
        self.device = device
        self.aggregation_limit = aggregation_limit
        self.version = version = parse_zfs_version(version)
        # 2.2.0 sorts LBA-ordered classes by time slot first (vdev_queue_to_compare())
        self.slotted = version.at_least(2, 2)
        # 0.7's io_to_issue() records the *start* of the I/O issued as vq_last_offset and
        # searches after it; 0.8.0 records its end and searches from there
        self.search_from_end = version.at_least(0, 8)
        self.fifo: list[deque[Zio]] = [deque(), deque()]  # sync_read, sync_write
        # async_read, async_write, scrub, rebuild: (slot, offset, seq, zio), sorted
        self.lba: list[list[tuple[int, int, int, Zio]]] = [[] for _ in range(NCLASSES - 2)]
        # offset trees (_TREE): normal reads, async writes, scrub, rebuild
        self.trees: list[list[tuple[int, int, Zio]]] = [[] for _ in range(4)]
        self.active = [0] * NCLASSES
        self.async_write_max = CLASS_LIMITS[ASYNC_WRITE][1]
        self.scan_max = CLASS_LIMITS[SCRUB][1]
        self.nia = False
        self.nia_completions = NIA_DELAY  # non-interactive completions since an interactive one
        self.last_offset = 0  # end of the last I/O issued (vq_last_offset, 0.8+)
        self.last_start = 0  # start of the last I/O issued (vq_last_offset, 0.7)
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
        """``vdev_queue_io()``: stamp the zio (``io_timestamp``), queue it in its class and
        its offset tree, issue what the class limits allow."""
        now = self.device.env.now
        zio.seq = next(self._seq)
        zio.queued_at = now
        zio.slot = (int(now * 1e9) >> VDQ_T_SHIFT) if self.slotted else 0
        zio.queued = True
        if zio.klass < ASYNC_READ:
            self.fifo[zio.klass].append(zio)
        else:
            bisect.insort(self.lba[zio.klass - ASYNC_READ], (zio.slot, zio.offset, zio.seq, zio))
        tree = _TREE[zio.klass]
        if tree is not None:
            bisect.insort(self.trees[tree], (zio.offset, zio.seq, zio))
        self.waiting += 1
        self.qlen[zio.klass] += 1
        # only this class gained work: if it is at its limit nothing new can be issued
        if self.active[zio.klass] < self._max_active(zio.klass):
            self._issue()

    @property
    def queued(self) -> int:
        """Waiting plus active I/Os."""
        return self.waiting + sum(self.active)

    @property
    def active_ios(self) -> int:
        """``vdev_queue_length()``: I/Os issued to the device and not yet done (aggregates
        count once) — ``avl_numnodes(&vq_active_tree)`` up to 2.1, ``vq_active`` from 2.2;
        the queued ones do not count."""
        return sum(self.active)

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
        """``vdev_queue_io_to_issue()`` until no class may issue: the class's next I/O
        (FIFO head, or :meth:`_pick_lba`), aggregated with its neighbours."""
        while self.waiting and (klass := self._next_class()) is not None:
            first = self.fifo[klass][0] if klass < ASYNC_READ else self._pick_lba(klass)
            group = [first] if _TREE[klass] is None else self._aggregate(first)
            for zio in group:
                self._remove(zio)
            start = group[0].offset
            if len(group) == 1:
                end, flush = first.offset + first.nbytes, first.needs_flush
            else:
                end = max(z.offset + z.nbytes for z in group)
                flush = any(z.needs_flush for z in group)
            self.active[klass] += 1  # the aggregate counts in the chosen I/O's class
            self.last_offset, self.last_start = end, start
            self.device.submit(
                DevIO(
                    offset=start,
                    nbytes=end - start,
                    is_write=first.is_write,
                    needs_flush=flush,
                    done=functools.partial(self._complete, group, klass),
                )
            )

    def _pick_lba(self, klass: int) -> Zio:
        """The next I/O of an LBA-ordered class (``vdev_queue_io_to_issue()``).

        Up to 2.1 the class tree is sorted by offset and the search starts just past the
        last I/O issued, wrapping to the lowest offset: an elevator (0.7 searches from
        ``vq_last_offset + 1`` with ``vq_last_offset`` the last I/O's start; 0.8–2.1 from
        ``vq_last_offset - 1`` with it the last I/O's end). From 2.2.0 the tree is sorted by
        (time slot, offset): if the oldest slot's first I/O lies before ``vq_last_offset``,
        the I/O at or after ``vq_last_offset`` *in that same slot* goes, else that first one
        — older I/Os are never passed over for more than a slot.
        """
        queue = self.lba[klass - ASYNC_READ]
        if self.slotted:
            head = queue[0]
            if head[1] < self.last_offset:
                i = bisect.bisect_left(queue, (head[0], self.last_offset))
                if i < len(queue) and queue[i][0] == head[0]:
                    return queue[i][3]
            return head[3]
        after = self.last_offset if self.search_from_end else self.last_start + 1
        i = bisect.bisect_left(queue, (0, after))
        return queue[i][3] if i < len(queue) else queue[0][3]

    def _aggregate(self, first: Zio) -> list[Zio]:
        """``vdev_queue_aggregate()``: from ``first``, walk the offset tree backwards, then
        forwards, over queued I/Os of the same type while each gap is within the gap limit
        (reads ≤ ``zfs_vdev_read_gap_limit``; writes bridge ≤ 4 KiB through optional I/Os)
        and the span within the aggregation limit. Sync and async reads share the tree, so
        a demand read takes the prefetch queued next to it and vice versa."""
        tree = self.trees[_TREE[first.klass]]  # type: ignore[index]
        i = bisect.bisect_left(tree, (first.offset, first.seq))
        lo = hi = i
        limit = self.aggregation_limit
        maxgap = WRITE_GAP_LIMIT if first.is_write else READ_GAP_LIMIT
        start, end = first.offset, first.offset + first.nbytes
        while lo > 0:
            prev = tree[lo - 1][2]
            gap = start - (prev.offset + prev.nbytes)
            if prev.is_write != first.is_write or gap < 0 or gap > maxgap:
                break
            if end - prev.offset > limit:
                break
            lo -= 1
            start = prev.offset
        while hi + 1 < len(tree):
            nxt = tree[hi + 1][2]
            gap = nxt.offset - end
            if nxt.is_write != first.is_write or gap < 0 or gap > maxgap:
                break
            if nxt.offset + nxt.nbytes - start > limit:
                break
            hi += 1
            end = nxt.offset + nxt.nbytes
        if lo == hi:
            return [first]
        return [entry[2] for entry in tree[lo : hi + 1]]

    def _remove(self, zio: Zio) -> None:
        """``vdev_queue_io_remove()``: out of its class queue and its offset tree."""
        if zio.klass < ASYNC_READ:
            fifo = self.fifo[zio.klass]
            if fifo[0] is zio:
                fifo.popleft()
            else:
                fifo.remove(zio)
        else:
            queue = self.lba[zio.klass - ASYNC_READ]
            del queue[bisect.bisect_left(queue, (zio.slot, zio.offset, zio.seq))]
        tree = _TREE[zio.klass]
        if tree is not None:
            entries = self.trees[tree]
            del entries[bisect.bisect_left(entries, (zio.offset, zio.seq))]
        zio.queued = False
        self.waiting -= 1
        self.qlen[zio.klass] -= 1

    def promote(self, zio: Zio) -> bool:
        """``vdev_queue_change_io_priority()`` (0.8.0+, from ``zio_change_priority()``,
        which ``arc_read()`` calls when a demand read finds its block's prefetch in flight):
        a still-queued async read moves to the sync-read class. Nothing is issued here; the
        next scheduling point (an arrival or a completion) sees it. Up to 2.1 the sync-read
        class is a tree ordered by ``io_timestamp``, so the zio goes in by its arrival time;
        from 2.2 it is a list and the zio goes to the tail (``vdev_queue_class_add()``).
        Returns False if the zio is no longer queued (issued, or merged in an aggregate)."""
        if not zio.queued or zio.klass != ASYNC_READ:
            return False
        queue = self.lba[0]
        del queue[bisect.bisect_left(queue, (zio.slot, zio.offset, zio.seq))]
        self.qlen[ASYNC_READ] -= 1
        zio.klass = SYNC_READ
        self.qlen[SYNC_READ] += 1
        fifo = self.fifo[SYNC_READ]
        if self.slotted:
            fifo.append(zio)
        else:
            i = len(fifo)
            while i and fifo[i - 1].queued_at > zio.queued_at:
                i -= 1
            fifo.insert(i, zio)
        return True

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
        born: tuple[tuple[int, int], ...] = (),
    ):
        self.vdev, self.leaves, self.ashift = vdev, leaves, ashift
        #: an expanded raidz's blocks born before its attaches: ((end offset, logical
        #: width), ...) ascending (:func:`zsim.zfs.expansion.born_regions`)
        self.born = born
        if born and (vdev.kind != "raidz" or failed):
            raise ValueError("blocks of an older width need a healthy raidz vdev")
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
        # the release the leaf queues follow (the analytic engine maps blocks without queues)
        self.version: ZfsVersion = getattr(leaves[0] if leaves else None, "version", None) or (
            parse_zfs_version(None)
        )
        # 0.7's mirror-private last offset per child (vq_lastoffset); None from 0.8
        self._mirror_last: list[int] | None = (
            None if self.version.at_least(0, 8) else [0] * len(leaves)
        )
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
            leaf = leaves[i]
            if leaf is not None:  # the analytic engine maps blocks without queues
                leaves[i] = MissingLeaf(leaf.device, leaf.aggregation_limit, leaf.version)
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

    def width_at(self, offset: int) -> int:
        """Logical width of a block at vdev ``offset`` that was not rewritten since the pool
        was laid out: its birth width if it lies in a :attr:`born` region, else the vdev's."""
        for end, width in self.born:
            if offset < end:
                return width
        return self.vdev.width

    def asize_at(self, width: int, psize: int) -> int:
        """Allocated bytes of a block of ``psize`` written when the vdev was ``width`` wide."""
        if width == self.vdev.width:
            return psize_to_asize(self.vdev, psize, self.ashift)
        return raidz_asize(psize, self.ashift, width, self.vdev.parity)

    def leaf_ios(
        self, offset: int, psize: int, is_write: bool, width: int | None = None
    ) -> list[tuple[int, int, int]]:
        """(leaf index, leaf offset, bytes) for a block; reads skip parity. A read of a
        block born before an attach (``width``, else :meth:`width_at` the offset) follows
        the expanded map (:func:`zsim.layout.raidz.raidz_expanded_reads`); writes are new
        blocks, at the current width."""
        if self.born and not is_write:
            born = self.width_at(offset) if width is None else width
            if born != self.vdev.width:
                vdev = self.vdev
                return raidz_expanded_reads(
                    offset, psize, self.ashift, vdev.width, born, vdev.parity
                )
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
            return [(self._pick_mirror_child(offset, size), offset, size)]
        if kind == "raidz":
            columns, nskip, skip_start = raidz_columns(
                offset, psize, self.ashift, self.vdev.width, self.vdev.parity
            )
            if not is_write:
                return [col for col in columns[self.vdev.parity :] if col[2]]
            if nskip:
                # vdev_raidz_map_alloc_write() (OpenZFS 2.2+) writes each skip (padding)
                # sector as zeros appended to its column, wrapping onto the first columns;
                # older releases issue them as optional I/Os that aggregation keeps between
                # mandatory writes. Either way a leaf sees the record's allocation back to
                # back: leaving the sector out split every run and, on a 512e drive, turned
                # each piece into a partial-physical-sector read-modify-write.
                columns = list(columns)
                scols = len(columns)
                for i in range(nskip):
                    c = (skip_start + i) % scols
                    leaf, coff, size = columns[c]
                    columns[c] = (leaf, coff, size + sector)
            return [col for col in columns if col[2]]
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
            return [(self._pick_mirror_child(offset, size), offset, size)]
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

    def _pick_mirror_child(self, offset: int, size: int) -> int:
        """``vdev_mirror_child_select()`` / ``vdev_mirror_load()``: least load, where load =
        the child's *active* I/Os (``vdev_queue_length()``; queued ones do not count, in
        0.7 through 2.4) + a seek increment: rotating, 0 at the child's last offset
        (``zfs_vdev_mirror_rotating_inc``), half of ``zfs_vdev_mirror_rotating_seek_inc``
        (5 // 2 = 2) when ``ABS(last - offset) < zfs_vdev_mirror_rotating_seek_offset``
        (strictly less), else 5; non-rotating 0 or 1. The last offset is
        ``vdev_queue_last_offset()``, the end of the last I/O the child's queue issued
        (0.8+); 0.7 keeps ``vq_lastoffset`` apart, set by the mirror when it picks the child
        to the end of the I/O it sends there (``vdev_queue_register_lastoffset()``)."""
        best, best_load, tied = 0, None, []
        for i, leaf in self._readable:
            last = leaf.last_offset if self._mirror_last is None else self._mirror_last[i]
            distance = abs(offset - last)
            if self.rotating:
                near = distance < MIRROR_ROTATING_SEEK_OFFSET
                penalty = 0 if distance == 0 else (2 if near else 5)
            else:
                penalty = 0 if distance == 0 else 1
            load = leaf.active_ios + penalty
            if best_load is None or load < best_load:
                best, best_load, tied = i, load, [i]
            elif load == best_load:
                tied.append(i)
        if len(tied) > 1:
            best = tied[(offset >> MIRROR_SHIFT) % len(tied)]
        if self._mirror_last is not None:
            self._mirror_last[best] = offset + size
        return best

    def io(
        self,
        offset: int,
        psize: int,
        is_write: bool,
        klass: int,
        done: Callback,
        flush: bool = False,
        track: list[tuple[LeafQueue, Zio]] | None = None,
        width: int | None = None,
    ) -> int:
        """Issue a block read or write; ``done`` when every leaf I/O finished (``flush``: each
        leaf write also reaches stable media, as a ZIL block on a log device does). Returns
        the number of leaf I/Os; ``track`` gets each (leaf queue, zio), so the caller can
        change their priority later (:meth:`LeafQueue.promote`); ``width`` as
        :meth:`leaf_ios`."""
        ios = self.leaf_ios(offset, psize, is_write, width)
        if self.failed and self._rebuilt and self.on_reconstruct is not None:
            done = functools.partial(self.on_reconstruct, self._rebuilt, done)
        countdown = Countdown(len(ios), done)
        for leaf, leaf_offset, nbytes in ios:
            zio = Zio(leaf_offset, nbytes, is_write, klass, countdown.tick, needs_flush=flush)
            if track is not None:
                track.append((self.leaves[leaf], zio))
            self.leaves[leaf].add(zio)
        return len(ios)

    def flush(self, done: Callback) -> None:
        """``zio_flush()``: a cache flush on every leaf, ``done`` when all answered."""
        countdown = Countdown(len(self.leaves), done)
        for leaf in self.leaves:
            leaf.add(Zio(0, 0, True, SYNC_WRITE, countdown.tick, needs_flush=True))
