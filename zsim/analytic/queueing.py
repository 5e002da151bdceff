"""Closed queueing networks with load-dependent stations, solved exactly by convolution.

A fio run is a closed loop: ``N`` outstanding calls, each leaving when served and coming back
at once (no think time). With product-form stations whose service rate depends on how many
requests they hold, the normalising constant is a convolution of the stations' factors
(Buzen's algorithm generalised to load-dependent servers; Lazowska et al., *Quantitative
System Performance*, 1984, ch. 8 and 20). Throughput with ``n`` customers is
``X(n) = G(n−1) / G(n)``.

Everything is in logarithms: with hundreds of customers the factors (1/μ)^n under- or
overflow floats. Identical stations (the vdevs of a symmetric pool) are combined by
convolution powers, so a 60-vdev pool costs no more than a few convolutions.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Station:
    """A load-dependent station: ``rate(k)`` completions/s with ``k`` present (k ≥ 1),
    ``visits`` per customer cycle, and ``copies`` identical such stations the visits are split
    evenly over (the vdevs of a pool)."""

    name: str
    rate: Callable[[int], float]
    visits: float = 1.0
    copies: int = 1


def _log_factors(station: Station, n: int) -> np.ndarray:
    """log f(k), k = 0…n: f(k) = Π_{j≤k} (visits per copy) / rate(j)."""
    v = station.visits / station.copies
    out = np.zeros(n + 1)
    if v <= 0:
        out[1:] = -np.inf
        return out
    rates = np.array([max(station.rate(j), 1e-300) for j in range(1, n + 1)])
    out[1:] = np.cumsum(np.log(v) - np.log(rates))
    return out


def _log_convolve(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """(a * b)(k) for k = 0…n in log space (one vectorised n × n pass)."""
    j, k, valid = _grid(n)
    terms = np.where(valid, a[j] + b[np.maximum(k - j, 0)], -np.inf)
    top = terms.max(axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(terms - safe[:, None]).sum(axis=1)) + safe


@functools.lru_cache(maxsize=32)
def _grid(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    return j, k, j <= k


def _log_power(a: np.ndarray, copies: int, n: int) -> np.ndarray:
    result: np.ndarray | None = None
    base = a
    while copies:
        if copies & 1:
            result = base if result is None else _log_convolve(result, base, n)
        copies >>= 1
        if copies:
            base = _log_convolve(base, base, n)
    assert result is not None
    return result


@dataclass(frozen=True)
class Solution:
    """Throughput (customer cycles/s) and each station's mean population at ``n``."""

    throughput: float
    population: dict[str, float]


def solve(stations: Sequence[Station], n: int, populations: bool = True) -> Solution:
    """Exact solution of the closed network of ``stations`` with ``n`` customers; without
    ``populations`` only the throughput (the populations cost a convolution per pair of
    stations)."""
    if n < 1:
        return Solution(0.0, {s.name: 0.0 for s in stations})
    factors = []
    for s in stations:
        f = _log_factors(s, n)
        factors.append(_log_power(f, s.copies, n) if s.copies > 1 else f)
    total = factors[0]
    for f in factors[1:]:
        total = _log_convolve(total, f, n)
    throughput = float(np.exp(total[n - 1] - total[n]))
    population: dict[str, float] = {}
    if not populations:
        return Solution(throughput, population)
    ks = np.arange(n + 1)
    for i, s in enumerate(stations):
        others = [f for j, f in enumerate(factors) if j != i]
        if not others:
            population[s.name] = float(n)
            continue
        # (convolving with the empty network's factors, 1 at k = 0, would give them back)
        rest = others[0]
        for f in others[1:]:
            rest = _log_convolve(rest, f, n)
        # P(k at station i) = f_i(k) G_rest(n − k) / G(n)
        logp = factors[i] + rest[::-1] - total[n]
        population[s.name] = float((ks * np.exp(logp)).sum())
    return Solution(throughput, population)
