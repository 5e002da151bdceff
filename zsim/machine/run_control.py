"""When a simulation run stops: the precision target and the caps in simulated and wall time."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class RunControl:
    """When to stop: ``target_ci`` relative half-width, caps in simulated and wall seconds."""

    target_ci: float = 0.02
    max_sim_seconds: float = 600.0
    max_wall_seconds: float = 60.0
    min_sim_seconds: float = 2.0
    check_every: float = 1.0
    #: called after every check with (simulated seconds, wall seconds, ci_rel so far — inf
    #: before there is one), e.g. to draw a progress bar; ``None`` calls nothing
    on_check: Callable[[float, float, float], None] | None = None
