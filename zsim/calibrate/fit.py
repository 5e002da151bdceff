"""Fit a device profile to raw-device measurements by nonlinear least squares.

Residual of measurement *i*: ``log(predicted IOPS / measured IOPS)`` (relative error, so a
4 KiB and a 1 MiB run weigh the same), predictions from :mod:`zsim.calibrate.forward`.
Parameters are fitted in log space (all are positive scales) with
:func:`scipy.optimize.least_squares` (trust-region reflective). Standard errors come from
the Jacobian at the solution: ``cov = s² (JᵀJ)⁻¹`` with ``s² = Σr² / (m − n)`` (the usual
Gauss-Newton estimate, e.g. Bates & Watts, *Nonlinear Regression Analysis*, §2.3); in log
space ``√cov_jj`` is the relative standard error of parameter *j*. The solver, Jacobian and
standard errors are :mod:`zsim.calibrate.least_squares`, shared with
:mod:`zsim.calibrate.host_fit`.

What each parameter is fitted from (a parameter no measurement constrains is kept at its
initial estimate and reported as not fitted):

* HDD: ``max_sustained``/``min_sustained`` from sequential reads at several offsets (zoned
  recording: rate ∝ radius); ``command_overhead`` from 4 KiB re-reads the drive's cache
  serves; ``rpm`` from random reads over a short span (half a revolution plus short
  seeks) against the cache hits; ``avg_seek_read`` and ``min_seek`` from random reads over
  the whole device and over the short span (``max_seek`` = 2 × average, the catalog's rule,
  :data:`zsim.hardware.hdd.MAX_SEEK_RATIO`); then the queueing gain,
  ``queue_reorder_depth`` (how many queued commands the drive's shortest-access-time-first
  scheduler chooses among), from the queued random reads, chosen among
  :data:`REORDER_DEPTHS` by least residual with the DES's own device in a closed loop
  (:func:`zsim.calibrate.forward.hdd_queued_read_iops`). Write runs through the drive's
  write-back cache are predicted by the discrete-event engine in validation, not fitted.
* SSD/NVMe: ``read_latency``/``write_latency`` (QD1 4 KiB), ``read_iops``/``write_iops``
  (the small-block ceiling), ``read_bw``/``write_bw`` (the large-block ceiling) from the
  queue-depth sweeps; ``flush_latency`` from O_SYNC writes; ``write_cache`` and
  ``steady_write_bw`` from the segments of the long sequential write (the rate after the
  cliff, and the bytes written before it).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from zsim.calibrate.forward import (
    finite,
    flash_iops,
    hdd_iops,
    hdd_queued_read_iops,
    host_time,
    link_rate,
    outstanding,
    predict_iops,
    queued_random_read,
)
from zsim.calibrate.least_squares import (
    central_jacobian,
    log_residual,
    solve,
    standard_errors,
)
from zsim.calibrate.measurement import Measurement
from zsim.errors import ZsimError
from zsim.hardware import flash, hdd
from zsim.hardware.catalog import Profile, parse_profile
from zsim.toml_text import toml_value

HDD_LATENCY_FLOOR = 2e-3
"""A QD1 random read over most of a device that takes longer than this (s) is a rotating
disk: a 15k rpm drive's half revolution alone is 2 ms, and flash answers in well under 1 ms.
Used when the caller does not say which kind the device is."""

CLIFF_RATIO = 0.8
"""A long-write segment slower than this fraction of the first segment's rate marks the
write-cache cliff (run-to-run noise of a sequential write is a few %)."""

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


# ---------------------------------------------------------------- helpers


def measured_iops(m: Measurement) -> float:
    """IOPS of the run's main direction."""
    return m.direction().iops


def _usable(m: Measurement) -> bool:
    return m.ok and m.rw in ("read", "write", "randread", "randwrite") and measured_iops(m) > 0


