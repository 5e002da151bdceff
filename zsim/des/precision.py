"""When a discrete-event run's rate is known well enough: the span it is measured over (after
the warm-up, in bins or in whole txg cycles) and the 95 % half-width of the rate there. The
statistics are :mod:`zsim.machine.stats`'s; this module decides which apply.

* Read-only runs, and write runs with fewer than :data:`MIN_CYCLES` whole txg cycles after
  the warm-up: completions binned in fixed windows (≥ 20 completions a bin, ≥ half a txg
  period for writes), MSER-5 warm-up cut, batch means, and the gap between the two halves
  (slow swings longer than a batch).
* Write runs with enough cycles: the cycle means between txg syncs (the regenerative ratio
  estimator), measured up to the last sync, since a write run's completions follow each
  sync (the throttle releases writers as dirty data drains) and fixed bins alias the cycle.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from zsim.machine.stats import batch_means_halfwidth, cycle_means_halfwidth, mser5_truncation

#: whole txg cycles a write run measures over before its precision counts by cycle
MIN_CYCLES = 6


@dataclass(frozen=True)
class Precision:
    """``ci_rel``: relative 95 % half-width of the rate (inf: not known yet); the measured
    span starts at ``start`` s and ends at ``end`` s (None: now); ``window``: bin width, s."""

    ci_rel: float
    start: float
    window: float
    end: float | None = None


def rate_window(
    completions: int, now: float, writes: bool, txgs_synced: int, txg_timeout: float
) -> float:
    """Width of the rate series' bins, s: ≥ half a txg period for writes (the rate breathes
    with each sync), else long enough for ~20 completions per bin."""
    rate = completions / max(now, 1e-9)
    window = 20 / rate if rate > 0 else now / 10
    if writes:
        sync_period = now / max(1, txgs_synced)
        window = max(window, min(sync_period, txg_timeout) / 2)
    return max(window, now / 400)


def rate_series(times: np.ndarray, now: float, window: float) -> np.ndarray:
    """Completions per second in consecutive bins of ``window`` s up to ``now``."""
    bins = int(now // window)
    counts = np.bincount((times // window).astype(int), minlength=bins + 1)[:bins]
    return counts / window


def rate_precision(
    times: Sequence[float],
    now: float,
    *,
    writes: bool,
    txgs_synced: int = 0,
    txg_timeout: float = 5.0,
    filled_at: float | None = None,
    sync_times: Sequence[float] = (),
) -> Precision:
    """The precision of a run's completion rate so far (see the module docstring).
    ``times``: completion times, s, in order; ``filled_at``: when the write buffer first
    filled (the measurement starts after it); ``sync_times``: when each txg sync ended."""
    t = np.asarray(times)
    if len(t) < 200:
        return Precision(math.inf, 0.0, 0.0)
    window = rate_window(len(t), now, writes, txgs_synced, txg_timeout)
    series = rate_series(t, now, window)
    if len(series) < 20:
        return Precision(math.inf, 0.0, window)
    cut = mser5_truncation(series)
    if filled_at is not None:
        cut = max(cut, math.ceil(filled_at / window))
    if writes:
        marks = np.asarray(sync_times, dtype=float)
        marks = marks[marks >= cut * window]
        if len(marks) > MIN_CYCLES:
            rate, half, drift = cycle_means_halfwidth(t, marks)
            if rate > 0:
                return Precision(max(half / rate, drift), float(marks[0]), window, float(marks[-1]))
    kept = series[cut:]
    if len(kept) < 10:
        return Precision(math.inf, cut * window, window)
    mean, half = batch_means_halfwidth(kept, batches=min(20, len(kept) // 2))
    if mean <= 0:
        return Precision(math.inf, cut * window, window)
    # batch means miss slow swings longer than a batch (the write path can alternate big and
    # small txgs over tens of seconds): the two halves of the kept series must agree too
    first, second = np.array_split(kept, 2)
    drift = abs(float(first.mean()) - float(second.mean())) / mean
    return Precision(max(half / mean, drift), cut * window, window)
