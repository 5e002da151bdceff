"""The clients of the discrete-event engines: fio jobs and dd streams, each a set of slots that
call into the file system and start the next call when one completes."""

from __future__ import annotations

from collections import deque
from typing import Protocol

import simpy


class CallSink(Protocol):
    """What a :class:`Job` needs of its engine: the next call's direction and offset, a place
    to make the call and to record it, and whether the run has stopped."""

    env: simpy.Environment
    stopped: bool

    def next_is_read(self) -> bool: ...

    def next_offset(self, job: Job) -> int: ...

    def call(self, job: Job, issued: float, is_read: bool, offset: int) -> None: ...

    def record(self, issued: float, is_read: bool, nbytes: int) -> None: ...


class Job:
    """One fio job (or dd stream): ``iodepth`` slots, calls into ZFS one at a time unless
    direct I/O is honoured (then ``iodepth`` at once)."""

    def __init__(self, engine: CallSink, index: int, concurrency: int, slots: int):
        self.engine, self.index = engine, index
        self.concurrency, self.slots = concurrency, slots
        self.waiting: deque[tuple[float, bool, int]] = deque()
        self.running = 0
        self.cursor = 0  # sequential position, bytes
        self.writes = 0  # writes done, for fsync=N
        self.prefetched_to = 0  # next record a sequential stream has not yet prefetched
        self.bytes_read = 0  # bytes this job's reads returned (for per-job fairness)

    def start(self) -> None:
        for _ in range(self.slots):
            self.submit()

    def submit(self) -> None:
        e = self.engine
        is_read = e.next_is_read()
        offset = e.next_offset(self)
        self.waiting.append((e.env.now, is_read, offset))
        self._pump()

    def _pump(self) -> None:
        while self.waiting and self.running < self.concurrency:
            issued, is_read, offset = self.waiting.popleft()
            self.running += 1
            self.engine.call(self, issued, is_read, offset)

    def finished_batch(self) -> None:
        """A batch of calls (recorded by the engine) is done: the slot goes on."""
        self.running -= 1
        if not self.engine.stopped:
            self.submit()
        self._pump()

    def finished(self, issued: float, is_read: bool, nbytes: int) -> None:
        self.running -= 1
        if is_read:
            self.bytes_read += nbytes
        self.engine.record(issued, is_read, nbytes)
        if not self.engine.stopped:
            self.submit()
        self._pump()
