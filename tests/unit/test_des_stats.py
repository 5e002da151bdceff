"""Output analysis: MSER-5 finds a warm-up transient; batch means and cycle means cover the
true mean."""

from __future__ import annotations

import itertools

import numpy as np

from zsim.machine.stats import batch_means_halfwidth, cycle_means_halfwidth, mser5_truncation


def test_mser5_cuts_an_initial_transient():
    rng = np.random.default_rng(3)
    series = np.concatenate([np.linspace(0, 100, 50), 100 + rng.normal(0, 1, 450)])
    cut = mser5_truncation(series)
    assert 40 <= cut <= 60


def test_mser5_keeps_a_stationary_series():
    rng = np.random.default_rng(4)
    assert mser5_truncation(rng.normal(10, 1, 500)) <= 50


def test_batch_means_interval_covers_the_mean_about_95_percent():
    rng = np.random.default_rng(5)
    covered = 0
    for _ in range(400):
        mean, half = batch_means_halfwidth(rng.exponential(2.0, 2000))
        covered += abs(mean - 2.0) <= half
    assert 0.90 <= covered / 400 <= 0.99


def _bursty_cycles(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Events of a process that repeats a cycle of random length (mean 9.5 s): a burst of
    completions at 200/s while the cycle's dirty data drains, then a quiet tail at 20/s —
    a write run between txg syncs. True long-run rate: E[events per cycle] / E[length]."""
    bounds = np.concatenate([[0.0], np.cumsum(rng.uniform(8.5, 10.5, n))])
    times = []
    for a, b in itertools.pairwise(bounds):
        burst = a + 0.6 * (b - a)
        times.append(np.sort(rng.uniform(a, burst, rng.poisson(200 * (burst - a)))))
        times.append(np.sort(rng.uniform(burst, b, rng.poisson(20 * (b - burst)))))
    return np.concatenate(times), bounds


def test_cycle_means_interval_covers_the_long_run_rate_about_95_percent():
    rng = np.random.default_rng(6)
    true_rate = 0.6 * 200 + 0.4 * 20  # per second, whatever the cycle's length
    covered = 0
    for _ in range(300):
        times, bounds = _bursty_cycles(rng, 8)
        rate, half, _ = cycle_means_halfwidth(times, bounds)
        covered += abs(rate - true_rate) <= half
    assert 0.90 <= covered / 300 <= 0.99


def test_cycle_means_are_tighter_than_fixed_bins_that_alias_the_cycle():
    """Bins of half a mean cycle catch a varying share of each burst: batch means over them
    read the cycle as noise, counting by whole cycles does not."""
    rng = np.random.default_rng(7)
    times, bounds = _bursty_cycles(rng, 12)
    window = 9.5 / 2
    series = np.bincount((times // window).astype(int))[: int(bounds[-1] // window)] / window
    mean, half = batch_means_halfwidth(series, batches=min(20, len(series) // 2))
    rate, cycle_half, drift = cycle_means_halfwidth(times, bounds)
    assert cycle_half / rate < half / mean
    assert drift < 0.05


def test_cycle_means_report_a_drift_between_the_halves():
    """A rate that halves mid-run is a swing longer than a cycle: the drift shows it."""
    bounds = np.arange(0.0, 81.0, 10.0)
    times = np.concatenate(
        [np.linspace(a, a + 10, 100 if a < 40 else 50, endpoint=False) for a in bounds[:-1]]
    )
    _, _, drift = cycle_means_halfwidth(times, bounds)
    assert 0.6 < drift < 0.7  # (100 − 50) / 75 per 10 s
