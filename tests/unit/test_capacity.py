"""Capacity rules one by one: partitioning, versions, slop, effective capacity, md, btrfs."""

from __future__ import annotations

import pytest

from zsim.capacity import capacity, md_capacity
from zsim.errors import ZsimError
from zsim.layout.mdraid import md_data_offset
from zsim.units import TB, GiB, MiB
from zsim.zfs.space import leaf_asize, linux_wholedisk_partition, metaslab_shift, slop_space
from zsim.zfs.version import parse_zfs_version


def test_linux_whole_disk_partition():
    # capacity-rules.md §5.1: a 5e12-byte disk gives partition 1 of 4,999,989,952,512 B
    assert linux_wholedisk_partition(5 * TB) == 4_999_989_952_512
    assert linux_wholedisk_partition(5 * TB, 4096) < 5 * TB


def test_leaf_asize_aligns_then_subtracts_labels():
    assert leaf_asize(1_000_204_886_016) == 1_000_199_946_240
    assert leaf_asize((1 << 30) + 1) == (1 << 30) - 4 * MiB - 512 * 1024


def test_metaslab_rules_by_version():
    new, old = parse_zfs_version("2.2"), parse_zfs_version("0.7")
    assert metaslab_shift(12 * TB, new) == 34  # capped at 16 GiB
    assert metaslab_shift(12 * TB, old) == 36  # pre-0.8: ~200 metaslabs, no cap
    assert metaslab_shift(50 * GiB, new) == 29  # 512 MiB band
    assert metaslab_shift(2 * GiB, new) == 28  # highbit64(asize/16): 8 metaslabs of 256 MiB


def test_slop_history():
    space = 100 * TB
    assert slop_space(space, 0, parse_zfs_version("0.6.4")) == space >> 6
    assert slop_space(space, 0, parse_zfs_version("0.7")) == space >> 5
    assert slop_space(space, 0, parse_zfs_version("2.0.5")) == space >> 5
    assert slop_space(space, 0, parse_zfs_version("2.0.6")) == 128 * GiB
    assert slop_space(space, 100 * GiB, parse_zfs_version("2.1")) == 64 * GiB
    assert slop_space(1 << 30, 0, parse_zfs_version("2.2")) == 128 * MiB  # floor
    assert slop_space(100 * MiB, 0, parse_zfs_version("2.2")) == 50 * MiB  # half a tiny pool


def test_version_features_are_checked():
    with pytest.raises(ZsimError, match=r"dRAID needs OpenZFS 2\.1"):
        capacity("draid2:4d:0s:6c", TB, zfs_version="2.0")
    with pytest.raises(ZsimError, match=r"special and dedup vdevs need OpenZFS 0\.8"):
        capacity("raidz2 6 special mirror 2", TB, zfs_version="0.7")
    with pytest.raises(ZsimError, match="not a release number"):
        capacity("mirror 2", TB, zfs_version="two")


def test_older_release_reports_less_for_many_big_vdevs():
    # no embedded log before 2.1 → no slop credit; no cap before 2.0.6 → 1/32 of a big pool
    new = capacity("10x raidz2 6", 15 * TB, zfs_version="2.2")
    old = capacity("10x raidz2 6", 15 * TB, zfs_version="2.0")
    assert old.usable_bytes < new.usable_bytes
    assert old.slop_bytes == old.normal_dspace_bytes >> 5


def test_effective_capacity_depends_on_recordsize():
    # raidz2 4-wide: a 128K block is charged 248/512 (< 0.5); 1M records fit more, 4K less
    small = capacity("raidz2 4", 12 * TB, recordsize="4K")
    typical = capacity("raidz2 4", 12 * TB, recordsize="128K")
    large = capacity("raidz2 4", 12 * TB, recordsize="1M")
    assert small.effective_bytes < typical.effective_bytes < large.effective_bytes
    assert small.usable_bytes == typical.usable_bytes == large.usable_bytes
    # a 4K block on raidz2 costs p+1 = 3 sectors: one third of raw at best
    assert small.effective_efficiency <= 1 / 3


def test_compression_raises_effective_not_reported():
    plain = capacity("mirror 2", 4 * TB)
    packed = capacity("mirror 2", 4 * TB, compress_ratio=2.0)
    assert packed.usable_bytes == plain.usable_bytes
    assert packed.effective_bytes == pytest.approx(2 * plain.effective_bytes, rel=1e-6)
    # less than 1/8 saved: ZFS stores the record uncompressed
    assert capacity("mirror 2", 4 * TB, compress_ratio=1.1).effective_bytes == plain.effective_bytes