def detect_kind(measurements: Sequence[Measurement], device_bytes: int) -> str:
    """ "hdd" when the smallest-block QD1 random read over most of the device took longer
    than :data:`HDD_LATENCY_FLOOR` on average (fio's mean latency, which a rate cap does not
    inflate; else 1/IOPS), else "nvme" (a fitted flash profile's kind: its link is PCIe,
    which never bounds a fitted rate below ~3.9 GB/s)."""
    reads = [
        m
        for m in measurements
        if _usable(m) and m.rw == "randread" and outstanding(m) == 1 and m.tool == "fio"
    ]
    wide = [m for m in reads if (m.size or device_bytes) >= 0.5 * device_bytes] or reads
    if not wide:
        raise ZsimError(
            "cannot tell whether the device is a disk or flash: no QD1 random read among the "
            "measurements; give --kind hdd|ssd|nvme"
        )
    m = min(wide, key=lambda m: m.bs)
    d = m.direction()
    latency = d.lat_mean_s if d.lat_mean_s else 1.0 / d.iops
    return "hdd" if latency > HDD_LATENCY_FLOOR else "nvme"


def _qd1_latency(ms: Iterable[Measurement], rw: str, ghz: float) -> float | None:
    """Mean device time of the smallest-block QD1 run of ``rw``, s (fio's mean latency
    when given, else 1/IOPS), minus the host's call time."""
    cands = [m for m in ms if m.rw == rw and outstanding(m) == 1]
    if not cands:
        return None
    m = min(cands, key=lambda m: m.bs)
    d = m.direction()
    lat = d.lat_mean_s if d.lat_mean_s else 1.0 / d.iops
    return max(lat - host_time(ghz), 1e-6)


# ---------------------------------------------------------------- the optimizer


@dataclass
class _Problem:
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


