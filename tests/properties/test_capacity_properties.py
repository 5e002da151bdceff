"""Capacity properties that must hold for any layout and disk (hypothesis)."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from tests.strategies import ashifts, disk_sizes, layouts, recordsizes, vdev_specs
from zsim.capacity import capacity
from zsim.layout.raidz import raidz_asize, raidz_column_map


@given(layouts(), disk_sizes, ashifts, recordsizes)
def test_usable_never_exceeds_raw(layout, disk, ashift, record):
    r = capacity(layout, disk, ashift=ashift, recordsize=record)
    assert 0 < r.usable_bytes <= r.raw_bytes
    assert r.usable_bytes <= r.zpool_size_bytes
    assert r.effective_bytes <= r.raw_bytes
    for v in r.vdevs:
        parts = (
            v.labels_bytes
            + v.geometry_bytes
            + v.redundancy_bytes
            + v.padding_bytes
            + v.embedded_log_bytes
            + v.slop_bytes
            + v.usable_bytes
        )
        assert parts == v.raw_bytes
        assert min(v.labels_bytes, v.geometry_bytes, v.redundancy_bytes, v.slop_bytes) >= 0


@given(st.integers(1, 3), st.integers(2, 30), recordsizes, ashifts)
def test_raidz_efficiency_between_floor_and_ideal(parity, width, record, ashift):
    assume(width > parity)
    efficiency = record / raidz_asize(record, ashift, width, parity)
    assert efficiency <= (width - parity) / width
    # A block is never stored at less than 1/(p+1): with one data sector and p parity
    # sectors, padding rounds to exactly p+1 sectors.
    assert efficiency >= 1 / (parity + 1) or record < (1 << ashift)


@given(st.integers(1, 3), st.integers(2, 20), recordsizes, ashifts, st.integers(0, 10**6))
def test_column_map_allocates_what_asize_says(parity, width, psize, ashift, sector):
    assume(width > parity)
    m = raidz_column_map(sector << ashift, psize, ashift, width, parity)
    assert m.asize == raidz_asize(psize, ashift, width, parity)
    assert m.data_bytes == -(-psize >> ashift << ashift) or m.data_bytes >= psize
    children = [c.child for c in m.columns]
    assert len(children) == len(set(children))  # a block never uses a child twice
    assert all(0 <= c < width for c in children)


@given(st.integers(1, 3), st.integers(3, 16), disk_sizes, recordsizes)
def test_raidz_pool_efficiency_below_ideal(parity, width, disk, record):
    assume(width > parity)
    r = capacity(f"raidz{parity} {width}", disk, recordsize=record)
    assert r.efficiency <= (width - parity) / width
    assert r.effective_efficiency <= (width - parity) / width


@given(layouts(support=False), vdev_specs(), disk_sizes, ashifts)
def test_adding_a_vdev_never_lowers_usable(layout, extra, disk, ashift):
    before = capacity(layout, disk, ashift=ashift)
    after = capacity(f"{layout} + {extra}", disk, ashift=ashift)
    assert after.usable_bytes >= before.usable_bytes


@given(layouts(), disk_sizes, st.integers(1, 10**12), ashifts)
def test_bigger_disks_never_lower_usable(layout, disk, extra, ashift):
    small = capacity(layout, disk, ashift=ashift)
    big = capacity(layout, disk + extra, ashift=ashift)
    assert big.usable_bytes >= small.usable_bytes
