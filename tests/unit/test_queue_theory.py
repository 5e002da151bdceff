"""A simulated device driven as an open queue matches queueing formulas.

M/D/1 (Poisson arrivals, constant service D): mean wait in queue W_q = ρD / (2(1 − ρ))
(Pollaczek–Khinchine). M/M/1 is obtained by drawing exponential sizes for a device whose
service time is proportional to size: W_q = ρ S / (1 − ρ). Tolerance: the run's own 95 %
confidence interval by batch means (plus 1 % for the estimator's bias at finite length).
"""

from __future__ import annotations

import numpy as np
import pytest
import simpy

from zsim.hardware.flash import FlashParams
from zsim.machine.resources import Device, DevIO, Path
from zsim.machine.stats import batch_means_halfwidth


def one_unit_device(env: simpy.Environment) -> Device:
    # one internal unit, no latency floor: service = 4 KiB … at 400 MB/s, proportional to size
    params = FlashParams(
        read_latency=0.0,
        write_latency=0.0,
        read_bw=400e6,
        write_bw=400e6,
        read_iops=1e9,
        write_iops=1e9,
        parallelism=1,
        steady_write_bw=400e6,
    )
    return Device(env, "ssd", params, rotating=False, path=Path([]))


def run_open_queue(sizes: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    env = simpy.Environment()
    dev = one_unit_device(env)
    waits = np.zeros(len(sizes))

    def arrive(i: int) -> None:
        start = env.now

        def done() -> None:
            waits[i] = env.now - start

        dev.submit(DevIO(offset=0, nbytes=int(sizes[i]), is_write=False, done=done))

    t = 0.0
    for i, gap in enumerate(gaps):
        t += gap
        env.timeout(t).callbacks.append(lambda _e, i=i: arrive(i))
    env.run()
    return waits


@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_md1_mean_response(rho):
    rng = np.random.default_rng(11)
    n, size = 200_000, 40_000
    service = size / 400e6
    gaps = rng.exponential(service / rho, n)
    waits = run_open_queue(np.full(n, size), gaps)[n // 10 :]
    mean, half = batch_means_halfwidth(waits)
    theory = service + rho * service / (2 * (1 - rho))
    print(f"M/D/1 rho={rho}: sim {mean * 1e6:.1f} µs ± {half * 1e6:.1f}, theory {theory * 1e6:.1f}")
    assert abs(mean - theory) <= half + 0.01 * theory


def test_mm1_mean_response():
    rng = np.random.default_rng(12)
    n, rho, mean_size = 200_000, 0.7, 40_000
    service = mean_size / 400e6
    sizes = np.maximum(1, rng.exponential(mean_size, n)).astype(int)
    gaps = rng.exponential(service / rho, n)
    waits = run_open_queue(sizes, gaps)[n // 10 :]
    mean, half = batch_means_halfwidth(waits)
    theory = service / (1 - rho)
    print(f"M/M/1 rho={rho}: sim {mean * 1e6:.1f} µs ± {half * 1e6:.1f}, theory {theory * 1e6:.1f}")
    assert abs(mean - theory) <= half + 0.01 * theory
