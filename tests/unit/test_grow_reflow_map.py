"""The RAIDZ expansion's copy geometry against an independent transcription of
``raidz_reflow_impl()`` (``module/zfs/vdev_raidz.c``, zfs-2.3.0), and the allocator's spread
against ``metaslab_alloc_dva()`` (``module/zfs/metaslab.c``)."""

from __future__ import annotations

import pytest

from zsim.grow.alloc_bias import (
    METASLAB_ALIQUOT,
    bias_shares,
    group_aliquot,
    throttled_split,
    visit_bytes,
)
from zsim.grow.reflow_map import (
    REFLOW_MAX_COPY_BYTES,
    copy_bytes,
    copy_ios,
    gated_syncs,
    gated_syncs_bound,
    next_overwrite_offset,
    scratch_bytes,
)
from zsim.layout.grammar import parse_layout
from zsim.units import KiB, MiB


def _sector_map(offset: int, size: int, children: int, ashift: int) -> dict[int, tuple[int, int]]:
    """Vdev sector → (child, child sector), one sector at a time: the raidz row layout the
    copy moves (sector b of the vdev lives on child b mod n, row b div n)."""
    first = offset >> ashift
    return {b: (b % children, b // children) for b in range(first, first + (size >> ashift))}


@pytest.mark.parametrize(
    ("old", "ashift", "offset_sectors", "sectors"),
    [(4, 12, 0, 1), (4, 12, 7, 3), (4, 12, 1001, 97), (5, 9, 12345, 4096), (7, 12, 3, 40)],
)
def test_each_sector_is_read_from_its_old_row_and_written_to_its_new_row(
    old, ashift, offset_sectors, sectors
):
    offset, size = offset_sectors << ashift, sectors << ashift
    reads, writes = copy_ios(offset, size, old, ashift)
    for ios, children in ((reads, old), (writes, old + 1)):
        # every I/O is contiguous on its child, and they cover exactly the copy's sectors
        covered = {}
        for child, child_offset, nbytes in ios:
            for k in range(nbytes >> ashift):
                covered[(child, (child_offset >> ashift) + k)] = True
        expected = set(_sector_map(offset, size, children, ashift).values())
        assert set(covered) == expected
        assert len({c for c, _, _ in ios}) == len(ios)  # one I/O per child
        assert sum(n for _, _, n in ios) == size


def test_copy_size_follows_the_three_caps():
    # a long segment on a 4-wide vdev: 4 × 16 MiB per copy (zfs_max_recordsize per old child)
    assert copy_bytes(1 << 40, 4, 12) == 64 * MiB
    # a 12-wide vdev: capped by raidz_expand_max_copy_bytes (160 MiB)
    assert copy_bytes(1 << 40, 12, 12) == REFLOW_MAX_COPY_BYTES == 160 * MiB
    # a short segment: the segment, whole sectors, at least one sector
    assert copy_bytes(10 * KiB, 4, 12) == 8 * KiB
    assert copy_bytes(100, 4, 12) == 4 * KiB


def test_the_copy_may_run_ahead_of_the_synced_offset_by_a_row_fraction():
    ashift, old = 12, 4
    synced = 1 << 30
    ahead = next_overwrite_offset(synced, old, ashift) - synced
    # s/(n−1) − (n−1) sectors
    assert ahead == ((synced >> ashift) // old - old) << ashift
    # it never lets the write rows overrun rows not yet synced: the write of the last sector
    # before the limit lands at or below the synced sector's old row... on the new width
    limit = next_overwrite_offset(synced, old, ashift) >> ashift
    assert (limit - 1) // (old + 1) < (synced >> ashift) // old + 1


def test_scratch_rows_and_gated_syncs():
    assert scratch_bytes(5, 12) == (7 * MiB // 2) * 5
    per_txg = 500e6 * 5  # 500 MB/s for zfs_txg_timeout = 5 s
    n = gated_syncs(1 << 44, 4, 12, per_txg)
    assert n == gated_syncs_bound(4, 12, per_txg)
    assert 20 < n < 60  # grows by 1 + 1/4 per sync from 17.5 MiB to 10 GB
    # a tiny vdev is done before the gate opens: fewer syncs
    assert gated_syncs(100 * MiB, 4, 12, per_txg) < n
    # wider vdevs grow the window more slowly per sync: more syncs
    assert gated_syncs(1 << 44, 10, 12, per_txg) > n


def test_aliquot_counts_data_disks():
    assert group_aliquot(parse_layout("raidz2 8").vdevs[0]) == 6 * METASLAB_ALIQUOT
    assert group_aliquot(parse_layout("mirror 2").vdevs[0]) == METASLAB_ALIQUOT
    assert group_aliquot(parse_layout("draid2:4d:1s:11c").vdevs[0]) == 8 * METASLAB_ALIQUOT


def test_bias_follows_the_openzfs_examples():
    # metaslab.c's comment: V1 16M free of 128M, V2 64M free of 128M → ratio 40 % and 160 %
    free = [16 * MiB, 64 * MiB]
    total = sum(free)
    aliquot = METASLAB_ALIQUOT
    v1 = visit_bytes(free[0], total, 2, aliquot, 4 * KiB)
    v2 = visit_bytes(free[1], total, 2, aliquot, 4 * KiB)
    # the comment rounds: the integer ratio is 39 and 159 (mc_free + 1 in the divisor)
    assert v1 == pytest.approx(0.40 * aliquot, rel=0.03)
    assert v2 == pytest.approx(1.60 * aliquot, rel=0.03)
    # exactly: target = aliquot + (ratio − 100) × aliquot // 100, rounded up to whole blocks
    assert v1 == -(-(aliquot + (39 - 100) * aliquot // 100) // (4 * KiB)) * 4 * KiB
    assert v2 == -(-(aliquot + (159 - 100) * aliquot // 100) // (4 * KiB)) * 4 * KiB
    # equal vdevs, equal free space: even
    assert bias_shares([5, 5], [aliquot, aliquot], 4 * KiB) == (0.5, 0.5)


def test_new_writes_go_in_proportion_to_free_space():
    aliquot = 6 * METASLAB_ALIQUOT
    space = 10**13
    shares = bias_shares([int(0.2 * space), space], [aliquot, aliquot], 128 * KiB)
    assert shares[1] / shares[0] == pytest.approx(5.0, rel=0.01)
    # a full vdev gets nothing
    assert bias_shares([0, space], [aliquot, aliquot], 128 * KiB) == (0.0, 1.0)


def test_the_throttle_fills_every_vdev_and_without_it_the_emptiest_bounds_the_pool():
    preferred, capacities = (1 / 6, 5 / 6), (1e9, 1e9)
    with_throttle = throttled_split(preferred, capacities, 2e9)
    assert with_throttle.total == pytest.approx(2e9)
    assert with_throttle.saturated == (True, True)
    without = throttled_split(preferred, capacities, 2e9, throttle=False)
    assert without.total == pytest.approx(1e9 / (5 / 6))
    assert without.saturated == (False, True)
    # a light load is split by the bias in both cases
    light = throttled_split(preferred, capacities, 6e8)
    assert light.rates == pytest.approx((1e8, 5e8))
    assert light.saturated == (False, False)
    # a load one vdev cannot take spills to the other
    spill = throttled_split(preferred, capacities, 1.5e9)
    assert spill.rates == pytest.approx((0.5e9, 1e9))
