"""How sure each answer is: the class of a prediction, the band of its class, the report
``zsim validate --all`` writes, and the ``accuracy`` of ``zsim simulate`` and the sweep."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import DATA, ROOT
from zsim.cli import main
from zsim.commands.validate_all import PlainProgress, RichProgress, progress_for
from zsim.scenario import load_scenario
from zsim.validation import accuracy as acc
from zsim.validation import ars, clemtibs, disksim, draid, registry, tnbench
from zsim.validation.accuracy import (
    MIN_POINTS,
    Accuracy,
    accuracy_for,
    accuracy_of_class,
    band,
    load_residuals,
    prediction_class,
)
from zsim.validation.report import (
    Point,
    ReportMeta,
    report_markdown,
    residuals_toml,
    summarize,
    write_report,
)

FIXTURE = DATA / "accuracy-quick.toml"  # zsim validate --all --quick --write (+ draid)

EXAMPLE_CLASSES = {
    "ars-mirrors-4k-randread.toml": "HDD mirror random read",
    "ars-raidz2-8-1m-randwrite.toml": "HDD raidz random write",
    "dd-stripe-4k.toml": "HDD stripe/raw streaming write",
    "disksim-hp-c2247a-trace.toml": "HDD stripe/raw trace replay",
    "l2arc-16k-randread.toml": "HDD mirror random read",
    "md-raid6-8-1m-randread.toml": "HDD md RAID random read",
    "nvme-raidz1-16-cpu-bound.toml": "NVMe raidz streaming write",
    "nvme-raidz1-1m-write.toml": "NVMe raidz streaming write",
    "raidz2-degraded-4k-randread.toml": "HDD raidz degraded random read",
    "raw-vm-virtio-file.toml": "NVMe stripe/raw random read",
    "resilver-raidz2-8-ironwolf.toml": "HDD raidz random read",
    "slog-8k-sync-write.toml": "HDD raidz sync write",
    "special-small-blocks.toml": "HDD raidz random write",
    "zpool-on-md-raid6.toml": "HDD ZFS on md streaming write",
}


# ---------------------------------------------------------------- classes


def test_every_example_scenario_has_its_class() -> None:
    examples = sorted((ROOT / "examples" / "scenarios").glob("*.toml"))
    assert {p.name for p in examples} == set(EXAMPLE_CLASSES)
    for path in examples:
        assert prediction_class(load_scenario(path)) == EXAMPLE_CLASSES[path.name], path.name


@pytest.mark.parametrize(
    ("sets", "expected"),
    [
        ({"workload.rw": "write"}, "HDD raidz streaming write"),
        ({"workload.rw": "read"}, "HDD raidz streaming read"),
        ({"workload.rw": "randrw"}, "HDD raidz mixed"),
        ({"workload.rw": "readwrite"}, "HDD raidz mixed"),
        ({"workload.rw": "write", "workload.fsync": "1"}, "HDD raidz sync write"),
        ({"workload.rw": "write", "pool.sync": "always"}, "HDD raidz sync write"),
        ({"workload.rw": "randread", "pool.sync": "always"}, "HDD raidz random read"),
        (
            {"pool.layout": "draid2:6d:1s:10c", "hardware.zfs_version": "2.2"},
            "HDD dRAID random write",
        ),
        ({"pool.layout": "btrfs-raid1 4"}, "HDD btrfs random write"),
        ({"hardware.disk": "samsung-pm1725a-1.6tb"}, "NVMe raidz random write"),
    ],
)
def test_class_follows_device_layout_and_workload(sets: dict[str, str], expected: str) -> None:
    sc = load_scenario(
        ROOT / "examples" / "scenarios" / "ars-raidz2-8-1m-randwrite.toml",
        overrides=[f"{k}={v}" for k, v in sets.items()],
    )
    assert prediction_class(sc) == expected


def test_a_sync_write_on_sync_disabled_is_not_a_sync_write() -> None:
    sc = load_scenario(
        ROOT / "examples" / "scenarios" / "slog-8k-sync-write.toml",
        overrides=["pool.sync=disabled"],
    )
    assert prediction_class(sc) == "HDD raidz random write"


# ---------------------------------------------------------------- bands


def test_band_is_p10_p90_of_the_signed_errors() -> None:
    errors = [-0.3, -0.1, 0.0, 0.05, 0.1, 0.2, 0.4]
    p10, p90 = band(errors)  # type: ignore[misc]
    assert p10 == pytest.approx(np.percentile(errors, 10))
    assert p90 == pytest.approx(np.percentile(errors, 90))
    # linear between order statistics: 10 % of the way along 6 gaps is 0.6 of the first one
    assert p10 == pytest.approx(-0.3 + 0.6 * 0.2)


def test_fewer_than_five_points_give_no_band() -> None:
    assert MIN_POINTS == 5
    assert band([0.1, 0.2, 0.3, 0.4]) is None
    assert band([]) is None
    classes = {"X": {"residuals": [{"set": "s", "id": str(i), "error": 0.1 * i} for i in range(4)]}}
    a = accuracy_of_class("X", classes)
    assert a == Accuracy("X", 4, None, None)
    assert not a.has_band
    assert a.text() == "no band: 4 validation points of X"
    assert a.to_dict() == {
        "class": "X",
        "points": 4,
        "rel_error_p10": None,
        "rel_error_p90": None,
        "engine": "des",
    }
    assert accuracy_of_class("unseen", classes).points == 0
    assert accuracy_of_class("X", None) == Accuracy("X", 0, None, None)


def test_band_of_a_class_and_of_the_rule_of_thumb() -> None:
    errors = [-0.2, -0.1, 0.0, 0.1, 0.15, 0.3, 0.05]
    rows: list[dict[str, object]] = [
        {"set": "s", "id": str(i), "error": e, "baseline_error": 2 * e}
        for i, e in enumerate(errors[:6])
    ]
    rows.append({"set": "s", "id": "no thumb", "error": errors[6]})
    classes = {"HDD raidz streaming read": {"residuals": rows}}
    zsim_band = accuracy_of_class("HDD raidz streaming read", classes)
    assert zsim_band.points == 7
    assert zsim_band.rel_error_p10 == pytest.approx(np.percentile(errors, 10))
    assert zsim_band.rel_error_p90 == pytest.approx(np.percentile(errors, 90))
    thumb = accuracy_of_class("HDD raidz streaming read", classes, engine="baseline")
    assert thumb.points == 6 and thumb.engine == "baseline"
    assert thumb.rel_error_p90 == pytest.approx(np.percentile([2 * e for e in errors[:6]], 90))
    text = zsim_band.text()
    assert text.startswith("−") and "7 validation points of HDD raidz streaming read" in text


def test_accuracy_for_reads_the_residuals_file() -> None:
    trace = load_scenario(ROOT / "examples" / "scenarios" / "disksim-hp-c2247a-trace.toml")
    a = accuracy_for(trace, path=FIXTURE)
    assert a is not None and a.klass == "HDD stripe/raw trace replay"
    fixture = tomllib.loads(FIXTURE.read_text(encoding="utf-8"))
    entry = next(c for c in fixture["class"] if c["name"] == a.klass)
    assert a.points == entry["points"] >= MIN_POINTS
    assert a.rel_error_p10 == pytest.approx(entry["rel_error_p10"])
    assert a.rel_error_p90 == pytest.approx(entry["rel_error_p90"])
    few = load_scenario(ROOT / "examples" / "scenarios" / "nvme-raidz1-1m-write.toml")
    b = accuracy_for(few, path=FIXTURE)
    assert b is not None and 0 < b.points < MIN_POINTS and not b.has_band
    assert accuracy_for(few, path=FIXTURE.parent / "no-such-file.toml") == Accuracy(
        "NVMe raidz streaming write", 0, None, None
    )


def test_the_environment_names_another_residuals_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(acc.ACCURACY_ENV, str(FIXTURE))
    assert Path(str(acc.residuals_path())) == FIXTURE
    assert load_residuals() is not None


# ---------------------------------------------------------------- the report

FAKE = [
    Point("a", "a1", "HDD raidz streaming write", 100.0, 110.0, 50.0, "MiB/s"),
    Point("a", "a2", "HDD raidz streaming write", 100.0, 90.0, 60.0, "MiB/s"),
    Point("a", "a3", "HDD raidz streaming write", 200.0, 260.0, 100.0, "MiB/s"),
    Point("a", "a4", "HDD raidz streaming write", 50.0, 45.0, None, "MiB/s"),
    Point("a", "a5", "HDD raidz streaming write", 10.0, 10.0, 5.0, "MiB/s"),
    Point("b", "b1", "ratio: HDD vdev scaling (random write)", 2.0, 1.9, 2.0, "ratio"),
    Point(
        "b", "b2 | pipe", "HDD stripe/raw trace replay (demerit)", 15.0, 3.0, 8.0, "ms", 0.2, 0.5
    ),
]
META = ReportMeta(sets=("a", "b"), date="2026-01-02 03:04 UTC", version="9.9", seconds=41.2, seed=1)


def test_point_errors() -> None:
    assert FAKE[0].error == pytest.approx(0.1) and FAKE[0].baseline_error == pytest.approx(-0.5)
    assert FAKE[3].baseline_error is None
    assert FAKE[6].error == 0.2 and FAKE[6].baseline_error == 0.5  # a demerit: given


def test_per_class_summary_numbers() -> None:
    by_class = {s.name: s for s in summarize(FAKE, lambda p: p.klass)}
    s = by_class["HDD raidz streaming write"]
    errors = [0.1, -0.1, 0.3, -0.1, 0.0]
    assert s.points == 5
    assert s.mean_abs_error == pytest.approx(np.mean(np.abs(errors)))
    assert s.rel_error_p10 == pytest.approx(np.percentile(errors, 10))
    assert s.rel_error_p90 == pytest.approx(np.percentile(errors, 90))
    assert s.baseline_points == 4
    assert s.baseline_mean_abs_error == pytest.approx(np.mean([0.5, 0.4, 0.5, 0.5]))
    ratio = by_class["ratio: HDD vdev scaling (random write)"]
    assert ratio.points == 1 and ratio.rel_error_p10 is None and ratio.rel_error_p90 is None
    by_set = {s.name: s for s in summarize(FAKE, lambda p: p.set)}
    assert by_set["a"].points == 5 and by_set["b"].points == 2


def test_report_lists_every_point_and_the_summaries(tmp_path: Path) -> None:
    text = report_markdown(FAKE, META)
    assert (
        "Generated by `zsim validate --all` on 2026-01-02 03:04 UTC with zsim 9.9 in 41 s" in text
    )
    every = text.split("## Every point")[1].split("## By class")[0]
    rows = [line for line in every.splitlines() if line.startswith(("| a |", "| b |"))]
    assert len(rows) == len(FAKE)
    assert all("| " + p.id.replace("|", "\\|") + " |" in every for p in FAKE)
    assert "| b | b2 \\| pipe |" in text  # a pipe in an id does not break the table
    assert "| HDD raidz streaming write | 5 | 12% | −10% | +22% | 48% (4 points) |" in text
    assert "| ratio: HDD vdev scaling (random write) | 1 | 5% | — | — | 0% |" in text
    assert "## By class" in text and "## By set" in text


def test_residuals_file_round_trips_into_bands(tmp_path: Path) -> None:
    path = tmp_path / "accuracy.toml"
    path.write_text(residuals_toml(FAKE, META), encoding="utf-8")
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert data["sets"] == ["a", "b"] and data["min_points"] == MIN_POINTS
    entry = next(c for c in data["class"] if c["name"] == "HDD raidz streaming write")
    assert entry["points"] == 5
    assert [r["id"] for r in entry["residuals"]] == ["a1", "a2", "a3", "a4", "a5"]
    assert "baseline_error" not in entry["residuals"][3]
    ratio = next(c for c in data["class"] if c["name"].startswith("ratio"))
    assert "rel_error_p10" not in ratio  # no invented band below 5 points
    classes = load_residuals(path)
    a = accuracy_of_class("HDD raidz streaming write", classes)
    assert a.rel_error_p10 == pytest.approx(entry["rel_error_p10"])
    assert a.rel_error_p90 == pytest.approx(entry["rel_error_p90"])


def test_report_files_are_written_atomically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    md, res = tmp_path / "validation.md", tmp_path / "accuracy.toml"
    md.write_text("old report\n")
    written = write_report(FAKE, META, md, res)
    assert written == [md, res]
    assert "a5" in md.read_text() and "a5" in res.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["accuracy.toml", "validation.md"]

    def broken(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    before = md.read_text()
    with pytest.raises(OSError, match="disk full"):
        write_report(FAKE[:1], META, md, res)
    assert md.read_text() == before  # the old file stays whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["accuracy.toml", "validation.md"]


# ---------------------------------------------------------------- the adapters


def test_every_set_has_an_adapter_and_the_quick_sets_are_registered() -> None:
    assert set(registry.QUICK_SETS) <= set(registry.SET_NAMES)
    assert registry.QUICK_SETS == ("disksim", "tnbench")
    for s in registry.REFERENCE_SETS:
        assert s.points([]) == [], s.name


def test_adapters_class_each_point_by_its_scenario() -> None:
    ars_rows = [
        ars.ArsRow(
            ars.ArsPoint("abs", "raidz2 8 rs=1M 1M randwrite 8x8", 950.0, "MiB/s", ""), 1000.0, 80.0
        ),
        ars.ArsRow(
            ars.ArsPoint("r", "stripe 2 ÷ stripe 1, 1M randwrite rs=128K", 2.0, "ratio", ""),
            2.0,
            2.0,
        ),
        ars.ArsRow(
            ars.ArsPoint("d", "raidz2 8 1M randread: rs=1M − rs=128K (MiB/s)", 95.0, "MiB/s", ""),
            149.0,
            0.0,
        ),
    ]
    assert [p.klass for p in registry.ars_points(ars_rows)] == [
        "HDD raidz random write",
        "ratio: HDD vdev scaling (random write)",
        "difference: HDD raidz random read",
    ]
    tn = tnbench.TnRow("read", 10, 6513.0, 12000.0, 9000.0, "disk", "x", 0.02, 2.0, 3.0, {}, ())
    (point,) = registry.tnbench_points([tn])
    assert (point.klass, point.id, point.error) == (
        "NVMe raidz streaming read",
        "read-10T",
        pytest.approx(12000 / 6513 - 1),
    )
    clem = clemtibs.ClemRow(
        "tank_raidz2_nospecial_slog", "slog_punisher", "write", 10.0, 7.0, 7.0, 1.0, "d", "d", None
    )
    assert registry.clemtibs_points([clem])[0].klass == "HDD raidz sync write"
    dr = draid.DraidRow("draid1", 8, "distributed", 7.1, 7.0)
    assert registry.draid_points([dr])[0].klass == "HDD dRAID resilver"
    trace = disksim.TraceRow("HP C2247A", False, 15.3, 12.3, 3.1, 0.2, 3.0, 3.2, 0.54, 0.01, 1e5)
    mean, dem = registry.disksim_points([trace])
    assert mean.klass == "HDD stripe/raw trace replay"
    assert dem.klass == "HDD stripe/raw trace replay (demerit)"
    assert dem.error == 0.2 and dem.baseline_error == 0.54


# ---------------------------------------------------------------- the command line


def _fake_runs(
    names: object, *, seed: int, target_ci: float, progress: registry.Progress
) -> list[registry.SetRun]:
    s = registry.reference_set("disksim")
    run = registry.SetRun(s, [], list(FAKE), 0.5)
    progress.start(1, 1, s.name)
    progress.done(1, 1, run)
    return [run]


def test_validate_all_quick_writes_only_with_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("zsim.commands.validate_all.run_all", _fake_runs)
    assert main(["validate", "--all", "--quick", "--out-dir", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["report"]["written"] == [] and list(tmp_path.iterdir()) == []
    assert main(["validate", "--all", "--quick", "--write", "--out-dir", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "[1/1] disksim: 7 points, 0 s" in captured.err  # not a terminal: plain lines
    assert "wrote" in captured.out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["accuracy.toml", "validation.md"]
    assert "--quick --write" in (tmp_path / "validation.md").read_text()


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "--write"],
        ["validate", "--quick"],
        ["validate", "--all", "--write"],
        ["validate", "--all", "ars"],
        ["validate", "--all", "--out-dir", "/no/such/folder"],
    ],
)
def test_validate_all_rejects_what_does_not_go_together(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith("zsim: error:")


def _zsim(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zsim", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )


def test_simulate_json_has_the_accuracy_key() -> None:
    run = _zsim(
        "simulate",
        "examples/scenarios/ars-mirrors-4k-randread.toml",
        "--engine",
        "baseline",
        "--json",
    )
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert set(data["accuracy"]) >= {"class", "points", "rel_error_p10", "rel_error_p90"}
    assert data["accuracy"]["class"] == "HDD mirror random read"
    assert data["accuracy"]["engine"] == "baseline"
    for key in ("engine", "read", "write", "limit", "utilization", "scenario", "versions"):
        assert key in data  # the existing keys stay


def test_simulate_text_prints_the_band() -> None:
    env = {acc.ACCURACY_ENV: str(FIXTURE)}
    trace = "examples/scenarios/disksim-hp-c2247a-trace.toml"
    run = _zsim("simulate", trace, env=env)
    assert run.returncode == 0, run.stderr
    line = next(x for x in run.stdout.splitlines() if x.startswith("accuracy"))
    assert (
        "% (p10…p90 of zsim's error on 11 validation points of HDD stripe/raw trace replay)" in line
    )
    few = _zsim(
        "simulate", "examples/scenarios/nvme-raidz1-1m-write.toml", "--engine", "baseline", env=env
    )
    assert "accuracy    no band: 4 validation points of NVMe raidz streaming write" in few.stdout


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_rich_on_a_terminal_and_plain_elsewhere() -> None:
    run = registry.SetRun(registry.reference_set("disksim"), [], list(FAKE), 6.2)
    plain = io.StringIO()
    p = progress_for(plain)
    assert type(p) is PlainProgress
    p.start(2, 5, "disksim")
    p.done(2, 5, run)
    p.close()
    assert plain.getvalue() == "[2/5] disksim: running\n[2/5] disksim: 7 points, 6 s\n"
    term = _Terminal()
    r = progress_for(term)
    assert type(r) is RichProgress  # rich is a development dependency, installed here
    r.start(2, 5, "disksim")
    r.done(2, 5, run)
    r.close()
    assert "[2/5] disksim: 7 points, 6 s" in term.getvalue()
