"""``plan.toml``: a ``[plan]`` table (target, device, host, resolved options, warnings, notes)
and one ``[[step]]`` per step. :func:`plan_toml_text` writes the text, :func:`write_plan` writes
a whole plan folder (``plan.toml``, ``jobs/<step>.fio`` and ``run.sh``) and :func:`read_plan`
reads ``plan.toml`` back (and validates it).
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from zsim.calibrate.jobfiles import fio_jobfile_text, jobfile_problem, run_script_text
from zsim.calibrate.plan_types import (
    PURPOSES,
    TARGET_TYPES,
    TOOLS,
    Plan,
    PlanOptions,
    Step,
    TargetState,
    check_options,
    is_number,
    plan_error,
)
from zsim.errors import ZsimError
from zsim.files import TEXT_LIMIT, TOML_LIMIT, atomic_write_text, read_bytes, read_text
from zsim.toml_text import toml_value

PLAN_FILE = "plan.toml"
PLAN_FORMAT = 1
#: ``sha256sum``-style digests of ``plan.toml``, ``run.sh`` and every ``jobs/*.fio``, written
#: with the plan; ``zsim calibrate run`` refuses a folder whose files no longer match it.
DIGEST_FILE = "plan.sha256"
#: What a dd step may read from (besides the target) and write to (besides the target).
DD_SOURCES = ("/dev/zero", "/dev/urandom")
DD_SINKS = ("/dev/null",)

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
    if plan.target_state is not None:
        state = plan.target_state
        lines += [
            "",
            "# what the target looked like at planning; `zsim calibrate run` refuses a target",
            "# that changed since (identity numbers in hex, sha256 of its first MiB)",
            "[plan.target_state]",
            *_toml_lines(
                {
                    "exists": state.exists,
                    "size": state.size,
                    "dev": f"{state.dev:x}",
                    "ino": f"{state.ino:x}",
                    "rdev": f"{state.rdev:x}",
                    "sha256": state.sha256,
                }
            ),
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
    atomic_write_text(out / DIGEST_FILE, _digest_text(out))
    return out


# ---------------------------------------------------------------- the digest


def _digested_files(plan_dir: Path) -> list[str]:
    """The files the digest covers, relative to the plan folder, sorted."""
    names = [PLAN_FILE, "run.sh"]
    jobs = plan_dir / "jobs"
    if jobs.is_dir():
        names += [f"jobs/{p.name}" for p in jobs.iterdir()]
    return sorted(names)


def _sha256(path: Path) -> str:
    return hashlib.sha256(read_bytes(path, limit=TOML_LIMIT, what="plan file")).hexdigest()


def _digest_text(plan_dir: Path) -> str:
    return "".join(f"{_sha256(plan_dir / n)}  {n}\n" for n in _digested_files(plan_dir))


def check_plan_digest(plan_dir: str | os.PathLike[str]) -> None:
    """Raise :class:`ZsimError` unless ``plan_dir`` holds exactly the ``plan.toml``, ``run.sh``
    and job files that ``plan.sha256`` lists, each with its recorded sha256 — so that an
    edited step or job file is never run. (The digest catches edits, not a forger who rewrites
    it too; :func:`check_plan_safety` limits what any plan can do.)"""
    folder = Path(plan_dir)
    digest = folder / DIGEST_FILE
    fix = "re-create the plan with `zsim calibrate plan` (a changed plan is never run)"
    if not digest.exists():
        raise plan_error(f"{folder} has no {DIGEST_FILE} (made by an older zsim, or altered)", fix)
    recorded: dict[str, str] = {}
    for line in read_text(digest, limit=TEXT_LIMIT, what="plan digest").splitlines():
        m = re.fullmatch(r"([0-9a-f]{64})  (\S+)", line)
        if m is None:
            raise plan_error(f"{digest} is not a list of sha256 digests", fix)
        recorded[m.group(2)] = m.group(1)
    present = _digested_files(folder)
    if sorted(recorded) != present:
        extra = sorted(set(present) - set(recorded)) or sorted(set(recorded) - set(present))
        raise plan_error(
            f"the files of {folder} are not those the plan was made with ({extra[0][:80]} differs)",
            fix,
        )
    for name in present:
        if _sha256(folder / name) != recorded[name]:
            raise plan_error(f"{folder / name} changed since the plan was made", fix)


def check_plan_safety(plan: Plan, plan_dir: str | os.PathLike[str]) -> None:
    """Raise :class:`ZsimError` unless every step does only what zsim plans: fio job files
    that pass the whitelist (:func:`~zsim.calibrate.jobfiles.jobfile_problem`) and dd
    commands that copy from the target to /dev/null or from /dev/zero (or /dev/urandom) to
    the target, with no other options than zsim's."""
    folder = Path(plan_dir)
    for step in plan.steps:
        if step.tool == "fio":
            assert step.jobfile is not None  # read_plan: every fio step has its job file
            path = folder / step.jobfile
            text = read_text(path, limit=TEXT_LIMIT, what="fio job file")
            problem = jobfile_problem(text, plan, step)
            if problem is not None:
                raise plan_error(f"refusing to run {path}: {problem}", _REPLAN)
        else:
            problem = _dd_problem(plan, step)
            if problem is not None:
                raise plan_error(f"refusing to run step {step.name}: {problem}", _REPLAN)


