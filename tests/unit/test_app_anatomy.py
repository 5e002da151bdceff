"""zsim.app.anatomy: one record's sectors on raidz and its chunks on md RAID6."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zsim.app.anatomy import (
    KINDS,
    Anatomy,
    anatomy_chart,
    anatomy_rows,
    md_raid6_anatomy,
    raidz_anatomy,
)
from zsim.errors import ZsimError
from zsim.layout.raidz import raidz_asize, raidz_column_map

KiB, MiB = 1 << 10, 1 << 20


def _grid(anatomy: Anatomy) -> dict[tuple[int, int], str]:
    return {(c.disk, c.row): c.kind for c in anatomy.cells}


def _check_grid(anatomy: Anatomy) -> None:
    """Every (disk, row) of the grid has exactly one cell, of a known kind."""
    positions = [(c.disk, c.row) for c in anatomy.cells]
    assert len(positions) == len(set(positions)) == anatomy.disks * anatomy.rows
    assert all(0 <= c.disk < anatomy.disks and 0 <= c.row < anatomy.rows for c in anatomy.cells)
    assert {c.kind for c in anatomy.cells} <= set(KINDS)


# ---------------------------------------------------------------- raidz


def test_raidz2_width8_128k() -> None:
    a = raidz_anatomy(128 * KiB, width=8, parity=2, ashift=12)
    rmap = raidz_column_map(0, 128 * KiB, 12, 8, 2)
    s = a.summary
    assert s["data_sectors"] == 32
    assert s["parity_sectors"] * 4096 == rmap.parity_bytes
    assert s["parity_sectors"] == 12  # 2 parity columns × 6 rows
    assert s["skip_sectors"] == rmap.skip_sectors
    assert s["allocated_bytes"] == raidz_asize(128 * KiB, 12, 8, 2) == rmap.asize
    assert s["overhead"] == pytest.approx(s["allocated_bytes"] / (128 * KiB) - 1)
    assert (s["data_sectors"] + s["parity_sectors"] + s["skip_sectors"]) * 4096 == (
        s["allocated_bytes"]
    )
    assert a.sector_bytes == 4096 and a.disks == 8
    _check_grid(a)
    # data numbered column by column: D0..D5 down disk 2, D6 starts disk 3
    labels = {(c.disk, c.row): c.label for c in a.cells}
    assert labels[(2, 0)] == "D0" and labels[(2, 1)] == "D1" and labels[(3, 0)] == "D6"
    assert labels[(0, 0)] == "P" and labels[(1, 0)] == "Q"


def test_raidz2_4k_record_is_one_data_two_parity() -> None:
    a = raidz_anatomy(4 * KiB, width=8, parity=2)
    s = a.summary
    assert (s["data_sectors"], s["parity_sectors"]) == (1, 2)
    total = s["data_sectors"] + s["parity_sectors"] + s["skip_sectors"]
    assert total % 3 == 0
    assert s["allocated_bytes"] == raidz_asize(4 * KiB, 12, 8, 2) == 3 * 4096
    assert s["overhead"] == pytest.approx(2.0)


def test_raidz_skip_wraps_to_a_new_row() -> None:
    # raidz2 width 4, 3 data sectors: 2 parity rows, 7 sectors → 9; the 2nd skip sector
    # lands on disk 0 one row below the block's other sectors.
    a = raidz_anatomy(12 * KiB, width=4, parity=2)
    grid = _grid(a)
    assert a.rows == 3
    assert grid[(3, 1)] == "skip" and grid[(0, 2)] == "skip"
    assert a.summary["skip_sectors"] == 2


def test_raidz1_odd_mib_skip_is_in_the_allocation() -> None:
    # raidz1 swaps parity and the first data column on odd MiB; the skip sector must still
    # be the allocation's last sector (OpenZFS moves rm_skipstart from 0 to 1 then).
    offset = MiB + 4096 * 5
    a = raidz_anatomy(8 * KiB, width=3, parity=1, offset=offset)
    start = offset // 4096
    asize_sectors = raidz_asize(8 * KiB, 12, 3, 1) // 4096
    first_row = a.summary["first_row"]
    expected = {(b % 3, b // 3 - first_row) for b in range(start, start + asize_sectors)}
    assert {(c.disk, c.row) for c in a.cells if c.kind != "unused"} == expected


def test_raidz_record_rounds_up_to_the_sector() -> None:
    a = raidz_anatomy(5000, width=6, parity=1, ashift=12)
    assert a.summary["psize_bytes"] == 8192 and a.summary["data_sectors"] == 2


@settings(max_examples=60, deadline=None)
@given(
    record=st.integers(1, 2 * MiB),
    parity=st.integers(1, 3),
    extra=st.integers(1, 14),
    ashift=st.integers(9, 16),
    start=st.integers(0, 5000),
)
def test_raidz_sectors_add_up_to_asize(
    record: int, parity: int, extra: int, ashift: int, start: int
) -> None:
    width = parity + extra
    offset = start << ashift
    a = raidz_anatomy(record, width, parity, ashift, offset)
    s = a.summary
    sector = 1 << ashift
    psize = -(-record // sector) * sector
    asize = raidz_asize(psize, ashift, width, parity)
    assert (s["data_sectors"] + s["parity_sectors"] + s["skip_sectors"]) * sector == asize
    assert s["allocated_bytes"] == asize
    assert s["skip_sectors"] == raidz_column_map(offset, psize, ashift, width, parity).skip_sectors
    assert (s["data_sectors"] + s["parity_sectors"] + s["skip_sectors"]) % (parity + 1) == 0
    assert all(c.disk < width for c in a.cells)
    _check_grid(a)
    # the block occupies a contiguous run of vdev sectors, row-major over the disks
    b0 = offset >> ashift
    held = {(c.disk, c.row) for c in a.cells if c.kind != "unused"}
    assert held == {
        (b % width, b // width - s["first_row"]) for b in range(b0, b0 + (asize >> ashift))
    }


def test_raidz_16m_ashift9_is_banded_in_the_chart() -> None:
    a = raidz_anatomy(16 * MiB, width=3, parity=2, ashift=9)
    assert a.summary["data_sectors"] == 16 * MiB // 512
    assert a.rows > 256
    spec = anatomy_chart(a, "16M on raidz2-3").to_dict()
    assert "bands" in str(spec["title"])


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"record_bytes": 128 * KiB, "width": 8, "parity": 4}, "parity"),
        ({"record_bytes": 128 * KiB, "width": 0, "parity": 2}, "width"),
        ({"record_bytes": 128 * KiB, "width": 2, "parity": 2}, "width"),
        ({"record_bytes": 128 * KiB, "width": 8, "parity": 2, "ashift": 8}, "ashift"),
        ({"record_bytes": 128 * KiB, "width": 8, "parity": 2, "ashift": 17}, "ashift"),
        ({"record_bytes": 0, "width": 8, "parity": 2}, "record size"),
        ({"record_bytes": 32 * MiB, "width": 8, "parity": 2}, "16 MiB"),
        ({"record_bytes": 4096, "width": 8, "parity": 2, "offset": 100}, "offset"),
        ({"record_bytes": 4096, "width": 8, "parity": 2, "offset": -4096}, "offset"),
    ],
)
def test_raidz_bad_input(kwargs: dict, words: str) -> None:
    with pytest.raises(ZsimError, match=words):
        raidz_anatomy(**kwargs)


# ---------------------------------------------------------------- md RAID6


def test_md_full_stripe_has_no_rmw() -> None:
    a = md_raid6_anatomy(384 * KiB, width=8, chunk=64 * KiB)
    s = a.summary
    assert s["full_stripe_bytes"] == 384 * KiB and s["chunk_bytes"] == 64 * KiB
    assert s["stripe_rows"] == 1 and s["data_sectors"] == 6 and s["parity_sectors"] == 2
    assert s["read_modify_write"] is False and s["pre_read_bytes"] == 0
    assert sorted(c.label for c in a.cells if c.kind == "parity") == ["P", "Q"]
    assert s["allocated_bytes"] == 512 * KiB
    _check_grid(a)


def test_md_small_record_needs_rmw() -> None:
    a = md_raid6_anatomy(64 * KiB, width=8, chunk=64 * KiB)
    s = a.summary
    assert s["read_modify_write"] is True and s["pre_read_bytes"] > 0
    assert s["data_sectors"] == 1 and s["parity_sectors"] == 2 and s["unused_chunks"] == 5
    assert a.rows == 1 and a.disks == 8


def test_md_parity_rotates_and_unaligned_record_spans_rows() -> None:
    a = md_raid6_anatomy(MiB, width=8, chunk=64 * KiB, offset=128 * KiB)
    _check_grid(a)
    assert a.summary["stripe_rows"] == 3 and a.summary["read_modify_write"] is True
    parity_by_row = [
        sorted(c.disk for c in a.cells if c.kind == "parity" and c.row == r) for r in range(3)
    ]
    assert parity_by_row == [[0, 7], [6, 7], [5, 6]]
    assert sum(c.nbytes for c in a.cells if c.kind == "data") == MiB


def test_md_default_chunk() -> None:
    a = md_raid6_anatomy(128 * KiB, width=6)
    assert a.summary["chunk_bytes"] == 512 * KiB
    spec = anatomy_chart(a, "md").to_dict()
    assert "512 KiB chunks" in str(spec)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"record_bytes": 64 * KiB, "width": 3}, "members"),
        ({"record_bytes": 64 * KiB, "width": 8, "chunk": 3000}, "chunk"),
        ({"record_bytes": 64 * KiB, "width": 8, "chunk": 2048}, "chunk"),
        ({"record_bytes": -1, "width": 8}, "record size"),
        ({"record_bytes": 4096, "width": 8, "offset": 512}, "offset"),
    ],
)
def test_md_bad_input(kwargs: dict, words: str) -> None:
    with pytest.raises(ZsimError, match=words):
        md_raid6_anatomy(**kwargs)


# ---------------------------------------------------------------- outputs


def test_chart_and_rows() -> None:
    a = raidz_anatomy(128 * KiB, width=8, parity=2)
    spec = anatomy_chart(a, "128K on raidz2-8").to_dict()
    text = str(spec)
    assert "sector (4 KiB)" in text and "disk 7" in text
    assert "layer" in spec  # rectangles + labels on a small grid
    for colour in ("#4c78a8", "#f58518", "#9d9d9d"):
        assert colour in text
    rows = anatomy_rows(a)
    assert len(rows) == a.disks * a.rows
    assert set(rows[0]) == {"disk", "row", "kind", "label", "bytes", "cell_bytes"}
    assert sum(r["kind"] == "data" for r in rows) == 32
