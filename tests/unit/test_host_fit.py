"""The host CPU-cost multipliers: cpu_costs scaling, the scenario keys, the engines' use of
them, and zsim.calibrate.host_fit's least-squares fit (round trip, identifiability, refusals)
and the shipped tn-bench fit."""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import fields
from pathlib import Path

import pytest

from zsim.calibrate import host_fit
from zsim.calibrate.host_fit import (
    PoolCase,
    fit_host_costs,
    leave_one_out,
    with_multipliers,
)
from zsim.errors import ZsimError
from zsim.machine.costs import CpuCosts, cpu_costs
from zsim.scenario import ScenarioError, scenario_from_dict
from zsim.simulate import simulate
from zsim.units import MiB
from zsim.validation.tnbench import tnbench_scenario

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "calibration" / "reference" / "tnbench-m50-host-fit.toml"

PER_IO = ("syscall", "zio", "leaf_io", "dedup_per_write", "atime_update")
PER_BYTE = (
    "copy_per_byte",
    "checksum_per_byte",
    "parity_per_byte",
    "compress_per_byte",
    "decompress_per_byte",
    "source_per_byte",
    "direct_verify_per_byte",
    "cache_pages_per_byte",
)
TRUTH = {"cpu_io_cost_scale": 1.6, "cpu_byte_cost_scale": 0.7}

# a slow single core in front of a fast NVMe mirror: every case below is CPU-bound, with
# different shares of per-I/O (4K calls) and per-byte work (1M calls, /dev/urandom)
CPU_HW = {"disk": "intel-dc-p4610-1.6tb", "ram": "2GiB", "cpu_cores": 1, "cpu_ghz": 0.25}
CPU_CASES = {
    "dd-urandom-1M": (
        {"tool": "dd", "direction": "write", "bs": "1M", "bytes": "2GiB", "source": "urandom"},
        "write",
    ),
    "read-4K": ({"tool": "fio", "rw": "read", "bs": "4K", "numjobs": 1, "size": "8GiB"}, "read"),
    "read-64K": ({"tool": "fio", "rw": "read", "bs": "64K", "numjobs": 1, "size": "8GiB"}, "read"),
    "read-1M": ({"tool": "fio", "rw": "read", "bs": "1M", "numjobs": 1, "size": "8GiB"}, "read"),
}
HDD_HW = {"disk": "seagate-ironwolf-12tb", "ram": "4GiB", "cpu_cores": 8, "cpu_ghz": 3.0}
# Every DES run below reaches its CI target within 30 simulated seconds (most within 2): a cap
# in simulated time keeps the fits the same on every machine; the wall cap is a safety net.
CAPS = {"max_sim_seconds": 60.0, "max_wall_seconds": 600.0}


def _scenario(hardware: dict, layout: str, workload: dict):
    return scenario_from_dict(
        {"hardware": dict(hardware), "pool": {"layout": layout, "fill": 0.1}, "workload": workload}
    )


# ---------------------------------------------------------------- cpu_costs


def test_the_lists_cover_every_cost_of_cpu_costs():
    numbers = {f.name for f in fields(CpuCosts) if f.name != "checksum"}
    assert numbers == set(PER_IO) | set(PER_BYTE)


def test_io_scale_multiplies_the_per_io_terms_and_byte_scale_the_per_byte_terms():
    args = (2.2, "fletcher4", 2, "lz4", "urandom")
    kwargs = {"compress_ratio": 1.6, "dedup": True, "atime": True}
    base = cpu_costs(*args, **kwargs)
    assert cpu_costs(*args, **kwargs, io_scale=1.0, byte_scale=1.0) == base
    scaled = cpu_costs(*args, **kwargs, io_scale=1.6, byte_scale=0.7)
    for name in PER_IO:
        assert getattr(base, name) > 0, name
        assert getattr(scaled, name) == pytest.approx(1.6 * getattr(base, name), rel=1e-12)
    for name in PER_BYTE:
        assert getattr(base, name) > 0, name
        assert getattr(scaled, name) == pytest.approx(0.7 * getattr(base, name), rel=1e-12)
    assert scaled.checksum == base.checksum == "sha256"  # dedup forces it
    only_io = cpu_costs(*args, **kwargs, io_scale=3.0)
    assert all(getattr(only_io, n) == getattr(base, n) for n in PER_BYTE)


