"""``zsim.calibrate.run`` with the real fio and dd on a tiny plan in a temporary folder: every
step stores a result, a second run resumes, a failing step is kept and resumed after, and
Ctrl-C leaves no partial file. The whole file takes about half a minute."""

from __future__ import annotations

import contextlib
import io
import json
import mmap
import os
import re
import signal
from dataclasses import replace
from pathlib import Path

import pytest

from tests.conftest import need_tool
from zsim.calibrate.plan import PlanOptions, Step, make_plan, write_plan
from zsim.calibrate.run import result_is_complete, result_path, run_plan, text_progress
from zsim.errors import ZsimError

MiB = 2**20
TINY = PlanOptions(
    size=64 * MiB,
    runtime_s=1.0,
    ramp_s=0.0,
    zones=(0.0, 0.95),
    depths_4k=(1, 4),
    depths_large=(1,),
    block_sizes=(4096, MiB),
    long_write_bytes=32 * MiB,
    long_write_segments=4,
)


def direct_io_works(folder: Path) -> bool:
    """O_DIRECT is refused by some filesystems (tmpfs before Linux 6.6, overlayfs on some)."""
    probe = folder / ".direct-probe"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_WRONLY | getattr(os, "O_DIRECT", 0), 0o600)
    except OSError:
        return False
    try:
        os.write(fd, mmap.mmap(-1, 4096))  # page-aligned buffer
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
        probe.unlink(missing_ok=True)


def tiny_plan(tmp_path: Path, **changes) -> Path:
    target = tmp_path / "target"
    target.mkdir(exist_ok=True)
    options = replace(TINY, direct=direct_io_works(target), **changes)
    return write_plan(make_plan(str(target), options), tmp_path / "plan")


