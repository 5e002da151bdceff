"""The Calibrate page's work, without Streamlit: uploaded files → measurements → a fitted
profile → predicted vs measured.

Every step calls the calibration library the CLI calls (``zsim calibrate fit``,
``zsim validate --profile``; :mod:`zsim.calibrate.commands`): :func:`parse_uploads` writes
the uploads into a fresh temporary folder and reads them with
:func:`zsim.calibrate.load.load_results`; :func:`fit_uploads` fits with
:func:`zsim.calibrate.fit.fit_device`, writes the profile with
:func:`zsim.calibrate.fit.profile_toml` and predicts every run in closed form
(:func:`zsim.calibrate.forward.predict_iops`, the predictions the fit itself uses) beside
the rule of thumb (``engine="baseline"``) and the leave-one-out refit, as
:class:`zsim.validation.profile.Validation`. :func:`des_validation` replays a few runs with
the discrete-event engine (``zsim validate --profile``; about 3 s per run).

Units: SI base units throughout (bytes, seconds, bytes/s, I/Os per second); the page
formats them.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zsim.calibrate.commands import parse_base_items, pool_log_summary
from zsim.calibrate.load import load_results
from zsim.calibrate.measurement import Measurement, ParseError
from zsim.errors import ZsimError
from zsim.simulate import simulate

MAX_FILE_BYTES = 5_000_000
"""Largest uploaded file, bytes (5 MB = 5 × 10⁶ bytes, 4.77 MiB): a stored step of
``zsim calibrate run`` is 5-40 kB, fio's ``json+`` of a long run a few hundred kB."""

MAX_FILES = 200
"""Most files in one upload: a full ``zsim calibrate plan`` has about 45 steps."""

MAX_TOTAL_BYTES = 50_000_000
"""Most bytes in one upload, all files together (50 MB = 5 × 10⁷ bytes)."""

MAX_NAME_CHARS = 200
"""Longest file name accepted (characters)."""

MAX_DES_RUNS = 6
"""Most measurements replayed with the discrete-event engine at once (about 3 s each)."""

SAMPLE_SET = "vm-virtio-file-2026-11-22"
"""The measurements shipped with the source tree (``calibration/results/``): a virtio disk
under ext4, a 1 GiB file, 43 steps of ``zsim calibrate run``."""

UPLOAD_SUFFIXES = ("json", "log", "txt", "out")
"""File name endings the uploader offers (those :mod:`zsim.calibrate.load` searches folders
for); a file of another name is still read by its content."""

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

#: the library's advice names CLI options; the page has boxes for them instead
_CLI_ADVICE = {
    "give --kind hdd|ssd|nvme": "choose the device kind (hdd, ssd or nvme) above",
    "give --device-size": "enter the device size above (e.g. 960GB or 1TiB)",
}


# ---------------------------------------------------------------- the sample set


def sample_dir() -> Path | None:
    """The shipped sample results folder (a source checkout has it beside the package), or
    None when it is not installed (a wheel ships no measurements)."""
    root = Path(__file__).resolve().parents[2]
    folder = root / "calibration" / "results" / SAMPLE_SET / "results"
    return folder if folder.is_dir() and any(folder.glob("*.json")) else None


def sample_files() -> list[tuple[str, bytes]]:
    """The sample measurements as ``(file name, content)`` pairs, sorted by name; a
    :class:`ZsimError` when they are not installed."""
    folder = sample_dir()
    if folder is None:
        raise ZsimError(
            f"the sample measurements are not installed (they are in the source tree, "
            f"calibration/results/{SAMPLE_SET}/results/); upload your own results instead"
        )
    return [(p.name, p.read_bytes()) for p in sorted(folder.glob("*.json"))]


# ---------------------------------------------------------------- uploads