# ---------------------------------------------------------------- scenario keys


def _hdd_data(**hardware) -> dict:
    return {
        "hardware": {"disk": "seagate-ironwolf-12tb", **hardware},
        "pool": {"layout": "mirror 2"},
        "workload": {"rw": "randread", "bs": "4K"},
    }


def test_scenario_keys_default_parse_and_round_trip():
    sc = scenario_from_dict(_hdd_data())
    assert (sc.hardware.cpu_io_cost_scale, sc.hardware.cpu_byte_cost_scale) == (1.0, 1.0)
    sc = scenario_from_dict(_hdd_data(cpu_io_cost_scale=1.3, cpu_byte_cost_scale=2))
    assert sc.hardware.cpu_io_cost_scale == 1.3
    assert sc.hardware.cpu_byte_cost_scale == 2.0
    assert isinstance(sc.hardware.cpu_byte_cost_scale, float)
    assert sc.to_dict()["hardware"]["cpu_io_cost_scale"] == 1.3
    text = sc.to_toml()
    assert "cpu_io_cost_scale = 1.3" in text
    assert scenario_from_dict(tomllib.loads(text)) == sc


@pytest.mark.parametrize("key", ["cpu_io_cost_scale", "cpu_byte_cost_scale"])
@pytest.mark.parametrize("value", [0, 0.0, -1.5, "fast", True])
def test_scenario_keys_must_be_positive_numbers(key, value):
    with pytest.raises(ScenarioError, match=f"hardware.{key} = ") as err:
        scenario_from_dict(_hdd_data(**{key: value}))
    assert isinstance(err.value, ZsimError)
    assert "a multiplier above 0" in str(err.value)


@pytest.mark.parametrize(
    ("layout", "engine", "workload", "direction"),
    [
        ("mirror 2", "analytic", {"rw": "randread", "bs": "4K", "numjobs": 4}, "read"),
        ("mirror 2", "analytic", {"rw": "randwrite", "bs": "128K", "numjobs": 4}, "write"),
        ("md-raid6 4", "des", {"rw": "read", "bs": "4K", "numjobs": 1}, "read"),
    ],
)
def test_every_engine_applies_both_multipliers(layout, engine, workload, direction):
    sc = _scenario(CPU_HW, layout, {"tool": "fio", "size": "8GiB", **workload})

    def rate(**values: float) -> float:
        result = simulate(with_multipliers(sc, values), engine=engine, seed=1)
        assert result.limit == "cpu"
        return getattr(result, direction).bytes_per_s

    base = rate()
    assert rate(cpu_io_cost_scale=2.0) < 0.95 * base
    assert rate(cpu_byte_cost_scale=2.0) < 0.95 * base


# ---------------------------------------------------------------- the fit


@pytest.fixture(scope="module")
def cpu_cases() -> list[PoolCase]:
    """CPU-bound runs 'measured' by simulating them with known multipliers (TRUTH)."""
    cases = []
    for name, (workload, direction) in CPU_CASES.items():
        sc = _scenario(CPU_HW, "mirror 2", workload)
        truth = simulate(with_multipliers(sc, TRUTH), engine="des", seed=1, **CAPS)
        assert truth.limit == "cpu", name
        rate = getattr(truth, direction).bytes_per_s
        cases.append(PoolCase(name, sc, direction, rate))
    return cases


@pytest.fixture(scope="module")
def cpu_fit(cpu_cases):
    return fit_host_costs(cpu_cases, **CAPS)


def test_fit_recovers_known_multipliers(cpu_fit):
    assert cpu_fit.status is not None and cpu_fit.status > 0
    for name, truth in TRUTH.items():
        p = cpu_fit.parameter(name)
        assert p.fitted, p.note
        assert p.stderr is not None and p.stderr > 0
        slack = max(3 * p.stderr, 0.1 * truth)
        assert abs(p.value - truth) <= slack, (name, p.value, p.stderr)
    for r in cpu_fit.residuals:
        assert r.informative and not r.capped
        assert abs(r.error) < 0.03, r.name  # the fitted values reproduce the "measurements"
        assert r.limit == r.limit_start == "cpu"
    assert max(abs(r.error_start) for r in cpu_fit.residuals) > 0.2  # 1.0 was well off
    data = json.loads(json.dumps(cpu_fit.to_dict()))
    assert {p["name"] for p in data["parameters"]} == set(TRUTH)
    assert len(data["residuals"]) == len(CPU_CASES)
    assert data["evaluations"] == cpu_fit.evaluations > 3


