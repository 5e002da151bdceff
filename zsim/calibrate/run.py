"""Run a calibration plan (written by :mod:`zsim.calibrate.plan`) with the real fio and dd.

:func:`run_plan` runs every step of ``PLAN_DIR/plan.toml`` in order — ``fio --output-format=json
--output=<temp> jobs/<step>.fio`` or the plan's dd command, never through a shell — and stores
each result as ``PLAN_DIR/results/<step>.json``::

    {"zsim_result": 1, "step": …, "tool": "fio" | "dd", "purpose": …, "description": …,
     "shape": {rw, bs, iodepth, offset, size, timed, segments},
     "command": [...], "jobfile": "jobs/<step>.fio", "job": "<the job file's text>",
     "started": ISO time, "finished": ISO time, "elapsed_s": seconds,
     "uname": {system, node, release, version, machine}, "fio_version" | "dd_version": …,
     "plan": {target, data_path, target_type, rotational, device_name, device_size, size,
              kind, rate_bw, rate_iops, ioengine, direct, runtime_s, ramp_s, zsim_version},
     "returncode": int, "stderr": text,
     "fio_output": {fio's JSON} (or "fio_text" when it is not JSON) | "dd_text": dd's report}

Each file is written atomically (:func:`zsim.files.atomic_write_text`) when its step ends, and
fio writes into a temporary file that is removed if the run is interrupted, so Ctrl-C never
leaves a half-written result. A step whose result exists with return code 0 is skipped, so
running the plan again resumes where it stopped; a failed step is stored with its return code
and error text, then :func:`run_plan` raises :class:`ZsimError` naming it.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from zsim.calibrate.plan import (
    DATA_NAME,
    MARKER_SUFFIX,
    Plan,
    Step,
    read_plan,
)
from zsim.calibrate.plan_file import check_plan_digest, check_plan_safety
from zsim.calibrate.run_checks import (
    clean_parts,
    current_state,
    expected_state,
    recheck_device,
    recheck_target,
    save_state,
)
from zsim.errors import ZsimError
from zsim.files import RESULTS_LIMIT, TEXT_LIMIT, atomic_write_text, read_bytes, read_text

RESULT_FORMAT = 1
RESULTS_DIR = "results"

#: ``progress(index, total, step, state)``: index is 1-based among the steps selected for this
#: run; state is ``"start"``, ``"done"``, ``"skipped"`` (done by an earlier run) or
#: ``"failed"`` (just before :func:`run_plan` raises).
Progress = Callable[[int, int, Step, str], None]

_INSTALL = {
    "fio": "fio is not installed; install it (Debian/Ubuntu: apt-get install fio) and run again",
    "dd": "dd is not installed; install GNU coreutils (Debian/Ubuntu: apt-get install "
    "coreutils) and run again",
}


@dataclass(frozen=True)
class RunSummary:
    """What :func:`run_plan` did: the steps it ``ran`` and ``skipped`` (names, in plan order),
    the result file of every selected step (``results``), the wall time in ``seconds`` and the
    stale partial files of an interrupted earlier run it removed (``cleaned``, names)."""

    plan_dir: Path
    ran: tuple[str, ...]
    skipped: tuple[str, ...]
    results: tuple[Path, ...]
    seconds: float
    cleaned: tuple[str, ...] = ()


def result_path(plan_dir: str | os.PathLike[str], step: str) -> Path:
    """``PLAN_DIR/results/<step>.json``."""
    return Path(plan_dir) / RESULTS_DIR / f"{step}.json"


def result_is_complete(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` holds a finished, successful result: zsim's result with return code
    0 (and, for fio, a JSON output whose jobs all have error 0), or fio's own JSON output with
    no job errors (what ``run.sh`` stores)."""
    try:
        doc = json.loads(read_bytes(path, limit=RESULTS_LIMIT, what="result"))
    except (ValueError, RecursionError):  # ZsimError is a ValueError
        return False
    if not isinstance(doc, dict):
        return False
    if doc.get("zsim_result") == RESULT_FORMAT:
        if doc.get("returncode") != 0:
            return False
        return doc.get("tool") == "dd" or _fio_ok(doc.get("fio_output"))
    return "fio version" in doc and _fio_ok(doc)


