"""Output analysis for the discrete-event engines: the completion log, warm-up removal and
confidence intervals.

* :class:`CompletionLog`: every client call's completion time, latency, size and direction,
  in compact arrays (25 bytes a call) holding at most ``ZSIM_MAX_COMPLETIONS`` (16 Mi) calls:
  a run that fills it stops and reports what it has, as at a time cap;
* MSER-5 (White, 1997; White, Cobb & Spratt, 2000): batch the series in groups of 5, choose the
  truncation point d that minimises the standard error of the remaining mean, searched over
  the first half of the batches.
* Batch means (Law & Kelton, *Simulation Modeling and Analysis*, §9.5): split the kept series
  into k equal batches; the 95 % half-width is t(0.975, k−1) · s / √k.
* Cycle means (the regenerative method, Law & Kelton §9.4.3; Crane & Iglehart 1975): when the
  process repeats a cycle of varying length (a write run breathes with each txg sync), count
  events over whole cycles and take the ratio estimator r = ΣYᵢ / ΣTᵢ; its 95 % half-width is
  t(0.975, n−1) · s_Z / (T̄ √n) with Zᵢ = Yᵢ − r Tᵢ. Bins of fixed width alias such a process
  (a bin holds a varying share of a burst), which batch means read as noise.
"""

from __future__ import annotations

import math
import os
from array import array
from dataclasses import dataclass, field

import numpy as np

#: calls a :class:`CompletionLog` holds before the run stops (``ZSIM_MAX_COMPLETIONS``):
#: 16 Mi calls are 400 MiB; a 60 s run logs at most a few million
DEFAULT_MAX_COMPLETIONS = 1 << 24


def max_completions() -> int:
    """``ZSIM_MAX_COMPLETIONS`` if set (a whole number ≥ 1000), else 16 Mi."""
    from zsim.errors import ZsimError

    raw = os.environ.get("ZSIM_MAX_COMPLETIONS", "").strip()
    if not raw:
        return DEFAULT_MAX_COMPLETIONS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1000:
        raise ZsimError(f"ZSIM_MAX_COMPLETIONS={raw!r} must be a whole number ≥ 1000")
    return value


def _floats() -> array[float]:
    return array("d")


def _ints() -> array[int]:
    return array("q")


def _flags() -> array[int]:
    return array("b")


@dataclass
class CompletionLog:
    """The completed client calls of a run, one entry per call in completion order, in
    typed arrays (``np.asarray`` reads them without a copy of Python objects)."""

    times: array[float] = field(default_factory=_floats)
    latencies: array[float] = field(default_factory=_floats)
    nbytes: array[int] = field(default_factory=_ints)
    is_read: array[int] = field(default_factory=_flags)
    #: bytes of the write calls logged (a running sum: the stop rule reads it every check)
    write_bytes: int = 0
    capacity: int = field(default_factory=max_completions)

    def add(self, done: float, latency: float, nbytes: int, is_read: bool) -> None:
        self.times.append(done)
        self.latencies.append(latency)
        self.nbytes.append(nbytes)
        self.is_read.append(is_read)
        if not is_read:
            self.write_bytes += nbytes

    def full(self) -> str | None:
        """``"completions"`` once the log holds ``capacity`` calls, else ``None``."""
        return "completions" if len(self.times) >= self.capacity else None


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


def cycle_means_halfwidth(times: np.ndarray, bounds: np.ndarray) -> tuple[float, float, float]:
    """(events per second, 95 % half-width, drift) over the whole cycles between consecutive
    ``bounds`` (seconds, increasing), of the events at sorted ``times`` (the regenerative
    ratio estimator, see the module docstring). ``drift`` is the gap between the rates of the
    first and the second half of the cycles, relative to the rate: slow swings longer than a
    cycle show there, not in the half-width."""
    b = np.asarray(bounds, dtype=float)
    n = len(b) - 1
    if n < 2:
        return 0.0, math.inf, math.inf
    counts = np.diff(np.searchsorted(np.asarray(times), b, side="left")).astype(float)
    lengths = np.diff(b)
    rate = float(counts.sum() / lengths.sum())
    if rate <= 0:
        return 0.0, math.inf, math.inf
    z = counts - rate * lengths
    from scipy import stats

    t = float(stats.t.ppf(0.975, n - 1))
    half = t * float(z.std(ddof=1)) / (float(lengths.mean()) * math.sqrt(n))
    h = n // 2
    first = counts[:h].sum() / lengths[:h].sum()
    second = counts[h:].sum() / lengths[h:].sum()
    return rate, half, abs(float(first - second)) / rate


#: the quantiles ``details["latency_quantiles_s"]`` reports per direction
LATENCY_QUANTILES = (0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999)


def latency_quantiles(log: CompletionLog, keep: np.ndarray) -> dict[str, dict[str, float]]:
    """Completion-latency quantiles (seconds) of the logged calls ``keep`` selects, per
    direction that had any: ``{"read": {"0.5": ..., "0.99": ...}, ...}`` — the latency
    distribution behind a result's mean/p50/p99."""
    lat = np.asarray(log.latencies)[keep]
    is_read = np.asarray(log.is_read, dtype=bool)[keep]
    out: dict[str, dict[str, float]] = {}
    for name, mask in (("read", is_read), ("write", ~is_read)):
        if mask.any():
            values = np.quantile(lat[mask], LATENCY_QUANTILES)
            out[name] = {f"{q:g}": float(v) for q, v in zip(LATENCY_QUANTILES, values, strict=True)}
    return out
