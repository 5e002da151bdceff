"""The HDD fit: zoned transfer rates, command overhead and seeks by least squares at each
candidate spindle speed (the best one kept), then the drive's queue reorder depth over the
queued random reads (see :mod:`zsim.calibrate.fit` for what each parameter is fitted from).
"""

from __future__ import annotations

import math
from typing import Any

from zsim.calibrate.fit_solve import (
    FitProblem,
    Parameter,
    as_profile_table,
    measured_iops,
    solve_problem,
)
from zsim.calibrate.forward import (
    finite,
    hdd_iops,
    hdd_queued_read_iops,
    link_rate,
    queued_random_read,
)
from zsim.calibrate.measurement import Measurement
from zsim.errors import ZsimError
from zsim.hardware import hdd
from zsim.hardware.catalog import Profile, parse_profile
from zsim.units import KiB


def hdd_problem(
    ms: list[Measurement], base: dict[str, Any], device_bytes: int, ghz: float
) -> tuple[FitProblem, list[Measurement]]:
    """The continuous HDD parameters at the base's fixed ``rpm`` (see :func:`fit_hdd`)."""
    used = [m for m in ms if m.rw in ("read", "write", "randread")]
    seq = [m for m in used if m.rw in ("read", "write") and m.bs >= 256 * KiB]
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
        prof = hdd_profile(base, values)
        params = hdd.hdd_params(prof)
        link = link_rate(prof)
        return [hdd_iops(params, m, device_bytes, link, ghz) for m in used]

    return FitProblem(initial, units, predict, used), used


SPINDLE_SPEEDS = (5400, 5900, 7200, 10000, 10500, 15000)
"""Spindle speeds drives are made with (rev/min). Rotation and short seeks add up in every
random read, so the continuous fit cannot separate them; the spindle speed is chosen among
these by least residual instead (or given with ``base``)."""


def fit_hdd(
    ms: list[Measurement],
    base: dict[str, Any],
    device_bytes: int,
    ghz: float,
    quick: bool,
    start: dict[str, float] | None = None,
) -> tuple[
    FitProblem, list[Measurement], dict[str, float], dict[str, float | None], int, str, Parameter
]:
    given = base.get("rpm")
    speeds = (int(given),) if given else SPINDLE_SPEEDS
    best = None
    tried = []
    for rpm in speeds:
        table = dict(base, rpm=rpm)
        problem, used = hdd_problem(ms, table, device_bytes, ghz)
        if start:
            problem.initial.update({k: v for k, v in start.items() if k in problem.initial})
        try:
            values, stderr, nfev, message = solve_problem(problem, quick)
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


def fit_reorder_depth(
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
        prof = hdd_profile(dict(base, queue_reorder_depth=depth), values)
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


def hdd_profile(base: dict[str, Any], values: dict[str, float]) -> Profile:
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
    return parse_profile(as_profile_table(data))
