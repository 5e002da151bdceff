"""Unit parsing and printing: the one module that knows TB from TiB."""

from __future__ import annotations

import pytest

from zsim.errors import UnitError
from zsim.units import (
    format_binary_size,
    format_rate,
    format_size,
    format_time,
    parse_ashift,
    parse_count,
    parse_rate,
    parse_size,
    parse_time,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12TB", 12 * 10**12),
        ("10.9TiB", round(10.9 * 2**40)),
        ("128K", 131_072),
        ("128KiB", 131_072),
        ("128kB", 128_000),
        ("1M", 1 << 20),
        ("1.5TB", 1_500_000_000_000),
        ("4096", 4096),
        ("12 tb", 12 * 10**12),
        ("512MiB", 512 << 20),
        ("0", 0),
        ("1_000", 1000),
        (4096, 4096),
    ],
)
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("180MB/s", 180e6),
        ("6Gb/s", 750e6),
        ("12Gbit/s", 1.5e9),
        ("1.5GiB/s", 1.5 * 2**30),
        ("180MBps", 180e6),
        (250, 250.0),
    ],
)
def test_parse_rate(text, expected):
    assert parse_rate(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("8.5ms", 0.0085), ("80us", 80e-6), ("80µs", 80e-6), ("2s", 2.0), ("1h", 3600.0), (3, 3.0)],
)
def test_parse_time(text, expected):
    assert parse_time(text) == pytest.approx(expected)


def test_parse_count():
    assert parse_count("780k") == 780_000
    assert parse_count(260000) == 260_000


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        ("-1TB", "negative"),
        ("12XB", "unknown unit"),
        ("abc", "cannot read"),
        ("12Tb", "bits"),
        ("", "cannot read"),
        ("1e400", "finite"),
        (True, "boolean"),
        (-5, "negative"),
    ],
)
def test_parse_size_rejects_with_a_clear_message(bad, fragment):
    with pytest.raises(UnitError, match=fragment):
        parse_size(bad)


def test_rate_needs_per_second():
    with pytest.raises(UnitError, match="/s"):
        parse_rate("180MB")


def test_time_unit_unknown():
    with pytest.raises(UnitError, match="unknown time unit"):
        parse_time("3 fortnights")


@pytest.mark.parametrize("bad", ["8", "17", "x", None])
def test_ashift_range(bad):
    with pytest.raises(UnitError, match="ashift"):
        parse_ashift(bad)


def test_format_says_which_system():
    assert format_size(12 * 10**12) == "12.0 TB (10.91 TiB)"
    assert format_binary_size(128 * 1024) == "128.00 KiB"
    assert format_rate(180e6) == "180 MB/s (171.66 MiB/s)"
    assert format_time(0.0085) == "8.50 ms"
    assert format_time(80e-6) == "80.0 µs"
    assert " T " not in format_size(5 * 10**12) and "T)" not in format_size(5 * 10**12)
