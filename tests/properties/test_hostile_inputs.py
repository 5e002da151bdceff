"""Hostile input at every interface (issue 19): random text, bytes and TOML into the CLI (in
process), the scenario loader, the tool-output parsers and the public API. The only allowed
outcomes are a result or a ZsimError — for the CLI exit 0 or 2 with no "internal error" —
within the deadline. Example counts are modest: the whole file runs in a few seconds."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import tomllib
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zsim
from zsim.calibrate.dd import parse_dd_text
from zsim.calibrate.fio import parse_fio_text
from zsim.calibrate.zpool import parse_arcstat, parse_scan, parse_zpool_iostat
from zsim.cli import main
from zsim.errors import ZsimError

ROOT = Path(__file__).resolve().parents[2]
FIO_SAMPLE = next((ROOT / "tests" / "data" / "calibrate").glob("fio-*.json")).read_text()
FAST = settings(
    max_examples=int(os.environ.get("ZSIM_FUZZ_EXAMPLES", "40")),
    deadline=2000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

words = st.sampled_from(
    [
        "raidz2",
        "mirror",
        "+",
        "2x",
        "8",
        "0",
        "-1",
        "٨",
        "1e308",
        "nan",
        "inf",
        "draid2:8d:24c",
        "log",
        "stripe",
        "md-raid6",
        "x" * 300,
        "9" * 400,
        "\x00",
        "é",
        "",
    ]
)
text = st.one_of(st.text(max_size=60), st.lists(words, max_size=6).map(" ".join))
toml_value: st.SearchStrategy[Any] = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**63), max_value=2**63 - 1),
        st.floats(allow_nan=True, allow_infinity=True),
        text,
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
sections = st.sampled_from(["pool", "hardware", "workload", "resilver", "durability", "x"])
keys = st.sampled_from(
    [
        "layout",
        "disk",
        "tool",
        "rw",
        "bs",
        "iodepth",
        "recordsize",
        "compress_ratio",
        "fill",
        "ram",
        "file",
        "size",
        "ashift",
        "numjobs",
        "runtime",
    ]
)
scenario_dicts = st.dictionaries(
    sections, st.dictionaries(keys, toml_value, max_size=5), max_size=4
)


def run_cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as stop:  # argparse
            code = stop.code if isinstance(stop.code, int) else 2
    return code, err.getvalue()


def cli_ok(code: int, err: str) -> None:
    assert code in (0, 2), err
    assert "internal error" not in err and "Traceback" not in err, err


@FAST
@given(layout=text, size=text, extra=st.lists(text, max_size=3))
def test_cli_capacity_and_layout_take_any_text(layout, size, extra):
    cli_ok(*run_cli(["capacity", layout, "--disk-size", size, *extra]))
    cli_ok(*run_cli(["layout", layout]))


@FAST
@given(data=st.one_of(st.binary(max_size=300), text.map(str.encode)))
def test_cli_reads_any_bytes_as_a_scenario_or_profile(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("in") / "in.toml"
    path.write_bytes(data)
    cli_ok(*run_cli(["simulate", str(path), "--max-wall", "0.5", "--max-sim", "1"]))
    cli_ok(*run_cli(["capacity", "raidz2 8", "--disk", str(path)]))


def toml_text(data: dict[str, Any]) -> str:
    """A TOML rendering good enough for fuzzing (invalid pieces are fine: they are refused)."""
    lines = []
    for section, table in data.items():
        lines.append(f"[{section}]")
        lines += [f"{k} = {json.dumps(v, allow_nan=True)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


@FAST
@given(data=scenario_dicts)
def test_cli_simulate_and_resilver_any_toml(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("sc") / "s.toml"
    path.write_text(toml_text(data), encoding="utf-8")
    cli_ok(*run_cli(["simulate", str(path), "--max-wall", "0.5", "--max-sim", "1"]))
    cli_ok(*run_cli(["resilver", str(path), "--no-durability"]))


@FAST
@given(data=scenario_dicts)
def test_scenario_loader_returns_or_raises_zsim_error(data):
    with contextlib.suppress(ZsimError):
        zsim.scenario_from_dict(data)


@FAST
@given(data=st.text(max_size=300) | st.binary(max_size=300).map(lambda b: b.decode("latin-1")))
def test_parsers_return_or_raise_zsim_error(data):
    for parse in (parse_fio_text, parse_dd_text, parse_scan, parse_zpool_iostat, parse_arcstat):
        with contextlib.suppress(ZsimError):
            parse(data, "fuzz")


@FAST
@given(
    path=st.lists(
        st.sampled_from(["jobs", 0, "read", "bw_bytes", "iops", "fio version"]),
        min_size=1,
        max_size=3,
    ),
    value=toml_value | st.just(int("9" * 4000)),
)
def test_fio_parser_with_one_field_replaced(path, value):
    doc = json.loads(FIO_SAMPLE)
    node: Any = doc
    for key in path[:-1]:
        if (isinstance(node, dict) and isinstance(key, str) and key in node) or (
            isinstance(node, list) and isinstance(key, int) and node
        ):
            node = node[key]
    last = path[-1]
    if isinstance(node, dict) and isinstance(last, str):
        node[last] = value
    elif isinstance(node, list) and node:
        node[0] = value
    text = json.dumps(doc, allow_nan=True) if not isinstance(value, int) else json.dumps(doc)
    with contextlib.suppress(ZsimError):
        parse_fio_text(text, "fuzz")


anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    text,
    st.binary(max_size=10),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.integers(), st.integers(), max_size=2),
    st.just(math.inf),
    st.just({}),
)


@FAST
@given(layout=anything | text, size=anything | text, ashift=anything, ratio=anything)
def test_api_capacity_takes_anything(layout, size, ashift, ratio):
    with contextlib.suppress(ZsimError):
        zsim.capacity(layout, size, ashift=ashift, compress_ratio=ratio)


@FAST
@given(value=anything)
def test_api_functions_take_anything(value):
    for call in (
        lambda: zsim.simulate(value),
        lambda: zsim.resilver(value),
        lambda: zsim.load_scenario(value),
        lambda: zsim.scenario_from_dict(value),
        lambda: zsim.load_profile(value),
        lambda: zsim.parse_layout(value),
        lambda: zsim.md_capacity(value, "1TB"),
    ):
        with contextlib.suppress(ZsimError):
            call()


def test_tomllib_itself_is_what_the_fuzzer_feeds():
    """toml_text writes TOML that tomllib reads (when its values are TOML values)."""
    assert tomllib.loads(toml_text({"pool": {"layout": "raidz2 8"}})) == {
        "pool": {"layout": "raidz2 8"}
    }
