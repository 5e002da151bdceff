"""Round trips between printed and parsed quantities (hypothesis)."""

from __future__ import annotations

import contextlib

from hypothesis import given
from hypothesis import strategies as st

from zsim.units import (
    format_binary_size,
    format_decimal_size,
    format_rate,
    format_time,
    parse_rate,
    parse_size,
    parse_time,
)

sizes = st.integers(min_value=0, max_value=2**62)


@given(sizes)
def test_integer_text_round_trips_exactly(n):
    assert parse_size(str(n)) == n


@given(sizes)
def test_decimal_format_round_trips_within_its_precision(n):
    # three significant digits: half a unit of the last digit is at most 0.5 % of the value
    back = parse_size(format_decimal_size(n).replace(" ", ""))
    assert abs(back - n) <= max(1, n * 0.005)


@given(sizes)
def test_binary_format_round_trips_within_its_precision(n):
    # two decimals of a value ≥ 1 of its unit: at most 0.5 % off
    back = parse_size(format_binary_size(n).replace(" ", ""))
    assert abs(back - n) <= max(1, n * 0.005)


@given(
    st.integers(min_value=0, max_value=10**6), st.sampled_from(["K", "M", "G", "T", "KiB", "TiB"])
)
def test_binary_units_are_exact_powers_of_two(k, unit):
    power = {"K": 10, "M": 20, "G": 30, "T": 40, "KiB": 10, "TiB": 40}[unit]
    assert parse_size(f"{k}{unit}") == k << power


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(["kB", "MB", "GB", "TB"]))
def test_decimal_units_are_exact_powers_of_ten(k, unit):
    power = {"kB": 3, "MB": 6, "GB": 9, "TB": 12}[unit]
    assert parse_size(f"{k}{unit}") == k * 10**power


@given(st.floats(min_value=1e3, max_value=1e13))
def test_rate_round_trip(r):
    text = format_rate(r).split(" (")[0].replace(" ", "")
    assert abs(parse_rate(text) - r) <= r * 0.005


@given(st.floats(min_value=1e-9, max_value=100))
def test_time_round_trip(t):
    assert abs(parse_time(format_time(t).replace(" ", "")) - t) <= t * 0.005


@given(st.text(max_size=30))
def test_parsers_never_crash_on_junk(text):
    for parser in (parse_size, parse_rate, parse_time):
        with contextlib.suppress(ValueError):
            parser(text)
