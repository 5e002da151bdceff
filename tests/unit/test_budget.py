"""Issue 19: DES runs are bounded — the budget checked before a run, the caps inside it."""

from __future__ import annotations

import math
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from zsim import simulate
from zsim.des.engine import Engine
from zsim.des.run import simulate_des
from zsim.errors import ZsimError
from zsim.machine.budget import LIMITS, check_budget, demand
from zsim.machine.run_control import RunControl
from zsim.machine.run_guard import rss_bytes
from zsim.scenario import Scenario, load_scenario, scenario_from_dict
from zsim.sweep.workloads import PRESETS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples" / "scenarios").glob("*.toml"))
MIRRORS = ROOT / "examples" / "scenarios" / "ars-mirrors-4k-randread.toml"
DD = ROOT / "examples" / "scenarios" / "dd-stripe-4k.toml"


def _scenario(path: Path, *overrides: str) -> Scenario:
    return load_scenario(path, list(overrides))


# ---- the budget, before anything is built


@pytest.mark.parametrize(
    ("path", "overrides", "env"),
    [
        (MIRRORS, ["workload.iodepth=1000000000"], "ZSIM_MAX_INFLIGHT"),
        (MIRRORS, ["workload.numjobs=1000000", "workload.iodepth=1"], "ZSIM_MAX_JOBS"),
        (MIRRORS, [f"workload.numjobs={2**63 - 1}", "workload.iodepth=1"], "ZSIM_MAX_JOBS"),
        (MIRRORS, ["workload.bs=1EB"], "ZSIM_MAX_BS"),
        (MIRRORS, ["pool.layout=5000x mirror 2"], "ZSIM_MAX_LEAVES"),
        (MIRRORS, ["workload.numjobs=100000", "workload.iodepth=1000"], "ZSIM_MAX_JOBS"),
        (DD, ["workload.streams=1000000"], "ZSIM_MAX_JOBS"),
    ],
)
def test_issue_cases_are_refused_quickly(path: Path, overrides: list[str], env: str) -> None:
    sc = _scenario(path, *overrides)
    before, start = rss_bytes(), time.perf_counter()
    with pytest.raises(ZsimError, match=env):
        simulate(sc, max_sim_seconds=5, max_wall_seconds=5)
    assert time.perf_counter() - start < 5
    assert rss_bytes() - before < 200 << 20


def test_refusal_names_limit_value_and_remedy() -> None:
    sc = _scenario(MIRRORS, "workload.iodepth=1000000000")
    with pytest.raises(ZsimError) as err:
        check_budget(sc)
    text = str(err.value)
    assert "8,000,000,000" in text and "65,536" in text and "ZSIM_MAX_INFLIGHT" in text


def test_a_limit_is_raised_by_its_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    sc = _scenario(MIRRORS, "workload.numjobs=5000", "workload.iodepth=1")
    with pytest.raises(ZsimError, match="ZSIM_MAX_JOBS"):
        check_budget(sc)
    monkeypatch.setenv("ZSIM_MAX_JOBS", "10000")
    check_budget(sc)
    monkeypatch.setenv("ZSIM_MAX_JOBS", "lots")
    with pytest.raises(ZsimError, match="ZSIM_MAX_JOBS"):
        check_budget(sc)


def test_engine_checks_the_budget_itself() -> None:
    """Callers that build an Engine directly (resilver, tests) meet the budget too."""
    with pytest.raises(ZsimError, match="ZSIM_MAX_INFLIGHT"):
        Engine(_scenario(MIRRORS, "workload.iodepth=1000000000"), 1, RunControl())


def _assert_far_below(sc: Scenario, where: str) -> None:
    """Within the budget, with a margin of 4× on every limit."""
    for limit, value in demand(sc).against():
        assert value * 4 <= limit.default, f"{where}: {limit.env} {value} vs {limit.default}"
    check_budget(sc)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_examples_pass_the_budget(path: Path) -> None:
    _assert_far_below(load_scenario(path), path.name)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_sweep_presets_pass_the_budget(name: str) -> None:
    spec = PRESETS[name]
    base = load_scenario(MIRRORS).to_dict()
    base["hardware"] = {"disk": "seagate-ironwolf-12tb", "ram": "64GiB", "cpu_cores": 8}
    base["pool"] = {"layout": "raidz2 8", "recordsize": spec.recordsize or "128K"}
    base["workload"] = dict(spec.workload)
    base.pop("resilver", None)
    base.pop("durability", None)
    _assert_far_below(scenario_from_dict(base), f"preset {name}")


