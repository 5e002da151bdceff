"""The machine as SimPy resources: devices, bus stages, the memory bus and CPU cores.

Everything is driven by SimPy timeouts with callbacks (no generator process per I/O): each
object keeps its own queue and schedules its next completion, which keeps the engine near
SimPy's raw event rate.
"""

from __future__ import annotations

import functools
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import simpy
from simpy.events import NORMAL

from zsim.hardware import flash, hdd

Callback = Callable[[], None]


class _Call(simpy.events.Event):
    """A SimPy event that calls ``fn(*args)`` when processed, and nothing else: what a
    timeout with one callback does, scheduled the same way (same time, priority and order),
    without the timeout's bookkeeping or a closure (there is one per device I/O and CPU job,
    so this is the engine's most made object)."""

    def __init__(self, fn: Callable[..., None], args: tuple[Any, ...]):
        self.fn, self.args = fn, args
        self._ok = True
        self._value = None
        self.callbacks = [self._fire]

    def _fire(self, _event: simpy.events.Event) -> None:
        self.fn(*self.args)


def after(env: simpy.Environment, delay: float, fn: Callable[..., None], *args: Any) -> None:
    """Call ``fn(*args)`` ``delay`` seconds from now (an event at normal priority, as
    ``env.timeout(delay)`` with a callback would be)."""
    if delay < 0:
        raise ValueError(f"negative delay {delay}")
    env.schedule(_Call(fn, args), NORMAL, delay)


@dataclass(slots=True)
class DevIO:
    """One I/O as the device sees it (possibly several ZFS I/Os aggregated)."""

    offset: int
    nbytes: int
    is_write: bool
    done: Callback
    needs_flush: bool = False
    issued: float = 0.0


@dataclass
class Busy:
    """Busy-time bookkeeping of a resource with ``servers`` parallel servers."""

    servers: int
    active: int = 0
    since: float = 0.0
    area: float = 0.0  # ∫ active dt

    def change(self, now: float, delta: int) -> None:
        self.area += self.active * (now - self.since)
        self.since = now
        self.active += delta

    def utilization(self, now: float, start: float = 0.0, area_at_start: float = 0.0) -> float:
        area = self.area + self.active * (now - self.since)
        span = now - start
        return (area - area_at_start) / (span * self.servers) if span > 0 else 0.0


class BandwidthStage:
    """A FIFO stage that moves bytes at ``rate`` bytes/s plus ``per_io`` seconds per transfer:
    a SAS/SATA lane, an expander/backplane, an HBA's PCIe link and controller."""

    def __init__(self, env: simpy.Environment, name: str, rate: float, per_io: float = 0.0):
        self.env, self.name, self.rate, self.per_io = env, name, rate, per_io
        self.queue: deque[tuple[int, Callback]] = deque()
        self.busy = Busy(1)
        self.passive = False
        self.passive_area = 0.0

    def make_passive(self) -> None:
        """The devices behind this stage can never fill it (their peak rates add up to less
        than its capacity): its transfers overlap the devices' own and are only accounted,
        which keeps its utilisation in the result without an event per transfer."""
        self.passive = True

    def transfer(self, nbytes: int, done: Callback) -> None:
        if self.passive:
            self.passive_area += self.per_io + nbytes / self.rate
            done()
            return
        self.queue.append((nbytes, done))
        if self.busy.active == 0:
            self._start()

    def utilization(self, now: float) -> float:
        if self.passive:
            return self.passive_area / now if now > 0 else 0.0
        return self.busy.utilization(now)

    def _start(self) -> None:
        nbytes, done = self.queue.popleft()
        self.busy.change(self.env.now, +1)
        after(self.env, self.per_io + nbytes / self.rate, self._finish, done)

    def _finish(self, done: Callback) -> None:
        self.busy.change(self.env.now, -1)
        if self.queue:
            self._start()
        done()


class Path:
    """The bus stages between host memory and one device, in order (lane, expander, HBA)."""

    def __init__(self, stages: list[BandwidthStage], memory: MemoryBus | None = None):
        self.stages = stages
        self.memory = memory

    def carry(self, nbytes: int, done: Callback, index: int = 0) -> None:
        if index == 0 and self.memory is not None:
            self.memory.dma(nbytes)
        stages = self.stages
        while index < len(stages):
            stage = stages[index]
            index += 1
            if not stage.passive:
                stage.transfer(nbytes, functools.partial(self.carry, nbytes, done, index))
                return
            stage.passive_area += stage.per_io + nbytes / stage.rate  # as transfer() does
        done()


