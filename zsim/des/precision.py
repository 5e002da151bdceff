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

#: calls a run must have measured (after its warm-up) to stop before
#: ``RunControl.min_sim_seconds``: 20 batches of 2 500 calls for the batch means, and 500 calls
#: above the p99. The floor of simulated time guards the slow processes (txg cycles, the
#: L2ARC feed); a fast pool logs this many calls in a fraction of it, so it may stop sooner
#: where nothing slow is left to see (:func:`early_stop_blocker`, :func:`may_stop_early`)
EARLY_STOP_CALLS = 50_000

#: whole txg cycles a write run measured by cycle must hold to stop before
#: ``RunControl.min_sim_seconds``: as many regenerative cycles as the batch means' 20 batches
EARLY_STOP_CYCLES = 20

#: a run that may stop early is first checked after this share of ``RunControl.check_every``;
#: later on the ``check_every`` grid, and in between while calls arrive fast (:func:`next_check`)
FIRST_CHECK_SHARE = 1 / 8


@dataclass(frozen=True)
class Precision:
    """``ci_rel``: relative 95 % half-width of the rate (inf: not known yet); the measured
    span starts at ``start`` s and ends at ``end`` s (None: now); ``window``: bin width, s."""

    ci_rel: float
    start: float
    window: float
    end: float | None = None


def next_check(now: float, calls: int, check_every: float) -> float:
    """The simulated time of a run's next precision check, s: the next point of the
    ``check_every`` grid, or sooner when the calls logged so far (``calls`` by ``now``) would
    bring another quarter of :data:`EARLY_STOP_CALLS` first. The engine asks it only before
    the floor and only for a run nothing holds there (:func:`early_stop_blocker`); every other
    run is checked on the grid alone, where it always was."""
    grid = (math.floor(now / check_every + 1e-9) + 1) * check_every
    if now <= 0 or calls <= 0:
        return min(grid, check_every * FIRST_CHECK_SHARE)
    quarter = EARLY_STOP_CALLS / 4 / (calls / now)
    return min(grid, now + max(quarter, check_every * FIRST_CHECK_SHARE))


def early_stop_blocker(
    *, read_only: bool, cache_or_scan: bool, txgs_synced: int | None
) -> str | None:
    """What holds a run to ``RunControl.min_sim_seconds`` (None: nothing, it may stop as soon
    as :func:`may_stop_early` allows): a cache device's feed (once a second) or a scan, or a
    write run's txg cycles until more than :data:`EARLY_STOP_CYCLES` have synced
    (``txgs_synced`` None: an engine without txgs, md or btrfs)."""
    if cache_or_scan:
        return "a cache device's feed or a scan"
    if not read_only and (txgs_synced is None or txgs_synced <= EARLY_STOP_CYCLES):
        return "txg cycles"
    return None


def may_stop_early(
    times: Sequence[float],
    warmup: float,
    *,
    read_only: bool,
    sync_times: Sequence[float] | None,
    end: float | None,
) -> bool:
    """May a run that nothing holds to its floor (:func:`early_stop_blocker`) stop before
    ``RunControl.min_sim_seconds``? A read-only run needs :data:`EARLY_STOP_CALLS` calls after
    ``warmup``; a write run must be measured by txg cycle (``end``: the last sync it is
    measured to) over :data:`EARLY_STOP_CYCLES` whole cycles (``sync_times``: when each sync
    ended; ``None``: the engine has no txgs)."""
    if read_only:
        t = np.asarray(times)
        return len(t) - int(np.searchsorted(t, warmup)) >= EARLY_STOP_CALLS
    if sync_times is None or end is None:
        return False
    marks = np.asarray(sync_times, dtype=float)
    return int(np.count_nonzero((marks >= warmup) & (marks <= end))) - 1 >= EARLY_STOP_CYCLES


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