def _fio_ok(output: Any) -> bool:
    if not isinstance(output, dict):
        return False
    jobs = output.get("jobs")
    return (
        isinstance(jobs, list)
        and bool(jobs)
        and all(isinstance(j, dict) and j.get("error", 0) == 0 for j in jobs)
    )


def run_plan(
    plan_dir: str | os.PathLike[str],
    *,
    fio: str | None = None,
    dd: str | None = None,
    progress: Progress | None = None,
    only: Sequence[str] | None = None,
) -> RunSummary:
    """Run the plan in ``plan_dir``; return what ran. See the module docstring for the files.

    ``fio``/``dd``: the programs to run (default: found on PATH). ``only``: run just these
    steps (plan order); the ``prepare`` step is added when its result is missing, because the
    other steps read the file it lays out. ``progress`` is called at every step's start and
    end (see :data:`Progress`; :func:`text_progress` makes one).

    Raises :class:`ZsimError` when the plan is invalid, a needed program is missing, a device
    now holds a filesystem (unless the plan allowed destroying it), or a step fails — after
    storing that step's result, so that running again resumes at it.
    """
    started = time.monotonic()
    plan_dir = Path(plan_dir)
    check_plan_digest(plan_dir)
    plan = read_plan(plan_dir)
    check_plan_safety(plan, plan_dir)
    if plan.target_state is None:
        raise ZsimError(
            f"{plan_dir} records no state of its target (made by an older zsim); re-create the "
            "plan with `zsim calibrate plan`"
        )
    steps = _select(plan, plan_dir, only)
    results_dir = plan_dir / RESULTS_DIR
    try:
        results_dir.mkdir(exist_ok=True)
    except OSError as err:
        raise ZsimError(
            f"cannot create {results_dir} ({err.strerror}); make {plan_dir} writable"
        ) from None
    with _lock(results_dir):
        cleaned = clean_parts(results_dir)
        done = {s.name for s in steps if result_is_complete(result_path(plan_dir, s.name))}
        pending = [s for s in steps if s.name not in done]
        programs = {
            tool: _program(tool, given)
            for tool, given in (("fio", fio), ("dd", dd))
            if any(s.tool == tool for s in pending)
        }
        recheck_device(plan, pending)
        for step in pending:
            if step.tool == "fio":
                _need_jobfile(plan_dir, step)
        expected, interrupted = expected_state(plan, results_dir)
        versions: dict[str, str] = {}
        ran: list[str] = []
        skipped: list[str] = []
        total = len(steps)
        for index, step in enumerate(steps, 1):
            path = result_path(plan_dir, step.name)
            if step.name in done:
                skipped.append(step.name)
                if progress:
                    progress(index, total, step, "skipped")
                continue
            recheck_target(plan, step, expected, identity_only=interrupted)
            if progress:
                progress(index, total, step, "start")
            program = programs[step.tool]
            if step.tool not in versions:
                versions[step.tool] = _version(program)
            save_state(results_dir, expected, running=step.name)
            doc = _run_step(plan, plan_dir, step, program, versions[step.tool])
            expected, interrupted = current_state(plan), False
            save_state(results_dir, expected, running=None)
            atomic_write_text(path, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
            problem = _failure(step, doc)
            if problem is not None:
                if progress:
                    progress(index, total, step, "failed")
                raise ZsimError(
                    f"step {step.name} failed ({problem}); its output and the results so far "
                    f"are in {results_dir}; fix the cause and run `zsim calibrate run "
                    f"{plan_dir}` again to resume from this step"
                )
            if step.purpose == "prepare":
                _mark_own(plan, plan_dir)
            ran.append(step.name)
            if progress:
                progress(index, total, step, "done")
    return RunSummary(
        plan_dir=plan_dir,
        ran=tuple(ran),
        skipped=tuple(skipped),
        results=tuple(result_path(plan_dir, s.name) for s in steps),
        seconds=time.monotonic() - started,
        cleaned=cleaned,
    )


def _select(plan: Plan, plan_dir: Path, only: Sequence[str] | None) -> list[Step]:
    if only is None:
        return list(plan.steps)
    if isinstance(only, str):
        only = [only]
    known = {s.name for s in plan.steps}
    unknown = [name for name in only if name not in known]
    if unknown:
        names = ", ".join(s.name for s in plan.steps)
        raise ZsimError(f"the plan has no step {unknown[0]!r}; its steps are: {names}")
    wanted = set(only)
    prepare = [s for s in plan.steps if s.purpose == "prepare"]
    if prepare and not result_is_complete(result_path(plan_dir, prepare[0].name)):
        wanted.add(prepare[0].name)
    return [s for s in plan.steps if s.name in wanted]


@contextlib.contextmanager
def _lock(results_dir: Path) -> Iterator[None]:
    """Hold ``results/.lock`` so that two runs of one plan cannot interleave."""
    with open(results_dir / ".lock", "w", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise ZsimError(
                f"another `zsim calibrate run` is using {results_dir.parent}; wait for it to "
                "finish (or stop it) and run again"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _program(tool: str, given: str | None) -> str:
    """The path of ``tool`` (``given`` or found on PATH); ZsimError when it is missing."""
    if given is None:
        found = shutil.which(tool)
        if found is None:
            raise ZsimError(_INSTALL[tool])
        return found
    found = shutil.which(given)
    if found is None:
        raise ZsimError(
            f"{tool} program {given!r} is not an executable file; give the path of {tool} "
            f"or leave it out to use the one on PATH"
        )
    return found


def _version(program: str) -> str:
    """The first line of ``program --version`` (``fio-3.33``, ``dd (coreutils) 9.1``)."""
    try:
        done = subprocess.run(
            [program, "--version"],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=30,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    for line in (done.stdout + "\n" + done.stderr).splitlines():
        if line.strip():
            return line.strip()
    return "unknown"


def _need_jobfile(plan_dir: Path, step: Step) -> None:
    if step.jobfile is None or not (plan_dir / step.jobfile).is_file():
        raise ZsimError(
            f"{plan_dir / (step.jobfile or step.name)} is missing; re-create the plan with "
            "`zsim calibrate plan`"
        )


def _mark_own(plan: Plan, plan_dir: Path) -> None:
    """Leave ``<file>.zsim-calibrate`` beside a file target zsim has laid out, so that a later
    plan may overwrite it without ``--destroy-data``."""
    if plan.target_type != "file" or Path(plan.data_path).name == DATA_NAME:
        return
    marker = Path(plan.data_path + MARKER_SUFFIX)
    with contextlib.suppress(OSError):
        atomic_write_text(
            marker,
            f"{plan.data_path} was laid out by `zsim calibrate run {plan_dir}` at "
            f"{_now()}; zsim may overwrite it. Delete this file with it.\n",
        )


def _now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def _uname() -> dict[str, str]:
    u = platform.uname()
    return {
        "system": u.system,
        "node": u.node,
        "release": u.release,
        "version": u.version,
        "machine": u.machine,
    }


def _plan_summary(plan: Plan) -> dict[str, Any]:
    o = plan.options
    return {
        "target": plan.target,
        "data_path": plan.data_path,
        "target_type": plan.target_type,
        "rotational": plan.rotational,
        "device_name": plan.device_name,
        "device_size": plan.device_size,
        "size": o.size,
        "kind": o.kind,
        "rate_bw": o.rate_bw,
        "rate_iops": o.rate_iops,
        "ioengine": o.ioengine,
        "direct": o.direct,
        "runtime_s": o.runtime_s,
        "ramp_s": o.ramp_s,
        "zsim_version": plan.zsim_version,
    }


def _run_step(plan: Plan, plan_dir: Path, step: Step, program: str, version: str) -> dict[str, Any]:
    """Run one step and return its result document (not yet written)."""
    doc: dict[str, Any] = {
        "zsim_result": RESULT_FORMAT,
        "step": step.name,
        "tool": step.tool,
        "purpose": step.purpose,
        "description": step.description,
        "shape": {
            "rw": step.rw,
            "bs": step.bs,
            "iodepth": step.iodepth,
            "offset": step.offset,
            "size": step.size,
            "timed": step.timed,
            "segments": step.segments,
        },
    }
    results_dir = plan_dir / RESULTS_DIR
    began = _now()
    clock = time.monotonic()
    if step.tool == "fio":
        assert step.jobfile is not None
        fd, temp = tempfile.mkstemp(prefix=f".{step.name}.", suffix=".fio.part", dir=results_dir)
        os.close(fd)
        command = [program, "--output-format=json", f"--output={temp}", step.jobfile]
        try:
            returncode, stdout, stderr = _execute(command, plan_dir)
            text = read_bytes(temp, limit=RESULTS_LIMIT, what="fio output").decode(
                "utf-8", errors="replace"
            )
        finally:
            Path(temp).unlink(missing_ok=True)
        doc["command"] = [program, "--output-format=json", "--output=<temporary file>"]
        doc["command"].append(step.jobfile)
        doc["jobfile"] = step.jobfile
        doc["job"] = read_text(plan_dir / step.jobfile, limit=TEXT_LIMIT, what="fio job file")
        doc["fio_version"] = version
        output, notes = _decode_fio(text)
        extra: dict[str, Any] = {}
        if output is not None:
            extra["fio_output"] = output
            if notes:
                extra["fio_notes"] = notes
        else:
            extra["fio_text"] = text
        if stdout.strip():
            extra["stdout"] = stdout
    else:
        command = [program, *step.argv[1:]]
        returncode, stdout, stderr = _execute(command, plan_dir)
        doc["command"] = command
        doc["dd_version"] = version
        extra = {"dd_text": stderr}
        if stdout.strip():
            extra["stdout"] = stdout
    doc |= {
        "started": began,
        "finished": _now(),
        "elapsed_s": round(time.monotonic() - clock, 3),
        "uname": _uname(),
        "plan": _plan_summary(plan),
        "returncode": returncode,
        "stderr": stderr,
        **extra,
    }
    return doc


def _execute(command: list[str], cwd: Path) -> tuple[int, str, str]:
    """Run ``command`` (no shell) in ``cwd``; (return code, stdout, stderr). On Ctrl-C or any
    other interruption the child is stopped before the exception goes on."""
    try:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
        )
    except OSError as err:
        return 127, "", f"{command[0]}: cannot run it ({err.strerror})\n"
    try:
        stdout, stderr = process.communicate()
    except BaseException:
        _stop(process)
        raise
    return process.returncode, stdout, stderr


def _stop(process: subprocess.Popen[str]) -> None:
    """Stop a child after Ctrl-C: SIGINT (fio ends its jobs cleanly), then SIGTERM, SIGKILL."""
    for sig, wait in ((signal.SIGINT, 10.0), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        if process.poll() is not None:
            return
        with contextlib.suppress(OSError):
            process.send_signal(sig)
        try:
            process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue


def _decode_fio(text: str) -> tuple[dict[str, Any] | None, str]:
    """fio's JSON object from its output file, and any text fio printed before it (fio puts
    warnings there); (None, "") when there is no JSON object."""
    stripped = text.strip()
    if not stripped:
        return None, ""
    decoder = json.JSONDecoder()
    starts = [0] + [m.start() + 1 for m in re.finditer(r"\n\{", text)]
    for start in starts:
        at = text.find("{", start)
        if at < 0:
            break
        try:
            value, _ = decoder.raw_decode(text, at)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value, text[:at].strip()
    return None, ""


def _failure(step: Step, doc: dict[str, Any]) -> str | None:
    """Why the step failed, in a few words and its error line; None when it succeeded."""
    returncode = doc["returncode"]
    if returncode != 0:
        what = f"{step.tool} exit {returncode}" if returncode > 0 else f"{step.tool} killed"
        if returncode < 0:
            with contextlib.suppress(ValueError):
                what += f" by {signal.Signals(-returncode).name}"
        return f"{what}: {_error_line(doc)}"
    if step.tool == "fio":
        if "fio_output" not in doc:
            return "fio exited 0 but wrote no JSON result: " + _error_line(doc)
        if not _fio_ok(doc["fio_output"]):
            codes = [j.get("error") for j in doc["fio_output"].get("jobs", []) or []]
            return f"fio reported job errors {codes}: {_error_line(doc)}"
    return None


def _error_line(doc: dict[str, Any]) -> str:
    """The most telling line of a failed tool's output."""
    text = "\n".join(str(doc.get(k, "")) for k in ("stderr", "fio_text", "stdout"))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    telling = [line for line in lines if re.search(r"(?i)error|err=|fio:|dd:|fail|invalid", line)]
    line = (telling or lines or ["no error message"])[-1 if not telling else 0]
    return line if len(line) <= 300 else line[:297] + "…"


# ---------------------------------------------------------------- progress


def text_progress(stream: TextIO | None = None) -> Progress:
    """A progress callback printing one line per step to ``stream`` (default stderr)::

        [3/40] randread-4k-qd8 (random 4K read, QD8) … done in 21.3 s

    On a terminal it shows rich's progress bar as well (when rich is installed).
    """
    stream = stream if stream is not None else sys.stderr
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        try:
            return _RichProgress(stream)
        except ImportError:
            pass
    return _TextProgress(stream)


def _label(index: int, total: int, step: Step) -> str:
    about = f" ({step.description})" if step.description else ""
    return f"[{index}/{total}] {step.name}{about} …"


def _ending(state: str, seconds: float | None) -> str:
    took = f" after {seconds:.1f} s" if seconds is not None else ""
    if state == "done":
        return f"done in {seconds:.1f} s" if seconds is not None else "done"
    if state == "skipped":
        return "skipped (done before)"
    return f"{state}{took}"


class _TextProgress:
    """Plain lines: the label when a step starts, its ending on the same line when it ends."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.open: tuple[int, float] | None = None  # index and start time of the running step

    def __call__(self, index: int, total: int, step: Step, state: str) -> None:
        if state == "start":
            self.stream.write(_label(index, total, step) + " ")
            self.stream.flush()
            self.open = (index, time.monotonic())
            return
        seconds = None
        if self.open is not None and self.open[0] == index:
            seconds = time.monotonic() - self.open[1]
        else:
            if self.open is not None:
                self.stream.write("\n")
            self.stream.write(_label(index, total, step) + " ")
        self.open = None
        self.stream.write(_ending(state, seconds) + "\n")
        self.stream.flush()


class _RichProgress:
    """rich's bar for the whole plan, and one printed line per finished step."""

    def __init__(self, stream: TextIO):
        # rich only for the live bar of an interactive run
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = Console(file=stream)
        self.bar = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            refresh_per_second=2,
        )
        self.task: Any = None
        self.began = 0.0
        atexit.register(self.bar.stop)

    def __call__(self, index: int, total: int, step: Step, state: str) -> None:
        if self.task is None:
            self.task = self.bar.add_task("calibration", total=total)
            self.bar.start()
        if state == "start":
            self.began = time.monotonic()
            self.bar.update(self.task, description=f"{step.name} ({step.description})")
            return
        seconds = time.monotonic() - self.began if state in ("done", "failed") else None
        line = _label(index, total, step) + " " + _ending(state, seconds)
        self.bar.console.print(line, markup=False, highlight=False)
        if state != "failed":
            self.bar.advance(self.task)
        if state == "failed" or index == total:
            self.bar.stop()


__all__ = [
    "RESULT_FORMAT",
    "Progress",
    "RunSummary",
    "result_is_complete",
    "result_path",
    "run_plan",
    "text_progress",
]
