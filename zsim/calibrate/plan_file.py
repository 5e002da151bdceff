"""``plan.toml``: a ``[plan]`` table (target, device, host, resolved options, warnings, notes)
and one ``[[step]]`` per step. :func:`plan_toml_text` writes the text, :func:`write_plan` writes
a whole plan folder (``plan.toml``, ``jobs/<step>.fio`` and ``run.sh``) and :func:`read_plan`
reads ``plan.toml`` back (and validates it).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from zsim.calibrate.jobfiles import fio_jobfile_text, run_script_text
from zsim.calibrate.plan_types import (
    PURPOSES,
    TARGET_TYPES,
    TOOLS,
    Plan,
    PlanOptions,
    Step,
    check_options,
    is_number,
    plan_error,
)
from zsim.errors import ZsimError
from zsim.files import atomic_write_text
from zsim.toml_text import toml_value

PLAN_FILE = "plan.toml"
PLAN_FORMAT = 1

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_REPLAN = "re-create the plan with `zsim calibrate plan`"


# ---------------------------------------------------------------- plan.toml


def _toml_lines(table: Mapping[str, Any]) -> list[str]:
    """``key = value`` lines; None values are left out (TOML has no null)."""
    return [f"{key} = {toml_value(value)}" for key, value in table.items() if value is not None]


_PLAN_KEYS = (
    "target",
    "target_type",
    "data_path",
    "rotational",
    "device_name",
    "device_size",
    "ram_bytes",
    "created",
    "zsim_version",
    "hostname",
    "uname",
    "warnings",
    "notes",
)


def plan_toml_text(plan: Plan) -> str:
    """``plan.toml``: ``[plan]``, ``[plan.options]`` and one ``[[step]]`` per step."""
    head = {"format": PLAN_FORMAT} | {key: getattr(plan, key) for key in _PLAN_KEYS}
    lines = [
        f"# zsim calibration plan for {plan.target}: {len(plan.steps)} steps.",
        "# Run it with `zsim calibrate run <this folder>` (or bash run.sh). Sizes in bytes,",
        "# times in seconds, rates in bytes/s. Written by zsim; edit with care.",
        "",
        "[plan]",
        *_toml_lines(head),
        "",
        "[plan.options]",
        *_toml_lines({f.name: getattr(plan.options, f.name) for f in fields(PlanOptions)}),
    ]
    for step in plan.steps:
        lines += [
            "",
            "[[step]]",
            *_toml_lines({f.name: getattr(step, f.name) for f in fields(Step)}),
        ]
    return "\n".join(lines) + "\n"


def write_plan(plan: Plan, out_dir: str | os.PathLike[str]) -> Path:
    """Write ``plan.toml``, ``jobs/<step>.fio`` and ``run.sh`` into ``out_dir`` (created if
    needed; job files of steps no longer in the plan are removed) and return ``out_dir``.

    Refuses a folder that already holds results of a run, so results of two plans never mix.
    """
    out = Path(out_dir)
    results = out / "results"
    if results.is_dir() and any(p.suffix in (".json", ".txt") for p in results.iterdir()):
        raise plan_error(
            f"{out} already holds results of a calibration run",
            f"choose a new --out folder, or delete {results} first",
        )
    if out.exists() and not out.is_dir():
        raise plan_error(f"{out} exists and is not a folder", "choose another --out folder")
    jobs = out / "jobs"
    try:
        jobs.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise plan_error(
            f"cannot create {jobs} ({err.strerror})", "choose a writable --out folder"
        ) from None
    wanted = set()
    for step in plan.steps:
        if step.tool == "fio" and step.jobfile:
            wanted.add(Path(step.jobfile).name)
            atomic_write_text(out / step.jobfile, fio_jobfile_text(plan, step))
    for stale in jobs.glob("*.fio"):
        if stale.name not in wanted:
            stale.unlink()
    script = out / "run.sh"
    atomic_write_text(script, run_script_text(plan))
    script.chmod(0o755)
    atomic_write_text(out / PLAN_FILE, plan_toml_text(plan))
    return out


def read_plan(plan_dir: str | os.PathLike[str]) -> Plan:
    """Read and validate ``plan_dir/plan.toml``; :class:`ZsimError` naming the file and the
    problem on anything missing, mistyped or unknown."""
    path = Path(plan_dir) / PLAN_FILE
    where = str(path)
    if not path.is_file():
        raise plan_error(
            f"{where} does not exist",
            "give the folder that `zsim calibrate plan --out` wrote",
        )
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise plan_error(f"{where} is not valid TOML ({err})", _REPLAN) from None
    except OSError as err:
        raise plan_error(f"cannot read {where} ({err.strerror})", "check the permissions") from None
    try:
        return _plan_from_dict(data)
    except ZsimError as err:
        raise ZsimError(f"{where}: {err}") from None


def _take(
    table: Mapping[str, Any], key: str, kind: Any, where: str, *, optional: bool = False
) -> Any:
    if key not in table:
        if optional:
            return None
        raise plan_error(f"{where} has no {key!r}", _REPLAN)
    value = table[key]
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if kind is float:
        ok = is_number(value)
    if not ok:
        raise plan_error(f"{where}: {key} = {value!r} has the wrong type", _REPLAN)
    return value


def _no_unknown(table: Mapping[str, Any], known: Iterable[str], where: str) -> None:
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise plan_error(f"{where} has unknown keys {unknown}", "remove them or " + _REPLAN)


def _plan_from_dict(data: Mapping[str, Any]) -> Plan:
    _no_unknown(data, ("plan", "step"), "the file")
    head = _take(data, "plan", dict, "the file")
    if head.get("format") != PLAN_FORMAT:
        raise plan_error(
            f"[plan] format = {head.get('format')!r}, this zsim reads format {PLAN_FORMAT}",
            _REPLAN,
        )
    _no_unknown(head, ("format", "options", *_PLAN_KEYS), "[plan]")
    values: dict[str, Any] = {}
    for key in (
        "target",
        "target_type",
        "data_path",
        "created",
        "zsim_version",
        "hostname",
        "uname",
    ):
        values[key] = _take(head, key, str, "[plan]")
    if values["target_type"] not in TARGET_TYPES:
        raise plan_error(f"[plan] target_type {values['target_type']!r} is unknown", _REPLAN)
    values["rotational"] = _take(head, "rotational", bool, "[plan]", optional=True)
    values["device_name"] = _take(head, "device_name", str, "[plan]", optional=True)
    values["device_size"] = _take(head, "device_size", int, "[plan]", optional=True)
    values["ram_bytes"] = _take(head, "ram_bytes", int, "[plan]")
    for key in ("warnings", "notes"):
        items = _take(head, key, list, "[plan]", optional=True) or []
        if not all(isinstance(i, str) for i in items):
            raise plan_error(f"[plan] {key} must be a list of strings", _REPLAN)
        values[key] = tuple(items)
    options = _options_from_dict(_take(head, "options", dict, "[plan]"))
    raw_steps = data.get("step", [])
    if not isinstance(raw_steps, list) or not raw_steps:
        raise plan_error("the plan has no [[step]] tables", _REPLAN)
    steps = tuple(_step_from_dict(raw, index) for index, raw in enumerate(raw_steps, 1))
    seen: set[str] = set()
    for step in steps:
        if step.name in seen:
            raise plan_error(f"step name {step.name!r} appears twice", _REPLAN)
        seen.add(step.name)
    return Plan(options=options, steps=steps, **values)


def _options_from_dict(table: Mapping[str, Any]) -> PlanOptions:
    where = "[plan.options]"
    _no_unknown(table, (f.name for f in fields(PlanOptions)), where)
    kinds: dict[str, Any] = {
        "kind": str,
        "size": int,
        "runtime_s": float,
        "ramp_s": float,
        "zones": list,
        "zone_bytes": int,
        "depths_4k": list,
        "depths_large": list,
        "block_sizes": list,
        "long_write_bytes": int,
        "long_write_segments": int,
        "rate_bw": int,
        "rate_iops": int,
        "ioengine": str,
        "direct": bool,
        "include_writes": bool,
        "include_dd": bool,
        "allow_destroy": bool,
    }
    values: dict[str, Any] = {}
    for key, kind in kinds.items():
        value = _take(table, key, kind, where)
        values[key] = tuple(value) if isinstance(value, list) else value
    options = PlanOptions(**values)
    check_options(options)
    return options


def _step_from_dict(raw: Any, index: int) -> Step:
    where = f"[[step]] number {index}"
    if not isinstance(raw, dict):
        raise plan_error(f"{where} is not a table", _REPLAN)
    _no_unknown(raw, (f.name for f in fields(Step)), where)
    name = _take(raw, "name", str, where)
    if not _NAME.match(name):
        raise plan_error(
            f"{where}: step name {name!r} has characters outside A-Z a-z 0-9 . _ -", _REPLAN
        )
    where = f"step {name!r}"
    tool = _take(raw, "tool", str, where)
    purpose = _take(raw, "purpose", str, where)
    if tool not in TOOLS:
        raise plan_error(f"{where}: tool {tool!r} is not one of {', '.join(TOOLS)}", _REPLAN)
    if purpose not in PURPOSES:
        raise plan_error(f"{where}: purpose {purpose!r} is unknown", _REPLAN)
    jobfile = _take(raw, "jobfile", str, where, optional=True)
    argv = tuple(_take(raw, "argv", list, where, optional=True) or ())
    if not all(isinstance(a, str) for a in argv):
        raise plan_error(f"{where}: argv must be a list of strings", _REPLAN)
    if tool == "fio" and jobfile != f"jobs/{name}.fio":
        raise plan_error(f"{where}: jobfile must be 'jobs/{name}.fio', not {jobfile!r}", _REPLAN)
    if tool == "dd" and (jobfile is not None or not argv or argv[0] != "dd"):
        raise plan_error(
            f"{where}: a dd step needs argv starting with 'dd' and no jobfile", _REPLAN
        )
    values = {
        "name": name,
        "tool": tool,
        "purpose": purpose,
        "jobfile": jobfile,
        "argv": argv,
        "destructive": _take(raw, "destructive", bool, where),
        "description": _take(raw, "description", str, where, optional=True) or "",
        "rw": _take(raw, "rw", str, where, optional=True) or "",
        "timed": bool(_take(raw, "timed", bool, where, optional=True)),
    }
    for key, default in (("bs", 0), ("iodepth", 1), ("offset", 0), ("size", 0), ("segments", 1)):
        value = _take(raw, key, int, where, optional=True)
        value = default if value is None else value
        if value < 0 or (key in ("iodepth", "segments") and value < 1):
            raise plan_error(f"{where}: {key} = {value} is out of range", _REPLAN)
        values[key] = value
    return Step(**values)
