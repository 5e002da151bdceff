"""Predicted vs measured for a (fitted) profile: each measured job run through zsim.

``zsim validate --profile``.

Each :class:`~zsim.calibrate.measurement.Measurement` becomes a scenario — the job's fio
shape as the workload, the profile as the disk, layout ``raw 1`` for device-level runs or the
caller's pool scenario for pool-level ones — and the discrete-event engine predicts it (the
same ``zsim simulate`` a user runs). Beside each prediction: the planners' rule of thumb
(:mod:`zsim.baseline`) for the same job, and, for measurements the fit used, the
leave-one-out prediction (refit without the point, predict it) that shows how well the model
generalises rather than how well it was fitted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from zsim.calibrate.fit import fit_device
from zsim.calibrate.fit_solve import DeviceFit
from zsim.calibrate.forward import outstanding, predict_iops, queued_random_read
from zsim.calibrate.jobs import job_scenario
from zsim.calibrate.measurement import Measurement
from zsim.errors import ZsimError
from zsim.hardware.catalog import Profile
from zsim.scenario import Scenario
from zsim.simulate import simulate


@dataclass(frozen=True)
class ValidationRow:
    """One measurement: measured and predicted bytes/s and IOPS, the errors (predicted /
    measured − 1), the rule of thumb's, and the leave-one-out prediction's."""

    source: str
    name: str
    rw: str
    bs: int
    outstanding: int
    measured_bytes_per_s: float
    measured_iops: float
    predicted_bytes_per_s: float | None
    predicted_iops: float | None
    limit: str | None
    error: float | None
    rule_of_thumb_iops: float | None
    rule_of_thumb_error: float | None
    loo_iops: float | None = None
    loo_error: float | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Validation:
    """Every row and the summary errors (mean absolute, worst) of zsim and the rule."""

    profile: str
    rows: tuple[ValidationRow, ...]
    engine: str
    seed: int
    notes: tuple[str, ...] = field(default_factory=tuple)

    def summary(self) -> dict[str, Any]:
        def stats(values: list[float]) -> dict[str, float | int | None]:
            if not values:
                return {"n": 0, "mean_abs": None, "max_abs": None, "bias": None}
            return {
                "n": len(values),
                "mean_abs": sum(abs(v) for v in values) / len(values),
                "max_abs": max(abs(v) for v in values),
                "bias": sum(values) / len(values),
            }

        return {
            "zsim": stats([r.error for r in self.rows if r.error is not None]),
            "leave_one_out": stats([r.loo_error for r in self.rows if r.loo_error is not None]),
            "rule_of_thumb": stats(
                [r.rule_of_thumb_error for r in self.rows if r.rule_of_thumb_error is not None]
            ),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "engine": self.engine,
            "seed": self.seed,
            "rows": [r.to_dict() for r in self.rows],
            "summary": self.summary(),
            "notes": list(self.notes),
        }


def _ratio(pred: float | None, meas: float) -> float | None:
    if pred is None or meas <= 0 or not math.isfinite(pred):
        return None
    return pred / meas - 1.0


def validate_measurements(
    profile: Profile,
    measurements: Sequence[Measurement],
    *,
    device_bytes: int | None = None,
    base: Scenario | None = None,
    fit: DeviceFit | None = None,
    engine: str = "des",
    seed: int = 1,
    max_wall_seconds: float = 20.0,
    progress: Callable[[int, int, str], None] | None = None,
) -> Validation:
    """Predict every finished measurement with ``profile`` and compare.

    ``fit``: the device fit that produced the profile; with it, each measurement the fit used
    also gets a leave-one-out prediction (refit without it, predict it with the closed form
    the fit uses). ``engine``: "des" (default) or "analytic"."""
    rows = []
    ms = [m for m in measurements if m.ok and m.purpose != "prepare"]
    notes = [
        f"{m.source}: not a finished run (error {m.error}); left out"
        for m in measurements
        if not m.ok
    ]
    used = {(r.source, r.name) for r in fit.residuals if r.used} if fit else set()
    for i, m in enumerate(ms, start=1):
        if progress:
            progress(i, len(ms), m.name)
        try:
            sc = job_scenario(m, profile, device_bytes=device_bytes, base=base)
            res = simulate(sc, engine=engine, seed=seed, max_wall_seconds=max_wall_seconds)
        except ZsimError as err:
            rows.append(validation_row(m, None, None, None, None, note=str(err)))
            continue
        pred_dir = res.write if m.direction() is m.write else res.read
        try:
            rule = simulate(sc, engine="baseline", seed=seed)
            rule_dir = rule.write if m.direction() is m.write else rule.read
            rule_iops = rule_dir.iops
        except ZsimError:
            rule_iops = None
        loo = None
        if fit is not None and (m.source, m.name) in used:
            loo = leave_one_out(fit, measurements, m, device_bytes)
        rows.append(
            validation_row(m, pred_dir.bytes_per_s, pred_dir.iops, res.limit, rule_iops, loo=loo)
        )
    return Validation(profile.name, tuple(rows), engine, seed, tuple(notes))


def validation_row(
    m: Measurement,
    pred_bw: float | None,
    pred_iops: float | None,
    limit: str | None,
    rule_iops: float | None,
    *,
    loo: float | None = None,
    note: str = "",
) -> ValidationRow:
    """The row of measurement ``m`` with its predictions (None: not predicted)."""
    d = m.direction()
    return ValidationRow(
        source=m.source,
        name=m.name,
        rw=m.rw,
        bs=m.bs,
        outstanding=outstanding(m),
        measured_bytes_per_s=d.bytes_per_s,
        measured_iops=d.iops,
        predicted_bytes_per_s=pred_bw,
        predicted_iops=pred_iops,
        limit=limit,
        error=_ratio(pred_iops, d.iops),
        rule_of_thumb_iops=rule_iops,
        rule_of_thumb_error=_ratio(rule_iops, d.iops),
        loo_iops=loo,
        loo_error=_ratio(loo, d.iops),
        note=note,
    )


def leave_one_out(
    fit: DeviceFit, measurements: Sequence[Measurement], m: Measurement, device_bytes: int | None
) -> float | None:
    """IOPS of ``m`` predicted by the closed form after refitting ``fit`` without it (the
    discrete choices kept), or None when the refit fails."""
    rest = [x for x in measurements if x is not m]
    fitted = {p.name: p.value for p in fit.parameters}
    base: dict[str, Any] = {"rpm": int(fitted["rpm"])} if "rpm" in fitted else {}
    if "queue_reorder_depth" in fitted and not queued_random_read(m):
        # the discrete choices are kept, as rpm is; the queue window is chosen again when
        # the held-out run is one of the queued reads it is chosen from
        base["queue_reorder_depth"] = int(fitted["queue_reorder_depth"])
    for key in ("pcie_gen", "pcie_lanes", "interface", "link_rate"):
        value = getattr(fit.profile, key)
        if value is not None:
            base[key] = value
    try:
        refit = fit_device(
            rest,
            name=fit.name,
            kind=fit.kind,
            device_bytes=fit.device_bytes,
            base=base,
            start=fitted,
            quick=True,
        )
    except ZsimError:
        return None
    return predict_iops(refit.profile, m, device_bytes or fit.device_bytes)
