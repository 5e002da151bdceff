"""A zero of a function of one variable on a bracket, by Brent's method, in plain Python.

The analytic engine finds two fixed points per write scenario (the txg fill the throttle
settles at, the clients' bound stretched by the memory bus). ``scipy.optimize.brentq`` did
it, but importing ``scipy.optimize`` costs every process ~0.5 s (``python -X importtime``),
a sixth of a cold 24-disk sweep's worker start-up; this is the same algorithm without it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

#: the machine's relative precision
EPS = sys.float_info.epsilon
#: steps before giving up (on the engine's smooth functions it converges in about 10)
MAX_ITERATIONS = 200


def brent_root(f: Callable[[float], float], a: float, b: float, xtol: float) -> float:
    """A zero of ``f`` in [a, b], where f(a) and f(b) differ in sign, to within ``xtol``
    (in x; plus a few ulps of it).

    Brent's method: R. P. Brent, *Algorithms for Minimization without Derivatives*
    (Prentice-Hall, 1973), chapter 4, procedure ``zero`` — inverse quadratic interpolation
    or the secant step when they stay inside the bracket and shrink it fast enough, else
    bisection. Every iterate stays in the bracket; on a smooth function it converges
    superlinearly, and Brent bounds the worst case by about the square of bisection's count.
    ``ValueError`` when f(a) and f(b) have the same sign or ``xtol`` is not positive;
    ``RuntimeError`` when :data:`MAX_ITERATIONS` pass without convergence."""
    if not xtol > 0.0:
        raise ValueError(f"xtol must be positive, not {xtol}")
    fa, fb = f(a), f(b)
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    if (fa > 0.0) == (fb > 0.0):
        raise ValueError(f"f({a}) = {fa} and f({b}) = {fb} do not bracket a zero")
    c, fc = a, fa
    d = e = b - a
    for _ in range(MAX_ITERATIONS):
        if (fb > 0.0) == (fc > 0.0):
            c, fc = a, fa  # keep the zero between b and c
            d = e = b - a
        if abs(fc) < abs(fb):
            a, b, c = b, c, b  # b is the best estimate so far
            fa, fb, fc = fb, fc, fb
        tol = 2.0 * EPS * abs(b) + 0.5 * xtol
        m = 0.5 * (c - b)
        if abs(m) <= tol or fb == 0.0:
            return b
        if abs(e) < tol or abs(fa) <= abs(fb):
            d = e = m  # bisection: the last step did not shrink enough
        else:
            s = fb / fa
            if a == c:  # secant
                p = 2.0 * m * s
                q = 1.0 - s
            else:  # inverse quadratic interpolation
                q = fa / fc
                r = fb / fc
                p = s * (2.0 * m * q * (q - r) - (b - a) * (r - 1.0))
                q = (q - 1.0) * (r - 1.0) * (s - 1.0)
            if p > 0.0:
                q = -q
            else:
                p = -p
            last = e
            e = d
            if 2.0 * p < 3.0 * m * q - abs(tol * q) and p < abs(0.5 * last * q):
                d = p / q
            else:
                d = e = m
        a, fa = b, fb
        b += d if abs(d) > tol else (tol if m > 0.0 else -tol)
        fb = f(b)
    raise RuntimeError(f"no zero to within {xtol} after {MAX_ITERATIONS} steps (last {b})")
