"""What ``simulate`` returns: the ``DESIGN.md`` §5 simulate JSON, plus provenance.

Every result carries the resolved scenario, the seed, the engine, zsim's and its dependencies'
versions and the wall time, so a number can always be traced to what produced it.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any


@dataclass(frozen=True)
class DirectionStats:
    """One direction (read or write): bytes/s, IO/s and completion latency in seconds.

    A percentile is ``None`` where the engine does not model the latency distribution (the
    analytic engine's buffered writes); JSON then carries ``null``.
    """

    bytes_per_s: float = 0.0
    iops: float = 0.0
    latency_mean: float = 0.0
    latency_p50: float | None = 0.0
    latency_p99: float | None = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "bytes_per_s": self.bytes_per_s,
            "iops": self.iops,
            "latency_s": {
                "mean": self.latency_mean,
                "p50": self.latency_p50,
                "p99": self.latency_p99,
            },
        }


def versions() -> dict[str, str]:
    """zsim's and its dependencies' versions, and Python's."""
    out = {"python": platform.python_version()}
    for name in ("zsim", "numpy", "scipy", "simpy"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


@dataclass(frozen=True)
class SimResult:
    """Predicted performance of one scenario.

    ``limit`` names the resource that bounds the result: ``disk:sdc``, ``link:sdc``, ``hba``,
    ``expander``, ``cpu``, ``txg`` (the write throttle waits on the txg drain without any one
    device saturated), or ``client`` (too few outstanding I/Os to load anything).
    ``utilization`` maps each resource to its busy fraction. ``ci_rel`` is the 95 % half-width
    over the mean of the total I/O rate (DES only). ``accuracy``: how sure the answer is,
    ``{class, points, rel_error_p10, rel_error_p90, engine}`` (the band of errors measured on
    validation points of the same class, :mod:`zsim.validation.accuracy`; p10/p90 None
    below 5 points); None when the scenario has no class.
    """

    engine: str
    read: DirectionStats
    write: DirectionStats
    limit: str
    utilization: dict[str, float]
    seed: int | None
    scenario: dict[str, Any]
    ci_rel: float | None = None
    sim_seconds: float = 0.0
    wall_seconds: float = 0.0
    events: int = 0
    warmup_seconds: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)
    details: dict[str, Any] = field(default_factory=dict)
    accuracy: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "engine": self.engine,
            "read": self.read.to_dict(),
            "write": self.write.to_dict(),
            "limit": self.limit,
            "utilization": dict(self.utilization),
            "seed": self.seed,
            "sim_seconds": self.sim_seconds,
            "wall_seconds": self.wall_seconds,
            "events": self.events,
            "warmup_seconds": self.warmup_seconds,
            "notes": list(self.notes),
            "details": dict(self.details),
            "scenario": self.scenario,
            "versions": versions(),
            "accuracy": None if self.accuracy is None else dict(self.accuracy),
        }
        if self.ci_rel is not None:
            out["ci_rel"] = self.ci_rel
        return out
