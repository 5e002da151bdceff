"""The seek curve of a hard disk: time against distance, fitted to the datasheet's minimum,
average and maximum seek (Ruemmler & Wilkes 1994: √distance while the arm speeds up, linear
once it coasts).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import overload

import numpy as np

from zsim.errors import ZsimError
from zsim.table_cache import load_or_measure, register_kind

DEFAULT_CYLINDERS = 500_000
"""Cylinders (tracks per surface), used only to place the minimum seek at distance 1/ncyl. A
12 TB drive with 16 heads and ~1.3 MB average tracks has 12e12 / 1.3e6 / 16 ≈ 580 k; the fit
is insensitive to it (1/√ncyl changes by 0.0004 between 400 k and 600 k)."""


_sqrt = math.sqrt


@dataclass(frozen=True)
class SeekCurve:
    """Seek time against distance x (fraction of the full stroke), seconds.

    ``t(x) = a + b·√x`` for 1/(2·ncyl) ≤ x < x0, ``c + e·x`` for x ≥ x0, 0 on the same
    cylinder. The two pieces meet at x0 with equal value and slope (the arm reaches its
    coasting speed there): Ruemmler & Wilkes (1994), "speedup/coast/slowdown/settle".
    """

    a: float
    b: float
    c: float
    e: float
    x0: float
    cylinders: int


@overload
def seek_time(curve: SeekCurve, distance_fraction: float) -> float: ...
@overload
def seek_time(curve: SeekCurve, distance_fraction: np.ndarray) -> np.ndarray: ...
def seek_time(curve: SeekCurve, distance_fraction: float | np.ndarray) -> float | np.ndarray:
    """Seek over ``distance_fraction`` of the stroke (0 = same cylinder, 1 = full stroke), s.
    A NumPy array of distances gives the array of seeks, element by element."""
    x = distance_fraction
    if isinstance(x, np.ndarray):
        return np.where(
            x * curve.cylinders < 0.5,
            0.0,
            np.where(x < curve.x0, curve.a + curve.b * np.sqrt(x), curve.c + curve.e * x),
        )
    if x * curve.cylinders < 0.5:
        return 0.0
    if x < curve.x0:
        return curve.a + curve.b * _sqrt(x)
    return curve.c + curve.e * x


def _curve_for(x0: float, min_seek: float, max_seek: float, cylinders: int) -> SeekCurve:
    # t(1/ncyl) = min, t(1) = max, tangent join at x0: c = a + b√x0/2, e = b/(2√x0).
    r = _sqrt(x0)
    h = (r + 1.0 / r) / 2.0
    s = 1.0 / _sqrt(cylinders)
    b = (max_seek - min_seek) / (h - s)
    a = min_seek - b * s
    return SeekCurve(a=a, b=b, c=a + b * r / 2.0, e=b / (2.0 * r), x0=x0, cylinders=cylinders)


def seek_mean(curve: SeekCurve) -> float:
    """Mean seek between two independent uniformly random cylinders, s.

    The distance of two uniform points on [0, 1] has density 2(1 − x); integrated in closed
    form over each piece (the zero-distance point has no weight).
    """
    x0, r = curve.x0, _sqrt(curve.x0)
    p_sqrt = 2.0 * x0 - x0 * x0  # ∫0^x0 2(1−x) dx
    m_sqrt = (4.0 / 3.0) * x0 * r - 0.8 * x0 * x0 * r  # ∫0^x0 √x·2(1−x) dx
    p_lin = (1.0 - x0) ** 2  # ∫x0^1 2(1−x) dx
    m_lin = 1.0 / 3.0 - x0 * x0 + 2.0 * x0**3 / 3.0  # ∫x0^1 x·2(1−x) dx
    return curve.a * p_sqrt + curve.b * m_sqrt + curve.c * p_lin + curve.e * m_lin


def fit_seek_curve(
    min_seek: float, avg_seek: float, max_seek: float, ncyl: int = DEFAULT_CYLINDERS
) -> SeekCurve:
    """Fit the two-piece seek curve to datasheet minimum, average and maximum seeks (s).

    Conditions: ``t(1/ncyl) = min_seek``, ``t(1) = max_seek``, value and slope continuous at
    x0, and the mean over random seeks (distance density 2(1 − x)) equal to ``avg_seek``. For
    a given x0 the first four are linear in (a, b, c, e); x0 is then found by a bracketing
    root search on the mean (fit time only). The mean runs from about min + (max − min)/3
    (x0 → 0, a straight line) to min + 8/15·(max − min) (x0 = 1, pure √): an average outside
    that range cannot come from a concave curve and is refused.
    """
    if ncyl < 2:
        raise ZsimError(f"a disk needs at least 2 cylinders, not {ncyl}")
    if not 0.0 <= min_seek <= avg_seek <= max_seek:
        raise ZsimError(
            f"seek times must grow min ≤ average ≤ max, got {min_seek * 1e3:.3g} / "
            f"{avg_seek * 1e3:.3g} / {max_seek * 1e3:.3g} ms; check the profile's seek figures"
        )
    if max_seek - min_seek < 1e-9:
        return SeekCurve(a=min_seek, b=0.0, c=min_seek, e=0.0, x0=1.0, cylinders=ncyl)
    lo = 1.0 / ncyl

    def gap(x0: float) -> float:
        return seek_mean(_curve_for(x0, min_seek, max_seek, ncyl)) - avg_seek

    g_lo, g_hi = gap(lo), gap(1.0)
    if g_lo > 0.0 or g_hi < 0.0:
        low, high = avg_seek - g_lo, avg_seek - g_hi
        raise ZsimError(
            f"an average seek of {avg_seek * 1e3:.3g} ms does not fit min {min_seek * 1e3:.3g} /"
            f" max {max_seek * 1e3:.3g} ms: a seek curve through those ends averages between "
            f"{low * 1e3:.3g} and {high * 1e3:.3g} ms; check the seek figures"
        )
    if g_hi == 0.0:
        return _curve_for(1.0, min_seek, max_seek, ncyl)
    return _curve_for(_joint(min_seek, avg_seek, max_seek, ncyl), min_seek, max_seek, ncyl)


register_kind("seek", ("hardware/hdd/seek",))


@functools.lru_cache(maxsize=256)
def _joint(min_seek: float, avg_seek: float, max_seek: float, ncyl: int) -> float:
    """The x0 at which the fitted curve's mean seek equals ``avg_seek`` (a bracketing root
    search; :func:`fit_seek_curve` has checked the bracket), kept in memory and in the disk
    cache beside the device tables: importing scipy.optimize for the search costs a process
    ~0.25 s, more than a warm sweep's worker spends on its points."""

    def gap(x0: float) -> float:
        return seek_mean(_curve_for(x0, min_seek, max_seek, ncyl)) - avg_seek

    def search() -> float:
        from scipy.optimize import brentq  # fit time only

        return float(brentq(gap, 1.0 / ncyl, 1.0, xtol=1e-14, rtol=1e-12))

    key = (min_seek, avg_seek, max_seek, ncyl)
    return load_or_measure("seek", key, search, float, float)


def shift_curve(curve: SeekCurve, delta: float) -> SeekCurve:
    return SeekCurve(curve.a + delta, curve.b, curve.c + delta, curve.e, curve.x0, curve.cylinders)