def test_leave_one_out_predicts_each_case_from_the_others(cpu_fit, cpu_cases):
    loo = leave_one_out(cpu_fit, cpu_cases)
    assert [p.name for p in loo] == list(CPU_CASES)
    for p in loo:
        assert set(p.values) == set(TRUTH)
        assert abs(p.error) < 0.05, (p.name, p.error, p.values)
        assert p.to_dict()["predicted_bytes_per_s"] == p.predicted


def test_nothing_cpu_bound_leaves_both_parameters_unidentified():
    cases = [
        PoolCase(
            f"{layout} {workload['rw']}",
            _scenario(HDD_HW, layout, {"tool": "fio", "bs": "1M", **workload}),
            direction,
            150e6,
        )
        for layout, workload, direction in (
            ("mirror 2", {"rw": "write", "numjobs": 1, "size": "4GiB"}, "write"),
            ("mirror 2", {"rw": "randread", "numjobs": 2, "size": "16GiB"}, "read"),
            ("raidz1 3", {"rw": "read", "numjobs": 1, "size": "16GiB"}, "read"),
        )
    ]
    fit = fit_host_costs(cases, **CAPS)
    assert fit.status is None
    for p in fit.parameters:
        assert not p.fitted
        assert (p.value, p.stderr) == (1.0, None)
        assert "not identifiable" in p.note
        assert p.sensitivity < host_fit.SENSITIVITY_FLOOR
    for r in fit.residuals:
        assert r.limit.startswith("disk:")
        assert r.predicted == r.predicted_start
    assert fit.evaluations == 3  # the start and one probe per parameter


def test_fewer_cases_than_parameters_plus_one_is_refused(cpu_cases):
    with pytest.raises(ZsimError, match="at least 3"):
        fit_host_costs(cpu_cases[:2])
    with pytest.raises(ZsimError, match="distinct names"):
        fit_host_costs(cpu_cases, parameters=("cpu_ghz",))


def test_a_fit_that_does_not_converge_is_refused(cpu_cases, monkeypatch):
    monkeypatch.setattr(host_fit, "MAX_NFEV", 1)
    with pytest.raises(ZsimError, match="did not converge"):
        fit_host_costs(cpu_cases, parameters=("cpu_byte_cost_scale",), **CAPS)


@pytest.mark.parametrize(
    ("direction", "rate", "message"),
    [("readwrite", 1e8, "direction"), ("read", 0.0, "above 0"), ("read", math.nan, "above 0")],
)
def test_pool_case_checks_its_fields(direction, rate, message):
    sc = _scenario(HDD_HW, "mirror 2", {"rw": "read", "bs": "1M"})
    with pytest.raises(ZsimError, match=message):
        PoolCase("bad", sc, direction, rate)


# ---------------------------------------------------------------- the shipped tn-bench fit


def test_shipped_tnbench_fit_parses_and_reproduces_write_10t():
    data = tomllib.loads(SHIPPED.read_text(encoding="utf-8"))
    assert data["source"]["commit"] == "e4a0e9bb43150dc697b8e60977f3a84b4dd401bf"
    names = [c["name"] for c in data["case"]]
    assert "read-1T" not in names
    assert set(names) >= {"write-1T", "write-10T", "write-20T", "write-40T", "read-10T"}
    values = {name: p["value"] for name, p in data["parameter"].items()}
    assert set(values) == {"cpu_io_cost_scale", "cpu_byte_cost_scale"}
    for p in data["parameter"].values():
        assert p["value"] > 0 and ("stderr" in p or not p["fitted"])
    case = next(c for c in data["case"] if c["name"] == "write-10T")
    run = data["derivation"]
    sc = with_multipliers(tnbench_scenario("write", 10), values)
    # the derivation's run reached its CI target inside its wall cap (not capped), so a
    # simulated-time cap reproduces it on any machine
    assert case["capped"] is False
    result = simulate(sc, engine=run["engine"], seed=run["seed"], **CAPS)
    assert result.write.bytes_per_s / MiB == pytest.approx(case["predicted_after_MiBps"], rel=0.05)
