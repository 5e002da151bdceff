"""``zsim.resilver`` and ``zsim.sweep`` (DESIGN.md §5): plain functions named like the
packages that hold them, whose modules stay importable by name in any import order."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path
from unittest import mock

import zsim
from zsim.resilver import run
from zsim.sweep import table

ROOT = Path(__file__).resolve().parents[2]


def test_both_names_are_plain_functions():
    assert isinstance(zsim.resilver, types.FunctionType)
    assert isinstance(zsim.sweep, types.FunctionType)
    assert zsim.sweep is table.sweep
    assert type(sys.modules["zsim.resilver"]) is types.ModuleType
    assert type(sys.modules["zsim.sweep"]) is types.ModuleType


def test_resilver_calls_simulate_resilver_at_call_time():
    sc = zsim.scenario_from_dict(
        {
            "hardware": {"disk": "seagate-ironwolf-12tb"},
            "pool": {"layout": "mirror 2"},
            "workload": {"rw": "randread", "bs": "128K"},
        }
    )
    with mock.patch("zsim.resilver.run.simulate_resilver", return_value="done") as fake:
        assert zsim.resilver(sc, 7, durability=False) == "done"
    fake.assert_called_once_with(sc, 7, durability=False)
    assert run.simulate_resilver is not fake  # the patch is undone


def test_resilver_runs_a_scenario():
    sc = zsim.scenario_from_dict(
        {
            "hardware": {"disk": "seagate-ironwolf-12tb"},
            "pool": {"layout": "mirror 2", "recordsize": "1M", "fill": 0.5},
            "workload": {"rw": "randread", "bs": "128K"},
        }
    )
    res = zsim.resilver(sc, durability=False)
    direct = run.simulate_resilver(sc, durability=False)
    assert (res.seconds, res.bytes_resilvered) == (direct.seconds, direct.bytes_resilvered)


def _fresh(code: str) -> None:
    """Run ``code`` in a new interpreter (a fresh import order), failing on any error."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_modules_import_by_name_before_and_after_zsim():
    check = (
        "import types, zsim; "
        "assert isinstance(zsim.resilver, types.FunctionType); "
        "assert isinstance(zsim.sweep, types.FunctionType); "
    )
    _fresh(
        "import zsim.resilver.durability, zsim.sweep.layouts; "
        "from zsim.resilver.run import simulate_resilver; "
        "from zsim.sweep.table import SweepTable; " + check
    )
    _fresh(
        "import zsim; import zsim.resilver.durability; import zsim.resilver.md_rebuild; "
        "import zsim.sweep.recommend; from zsim.sweep import execute, layouts; "
        "from zsim import resilver, sweep; "
        "assert resilver is zsim.resilver and sweep is zsim.sweep; " + check
    )