class Device:
    """A disk or SSD serving :class:`DevIO` requests from its own queue.

    HDD: one request on the mechanism at a time, chosen shortest-positioning-time-first among
    the oldest ``model.reorder_depth`` queued requests (NCQ/TCQ: 32; a fitted profile may say
    fewer, :data:`zsim.hardware.hdd.DEFAULT_REORDER_DEPTH`). Flash: up to ``parallelism``
    requests at once.
    Writes cross the bus before the device, reads after it.
    """

    def __init__(
        self,
        env: simpy.Environment,
        name: str,
        model: Any,
        rotating: bool,
        path: Path,
        phase: float = 0.0,
    ):
        self.env, self.name, self.rotating, self.path = env, name, rotating, path
        # Spindles are not synchronised: each drive's platter angle is offset by ``phase``
        # seconds, applied by running the drive model on its own shifted clock.
        self.phase = phase
        self.model = model
        self.state = hdd.HddState() if rotating else None
        self.slots = 1 if rotating else model.parallelism
        self.queue: list[DevIO] = []
        self.busy = Busy(self.slots)
        self.written = 0
        self.ios = 0
        self.bytes = 0
        self.read_bytes = 0

    def submit(self, io: DevIO) -> None:
        io.issued = self.env.now
        if io.is_write:
            self.path.carry(io.nbytes, lambda: self._enqueue(io))
        else:
            self._enqueue(io)

    def _enqueue(self, io: DevIO) -> None:
        self.queue.append(io)
        if self.busy.active < self.slots:
            self._start()

    def _start(self) -> None:
        if self.rotating:
            state = self.state
            assert state is not None, "a rotating device is built with its HddState"
            window = self.queue[: self.model.reorder_depth]
            pending = [(q.offset, q.nbytes, q.is_write) for q in window]
            clock = self.env.now + self.phase
            index = hdd.choose_next(self.model, state, clock, pending)
            io = self.queue.pop(index)
            seconds, _ = hdd.service(
                self.model,
                state,
                clock,
                io.offset,
                io.nbytes,
                io.is_write,
                io.needs_flush,
            )
        else:
            io = self.queue.pop(0)
            if self.busy.active == 0:  # the write cache drains while the drive is idle
                idle = self.env.now - self.busy.since
                self.written = flash.written_after_idle(self.model, self.written, idle)
            seconds = flash.service_time(
                self.model, io.nbytes, io.is_write, self.written, busy=self.busy.active + 1
            )
            if io.needs_flush:
                seconds = self.model.flush_latency + (seconds if io.nbytes else 0.0)
            if io.is_write:
                self.written += io.nbytes
        self.busy.change(self.env.now, +1)
        after(self.env, seconds, self._finish, io)

    def _finish(self, io: DevIO) -> None:
        self.busy.change(self.env.now, -1)
        self.ios += 1
        self.bytes += io.nbytes
        if not io.is_write:
            self.read_bytes += io.nbytes
        if self.queue:
            self._start()
        if io.is_write:
            io.done()
        else:
            self.path.carry(io.nbytes, io.done)

    def utilization(self, now: float) -> float:
        """Busy fraction. An SSD with idle internal units can still be at its bandwidth: it
        counts as busy by the larger of units in use and bytes moved over its rated rates."""
        busy = self.busy.utilization(now)
        if self.rotating or now <= 0:
            return busy
        m = self.model
        by_bytes = self.read_bytes / m.read_bw + (self.bytes - self.read_bytes) / m.write_bw
        return max(busy, by_bytes / now)


