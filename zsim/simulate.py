"""``zsim.simulate``: one entry point for every engine, all reading the same scenario."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from zsim.baseline import baseline_estimate
from zsim.errors import ZsimError, check_arg
from zsim.machine.collector import collector_paused
from zsim.machine.run_control import RunControl
from zsim.result import DirectionStats, SimResult
from zsim.scenario import Scenario
from zsim.scenario.accuracy import accuracy_for

ENGINES = ("des", "analytic", "baseline")


def simulate(
    scenario: Scenario,
    engine: str = "des",
    seed: int = 1,
    *,
    target_ci: float = 0.02,
    max_sim_seconds: float = 600.0,
    max_wall_seconds: float = 60.0,
    progress: Callable[[float, float, float], None] | None = None,
) -> SimResult:
    """Predict what the scenario's workload measures on its pool.

    ``engine``: ``"des"`` (SimPy discrete-event model), ``"analytic"`` (queueing formulas on
    the same scenario, device models and maps, for sweeps; raises :class:`ZsimError` outside
    its validity range) or ``"baseline"`` (the planners' rule of thumb, for comparison).
    ``seed`` makes a DES run reproducible. The DES stops when the 95 %
    half-width of the I/O rate is within ``target_ci`` of the mean, or at a cap.
    ``progress`` (DES only) is called about once per simulated second with (simulated
    seconds, wall seconds, the relative CI half-width so far or ``inf``), e.g. to draw a bar.

    A DES run is bounded: the scenario must fit :func:`zsim.machine.budget.check_budget`
    (jobs, I/Os in flight, devices, vdevs, ``bs``, records; ``ZSIM_MAX_*`` raise the limits),
    ``max_wall_seconds`` (finite, set-up included) is checked inside the event loop, the
    process may grow by ``ZSIM_MAX_MEMORY`` bytes (1 GiB) before a :class:`ZsimError`, and a
    run whose completion log fills (``ZSIM_MAX_COMPLETIONS``) stops and reports what it has.
    """
    check_arg("simulate", "scenario", scenario, Scenario, "a Scenario (from load_scenario)")
    check_arg("simulate", "engine", engine, str, "'des', 'analytic' or 'baseline'")
    check_arg("simulate", "seed", seed, int, "a whole number ≥ 0")
    if seed < 0:
        raise ZsimError(f"simulate: seed {seed} must be 0 or more")
    for name, value in (
        ("target_ci", target_ci),
        ("max_sim_seconds", max_sim_seconds),
        ("max_wall_seconds", max_wall_seconds),
    ):
        check_arg("simulate", name, value, (int, float), "a number")
        if not 0 < value < math.inf:
            raise ZsimError(f"simulate: {name} {value!r} must be a finite number above 0")
    with collector_paused():  # the engines' set-up makes as many objects as their event loops
        result = _run(
            scenario, engine, seed, target_ci, max_sim_seconds, max_wall_seconds, progress
        )
    band = accuracy_for(scenario, engine)
    return replace(result, accuracy=None if band is None else band.to_dict())


def _run(
    scenario: Scenario,
    engine: str,
    seed: int,
    target_ci: float,
    max_sim_seconds: float,
    max_wall_seconds: float,
    progress: Callable[[float, float, float], None] | None,
) -> SimResult:
    if engine == "des" and scenario.workload.tool == "trace":
        return _trace(scenario, seed)
    # The engines are imported on first use: ``import zsim`` (which imports this module)
    # stays free of SimPy and the engines' modules, and quick.
    if engine == "des":
        from zsim.des.run import simulate_des

        control = RunControl(
            target_ci=target_ci,
            max_sim_seconds=max_sim_seconds,
            max_wall_seconds=max_wall_seconds,
            on_check=progress,
        )
        return simulate_des(scenario, seed=seed, control=control)
    if engine == "baseline":
        return _baseline(scenario, seed)
    if engine == "analytic":
        from zsim.analytic.engine import simulate_analytic

        return simulate_analytic(scenario, seed=seed)
    raise ZsimError(f"unknown engine {engine!r}; use one of {', '.join(ENGINES)}")


def _baseline(sc: Scenario, seed: int) -> SimResult:
    start = time.perf_counter()
    w = sc.workload
    if w.tool == "dd":
        rw: str | None = "write" if w.direction == "write" else "read"
        bs = w.bs
    elif w.tool == "fio":
        rw, bs = w.rw, w.bs
    else:
        raise ZsimError("the baseline rule has no form for trace replay; use tool = fio or dd")
    assert rw is not None and bs is not None, "the scenario's checks require fio/dd rw and bs"
    est = baseline_estimate(sc.layout_tree(), sc.hardware.disk, rw, bs)
    read = DirectionStats(bytes_per_s=est.read_bytes_per_s, iops=est.read_iops)
    write = DirectionStats(bytes_per_s=est.write_bytes_per_s, iops=est.write_iops)
    return SimResult(
        engine="baseline",
        read=read,
        write=write,
        limit=est.limit,
        utilization={},
        seed=seed,
        scenario=sc.to_dict(),
        wall_seconds=time.perf_counter() - start,
        notes=(est.explanation,),
    )


def _trace(sc: Scenario, seed: int) -> SimResult:
    """Replay a measured trace at queue depth 1 on one disk (DiskSim validate format)."""
    from zsim.des.trace import demerit, load_trace, replay  # SimPy: on first use, as above

    start = time.perf_counter()
    layout = sc.layout_tree()
    devices: Sequence[str] = getattr(layout, "devices", ())
    if len(devices) != 1:
        raise ZsimError(
            f"trace replay drives one disk; use layout 'raw 1' (not {sc.pool.layout!r})"
        )
    trace = load_trace(sc.workload.file or "")
    simulated = replay(trace, sc.hardware.disk, seed=seed)
    span = float(simulated.sum() + trace.idle.sum())

    def stats(mask: np.ndarray) -> DirectionStats:
        if not mask.any():
            return DirectionStats()
        values = simulated[mask]
        return DirectionStats(
            bytes_per_s=float(trace.nbytes[mask].sum() / span),
            iops=float(mask.sum() / span),
            latency_mean=float(values.mean()),
            latency_p50=float(np.percentile(values, 50)),
            latency_p99=float(np.percentile(values, 99)),
        )

    d = demerit(trace.measured, simulated)
    return SimResult(
        engine="des",
        read=stats(~trace.is_write),
        write=stats(trace.is_write),
        limit=f"disk:{devices[0]}",
        utilization={f"disk:{devices[0]}": float(simulated.sum() / span)},
        seed=seed,
        scenario=sc.to_dict(),
        sim_seconds=span,
        wall_seconds=time.perf_counter() - start,
        details={
            "requests": len(simulated),
            "measured_mean_s": float(trace.measured.mean()),
            "simulated_mean_s": float(simulated.mean()),
            "demerit_s": d,
            "demerit_pct_of_mean": d / float(trace.measured.mean()),
        },
    )
