"""The device fit's shared machinery: its result types, the bounded multi-start least-squares
solve of a :class:`FitProblem` with Jacobian and bootstrap standard errors, and the profile
table both device kinds' predictors build. The method is described in
:mod:`zsim.calibrate.fit`; the HDD and flash problems are :mod:`zsim.calibrate.fit_hdd` and
:mod:`zsim.calibrate.fit_flash`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zsim.calibrate.forward import finite
from zsim.calibrate.least_squares import (
    central_jacobian,
    log_residual,
    solve,
    standard_errors,
)
from zsim.calibrate.measurement import Measurement
from zsim.errors import ZsimError
from zsim.hardware.catalog import Profile

BOUNDS = {
    "s": (1e-7, 1.0),
    "B/s": (1e5, 1e11),
    "IOPS": (1.0, 1e8),
    "rev/min": (3000.0, 20000.0),
}
"""Physically possible range of a parameter by its unit: a latency or seek from 0.1 µs to
1 s, a rate from 100 kB/s to 100 GB/s, IOPS from 1 to 10⁸, a spindle from 3000 to 20000
rpm (bounds keep the optimizer out of regions where a parameter stops mattering)."""

MIN_DOF = 1
"""Measurements beyond the number of fitted parameters that a fit needs to estimate its
residual variance (and so the standard errors)."""

JACOBIAN_STEP = 0.01
"""Central-difference step of the Jacobian in log-parameter space (1 %: the predictors are
smooth between the kinks of their min()/max() terms)."""

LIVE_FLOOR = 1e-4
"""A parameter some measurement's log residual moves by more than this per unit of log
parameter is constrained (at the start: fitted; at the solution: given a standard error)."""


@dataclass(frozen=True)
class Parameter:
    """One fitted (or kept) parameter: ``value`` in SI units (``unit``), ``stderr`` its
    standard error (None when it was not fitted), ``note`` how it was obtained."""

    name: str
    value: float
    unit: str
    stderr: float | None
    fitted: bool
    note: str = ""

    @property
    def rel_stderr(self) -> float | None:
        return None if self.stderr is None or self.value == 0 else self.stderr / self.value


@dataclass(frozen=True)
class Residual:
    """One measurement against the fitted model: IOPS measured and predicted, and whether
    the fit used it (``why`` says why not)."""

    source: str
    name: str
    measured_iops: float
    predicted_iops: float | None
    used: bool
    why: str = ""

    @property
    def error(self) -> float | None:
        """predicted / measured − 1."""
        if self.predicted_iops is None or self.measured_iops <= 0:
            return None
        return self.predicted_iops / self.measured_iops - 1.0


@dataclass(frozen=True)
class DeviceFit:
    """A fitted device: the profile, its parameters with standard errors, every
    measurement's residual, and how the optimizer ended."""

    name: str
    kind: str
    profile: Profile
    parameters: tuple[Parameter, ...]
    residuals: tuple[Residual, ...]
    device_bytes: int
    evaluations: int
    status: str
    notes: tuple[str, ...] = ()
    sources: tuple[str, ...] = field(default_factory=tuple)

    @property
    def rms_error(self) -> float:
        """Root-mean-square relative error of the measurements the fit used."""
        errs = [r.error for r in self.residuals if r.used and r.error is not None]
        return math.sqrt(sum(e * e for e in errs) / len(errs)) if errs else float("nan")

    def parameter(self, name: str) -> Parameter:
        for p in self.parameters:
            if p.name == name:
                return p
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "device_bytes": self.device_bytes,
            "status": self.status,
            "evaluations": self.evaluations,
            "rms_error": self.rms_error,
            "parameters": [
                {
                    "name": p.name,
                    "value": p.value,
                    "unit": p.unit,
                    "stderr": p.stderr,
                    "fitted": p.fitted,
                    "note": p.note,
                }
                for p in self.parameters
            ],
            "residuals": [
                {
                    "source": r.source,
                    "name": r.name,
                    "measured_iops": r.measured_iops,
                    "predicted_iops": r.predicted_iops,
                    "error": r.error,
                    "used": r.used,
                    "why": r.why,
                }
                for r in self.residuals
            ],
            "notes": list(self.notes),
            "profile": self.profile.to_dict(),
        }


