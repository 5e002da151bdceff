"""The sequential rebuild's read size and in-flight limit (zsim.zfs.scan), against the
OpenZFS source they transcribe: ``vdev_draid_rebuild_asize()``,
``vdev_mirror_rebuild_asize()`` and ``vdev_rebuild_thread()``/``vdev_rebuild_range()``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zsim.layout.alloc import SPA_MAXBLOCKSIZE
from zsim.layout.grammar import parse_layout
from zsim.units import GiB, MiB
from zsim.zfs.scan import rebuild_chunk, scan_tunables
from zsim.zfs.version import parse_zfs_version


def _vdev(layout: str):
    return parse_layout(layout).data_vdevs[0]


@pytest.mark.parametrize(
    ("layout", "asize", "psize"),
    [
        ("draid1:12d:1s:90c", 13 * MiB, 12 * MiB),  # 1 MiB per data column, parity added
        ("draid1:1d:1s:90c", 2 * MiB, 1 * MiB),
        ("draid3:16d:1s:90c", 19 * MiB, 16 * MiB),  # psize at SPA_MAXBLOCKSIZE
        ("mirror 2", 1 * MiB, 1 * MiB),
    ],
)
def test_a_rebuild_read_is_a_segment_per_data_column(layout, asize, psize):
    assert rebuild_chunk(_vdev(layout), 12, MiB) == (asize, psize)


@given(ndata=st.integers(1, 32), parity=st.integers(1, 3), ashift=st.sampled_from([9, 12]))
def test_a_draid_read_is_whole_rows_and_never_over_the_largest_block(ndata, parity, ashift):
    vdev = _vdev(f"draid{parity}:{ndata}d:1s:{ndata + parity + 8}c")
    asize, psize = rebuild_chunk(vdev, ashift, MiB)
    row = ndata << ashift
    assert psize % row == 0 and 0 < psize <= SPA_MAXBLOCKSIZE
    assert asize == psize // row * ((ndata + parity) << ashift)
    if ndata * MiB <= SPA_MAXBLOCKSIZE:
        assert psize == ndata * MiB  # one segment from each data child


def test_in_flight_limit_by_release():
    arc = 64 * GiB
    old = scan_tunables(parse_zfs_version("2.1.11"), 128 * GiB, arc)
    new = scan_tunables(parse_zfs_version("2.1.12"), 128 * GiB, arc)
    first = scan_tunables(parse_zfs_version("2.0.7"), 128 * GiB, arc)
    assert old.rebuild_inflight_bytes(90, 1, 12 * MiB) == 32 * MiB * 90
    assert new.rebuild_inflight_bytes(90, 1, 12 * MiB) == 64 * MiB * 90
    assert first.rebuild_inflight_bytes(2, 1, MiB) == 20 * MiB  # 20 reads per vdev
    # half the ARC, shared by the top-level vdevs, caps it
    small = scan_tunables(parse_zfs_version("2.2.2"), 8 * GiB, 4 * GiB)
    assert small.rebuild_inflight_bytes(90, 4, 12 * MiB) == 2 * GiB // 4