_DD_OPTIONS = re.compile(
    r"^(bs=[0-9]{1,12}[KMG]?|count=[0-9]{1,20}|iflag=direct|oflag=direct|conv=fsync,notrunc)$"
)


def _dd_problem(plan: Plan, step: Step) -> str | None:
    args = list(step.argv[1:])
    inputs = [a[3:] for a in args if a.startswith("if=")]
    outputs = [a[3:] for a in args if a.startswith("of=")]
    others = [a for a in args if not a.startswith(("if=", "of="))]
    if len(inputs) != 1 or len(outputs) != 1:
        return "a dd step needs exactly one if= and one of="
    source, sink = inputs[0], outputs[0]
    reads = source == plan.data_path and sink in DD_SINKS
    writes = source in DD_SOURCES and sink == plan.data_path
    if not (reads or writes):
        return f"dd must copy the target {plan.data_path} to /dev/null, or /dev/zero to the target"
    if writes and not step.writes:
        return "a dd step that writes to the target must say rw = 'write'"
    bad = [a for a in others if not _DD_OPTIONS.match(a)]
    if bad:
        return f"dd option {bad[0][:40]!r} is not one zsim uses"
    return None


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
    text = read_text(path, limit=TOML_LIMIT, what="plan")
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as err:
        raise plan_error(f"{where} is not valid TOML ({str(err)[:200]})", _REPLAN) from None
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
    _no_unknown(head, ("format", "options", "target_state", *_PLAN_KEYS), "[plan]")
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
    state = _take(head, "target_state", dict, "[plan]", optional=True)
    values["target_state"] = None if state is None else _state_from_dict(state)
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


def _state_from_dict(table: Mapping[str, Any]) -> TargetState:
    where = "[plan.target_state]"
    _no_unknown(table, (f.name for f in fields(TargetState)), where)
    numbers = {}
    for key in ("dev", "ino", "rdev"):
        text = _take(table, key, str, where)
        if not re.fullmatch(r"[0-9a-f]{1,16}", text):
            raise plan_error(f"{where}: {key} = {text[:40]!r} is not a hex number", _REPLAN)
        numbers[key] = int(text, 16)
    sha = _take(table, "sha256", str, where)
    if not re.fullmatch(r"([0-9a-f]{64})?", sha):
        raise plan_error(f"{where}: sha256 is not a sha256 digest", _REPLAN)
    size = _take(table, "size", int, where)
    if size < 0:
        raise plan_error(f"{where}: size = {size} is out of range", _REPLAN)
    return TargetState(exists=_take(table, "exists", bool, where), size=size, sha256=sha, **numbers)


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
