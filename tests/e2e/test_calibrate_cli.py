"""``zsim calibrate`` and ``zsim validate --profile`` on the command line without fio: bad
input gives exit code 2 and one line naming the problem, stored results fit and validate."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib

import pytest

from tests.conftest import DATA, ROOT

STORED = ROOT / "calibration" / "results" / "vm-virtio-file-2026-11-22"


def zsim(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zsim", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )


def one_line_error(run: subprocess.CompletedProcess[str], *words: str) -> None:
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zsim: error:"), run.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_truncated_fio_json_names_the_file_and_line(tmp_path):
    text = (DATA / "calibrate" / "fio-3.33_randread_json.txt").read_text()
    broken = tmp_path / "cut.json"
    broken.write_text(text[: len(text) // 2])
    run = zsim("calibrate", "fit", str(broken), "--out", str(tmp_path / "p.toml"))
    one_line_error(run, str(broken), "line")
    assert not (tmp_path / "p.toml").exists()  # nothing half-written


def test_a_file_of_no_known_kind_is_refused(tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\nworld\n")
    one_line_error(zsim("calibrate", "fit", str(junk), "--out", str(tmp_path / "p.toml")), "fio")


def test_plan_refuses_bad_options(tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    run = zsim("calibrate", "plan", "--target", str(target), "--out", str(tmp_path / "p"),
               "--depths", "0,4")  # fmt: skip
    one_line_error(run, "--depths")
    run = zsim("calibrate", "plan", "--target", str(target), "--out", str(tmp_path / "p"),
               "--size", "-4GiB")  # fmt: skip
    one_line_error(run, "negative")


def test_run_of_a_missing_plan(tmp_path):
    one_line_error(zsim("calibrate", "run", str(tmp_path / "nothing")), "plan")


def test_validate_profile_needs_results_and_a_real_profile(tmp_path):
    one_line_error(zsim("validate", "--profile", str(tmp_path / "none.toml"), str(STORED)))
    one_line_error(zsim("validate", "--plot", str(tmp_path / "v.png")), "--profile")


@pytest.fixture(scope="module")
def stored_fit(tmp_path_factory):
    out = tmp_path_factory.mktemp("fit") / "vm.toml"
    run = zsim("calibrate", "fit", str(STORED), "--out", str(out), "--json")
    assert run.returncode == 0, run.stderr
    return out, json.loads(run.stdout)


def test_stored_results_fit_to_the_shipped_profile(stored_fit):
    _, fit = stored_fit
    assert fit["kind"] == "nvme"
    shipped_doc = tomllib.loads((ROOT / "calibration/profiles/vm-virtio-file.toml").read_text())
    shipped = {p["name"]: p for p in shipped_doc["calibration"]["parameter"]}
    for p in fit["parameters"]:
        if p["name"] in ("read_bw", "read_latency"):
            # the shipped profile is this fit's output; another CPU or BLAS may differ in the
            # last digits, so: within 1e-6 relative or 1 % of the fit's own standard error
            want = shipped[p["name"]]
            tolerance = max(1e-6 * abs(want["value"]), 0.01 * want["stderr"])
            assert abs(p["value"] - want["value"]) <= tolerance, (p, want)
    assert all(r["measured_iops"] > 0 for r in fit["residuals"] if r["used"])


def test_validate_profile_json_has_every_run_and_the_three_summaries(stored_fit, tmp_path):
    out, _ = stored_fit
    png = tmp_path / "v.png"
    picked = [str(STORED / "results" / f"{n}.json") for n in ("randread-4k-qd1", "zoneread-40")]
    run = zsim("validate", "--profile", str(out), *picked, "--json", "--plot", str(png))
    assert run.returncode == 0, run.stderr
    val = json.loads(run.stdout)
    assert [r["name"] for r in val["rows"]] == ["randread-4k-qd1", "zoneread-40"]
    for r in val["rows"]:
        assert r["predicted_iops"] > 0 and r["error"] is not None
        assert r["rule_of_thumb_error"] is not None
    assert set(val["summary"]) == {"zsim", "leave_one_out", "rule_of_thumb"}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_pool_level_fit_needs_more_runs_than_multipliers(tmp_path):
    scenario = tmp_path / "pool.toml"
    scenario.write_text(
        '[hardware]\ndisk = "samsung-pm9a3-3.84tb"\n[pool]\nlayout = "stripe 1"\n'
        '[workload]\nrw = "randread"\nbs = "4K"\n'
    )
    one = str(DATA / "calibrate" / "fio-3.33_randread_json.txt")
    run = zsim("calibrate", "fit", one, "--scenario", str(scenario), "--out",
               str(tmp_path / "fitted.toml"))  # fmt: skip
    one_line_error(run, "cannot fit")
    assert not (tmp_path / "fitted.toml").exists()