def fake_tool(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(0o755)
    return str(path)


def test_run_plan_stores_every_result_and_resumes(tmp_path):
    need_tool("fio", "runs the calibration jobs")
    need_tool("dd", "runs the dd steps")
    plan_dir = tiny_plan(tmp_path)
    events: list[tuple[int, int, str, str]] = []
    summary = run_plan(
        plan_dir, progress=lambda i, n, step, state: events.append((i, n, step.name, state))
    )
    names = [json.loads(p.read_text())["step"] for p in summary.results]
    assert list(summary.ran) == names and summary.skipped == ()
    # prepare, 2 + 2 zones, (2 + 1) × 2 random, short-seek, cache-hit, sync, long write, 2 dd
    assert len(names) == 17
    total = len(names)
    assert events == [
        (i, total, name, state) for i, name in enumerate(names, 1) for state in ("start", "done")
    ]
    for path in summary.results:
        doc = json.loads(path.read_text())
        assert doc["zsim_result"] == 1 and doc["returncode"] == 0, doc.get("stderr")
        assert result_is_complete(path)
        assert set(doc["uname"]) == {"system", "node", "release", "version", "machine"}
        assert doc["started"] <= doc["finished"] and doc["elapsed_s"] >= 0
        assert doc["plan"]["size"] == 64 * MiB and doc["plan"]["target_type"] == "directory"
        assert doc["command"][0].endswith(doc["tool"])
        if doc["tool"] == "fio":
            assert doc["fio_version"].startswith("fio")
            assert doc["job"].startswith("; zsim calibration step")
            jobs = doc["fio_output"]["jobs"]
            direction = "write" if doc["shape"]["rw"] in ("write", "randwrite") else "read"
            assert jobs and all(job[direction]["bw_bytes"] > 0 for job in jobs), doc["step"]
            if doc["step"] == "long-write":
                assert [j["jobname"] for j in jobs] == [f"long-write-seg{i}" for i in range(4)]
        else:
            assert "copied" in doc["dd_text"] and doc["dd_version"]
    assert not list((plan_dir / "results").glob(".*.part"))

    # resume: only the two steps whose results are gone run again
    gone = ["randread-4k-qd4", "dd-read"]
    for name in gone:
        result_path(plan_dir, name).unlink()
    again = run_plan(plan_dir)
    assert list(again.ran) == gone
    assert set(again.skipped) == set(names) - set(gone) and len(again.skipped) == total - 2


def test_failed_step_is_kept_and_the_run_resumes(tmp_path):
    real_fio = need_tool("fio", "runs the calibration jobs")
    plan_dir = tiny_plan(
        tmp_path,
        zones=(0.0,),
        depths_4k=(1,),
        block_sizes=(4096,),
        include_writes=False,
        include_dd=False,
    )
    broken = fake_tool(
        tmp_path,
        "fio",
        'case "${@: -1}" in\n'
        '  *randread*) echo "fio: randread job: fake failure for the test" >&2; exit 1;;\n'
        "esac\n"
        f'exec {real_fio} "$@"\n',
    )
    with pytest.raises(ZsimError) as err:
        run_plan(plan_dir, fio=broken)
    message = str(err.value)
    assert "randread-4k-qd1" in message and "fake failure" in message
    assert str(plan_dir / "results") in message and "resume" in message
    failed = json.loads(result_path(plan_dir, "randread-4k-qd1").read_text())
    assert failed["returncode"] == 1 and "fake failure" in failed["stderr"]
    assert not result_is_complete(result_path(plan_dir, "randread-4k-qd1"))
    assert result_is_complete(result_path(plan_dir, "prepare"))
    assert result_is_complete(result_path(plan_dir, "zoneread-00"))

    summary = run_plan(plan_dir, fio=real_fio)
    assert summary.skipped == ("prepare", "zoneread-00")
    assert summary.ran == ("randread-4k-qd1", "short-seek", "cache-hit")

    # only: one step; prepare is done, so it is not added
    result_path(plan_dir, "cache-hit").unlink()
    only = run_plan(plan_dir, fio=real_fio, only=["cache-hit"])
    assert only.ran == ("cache-hit",) and only.skipped == ()
    with pytest.raises(ZsimError, match="no step 'nope'"):
        run_plan(plan_dir, only=["nope"])


def test_missing_fio_is_named(tmp_path, monkeypatch):
    plan_dir = tiny_plan(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ZsimError) as err:
        run_plan(plan_dir)
    assert str(err.value) == (
        "fio is not installed; install it (Debian/Ubuntu: apt-get install fio) and run again"
    )
    assert not list((plan_dir / "results").glob("*.json"))


def test_ctrl_c_leaves_no_partial_file(tmp_path):
    need_tool("bash", "runs a stand-in for fio")
    need_tool("sleep", "the stand-in for fio waits")
    plan_dir = tiny_plan(tmp_path, include_dd=False)
    slow = fake_tool(
        tmp_path,
        "fio",
        '[ "$1" = --version ] && { echo fio-fake; exit 0; }\n'
        'for a in "$@"; do case "$a" in --output=*) out="${a#--output=}";; esac; done\n'
        'printf \'{"fio version": "half-writ\' > "$out"\n'
        "exec sleep 30\n",
    )

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_plan(plan_dir, fio=slow)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    skip = {".lock", ".target-state"}
    leftovers = sorted(p.name for p in (plan_dir / "results").iterdir() if p.name not in skip)
    assert leftovers == []


def test_text_progress_lines():
    step = Step(
        name="randread-4k-qd8",
        tool="fio",
        purpose="random",
        destructive=False,
        description="random 4K read, QD8",
        jobfile="jobs/randread-4k-qd8.fio",
        rw="randread",
        bs=4096,
        iodepth=8,
    )
    stream = io.StringIO()
    show = text_progress(stream)
    show(3, 40, step, "start")
    show(3, 40, step, "done")
    show(4, 40, step, "skipped")
    lines = stream.getvalue().splitlines()
    assert re.fullmatch(
        r"\[3/40\] randread-4k-qd8 \(random 4K read, QD8\) … done in \d+\.\d s", lines[0]
    )
    assert lines[1] == "[4/40] randread-4k-qd8 (random 4K read, QD8) … skipped (done before)"


def test_result_is_complete(tmp_path):
    path = tmp_path / "r.json"
    cases = [
        ({"zsim_result": 1, "tool": "dd", "returncode": 0}, True),
        ({"zsim_result": 1, "tool": "dd", "returncode": 1}, False),
        ({"zsim_result": 1, "tool": "fio", "returncode": 0, "fio_text": "junk"}, False),
        (
            {"zsim_result": 1, "tool": "fio", "returncode": 0, "fio_output": {"jobs": [{}]}},
            True,
        ),
        ({"fio version": "fio-3.33", "jobs": [{"error": 0}]}, True),  # what run.sh stores
        ({"fio version": "fio-3.33", "jobs": [{"error": 5}]}, False),
        ([], False),
    ]
    for doc, complete in cases:
        path.write_text(json.dumps(doc))
        assert result_is_complete(path) is complete, doc
    path.write_text('{"zsim_result": 1, "retu')
    assert not result_is_complete(path)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    assert not result_is_complete(path)
