"""Capacity against figures published from real pools (sources in each test's docstring).

Tolerances are stated per test; every comparison prints its error.
"""

from __future__ import annotations

from zsim.capacity import capacity


def test_openzfs_issue_13727_draid_on_36_drives():
    """openzfs/zfs#13727: draid1:16d:36c:2s on 36 × ST18000NM000J (18,000,207,937,536 B),
    OpenZFS 2.1.5, whole Linux disks. ``zfs get -p available`` = 574,804,246,033,080 B with
    a little data on the pool. zsim gives USED+AVAIL; the gap must be the dataset's USED,
    a few MB. Tolerance: 0 ≤ gap ≤ 16 MiB."""
    r = capacity("draid1:16d:2s:36c", 18_000_207_937_536, zfs_version="2.1.5")
    measured_avail = 574_804_246_033_080
    gap = r.usable_bytes - measured_avail
    print(f"#13727: zsim {r.usable_bytes} B, measured AVAIL {measured_avail} B, gap {gap} B")
    assert r.vdevs[0].metaslab_count == 35_623
    assert r.vdevs[0].deflate_ratio == 481
    assert 0 <= gap <= 16 << 20


def test_wintelguy_single_disk_size():
    """wintelguy.com "ZFS Storage Overhead": a 1000 GiB disk shows ``zpool get -p size``
    1,065,151,889,408 B (124 metaslabs of 8 GiB). Tolerance: exact."""
    for partitioning in ("none", "linux"):
        r = capacity("stripe 1", 1000 << 30, partitioning=partitioning, zfs_version="2.0")
        print(f"wintelguy ({partitioning}): zsim {r.zpool_size_bytes} B vs 1065151889408 B")
        assert r.zpool_size_bytes == 1_065_151_889_408


def test_openzfs_issue_1089_deflate_ratios():
    """openzfs/zfs#1089: raidz2 of 6, 10 and 12 × 3 TB at ashift 12 report less than
    (n−p)/n because the deflate ratio carries padding: 341, 390 and 390 of 512."""
    for width, ratio in ((6, 341), (10, 390), (12, 390)):
        assert capacity(f"raidz2 {width}", 3 * 10**12).vdevs[0].deflate_ratio == ratio


def test_zpoolconcepts_draid_min_allocation():
    """zpoolconcepts(7): with D=8 data disks and 4 KiB sectors the smallest dRAID
    allocation is 32 KiB of data (a 4 KiB block still takes a full 8+P stripe)."""
    from zsim.layout.alloc import psize_to_asize
    from zsim.layout.grammar import parse_layout

    (v,) = parse_layout("draid2:8d:0s:10c").vdevs
    assert psize_to_asize(v, 4096, 12) == psize_to_asize(v, 32 << 10, 12) == 10 * 4096
