"""Output analysis: MSER-5 finds a warm-up transient; batch means cover the true mean."""

from __future__ import annotations

import numpy as np

from zsim.machine.stats import batch_means_halfwidth, mser5_truncation


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
