"""The safety of ``zsim calibrate run`` (issue 19, items 3, 4 and 8): a target that changed after
planning is never written, a tampered plan folder is never run, a device in use is refused even
with ``--destroy-data``, and stale partial files of a killed run are cleaned. fio and dd are
stand-in scripts that only record that they ran, so no data is touched and no fio is needed."""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from pathlib import Path

import pytest

from zsim.calibrate import plan as planmod
from zsim.calibrate.jobfiles import jobfile_problem
from zsim.calibrate.plan import (
    BlockDevice,
    PlanOptions,
    block_device_in_use,
    make_plan,
    target_changes,
    target_state,
    write_plan,
)
from zsim.calibrate.plan_file import DIGEST_FILE, check_plan_digest
from zsim.calibrate.run import run_plan
from zsim.cli import main
from zsim.errors import ZsimError

MiB = 2**20
SMALL = PlanOptions(
    size=64 * MiB,
    runtime_s=1.0,
    ramp_s=0.0,
    zones=(0.0,),
    depths_4k=(1,),
    depths_large=(1,),
    block_sizes=(4096,),
    long_write_bytes=32 * MiB,
    long_write_segments=4,
    direct=False,
)


@pytest.fixture
def tools(tmp_path, monkeypatch) -> Path:
    """Stand-in fio and dd on PATH that log their arguments to ``tools/log`` and do nothing."""
    folder = tmp_path / "tools"
    folder.mkdir()
    for name in ("fio", "dd"):
        script = folder / name
        script.write_text(
            "#!/bin/sh\n"
            f'[ "$1" = --version ] && {{ echo {name}-fake; exit 0; }}\n'
            f'echo "{name} $*" >> {folder}/log\n'
            'for a in "$@"; do case "$a" in --output=*) out="${a#--output=}";; esac; done\n'
            '[ -n "${out:-}" ] && echo \'{"fio version": "f", "jobs": [{"error": 0}]}\' > "$out"\n'
            'echo "1 bytes copied" >&2\n'
            "exit 0\n"
        )
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    return folder


def replacement(path: Path) -> Path:
    return path.with_name(path.name + ".new")


def ran(tools: Path) -> str:
    log = tools / "log"
    return log.read_text() if log.exists() else ""


def redigest(plan_dir: Path) -> None:
    """What a forger does after editing: write a matching plan.sha256."""
    names = ["plan.toml", "run.sh"] + [f"jobs/{p.name}" for p in (plan_dir / "jobs").iterdir()]
    lines = [
        f"{hashlib.sha256((plan_dir / n).read_bytes()).hexdigest()}  {n}\n" for n in sorted(names)
    ]
    (plan_dir / DIGEST_FILE).write_text("".join(lines))


# ---------------------------------------------------------------- item 3: the target changed


def test_repro_file_target_gains_data_after_planning(tmp_path, tools, capsys):
    """The issue's repro through the CLI: plan a new file, someone writes to it, run dd-write."""
    cal = tmp_path / "cal"
    cal.mkdir()
    target = cal / "target.bin"
    assert (
        main(
            [
                "calibrate",
                "plan",
                "--target",
                str(target),
                "--out",
                str(cal),
                "--size",
                "64MiB",
                "--runtime",
                "1s",
                "--ramp",
                "0s",
                "--long-write",
                "32MiB",
            ]
        )
        == 0
    )
    target.write_text("PRECIOUS\n")
    capsys.readouterr()
    assert main(["calibrate", "run", str(cal), "--only", "dd-write"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refusing to run step prepare" in err
    assert str(target) in err and "it was created" in err and "re-plan" in err
    assert target.read_text() == "PRECIOUS\n" and ran(tools) == ""


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda f: f.write_bytes(b"x" * 4096 + b"PRECIOUS"), "size changed from 4096 to 4104"),
        (lambda f: f.write_bytes(b"PRECIOUS" + bytes(4088)), "content of its first 1 MiB"),
        (
            lambda f: (replacement(f).write_bytes(b"x" * 4096), replacement(f).replace(f)),
            "another file now",
        ),
        (lambda f: f.unlink(), "it was deleted"),
    ],
)
def test_existing_file_target_that_changed_is_refused(tmp_path, tools, change, words):
    theirs = tmp_path / "theirs.img"
    theirs.write_bytes(b"x" * 4096)
    plan_dir = write_plan(make_plan(theirs, replace(SMALL, allow_destroy=True)), tmp_path / "p")
    change(theirs)
    with pytest.raises(ZsimError, match="refusing to run step prepare") as err:
        run_plan(plan_dir)
    assert words in str(err.value) and str(theirs) in str(err.value)
    assert ran(tools) == ""


