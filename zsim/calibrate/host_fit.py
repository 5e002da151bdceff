"""Fit a host's ZFS CPU overheads to pool-level runs: the per-I/O and per-byte cost multipliers.

zsim's CPU costs (:mod:`zsim.machine.costs`) are sourced single-core figures at a reference
clock. A real host's kernel, CPU generation or memory can make every per-call, per-record and
per-I/O cost, or every per-byte cost, larger or smaller by a common factor; the scenario keys
``hardware.cpu_io_cost_scale`` and ``hardware.cpu_byte_cost_scale`` carry those factors.
:func:`fit_host_costs` finds them from measured pool-level runs (dd or fio on the pool).

Method:

* Residual of case *i*: ``log(predicted bytes/s ÷ measured bytes/s)`` (a relative error, so a
  200 MiB/s and a 6 GiB/s run weigh the same). Predictions from :func:`zsim.simulate.simulate`
  with the *same* seed for every evaluation (common random numbers), so the objective is a
  deterministic function of the multipliers, as long as no run stops at the wall-time cap
  (a stop at the cap in simulated seconds, ``max_sim_seconds``, is deterministic too; a run
  stopped by either cap is flagged as ``capped``).
* Parameters: the logarithms of the multipliers, started at 0 (multiplier 1.0, the sourced
  costs) and bounded to ``log 0.05 … log 20``; solved with
  :func:`scipy.optimize.least_squares` (trust-region reflective, ``method="trf"``) and a
  forward-difference Jacobian with an absolute step of :data:`DIFF_STEP` in log space: the
  DES jitters by a few tenths of a percent between nearby inputs, which a finer step would
  read as slope.
* Identifiability: before the fit each multiplier is doubled alone; if no case's
  prediction moves by more than :data:`SENSITIVITY_FLOOR` per unit of log multiplier (the
  Jacobian column at the start, estimated over that wide step), no case depends on it (no
  run is bound by that CPU work) and it is reported as not identifiable and kept at 1.0.
* Cases no fitted multiplier moves (by the same probe) are held at their residual at 1.0
  inside the objective: their true slope is ~0, but the DES's jitter between nearby inputs
  (a few tenths of a percent) times a large misfit would otherwise give the sum of squares
  a spurious slope as large as the real one. They still count in the RSS and in m; should
  the solution move one of them by more than the probe's floor, it is released and the fit
  redone from there (``CaseResidual.informative`` says which were held).
* Standard errors from the Jacobian J at the solution, ``cov = s² (JᵀJ)⁻¹`` with
  ``s² = RSS / (m − n)`` (m cases, n fitted multipliers; the Gauss-Newton estimate, Bates &
  Watts, *Nonlinear Regression Analysis and Its Applications*, 1988, §2.3; the solver and
  the standard errors are :mod:`zsim.calibrate.least_squares`, shared with
  :mod:`zsim.calibrate.fit`). In log space √cov_jj is the relative standard error, so the
  multiplier's is ``value × √cov_jj`` (delta method). s² includes every case's misfit,
  also of cases no multiplier can move, so a case the model gets wrong widens the errors.
* A fit that did not converge (``status ≤ 0``: the evaluation budget ran out) is refused
  with :class:`ZsimError`, as is a case set with fewer than ``parameters + 1`` cases.

:func:`leave_one_out` refits without each case in turn (started at the fitted values) and
predicts the case left out: how well the multipliers carry to a run they were not fitted to.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy.optimize import OptimizeResult

from zsim.calibrate.least_squares import forward_jacobian, log_residual, solve, standard_errors
from zsim.errors import ZsimError
from zsim.scenario import Scenario
from zsim.simulate import simulate

HOST_PARAMETERS = ("cpu_io_cost_scale", "cpu_byte_cost_scale")
"""The ``[hardware]`` multipliers this module can fit."""

BOUNDS = (0.05, 20.0)
"""Range of every multiplier: 1/20 … 20 times the sourced costs."""

DIFF_STEP = 0.05
"""Finite-difference step of the Jacobian, in log multiplier (≈ 5 %)."""

MAX_NFEV = 30
"""Evaluations of the objective the solver may spend (each simulates every case once),
not counting those of its finite-difference Jacobians (one per fitted parameter each)."""

XTOL = 1e-3
"""``xtol`` of the solver: it stops when a step changes the log multipliers by less than
this, relatively (0.1 %, finer than the DES's own precision of ~1 %)."""

FTOL = 1e-6
"""``ftol`` of the solver (relative change of the sum of squares). Small: the sum includes
the misfit of cases no parameter moves, which a looser test would let end the fit early."""

PROBE_FACTOR = 2.0
"""The identifiability probe multiplies one parameter by this factor."""

SENSITIVITY_FLOOR = 0.1
"""A parameter must move some case's log prediction by more than this per unit of log
multiplier, or it is not identifiable: doubling it then changes no prediction by more than
≈ 7 %. Below that the change is not told apart from the DES's own spread: two runs of a
disk-bound case with different CPU costs differ by up to 2-4 % (each stops at a 2 % 95 %
half-width, and common random numbers do not survive a change in event order)."""

TARGET_CI = 0.02
"""The DES's stop rule (95 % half-width ÷ mean); a run stopped at a cap is ``capped``."""

DIRECTIONS = ("read", "write")


@dataclass(frozen=True)
class PoolCase:
    """One measured pool-level run: the scenario that describes it, the direction whose
    rate was measured and that rate, bytes/s (e.g. dd's MiB/s × 2²⁰)."""

    name: str
    scenario: Scenario
    direction: str
    measured_bytes_per_s: float
    note: str = ""

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise ZsimError(
                f"case {self.name!r}: direction must be 'read' or 'write', not {self.direction!r}"
            )
        rate = self.measured_bytes_per_s
        if not isinstance(rate, int | float) or not math.isfinite(rate) or rate <= 0:
            raise ZsimError(
                f"case {self.name!r}: measured_bytes_per_s must be a rate above 0, not {rate!r}"
            )


@dataclass(frozen=True)
class FitParameter:
    """One multiplier: ``value`` (1.0 when not fitted), ``stderr`` its standard error in the
    same unit (``None`` when not fitted or not determined), ``sensitivity`` the probe's
    largest |Δ log prediction| per unit of log multiplier over the cases."""

    name: str
    value: float
    stderr: float | None
    fitted: bool
    note: str = ""
    sensitivity: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "stderr": self.stderr,
            "fitted": self.fitted,
            "note": self.note,
            "sensitivity": self.sensitivity,
        }