def upload_digest(files: Iterable[tuple[str, bytes]]) -> str:
    """SHA-256 of the names and contents (order matters): the cache key of an upload."""
    h = hashlib.sha256()
    for name, data in files:
        raw = name.encode("utf-8", "surrogatepass")
        h.update(len(raw).to_bytes(8, "little") + raw)
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def safe_name(name: str) -> str:
    """The uploaded file's name if it is a plain file name (no folder, no ``..``, no
    control characters, not hidden), else a :class:`ZsimError` naming it."""
    shown = repr(name[:80])
    if not name or not name.strip():
        raise ZsimError("an uploaded file has no name")
    if len(name) > MAX_NAME_CHARS:
        raise ZsimError(f"file {shown}…: the name is longer than {MAX_NAME_CHARS} characters")
    if "/" in name or "\\" in name or ".." in name:
        raise ZsimError(f"file {shown}: give a plain file name, without folders or '..'")
    if name.startswith(".") or any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise ZsimError(f"file {shown}: a hidden name or one with control characters")
    if os.path.basename(name) != name:
        raise ZsimError(f"file {shown}: give a plain file name, without folders")
    return name


def check_uploads(files: Sequence[tuple[str, bytes]]) -> None:
    """The limits: at least one file, at most :data:`MAX_FILES`, none empty or over
    :data:`MAX_FILE_BYTES`, together at most :data:`MAX_TOTAL_BYTES`, names unique and
    plain (:func:`safe_name`). A :class:`ZsimError` names the file and the limit."""
    if not files:
        raise ZsimError("no files: upload fio JSON, dd, zpool status/iostat or arcstat output")
    if len(files) > MAX_FILES:
        raise ZsimError(
            f"{len(files)} files: at most {MAX_FILES} at once (a calibration plan has about "
            f"45); upload the plan's results/*.json"
        )
    seen: set[str] = set()
    total = 0
    for name, data in files:
        safe_name(name)
        if name in seen:
            raise ZsimError(f"file {name!r} is uploaded twice; give each file once")
        seen.add(name)
        if not data:
            raise ZsimError(f"file {name!r} is empty")
        if len(data) > MAX_FILE_BYTES:
            raise ZsimError(
                f"file {name!r}: {len(data):,} bytes is over the limit of {MAX_FILE_BYTES:,} "
                f"bytes (5 MB) per file; a measurement summary is far smaller"
            )
        total += len(data)
        if total > MAX_TOTAL_BYTES:
            raise ZsimError(
                f"file {name!r}: the upload passes {MAX_TOTAL_BYTES:,} bytes (50 MB) in all; "
                f"upload fewer files"
            )


@dataclass(frozen=True)
class Parsed:
    """What the uploads hold: fio/dd ``measurements`` (their ``source`` is the upload's file
    name, then ``#job``), the file names read, and what the zpool status / iostat /
    arcstat files say (``pool_logs``: scans, iostat, arcstat by file; SI units, as
    ``zsim calibrate fit --json`` gives them; ``pool_text`` the same as text lines)."""

    measurements: tuple[Measurement, ...]
    files: tuple[str, ...]
    pool_logs: dict[str, Any] = field(default_factory=dict)
    pool_text: str = ""
    digest: str = ""


def _strip(text: str, prefix: str) -> str:
    return text.replace(prefix, "")


