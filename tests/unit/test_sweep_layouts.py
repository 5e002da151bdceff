"""Layouts a sweep enumerates: all parse, use every disk and have space (zsim.sweep.layouts)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zsim
from zsim.layout.grammar import to_compact
from zsim.layout.tree import ZfsLayout
from zsim.sweep.layouts import (
    DRAID_DATA,
    MAX_HOT_SPARES,
    RAIDZ_MAX_WIDTH,
    enumerate_layouts,
)

DISK = 12_000_138_625_024  # seagate-ironwolf-12tb


def _check(n: int, layouts: list[str]) -> None:
    assert layouts, n
    assert len(set(layouts)) == len(layouts), "no layout twice"
    for text in layouts:
        tree = zsim.parse_layout(text)
        assert isinstance(tree, ZfsLayout)
        assert to_compact(tree) == text, "the canonical compact spelling"
        assert len(tree.devices) == n, text
        report = zsim.capacity(text, DISK)
        assert 0 < report.usable_bytes <= report.raw_bytes, text
        assert report.raw_bytes + report.support_raw_bytes == n * DISK


def _shape(text: str) -> tuple[ZfsLayout, int]:
    tree = zsim.parse_layout(text)
    assert isinstance(tree, ZfsLayout)
    return tree, len(tree.of_class("spare"))


def test_24_disks_exactly():
    layouts = enumerate_layouts(24)
    assert layouts[:3] == ["stripe 24", "12x mirror 2", "8x mirror 3"]
    assert len(layouts) == 30
    for expected in (
        "4x raidz2 6",
        "3x raidz2 8",
        "2x raidz2 12",
        "3x raidz2 7 spare 3",
        "2x raidz3 11 spare 2",
        "draid2:8d:1s:24c",
        "draid3:16d:1s:24c",
    ):
        assert expected in layouts
    assert "raidz2 24" not in layouts, "wider than the default max width"
    assert not [t for t in layouts if "2s:" in t], "one distributed spare below 40 disks"
    _check(24, layouts)


def test_60_disks_exactly():
    layouts = enumerate_layouts(60)
    assert len(layouts) == 39
    assert {"30x mirror 2", "20x mirror 3", "6x raidz2 10", "4x raidz3 15"} <= set(layouts)
    assert "draid2:8d:1s:60c" in layouts and "draid2:8d:2s:60c" in layouts
    assert [t for t in layouts if t.startswith("draid")] == [
        f"draid{p}:{d}d:{s}s:60c" for p in (1, 2, 3) for d in DRAID_DATA for s in (1, 2)
    ]
    _check(60, layouts)


def test_small_counts():
    assert enumerate_layouts(1) == ["stripe 1"]
    assert enumerate_layouts(2) == ["stripe 2", "mirror 2"]
    assert enumerate_layouts(3) == ["stripe 3", "mirror 2 spare 1", "mirror 3", "raidz1 3"]
    assert "raidz3 5" in enumerate_layouts(5)
    assert not any(t.startswith("draid") for t in enumerate_layouts(5))  # 4d+1p+1s > 5
    assert "draid1:4d:1s:6c" in enumerate_layouts(6)


@pytest.mark.parametrize("n", [12, 24, 36, 60])
def test_raidz_widths_divide_n_or_leave_a_few_spares(n):
    for text in enumerate_layouts(n, include=["raidz"]):
        tree, spares = _shape(text)
        data = tree.data_vdevs
        width, parity = data[0].width, data[0].parity
        assert all(v.kind == "raidz" and v.width == width for v in data), "one shape"
        assert len(data) * width + spares == n
        assert spares == n % width and spares <= MAX_HOT_SPARES
        assert parity + 2 <= width <= RAIDZ_MAX_WIDTH
    for text in enumerate_layouts(n, include=["raidz"], max_spares=0):
        tree, spares = _shape(text)
        assert spares == 0 and n % tree.data_vdevs[0].width == 0


def test_options():
    assert enumerate_layouts(24, include=["stripe"]) == ["stripe 24"]
    assert enumerate_layouts(24, include="mirror") == ["12x mirror 2", "8x mirror 3"]
    wide = enumerate_layouts(24, include=["raidz"], max_width=24, max_spares=0)
    assert "raidz2 24" in wide and "raidz3 24" in wide
    narrow = enumerate_layouts(24, include=["raidz"], max_width=6)
    assert max(zsim.parse_layout(t).data_vdevs[0].width for t in narrow) == 6
    assert enumerate_layouts(24) == enumerate_layouts(24), "deterministic"


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"n_disks": 0}, "≥ 1"),
        ({"n_disks": 24, "include": ["raid5"]}, "unknown layout family"),
        ({"n_disks": 24, "max_width": 2}, "max_width"),
        ({"n_disks": 24, "max_spares": -1}, "max_spares"),
    ],
)
def test_bad_arguments(kwargs, fragment):
    with pytest.raises(zsim.ZsimError, match=fragment):
        enumerate_layouts(**kwargs)


@settings(max_examples=40)
@given(st.integers(2, 96))
def test_every_layout_of_any_count_parses_and_fits(n):
    layouts = enumerate_layouts(n)
    _check(n, layouts)
    ft = {zsim.parse_layout(t).fault_tolerance for t in layouts}
    assert min(ft) == 0 and max(ft) <= 3
    for text in layouts:
        tree, spares = _shape(text)
        assert spares <= MAX_HOT_SPARES
        for vdev in tree.data_vdevs:
            if vdev.kind == "draid":
                assert vdev.width == n and vdev.nspares in (1, 2) and vdev.ndata in DRAID_DATA