@dataclass(frozen=True)
class CaseResidual:
    """One case at the fitted multipliers and at 1.0 (the start): predicted bytes/s, the
    relative error (predicted ÷ measured − 1) and the resource the engine says limits it.
    ``capped``: the run stopped at a time cap, not at the 95 % CI target. ``informative``:
    some fitted parameter moves it; if not, the fit held it at its residual at 1.0."""

    name: str
    direction: str
    measured: float
    predicted: float
    predicted_start: float
    limit: str
    limit_start: str
    capped: bool = False
    informative: bool = True

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1.0

    @property
    def error_start(self) -> float:
        return self.predicted_start / self.measured - 1.0

    @property
    def residual(self) -> float:
        """The fitted residual, log(predicted ÷ measured)."""
        return math.log(self.predicted / self.measured)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "direction": self.direction,
            "measured_bytes_per_s": self.measured,
            "predicted_bytes_per_s": self.predicted,
            "predicted_start_bytes_per_s": self.predicted_start,
            "error": self.error,
            "error_start": self.error_start,
            "residual": self.residual,
            "limit": self.limit,
            "limit_start": self.limit_start,
            "capped": self.capped,
            "informative": self.informative,
        }


@dataclass(frozen=True)
class HostFit:
    """The result of :func:`fit_host_costs`: every parameter, every case's residual, the
    number of objective evaluations (each simulates every case once), the solver's status
    and message (``status`` 1-4: converged, :func:`scipy.optimize.least_squares`'s codes;
    ``None`` when nothing was identifiable and no solve was run)."""

    parameters: tuple[FitParameter, ...]
    residuals: tuple[CaseResidual, ...]
    evaluations: int
    status: int | None
    message: str
    engine: str
    seed: int
    max_wall_seconds: float
    notes: tuple[str, ...] = ()
    max_sim_seconds: float = 600.0

    @property
    def values(self) -> dict[str, float]:
        """Every parameter's value, fitted or kept at 1.0, by scenario key."""
        return {p.name: p.value for p in self.parameters}

    @property
    def fitted_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters if p.fitted)

    @property
    def rss(self) -> float:
        """Sum of the squared log residuals at the fit."""
        return sum(r.residual**2 for r in self.residuals)

    def parameter(self, name: str) -> FitParameter:
        for p in self.parameters:
            if p.name == name:
                return p
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "parameters": [p.to_dict() for p in self.parameters],
            "residuals": [r.to_dict() for r in self.residuals],
            "evaluations": self.evaluations,
            "status": self.status,
            "message": self.message,
            "rss": self.rss,
            "engine": self.engine,
            "seed": self.seed,
            "max_wall_seconds": self.max_wall_seconds,
            "max_sim_seconds": self.max_sim_seconds,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class LooPrediction:
    """A case predicted by multipliers refitted without it (:func:`leave_one_out`)."""

    name: str
    measured: float
    predicted: float
    limit: str
    values: dict[str, float]

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "measured_bytes_per_s": self.measured,
            "predicted_bytes_per_s": self.predicted,
            "error": self.error,
            "limit": self.limit,
            "values": dict(self.values),
        }


