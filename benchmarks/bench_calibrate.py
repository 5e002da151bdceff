"""Speed of the calibration steps that run on a planner's machine; prints figures.

Parsing the stored results of a real plan (43 fio/dd result files), the device fit (12 starts,
60 bootstrap refits), a quick leave-one-out refit, the closed-form predictions the fit
evaluates, and the discrete-event replay of one run. Not a test: figures.

Run: python benchmarks/bench_calibrate.py
"""

from __future__ import annotations

import resource
import time
from pathlib import Path

from zsim.calibrate.fit import fit_device
from zsim.calibrate.forward import predict_iops
from zsim.calibrate.load import load_results
from zsim.validation.profile import validate_measurements

RESULTS = Path(__file__).resolve().parents[1] / "calibration/results/vm-virtio-file-2026-11-22"


def timed(label: str, fn, repeat: int = 1):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    for _ in range(repeat):
        out = fn()
    wall = (time.perf_counter() - start) / repeat
    print(f"{label:<52}{wall * 1e3:>10.1f} ms")
    return out


def main() -> None:
    loaded = timed("parse 43 stored results (load_results)", lambda: load_results([RESULTS]), 5)
    ms = loaded.measurements
    fit = timed("device fit (12 starts, 60 bootstrap refits)", lambda: fit_device(ms, name="b"))
    start = {p.name: p.value for p in fit.parameters}
    timed(
        "quick refit (one start, no bootstrap)",
        lambda: fit_device(ms[1:], name="b", start=start, quick=True),
    )
    fitted = [m for m in ms if m.tool == "fio" and m.purpose != "prepare"]
    timed(
        f"closed-form predictions of {len(fitted)} runs",
        lambda: [predict_iops(fit.profile, m, fit.device_bytes) for m in fitted],
        20,
    )
    one = [m for m in ms if m.name == "randread-4k-qd16"]
    timed(
        "DES replay of one run (4K randread QD16)",
        lambda: validate_measurements(fit.profile, one, device_bytes=fit.device_bytes),
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{'peak memory':<52}{peak:>10.0f} MiB")


if __name__ == "__main__":
    main()
