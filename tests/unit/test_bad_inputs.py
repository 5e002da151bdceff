"""Bad input is exit 2 with one line, never exit 1 "internal error" (issue 19, item 6), and the
public API raises ZsimError naming the argument for wrong types (item 7)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import zsim
from zsim.cli import main
from zsim.errors import ZsimError

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "examples" / "scenarios" / "ars-mirrors-4k-randread.toml")
BIG = "9" * 10_000


def one_line_exit_2(capsys, argv: list[str], words: str = "") -> str:
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse's own errors
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "internal error" not in err and "Traceback" not in err, err
    assert words in err, err
    return err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["capacity", f"raidz2 {BIG}", "--disk-size", "1TB"], "more than zsim models"),
        (["capacity", f"{BIG}x mirror 2", "--disk-size", "1TB"], ""),
        (["capacity", f"draid2:{BIG}c", "--disk-size", "1TB"], "more than zsim models"),
        (["capacity", "raidz2 8", "--disk", "x" * 5000], "not a catalog name"),
        (["capacity", "raidz2 8", "--disk-size", "1TB", "--compress-ratio", "inf", "--json"], ""),
        (["capacity", "raidz2 8", "--disk-size", "1TB", "--compress-ratio", "1e300"], "≥ 1 and ≤"),
        (["capacity", "raidz2 8", "--disk-size", "1e308"], "more than zsim models"),
        (["capacity", "raidz2 8", "--disk-size", "1EB"], "more than zsim models"),
        (["capacity", "raidz2 8 +", "--disk-size", "1TB"], "stray '+'"),
        (["capacity", "+ raidz2 8", "--disk-size", "1TB"], "stray '+'"),
        (["simulate", SCENARIO, "--seed", "-1"], "not a seed"),
        (["simulate", SCENARIO, "--seed", "٨"], "not a seed"),
        (["simulate", SCENARIO, "--max-wall", "nan"], "not a finite number"),
        (["simulate", SCENARIO, "--max-wall", "inf"], "not a finite number"),
        (["simulate", SCENARIO, "--max-wall", "-1"], "more than 0"),
        (["simulate", SCENARIO, "--max-sim", "nan"], "not a finite number"),
    ],
)
def test_bad_cli_input_is_exit_2_and_one_line(capsys, argv, words):
    one_line_exit_2(capsys, argv, words)


def test_arabic_indic_digits_are_not_a_count():
    with pytest.raises(ZsimError):
        zsim.capacity("raidz2 ٨", "1TB")
    with pytest.raises(ZsimError):
        zsim.capacity("٢x mirror 2", "1TB")


def test_deeply_nested_toml_scenario(capsys, tmp_path):
    nested = tmp_path / "nested.toml"
    nested.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    one_line_exit_2(capsys, ["simulate", str(nested)], "nested too deeply")


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: zsim.capacity(None, "1TB"), "capacity: layout must be"),
        (lambda: zsim.capacity("raidz2 8", None), "capacity: disk_size must be"),
        (lambda: zsim.capacity("raidz2 8", "1TB", ashift=math.inf), "ashift inf"),
        (lambda: zsim.capacity("raidz2 8", "1TB", ashift=True), "ashift True"),
        (lambda: zsim.capacity("raidz2 8", "1TB", compress_ratio=math.nan), "compress_ratio"),
        (lambda: zsim.md_capacity(None, "1TB"), "md_capacity: layout must be"),
        (lambda: zsim.simulate({}), "simulate: scenario must be a Scenario"),
        (lambda: zsim.resilver(1), "resilver: sc must be a Scenario"),
        (lambda: zsim.load_scenario(None), "load_scenario: path must be"),
        (lambda: zsim.load_scenario(SCENARIO, overrides=5), "load_scenario: overrides must be"),
        (lambda: zsim.load_scenario(SCENARIO, overrides="a=b"), "overrides must be a list"),
        (lambda: zsim.scenario_from_dict({1: 2}), "scenario_from_dict: data keys"),
        (lambda: zsim.scenario_from_dict(None), "scenario_from_dict: data must be"),
        (lambda: zsim.load_profile("x" * 100_000), "not a catalog name or a path"),
        (lambda: zsim.load_profile(5), "load_profile: spec must be"),
        (lambda: zsim.parse_layout(None), "a layout is text"),
    ],
)
def test_api_wrong_types_raise_zsim_error_naming_the_argument(call, words):
    with pytest.raises(ZsimError) as err:
        call()
    assert words in str(err.value)


def test_simulate_refuses_bad_numbers():
    scenario = zsim.load_scenario(SCENARIO)
    for kwargs in ({"seed": -1}, {"max_wall_seconds": math.nan}, {"target_ci": math.inf}):
        with pytest.raises(ZsimError, match="simulate: "):
            zsim.simulate(scenario, **kwargs)


def test_fio_json_with_huge_numbers(capsys, tmp_path):
    sample = next((ROOT / "tests" / "data" / "calibrate").glob("fio-*.json"))
    doc = json.loads(sample.read_text())
    doc["fio version"] = "fio-" + "9" * 5000
    version = tmp_path / "version.json"
    version.write_text(json.dumps(doc))
    number = tmp_path / "number.json"
    number.write_text(sample.read_text().replace("{", '{"huge": ' + "9" * 5000 + ", ", 1))
    profile = str(ROOT / "calibration" / "profiles" / "vm-virtio-file.toml")
    for path in (version, number):
        fit = ["calibrate", "fit", str(path), "--out", str(tmp_path / "o.toml")]
        for argv in (fit, ["validate", "--profile", profile, str(path)]):
            try:
                code = main(argv)
            except SystemExit as stop:
                code = stop.code
            err = capsys.readouterr().err
            assert code in (0, 2) and "internal error" not in err, err
            assert code == 0 or err.count("\n") == 1, err
