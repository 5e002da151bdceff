"""One point of a sweep and the function that evaluates it (picklable, for processes and Dask).

A point carries everything needed to reproduce its result: the scenario as a plain dict (the
scenario TOML's tables, :func:`scenario_input`, which :func:`zsim.scenario.scenario_from_dict`
reads back), the
engine, and its own seed drawn from one :class:`numpy.random.SeedSequence` for the whole
sweep, so a point's result does not depend on where or in which order it ran.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

from zsim.analytic.validity import OutOfRange, validity
from zsim.errors import ZsimError
from zsim.scenario import scenario_from_dict


@dataclass(frozen=True)
class SweepPoint:
    """One scenario to run.

    Attributes:
        index: position in the sweep (0-based), the order of the output table.
        scenario: the scenario's input tables as a dict (:func:`scenario_input`).
        engine: ``"analytic"``, ``"des"``, ``"baseline"``, or ``"auto"`` (analytic where its
            validity range allows, the DES elsewhere; the row says which ran).
        seed: this point's seed (see :func:`point_seeds`).
        labels: what the point varies, for the table: e.g. ``{"layout": "2x raidz2 6",
            "disk": "seagate-ironwolf-12tb", "workload": "vm-16k"}``.
        max_wall_seconds: the DES's wall-time cap per point, seconds (ignored by other
            engines). A run stopped by it depends on the machine's speed, so it is not
            reproducible; set ``max_sim_seconds`` for results that are.
        max_sim_seconds: the DES's cap in simulated seconds per point; ``None`` keeps
            :func:`zsim.simulate`'s default. Part of :attr:`key` when set.
    """

    index: int
    scenario: dict[str, Any]
    engine: str
    seed: int
    labels: dict[str, Any] = field(default_factory=dict)
    max_wall_seconds: float = 20.0
    max_sim_seconds: float | None = None

    @property
    def key(self) -> str:
        """A stable id of what the point computes (scenario, engine, seed, and the sim-time
        cap when one is set): the resume key."""
        what: dict[str, Any] = {"scenario": self.scenario, "engine": self.engine, "seed": self.seed}
        if self.max_sim_seconds is not None:
            what["max_sim_seconds"] = self.max_sim_seconds
        text = json.dumps(what, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def scenario_input(sc: Any) -> dict[str, Any]:
    """A :class:`zsim.scenario.Scenario` as the dict of its TOML tables (picklable, JSON-able)."""
    return tomllib.loads(sc.to_toml())


class _Caps(TypedDict, total=False):
    """The DES caps a point passes to :func:`zsim.simulate` (absent: its default)."""

    max_wall_seconds: float
    max_sim_seconds: float


def point_seeds(base_seed: int, n: int) -> list[int]:
    """``n`` independent seeds spawned from one SeedSequence(``base_seed``)."""
    children = np.random.SeedSequence(base_seed).spawn(n)
    return [int(c.generate_state(1, dtype=np.uint32)[0]) for c in children]


def evaluate_point(point: SweepPoint) -> dict[str, Any]:
    """Run one point; a flat row: labels, key, engine, seed and the simulate figures.

    A point whose scenario the engine cannot answer (a :class:`zsim.errors.ZsimError`, e.g.
    outside the analytic engine's validity range) gives a row with ``error`` set and no
    figures, so one bad point does not stop a sweep.
    """
    # looked up when a point runs, so a test can replace ``zsim.simulate.simulate``
    from zsim.simulate import simulate

    row: dict[str, Any] = {
        "index": point.index,
        "key": point.key,
        **point.labels,
        "engine": point.engine,
        "seed": point.seed,
    }
    try:
        sc = scenario_from_dict(dict(point.scenario), source=f"sweep point {point.index}")
        caps: _Caps = {"max_wall_seconds": point.max_wall_seconds}
        if point.max_sim_seconds is not None:
            caps["max_sim_seconds"] = point.max_sim_seconds
        engine = point.engine
        res = None
        if engine == "auto":
            # the analytic engine where it answers, the discrete-event engine elsewhere —
            # also where a model declines from inside its solution, past validity()
            engine = "analytic" if validity(sc) is None else "des"
            row["engine"] = engine
            if engine == "analytic":
                try:
                    res = simulate(sc, engine="analytic", seed=point.seed)
                except OutOfRange:
                    engine = "des"
            row["engine"] = engine
        if res is None:
            res = simulate(sc, engine=engine, seed=point.seed, target_ci=0.05, **caps)
    except ZsimError as err:
        row["error"] = str(err)
        row["declined"] = isinstance(err, OutOfRange)
        return row
    for name, d in (("read", res.read), ("write", res.write)):
        row[f"{name}_bytes_per_s"] = d.bytes_per_s
        row[f"{name}_iops"] = d.iops
        row[f"{name}_latency_mean_s"] = d.latency_mean
        row[f"{name}_latency_p99_s"] = d.latency_p99
    row["limit"] = res.limit
    row["ci_rel"] = res.ci_rel
    row["accuracy"] = res.accuracy
    row["error"] = None
    row["declined"] = False
    return row
