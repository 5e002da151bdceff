"""The raidz column map's skip (padding) sectors: where OpenZFS starts them."""

from zsim.layout.raidz import raidz_column_map

MiB = 1 << 20


def test_raidz1_odd_mib_swap_moves_the_skip_start_off_the_swapped_column():
    # vdev_raidz_map_alloc(): on raidz1 at an odd-MiB offset the parity and first data
    # column swap children, and rm_skipstart 0 becomes 1. 2 data sectors on raidz1 of 3
    # fill one whole row (bc = 0) and need 1 skip sector to reach a multiple of 2.
    even = raidz_column_map(0, 2 * 4096, 12, 3, 1)
    odd = raidz_column_map(MiB, 2 * 4096, 12, 3, 1)
    assert even.skip_sectors == odd.skip_sectors == 1
    assert even.skip_start == 0
    assert odd.skip_start == 1


def test_the_swap_leaves_a_nonzero_skip_start_alone():
    m = raidz_column_map(MiB, 4 * 4096, 12, 4, 1)  # 3 data disks: q = 1, r = 1, bc = 2
    assert m.skip_start == 2
    assert m.skip_start == raidz_column_map(0, 4 * 4096, 12, 4, 1).skip_start