def test_every_step_is_checked_and_zsims_own_writes_are_not_a_change(tmp_path, tools):
    """A run writes (here: a stand-in that appends), the next run resumes; then an outsider
    writes between two runs and the next step is refused."""
    folder = tmp_path / "target"
    folder.mkdir()
    data = folder / planmod.DATA_NAME
    writer = tools / "fio"
    writer.write_text(
        writer.read_text().replace('echo "1 bytes', f'echo zsim >> "{data}"\necho "1 bytes')
    )
    plan_dir = write_plan(make_plan(folder, SMALL), tmp_path / "p")
    first = run_plan(plan_dir, only=["zoneread-00"])
    assert first.ran == ("prepare", "zoneread-00") and data.read_text() == "zsim\nzsim\n"
    again = run_plan(plan_dir, only=["randread-4k-qd1"])  # zsim's own writes: not a change
    assert again.ran == ("randread-4k-qd1",)
    data.write_text("PRECIOUS\n")
    with pytest.raises(ZsimError, match=r"refusing to run step short-seek.*since zsim last used"):
        run_plan(plan_dir, only=["short-seek"])
    assert data.read_text() == "PRECIOUS\n"


def test_target_state_and_changes(tmp_path):
    path = tmp_path / "f"
    assert target_state(path).exists is False
    path.write_bytes(b"a" * 10)
    a = target_state(path)
    assert a.exists and a.size == 10 and a.ino == path.stat().st_ino and len(a.sha256) == 64
    assert target_changes(a, a, block=False) == []
    path.write_bytes(b"b" * 10)
    b = target_changes(a, target_state(path), block=False)
    assert b == ["the content of its first 1 MiB changed"]
    assert target_changes(a, target_state(path), block=False, identity_only=True) == []
    with pytest.raises(OSError, match="not a regular file"):
        target_state(tmp_path)


def test_plan_without_target_state_is_refused(tmp_path, tools):
    plan_dir = write_plan(make_plan(tmp_path / "new.img", SMALL), tmp_path / "p")
    toml = plan_dir / "plan.toml"
    text = toml.read_text()
    toml.write_text(
        text[: text.index("\n# what the target looked like")] + text[text.index("\n[[step]]") :]
    )
    redigest(plan_dir)
    with pytest.raises(ZsimError, match="records no state of its target"):
        run_plan(plan_dir)


# ---------------------------------------------------------------- item 4: a tampered plan


def test_edited_plan_or_job_file_is_refused_by_the_digest(tmp_path, tools):
    plan_dir = write_plan(make_plan(tmp_path / "new.img", SMALL), tmp_path / "p")
    check_plan_digest(plan_dir)
    toml = plan_dir / "plan.toml"
    original = toml.read_text()
    toml.write_text(original.replace(f"of={tmp_path / 'new.img'}", "of=/tmp/elsewhere"))
    with pytest.raises(ZsimError, match=r"plan.toml changed since the plan was made.*re-create"):
        run_plan(plan_dir)
    toml.write_text(original)
    job = plan_dir / "jobs" / "prepare.fio"
    job.write_text(job.read_text() + "exec_prerun=touch /tmp/pwned\n")
    with pytest.raises(ZsimError, match=r"prepare\.fio changed since the plan was made"):
        run_plan(plan_dir)
    (plan_dir / "jobs" / "extra.fio").write_text("[x]\n")
    with pytest.raises(ZsimError, match="not those the plan was made with"):
        run_plan(plan_dir)
    (plan_dir / DIGEST_FILE).unlink()
    with pytest.raises(ZsimError, match=r"has no plan\.sha256"):
        run_plan(plan_dir)
    assert ran(tools) == ""


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        ("exec_prerun=touch /tmp/pwned\n", "option 'exec_prerun' is not one zsim writes"),
        ("exec_postrun=rm -rf ~\n", "option 'exec_postrun'"),
        ("include /etc/passwd\n", "option 'include /etc/passwd'"),
        ("filename=/dev/sda\n", "filename is not the plan's target"),
        ("ioengine=external:/tmp/x.so\n", "ioengine has a value zsim does not write"),
        ("[other]\n", "section [other] is not this step's"),
        ("size=${HOME}\n", "size has a value"),
    ],
)
def test_forged_job_file_is_refused_by_the_whitelist(tmp_path, tools, edit, words):
    plan_dir = write_plan(make_plan(tmp_path / "new.img", SMALL), tmp_path / "p")
    job = plan_dir / "jobs" / "prepare.fio"
    job.write_text(job.read_text() + edit)
    redigest(plan_dir)
    with pytest.raises(ZsimError, match="refusing to run") as err:
        run_plan(plan_dir)
    assert words in str(err.value) and "\n" not in str(err.value)
    assert ran(tools) == ""


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("of={t}", "of=/tmp/elsewhere", "dd must copy the target"),
        ("if=/dev/zero", "if=/etc/shadow", "dd must copy the target"),
        ("of=/dev/null", "of=/tmp/copy", "dd must copy the target"),
        ('"bs=1M"', '"bs=1M", "if=/dev/zero"', "exactly one if="),
        ('"bs=1M"', '"bs=1M", "status=progress"', "dd option 'status=progress'"),
    ],
)
def test_forged_dd_step_is_refused(tmp_path, tools, old, new, words):
    target = tmp_path / "new.img"
    plan_dir = write_plan(make_plan(target, SMALL), tmp_path / "p")
    toml = plan_dir / "plan.toml"
    text = toml.read_text()
    old = old.format(t=target)
    assert old in text
    toml.write_text(text.replace(old, new))
    redigest(plan_dir)
    with pytest.raises(ZsimError, match="refusing to run step dd-") as err:
        run_plan(plan_dir)
    assert words in str(err.value)
    assert ran(tools) == ""


