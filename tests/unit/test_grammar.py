"""Layout grammar (DESIGN.md §3): both spellings, support classes, dRAID, md, and the errors."""

from __future__ import annotations

import pytest

from zsim.errors import LayoutError
from zsim.layout import (
    BtrfsArray,
    MdArray,
    RawDevices,
    Vdev,
    ZfsLayout,
    ZpoolOnBlock,
    parse_layout,
    to_compact,
    to_zpool,
)


def kinds(layout):
    return [(v.vclass, v.kind, v.width, v.parity) for v in layout.vdevs]


def test_compact_forms():
    assert kinds(parse_layout("stripe 8")) == [("normal", "disk", 1, 0)] * 8
    assert kinds(parse_layout("mirror 2")) == [("normal", "mirror", 2, 0)]
    assert kinds(parse_layout("4x mirror 2")) == [("normal", "mirror", 2, 0)] * 4
    assert kinds(parse_layout("raidz1 4")) == [("normal", "raidz", 4, 1)]
    assert kinds(parse_layout("raidz 4")) == [("normal", "raidz", 4, 1)]
    assert kinds(parse_layout("2x raidz2 4")) == [("normal", "raidz", 4, 2)] * 2
    assert kinds(parse_layout("raidz3 8")) == [("normal", "raidz", 8, 3)]
    assert kinds(parse_layout("stripe 1")) == [("normal", "disk", 1, 0)]


def test_mixed_pool():
    layout = parse_layout("2x raidz2 6 + mirror 2")
    assert kinds(layout) == [("normal", "raidz", 6, 2)] * 2 + [("normal", "mirror", 2, 0)]
    assert layout.devices[:3] == ("sda", "sdb", "sdc")
    assert layout.devices[-1] == "sdn"


def test_support_classes_both_separators():
    a = parse_layout("raidz2 6 log mirror 2")
    b = parse_layout("raidz2 6 + log mirror 2")
    assert a == b
    assert kinds(a) == [("normal", "raidz", 6, 2), ("log", "mirror", 2, 0)]
    c = parse_layout("4x mirror 2 special mirror 2 log 1 cache 1")
    assert [v.vclass for v in c.vdevs] == ["normal"] * 4 + ["special", "log", "cache"]
    assert c.of_class("log")[0].kind == "disk"


def test_zpool_form_equals_compact_form():
    compact = parse_layout("2x raidz2 4")
    named = parse_layout("raidz2 sda sdb sdc sdd raidz2 sde sdf sdg sdh")
    assert compact == named
    assert parse_layout("mirror sda sdb mirror sdc sdd") == parse_layout("2x mirror 2")
    assert parse_layout("sda sdb sdc") == parse_layout("stripe 3")


def test_zpool_form_keeps_names_and_support_classes():
    layout = parse_layout(
        "raidz2 /dev/disk/by-id/a /dev/disk/by-id/b /dev/disk/by-id/c /dev/disk/by-id/d "
        "log mirror nvme0n1 nvme1n1 cache nvme2n1"
    )
    assert layout.of_class("log")[0].devices == ("nvme0n1", "nvme1n1")
    assert layout.of_class("cache")[0].devices == ("nvme2n1",)
    assert to_zpool(layout).endswith("log mirror nvme0n1 nvme1n1 cache nvme2n1")


@pytest.mark.parametrize(
    "text",
    [
        "stripe 8",
        "4x mirror 2",
        "2x raidz2 6 + mirror 2",
        "raidz2 6 special mirror 2 log 1",
        "4x mirror 2 special mirror 2 log 1 cache 1",
        "draid2:8d:2s:24c",
        "3x raidz3 11 log 2x mirror 2 cache 2 spare 2",
        "raidz1 5 + stripe 2",
    ],
)
def test_prints_back_in_both_forms(text):
    layout = parse_layout(text)
    assert parse_layout(to_compact(layout)) == layout
    assert parse_layout(to_zpool(layout)) == layout


def test_compact_print_groups():
    assert to_compact(parse_layout("mirror 2 + mirror 2 + raidz1 3")) == "2x mirror 2 + raidz1 3"
    assert to_compact(parse_layout("raidz2 6 log 1 cache 2")) == "raidz2 6 log 1 cache 2"


def test_draid_full_spelling():
    (v,) = parse_layout("draid2:8d:2s:24c").vdevs
    assert (v.parity, v.ndata, v.nspares, v.width) == (2, 8, 2, 24)
    assert v.type_word() == "draid2:8d:24c:2s"


