"""Grammar properties: printing and parsing are inverse; junk never crashes the parser."""

from __future__ import annotations

import contextlib

from hypothesis import given
from hypothesis import strategies as st

from tests.strategies import layouts
from zsim.errors import ZsimError
from zsim.layout import parse_layout, to_compact, to_zpool


@given(layouts())
def test_both_spellings_round_trip(text):
    tree = parse_layout(text)
    assert parse_layout(to_compact(tree)) == tree
    assert parse_layout(to_zpool(tree)) == tree


@given(st.text(max_size=60))
def test_parser_never_crashes_on_junk(text):
    with contextlib.suppress(ZsimError):
        parse_layout(text)


_words = st.sampled_from(
    [
        "raidz2",
        "mirror",
        "draid2:8d",
        "log",
        "cache",
        "special",
        "+",
        "2x",
        "4",
        "sda",
        "1",
        "stripe",
        "0",
        "md-raid6",
        "chunk=64K",
        "spare",
        "raidz9",
        "draid:0d",
        "x",
        "zpool-on",
    ]
)


@given(st.lists(_words, max_size=10))
def test_parser_never_crashes_on_keyword_soup(words):
    with contextlib.suppress(ZsimError):
        parse_layout(" ".join(words))
