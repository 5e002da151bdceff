"""The fit: round trips from known parameters, refusals, the profile file it writes."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from zsim.calibrate.fit import detect_kind, fit_device, profile_toml
from zsim.calibrate.forward import predict_iops
from zsim.calibrate.measurement import DirectionResult, Measurement
from zsim.errors import ZsimError
from zsim.hardware.catalog import load_profile

GiB = 1 << 30
Z_MAX = 3.5
"""Allowed |estimate − truth| in standard errors: a 1-in-2000 event per parameter if the
errors are right. Over 40 seeds (not run here) the z-scores' spread is 0.8-1.3 for every
parameter but the flash IOPS ceilings (read 2.0, write 1.3): the minima of the kinked
objective near the parallelism's integer steps; the notes of the calibration docs say so."""


def plan_shapes(device_bytes: int, *, rotating: bool) -> list[Measurement]:
    """The shapes a default single-disk plan measures (zsim.calibrate.plan), as unfilled
    measurements: QD sweeps at 4K/64K/1M over the whole device, zone reads, a short-span
    and a small sequential read, an O_SYNC write."""
    sweeps = ((4096, (1, 2, 4, 8, 16, 32)), (65536, (1, 4, 32)), (1 << 20, (1, 4, 32)))
    shapes = [
        {"rw": rw, "bs": bs, "iodepth": qd, "size": device_bytes, "offset": 0}
        for rw in ("randread", "randwrite")
        for bs, depths in sweeps
        for qd in depths
    ]
    for f in (0.0, 0.2, 0.4, 0.6, 0.8, 0.95):
        offset = int(f * device_bytes) // 4096 * 4096
        shapes.append({"rw": "read", "bs": 1 << 20, "iodepth": 4, "size": GiB, "offset": offset})
    shapes.append(
        {"rw": "randread", "bs": 4096, "iodepth": 1, "size": device_bytes // 100, "offset": 0}
    )
    shapes.append({"rw": "read", "bs": 4096, "iodepth": 1, "size": 256 << 20, "offset": 0})
    shapes.append(
        {
            "rw": "write",
            "bs": 4096,
            "iodepth": 1,
            "size": GiB,
            "offset": 0,
            "sync": True,
            "ioengine": "psync",
        }
    )
    out = []
    for i, s in enumerate(shapes):
        out.append(
            Measurement(
                source=f"synthetic#{i}",
                name=f"{s['rw']}-{s['bs']}-qd{s['iodepth']}-{i}",
                tool="fio",
                rw=s["rw"],
                bs=s["bs"],
                iodepth=s["iodepth"],
                ioengine=s.get("ioengine", "libaio"),
                direct=True,
                sync=s.get("sync", False),
                offset=s["offset"],
                size=s["size"],
                target_bytes=device_bytes,
                rotational=rotating,
            )
        )
    return out


def measure(profile_name: str, noise: float, seed: int, **overrides: object) -> list[Measurement]:
    """Measurements a device with ``profile_name``'s parameters (``overrides`` replacing
    some) would give, through the same forward model the fit uses, times seeded log-normal
    noise of ``noise`` (relative)."""
    prof = replace(load_profile(profile_name), **overrides)
    size = prof.size_bytes
    rng = np.random.default_rng(seed)
    out = []
    for m in plan_shapes(size, rotating=prof.kind == "hdd"):
        iops = predict_iops(prof, m, size)
        if iops is None:  # no closed form: the fit leaves such runs out anyway
            iops = 100.0
        iops *= math.exp(rng.normal(0.0, noise))
        d = DirectionResult(iops * m.bs, iops, int(iops * m.bs * 30), 30.0)
        is_write = m.rw in ("write", "randwrite")
        out.append(replace(m, read=None if is_write else d, write=d if is_write else None))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_flash_round_trip_recovers_parameters_within_their_standard_errors(seed):
    truth = load_profile("samsung-870-evo-500gb")  # P = 8 units: every ceiling is reached
    fit = fit_device(measure("samsung-870-evo-500gb", 0.03, seed), name="rt")
    assert fit.kind == "ssd" or fit.kind == "nvme"
    for name in ("read_latency", "read_iops", "read_bw", "write_latency", "write_iops", "write_bw"):
        p = fit.parameter(name)
        assert p.fitted and p.stderr is not None
        true = float(getattr(truth, name))
        assert abs(p.value - true) <= Z_MAX * p.stderr, (name, p.value, true, p.stderr)
    assert 0.01 < fit.rms_error < 0.06  # the 3 % noise, not a perfect fit


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_hdd_round_trip_recovers_parameters_within_their_standard_errors(seed):
    truth = load_profile("seagate-ironwolf-12tb")
    ms = measure("seagate-ironwolf-12tb", 0.02, seed)
    fit = fit_device(ms, name="rt", base={"rpm": 7200})
    assert fit.kind == "hdd"
    expect = {
        "max_sustained": truth.max_sustained,
        "min_sustained": truth.min_sustained,
        "avg_seek_read": truth.avg_seek_read,
        "min_seek": truth.min_seek,
        "command_overhead": 1e-4,  # zsim.hardware.hdd.DEFAULT_OVERHEAD: the catalog has none
    }
    for name, true in expect.items():
        p = fit.parameter(name)
        assert p.fitted and p.stderr is not None, name
        assert abs(p.value - true) <= Z_MAX * p.stderr, (name, p.value, true, p.stderr)


@pytest.mark.parametrize("depth", [4, 32])
def test_hdd_round_trip_recovers_the_queueing_gain(depth):
    """The scheduler's effective window (``queue_reorder_depth``) is recovered from the
    queued random reads with 3 % noise, and the queued runs are predicted within it."""
    ms = measure("seagate-ironwolf-12tb", 0.03, 7, queue_reorder_depth=depth)
    fit = fit_device(ms, name="rt", base={"rpm": 7200})
    p = fit.parameter("queue_reorder_depth")
    assert p.fitted and p.value == depth, p.note
    assert fit.profile.queue_reorder_depth == depth
    queued = [r for r in fit.residuals if "randread" in r.name and "qd1-" not in r.name]
    assert queued and all(r.used and r.predicted_iops is not None for r in queued)
    assert all(abs(r.error) < 0.12 for r in queued), [(r.name, r.error) for r in queued]


def test_queueing_gain_grows_with_the_reorder_window():
    """Physics check of the fitted parameter: at 32 outstanding 4 KiB random reads over the
    whole IronWolf, SATF over a wider window serves more (the gain of shortest-access-time-
    first grows with the choice), and a window of 1 is first come, first served (no gain)."""
    from zsim.calibrate.forward import hdd_queued_read_iops

    base = load_profile("seagate-ironwolf-12tb")
    size = base.size_bytes
    m = next(
        m
        for m in plan_shapes(size, rotating=True)
        if m.rw == "randread" and m.bs == 4096 and m.iodepth == 32 and m.size == size
    )
    qd1 = replace(m, iodepth=1)
    rates = [
        hdd_queued_read_iops(replace(base, queue_reorder_depth=d), m, size) for d in (1, 4, 32)
    ]
    one = hdd_queued_read_iops(replace(base, queue_reorder_depth=1), replace(qd1, iodepth=2), size)
    assert rates[0] < rates[1] < rates[2]
    assert rates[2] > 2.0 * rates[0]  # SATF over 32: well over twice FCFS (Worthington 1994)
    assert one == pytest.approx(rates[0], rel=0.1)


def test_hdd_spindle_speed_is_chosen_when_not_given():
    fit = fit_device(measure("seagate-ironwolf-12tb", 0.0, 1), name="rt")
    rpm = fit.parameter("rpm")
    assert "least residual" in rpm.note
    assert rpm.value in (5400, 5900, 7200, 10000, 10500, 15000)


def test_kind_is_told_by_the_qd1_random_read_latency():
    assert detect_kind(measure("seagate-ironwolf-12tb", 0.0, 1), 12_000_138_625_024) == "hdd"
    assert detect_kind(measure("samsung-pm9a3-3.84tb", 0.0, 1), 3_840_755_982_336) == "nvme"


def test_fit_refuses_too_few_measurements():
    ms = measure("samsung-870-evo-500gb", 0.0, 1)[:2]
    with pytest.raises(ZsimError, match="cannot fit"):
        fit_device(ms, name="rt")


def test_fit_refuses_failed_runs_only():
    ms = [replace(m, error=5) for m in measure("samsung-870-evo-500gb", 0.0, 1)]
    with pytest.raises(ZsimError, match="none of the measurements"):
        fit_device(ms, name="rt")


def test_fitted_profile_file_loads_as_a_catalog_profile(tmp_path):
    fit = fit_device(measure("samsung-870-evo-500gb", 0.02, 4), name="evo-fit")
    path = tmp_path / "evo-fit.toml"
    path.write_text(profile_toml(fit, inputs=["a.json"]))
    prof = load_profile(str(path))
    assert prof.kind == fit.kind
    assert prof.read_bw == pytest.approx(fit.parameter("read_bw").value)
    params = {p["name"]: p for p in prof.calibration["parameter"]}
    assert params["read_bw"]["stderr"] == pytest.approx(fit.parameter("read_bw").stderr)
    assert len(prof.calibration["residual"]) == len(fit.residuals)
    assert "zsim calibrate fit" in prof.sources["default"]