# ---------------------------------------------------------------- predictions


def with_multipliers(scenario: Scenario, values: dict[str, float]) -> Scenario:
    """The scenario with its ``[hardware]`` multipliers set to ``values``."""
    unknown = set(values) - set(HOST_PARAMETERS)
    if unknown:
        raise ZsimError(f"not a host multiplier: {', '.join(sorted(unknown))}")
    changes: dict[str, Any] = dict(values)
    return replace(scenario, hardware=replace(scenario.hardware, **changes))


@dataclass(frozen=True)
class _Prediction:
    rate: float  # bytes/s of the case's direction
    limit: str
    capped: bool


class _Objective:
    """The cases' predictions as a function of the multipliers, memoised per case and value.

    ``held`` maps a case's name to a constant log residual used in place of simulating it:
    cases no fitted parameter moves (see :func:`fit_host_costs`)."""

    def __init__(
        self,
        cases: Sequence[PoolCase],
        engine: str,
        seed: int,
        max_wall_seconds: float,
        held: dict[str, float] | None = None,
        max_sim_seconds: float = 600.0,
    ) -> None:
        self.cases = list(cases)
        self.engine, self.seed, self.max_wall = engine, seed, max_wall_seconds
        self.max_sim = max_sim_seconds
        self.held = dict(held or {})
        self.memo: dict[tuple[tuple[tuple[str, float], ...], str], _Prediction] = {}

    @property
    def evaluations(self) -> int:
        """Distinct multiplier values simulated (each for every case not held)."""
        return len({key for key, _ in self.memo})

    def predict(self, values: dict[str, float]) -> list[_Prediction]:
        """Every case (held ones too) at ``values``; the other multipliers at 1.0."""
        return [self.predict_one(values, case) for case in self.cases]

    def predict_one(self, values: dict[str, float], case: PoolCase) -> _Prediction:
        """One case at ``values`` (simulated even when held), memoised."""
        full = dict.fromkeys(HOST_PARAMETERS, 1.0) | values
        key = (tuple(sorted(full.items())), case.name)
        if key not in self.memo:
            self.memo[key] = self._simulate(case, full)
        return self.memo[key]

    def _simulate(self, case: PoolCase, values: dict[str, float]) -> _Prediction:
        sc = with_multipliers(case.scenario, values)
        result = simulate(
            sc,
            engine=self.engine,
            seed=self.seed,
            target_ci=TARGET_CI,
            max_sim_seconds=self.max_sim,
            max_wall_seconds=self.max_wall,
        )
        rate = getattr(result, case.direction).bytes_per_s
        if not rate > 0:
            raise ZsimError(f"case {case.name!r}: the scenario predicts no {case.direction}s")
        capped = self.engine == "des" and (result.ci_rel is None or result.ci_rel > TARGET_CI)
        return _Prediction(rate, result.limit, capped)

    def residual(self, values: dict[str, float], case: PoolCase) -> float:
        """log(predicted ÷ measured) of one case at ``values``, or its held constant."""
        if case.name in self.held:
            return self.held[case.name]
        return log_residual(self.predict_one(values, case).rate, case.measured_bytes_per_s)

    def residuals(self, names: Sequence[str], theta: np.ndarray) -> np.ndarray:
        """The residual of every case with ``names`` at exp(``theta``)."""
        values = {n: float(math.exp(t)) for n, t in zip(names, theta, strict=True)}
        return np.array([self.residual(values, case) for case in self.cases])