def parse_uploads(files: Sequence[tuple[str, bytes]]) -> Parsed:
    """Read uploaded ``(file name, content)`` pairs with the library's loader.

    The files are checked (:func:`check_uploads`), written into a fresh temporary folder
    under their plain names and read by :func:`zsim.calibrate.load.load_results`; the folder
    is removed afterwards. Junk, truncated or unknown files raise a :class:`ZsimError`
    (a :class:`ParseError` for content) naming the file and the line."""
    files = [(str(n), bytes(d)) for n, d in files]
    check_uploads(files)
    with tempfile.TemporaryDirectory(prefix="zsim-upload-") as tmp:
        folder = Path(tmp).resolve()
        prefix = str(folder) + os.sep
        paths = []
        for name, data in files:
            path = folder / name
            if path.resolve().parent != folder:  # belt and braces: safe_name refused it
                raise ZsimError(f"file {name!r}: give a plain file name")
            with open(path, "xb") as out:
                out.write(data)
            paths.append(path)
        try:
            loaded = load_results(paths)
        except ParseError as err:
            raise ParseError(_strip(err.path, prefix), err.line, err.problem) from None
        except ZsimError as err:
            raise ZsimError(_strip(str(err), prefix)) from None
        ms = tuple(
            dataclasses.replace(
                m,
                source=_strip(m.source, prefix),
                options={
                    k: _strip(v, prefix) if isinstance(v, str) else v for k, v in m.options.items()
                },
            )
            for m in loaded.measurements
        )
        loaded.scans = {_strip(k, prefix): v for k, v in loaded.scans.items()}
        loaded.iostat = {_strip(k, prefix): v for k, v in loaded.iostat.items()}
        loaded.arcstat = {_strip(k, prefix): v for k, v in loaded.arcstat.items()}
        pool_logs, pool_text = pool_log_summary(loaded)
    return Parsed(
        measurements=ms,
        files=tuple(name for name, _ in files),
        pool_logs=pool_logs,
        pool_text=pool_text.strip(),
        digest=upload_digest(files),
    )


def measurement_rows(parsed: Parsed) -> list[dict[str, Any]]:
    """One row per measurement (SI units): step, file, tool, kind (fio's rw), block size
    (bytes), commands in flight, jobs, measured bytes/s and IOPS, fio's error code."""
    # imported when used: it loads SimPy, which the upload page does not need to start
    from zsim.calibrate.forward import outstanding

    rows = []
    for m in parsed.measurements:
        d = m.direction() if (m.read or m.write) else None
        rows.append(
            {
                "step": m.name,
                "file": m.source.split("#")[0],
                "tool": m.tool,
                "kind": m.rw,
                "bs_bytes": m.bs,
                "qd": outstanding(m),
                "numjobs": m.numjobs,
                "purpose": m.purpose,
                "bytes_per_s": d.bytes_per_s if d else None,
                "iops": d.iops if d else None,
                "error": m.error,
            }
        )
    return rows


# ---------------------------------------------------------------- inputs


def check_profile_name(name: str) -> str:
    """A profile name usable as a file name (``NAME.toml``): letters, digits, ``.``, ``_``,
    ``-``, starting with a letter or digit, at most 64 characters; a trailing ``.toml`` is
    dropped."""
    text = name.strip()
    if text.lower().endswith(".toml"):
        text = text[:-5]
    if not _NAME_RE.match(text):
        raise ZsimError(
            f"profile name {name[:80]!r}: use letters, digits, '.', '_' and '-' (starting "
            f"with a letter or digit, at most 64), e.g. my-ssd"
        )
    return text


def parse_base(text: str) -> dict[str, Any]:
    """Profile keys the data cannot give, as ``KEY=VALUE`` separated by commas or new
    lines (``pcie_gen=4, rpm=7200``), read as ``zsim calibrate fit --base`` reads them."""
    items = [x.strip() for x in re.split(r"[,\n]", text) if x.strip()]
    return parse_base_items(items)


# ---------------------------------------------------------------- fit and validation


@dataclass(frozen=True)
class FitOutcome:
    """A fit of the uploads: ``fit`` (parameters with standard errors, residuals),
    ``profile_toml`` (the catalog file ``zsim calibrate fit`` writes) and ``validation``
    (every finished run predicted in closed form, with the rule of thumb and leave-one-out;
    ``engine`` ``"closed-form"``)."""

    fit: Any  # zsim.calibrate.fit.DeviceFit
    profile_toml: str
    validation: Any  # zsim.validation.profile.Validation

    def to_dict(self) -> dict[str, Any]:
        return {"fit": self.fit.to_dict(), "validation": self.validation.to_dict()}


