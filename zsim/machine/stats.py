"""Output analysis for the discrete-event engines: the completion log, warm-up removal and
confidence intervals.

* :class:`CompletionLog`: every client call's completion time, latency, size and direction;
* MSER-5 (White, 1997; White, Cobb & Spratt, 2000): batch the series in groups of 5, choose the
  truncation point d that minimises the standard error of the remaining mean, searched over
  the first half of the batches.
* Batch means (Law & Kelton, *Simulation Modeling and Analysis*, §9.5): split the kept series
  into k equal batches; the 95 % half-width is t(0.975, k−1) · s / √k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass
class CompletionLog:
    """The completed client calls of a run, one entry per call in completion order."""

    times: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    nbytes: list[int] = field(default_factory=list)
    is_read: list[bool] = field(default_factory=list)


def mser5_truncation(series: np.ndarray) -> int:
    """Number of leading observations to discard (a multiple of 5)."""
    n = len(series) // 5
    if n < 4:
        return 0
    batches = series[: n * 5].reshape(n, 5).mean(axis=1)
    best_d, best_score = 0, math.inf
    for d in range(n // 2):
        tail = batches[d:]
        score = tail.var() / len(tail)
        if score < best_score:
            best_d, best_score = d, score
    return best_d * 5


def batch_means_halfwidth(series: np.ndarray, batches: int = 20) -> tuple[float, float]:
    """(mean, 95 % half-width) of a stationary series by the method of batch means."""
    n = len(series)
    if n < batches * 2:
        batches = max(2, n // 2)
    if n < 4:
        return float(series.mean()) if n else 0.0, math.inf
    size = n // batches
    means = series[: size * batches].reshape(batches, size).mean(axis=1)
    mean = float(means.mean())
    spread = float(means.std(ddof=1))
    from scipy import stats  # scipy.stats costs ~1 s to import: only when a CI is due

    t = float(stats.t.ppf(0.975, batches - 1))
    return mean, t * spread / math.sqrt(batches)