def test_draid_groups_per_slice():
    # draid_config_by_type(): smallest ngroups with ngroups·(D+P) % (children − spares) == 0
    (v,) = parse_layout("draid2:8d:2s:24c").vdevs
    assert (v.draid_ngroups * 10) % 22 == 0 and v.draid_ngroups == 11
    (w,) = parse_layout("draid1:4d:1s:11c").vdevs
    assert w.draid_ngroups == 2  # 2 groups of 5 fill the 10 non-spare children


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("draid 10", (1, 8, 0, 10)),  # OpenZFS defaults: parity 1, 0 spares, min(c-s-p, 8) data
        ("draid2 6", (2, 4, 0, 6)),
        ("draid2:1s 12", (2, 8, 1, 12)),
        ("draid3:16d:1s:60c", (3, 16, 1, 60)),
        ("draid1:3d:8c", (1, 3, 0, 8)),
        ("draid2:24c:2s:8d", (2, 8, 2, 24)),  # parts in any order, as zpool accepts
    ],
)
def test_draid_defaults_follow_openzfs(text, expected):
    (v,) = parse_layout(text).vdevs
    assert (v.parity, v.ndata, v.nspares, v.width) == expected


def test_md_btrfs_raw_and_zpool_on():
    md = parse_layout("md-raid6 8 chunk=64K")
    assert isinstance(md, MdArray) and md.level == 6 and md.chunk == 65536 and md.width == 8
    assert parse_layout("md-raid10 4").chunk == 512 * 1024
    assert isinstance(parse_layout("btrfs-raid10 4"), BtrfsArray)
    assert isinstance(parse_layout("raw 4"), RawDevices)
    on = parse_layout("zpool-on md-raid6 16 chunk=64K")
    assert isinstance(on, ZpoolOnBlock) and on.block.width == 16
    assert to_compact(on) == "zpool-on md-raid6 16 chunk=64K"
    assert parse_layout(to_compact(md)) == md


def test_fault_tolerance():
    assert parse_layout("2x raidz2 6 + mirror 3").fault_tolerance == 2
    assert parse_layout("stripe 4 + mirror 2").fault_tolerance == 0
    assert parse_layout("md-raid6 8").fault_tolerance == 2


def test_vdev_tree_is_frozen():
    layout = parse_layout("mirror 2")
    assert isinstance(layout, ZfsLayout)
    with pytest.raises(AttributeError):
        layout.vdevs[0].kind = "raidz"  # type: ignore[misc]
    assert Vdev("mirror", ("a", "b")).shape() == Vdev("mirror", ("c", "d")).shape()


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("raidz3 3", "raidz3 needs at least 4 disks"),
        ("mirror 1", "a mirror needs at least 2 disks"),
        ("draid2:8d:2s:10c", "need 12 children but there are 10"),
        ("draid2:8d:24c 20", "says 24 children but 20"),
        ("draid2:8x 12", "each ':' part"),
        ("draid1:1s:150s 200", "at most 100 distributed spares"),
        ("raidz4 8", "parity must be 1, 2 or 3"),
        ("", "empty"),
        ("8", "ambiguous"),
        ("raidz2 4 sde", "mixes a count with device names"),
        ("raidz2 4 log nvme0n1", "mixes counts and device names"),
        ("log 1", "no data vdev"),
        ("raidz2 6 log raidz1 3", "plain device or a mirror"),
        ("raidz2 6 cache mirror 2", "plain devices"),
        ("mirror sda sda", "appears twice"),
        ("0x mirror 2", "at least 1"),
        ("2x", "must be followed by a vdev type"),
        ("raidz2 6 log", "has no devices after it"),
        ("raidz2 6 log 1 log 1", "appears twice"),
        ("stripe 100000", "zsim models"),
        ("md-raid7 4", "unknown md level"),
        ("md-raid6 3", "at least 4 disks"),
        ("md-raid5 4 chunk=3K", "power of two"),
        ("btrfs-raid10 3", "at least 4 disks"),
        ("raidz2 300", "wider than OpenZFS allows"),
        ("zpool-on", "needs a RAID block device"),
        ("mirror", "needs a disk count or device names"),
    ],
)
def test_impossible_layouts_say_why(text, fragment):
    with pytest.raises(LayoutError, match=fragment):
        parse_layout(text)
