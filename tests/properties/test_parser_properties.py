"""The tool-output parsers never fail with anything but ParseError (hypothesis).

For random junk, random truncations and single-character corruptions of every golden file in
tests/data/calibrate/, and for random fio-shaped JSON documents, each parser either returns
a result or raises :class:`ParseError` whose message names the source — never KeyError,
TypeError, ValueError, IndexError, JSONDecodeError or anything else.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from zsim.calibrate.dd import parse_dd_text
from zsim.calibrate.fio import parse_fio_text
from zsim.calibrate.measurement import ParseError
from zsim.calibrate.zpool import parse_arcstat, parse_scan, parse_zpool_iostat

DATA = Path(__file__).resolve().parents[1] / "data" / "calibrate"
SOURCE = "golden/source-name.txt"

Parser = Callable[[str, str], object]
PARSERS: dict[str, Parser] = {
    "fio": parse_fio_text,
    "dd": parse_dd_text,
    "scan": parse_scan,
    "iostat": parse_zpool_iostat,
    "arcstat": parse_arcstat,
}
GOLDEN_PATTERNS = {
    "fio": ["fio-*"],
    "dd": ["dd_*"],
    "scan": ["zpool/status_*"],
    "iostat": ["zpool/iostat_*"],
    "arcstat": ["zpool/arcstat_*"],
}
GOLDEN: list[tuple[str, str]] = sorted(
    (kind, path.read_text(encoding="utf-8"))
    for kind, patterns in GOLDEN_PATTERNS.items()
    for pattern in patterns
    for path in DATA.glob(pattern)
    if path.is_file()
)
# the characters that matter to these formats, plus anything at all
INTERESTING = st.sampled_from(list('{}[]":,.-%+ \t\r\n0123456789eEKMGTBkmgib/()#x'))
REPLACEMENTS = st.one_of(INTERESTING, st.characters(), st.just(""))


def parse_error(kind: str, text: str) -> ParseError | None:
    """Run one parser: None if it returned, the ParseError if it raised one (else it fails)."""
    try:
        PARSERS[kind](text, SOURCE)
    except ParseError as error:
        return error
    return None


def parses_or_parse_error(kind: str, text: str) -> None:
    """A ParseError must name the source and a line ≥ 1 (if any); other exceptions propagate."""
    error = parse_error(kind, text)
    if error is not None:
        assert SOURCE in str(error)
        assert error.path == SOURCE
        assert error.line is None or error.line >= 1


def test_every_parser_has_golden_files():
    assert {kind for kind, _ in GOLDEN} == set(PARSERS)


@settings(max_examples=100)
@given(st.sampled_from(sorted(PARSERS)), st.text(INTERESTING | st.characters(), max_size=400))
def test_junk_text(kind, text):
    parses_or_parse_error(kind, text)


@settings(max_examples=100)
@given(st.sampled_from(sorted(PARSERS)), st.text(max_size=300))
def test_junk_after_a_brace_line(kind, text):
    parses_or_parse_error(kind, "fio-3.36\n{\n" + text)


@settings(max_examples=100)
@given(st.sampled_from(GOLDEN), st.data())
def test_truncated_golden_files(golden, data):
    kind, text = golden
    cut = data.draw(st.integers(min_value=0, max_value=len(text)), label="cut")
    parses_or_parse_error(kind, text[:cut])


@settings(max_examples=100)
@given(st.sampled_from(GOLDEN), st.data())
def test_single_character_corruptions(golden, data):
    kind, text = golden
    position = data.draw(st.integers(min_value=0, max_value=max(0, len(text) - 1)), label="at")
    replacement = data.draw(REPLACEMENTS, label="by")
    parses_or_parse_error(kind, text[:position] + replacement + text[position + 1 :])


# fio-shaped documents whose fields hold any JSON value at all
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
DIRECTION_KEYS = ["io_bytes", "io_kbytes", "bw_bytes", "bw", "iops", "runtime", "total_ios"]
OPTION_KEYS = ["rw", "bs", "numjobs", "iodepth", "offset", "size", "rate", "sync", "direct"]


def _maybe(keys: list[str], values: st.SearchStrategy) -> st.SearchStrategy:
    return st.dictionaries(st.sampled_from(keys), values, max_size=len(keys))


directions = st.one_of(
    JSON_VALUES,
    st.fixed_dictionaries(
        {key: st.integers(0, 10**12) for key in DIRECTION_KEYS},
        optional={
            "lat_ns": _maybe(["mean", "N"], JSON_VALUES),
            "clat_ns": _maybe(["mean", "N", "percentile"], JSON_VALUES),
            "lat": _maybe(["mean"], JSON_VALUES),
        },
    ),
    _maybe(DIRECTION_KEYS, JSON_VALUES),
)
options = st.one_of(
    JSON_VALUES,
    _maybe(OPTION_KEYS, st.text(alphabet="0123456789kmgKMGTiB%,:.-rwandeitoy", max_size=8)),
)
jobs = st.fixed_dictionaries(
    {},
    optional={
        "jobname": st.one_of(st.sampled_from(["a", "b"]), JSON_VALUES),
        "groupid": JSON_VALUES,
        "error": JSON_VALUES,
        "job options": options,
        "read": directions,
        "write": directions,
        "mixed": directions,
    },
)
documents = st.fixed_dictionaries(
    {"jobs": st.one_of(st.lists(jobs, max_size=3), JSON_VALUES)},
    optional={
        "fio version": st.one_of(st.sampled_from(["fio-2.2.10", "fio-3.36", "fio-x"]), JSON_VALUES),
        "timestamp": JSON_VALUES,
        "global options": options,
    },
)


@settings(max_examples=100)
@given(documents)
def test_fio_shaped_documents(document):
    parses_or_parse_error("fio", "fio-3.36\n" + json.dumps(document, indent=2) + "\ntrailer\n")