def test_support_classes_stay_out_of_avail():
    base = capacity("raidz2 6", 12 * TB)
    more = capacity(
        "raidz2 6 special mirror 2 log mirror 2 cache 2 spare 1",
        12 * TB,
        class_disk_size={"log": "400GB", "cache": "1TB"},
    )
    assert more.normal_dspace_bytes == base.normal_dspace_bytes
    assert more.raw_bytes == base.raw_bytes
    assert more.support_raw_bytes == 2 * 12 * TB + 2 * 400 * 10**9 + 2 * TB + 12 * TB
    assert more.zpool_size_bytes > base.zpool_size_bytes  # special counts in SIZE, log not
    assert more.log_bytes > 0 and more.cache_bytes == 2 * TB


def test_mirror_takes_the_smallest_child():
    even = capacity("mirror sda sdb", 12 * TB)
    odd = capacity("mirror sda sdb", 12 * TB, disk_sizes={"sdb": "10TB"})
    assert odd.vdevs[0].vdev_asize < even.vdevs[0].vdev_asize
    assert odd.vdevs[0].geometry_bytes > 1.9 * TB
    with pytest.raises(ZsimError, match="not in the layout"):
        capacity("mirror sda sdb", 12 * TB, disk_sizes={"sdz": "1TB"})


def test_breakdown_adds_up():
    r = capacity("2x raidz2 6 + mirror 2 special mirror 2", 12 * TB)
    for v in r.vdevs:
        assert (
            v.labels_bytes
            + v.geometry_bytes
            + v.redundancy_bytes
            + v.padding_bytes
            + v.embedded_log_bytes
            + v.slop_bytes
            + v.usable_bytes
        ) == v.raw_bytes
    assert sum(v.slop_bytes for v in r.vdevs) == r.slop_bytes
    assert sum(v.usable_bytes for v in r.vdevs if v.vclass == "normal") == r.usable_bytes


def test_md_raid_sizes():
    assert md_data_offset(12 * TB) == 264_192 * 512  # the 129 MiB `mdadm --examine` shows
    member = (12 * TB - 264_192 * 512) // MiB * MiB  # whole MiB (and whole 512K chunks)
    assert md_capacity("md-raid6 8", 12 * TB).usable_bytes == 6 * member
    assert md_capacity("md-raid5 4", 12 * TB).usable_bytes == 3 * member
    assert md_capacity("md-raid0 4", 12 * TB).usable_bytes == 4 * member
    assert md_capacity("md-raid10 4", 12 * TB).usable_bytes == 2 * member
    r1 = md_capacity("md-raid1 2", 12 * TB).usable_bytes
    assert r1 == member
    with pytest.raises(ZsimError, match="not an md array"):
        md_capacity("mirror 2", TB)


def test_zpool_on_md_and_btrfs_and_raw():
    on = capacity("zpool-on md-raid6 8 chunk=64K", 12 * TB)
    md = md_capacity("md-raid6 8 chunk=64K", 12 * TB)
    assert on.system == "zpool-on" and on.usable_bytes < md.usable_bytes
    assert on.fault_tolerance == 2
    assert capacity("btrfs-raid1 3", 4 * TB).usable_bytes == 3 * (4 * TB - MiB) // 2
    assert capacity("raw 4", 4 * TB).usable_bytes == 16 * TB


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"disk_size": 0}, "more than 0"),
        ({"disk_size": "-3TB"}, "negative"),
        ({"disk_size": "12TB", "ashift": 20}, "ashift"),
        ({"disk_size": "12TB", "recordsize": "100K"}, "power of two"),
        ({"disk_size": "12TB", "compress_ratio": 0.5}, "≥ 1"),
        ({"disk_size": "12TB", "partitioning": "bsd"}, "partitioning"),
        ({"disk_size": "32MB"}, "64 MiB minimum"),
    ],
)
def test_bad_input_raises_zsim_error(kwargs, fragment):
    with pytest.raises(ZsimError, match=fragment):
        capacity("raidz2 6", **kwargs)


def test_to_dict_has_the_contract_keys():
    d = capacity("raidz2 8", 12_000_138_625_024, ashift=12).to_dict()
    for key in ("raw_bytes", "usable_bytes", "efficiency", "slop_bytes", "vdevs"):
        assert key in d
    assert isinstance(d["vdevs"], list) and d["vdevs"][0]["layout"] == "raidz2 8"
