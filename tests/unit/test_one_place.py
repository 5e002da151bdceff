"""The shared pieces other modules build on (issue 16, "one mechanism, one place"): the exact
binary-size spelling, the md redundancy table, the "K× vdev + spares" text and the
least-squares core."""

from __future__ import annotations

import numpy as np
import pytest

from zsim.calibrate.least_squares import (
    central_jacobian,
    forward_jacobian,
    log_residual,
    solve,
    standard_errors,
)
from zsim.layout.grammar import parse_layout, to_compact, vdev_group_text
from zsim.layout.tree import MdArray, md_redundancy
from zsim.units import binary_multiple, format_binary_multiple, parse_size


@pytest.mark.parametrize(
    ("nbytes", "text"),
    [(512 * 1024, "512K"), (1 << 20, "1M"), (1 << 30, "1024M"), (1536, "1536"), (0, "0M")],
)
def test_format_binary_multiple_reads_back(nbytes, text):
    assert format_binary_multiple(nbytes) == text
    assert parse_size(text) == nbytes


def test_binary_multiple_largest_unit():
    assert binary_multiple(3 << 30) == (3072, "M")
    assert binary_multiple(3 << 30, largest="E") == (3, "G")
    assert binary_multiple(12288, largest="K") == (12, "K")
    assert binary_multiple(1000) == (1000, "")


@pytest.mark.parametrize(
    ("level", "width", "shape"),
    [
        (0, 4, (1, 0, 4)),
        (1, 3, (3, 2, 1)),
        (10, 6, (2, 1, 3)),
        (5, 6, (6, 1, 1)),
        (6, 8, (8, 2, 1)),
    ],
)
def test_md_redundancy(level, width, shape):
    assert tuple(md_redundancy(level, width)) == shape
    array = MdArray(level, tuple(f"d{i}" for i in range(width)))
    assert array.redundancy == shape and array.fault_tolerance == shape[1]


def test_vdev_group_text_round_trips():
    assert vdev_group_text(1, "mirror 2") == "mirror 2"
    assert vdev_group_text(3, "raidz2 7", 3) == "3x raidz2 7 spare 3"
    for text in ("3x raidz2 7 spare 3", "11x mirror 2 spare 1", "raidz1 5"):
        assert to_compact(parse_layout(text)) == text


def test_least_squares_core_recovers_a_line_and_its_errors():
    x = np.linspace(0.0, 1.0, 8)
    noise = np.array([0.01, -0.02, 0.015, 0.0, -0.01, 0.02, -0.015, 0.005])
    y = 2.0 + 3.0 * x + noise

    def residuals(theta):
        return theta[0] + theta[1] * x - y

    bounds = (np.array([-10.0, -10.0]), np.array([10.0, 10.0]))
    res = solve(residuals, np.zeros(2), bounds, xtol=1e-12, ftol=1e-12)
    assert res.status > 0
    design = np.column_stack([np.ones_like(x), x])
    exact, rss, *_ = np.linalg.lstsq(design, y, rcond=None)
    assert res.x == pytest.approx(exact, abs=1e-8)
    jac = central_jacobian(residuals, res.x, 0.01)
    assert jac == pytest.approx(design)
    assert forward_jacobian(residuals, res.x, 0.01, bounds[1]) == pytest.approx(design)
    errors = standard_errors(jac, float(res.fun @ res.fun), len(x) - 2, 1e-4)
    cov = np.linalg.inv(design.T @ design) * float(rss[0]) / (len(x) - 2)
    assert errors.live == (0, 1) and not errors.singular
    assert [errors.stderr(k) for k in (0, 1)] == pytest.approx(np.sqrt(np.diag(cov)))
    assert log_residual(2.0, 1.0) == pytest.approx(np.log(2.0))


def test_standard_errors_dead_and_singular_columns():
    dead = standard_errors(np.array([[1.0, 0.0], [2.0, 0.0], [0.5, 0.0]]), 1.0, 1, 1e-4)
    assert dead.live == (0,) and dead.stderr(1) is None and dead.stderr(0) is not None
    twins = standard_errors(np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]), 1.0, 1, 1e-4)
    assert twins.singular and twins.stderr(0) is None
    assert standard_errors(np.zeros((3, 1)), 1.0, 2, 1e-4).live == ()
