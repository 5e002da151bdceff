"""Caps checked inside the event loop: wall time, memory growth and the completion log.

:func:`run_until` steps a SimPy environment exactly as ``env.run(until=...)`` does (same stop
event, so the same events in the same order and the same figures) but calls
:meth:`RunGuard.check` every :data:`CHECK_EVERY_EVENTS` events: a chunk of simulated time
that takes long in wall time (millions of events) is cut short instead of running on.

* the wall-time cap (``RunControl.max_wall_seconds``) counts from the engine's construction,
  so set-up is included; when reached, :class:`CapReached` ends the chunk and the run reports
  what it has, as the cap between chunks always did;
* the memory cap (``RunControl.max_memory_bytes``, default ``ZSIM_MAX_MEMORY`` or 1 GiB)
  bounds how much the process's resident memory may grow from the engine's construction;
  past it the run stops with a :class:`ZsimError` naming the limit and how to raise it;
* ``stop_when``: a further reason to end the chunk (the completion log full).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import simpy
from simpy.core import EmptySchedule, StopSimulation
from simpy.events import URGENT

from zsim.errors import ZsimError
from zsim.machine.collector import collector_paused
from zsim.units import GiB

#: events between two checks: a few ms of wall time at the engine's ~10⁵–10⁶ events/s
CHECK_EVERY_EVENTS = 2048
DEFAULT_MAX_MEMORY = GiB

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def default_max_memory() -> int:
    """``ZSIM_MAX_MEMORY`` (bytes, a whole number ≥ 1) if set, else 1 GiB."""
    raw = os.environ.get("ZSIM_MAX_MEMORY", "").strip()
    if not raw:
        return DEFAULT_MAX_MEMORY
    try:
        value = int(raw)
    except ValueError:
        raise ZsimError(f"ZSIM_MAX_MEMORY={raw!r} must be a whole number of bytes ≥ 1") from None
    if value < 1:
        raise ZsimError(f"ZSIM_MAX_MEMORY={raw!r} must be a whole number of bytes ≥ 1")
    return value


def rss_bytes() -> int:
    """The process's resident memory now, bytes (``/proc/self/statm``; 0 where absent)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


class CapReached(Exception):
    """A cap ended the chunk: the run stops and reports what it has (``reason``)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class RunGuard:
    """Wall-time and memory caps of one run, counted from the guard's creation."""

    def __init__(
        self,
        max_wall_seconds: float,
        max_memory_bytes: int | None = None,
        stop_when: Callable[[], str | None] | None = None,
    ):
        self.started = time.perf_counter()
        self.max_wall = max_wall_seconds
        self.max_memory = default_max_memory() if max_memory_bytes is None else max_memory_bytes
        self.base_rss = rss_bytes()
        self.stop_when = stop_when

    def wall(self) -> float:
        return time.perf_counter() - self.started

    def check(self) -> None:
        """Raise :class:`CapReached` at the wall-time cap or ``stop_when``, and
        :class:`ZsimError` past the memory cap."""
        if self.wall() >= self.max_wall:
            raise CapReached("wall")
        rss = rss_bytes()
        if rss and rss - self.base_rss > self.max_memory:
            raise ZsimError(
                f"the run grew the process's memory by {(rss - self.base_rss) / GiB:.2f} GiB, "
                f"past the limit of {self.max_memory / GiB:.2f} GiB: make the scenario "
                f"smaller (fewer jobs, records or simulated seconds), or raise the limit with "
                f"RunControl(max_memory_bytes=...) or the environment variable ZSIM_MAX_MEMORY "
                f"(bytes)"
            )
        if self.stop_when is not None:
            reason = self.stop_when()
            if reason:
                raise CapReached(reason)


def run_until(env: simpy.Environment, until: float, guard: RunGuard | None) -> None:
    """``env.run(until=until)``, checking ``guard`` every :data:`CHECK_EVERY_EVENTS` events
    (and once before the first); :class:`CapReached` leaves ``env.now`` where it stopped.
    The cyclic garbage collector is paused meanwhile (:mod:`zsim.machine.collector`)."""
    with collector_paused():
        _run_until(env, until, guard)


def _run_until(env: simpy.Environment, until: float, guard: RunGuard | None) -> None:
    if guard is None:
        env.run(until=until)
        return
    guard.check()
    at = until if isinstance(until, int) else float(until)
    if at <= env.now:
        raise ValueError(f"until ({at}) must be greater than the current simulation time")
    stop = simpy.Event(env)
    stop._ok = True
    stop._value = None
    env.schedule(stop, URGENT, at - env.now)
    assert stop.callbacks is not None
    stop.callbacks.append(StopSimulation.callback)
    step, n = env.step, 0
    try:
        while True:
            step()
            n += 1
            if n == CHECK_EVERY_EVENTS:
                n = 0
                guard.check()
    except StopSimulation:
        return
    except EmptySchedule:
        raise RuntimeError(f'no events left before "until" ({at})') from None
