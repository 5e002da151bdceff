"""Block devices under a Linux filesystem, for the discrete-event engine: the per-disk block
layer queue, md RAID0/1/10/5/6 and btrfs RAID1/RAID10 chunk mapping.

Everything is callbacks on the engine's :class:`~zsim.machine.resources.Device` objects (no
process per I/O). Offsets are bytes; the geometry lives in :mod:`zsim.layout.md_map`.

Sources (Linux 4.15, the Ubuntu 18.04 kernel of the Ars Technica test, unless stated):

* block layer: ``block/elevator.c`` back/front merges of adjacent requests up to
  ``max_sectors_kb`` (``BLK_DEF_MAX_SECTORS`` = 2560 sectors = 1280 KiB since 4.3);
  ``nr_requests`` = 128 per queue (``BLKDEV_MAX_RQ``); SATA NCQ depth 32 (libata
  ``ATA_MAX_QUEUE``). The deadline elevator dispatches in sector order with FIFO expiry;
  here FIFO, the drive's own NCQ reordering (:class:`Device`) doing the sorting.
* md RAID1 ``read_balance()`` (``drivers/md/raid1.c``) and RAID10 ``read_balance()``
  (``raid10.c``): a sequential continuation stays on its disk (RAID1), an idle copy is
  taken at once, otherwise on rotating disks the copy whose head is nearest.
* md RAID5/6 (``drivers/md/raid5.c``): reads inside a chunk go straight to the member
  (``chunk_aligned_read()``, bios split at chunk boundaries); writes go through the stripe
  cache, ``stripe_cache_size`` = 256 stripe_heads (``NR_STRIPES``) of one 4 KiB page per
  member; each stripe_head reads what :func:`zsim.layout.md_map.plan_stripe_write` says,
  then the single ``raid5d`` thread (``group_thread_cnt`` = 0) computes parity, then the
  data and parity pages are written. A writer waits for free stripe_heads
  (``raid5_get_active_stripe()``). A stripe_head that must read first is delayed
  (``handle_stripe_dirtying()`` sets ``STRIPE_DELAYED`` unless it is
  ``STRIPE_PREREAD_ACTIVE``; ``do_release_stripe()`` puts it on ``delayed_list``):
  ``raid5_activate_delayed()`` releases the whole delayed list at once, and only while
  fewer than ``IO_THRESHOLD`` (1) released stripes still wait for their reads and parity
  (``preread_active_stripes``, decremented in ``handle_stripe()`` once the stripe's writes
  are issued). The pre-reads therefore go out in waves: a wave starts when the last
  stripe of the one before has been computed. A ``REQ_SYNC`` write (O_DIRECT, fsync's
  write-back, jbd2's commits) makes its stripe pre-read-active at once
  (``raid5_make_request()``): it reads without waiting and holds the next wave back until
  it writes. Not modelled: released stripes wait on ``hold_list`` behind ``handle_list``
  while full-stripe writes are pending (``__get_priority_stripe()``, ``bypass_threshold``),
  and a wave is released at once rather than when ``raid5d`` next runs.
* flushes: ``md_flush_request()`` sends an empty ``REQ_PREFLUSH`` to every member; FUA is
  passed down on member writes.
* btrfs (``fs/btrfs/volumes.c``): logical addresses map through 1 GiB-per-device data
  chunks (:func:`zsim.layout.md_map.btrfs_next_chunk`); reads pick the copy ``pid % 2``
  (``find_live_mirror()``, ``BTRFS_READ_POLICY_PID``, the only policy before 5.14/6.x).
  Degraded (``mount -o degraded``, one device missing): a missing device has no ``bdev``,
  so ``find_live_mirror()`` passes over the preferred copy to the first live one, and
  ``btrfs_map_bio()`` writes only the copies whose device is present. The chunks are those
  of the healthy filesystem; the ``single`` chunks a degraded mount allocates once the
  existing ones fill up are not modelled.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass

from zsim.des.vdev import Countdown
from zsim.errors import ZsimError
from zsim.layout.md_map import (
    BTRFS_RESERVED,
    BtrfsChunk,
    StripePlan,
    btrfs_chunk_copies,
    btrfs_next_chunk,
    md_data_members,
    md_locate,
    md_pieces,
    parity_members,
    plan_stripe_write,
)
from zsim.machine.resources import CpuPool, Device, DevIO
from zsim.units import KiB

Callback = Callable[[], None]
PAGE = 4096  # PAGE_SIZE on x86-64, md's STRIPE_SIZE
#: ``IO_THRESHOLD`` (``drivers/md/raid5.h``): delayed stripes are released while fewer than
#: this many released ones wait for their pre-reads
IO_THRESHOLD = 1


@dataclass(frozen=True)
class BlockParams:
    """Linux block-layer and md tunables (defaults of Linux 4.15).

    ``max_request`` bytes one merged request may reach (``max_sectors_kb`` 1280 KiB);
    ``nr_requests`` requests a queue holds before submitters wait (``BLKDEV_MAX_RQ`` 128);
    ``queue_depth`` commands outstanding at the drive (SATA NCQ 32);
    ``stripe_cache_size`` md RAID5/6 stripe_heads (``NR_STRIPES`` 256, 4 KiB per member);
    ``raid6_rmw`` RAID6 read-modify-write allowed (``xor_syndrome``, Linux ≥ 4.1);
    ``stripe_head_cost`` seconds of the raid5d thread per stripe_head at 3 GHz — an
    estimate: md's single-thread ceiling of roughly 1–1.5 GB/s of full-stripe writes on fast
    SSDs (the reason ``group_thread_cnt`` was added in 3.12) minus parity and copy time
    leaves ~3 µs per 4 KiB page row of a 6-data-disk stripe.
    """

    max_request: int = 1280 * KiB
    nr_requests: int = 128
    queue_depth: int = 32
    stripe_cache_size: int = 256
    raid6_rmw: bool = True
    stripe_head_cost: float = 3e-6


class _Request:
    __slots__ = ("callbacks", "flush", "is_write", "nbytes", "offset")

    def __init__(self, offset: int, nbytes: int, is_write: bool, flush: bool, done: Callback):
        self.offset, self.nbytes, self.is_write, self.flush = offset, nbytes, is_write, flush
        self.callbacks = [done]


class MemberQueue:
    """The request queue of one disk: merges adjacent requests while they wait, keeps at
    most ``queue_depth`` at the drive. ``base`` is added to every offset (partition and md
    data offset). ``head`` is where the last dispatched request ended (md's
    ``head_position``); ``load`` the requests queued or in flight (md's ``nr_pending``)."""

    def __init__(self, device: Device, params: BlockParams, base: int):
        self.device, self.params, self.base = device, params, base
        self.pending: deque[_Request] = deque()
        self.by_end: dict[tuple[bool, int], _Request] = {}
        self.by_start: dict[tuple[bool, int], _Request] = {}
        self.inflight = 0
        self.head = 0
        self.next_seq = -1
        self.merges = 0

    @property
    def load(self) -> int:
        return len(self.pending) + self.inflight

    def submit(
        self, offset: int, nbytes: int, is_write: bool, done: Callback, flush: bool = False
    ) -> None:
        """Queue an I/O at member ``offset`` (bytes, before ``base``); ``flush``: FUA write or,
        with ``nbytes`` 0, a bare cache flush."""
        limit = self.params.max_request
        if not flush and nbytes > 0:
            back = self.by_end.get((is_write, offset))
            if back is not None and back.nbytes + nbytes <= limit:
                del self.by_end[(is_write, offset)]
                back.nbytes += nbytes
                self.by_end[(is_write, back.offset + back.nbytes)] = back
                back.callbacks.append(done)
                self.merges += 1
                return
            front = self.by_start.get((is_write, offset + nbytes))
            if front is not None and front.nbytes + nbytes <= limit:
                del self.by_start[(is_write, offset + nbytes)]
                front.offset = offset
                front.nbytes += nbytes
                self.by_start[(is_write, offset)] = front
                front.callbacks.append(done)
                self.merges += 1
                return
        req = _Request(offset, nbytes, is_write, flush, done)
        self.pending.append(req)
        if not flush and nbytes > 0:
            self.by_end[(is_write, offset + nbytes)] = req
            self.by_start[(is_write, offset)] = req
        self._dispatch()

    def _dispatch(self) -> None:
        while self.pending and self.inflight < self.params.queue_depth:
            req = self.pending.popleft()
            key_end, key_start = (req.is_write, req.offset + req.nbytes), (req.is_write, req.offset)
            if self.by_end.get(key_end) is req:
                del self.by_end[key_end]
            if self.by_start.get(key_start) is req:
                del self.by_start[key_start]
            self.inflight += 1
            if req.nbytes:
                self.head = req.offset + req.nbytes
            self.device.submit(
                DevIO(
                    offset=self.base + req.offset,
                    nbytes=req.nbytes,
                    is_write=req.is_write,
                    needs_flush=req.flush,
                    done=functools.partial(self._complete, req),
                )
            )

    def _complete(self, req: _Request) -> None:
        self.inflight -= 1
        for cb in req.callbacks:
            cb()
        self._dispatch()


def choose_copy(
    copies: list[tuple[int, int]], queues: list[MemberQueue], rotating: bool, sequential: bool
) -> int:
    """md ``read_balance()``: index into ``copies`` ((member, offset) pairs) of the copy to
    read. RAID1 (``sequential`` True) keeps a sequential stream on its disk; then the first
    idle copy; then, on rotating disks, the nearest head, else the least loaded."""
    if sequential:
        for i, (m, off) in enumerate(copies):
            if queues[m].next_seq == off:
                return i
    for i, (m, _) in enumerate(copies):
        if queues[m].load == 0:
            return i
    if rotating:
        return min(range(len(copies)), key=lambda i: abs(copies[i][1] - queues[copies[i][0]].head))
    return min(range(len(copies)), key=lambda i: queues[copies[i][0]].load)


class BlockDevice(ABC):
    """What a filesystem writes to: ``read``, ``write`` (a list of ranges submitted under
    one plug), ``flush`` (every present member), ``busy`` (would a writeback submitter
    block). ``failed``: indices into ``queues`` of missing members (a degraded array)."""

    queues: list[MemberQueue]
    params: BlockParams
    failed: frozenset[int] = frozenset()

    @abstractmethod
    def read(self, logical: int, nbytes: int, done: Callback, reader: int = 0) -> None:
        """Read ``nbytes`` at array offset ``logical``; ``done`` when the data is in."""

    @abstractmethod
    def write(
        self, ranges: list[tuple[int, int]], done: Callback, fua: bool = False, sync: bool = False
    ) -> None:
        """Write (offset, bytes) ranges; ``done`` when all are on the members (``fua``:
        on stable media; ``sync``: the bios carry ``REQ_SYNC``, as O_DIRECT writes, fsync's
        write-back (``WB_SYNC_ALL``) and jbd2's commits do; only md RAID5/6 treats them
        differently)."""

    def flush(self, done: Callback) -> None:
        present = [q for i, q in enumerate(self.queues) if i not in self.failed]
        countdown = Countdown(len(present), done)
        for q in present:
            q.submit(0, 0, True, countdown.tick, flush=True)

    def busy(self) -> bool:
        return any(q.load >= self.params.nr_requests for q in self.queues)

    def details(self) -> dict[str, object]:
        return {"merges": sum(q.merges for q in self.queues)}


class MdDevice(BlockDevice):
    """A Linux md array of ``level`` over ``queues`` with ``chunk`` bytes."""

    def __init__(
        self,
        level: int,
        chunk: int,
        queues: list[MemberQueue],
        params: BlockParams,
        raid5d: CpuPool,
        parity_per_byte: float,
        copy_per_byte: float,
        cost_scale: float,
        rotating: bool,
        failed: Collection[int] = (),
    ):
        self.level, self.chunk, self.queues, self.params = level, chunk, queues, params
        self.width = len(queues)
        self.rotating = rotating
        self.raid5d = raid5d
        self.parity_per_byte, self.copy_per_byte = parity_per_byte, copy_per_byte
        self.head_cost = params.stripe_head_cost * cost_scale
        self.free_heads = params.stripe_cache_size
        self.waiting: deque[tuple[StripePlan, Callback]] = deque()
        #: stripe_heads whose pre-reads wait for the next wave, and the count of those
        #: released that have not yet issued their writes (raid5.c ``delayed_list``,
        #: ``preread_active_stripes``)
        self.delayed: deque[Callback] = deque()
        self.preread_active = 0
        self.preread_waves = 0
        self.stripe_wait_time = 0.0
        self.rmw_heads = self.rcw_heads = self.full_heads = 0
        self.read_ios = self.write_ios = 0
        #: missing members (a degraded array), by index
        self.failed: frozenset[int] = frozenset(failed)
        self.reconstruct_reads = 0
        self.env = queues[0].device.env

    # ---- reads
    def read(self, logical: int, nbytes: int, done: Callback, reader: int = 0) -> None:
        pieces = md_pieces(self.level, self.width, self.chunk, logical, nbytes)
        countdown = Countdown(len(pieces), done)
        for piece in pieces:
            if self.level in (1, 10):
                copies = md_locate(self.level, self.width, self.chunk, piece.logical)
                if self.failed:
                    copies = [c for c in copies if c[0] not in self.failed]
                i = choose_copy(copies, self.queues, self.rotating, self.level == 1)
                member, offset = copies[i]
            else:
                member, offset = piece.member, piece.offset
                if member in self.failed:
                    self._reconstruct(piece.row, offset, piece.nbytes, countdown.tick)
                    continue
            q = self.queues[member]
            q.next_seq = offset + piece.nbytes
            self.read_ios += 1
            q.submit(offset, piece.nbytes, False, countdown.tick)

    def _reconstruct(self, row: int, offset: int, nbytes: int, done: Callback) -> None:
        """A degraded RAID5/6 read of a block on a missing member: read the same range on
        the row's surviving data members and P (and Q when two are missing), then raid5d
        computes the block (``raid5.c``: ``handle_stripe_fill()``, ``compute_block``)."""
        self.reconstruct_reads += 1
        parity = parity_members(self.level, self.width, row)
        others = [m for m in range(self.width) if m not in self.failed]
        if self.level == 6 and len(self.failed) == 1 and parity[1] in others:
            others.remove(parity[1])  # one missing block: P alone rebuilds it
        cost = nbytes * len(others) * self.parity_per_byte
        countdown = Countdown(len(others), lambda: self.raid5d.run(cost, done))
        for m in others:
            self.read_ios += 1
            self.queues[m].submit(offset, nbytes, False, countdown.tick)

    # ---- writes
    def write(
        self, ranges: list[tuple[int, int]], done: Callback, fua: bool = False, sync: bool = False
    ) -> None:
        if self.level in (5, 6):
            self._write_parity(ranges, done, fua, sync)
            return
        ios = []
        for logical, nbytes in ranges:
            for piece in md_pieces(self.level, self.width, self.chunk, logical, nbytes):
                for member, offset in md_locate(self.level, self.width, self.chunk, piece.logical):
                    if member not in self.failed:
                        ios.append((member, offset, piece.nbytes))
        countdown = Countdown(len(ios), done)
        for member, offset, n in ios:
            self.write_ios += 1
            self.queues[member].submit(offset, n, True, countdown.tick, flush=fua)

    def _write_parity(
        self, ranges: list[tuple[int, int]], done: Callback, fua: bool, sync: bool
    ) -> None:
        rows: dict[int, dict[int, list[tuple[int, int]]]] = {}
        for logical, nbytes in ranges:
            for piece in md_pieces(self.level, self.width, self.chunk, logical, nbytes):
                within = piece.logical % self.chunk
                cols = rows.setdefault(piece.row, {})
                cols.setdefault(piece.column, []).append((within, within + piece.nbytes))
        countdown = Countdown(len(rows), done)
        for row in sorted(rows):
            plan = plan_stripe_write(
                self.level,
                self.width,
                self.chunk,
                row,
                rows[row],
                PAGE,
                self.params.raid6_rmw,
                self.failed,
            )
            self._admit(plan, countdown.tick, fua, sync)

    def busy(self) -> bool:
        """A writeback submitter blocks while stripes wait for stripe_heads."""
        if self.level in (5, 6):
            return bool(self.waiting)
        return super().busy()

    def _heads_needed(self, plan: StripePlan) -> int:
        return max(1, min(plan.heads, self.params.stripe_cache_size))

    def _admit(self, plan: StripePlan, done: Callback, fua: bool, sync: bool) -> None:
        if not self.waiting and self.free_heads >= self._heads_needed(plan):
            self._start(plan, done, fua, sync)
        else:
            queued_at = self.env.now
            self.waiting.append((plan, lambda: self._waited(queued_at, plan, done, fua, sync)))

    def _waited(
        self, queued_at: float, plan: StripePlan, done: Callback, fua: bool, sync: bool
    ) -> None:
        self.stripe_wait_time += self.env.now - queued_at
        self._start(plan, done, fua, sync)

    def _start(self, plan: StripePlan, done: Callback, fua: bool, sync: bool) -> None:
        """Run one stripe plan. A ``sync`` write's stripe is pre-read-active at once
        (``raid5_make_request()``: ``REQ_SYNC`` sets ``STRIPE_PREREAD_ACTIVE``), so it
        reads without waiting for a wave, and holds the next wave back until it writes; any
        other stripe that must read joins the delayed list."""
        heads = self._heads_needed(plan)
        # counted in preread_active from its release (or at once, sync) until it writes
        counted = sync or bool(plan.reads)
        self.free_heads -= heads
        self.rmw_heads += plan.rmw_heads
        self.rcw_heads += plan.rcw_heads
        self.full_heads += plan.full_heads

        def compute() -> None:
            work = (
                plan.heads * self.head_cost
                + plan.parity_input_bytes * self.parity_per_byte
                + plan.data_bytes * self.copy_per_byte  # bio pages into the stripe cache
            )
            self.raid5d.run(work, write)

        def write() -> None:
            countdown = Countdown(len(plan.writes), finished)
            for member, offset, n in plan.writes:
                self.write_ios += 1
                self.queues[member].submit(offset, n, True, countdown.tick, flush=fua)
            if counted:
                self.preread_active -= 1
                self._activate_delayed()

        def finished() -> None:
            self.free_heads += heads
            while self.waiting and self.free_heads >= self._heads_needed(self.waiting[0][0]):
                self.waiting.popleft()[1]()
            done()

        if sync:
            self.preread_active += 1
        if not plan.reads:
            compute()
            return

        def preread() -> None:
            reads = Countdown(len(plan.reads), compute)
            for member, offset, n in plan.reads:
                self.read_ios += 1
                self.queues[member].submit(offset, n, False, reads.tick)

        if sync:
            preread()
            return
        self.delayed.append(preread)
        self._activate_delayed()

    def _activate_delayed(self) -> None:
        """``raid5_activate_delayed()``: release every delayed stripe_head at once while
        fewer than ``IO_THRESHOLD`` released ones have still to issue their writes."""
        if self.preread_active >= IO_THRESHOLD or not self.delayed:
            return
        self.preread_waves += 1
        wave = list(self.delayed)
        self.delayed.clear()
        self.preread_active += len(wave)
        for preread in wave:
            preread()

    def details(self) -> dict[str, object]:
        out = super().details()
        if self.failed:
            out["reconstructed_reads"] = self.reconstruct_reads
        if self.level in (5, 6):
            out.update(
                stripe_heads_rmw=self.rmw_heads,
                stripe_heads_rcw=self.rcw_heads,
                stripe_heads_full=self.full_heads,
                stripe_cache_wait_s=self.stripe_wait_time,
                preread_waves=self.preread_waves,
            )
        out.update(md_member_reads=self.read_ios, md_member_writes=self.write_ios)
        return out


class BtrfsDevice(BlockDevice):
    """btrfs's logical address space over its devices (data chunks, ``raid1``/``raid10``).

    ``failed``: indices into ``queues`` of missing devices (mounted ``-o degraded``); every
    chunk keeps 2 copies, so at most 1.
    """

    def __init__(
        self,
        profile: str,
        queues: list[MemberQueue],
        params: BlockParams,
        copies_read: int = 2,
        failed: frozenset[int] = frozenset(),
    ):
        self.profile, self.queues, self.params = profile, queues, params
        self.used = [BTRFS_RESERVED] * len(queues)
        self.chunks: list[BtrfsChunk] = []
        self.chunk_logical = 0
        self.copies = copies_read
        if any(not 0 <= i < len(queues) for i in failed):
            raise ZsimError(f"failed devices {sorted(failed)} outside 0…{len(queues) - 1}")
        if len(failed) > 1:
            raise ZsimError(
                f"btrfs {profile.upper()} of {len(queues)} keeps 2 copies of every chunk and "
                f"survives 1 missing device, not {len(failed)}; the filesystem would not "
                f"mount (data lost): fail at most 1"
            )
        self.failed = frozenset(failed)
        #: reads whose preferred copy (``pid % 2``) was on the missing device
        self.redirected_reads = 0

    def _chunk(self, index: int) -> BtrfsChunk:
        while len(self.chunks) <= index:
            chunk, self.used = btrfs_next_chunk(self.profile, self.used)
            self.chunks.append(chunk)
            self.chunk_logical = chunk.logical_bytes
        return self.chunks[index]

    def _elements(self, logical: int, nbytes: int) -> list[list[tuple[int, int, int]]]:
        size = self._chunk(0).logical_bytes
        out = []
        pos, end = logical, logical + nbytes
        while pos < end:
            index, within = divmod(pos, size)
            n = min(size - within, end - pos)
            out += btrfs_chunk_copies(self.profile, self._chunk(index), within, n)
            pos += n
        return out

    def read(self, logical: int, nbytes: int, done: Callback, reader: int = 0) -> None:
        elements = self._elements(logical, nbytes)
        countdown = Countdown(len(elements), done)
        for copies in elements:
            device, offset, n = copies[reader % len(copies)]
            if device in self.failed:  # find_live_mirror(): the first copy with a bdev
                device, offset, n = next(c for c in copies if c[0] not in self.failed)
                self.redirected_reads += 1
            self.queues[device].submit(offset, n, False, countdown.tick)

    def write(
        self, ranges: list[tuple[int, int]], done: Callback, fua: bool = False, sync: bool = False
    ) -> None:
        ios = [
            c
            for logical, n in ranges
            for copies in self._elements(logical, n)
            for c in copies
            if c[0] not in self.failed
        ]
        countdown = Countdown(len(ios), done)
        for device, offset, n in ios:
            self.queues[device].submit(offset, n, True, countdown.tick, flush=fua)

    def details(self) -> dict[str, object]:
        out = super().details()
        if self.failed:
            out["redirected_reads"] = self.redirected_reads
        return out


def md_stripe_bytes(level: int, width: int, chunk: int) -> int:
    """Data bytes in one chunk row (a full stripe)."""
    return md_data_members(level, width) * chunk


class RawBlock(BlockDevice):
    """Bare devices side by side: logical byte ``i × member_bytes + x`` is byte ``x`` of
    device ``i`` (layout ``raw N``; no striping, no redundancy)."""

    def __init__(self, queues: list[MemberQueue], params: BlockParams, member_bytes: int):
        self.queues, self.params, self.member_bytes = queues, params, member_bytes

    def read(self, logical: int, nbytes: int, done: Callback, reader: int = 0) -> None:
        member, offset = divmod(logical, self.member_bytes)
        self.queues[member].submit(offset, nbytes, False, done)

    def write(
        self, ranges: list[tuple[int, int]], done: Callback, fua: bool = False, sync: bool = False
    ) -> None:
        countdown = Countdown(len(ranges), done)
        for logical, nbytes in ranges:
            member, offset = divmod(logical, self.member_bytes)
            self.queues[member].submit(offset, nbytes, True, countdown.tick, flush=fua)