class MemoryBus:
    """The host's memory bandwidth shared by every core's data passes and every device's DMA.

    A fluid, shared the way DRAM controllers share it — line by line among the agents, not
    one agent's transfer after another's. A core's job moves its bytes over its run, asking
    the bus for ``bytes / run time``; devices' DMA asks for what they moved lately (their
    bytes decayed over :attr:`DMA_WINDOW`). While everything asked for fits in the rate the
    bus costs nobody time; past it, a job starting then runs slower by the factor of the
    excess (frozen at its start, the usual fluid approximation, which keeps one event per
    job). Nobody waits on DMA. Rates in bytes/s.

    (The model before queued each job's bytes FIFO at the full rate when it started, and
    each I/O's DMA when it was issued: a txg's burst of jobs and writes then held a 64 KiB
    copy up behind ~0.1 ms of other agents' bytes at 34 % load, though those bytes really
    move over the jobs' and transfers' own durations.)
    """

    DMA_WINDOW = 10e-3
    """Time constant of the DMA demand's estimate, s: long beside one I/O's transfer (µs to
    a few ms), short beside a txg (≥ 0.1 s)."""

    def __init__(self, env: simpy.Environment, rate: float):
        self.env, self.rate = env, rate
        self.served = 0.0  # seconds of transfer time at the full rate, charged so far
        self.bytes = 0.0
        self.asked = 0.0  # bytes/s the running jobs ask for
        self.dma_recent = 0.0  # DMA bytes, decayed with DMA_WINDOW
        self.dma_at = 0.0

    def _dma_rate(self) -> float:
        now = self.env.now
        if now > self.dma_at:
            self.dma_recent *= math.exp(-(now - self.dma_at) / self.DMA_WINDOW)
            self.dma_at = now
        return self.dma_recent / self.DMA_WINDOW

    def dma(self, nbytes: float) -> None:
        """A device's transfer of ``nbytes`` into or out of host memory."""
        self._dma_rate()
        self.dma_recent += nbytes
        self.served += nbytes / self.rate
        self.bytes += nbytes

    def start(self, seconds: float, nbytes: float) -> tuple[float, float]:
        """A core's job of ``seconds`` compute moving ``nbytes`` starts now: (how long it
        runs, the bytes/s it asks for — give that back to :meth:`finish`)."""
        if nbytes <= 0:
            return seconds, 0.0
        alone = max(seconds, nbytes / self.rate)
        asks = nbytes / alone
        load = self.asked + asks + self._dma_rate()
        self.asked += asks
        self.served += nbytes / self.rate
        self.bytes += nbytes
        return alone * max(1.0, load / self.rate), asks

    def finish(self, asks: float) -> None:
        self.asked = max(0.0, self.asked - asks)

    def utilization(self, now: float) -> float:
        """Busy fraction since time 0: the bytes moved over what the bus could move."""
        if now <= 0:
            return 0.0
        return min(1.0, self.served / now)


class _CpuJob:
    """One piece of CPU work waiting for or holding a core (a plain class with slots: the
    DES makes one per call and per record)."""

    __slots__ = ("asks", "background", "done", "seconds", "traffic")

    def __init__(
        self, seconds: float, done: Callback, traffic: float = 0.0, background: bool = False
    ):
        self.seconds, self.done, self.traffic, self.background = seconds, done, traffic, background
        self.asks = 0.0  # bytes/s it asks of the memory bus while it runs


@dataclass
class CpuPool:
    """``cores`` identical cores; work is served FIFO on the first free core.

    Two kinds of work: the clients' own calls (foreground) and the kernel's worker threads
    (``background``: the zio taskqs that checksum, compress and write a txg, read
    completions, the ZIL). The worker threads are a fixed number, ``background_cap`` (ZFS's
    ``zio_taskq_batch_pct`` = 80 % of the CPUs, module/zfs/spa.c), so a txg's burst of
    records can never hold every core: client calls always find the rest. The taskq threads
    run at raised priority (SPL creates them at ``maxclsyspri``), so a freed core takes the
    oldest background job while fewer than the cap run, else the oldest foreground job.

    With a :class:`MemoryBus`, a job that moves ``traffic`` bytes holds its core for its
    compute time, or longer while the bus is asked for more than it moves (the core stalls
    on memory).
    """

    env: simpy.Environment
    cores: int
    memory: MemoryBus | None = None
    background_cap: int | None = None
    queue: deque[_CpuJob] = field(default_factory=deque)
    background: deque[_CpuJob] = field(default_factory=deque)
    busy: Busy = field(init=False)
    background_active: int = 0

    def __post_init__(self) -> None:
        self.busy = Busy(self.cores)
        if self.background_cap is None:
            self.background_cap = self.cores

    def run(
        self, seconds: float, done: Callback, traffic: float = 0.0, background: bool = False
    ) -> None:
        if seconds <= 0 and traffic <= 0:
            done()
            return
        job = _CpuJob(seconds, done, traffic, background)
        (self.background if background else self.queue).append(job)
        self._dispatch()

    def _dispatch(self) -> None:
        while self.busy.active < self.cores:
            if self.background and self.background_active < (self.background_cap or 0):
                job = self.background.popleft()
                self.background_active += 1
            elif self.queue:
                job = self.queue.popleft()
            else:
                return
            self._start(job)

    def _start(self, job: _CpuJob) -> None:
        self.busy.change(self.env.now, +1)
        delay = job.seconds
        if job.traffic > 0 and self.memory is not None:
            delay, job.asks = self.memory.start(job.seconds, job.traffic)
        after(self.env, delay, self._finish, job)

    def _finish(self, job: _CpuJob) -> None:
        self.busy.change(self.env.now, -1)
        if job.asks and self.memory is not None:
            self.memory.finish(job.asks)
        if job.background:
            self.background_active -= 1
        self._dispatch()
        job.done()
