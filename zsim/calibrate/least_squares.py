"""The least-squares core of zsim's fits: the solver, finite-difference Jacobians, the log
residual and the Jacobian's standard errors.

Used by :mod:`zsim.calibrate.fit` (a device profile from raw-device runs) and
:mod:`zsim.calibrate.host_fit` (a host's CPU-cost multipliers from pool runs). Both fit the
logarithms of positive parameters to log residuals ``log(predicted ÷ measured)`` (relative
errors, so a small and a large rate weigh the same) with :func:`scipy.optimize.least_squares`
(trust-region reflective, bounded), and both take standard errors from the Jacobian J at the
solution: ``cov = s² (JᵀJ)⁻¹`` with ``s² = RSS / (m − n)`` (m residuals, n fitted parameters;
the Gauss-Newton estimate, Bates & Watts, *Nonlinear Regression Analysis and Its
Applications*, 1988, §2.3). In log space √cov_jj is the relative standard error of parameter
*j* (the delta method: the parameter's own is ``value × √cov_jj``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import OptimizeResult, least_squares

Residuals = Callable[[np.ndarray], np.ndarray]
"""Residual vector as a function of the (log) parameter vector."""

SINGULAR_CONDITION = 1e12
"""JᵀJ with a condition number not below this is singular: the parameters trade off and
none gets a standard error."""


def log_residual(predicted: float, measured: float) -> float:
    """``log(predicted ÷ measured)``: the relative error both fits minimise."""
    return math.log(predicted / measured)


def solve(
    fun: Residuals,
    x0: np.ndarray,
    bounds: tuple[np.ndarray, np.ndarray],
    **options: Any,
) -> OptimizeResult:
    """:func:`scipy.optimize.least_squares` of ``fun`` from ``x0`` within ``bounds``,
    trust-region reflective (``method="trf"``); ``options`` go to the solver as given
    (``xtol``, ``ftol``, ``max_nfev``, ``jac``, ``args``, ``x_scale`` …). Convergence is the
    caller's to check (``status > 0``)."""
    return least_squares(fun, x0, bounds=bounds, method="trf", **options)


def central_jacobian(f: Residuals, x: np.ndarray, step: float) -> np.ndarray:
    """Central differences of ``f`` at ``x`` with an absolute ``step`` in every coordinate;
    an empty ``x`` gives an m × 0 matrix."""
    cols = []
    for j in range(len(x)):
        up, down = x.copy(), x.copy()
        up[j] += step
        down[j] -= step
        cols.append((f(up) - f(down)) / (2 * step))
    return np.column_stack(cols) if cols else np.zeros((len(f(x)), 0))


def forward_jacobian(f: Residuals, x: np.ndarray, step: float, high: np.ndarray) -> np.ndarray:
    """Forward differences of ``f`` at ``x`` with an absolute ``step`` in every coordinate,
    backwards where a step forward would cross the upper bound ``high``. (scipy's own
    ``diff_step`` is relative to the parameter, which is 0 at a log parameter of 1.0.)"""
    base = f(x)
    jac = np.empty((len(base), len(x)))
    for k in range(len(x)):
        h = step if x[k] + step <= high[k] else -step
        moved = x.copy()
        moved[k] += h
        jac[:, k] = (f(moved) - base) / h
    return jac


@dataclass(frozen=True)
class StandardErrors:
    """The Jacobian's verdict per column (parameter): ``live`` the columns some residual
    depends on (max |J_ik| above the caller's floor), ``cov`` the covariance of the live
    columns (in the order of ``live``), ``None`` when none is live or JᵀJ is singular."""

    live: tuple[int, ...]
    cov: np.ndarray | None

    @property
    def singular(self) -> bool:
        """Some column is live but JᵀJ of the live ones is singular."""
        return bool(self.live) and self.cov is None

    def stderr(self, k: int) -> float | None:
        """√cov_kk of column ``k`` (0 if round-off makes it negative), or ``None`` when it is
        not live or JᵀJ is singular."""
        if self.cov is None or k not in self.live:
            return None
        j = self.live.index(k)
        return math.sqrt(max(self.cov[j, j], 0.0))


def standard_errors(jac: np.ndarray, rss: float, dof: int, floor: float) -> StandardErrors:
    """``cov = s² (JᵀJ)⁻¹``, ``s² = rss ÷ dof``, over the columns of ``jac`` whose largest
    |entry| exceeds ``floor`` (a parameter no residual depends on at the solution, e.g. one
    bounded by another limit there, gets no error)."""
    jac = np.asarray(jac, dtype=float)
    live = tuple(k for k in range(jac.shape[1]) if np.max(np.abs(jac[:, k])) > floor)
    if not live:
        return StandardErrors(live, None)
    sub = jac[:, list(live)]
    info = sub.T @ sub
    if not np.linalg.cond(info) < SINGULAR_CONDITION:
        return StandardErrors(live, None)
    s2 = rss / dof
    return StandardErrors(live, np.linalg.inv(info) * s2)
