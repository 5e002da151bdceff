"""When a simulation run stops: the precision target and the caps in simulated and wall time,
and the memory the run may grow by."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

from zsim.errors import ZsimError


@dataclass(frozen=True)
class RunControl:
    """When to stop: ``target_ci`` relative half-width, caps in simulated and wall seconds.

    The wall-time cap is checked inside the event loop (every few thousand events) and
    counts the engine's set-up; ``max_memory_bytes`` caps how much the process's resident
    memory may grow during the run (``None``: ``ZSIM_MAX_MEMORY``, else 1 GiB), past which
    the run stops with a :class:`ZsimError` (:mod:`zsim.machine.run_guard`). Every number
    must be finite and above 0 (``min_sim_seconds`` may be 0). ``min_sim_seconds`` is a
    floor a run may pass under only where nothing slower than what it measured is left
    unseen (:mod:`zsim.des.precision`); ``check_every`` is the grid of precision checks,
    with more between its points before the floor while such a run's calls arrive fast."""

    target_ci: float = 0.02
    max_sim_seconds: float = 600.0
    max_wall_seconds: float = 60.0
    min_sim_seconds: float = 2.0
    check_every: float = 1.0
    #: called after every check with (simulated seconds, wall seconds, ci_rel so far — inf
    #: before there is one), e.g. to draw a progress bar; ``None`` calls nothing
    on_check: Callable[[float, float, float], None] | None = None
    max_memory_bytes: int | None = None

    def __post_init__(self) -> None:
        for name in ("target_ci", "max_sim_seconds", "max_wall_seconds", "check_every"):
            if not 0 < _number(name, getattr(self, name)) < math.inf:
                raise ZsimError(
                    f"RunControl: {name} {getattr(self, name)!r} must be a finite number above 0"
                )
        if not 0 <= _number("min_sim_seconds", self.min_sim_seconds) < math.inf:
            raise ZsimError(
                f"RunControl: min_sim_seconds {self.min_sim_seconds!r} must be a finite number ≥ 0"
            )
        mem: object = self.max_memory_bytes
        if mem is not None and (
            isinstance(mem, bool) or not isinstance(mem, numbers.Integral) or int(mem) < 1
        ):
            raise ZsimError(f"RunControl: max_memory_bytes {mem!r} must be a whole number ≥ 1")


def _number(name: str, value: object) -> float:
    """``value`` as a float; :class:`ZsimError` unless it is a real number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ZsimError(f"RunControl: {name} must be a number, not {type(value).__name__}")
    return float(value)