def _solve(
    problem: _Problem, quick: bool = False
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


# ---------------------------------------------------------------- flash


def _flash_problem(
    ms: list[Measurement], base: dict[str, Any], ghz: float
) -> tuple[_Problem, list[Measurement]]:
    reads = [m for m in ms if m.rw in ("read", "randread")]
    writes = [m for m in ms if m.rw in ("write", "randwrite") and not m.sync]
    syncs = [m for m in ms if m.rw in ("write", "randwrite") and m.sync]
    used = reads + writes + syncs
    if not reads:
        raise ZsimError("no read measurements to fit a flash device from; run the whole plan")

    def ceiling(group: list[Measurement], small: bool) -> float | None:
        pick = [m for m in group if (m.bs <= 8192) == small]
        if not pick:
            return None
        return max((measured_iops(m) if small else measured_iops(m) * m.bs) for m in pick)

    initial: dict[str, float] = {}
    units: dict[str, str] = {}
    for side, group in (("read", reads), ("write", writes)):
        if not group:
            continue
        lat = _qd1_latency(group, "randread" if side == "read" else "randwrite", ghz)
        lat = lat or _qd1_latency(group, side, ghz) or 1e-4
        iops = ceiling(group, True) or (ceiling(group, False) or 1e8) / 4096
        bw = ceiling(group, False) or iops * 4096
        initial |= {f"{side}_latency": lat, f"{side}_iops": iops, f"{side}_bw": bw}
        units |= {f"{side}_latency": "s", f"{side}_iops": "IOPS", f"{side}_bw": "B/s"}
    if syncs and writes:
        qd1 = min(syncs, key=lambda m: m.bs)
        lat = 1.0 / measured_iops(qd1) - initial["write_latency"] - host_time(ghz)
        initial["flush_latency"] = max(lat, 1e-6)
        units["flush_latency"] = "s"

    def predict(values: dict[str, float], smooth: bool = False) -> list[float | None]:
        prof = _flash_profile(base, values)
        params = flash.flash_params(prof)
        link = link_rate(prof)
        return [flash_iops(params, m, link, ghz, smooth=smooth) for m in used]

    def smooth(values: dict[str, float]) -> list[float | None]:
        return predict(values, smooth=True)

    return _Problem(initial, units, predict, used, smooth=smooth), used


def _flash_profile(base: dict[str, Any], values: dict[str, float]) -> Profile:
    data = dict(base)
    for key in ("read_latency", "write_latency", "flush_latency"):
        if key in values:
            data[key] = values[key]
    for key in ("read_bw", "write_bw"):
        if key in values:
            data[key] = values[key]
    for key in ("read_iops", "write_iops"):
        if key in values:
            data[key] = max(1, round(values[key]))
    if "write_bw" not in data:  # a read-only fit: the profile still needs a write rate
        data["write_bw"] = data["read_bw"]
    if "steady_write_bw" in data:
        data["steady_write_bw"] = min(data["steady_write_bw"], data["write_bw"])
    return parse_profile(_as_profile_table(data))


def _as_profile_table(data: dict[str, Any]) -> dict[str, Any]:
    """Plain SI numbers to the catalog's accepted forms (numbers parse as base units)."""
    out: dict[str, Any] = {}
    for k, v in data.items():
        if isinstance(v, float) and k in ("capacity_bytes", "rpm", "read_iops", "write_iops"):
            v = round(v)
        out[k] = v
    return out


def _cliff(segments: list[Measurement]) -> tuple[float, int] | None:
    """(steady_write_bw, write_cache bytes) from the long write's segments, or None.

    The cliff is the first segment from which the median rate of the rest stays below
    :data:`CLIFF_RATIO` of the median before it, with at least two segments on each side: one
    slow segment amid fast ones is noise (a shared host's hiccup), not a cache running out.
    """
    segments = sorted(segments, key=lambda m: (m.offset_fraction or 0.0, m.offset))
    rates = [m.direction().bytes_per_s for m in segments]
    cliff = next(
        (
            i
            for i in range(2, len(rates) - 1)
            if statistics.median(rates[i:]) < CLIFF_RATIO * statistics.median(rates[:i])
        ),
        None,
    )
    if cliff is None:
        return None
    fast = statistics.median(rates[:cliff])
    steady = statistics.median(rates[cliff:])
    before = sum(m.direction().io_bytes for m in segments[:cliff])
    # within the first slow segment the drive wrote c bytes fast and the rest slowly: its
    # mean rate r satisfies n / r = c / fast + (n − c) / steady
    n = segments[cliff].direction().io_bytes
    r = rates[cliff]
    c = (n / r - n / steady) / (1.0 / fast - 1.0 / steady)
    before += int(min(max(c, 0.0), n))
    return steady, before


# ---------------------------------------------------------------- HDD


def _hdd_problem(
    ms: list[Measurement], base: dict[str, Any], device_bytes: int, ghz: float
) -> tuple[_Problem, list[Measurement]]:
    """The continuous HDD parameters at the base's fixed ``rpm`` (see :func:`_fit_hdd`)."""
    used = [m for m in ms if m.rw in ("read", "write", "randread")]
    seq = [m for m in used if m.rw in ("read", "write") and m.bs >= 256 * 1024]
    outer0 = max((m.direction().bytes_per_s for m in seq), default=150e6)
    inner0 = min((m.direction().bytes_per_s for m in seq), default=outer0 / 2)
    inner0 = min(max(inner0, 0.3 * outer0), 0.95 * outer0)
    initial = {
        "max_sustained": outer0,
        "min_sustained": inner0,
        "command_overhead": 1e-4,
        "avg_seek_read": 8.5e-3,
        "min_seek": 0.85e-3,
    }
    units = {
        "max_sustained": "B/s",
        "min_sustained": "B/s",
        "command_overhead": "s",
        "avg_seek_read": "s",
        "min_seek": "s",
    }

    def predict(values: dict[str, float]) -> list[float | None]:
        prof = _hdd_profile(base, values)
        params = hdd.hdd_params(prof)
        link = link_rate(prof)
        return [hdd_iops(params, m, device_bytes, link, ghz) for m in used]

    return _Problem(initial, units, predict, used), used


SPINDLE_SPEEDS = (5400, 5900, 7200, 10000, 10500, 15000)
"""Spindle speeds drives are made with (rev/min). Rotation and short seeks add up in every
random read, so the continuous fit cannot separate them; the spindle speed is chosen among
these by least residual instead (or given with ``base``)."""


def _fit_hdd(
    ms: list[Measurement],
    base: dict[str, Any],
    device_bytes: int,
    ghz: float,
    quick: bool,
    start: dict[str, float] | None = None,
) -> tuple[
    _Problem, list[Measurement], dict[str, float], dict[str, float | None], int, str, Parameter
]:
    given = base.get("rpm")
    speeds = (int(given),) if given else SPINDLE_SPEEDS
    best = None
    tried = []
    for rpm in speeds:
        table = dict(base, rpm=rpm)
        problem, used = _hdd_problem(ms, table, device_bytes, ghz)
        if start:
            problem.initial.update({k: v for k, v in start.items() if k in problem.initial})
        try:
            values, stderr, nfev, message = _solve(problem, quick)
        except ZsimError as err:
            if given:
                raise
            tried.append((rpm, math.inf))
            last_error = err
            continue
        pred = problem.predict(values)
        errs = [
            math.log(p / measured_iops(m))
            for p, m in zip(pred, used, strict=True)
            if p is not None and finite(p)
        ]
        rss = sum(e * e for e in errs)
        tried.append((rpm, math.sqrt(rss / max(len(errs), 1))))
        if best is None or rss < best[0]:
            best = (rss, rpm, table, problem, used, values, stderr, nfev, message)
    if best is None:
        raise last_error
    _, rpm, table, problem, used, values, stderr, nfev, message = best
    base.update(table)
    note = (
        "given"
        if given
        else "chosen by least residual among " + ", ".join(f"{r} (rms {e:.1%})" for r, e in tried)
    )
    return (
        problem,
        used,
        values,
        stderr,
        nfev,
        message,
        Parameter("rpm", float(rpm), "rev/min", None, not given, note),
    )


REORDER_DEPTHS = (1, 2, 4, 8, 16, 32)
"""Effective scheduler windows tried for ``queue_reorder_depth``: 1 (first come, first
served) up to the 32 tags of SATA NCQ; powers of two, because the queueing gain grows
roughly with the window's logarithm, so neighbouring candidates differ by similar amounts."""


def _fit_reorder_depth(
    ms: list[Measurement], base: dict[str, Any], values: dict[str, float], device_bytes: int
) -> tuple[Parameter, list[Measurement]]:
    """Choose ``queue_reorder_depth`` by least residual over the queued random reads, with
    the continuous parameters already fitted; sets it in ``base``. Its standard error is
    not defined (a discrete choice): the note gives every candidate's rms instead."""
    queued = [m for m in ms if queued_random_read(m)]
    given = base.get("queue_reorder_depth")
    if not queued:
        depth = int(given) if given else hdd.DEFAULT_REORDER_DEPTH
        base["queue_reorder_depth"] = depth
        note = "given" if given else "no queued random reads measured: the NCQ default, not fitted"
        return Parameter("queue_reorder_depth", float(depth), "commands", None, False, note), []
    tried = []
    for depth in (int(given),) if given else REORDER_DEPTHS:
        prof = _hdd_profile(dict(base, queue_reorder_depth=depth), values)
        errs = []
        for m in queued:
            pred = hdd_queued_read_iops(prof, m, device_bytes)
            if pred is not None and finite(pred):
                errs.append(math.log(pred / measured_iops(m)))
        tried.append((math.sqrt(sum(e * e for e in errs) / max(len(errs), 1)), depth))
    depth = min(tried)[1]
    base["queue_reorder_depth"] = depth
    note = (
        "given"
        if given
        else f"chosen by least residual over {len(queued)} queued random reads among "
        + ", ".join(f"{d} (rms {e:.1%})" for e, d in sorted(tried, key=lambda t: t[1]))
    )
    return (
        Parameter("queue_reorder_depth", float(depth), "commands", None, not given, note),
        queued,
    )


def _hdd_profile(base: dict[str, Any], values: dict[str, float]) -> Profile:
    data = dict(base)
    outer = values["max_sustained"]
    data["max_sustained"] = outer
    data["min_sustained"] = min(values["min_sustained"], outer)
    data["command_overhead"] = values["command_overhead"]
    avg = values["avg_seek_read"]
    low = min(values["min_seek"], 0.95 * avg)
    data["avg_seek_read"] = avg
    data["min_seek"] = low
    data["max_seek"] = hdd.MAX_SEEK_RATIO * avg
    data.pop("avg_seek", None)
    data.pop("avg_seek_write", None)
    return parse_profile(_as_profile_table(data))


# ---------------------------------------------------------------- entry point


def fit_device(
    measurements: Sequence[Measurement],
    *,
    name: str = "fitted",
    kind: str | None = None,
    device_bytes: int | None = None,
    ghz: float = 3.0,
    base: dict[str, Any] | None = None,
    start: dict[str, float] | None = None,
    quick: bool = False,
) -> DeviceFit:
    """Fit a device profile to raw-device (or file) measurements.

    ``kind``: "hdd", "ssd" or "nvme"; detected from the QD1 random-read latency when None
    (:func:`detect_kind`). ``device_bytes``: the device's size (default: the plan's
    ``target_bytes`` of the measurements). ``ghz``: the host CPU clock, for the per-call
    time the engine charges. ``base``: profile keys to start from (e.g. ``rpm``, ``cache``,
    ``interface``); the fitted keys replace them. ``start``: parameter values to start the
    search from (a previous fit's); ``quick``: one start and no bootstrap (leave-one-out
    refits, which need the estimate, not its error).
    """
    ms = [m for m in measurements if _usable(m)]
    skipped = [m for m in measurements if not _usable(m)]
    if not ms:
        raise ZsimError(
            "none of the measurements is a finished read or write run (failed runs and mixed "
            "read/write runs are not fitted); give the results of 'zsim calibrate run'"
        )
    size = device_bytes or max((m.target_bytes or 0) for m in ms)
    if not size:
        raise ZsimError("the device size is unknown (no plan with the results); give --device-size")
    kind = kind or detect_kind(ms, size)
    if kind not in ("hdd", "ssd", "nvme"):
        raise ZsimError(f"kind {kind!r} is not one of hdd, ssd, nvme")
    base_table: dict[str, Any] = {"kind": kind, "capacity_bytes": int(size)}
    base_table.update({k: v for k, v in (base or {}).items() if k != "kind"})
    long_writes = [m for m in ms if m.purpose == "long-write"]
    fit_ms = [m for m in ms if m.purpose not in ("long-write", "prepare") and m.tool == "fio"]
    notes: list[str] = []
    extra: list[Parameter] = []
    if kind == "hdd":
        problem, used, values, stderr, nfev, message, rpm = _fit_hdd(
            fit_ms, base_table, size, ghz, quick, start
        )
        depth, queued = _fit_reorder_depth(fit_ms, base_table, values, size)
        extra += [rpm, depth]
        used = used + [m for m in queued if not any(m is u for u in used)]
        profile = _hdd_profile(base_table, values)
    else:
        cliff = _cliff(long_writes) if long_writes else None
        if cliff is not None:
            base_table["steady_write_bw"], base_table["write_cache"] = cliff
        problem, used = _flash_problem(fit_ms, base_table, ghz)
        if start:
            problem.initial.update({k: v for k, v in start.items() if k in problem.initial})
        values, stderr, nfev, message = _solve(problem, quick)
        profile = _flash_profile(base_table, values)
    params = extra + [
        Parameter(
            n,
            float(values[n]),
            problem.units[n],
            stderr[n],
            stderr[n] is not None,
            problem.notes.get(n, ""),
        )
        for n in problem.initial
    ]
    if kind != "hdd" and long_writes:
        cliff = _cliff(long_writes)
        if cliff is None:
            notes.append(
                f"long write: its rate never stayed below {CLIFF_RATIO:.0%} of the rate before; "
                f"no cache cliff within {sum(m.direction().io_bytes for m in long_writes)} bytes"
            )
        else:
            params.append(
                Parameter(
                    "steady_write_bw",
                    cliff[0],
                    "B/s",
                    None,
                    False,
                    "median rate of the long write's segments after the cliff",
                )
            )
            params.append(
                Parameter(
                    "write_cache",
                    float(cliff[1]),
                    "B",
                    None,
                    False,
                    "bytes the long write wrote before its rate fell",
                )
            )
    residuals = _residuals(profile, ms, skipped, used, size, ghz)
    return DeviceFit(
        name=name,
        kind=kind,
        profile=replace(profile, name=name),
        parameters=tuple(params),
        residuals=tuple(residuals),
        device_bytes=int(size),
        evaluations=nfev,
        status=message,
        notes=tuple(notes),
        sources=tuple(sorted({m.source.split("#")[0] for m in measurements})),
    )


def _residuals(
    profile: Profile,
    ms: list[Measurement],
    skipped: list[Measurement],
    used: list[Measurement],
    size: int,
    ghz: float,
) -> list[Residual]:
    out = []
    for m in ms:
        pred = predict_iops(profile, m, size, ghz=ghz)
        in_fit = any(m is u for u in used)
        why = ""
        if m.purpose == "prepare":
            why = "lays the file out; not a measurement"
        elif m.purpose == "long-write":
            why = "long-write segment: fitted as the cache cliff"
        elif pred is None:
            why = "no closed form (through the write cache, or mixed): the DES predicts it"
        elif not in_fit:
            why = "not a fitted shape (dd, or a run the fit leaves out)"
        out.append(
            Residual(m.source, m.name, measured_iops(m), pred, in_fit and pred is not None, why)
        )
    for m in skipped:
        why = f"fio error {m.error}" if m.error else "not a plain read or write run"
        moved = m.ok
        out.append(Residual(m.source, m.name, measured_iops(m) if moved else 0.0, None, False, why))
    return out


# ---------------------------------------------------------------- the profile file


def _describe_inputs(paths: list[str]) -> str:
    """The inputs as "N measurement files in DIR" (their common folder), or the one file."""
    import os.path

    if len(paths) == 1:
        return f"the measurements in {paths[0]}"
    try:
        common = os.path.commonpath(paths)
    except ValueError:
        common = ""
    where = f" in {common}" if common else ""
    return f"{len(paths)} measurement files{where}"


def profile_toml(fit: DeviceFit, *, inputs: Sequence[str] = (), when: str = "") -> str:
    """The fitted profile as a catalog TOML file: the figures (SI base units, numbers), a
    ``[sources]`` table naming the measurements, and a ``[calibration]`` table with every
    parameter's standard error and every measurement's residual (read back by
    ``zsim validate``; ignored by the models)."""
    from zsim.units import format_rate, format_time

    prof = fit.profile.to_dict()
    lines = [
        f"# {fit.name}: fitted by 'zsim calibrate fit' from {len(fit.residuals)} measurements",
        f"# ({sum(r.used for r in fit.residuals)} used), rms error {fit.rms_error:.1%}."
        if math.isfinite(fit.rms_error)
        else "# (no measurement used)",
        "schema = 1",
        f'kind = "{fit.kind}"',
    ]
    stderr = {p.name: p for p in fit.parameters}
    for key, value in prof.items():
        if key in ("name", "kind", "sources", "calibration"):
            continue
        comment = ""
        p = stderr.get(key)
        if p is not None and isinstance(value, int | float):
            shown = (
                format_time(p.value)
                if p.unit == "s"
                else format_rate(p.value)
                if p.unit == "B/s"
                else f"{p.value:.6g} {p.unit}"
            )
            comment = f"  # {shown}"
            if p.stderr is not None:
                comment += f" ± {p.stderr / p.value:.1%} (1 s.e.)" if p.value else ""
            elif p.note:
                comment += f" ({p.note})"
        lines.append(f"{key} = {toml_value(value)}{comment}")
    lines += [
        "",
        "[sources]",
        "default = "
        + toml_value(
            f"zsim calibrate fit{(' ' + when) if when else ''}: least-squares fit to "
            + _describe_inputs(list(inputs or fit.sources))
        ),
        "",
        "[calibration]",
        f"rms_error = {fit.rms_error!r}" if math.isfinite(fit.rms_error) else "rms_error = nan",
        f"evaluations = {fit.evaluations}",
        f"status = {toml_value(fit.status)}",
        f"device_bytes = {fit.device_bytes}",
    ]
    if fit.notes:
        lines.append("notes = [" + ", ".join(toml_value(n) for n in fit.notes) + "]")
    for p in fit.parameters:
        lines += [
            "",
            "[[calibration.parameter]]",
            f"name = {toml_value(p.name)}",
            f"value = {p.value!r}",
            f"unit = {toml_value(p.unit)}",
            f"fitted = {toml_value(p.fitted)}",
        ]
        if p.stderr is not None:
            lines.append(f"stderr = {p.stderr!r}")
        if p.note:
            lines.append(f"note = {toml_value(p.note)}")
    for r in fit.residuals:
        lines += [
            "",
            "[[calibration.residual]]",
            f"source = {toml_value(r.source)}",
            f"name = {toml_value(r.name)}",
            f"measured_iops = {r.measured_iops!r}",
            f"used = {toml_value(r.used)}",
        ]
        if r.predicted_iops is not None:
            lines.append(f"predicted_iops = {r.predicted_iops!r}")
        if r.why:
            lines.append(f"why = {toml_value(r.why)}")
    return "\n".join(lines) + "\n"