def _page_advice(err: ZsimError) -> ZsimError:
    text = str(err)
    for cli, page in _CLI_ADVICE.items():
        text = text.replace(cli, page)
    return ZsimError(text)


def fit_uploads(
    parsed: Parsed,
    *,
    name: str = "fitted",
    kind: str | None = None,
    device_bytes: int | None = None,
    ghz: float = 3.0,
    base: dict[str, Any] | None = None,
    when: str | None = None,
    leave_one_out: bool = True,
) -> FitOutcome:
    """Fit a device profile to the parsed uploads, as ``zsim calibrate fit`` does.

    ``kind``: "hdd", "ssd", "nvme" or None (detected); ``device_bytes`` the device's size
    (default: the plan's, stored with each result); ``ghz`` the host CPU clock (the per-call
    time); ``base`` fixed profile keys. ``when`` goes into the profile's ``[sources]``
    (default: today). The validation predicts every finished run (not ``prepare``) in closed
    form; ``leave_one_out`` adds a quick refit without each fitted run (about 40 ms each)."""
    # imported when used: the fit loads SciPy
    from zsim.calibrate.fit import fit_device, profile_toml

    ms = list(parsed.measurements)
    if not ms:
        raise ZsimError(
            "no fio or dd measurements among the files (zpool/arcstat logs alone describe a "
            "pool, not a device); upload the results of 'zsim calibrate run'"
        )
    name = check_profile_name(name)
    try:
        fit = fit_device(
            ms,
            name=name,
            kind=kind or None,
            device_bytes=device_bytes,
            ghz=ghz,
            base=dict(base or {}),
        )
    except ZsimError as err:
        raise _page_advice(err) from None
    if when is None:
        when = "on " + datetime.date.today().isoformat()
    text = profile_toml(fit, inputs=list(parsed.files), when=when)
    validation = closed_form_validation(fit, ms, ghz=ghz, leave_one_out=leave_one_out)
    return FitOutcome(fit=fit, profile_toml=text, validation=validation)


def closed_form_validation(
    fit: Any, measurements: Sequence[Measurement], *, ghz: float = 3.0, leave_one_out: bool = True
) -> Any:
    """Predicted vs measured for every finished run (``prepare`` left out, as
    ``zsim validate`` does) with the fitted profile's closed form
    (:func:`zsim.calibrate.forward.predict_iops`; ``None`` where only the discrete-event
    engine can predict: an HDD's queued or written runs, mixed read/write), the rule of
    thumb (``zsim simulate --engine baseline`` of the same job) and, for the runs the fit
    used, the leave-one-out prediction. Returns a
    :class:`zsim.validation.profile.Validation` with ``engine="closed-form"``."""
    # imported when used: SimPy and (below) SciPy
    from zsim.calibrate.forward import predict_iops
    from zsim.calibrate.jobs import job_scenario
    from zsim.validation.profile import Validation, validation_row
    from zsim.validation.profile import leave_one_out as leave_one_out_prediction

    profile = fit.profile
    size = fit.device_bytes
    used = {(r.source, r.name) for r in fit.residuals if r.used}
    notes = [
        f"{m.source}: not a finished run (error {m.error}); left out"
        for m in measurements
        if not m.ok
    ]
    rows = []
    for m in measurements:
        if not m.ok or m.purpose == "prepare":
            continue
        pred = predict_iops(profile, m, size, ghz=ghz)
        note = "" if pred is not None else "no closed form: replay it with the DES"
        try:
            sc = job_scenario(m, profile, device_bytes=size)
            rule = simulate(sc, engine="baseline")
            rule_dir = rule.write if m.direction() is m.write else rule.read
            rule_iops = rule_dir.iops
        except ZsimError:
            rule_iops = None
        loo = None
        if leave_one_out and (m.source, m.name) in used:
            loo = leave_one_out_prediction(fit, measurements, m, size)
        pred_bw = pred * m.bs if pred is not None else None
        rows.append(validation_row(m, pred_bw, pred, None, rule_iops, loo=loo, note=note))
    return Validation(profile.name, tuple(rows), "closed-form", 0, tuple(notes))


