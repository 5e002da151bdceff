"""What :func:`~zsim.calibrate.plan.write_plan` writes to run a plan: ``jobs/<step>.fio``,
one fio job file per fio step (:func:`fio_jobfile_text`, with the rate caps of
:func:`rate_cap_iops`), and ``run.sh``, a bash script that runs every step, storing
``results/<step>.json`` (fio's JSON) and ``results/<step>.dd.txt`` (dd's report)
(:func:`run_script_text`). ``zsim calibrate run`` (:mod:`.run`) does the same with progress,
richer result files and resume.
"""

from __future__ import annotations

import re
import shlex

from zsim.calibrate.plan_types import ALIGN, FIO_ENGINES, Plan, PlanOptions, Step
from zsim.errors import ZsimError
from zsim.units import format_time

# ---------------------------------------------------------------- fio job files


def _fio_value(text: str) -> str:
    """A fio filename: ':' separates several files, so a literal ':' is written '\\:'."""
    return text.replace(":", "\\:")


def _fio_time(seconds: float) -> str:
    """fio times: whole seconds as ``20``, fractions as milliseconds (``1500ms``)."""
    if float(seconds).is_integer():
        return str(int(seconds))
    return f"{round(seconds * 1000)}ms"


def rate_cap_iops(options: PlanOptions, bs: int) -> int | None:
    """The ``rate_iops=`` a job of ``bs`` bytes gets when an IOPS cap is set: the IOPS cap,
    or the bandwidth cap / bs when that is tighter (at least 1). None: no IOPS cap (a
    bandwidth cap alone is written as fio's ``rate=``)."""
    if not options.rate_iops:
        return None
    cap = options.rate_iops
    if options.rate_bw and bs > 0:
        cap = min(cap, options.rate_bw // bs)
    return max(1, int(cap))


def fio_jobfile_text(plan: Plan, step: Step) -> str:
    """The fio job file of ``step``: a ``[global]`` section for the target and one job section
    named after the step (the long write: one stonewalled section per segment)."""
    if step.tool != "fio":
        raise ZsimError(f"step {step.name} runs {step.tool}, not fio; it has no job file")
    o = plan.options
    lines = [
        f"; zsim calibration step {step.name}: {step.description}",
        f"; purpose {step.purpose}; plan for {plan.target} ({plan.target_type}), "
        f"zsim {plan.zsim_version}, {plan.created}",
    ]
    if step.destructive:
        lines.append(f"; WARNING: writes to {plan.data_path} and destroys the data there")
    lines += [
        "[global]",
        f"ioengine={o.ioengine}",
        f"direct={int(o.direct)}",
        f"filename={_fio_value(plan.data_path)}",
        "group_reporting=1",
    ]
    if step.timed:
        lines += ["time_based=1", f"runtime={_fio_time(o.runtime_s)}"]
        if o.ramp_s:
            lines.append(f"ramp_time={_fio_time(o.ramp_s)}")
    if step.purpose != "prepare":  # laying the file out is not a measurement: full speed
        cap = rate_cap_iops(o, step.bs)
        if cap is not None:
            lines.append(f"rate_iops={cap}")
        elif o.rate_bw:
            lines.append(f"rate={o.rate_bw}")
    if step.purpose == "long-write":
        # Stonewalled segments run one after another and each starts a new reporting group,
        # so fio reports every segment's bandwidth on its own: the write-cache cliff is the
        # segment where bandwidth drops.
        # Segments are whole MiB; the last one takes what is left over.
        segment = step.size // step.segments // ALIGN * ALIGN
        for index in range(step.segments):
            last = index == step.segments - 1
            lines += [
                "",
                f"[{step.name}-seg{index}]",
                f"rw={step.rw}",
                f"bs={step.bs}",
                f"iodepth={step.iodepth}",
                f"offset={step.offset + index * segment}",
                f"size={step.size - index * segment if last else segment}",
                "stonewall",
            ]
        return _checked("\n".join(lines) + "\n", plan, step)
    lines += [
        "",
        f"[{step.name}]",
        f"rw={step.rw}",
        f"bs={step.bs}",
        f"iodepth={step.iodepth}",
        f"offset={step.offset}",
        f"size={step.size}",
    ]
    if step.rw.startswith("rand"):
        # time-based random I/O: no map of visited blocks, a fresh seed per run, and a
        # generator that reaches every block of a large device
        lines += ["norandommap=1", "randrepeat=0", "random_generator=tausworthe64"]
    if step.purpose == "sync-latency":
        lines += ["ioengine=psync", "sync=1"]
    return _checked("\n".join(lines) + "\n", plan, step)


def _checked(text: str, plan: Plan, step: Step) -> str:
    problem = jobfile_problem(text, plan, step)
    if problem is not None:
        raise ZsimError(
            f"cannot write a safe job file for step {step.name} ({problem}); check the plan's "
            "options and re-plan"
        )
    return text


# ---------------------------------------------------------------- the job file whitelist

#: The only options a zsim job file holds, with the pattern of their values (None: no value).
#: Anything else — ``exec_prerun``, ``include``, a second ``filename`` — is refused, at plan
#: time and again by ``zsim calibrate run`` before fio sees the file.
_NUMBER = re.compile(r"^[0-9]{1,20}$")
_TIME = re.compile(r"^[0-9]{1,20}(ms)?$")
_FIO_OPTIONS: dict[str, re.Pattern[str] | None] = {
    "ioengine": re.compile("^(" + "|".join(FIO_ENGINES) + ")$"),
    "direct": re.compile("^[01]$"),
    "group_reporting": re.compile("^1$"),
    "time_based": re.compile("^1$"),
    "runtime": _TIME,
    "ramp_time": _TIME,
    "rate_iops": _NUMBER,
    "rate": _NUMBER,
    "rw": re.compile("^(read|write|randread|randwrite)$"),
    "bs": _NUMBER,
    "iodepth": _NUMBER,
    "offset": _NUMBER,
    "size": _NUMBER,
    "stonewall": None,
    "norandommap": re.compile("^1$"),
    "randrepeat": re.compile("^0$"),
    "random_generator": re.compile("^tausworthe64$"),
    "sync": re.compile("^1$"),
}


def jobfile_problem(text: str, plan: Plan, step: Step) -> str | None:
    """What makes ``text`` something other than a zsim job file for ``step`` of ``plan``, in a
    few words; None when every line is a comment, a section named after the step (or
    ``global``) or a whitelisted option, and ``filename`` is the plan's data path."""
    sections = {"global", step.name} | {f"{step.name}-seg{i}" for i in range(step.segments)}
    filename = _fio_value(plan.data_path)
    seen_filename = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("[") and line.endswith("]"):
            if line[1:-1] not in sections:
                return f"line {number}: section [{line[1:-1][:40]}] is not this step's"
            continue
        key, eq, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if key == "filename":
            if value != filename:
                return f"line {number}: filename is not the plan's target {plan.data_path}"
            seen_filename = True
            continue
        if key not in _FIO_OPTIONS:
            return f"line {number}: option {key[:40]!r} is not one zsim writes"
        pattern = _FIO_OPTIONS[key]
        if (pattern is None) != (not eq) or (pattern is not None and not pattern.match(value)):
            return f"line {number}: {key} has a value zsim does not write"
    if not seen_filename:
        return "it names no filename"
    return None


# ---------------------------------------------------------------- run.sh


def run_script_text(plan: Plan) -> str:
    """``run.sh``: bash that runs every step in order and skips steps already done."""
    q = shlex.quote
    o = plan.options
    destructive = [s for s in plan.steps if s.destructive]
    lines = [
        "#!/usr/bin/env bash",
        f"# zsim calibration plan: {len(plan.steps)} steps measuring {plan.target} "
        f"({plan.target_type}, kind {o.kind}).",
        f"# Written by zsim {plan.zsim_version} on {plan.hostname} at {plan.created}.",
        "#",
        "# What it does: runs the fio jobs in jobs/ and the dd commands below in order, storing",
        "# each result as results/<step>.json (fio --output-format=json) or results/<step>.dd.txt",
        "# (dd's report). A step whose result exists is skipped, so a stopped run resumes.",
        "# `zsim calibrate run <this folder>` does the same with progress and fuller results.",
        f"# Timed steps take about {format_time(plan.timed_seconds)}; the long and dd writes "
        "come on top.",
        "#",
    ]
    if destructive:
        lines += [
            f"# WARNING: {len(destructive)} steps WRITE to {plan.data_path} and DESTROY the "
            "data on it.",
            "# Set ZSIM_CONFIRM_DESTROY to that path to run without being asked.",
        ]
    else:
        lines.append(f"# It writes only to zsim's own data ({plan.data_path}), if at all.")
    lines += [
        "",
        "set -euo pipefail",
        'cd "$(dirname "$0")"',
        "mkdir -p results",
        'FIO="${FIO:-fio}"',
        'DD="${DD:-dd}"',
        "",
    ]
    if destructive:
        target = q(plan.data_path)
        lines += [
            f'if [ "${{ZSIM_CONFIRM_DESTROY:-}}" != {target} ]; then',
            f"  echo 'This plan overwrites '{target}' and destroys its data.' >&2",
            "  answer=''",
            f"  if [ -t 0 ]; then read -r -p 'Type '{target}' to go on: ' answer; fi",
            f'  if [ "$answer" != {target} ]; then',
            f"    echo 'not confirmed; set ZSIM_CONFIRM_DESTROY='{target}' to run' >&2",
            "    exit 1",
            "  fi",
            "fi",
            "",
        ]
    lines += [
        "done_already() {  # a result file that exists and does not record a failure",
        '  [ -s "$1" ] && ! grep -q \'"returncode": -\\?[1-9]\' "$1"',
        "}",
        "",
        "run_fio() {  # step name",
        '  if done_already "results/$1.json"; then echo "skip $1"; return 0; fi',
        '  echo "run  $1"',
        '  "$FIO" --output-format=json --output="results/.$1.json.part" "jobs/$1.fio"',
        '  mv "results/.$1.json.part" "results/$1.json"',
        "}",
        "",
        "run_dd() {  # step name, dd arguments",
        "  local name=$1",
        "  shift",
        '  if [ -s "results/$name.dd.txt" ]; then echo "skip $name"; return 0; fi',
        '  echo "run  $name"',
        '  "$DD" "$@" 2> "results/.$name.dd.txt.part"',
        '  mv "results/.$name.dd.txt.part" "results/$name.dd.txt"',
        "}",
        "",
    ]
    for step in plan.steps:
        lines.append(f"# {step.name}: {step.description}")
        if step.tool == "fio":
            lines.append(f"run_fio {q(step.name)}")
        else:
            lines.append(f"run_dd {q(step.name)} " + " ".join(q(a) for a in step.argv[1:]))
    lines += ["", 'echo "all steps done; results in $(pwd)/results"', ""]
    return "\n".join(lines)
