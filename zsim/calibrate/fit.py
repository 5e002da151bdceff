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
  :data:`~zsim.calibrate.fit_hdd.REORDER_DEPTHS` by least residual with the DES's own device
  in a closed loop (:func:`zsim.calibrate.forward.hdd_queued_read_iops`). Write runs through
  the drive's write-back cache are predicted by the discrete-event engine in validation, not
  fitted.
* SSD/NVMe: ``read_latency``/``write_latency`` (QD1 4 KiB), ``read_iops``/``write_iops``
  (the small-block ceiling), ``read_bw``/``write_bw`` (the large-block ceiling) from the
  queue-depth sweeps; ``flush_latency`` from O_SYNC writes; ``write_cache`` and
  ``steady_write_bw`` from the segments of the long sequential write (the rate after the
  cliff, and the bytes written before it).

This module is the entry point (:func:`fit_device`) and the profile writer
(:func:`profile_toml`); the HDD problem is :mod:`zsim.calibrate.fit_hdd`, the flash problem
:mod:`zsim.calibrate.fit_flash`, the result types and the solver :mod:`zsim.calibrate.fit_solve`.
"""

from __future__ import annotations

import math
import os.path
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from zsim.calibrate.fit_flash import CLIFF_RATIO, flash_problem, flash_profile, long_write_cliff
from zsim.calibrate.fit_hdd import fit_hdd, fit_reorder_depth, hdd_profile
from zsim.calibrate.fit_solve import (
    DeviceFit,
    Parameter,
    Residual,
    measured_iops,
    solve_problem,
)
from zsim.calibrate.forward import outstanding, predict_iops
from zsim.calibrate.measurement import Measurement
from zsim.errors import ZsimError
from zsim.hardware.catalog import Profile
from zsim.toml_text import toml_value
from zsim.units import format_rate, format_time

HDD_LATENCY_FLOOR = 2e-3
"""A QD1 random read over most of a device that takes longer than this (s) is a rotating
disk: a 15k rpm drive's half revolution alone is 2 ms, and flash answers in well under 1 ms.
Used when the caller does not say which kind the device is."""


# ---------------------------------------------------------------- helpers


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
        problem, used, values, stderr, nfev, message, rpm = fit_hdd(
            fit_ms, base_table, size, ghz, quick, start
        )
        depth, queued = fit_reorder_depth(fit_ms, base_table, values, size)
        extra += [rpm, depth]
        used = used + [m for m in queued if not any(m is u for u in used)]
        profile = hdd_profile(base_table, values)
    else:
        cliff = long_write_cliff(long_writes) if long_writes else None
        if cliff is not None:
            base_table["steady_write_bw"], base_table["write_cache"] = cliff
        problem, used = flash_problem(fit_ms, base_table, ghz)
        if start:
            problem.initial.update({k: v for k, v in start.items() if k in problem.initial})
        values, stderr, nfev, message = solve_problem(problem, quick)
        profile = flash_profile(base_table, values)
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
        cliff = long_write_cliff(long_writes)
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
