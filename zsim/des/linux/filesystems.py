"""The file systems of the Linux block engine (:mod:`zsim.des.linux.blockfs`): where files
live on the block device, how data is written back, and what an fsync commits. Units are SI
(bytes, seconds, bytes/s).

* files: one per job, laid out before the run (fio lays files out; a read job always does)
  one after the other just below the fill line, each starting on a full stripe (mkfs.ext4
  sets ``stride``/``stripe_width`` from md and ``mballoc`` aligns large allocations to it);
  ext4 overwrites in place, btrfs writes copy-on-write: every write-back goes to a new,
  sequentially allocated logical range (``fs/btrfs/extent-tree.c``, the data cluster).
* fsync / O_SYNC: the data is written back, then the journal commits (``fs/jbd2/commit.c``:
  descriptor + inode block, a cache flush of every member — ``REQ_PREFLUSH`` — then the
  commit block with FUA); fsyncs that arrive during a commit share the next one (group
  commit). btrfs: a log-tree leaf, a flush of every device, then the superblock on every
  device with FUA (``fs/btrfs/tree-log.c`` ``btrfs_sync_log()``, ``write_all_supers()``).
  The ext4 journal (128 MiB, e2fsprogs 1.44 default for filesystems ≥ 16 GiB) sits in the
  middle of the filesystem (``get_midpoint_journal_block()`` in ``lib/ext2fs/mkjournal.c``).
* no file system (``raw N``): fio on the bare devices, as calibration measures (:class:`RawFs`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

import simpy

from zsim.des.linux.mdraid_map import PAGE, BlockDevice, BtrfsDevice, RawBlock
from zsim.des.vdev import Countdown
from zsim.errors import ZsimError
from zsim.units import GiB, KiB, MiB

Callback = Callable[[], None]


@dataclass(frozen=True)
class FsParams:
    """Linux memory-management and filesystem constants (defaults of Linux 4.15).

    ``reserved_memory`` bytes of RAM not available to the page cache: kernel, slab and
    user processes of an idle server (an estimate; ``MemAvailable`` of an idle Ubuntu
    server is typically RAM − 1 to 3 GiB). ``dirty_background_ratio``/``dirty_ratio``
    (``vm.dirty_*``, ``Documentation/admin-guide/sysctl/vm.rst``). ``read_ahead`` bytes
    (``VM_READAHEAD_PAGES`` = 128 KiB); ``btrfs_read_ahead`` 4 MiB (btrfs raises its bdi's
    ``ra_pages`` to 4 MiB). ``writeback_chunk`` bytes per inode per flusher turn
    (``MAX_WRITEBACK_PAGES`` 1024 pages). ``journal_bytes`` the ext4 journal (e2fsprogs
    1.44: 32768 blocks); ``commit_blocks`` 4 KiB blocks of a small jbd2 commit (descriptor,
    inode-table block, commit block). ``btrfs_log_bytes`` one log-tree leaf (``nodesize``
    16 KiB). ``crc32c_rate`` bytes/s per core at 3 GHz of the kernel's ``crc32c-intel``
    (the SSE4.2 ``crc32`` instruction: 8 bytes per ~3-cycle latency on one stream, ≈ 8 GB/s).
    ``partition_start`` where a Linux partition starts on its disk (1 MiB alignment of
    parted/fdisk).
    """

    reserved_memory: int = 2 * GiB
    dirty_background_ratio: float = 0.10
    dirty_ratio: float = 0.20
    read_ahead: int = 128 * KiB
    btrfs_read_ahead: int = 4 * MiB
    writeback_chunk: int = 4 * MiB
    journal_bytes: int = 128 * MiB
    commit_blocks: int = 3
    btrfs_log_bytes: int = 16 * KiB
    crc32c_rate: float = 8e9
    partition_start: int = MiB


# ---------------------------------------------------------------- filesystems


class Filesystem(ABC):
    """Where files live on the block device, and how data is written back."""

    def __init__(self, dev: BlockDevice, size: int, params: FsParams):
        self.dev, self.size, self.params = dev, size, params
        self.file_start: list[int] = []
        self.file_bytes = 0
        self.waiting: list[Callback] = []  # fsyncs waiting for the next commit
        self.committing = False
        self.commits = 0

    def place_files(self, njobs: int, file_bytes: int, fill: float, align: int) -> None:
        """Files one after the other just below the fill line, each on an ``align`` boundary."""
        per_file = -(-file_bytes // align) * align
        total = njobs * per_file
        start = max(0, int(self.size * min(0.95, max(0.0, fill))) - total)
        start = self.data_origin() + start // align * align
        if start + total > self.size:
            raise ZsimError(
                f"the jobs' files ({total} B) do not fit the {self.size} B filesystem; "
                f"lower workload size or numjobs"
            )
        self.file_start = [start + j * per_file for j in range(njobs)]
        self.file_bytes = file_bytes

    def data_origin(self) -> int:
        return 0

    def logical(self, job: int, offset: int) -> int:
        return self.file_start[job] + offset

    def read(self, job: int, offset: int, nbytes: int, done: Callback) -> None:
        self.dev.read(self.logical(job, offset), nbytes, done, reader=job)

    def write(self, ranges: list[tuple[int, int, int]], done: Callback, sync: bool = False) -> None:
        """Write (job, file offset, bytes) ranges to the device (write-back or O_DIRECT;
        ``sync``: ``REQ_SYNC`` bios, :meth:`BlockDevice.write`)."""
        self.dev.write([(self.logical(j, o), n) for j, o, n in ranges], done, sync=sync)

    def commit(self, done: Callback) -> None:
        """Make the written data durable: join the next group commit (every fsync that
        arrives while one commit is being written waits for the next, and shares it)."""
        self.waiting.append(done)
        if not self.committing:
            self._start_commit()

    def _start_commit(self) -> None:
        self.committing = True
        batch, self.waiting = self.waiting, []
        self._write_commit(lambda: self._committed(batch))

    def _committed(self, batch: list[Callback]) -> None:
        self.commits += 1
        self.committing = False
        for cb in batch:
            cb()
        if self.waiting and not self.committing:
            self._start_commit()

    @abstractmethod
    def _write_commit(self, done: Callback) -> None:
        """Write one commit to stable media (a jbd2 journal commit, a btrfs log tree)."""


class Ext4(Filesystem):
    """ext4 overwrites in place; fsync commits the jbd2 journal in the middle of the fs."""

    def __init__(self, env: simpy.Environment, dev: BlockDevice, size: int, params: FsParams):
        super().__init__(dev, size, params)
        self.env = env
        self.journal_start = size // 2 // PAGE * PAGE
        self.journal_cursor = 0

    def _write_commit(self, done: Callback) -> None:
        """A jbd2 commit: the journal blocks, a flush, then the commit block with FUA."""
        p = self.params
        size = p.commit_blocks * PAGE
        if self.journal_cursor + size > p.journal_bytes:
            self.journal_cursor = 0
        at = self.journal_start + self.journal_cursor
        self.journal_cursor += size
        body, tail = at, at + size - PAGE

        def flushed() -> None:
            self.dev.write([(tail, PAGE)], done, fua=True, sync=True)

        # jbd2 submits its journal blocks with REQ_SYNC (fs/jbd2/commit.c)
        self.dev.write([(body, size - PAGE)], lambda: self.dev.flush(flushed), sync=True)


class Btrfs(Filesystem):
    """btrfs: copy-on-write data in a sequential allocation stream; fsync writes the log
    tree and the superblocks. The first data chunk holds the log (metadata) area."""

    def __init__(
        self, env: simpy.Environment, dev: BtrfsDevice, size: int, params: FsParams, keep: bool
    ):
        super().__init__(dev, size, params)
        self.env = env
        self.btrfs = dev
        self.cursor = 0
        self.location: dict[tuple[int, int], int] = {}
        self.keep_locations = keep
        self.log_cursor = 0

    def data_origin(self) -> int:
        return self.btrfs._chunk(0).logical_bytes  # after the first (metadata/log) chunk

    def place_files(self, njobs: int, file_bytes: int, fill: float, align: int) -> None:
        super().place_files(njobs, file_bytes, fill, align)
        self.cursor = self.file_start[-1] + -(-file_bytes // align) * align

    def read(self, job: int, offset: int, nbytes: int, done: Callback) -> None:
        moved = self.location.get((job, offset)) if self.location else None
        logical = moved if moved is not None else self.logical(job, offset)
        self.dev.read(logical, nbytes, done, reader=job)

    def write(self, ranges: list[tuple[int, int, int]], done: Callback, sync: bool = False) -> None:
        """Copy-on-write: the ranges go, in order, to fresh space at the allocation cursor."""
        out = []
        for job, offset, nbytes in ranges:
            if self.cursor + nbytes > self.size:
                self.cursor = self.data_origin()  # wrap like a log once the space is used
            if self.keep_locations:
                self.location[(job, offset)] = self.cursor
            out.append((self.cursor, nbytes))
            self.cursor += nbytes
        merged: list[tuple[int, int]] = []
        for logical, nbytes in out:
            if merged and merged[-1][0] + merged[-1][1] == logical:
                merged[-1] = (merged[-1][0], merged[-1][1] + nbytes)
            else:
                merged.append((logical, nbytes))
        self.dev.write(merged, done, sync=sync)

    def _write_commit(self, done: Callback) -> None:
        """An fsync's log tree, a flush, then the superblock of every device with FUA."""
        size = self.params.btrfs_log_bytes
        at = self.log_cursor
        self.log_cursor = (self.log_cursor + size) % max(size, self.data_origin() // 2)
        # write_all_supers() skips a missing device (no bdev) of a degraded mount
        queues = [q for i, q in enumerate(self.dev.queues) if i not in self.dev.failed]

        def flushed() -> None:
            countdown = Countdown(len(queues), done)
            for q in queues:  # primary superblock at 64 KiB of every present device, FUA
                q.submit(64 * KiB, PAGE, True, countdown.tick, flush=True)

        self.dev.write([(at, size)], lambda: self.dev.flush(flushed))


class RawFs(Filesystem):
    """No file system: fio on bare block devices (layout ``raw N``), as calibration measures.

    Job ``j`` works on device ``j mod N``, on ``[offset, offset + size)`` (fio's ``offset``
    and ``size``); every job on one device shares that region, as fio jobs naming the same
    device do. The block layer, page cache and O_DIRECT rules are the engine's, unchanged:
    Linux buffers a block device's pages like a file's. O_SYNC or fsync makes the data
    durable with a cache flush of the job's device (``blkdev_fsync``: no journal).
    """

    def __init__(self, dev: RawBlock, params: FsParams, offset: int):
        super().__init__(dev, dev.member_bytes * len(dev.queues), params)
        self.raw, self.offset = dev, offset

    def place_files(self, njobs: int, file_bytes: int, fill: float, align: int) -> None:
        end = self.offset + file_bytes
        if end > self.raw.member_bytes:
            raise ZsimError(
                f"workload offset + size ({end} B) runs past the end of the device "
                f"({self.raw.member_bytes} B); lower workload.offset or workload.size"
            )
        members = len(self.raw.queues)
        self.file_start = [
            (j % members) * self.raw.member_bytes + self.offset for j in range(njobs)
        ]
        self.file_bytes = file_bytes

    def _write_commit(self, done: Callback) -> None:
        self.dev.flush(done)