# ---------------------------------------------------------------- the fit


def _check_request(cases: Sequence[PoolCase], parameters: Sequence[str]) -> None:
    unknown = [p for p in parameters if p not in HOST_PARAMETERS]
    if unknown or not parameters or len(set(parameters)) != len(parameters):
        raise ZsimError(
            f"parameters must be distinct names from {', '.join(HOST_PARAMETERS)}, "
            f"not {list(parameters)}"
        )
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        raise ZsimError(f"case names must be unique: {names}")
    if len(cases) < len(parameters) + 1:
        raise ZsimError(
            f"{len(cases)} case(s) cannot fit {len(parameters)} parameter(s) with a standard "
            f"error: give at least {len(parameters) + 1}, or fit fewer parameters"
        )


def _sensitivities(objective: _Objective, parameters: Sequence[str]) -> dict[str, np.ndarray]:
    """Per parameter, every case's |Δ log prediction| ÷ Δ log multiplier when that parameter
    alone is multiplied by :data:`PROBE_FACTOR` from 1.0."""
    start = objective.residuals((), np.zeros(0))
    step = math.log(PROBE_FACTOR)
    return {
        name: np.abs(objective.residuals((name,), np.array([step])) - start) / step
        for name in parameters
    }


def _uninformative(
    objective: _Objective, sens: dict[str, np.ndarray], names: Sequence[str]
) -> dict[str, float]:
    """The cases no fitted parameter moves, with their residual at 1.0. The fit holds them at
    that value: they carry no information on the parameters, and re-simulating them would
    only add the DES's jitter (a few tenths of a percent) to the objective's slope."""
    return {
        case.name: objective.residual({}, case)
        for i, case in enumerate(objective.cases)
        if max(sens[n][i] for n in names) <= SENSITIVITY_FLOOR
    }


def _moved(objective: _Objective, names: Sequence[str], theta: np.ndarray) -> list[str]:
    """Held cases whose prediction at the solution differs from the held value by more than
    the probe's floor: the solution went where they depend on the parameters after all."""
    values = {n: float(math.exp(t)) for n, t in zip(names, theta, strict=True)}
    floor = SENSITIVITY_FLOOR * math.log(PROBE_FACTOR)
    return [
        case.name
        for case in objective.cases
        if case.name in objective.held
        and abs(
            log_residual(objective.predict_one(values, case).rate, case.measured_bytes_per_s)
            - objective.held[case.name]
        )
        > floor
    ]


def _jacobian(
    objective: _Objective, names: Sequence[str], theta: np.ndarray, high: np.ndarray
) -> np.ndarray:
    """Forward differences of the residuals with an absolute step of :data:`DIFF_STEP` in
    each log multiplier (backwards at the upper bound). scipy's ``diff_step`` is relative
    to the parameter, which is 0 at the start (multiplier 1.0): it would step by ~1e-8."""
    return forward_jacobian(lambda t: objective.residuals(names, t), theta, DIFF_STEP, high)


