"""The command line end to end, as a user runs it (subprocess, real exit codes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def zsim(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zsim", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def test_capacity_json_matches_api():
    from zsim.capacity import capacity

    run = zsim("capacity", "raidz2 8", "--disk-size", "12000138625024", "--json")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    api = capacity("raidz2 8", 12_000_138_625_024, ashift=12).to_dict()
    assert data == api
    assert data["usable_bytes"] < data["raw_bytes"]
    assert 0.7 < data["efficiency"] < 0.75


def test_capacity_table_says_units():
    run = zsim("capacity", "2x raidz2 6 log mirror 2", "--disk-size", "12TB", "--log-size", "400GB")
    assert run.returncode == 0, run.stderr
    assert "TB (" in run.stdout and "TiB)" in run.stdout
    assert "zpool create tank raidz2 sda" in run.stdout
    assert "log" in run.stdout and run.stderr == ""


def test_capacity_from_catalog_disk():
    run = zsim("capacity", "raidz2 8", "--disk", "seagate-ironwolf-12tb", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["disk_bytes"] == 12_000_138_625_024


def test_md_and_layout_and_models_commands():
    md = zsim("capacity", "md-raid6 8 chunk=64K", "--disk-size", "12TB")
    assert md.returncode == 0 and "mdadm --create" in md.stdout
    lay = zsim("layout", "draid2:8d:2s:24c + mirror 2", "--json")
    assert lay.returncode == 0
    assert json.loads(lay.stdout)["zpool_form"].startswith("draid2:8d:24c:2s sda")
    models = zsim("models", "--kind", "hba")
    assert models.returncode == 0 and "lsi-9300-8i" in models.stdout
    one = zsim("models", "seagate-ironwolf-12tb")
    assert one.returncode == 0 and "rpm" in one.stdout and "estimate:" in one.stdout


def test_python_dash_m_and_version():
    run = zsim("--version")
    assert run.returncode == 0 and run.stdout.startswith("zsim ")


BAD_INPUT = [
    (["capacity", "raidz3 3", "--disk-size", "1TB"], "raidz3 needs at least 4 disks"),
    (["capacity", "mirror 1", "--disk-size", "1TB"], "a mirror needs at least 2 disks"),
    (["capacity", "raidz2 6", "--disk-size", "-4TB"], "negative"),
    (["capacity", "raidz2 6", "--disk-size", "12XB"], "unknown unit"),
    (["capacity", "raidz2 6", "--disk-size", "12TB", "--ashift", "20"], "ashift"),
    (["capacity", "raidz2 6", "--disk-size", "12TB", "--recordsize", "100K"], "power of two"),
    (
        ["capacity", "raidz2 6", "--disk-size", "12TB", "--zfs-version", "banana"],
        "not a release number",
    ),
    (["capacity", "raidz2 6", "--disk", "seagate-ironwolf-12t"], "did you mean"),
    (["capacity", "raidz2 6", "--disk", "lsi-9300-8i"], "is an HBA"),
    (["capacity", "draid2:8d:2s:10c", "--disk-size", "1TB"], "need 12 children"),
    (["capacity", "raidz2 6 log raidz1 3", "--disk-size", "1TB"], "plain device or a mirror"),
    (["capacity", "raidz2 6"], "required"),
    (["capacity", "raidz2 6", "--disk-size", "12TB", "--compress-ratio", "lots"], "not a number"),
    (["capacity", "raidz2 6", "--disk-size", "12TB", "--compress-ratio", "0.5"], "≥ 1"),
    (
        ["capacity", "draid2:4d:0s:6c", "--disk-size", "1TB", "--zfs-version", "2.0"],
        "dRAID needs OpenZFS 2.1",
    ),
    (["frobnicate"], "invalid choice"),
    (["capacity", "raidz2 6", "--disk-size", "32MB"], "64 MiB minimum"),
    (["models", "no-such-disk"], "no hardware profile"),
    (["layout", ""], "empty"),
    (["validate", "ars", "bogus"], "unknown reference set 'bogus'"),
]


@pytest.mark.parametrize(("args", "fragment"), BAD_INPUT, ids=[" ".join(a) for a, _ in BAD_INPUT])
def test_bad_input_one_line_exit_2(args, fragment):
    run = zsim(*args)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("zsim: error: ")
    assert fragment in lines[0]
    assert "Traceback" not in run.stderr


def test_a_bad_cache_bound_is_named_before_any_work(tmp_path):
    env = {**os.environ, "ZSIM_CACHE_MAX_MB": "lots", "ZSIM_CACHE_DIR": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-m", "zsim", "sweep", "--disks", "6", "--disk", "seagate-ironwolf-12tb"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip().splitlines() == [
        "zsim: error: ZSIM_CACHE_MAX_MB must be a number of MiB (0 or more), not 'lots': set it "
        "to e.g. 512, or unset it for the default (512 MiB)"
    ]
    assert not list(tmp_path.iterdir())  # nothing measured, nothing written


GOOD_SCENARIO = """
[hardware]
disk = "seagate-ironwolf-12tb"
[pool]
layout = "mirror 2"
[workload]
tool = "fio"
rw = "randread"
bs = "4K"
"""

BAD_SCENARIOS = [
    (GOOD_SCENARIO.replace('layout = "mirror 2"', 'layot = "mirror 2"'), "did you mean 'layout'"),
    (
        GOOD_SCENARIO.replace('layout = "mirror 2"', 'layout = "raidz3 3"'),
        "raidz3 needs at least 4",
    ),
    (GOOD_SCENARIO.replace('bs = "4K"', 'bs = "-4K"'), "negative"),
    (GOOD_SCENARIO.replace("[pool]", '[pool]\nashift = "twelve"'), "ashift"),
    (GOOD_SCENARIO.replace('rw = "randread"', 'rw = "sideways"'), "rw"),
    (
        GOOD_SCENARIO.replace('disk = "seagate-ironwolf-12tb"', 'disk = "no-such-disk"'),
        "no-such-disk",
    ),
    (GOOD_SCENARIO[: len(GOOD_SCENARIO) // 2] + '\nbroken = "', "TOML"),
    (
        GOOD_SCENARIO.replace('layout = "mirror 2"', 'layout = "mirror 2 dedup mirror 2"'),
        "has dedup vdevs",
    ),
]


@pytest.mark.parametrize(("text", "fragment"), BAD_SCENARIOS)
def test_bad_scenarios_one_line_exit_2(tmp_path, text, fragment):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    run = zsim("simulate", str(path))
    assert run.returncode == 2, (run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zsim: error: ")
    assert fragment.lower() in lines[0].lower(), lines[0]


def test_simulate_set_override_and_bad_override(tmp_path):
    path = tmp_path / "ok.toml"
    path.write_text(GOOD_SCENARIO)
    ok = zsim(
        "simulate", str(path), "--engine", "baseline", "--set", "pool.layout=2x mirror 2", "--json"
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["scenario"]["pool"]["layout"] == "2x mirror 2"
    bad = zsim("simulate", str(path), "--set", "pool.recordsise=1M")
    assert bad.returncode == 2 and "did you mean 'recordsize'" in bad.stderr
    missing = zsim("simulate", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1


def test_resilver_engine_choice_on_the_command_line():
    """``zsim resilver --engine analytic`` answers in milliseconds where the analytic scan
    agrees with the simulated one; it refuses what it does not model (exit 2, one line), and
    ``--engine auto`` then falls back to the simulated scan."""
    example = "examples/scenarios/resilver-raidz2-8-ironwolf.toml"
    run = zsim("resilver", example, "--engine", "analytic", "--no-durability", "--json")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["engine"] == "analytic" and data["seconds"] > 0
    md = "examples/scenarios/md-raid6-8-1m-randread.toml"
    refused = zsim("resilver", md, "--engine", "analytic", "--no-durability")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "--engine des" in refused.stderr
    auto = zsim("resilver", md, "--engine", "auto", "--no-durability", "--json")
    assert auto.returncode == 0, auto.stderr
    assert json.loads(auto.stdout)["engine"] != "analytic"
