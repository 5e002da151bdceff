"""Brent's method in plain Python (zsim.analytic.roots) against scipy's brentq."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from zsim.analytic import roots
from zsim.analytic.roots import brent_root


@settings(max_examples=300, deadline=None)
@given(
    root=st.floats(-1e3, 1e3),
    power=st.sampled_from([1, 3, 5]),
    left=st.floats(1e-3, 1e3),
    right=st.floats(1e-3, 1e3),
    xtol=st.sampled_from([1e-12, 1e-6, 1e-2]),
)
def test_finds_the_zero_scipy_finds_within_the_tolerance(root, power, left, right, xtol):
    def f(x: float) -> float:
        return (x - root) ** power + 0.1 * (x - root)

    a, b = root - left, root + right
    found = brent_root(f, a, b, xtol)
    assert a <= found <= b
    assert abs(found - root) <= xtol + 64 * math.ulp(max(abs(root), 1.0))
    assert abs(found - brentq(f, a, b, xtol=xtol)) <= 2 * xtol + 1e-9 * max(1.0, abs(root))


def test_takes_far_fewer_steps_than_bisection_on_a_smooth_function():
    calls = []

    def f(x: float) -> float:
        calls.append(x)
        return math.exp(x) - 2.0

    assert brent_root(f, 0.0, 5.0, 1e-12) == pytest.approx(math.log(2.0), abs=1e-12)
    assert len(calls) < 15  # bisection needs 43


def test_an_end_that_is_a_zero_is_returned_and_no_bracket_is_refused():
    assert brent_root(lambda x: x - 1.0, 1.0, 2.0, 1e-9) == 1.0
    assert brent_root(lambda x: x - 2.0, 1.0, 2.0, 1e-9) == 2.0
    with pytest.raises(ValueError, match="do not bracket"):
        brent_root(lambda x: x * x + 1.0, -1.0, 1.0, 1e-9)


def test_a_tolerance_that_is_not_positive_is_refused():
    with pytest.raises(ValueError, match="xtol must be positive"):
        brent_root(lambda x: x, -1.0, 1.0, 0.0)


def test_a_function_that_never_settles_raises_instead_of_returning_a_guess(monkeypatch):
    monkeypatch.setattr(roots, "MAX_ITERATIONS", 3)
    with pytest.raises(RuntimeError, match="no zero"):
        brent_root(lambda x: math.exp(x) - 2.0, 0.0, 5.0, 1e-12)
