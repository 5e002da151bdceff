"""``zsim sweep`` and ``zsim recommend`` on the command line: in-process and as the installed
console script (exit codes, one-line errors, JSON keys). The rule-of-thumb engine keeps them
fast; ``--workers 1`` runs the points in the test's process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, need_tool
from zsim.cli import main
from zsim.sweep.layouts import enumerate_layouts

BASE = ["--disk", "seagate-ironwolf-12tb", "--engine", "baseline", "--workers", "1"]


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_sweep_json(capsys):
    code, out, err = run(capsys, "sweep", "--disks", "8", *BASE, "--json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert {"zsim_version", "inputs", "columns", "units", "rows"} <= set(doc)
    assert doc["inputs"]["engine"] == "baseline" and doc["inputs"]["disks"] == [8]
    row = doc["rows"][0]
    assert row["layout"] == "stripe 8" and row["disks"] == 8
    for key in ("usable_bytes", "usable_tb", "usable_tib", "fault_tolerance", "cost_usd"):
        assert key in row
    assert row["vm-16k.iops"] > 0 and "media-1m-read.bytes_per_s" in row


def test_sweep_text_and_out(capsys, tmp_path):
    path = tmp_path / "sweep.csv"
    code, out, _ = run(
        capsys,
        "sweep",
        "--disks",
        "6,8",
        *BASE,
        "--workload",
        "4k-randread,media-1m-read",
        "--price",
        "seagate-ironwolf-12tb=250",
        "--out",
        str(path),
    )
    assert code == 0
    assert "usable TB" in out and "TiB" in out and "MB/s" in out and "IOPS" in out
    assert "cost" in out and "$/TB" in out and "command line" in out
    assert out.rstrip().endswith(f"wrote {path}")
    lines = path.read_text().splitlines()
    assert lines[0].startswith("layout,disk,disks,") and len(lines) > 10


def test_recommend_json_and_text(capsys):
    args = ["recommend", "--disks", "12", *BASE, "--workload", "4k-randread"]
    args += ["--min-usable", "80TB", "--min-fault-tolerance", "2"]
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert {"constraints", "objectives", "picks", "candidates", "considered"} <= set(doc)
    assert all(p["fault_tolerance"] >= 2 and p["usable_bytes"] >= 80e12 for p in doc["picks"])
    code, out, _ = run(capsys, *args)
    assert code == 0 and "Pareto front" in out and "1. " in out


def test_recommend_resilver_makes_loss_an_objective(capsys):
    args = ["recommend", "--layouts", "raidz1 4;2x mirror 2", *BASE, "--resilver"]
    code, out, err = run(capsys, *args, "--workload", "4k-randread", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert "loss" in [o["name"] for o in doc["objectives"]]
    assert all(0 < p["loss_probability"] < 1 for p in doc["picks"])


BAD = [
    (["sweep", "--disks", "8", "--engine", "baseline"], "required: --disk"),
    (["sweep", "--disks", "8", "--disk", "nope"], "no hardware profile named 'nope'"),
    (["sweep", "--disks", "0", *BASE], "--disks"),
    (["sweep", "--disks", "8", *BASE, "--price", "seagate-ironwolf-12tb=cheap"], "not a number"),
    (["sweep", "--disks", "8", *BASE, "--workload", "vm16k"], "did you mean 'vm-16k'"),
    (["sweep", "--disks", "8", *BASE, "--out", "table.txt"], ".csv or .json"),
    (["sweep", "--disks", "8", *BASE, "--set", "pool.layout=mirror 2"], "--layouts"),
    (["sweep", "--disks", "8", *BASE, "--engine", "fast"], "invalid choice"),
    (["recommend", "--disks", "4", *BASE, "--min-usable", "100TB"], "lower --min-usable"),
    (["recommend", "--disks", "4", *BASE, "--max-cost", "100"], "give --price"),
]


@pytest.mark.parametrize(("args", "fragment"), BAD)
def test_bad_input_is_one_line_and_exit_2(capsys, args, fragment):
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zsim: error: ")
    assert fragment in lines[0]


def _console(*args: str) -> subprocess.CompletedProcess[str]:
    # pip puts the console script beside the interpreter that runs the tests (the venv's bin),
    # which need not be on PATH
    beside = Path(sys.executable).parent / "zsim"
    exe = (
        str(beside)
        if beside.is_file()
        else need_tool("zsim", "the installed console script (pip install -e .)")
    )
    return subprocess.run(
        [exe, *args], capture_output=True, text=True, cwd=ROOT, timeout=300, check=False
    )


def test_console_script():
    ok = _console("sweep", "--disks", "6", *BASE, "--workload", "4k-randread", "--json")
    assert ok.returncode == 0, ok.stderr
    doc = json.loads(ok.stdout)
    assert len(doc["rows"]) == len(enumerate_layouts(6)) and doc["columns"][0] == "layout"
    rec = _console("recommend", "--disks", "6", *BASE, "--workload", "4k-randread", "--json")
    assert rec.returncode == 0, rec.stderr
    assert json.loads(rec.stdout)["picks"]
    bad = _console("recommend", "--disks", "4", *BASE, "--min-fault-tolerance", "4")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.startswith("zsim: error: ") and len(bad.stderr.strip().splitlines()) == 1


def test_readme_recommend_example_is_real(capsys):
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```\n\$ (zsim recommend .*?)\n(.*?)\n```", readme, flags=re.S)
    assert block is not None, "README shows a zsim recommend example"
    args = re.findall(r'"[^"]*"|\S+', block.group(1))[1:]
    code, out, _ = run(capsys, *(a.strip('"') for a in args), "--workers", "1")
    assert code == 0
    assert out.strip() == block.group(2).strip()


@pytest.mark.parametrize(
    ("address", "fragment", "limit_s"),
    [
        ("::::", "IPv6 host needs brackets", 10.0),  # refused before Dask starts a thread
        ("tcp://127.0.0.1:1", "connection refused", 10.0),  # a closed local port
    ],
)
def test_bad_scheduler_is_one_quick_line(address, fragment, limit_s):
    pytest.importorskip("distributed")
    start = time.monotonic()
    bad = _console(
        "sweep", "--disks", "4", *BASE, "--workload", "4k-randread", "--scheduler", address
    )
    elapsed = time.monotonic() - start
    assert bad.returncode == 2 and bad.stdout == ""
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1, bad.stderr  # no Client.__del__ traceback at exit
    assert lines[0].startswith("zsim: error: ") and address in lines[0] and fragment in lines[0]
    assert "--scheduler" in lines[0]
    assert elapsed < limit_s
