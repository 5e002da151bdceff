"""Every script under examples/ runs and prints something."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def test_there_are_examples():
    assert EXAMPLES


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(script):
    run = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip()


SCENARIOS = sorted((ROOT / "examples" / "scenarios").glob("*.toml"))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.name)
def test_every_example_scenario_simulates(scenario):
    # 5 simulated seconds (a smoke test: every scenario runs and names a limit), the same run
    # on every machine; the wall cap is only a safety net
    cmd = ["simulate", str(scenario), "--max-sim", "5", "--max-wall", "600", "--json"]
    run = subprocess.run(
        [sys.executable, "-m", "zsim", *cmd],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["read"]["bytes_per_s"] + data["write"]["bytes_per_s"] > 0
    assert data["limit"]