def _solve(objective: _Objective, names: Sequence[str], x0: np.ndarray) -> OptimizeResult:
    """Least squares over the log multipliers ``names`` from ``x0``; refuses non-convergence."""
    low, high = (np.full(len(names), math.log(b)) for b in BOUNDS)
    res = solve(
        lambda theta: objective.residuals(names, theta),
        np.clip(x0, low, high),
        (low, high),
        jac=lambda theta: _jacobian(objective, names, theta, high),
        ftol=FTOL,
        xtol=XTOL,
        max_nfev=MAX_NFEV,
    )
    if res.status <= 0:
        raise ZsimError(
            f"the host-cost fit did not converge ({res.message}, {res.nfev} evaluations); "
            f"check the cases for mislabelled runs, or fit fewer parameters"
        )
    return res


def _solve_releasing(objective: _Objective, names: Sequence[str], x0: np.ndarray) -> OptimizeResult:
    """:func:`_solve`; a held case the solution moves is released and the fit redone from
    there, until no held case moves."""
    while True:
        res = _solve(objective, names, x0)
        moved = _moved(objective, names, res.x)
        if not moved:
            return res
        for name in moved:
            del objective.held[name]
        x0 = res.x


def _log_stderrs(res: OptimizeResult, m: int) -> list[tuple[float | None, str]]:
    """Per fitted parameter: √(s² (JᵀJ)⁻¹)_jj of its log multiplier, or ``None`` and why."""
    n = np.shape(res.jac)[1]
    # res.cost is RSS / 2
    errors = standard_errors(res.jac, 2.0 * float(res.cost), m - n, SENSITIVITY_FLOOR)
    out: list[tuple[float | None, str]] = [
        (None, "no case depends on it at the solution (Jacobian column ~0): no standard error")
    ] * n
    for k in errors.live:
        out[k] = (errors.stderr(k), "")
        if errors.singular:
            out[k] = (None, "JᵀJ is singular at the solution: the parameters trade off")
    return out


def _parameter(
    name: str, theta: float, se_log: float | None, note: str, sens: float
) -> FitParameter:
    value = math.exp(theta)
    notes = [note] if note else []
    if any(abs(theta - math.log(b)) < 1e-6 for b in BOUNDS):
        notes.append(f"at the bound {value:g}: the standard error is not meaningful")
    stderr = None if se_log is None else value * se_log
    return FitParameter(name, value, stderr, True, "; ".join(notes), sens)


def _unfitted(name: str, sens: float) -> FitParameter:
    change = math.expm1(sens * math.log(PROBE_FACTOR))
    note = (
        f"not identifiable: doubling it moves no case's prediction by more than "
        f"{change:.1%} (the floor is {SENSITIVITY_FLOOR:g} per unit log multiplier): no case's "
        f"rate depends on that CPU work, so it is kept at 1.0"
    )
    return FitParameter(name, 1.0, None, False, note, sens)


def _residual_rows(objective: _Objective, values: dict[str, float]) -> tuple[CaseResidual, ...]:
    start = objective.predict({})
    fitted = objective.predict(values)
    return tuple(
        CaseResidual(
            name=c.name,
            direction=c.direction,
            measured=c.measured_bytes_per_s,
            predicted=f.rate,
            predicted_start=s.rate,
            limit=f.limit,
            limit_start=s.limit,
            capped=f.capped,
            informative=c.name not in objective.held,
        )
        for c, s, f in zip(objective.cases, start, fitted, strict=True)
    )


def _capped_note(objective: _Objective) -> tuple[str, ...]:
    capped = sum(p.capped for p in objective.memo.values())
    if not capped:
        return ()
    return (
        f"{capped} simulation(s) stopped at a time cap before the 95 % CI reached "
        f"{TARGET_CI:.0%}: if at the wall-time cap, those predictions depend on the machine's "
        f"speed and the objective is not exactly deterministic; raise max_wall_seconds (or set "
        f"max_sim_seconds, a cap that is the same on every machine)",
    )