def measured_iops(m: Measurement) -> float:
    """IOPS of the run's main direction."""
    return m.direction().iops


def as_profile_table(data: dict[str, Any]) -> dict[str, Any]:
    """Plain SI numbers to the catalog's accepted forms (numbers parse as base units)."""
    out: dict[str, Any] = {}
    for k, v in data.items():
        if isinstance(v, float) and k in ("capacity_bytes", "rpm", "read_iops", "write_iops"):
            v = round(v)
        out[k] = v
    return out


# ---------------------------------------------------------------- the optimizer


@dataclass
class FitProblem:
    """Parameters (name → initial value), which of them vary, and a predictor that maps a
    parameter dict to predicted IOPS per measurement (None where it has no closed form)."""

    initial: dict[str, float]
    units: dict[str, str]
    predict: Callable[[dict[str, float]], list[float | None]]
    measurements: list[Measurement]
    notes: dict[str, str] = field(default_factory=dict)
    smooth: Callable[[dict[str, float]], list[float | None]] | None = None

    def bounds(self, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Log-space bounds: the physically possible range of each parameter's unit."""
        low = np.log([BOUNDS[self.units[n]][0] for n in names])
        high = np.log([BOUNDS[self.units[n]][1] for n in names])
        return low, high


def solve_problem(
    problem: FitProblem, quick: bool = False
) -> tuple[dict[str, float], dict[str, float | None], int, str]:
    """Least squares from every start (one, the given point, when ``quick``); standard
    errors from the Jacobian and, unless ``quick``, the residual bootstrap."""
    names = list(problem.initial)
    base = problem.predict(problem.initial)
    rows = [i for i, p in enumerate(base) if finite(p)]
    meas = np.array([measured_iops(problem.measurements[i]) for i in rows])
    x0 = np.log([problem.initial[n] for n in names])

    def residuals(x: np.ndarray, predictor: Any = problem.predict) -> np.ndarray:
        values = dict(zip(names, np.exp(x), strict=True))
        try:
            pred = predictor(values)
        except ZsimError:
            return np.full(len(rows), 10.0)
        out = np.empty(len(rows))
        for j, i in enumerate(rows):
            p = pred[i]
            out[j] = log_residual(p, meas[j]) if finite(p) else 10.0
        return out

    # which parameters the measurements constrain: a column of the Jacobian at the start
    jac0 = central_jacobian(residuals, x0, JACOBIAN_STEP)
    active = [j for j in range(len(names)) if np.max(np.abs(jac0[:, j])) > LIVE_FLOOR]
    for j, n in enumerate(names):
        if j not in active:
            problem.notes.setdefault(n, "no measurement constrains it: initial estimate kept")
    if len(rows) < len(active) + MIN_DOF:
        raise ZsimError(
            f"{len(rows)} usable measurements cannot fit {len(active)} parameters "
            f"({', '.join(names[j] for j in active)}); run the whole plan "
            f"('zsim calibrate plan' writes every job the fit needs)"
        )

    def sub(xa: np.ndarray, predictor: Any = problem.predict) -> np.ndarray:
        x = x0.copy()
        x[active] = xa
        return residuals(x, predictor)

    low, high = problem.bounds([names[j] for j in active])
    starts = _starts(x0[active], low, high)[: 1 if quick else None]
    if problem.smooth is not None and not quick:
        # global stage on the jump-free predictor, then polish on the exact one from there
        best = None
        for start in starts:
            trial = solve(sub, start, (low, high), args=(problem.smooth,), xtol=1e-10, ftol=1e-10)
            if best is None or trial.cost < best.cost:
                best = trial
        starts = [best.x, *starts] if best is not None else starts
    fit = None
    for start in starts:
        trial = solve(sub, start, (low, high), x_scale=1.0, xtol=1e-10, ftol=1e-10)
        if trial.status > 0 and (fit is None or trial.cost < fit.cost):
            fit = trial
        elif fit is None:
            failed = trial
    if fit is None:
        fit = failed
    if fit.status <= 0:
        raise ZsimError(
            f"the fit did not converge ({fit.message}); check the measurements for failed "
            f"or mislabelled runs, or fit a smaller set"
        )
    x = x0.copy()
    x[active] = fit.x
    values = {n: float(v) for n, v in zip(names, np.exp(x), strict=True)}
    jac = central_jacobian(sub, fit.x, JACOBIAN_STEP)
    dof = len(rows) - len(active)
    stderr: dict[str, float | None] = dict.fromkeys(names)
    # parameters no measurement depends on at the solution (every run that uses them is
    # bounded by another limit there, e.g. a latency under a rate cap) get no error
    errors = standard_errors(jac, float(fit.fun @ fit.fun), dof, LIVE_FLOOR)
    spread = None
    if errors.cov is not None and not quick:
        spread = _bootstrap(sub, fit.x, fit.fun, meas, (low, high), dof)
    for k, j in enumerate(active):
        name = names[j]
        if k not in errors.live:
            problem.notes.setdefault(
                name, "no measurement depends on it at the fit (bounded by another limit)"
            )
            continue
        rel = errors.stderr(k)
        if rel is None:
            problem.notes[name] = "not identifiable from these measurements (singular fit)"
            continue
        if spread is not None:
            rel = max(rel, float(spread[k]))
        error = float(values[name] * rel)
        stderr[name] = error
        if error > values[name]:
            problem.notes.setdefault(name, "standard error above the value: consistent with 0 here")
    return values, stderr, int(fit.nfev), str(fit.message)


STARTS = 12
"""Starting points of the least-squares search: the data's own estimate and seeded
log-uniform draws within a factor 2 of it. The predictors' min()/max() kinks give the
objective local minima, where one start can stop short of the best fit."""


def _starts(x0: np.ndarray, low: np.ndarray, high: np.ndarray) -> list[np.ndarray]:
    rng = np.random.default_rng(2024)
    starts = [x0] + [
        x0 + rng.uniform(-math.log(2), math.log(2), len(x0)) for _ in range(STARTS - 1)
    ]
    return [np.clip(x, low + 1e-9, high - 1e-9) for x in starts]


BOOTSTRAP_FITS = 60
"""Refits of the residual bootstrap (fixed seed, so the same data give the same errors)."""


def _bootstrap(
    sub: Callable[[np.ndarray], np.ndarray],
    x_hat: np.ndarray,
    r_hat: np.ndarray,
    meas: np.ndarray,
    bounds: tuple[np.ndarray, np.ndarray],
    dof: int,
) -> np.ndarray | None:
    """Standard deviation of each log-parameter over refits to resampled residuals.

    The predictors have kinks (a ceiling takes over from a latency term), where the
    Jacobian's standard errors are too small: a parameter informed by a few points near its
    kink moves more than the linearisation says. Residual bootstrap (Efron & Tibshirani,
    *An Introduction to the Bootstrap*, §9.5): measured values are rebuilt as the fitted
    predictions times resampled residuals (scaled by √(m/(m−n)) for the degrees of freedom
    the fit used), refitted from the solution, and the spread of the refits is the error.
    The larger of this and the Jacobian's error is reported.
    """
    m = len(r_hat)
    if m < 3 or dof < 1:
        return None
    rng = np.random.default_rng(12345)
    scaled = (r_hat - r_hat.mean()) * math.sqrt(m / dof)
    original = meas.copy()
    draws = []
    try:
        for _ in range(BOOTSTRAP_FITS):
            # r = log(pred/meas) → meas* = pred / exp(r*) = meas · exp(r̂ − r*)
            meas[:] = original * np.exp(r_hat - rng.choice(scaled, size=m))
            refit = solve(sub, x_hat, bounds, xtol=1e-8, ftol=1e-8)
            if refit.status > 0:
                draws.append(refit.x)
    finally:
        meas[:] = original
    if len(draws) < BOOTSTRAP_FITS // 2:
        return None
    return np.std(np.array(draws), axis=0, ddof=1)