def _validation_scenarios(monkeypatch: pytest.MonkeyPatch) -> list[Scenario]:
    """Every scenario the validation sets run, collected without running them."""
    from zsim.validation import ars, ars_md, clemtibs, draid, tnbench

    seen: list[Scenario] = []

    def rate(sc: Scenario, *args: Any, **kwargs: Any) -> float:
        seen.append(sc)
        return 1.0

    def resilver(sc: Scenario, **kwargs: Any) -> Any:
        seen.append(sc)
        return SimpleNamespace(seconds=3600.0)

    monkeypatch.setattr(ars, "_rate", rate)
    monkeypatch.setattr(ars, "_prefill", lambda keys: None)  # no pool: the runs stay unmade
    monkeypatch.setattr(draid, "simulate_resilver", resilver)
    ars.ars_rows()
    ars.ars_width_shape()
    draid.draid_rows(workers=1)  # in this process, where the patch is
    data = clemtibs.clemtibs_measurements()
    jobs = [(j, False) for j in clemtibs.PREDICTED_JOBS] + [(clemtibs.SYNC_JOB, True)]
    rates = (None, clemtibs.measured_disk_rate(data))
    seen.extend(clemtibs.clemtibs_scenario(j, r, slog) for j, slog in jobs for r in rates)
    seen.extend(tnbench.tnbench_scenario(d, t) for d in ("write", "read") for t in tnbench.THREADS)
    seen.extend(ars_md.run_scenarios())
    return seen


def test_validation_scenarios_pass_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    scenarios = _validation_scenarios(monkeypatch)
    assert len(scenarios) > 20
    for sc in scenarios:
        _assert_far_below(sc, sc.name)


def test_every_limit_has_a_documented_variable() -> None:
    import zsim.machine.budget as budget

    for limit in LIMITS:
        assert limit.env.startswith("ZSIM_MAX_")
        assert limit.env in (budget.__doc__ or "")


# ---- the caps inside the run


def test_run_control_refuses_nan_and_inf() -> None:
    for bad in (math.nan, math.inf, -1.0, 0.0):
        with pytest.raises(ZsimError, match="max_wall_seconds"):
            RunControl(max_wall_seconds=bad)
        with pytest.raises(ZsimError, match="max_wall_seconds"):
            simulate(load_scenario(MIRRORS), max_wall_seconds=bad)
    with pytest.raises(ZsimError, match="max_memory_bytes"):
        RunControl(max_memory_bytes=0)


def test_wall_cap_stops_a_long_chunk() -> None:
    """One chunk of 10 000 simulated seconds (millions of events) stops at the wall cap."""
    control = RunControl(target_ci=1e-9, max_sim_seconds=1e5, max_wall_seconds=1.0, check_every=1e4)
    start = time.perf_counter()
    result = simulate_des(load_scenario(MIRRORS), control=control)
    took = time.perf_counter() - start
    assert took < 10, took
    assert 0 < result.sim_seconds < 1e4
    assert result.read.iops > 0
    assert any("wall-time cap" in n for n in result.notes)


def test_memory_cap_stops_the_run_with_a_clear_error() -> None:
    control = RunControl(target_ci=1e-9, max_sim_seconds=30, max_memory_bytes=1)
    sc = _scenario(MIRRORS, "workload.rw=randwrite", "workload.overwrite=false")
    with pytest.raises(ZsimError, match="ZSIM_MAX_MEMORY"):
        simulate_des(sc, control=control)


def test_a_full_completion_log_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZSIM_MAX_COMPLETIONS", "5000")
    control = RunControl(target_ci=1e-9, max_sim_seconds=600, max_wall_seconds=60)
    result = simulate_des(load_scenario(MIRRORS), control=control)
    assert result.sim_seconds < 600
    assert any("completion log full" in n for n in result.notes)
    assert result.read.iops > 0


def test_run_until_steps_as_env_run_does() -> None:
    """Same events, same order, same clock as ``env.run(until=...)``, chunk after chunk."""
    import simpy

    from zsim.machine.run_guard import RunGuard, run_until

    def trace(guarded: bool) -> list[tuple[float, int]]:
        env = simpy.Environment()
        seen: list[tuple[float, int]] = []

        def ticker(k: int) -> Any:
            while True:
                yield env.timeout(0.25 * (k + 1))
                seen.append((env.now, k))

        for k in range(5):
            env.process(ticker(k))
        guard = RunGuard(60.0) if guarded else None
        for end in (1, 2.5, 4.0, 7):
            run_until(env, end, guard)
        seen.append((env.now, next(env._eid)))  # type: ignore[attr-defined]
        return seen

    assert trace(True) == trace(False)


def test_memory_cap_catches_growth_inside_a_chunk() -> None:
    """A model that grows without bound is stopped within the cap, mid-chunk."""
    import simpy

    from zsim.machine.run_guard import RunGuard, run_until

    env = simpy.Environment()
    hoard: list[bytes] = []

    def grow() -> Any:
        while True:
            hoard.append(b"x" * 65536)
            yield env.timeout(1e-6)

    env.process(grow())
    guard = RunGuard(60.0, 64 << 20)
    with pytest.raises(ZsimError, match="ZSIM_MAX_MEMORY"):
        run_until(env, 1e9, guard)
    assert len(hoard) * 65536 < 256 << 20