def fit_host_costs(
    cases: Sequence[PoolCase],
    *,
    engine: str = "des",
    seed: int = 1,
    max_wall_seconds: float = 5.0,
    parameters: Sequence[str] = HOST_PARAMETERS,
    max_sim_seconds: float = 600.0,
) -> HostFit:
    """Fit the ``[hardware]`` CPU-cost multipliers ``parameters`` to measured pool runs.

    Every case is simulated with ``engine`` and ``seed`` (the same for every evaluation) and
    at most ``max_sim_seconds`` simulated and ``max_wall_seconds`` wall seconds per run (a
    run stopped by the wall-time cap depends on the machine's speed; with a generous wall cap
    and a simulated one the fit is the same everywhere). See the module docstring for the
    method. Raises
    :class:`ZsimError` for fewer than ``len(parameters) + 1`` cases or a fit that did not
    converge.
    """
    cases = list(cases)
    _check_request(cases, parameters)
    objective = _Objective(cases, engine, seed, max_wall_seconds, None, max_sim_seconds)
    probes = _sensitivities(objective, parameters)
    sens = {p: float(np.max(probes[p])) for p in parameters}
    names = [p for p in parameters if sens[p] > SENSITIVITY_FLOOR]
    if not names:
        return HostFit(
            parameters=tuple(_unfitted(p, sens[p]) for p in parameters),
            residuals=_residual_rows(objective, {}),
            evaluations=objective.evaluations,
            status=None,
            message="nothing to fit: no parameter is identifiable from these cases",
            engine=engine,
            seed=seed,
            max_wall_seconds=max_wall_seconds,
            notes=_capped_note(objective),
            max_sim_seconds=max_sim_seconds,
        )
    objective.held = _uninformative(objective, probes, names)
    res = _solve_releasing(objective, names, np.zeros(len(names)))
    errors = _log_stderrs(res, len(cases))
    fitted = {
        n: _parameter(n, float(t), se, note, sens[n])
        for n, t, (se, note) in zip(names, res.x, errors, strict=True)
    }
    params = tuple(fitted.get(p) or _unfitted(p, sens[p]) for p in parameters)
    values = {p.name: p.value for p in params if p.fitted}
    return HostFit(
        parameters=params,
        residuals=_residual_rows(objective, values),
        evaluations=objective.evaluations,
        status=int(res.status),
        message=str(res.message),
        engine=engine,
        seed=seed,
        max_wall_seconds=max_wall_seconds,
        notes=_capped_note(objective),
        max_sim_seconds=max_sim_seconds,
    )


def leave_one_out(fit: HostFit, cases: Sequence[PoolCase]) -> list[LooPrediction]:
    """Refit ``fit``'s fitted parameters without each case in turn, started at the fitted
    values, and predict the case left out (same engine, seed and caps as ``fit``; the
    cases ``fit`` held stay held at their residual at 1.0).

    With nothing fitted, every prediction is the one at 1.0. Raises :class:`ZsimError` when
    a refit does not converge.
    """
    cases = list(cases)
    names = fit.fitted_names
    x0 = np.array([math.log(fit.values[n]) for n in names])
    held = {
        r.name: math.log(r.predicted_start / r.measured) for r in fit.residuals if not r.informative
    }
    out = []
    for i, left in enumerate(cases):
        rest = cases[:i] + cases[i + 1 :]
        values: dict[str, float] = {}
        if names:
            objective = _Objective(
                rest, fit.engine, fit.seed, fit.max_wall_seconds, held, fit.max_sim_seconds
            )
            refit = _solve_releasing(objective, names, x0)
            values = {n: float(math.exp(t)) for n, t in zip(names, refit.x, strict=True)}
        single = _Objective(
            [left], fit.engine, fit.seed, fit.max_wall_seconds, None, fit.max_sim_seconds
        )
        pred = single.predict(values)[0]
        out.append(
            LooPrediction(left.name, left.measured_bytes_per_s, pred.rate, pred.limit, values)
        )
    return out