def des_validation(
    outcome: FitOutcome, measurements: Sequence[Measurement], names: Sequence[str], *, seed: int = 1
) -> Any:
    """Replay the named measurements (at most :data:`MAX_DES_RUNS`) with the discrete-event
    engine and the fitted profile: ``zsim validate --profile`` for those runs (no
    leave-one-out: the closed-form table has it)."""
    # imported when used: it loads SciPy
    from zsim.validation.profile import validate_measurements

    if not names:
        raise ZsimError("choose at least one measurement to replay")
    if len(names) > MAX_DES_RUNS:
        raise ZsimError(
            f"{len(names)} measurements: replay at most {MAX_DES_RUNS} at once here (about "
            f"3 s each); run 'zsim validate --profile NAME.toml DIR' for all of them"
        )
    wanted = set(names)
    chosen = [m for m in measurements if m.name in wanted and m.ok and m.purpose != "prepare"]
    missing = wanted - {m.name for m in chosen}
    if missing:
        raise ZsimError(f"no finished measurement named {sorted(missing)[0]!r}")
    return validate_measurements(
        outcome.fit.profile,
        chosen,
        device_bytes=outcome.fit.device_bytes,
        engine="des",
        seed=seed,
    )


# ---------------------------------------------------------------- tables


def parameter_rows(fit: Any) -> list[dict[str, Any]]:
    """One row per parameter: name, value and standard error in SI units (``unit``), the
    relative standard error, whether it was fitted, and how it was obtained."""
    return [
        {
            "name": p.name,
            "value": p.value,
            "unit": p.unit,
            "stderr": p.stderr,
            "rel_stderr": p.rel_stderr,
            "fitted": p.fitted,
            "note": p.note,
        }
        for p in fit.parameters
    ]


def residual_rows(outcome: FitOutcome) -> list[dict[str, Any]]:
    """One row per validated measurement (SI units): measured and predicted IOPS and
    bytes/s, the error (predicted / measured − 1), whether the fit used it, the rule of
    thumb's and the leave-one-out prediction's errors."""
    fit_rows = {(r.source, r.name): r for r in outcome.fit.residuals}
    out = []
    for v in outcome.validation.rows:
        r = fit_rows.get((v.source, v.name))
        out.append(
            {
                "step": v.name,
                "file": v.source.split("#")[0],
                "kind": v.rw,
                "bs_bytes": v.bs,
                "qd": v.outstanding,
                "measured_iops": v.measured_iops,
                "predicted_iops": v.predicted_iops,
                "measured_bytes_per_s": v.measured_bytes_per_s,
                "predicted_bytes_per_s": v.predicted_bytes_per_s,
                "error": v.error,
                "fitted": bool(r and r.used),
                "why_not_fitted": r.why if r is not None else "",
                "loo_error": v.loo_error,
                "rule_of_thumb_iops": v.rule_of_thumb_iops,
                "rule_of_thumb_error": v.rule_of_thumb_error,
                "note": v.note,
            }
        )
    return out


def replay_scenario_toml(outcome: FitOutcome, measurements: Sequence[Measurement], run: str) -> str:
    """The scenario ``zsim simulate`` runs to replay the measured run named ``run`` on the
    fitted device (``raw 1``, the profile inline): the file ``zsim validate --profile``
    builds for that run. Raises :class:`ZsimError` for an unknown or unfinished run."""
    # imported when used: it loads SimPy
    from zsim.calibrate.jobs import job_scenario

    for m in measurements:
        if m.name == run and m.ok:
            sc = job_scenario(m, outcome.fit.profile, device_bytes=outcome.fit.device_bytes)
            return str(sc.to_toml())
    raise ZsimError(f"no finished run named {run!r} in the uploads; pick one from the table")