def test_generated_job_files_pass_the_whitelist(tmp_path):
    plan = make_plan(tmp_path / "new.img", replace(SMALL, rate_bw=10**8, ramp_s=1.5))
    for step in plan.steps:
        if step.tool == "fio":
            assert jobfile_problem(planmod.fio_jobfile_text(plan, step), plan, step) is None
    with pytest.raises(ZsimError, match=r"ioengine 'external:/x\.so' is not a fio engine"):
        make_plan(tmp_path / "new.img", replace(SMALL, ioengine="external:/x.so"))


def test_device_in_use_is_refused_even_with_destroy_data(tmp_path, monkeypatch):
    device = tmp_path / "vda"
    device.write_bytes(bytes(MiB))
    monkeypatch.setattr(
        planmod,
        "_inspect_target",
        lambda path: ("block", path, BlockDevice("vda", "vda", 64 * MiB, False)),
    )
    for finding in (
        "/dev/vda1 is mounted on /",
        "/dev/vda2 is in use as swap",
        "vda is held by dm-0 (LVM, dm-crypt, md or multipath)",
    ):
        monkeypatch.setattr(planmod, "block_device_in_use", lambda name, f=finding: [f])
        for destroy in (False, True):
            with pytest.raises(ZsimError, match="refusing to plan writes") as err:
                make_plan(device, replace(SMALL, allow_destroy=destroy))
            assert finding in str(err.value) and "does not override" in str(err.value)
    # not in use: --destroy-data lets it through (the signature check is the old one)
    monkeypatch.setattr(planmod, "block_device_in_use", lambda name: [])
    monkeypatch.setattr(planmod, "block_device_problems", lambda name: ["x holds a signature"])
    assert make_plan(device, replace(SMALL, allow_destroy=True)).destructive


def test_block_device_in_use_reads_mounts_swaps_and_holders(tmp_path):
    from tests.unit.test_calibrate_plan import fake_sysfs

    class_block, _, _ = fake_sysfs(tmp_path)
    found = block_device_in_use(
        "sdx",
        sys_class_block=class_block,
        mounts_text="/dev/sdx2 /mnt/x vfat rw 0 0\n",
        swaps_text="Filename Type Size Used Priority\n/dev/sdx partition 1 0 -2\n",
    )
    assert found == [
        "/dev/sdx2 is mounted on /mnt/x",
        "/dev/sdx is in use as swap",
        "sdx1 is held by dm-0 (LVM, dm-crypt, md or multipath)",
    ]


# ---------------------------------------------------------------- item 8: stale .part files


def test_stale_part_files_are_cleaned_and_reported(tmp_path, tools, capsys):
    plan_dir = write_plan(make_plan(tmp_path / "new.img", SMALL), tmp_path / "p")
    (plan_dir / "results").mkdir()
    stale = plan_dir / "results" / ".prepare.abc123.fio.part"
    stale.write_text("half")
    assert main(["calibrate", "run", str(plan_dir), "--only", "zoneread-00"]) == 0
    assert not stale.exists()
    assert "removed 1 partial file of an interrupted run (.prepare.abc123.fio.part)" in (
        capsys.readouterr().err
    )


def test_docs_describe_the_safety_checks_with_the_real_messages():
    """docs/calibration.md says what the run refuses and how to re-plan, quoting messages
    the code really prints."""
    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs/calibration.md").read_text()
    start = doc.index("**Safety checks of `zsim calibrate run`**")
    section = " ".join(doc[start : doc.index("\n## ", start)].split())
    for fact in (
        DIGEST_FILE,
        "whitelist",
        "Before **each** step",
        "re-plan",
        "`--destroy-data` does not override",
        "results/.target-state",
    ):
        assert fact in section, fact
    code = " ".join(
        (root / "zsim/calibrate" / name).read_text()
        for name in ("plan_file.py", "run_checks.py", "jobfiles.py")
    )
    for quoted in (
        "changed since the plan was made",
        "a changed plan is never run",
        "is not one zsim writes",
        "swapoff it or stop what holds it",
        "zsim last used it",
    ):
        assert quoted in code and quoted in section, quoted
