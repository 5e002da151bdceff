"""What ``zsim.resilver`` returns: the ``DESIGN.md`` §5 resilver JSON, plus provenance."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zsim.result import versions


@dataclass(frozen=True)
class ResilverResult:
    """A resilver, rebuild or (for a stripe) the loss, simulated.

    Times in seconds, sizes in bytes, rates in bytes/s. ``seconds`` is the time until
    redundancy is back (``None`` when there is nothing to rebuild from: ``lost``);
    ``total_seconds`` adds the scrub that follows a sequential rebuild. ``progress`` is the
    curve ``zpool status`` would show: ``(seconds, bytes resilvered)`` points from 0 to the
    end. ``limit`` names what bounds the rate: a disk (``disk:sdc`` — the new disk, or a
    surviving one), ``cpu``, a bus stage, ``scan`` (the scan's own in-flight and queue
    limits, nothing saturated) or ``md-speed-limit``. ``windows`` are the sampled stretches
    the time is built from (position 0…1 along the allocated space, their rate and
    utilisation). ``under_load`` (when asked) holds the resilver and the foreground workload
    both slowed down; ``durability`` the loss probabilities (:mod:`zsim.reliability`).
    """

    system: str  # zfs | md | lost
    disk: str
    method: str  # healing | sequential | rebuild (md) | none
    spare: str
    seconds: float | None
    bytes_resilvered: int
    bytes_per_s: float
    limit: str
    lost: bool = False
    total_seconds: float | None = None
    scrub_seconds: float | None = None
    bytes_read: int = 0
    bytes_examined: int = 0
    progress: tuple[tuple[float, int], ...] = ()
    utilization: dict[str, float] = field(default_factory=dict)
    windows: tuple[dict[str, Any], ...] = ()
    under_load: dict[str, Any] | None = None
    durability: dict[str, Any] | None = None
    seed: int = 1
    scenario: dict[str, Any] = field(default_factory=dict)
    wall_seconds: float = 0.0
    notes: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    engine: str = "des-windows"  # or "analytic" (zsim.resilver.analytic)

    def to_dict(self) -> dict[str, Any]:
        """The ``DESIGN.md`` §5 resilver JSON (``seconds``, ``bytes_resilvered``,
        ``bytes_per_s``, ``limit``) and everything else, JSON-able, SI units."""
        return {
            "seconds": self.seconds,
            "bytes_resilvered": self.bytes_resilvered,
            "bytes_per_s": self.bytes_per_s,
            "limit": self.limit,
            "system": self.system,
            "disk": self.disk,
            "method": self.method,
            "spare": self.spare,
            "lost": self.lost,
            "total_seconds": self.total_seconds,
            "scrub_seconds": self.scrub_seconds,
            "bytes_read": self.bytes_read,
            "bytes_examined": self.bytes_examined,
            "progress": [{"seconds": t, "bytes": b} for t, b in self.progress],
            "utilization": dict(self.utilization),
            "windows": list(self.windows),
            "under_load": self.under_load,
            "durability": self.durability,
            "engine": self.engine,
            "seed": self.seed,
            "versions": versions(),
            "wall_seconds": self.wall_seconds,
            "notes": list(self.notes),
            "details": dict(self.details),
            "scenario": self.scenario,
        }
