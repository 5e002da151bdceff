"""What ``zsim.grow`` returns: the ``DESIGN.md`` §5 grow JSON, plus provenance."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zsim.grow.reflow import ReflowResult
from zsim.result import versions

#: the four space figures of a pool (bytes), as ``zsim capacity`` names them
SPACE_KEYS = (
    "zpool_size_bytes",
    "usable_bytes",
    "usable_new_data_bytes",
    "usable_after_rewrite_bytes",
)


@dataclass(frozen=True)
class GrowResult:
    """A grown pool. Bytes, seconds, bytes/s.

    ``space_before`` / ``space_after``: ``zpool list`` SIZE (``zpool_size_bytes``), ``zfs
    list`` USED+AVAIL (``usable_bytes``), the data that really fits
    (``usable_new_data_bytes``, the pool ``fill`` full at each attach) and after a full
    rewrite (``usable_after_rewrite_bytes``), plus ``raw_bytes``. ``seconds``: every reflow
    one after another (``None`` for ``zpool add``, which copies nothing); ``reflows`` each
    attach's :class:`ReflowResult`. ``performance``: ``before`` and ``after`` as the
    analytic engine answers them (or why it declines), and for a pool of several vdevs how
    new writes spread (``spread``).
    """

    kind: str
    layout_before: str
    layout_after: str
    commands: tuple[str, ...]
    fill: float
    space_before: dict[str, int]
    space_after: dict[str, int]
    seconds: float | None
    reflows: tuple[ReflowResult, ...] = ()
    performance: dict[str, Any] = field(default_factory=dict)
    seed: int = 1
    scenario: dict[str, Any] = field(default_factory=dict)
    wall_seconds: float = 0.0
    notes: tuple[str, ...] = ()

    @property
    def scrub_seconds(self) -> float | None:
        """The scrubs OpenZFS starts after each reflow, together (``None``: not simulated)."""
        values = [r.scrub_seconds for r in self.reflows]
        if not values or any(v is None for v in values):
            return None
        return float(sum(v for v in values if v is not None))

    def to_dict(self) -> dict[str, Any]:
        """The grow JSON: space before/after, reflow ``seconds``, performance before/after."""
        return {
            "kind": self.kind,
            "layout_before": self.layout_before,
            "layout_after": self.layout_after,
            "commands": list(self.commands),
            "fill": self.fill,
            "space_before": dict(self.space_before),
            "space_after": dict(self.space_after),
            "seconds": self.seconds,
            "scrub_seconds": self.scrub_seconds,
            "reflows": [r.to_dict() for r in self.reflows],
            "performance": self.performance,
            "engine": "des-windows" if self.reflows else "none",
            "seed": self.seed,
            "versions": versions(),
            "wall_seconds": self.wall_seconds,
            "notes": list(self.notes),
            "scenario": self.scenario,
        }
