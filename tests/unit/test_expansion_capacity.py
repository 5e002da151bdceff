"""Capacity of an expanded RAIDZ vdev (issue 20): golden values from an independent transcription
of the OpenZFS 2.3.0 arithmetic, properties, and the bad inputs.

The ``oz_*`` functions below are written from the OpenZFS source at tag ``zfs-2.3.0`` (line
numbers of that tag), not from zsim's modules, so a slip in either shows as a mismatch. They
use ``partitioning="none"`` (the device is given to ZFS as it is) to keep the Linux partition
table, tested elsewhere, out of the comparison.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zsim
from zsim.errors import ZsimError
from zsim.layout import parse_layout, to_compact, to_zpool
from zsim.units import GiB, KiB, MiB

# ---------------------------------------------------------------- transcription of OpenZFS


def oz_leaf_asize(osize: int) -> int:
    # module/zfs/vdev.c vdev_open() l.2145: osize = P2ALIGN(osize, sizeof (vdev_label_t));
    # l.2155: asize = osize - (VDEV_LABEL_START_SIZE + VDEV_LABEL_END_SIZE);
    # include/sys/vdev_impl.h: label 256 KiB, start = 2 labels + 3.5 MiB boot, end = 2 labels
    label = 256 * KiB
    return osize // label * label - (2 * label + 7 * MiB // 2) - 2 * label


def oz_raidz_asize(psize: int, ashift: int, cols: int, nparity: int) -> int:
    # module/zfs/vdev_raidz.c vdev_raidz_asize() l.2257-2259, cols from
    # vdev_raidz_get_logical_width(vdrz, txg) l.2215 (txg 0 → vd_original_width)
    asize = ((psize - 1) >> ashift) + 1
    asize += nparity * ((asize + cols - nparity - 1) // (cols - nparity))
    return -(-asize // (nparity + 1)) * (nparity + 1) << ashift


def oz_ms_shift(asize: int) -> int:
    # module/zfs/vdev.c vdev_metaslab_set_size() l.2833-2900 (defaults: 29, 16, 200, 34, 2^17)
    ms_count = asize >> 29
    if ms_count < 16:
        shift = (asize // 16).bit_length()
    elif ms_count > 200:
        shift = (asize // 200).bit_length()
    else:
        shift = 29
    if shift < 24:  # SPA_MAXBLOCKSHIFT
        shift = 24
    elif shift > 34:
        shift = 34
        if (asize >> shift) > 1 << 17:
            shift = (asize // (1 << 17)).bit_length()
    return shift


def oz_slop(rdspace: int, embedded_log: int) -> int:
    # module/zfs/spa_misc.c spa_get_slop_space() l.1862-1890 (shift 5, 128 MiB … 128 GiB)
    slop = min(rdspace >> 5, 128 * GiB)
    slop -= min(embedded_log, slop >> 1)
    return max(slop, min(rdspace >> 1, 128 * MiB))


def oz_expanded(parity: int, created: int, attached: int, disk: int, ashift: int) -> list[dict]:
    """Pool figures of one raidz vdev as created and after each attach (all disks ``disk``)."""
    leaf = oz_leaf_asize(disk)
    # vdev_raidz_open() l.2185: *asize *= vd->vdev_children (no expansion running)
    shift = oz_ms_shift(leaf * created)  # fixed at creation: vdev_metaslab_set_size() once
    # vdev_set_deflate_ratio() (vdev.c l.1960): 2^17 / (psize_to_asize(2^17, txg 0) >> 9)
    a0 = oz_raidz_asize(128 * KiB, ashift, created, parity)
    ratio = (128 * KiB) // (a0 >> 9)
    out = []
    for width in range(created, created + attached + 1):
        count = (leaf * width) >> shift  # vdev_metaslab_init() l.1523: newc = asize >> ms_shift
        space = count << shift
        dspace = (space >> 9) * ratio  # vdev_deflated_space()
        # vdev_metaslab_init() l.1580: one metaslab to the embedded log past 64 metaslabs
        elog = ((1 << shift) >> 9) * ratio if count > 64 else 0
        rd = dspace - elog
        usable = rd - oz_slop(rd, elog)
        # a 128 KiB block born at this width (vdev_raidz_asize with a post-expansion txg)
        ak = oz_raidz_asize(128 * KiB, ashift, width, parity)
        out.append(
            {"size": space, "usable": usable, "after_rewrite": usable * a0 // ak, "count": count}
        )
    return out


# ---------------------------------------------------------------- golden comparisons

DISKS = [10 * 10**9, 3 * 10**12, 12_000_138_625_024, 20 * 10**12]
CASES = [
    (parity, parity + extra, attached, disk, ashift)
    for parity, extra, attached, disk, ashift in itertools.product(
        (1, 2, 3), (1, 4), (1, 2, 3, 4), DISKS, (9, 12)
    )
    if (parity + attached + extra) % 2 == 0 or disk == DISKS[1]  # a spread, not all 192
]


@pytest.mark.parametrize(("parity", "created", "attached", "disk", "ashift"), CASES)
def test_expanded_raidz_matches_openzfs_arithmetic(parity, created, attached, disk, ashift):
    layout = f"raidz{parity} {created}+{attached}"
    want = oz_expanded(parity, created, attached, disk, ashift)
    report = zsim.capacity(layout, disk_size=disk, ashift=ashift, partitioning="none")
    steps = report.expansion_steps
    assert len(steps) == attached + 1
    for step, expected in zip(steps, want, strict=True):
        assert step.zpool_size_bytes == expected["size"]
        assert step.usable_bytes == expected["usable"]
        assert step.usable_after_rewrite_bytes == expected["after_rewrite"]
        assert step.usable_new_data_bytes == expected["after_rewrite"]  # empty at each attach
    assert report.zpool_size_bytes == want[-1]["size"]
    assert report.usable_bytes == want[-1]["usable"]
    assert report.usable_after_rewrite_bytes == want[-1]["after_rewrite"]
    assert report.vdevs[0].metaslab_count == want[-1]["count"]


def test_zfs_list_keeps_the_original_ratio():
    """raidz1 3 → 4 wide at ashift 12: the reported ratio stays 341/512 (3 wide), not 372."""
    r = zsim.capacity("raidz1 3+1", disk_size="3TB", ashift=12)
    vdev = r.vdevs[0]
    assert vdev.deflate_ratio == 341  # 2^17 / (196608 >> 9)
    assert vdev.width_deflate_ratio == 372  # 2^17 / (180224 >> 9)
    assert vdev.expansion_unreported_bytes > 0
    assert vdev.original_width == 3
    assert vdev.attached_devices == ("sdd",)


def test_metaslab_size_stays_from_creation():
    """A 3 × 40 GB raidz grown to 7: 1 GiB metaslabs (120 GB vdev), not the 2 GiB a vdev
    created 7 wide (280 GB) gets."""
    created = zsim.capacity("raidz1 3", disk_size="40GB", partitioning="none")
    grown = zsim.capacity("raidz1 3+4", disk_size="40GB", partitioning="none")
    fresh = zsim.capacity("raidz1 7", disk_size="40GB", partitioning="none")
    assert created.vdevs[0].metaslab_shift == oz_ms_shift(3 * oz_leaf_asize(40 * 10**9)) == 30
    assert fresh.vdevs[0].metaslab_shift == oz_ms_shift(7 * oz_leaf_asize(40 * 10**9)) == 31
    assert grown.vdevs[0].metaslab_shift == created.vdevs[0].metaslab_shift
    assert grown.vdevs[0].metaslab_count > created.vdevs[0].metaslab_count
    assert fresh.vdevs[0].metaslab_shift != grown.vdevs[0].metaslab_shift


def test_embedded_log_appears_when_expansion_passes_64_metaslabs():
    # 3 × 10 GB: 30 GB vdev → 512 MiB metaslabs, 55 of them; 2 more disks → 93 (> 64)
    small = zsim.capacity("raidz1 3", disk_size="10GB", partitioning="none")
    grown = zsim.capacity("raidz1 3+2", disk_size="10GB", partitioning="none")
    assert small.vdevs[0].metaslab_count <= 64 and small.embedded_log_bytes == 0
    assert grown.vdevs[0].metaslab_count > 64 and grown.embedded_log_bytes > 0
    step = grown.vdevs[0].steps
    assert [s.embedded_log_bytes > 0 for s in step] == [s.metaslab_count > 64 for s in step]


def test_worked_example_raidz2_3_to_6_reports_about_half():
    """The issue's 3-wide raidz2 grown to 6: zfs list shows about half the real space."""
    grown = zsim.capacity("raidz2 3+3", disk_size="3TB")
    fresh = zsim.capacity("raidz2 6", disk_size="3TB")
    assert grown.zpool_size_bytes == fresh.zpool_size_bytes
    assert 0.45 < grown.usable_bytes / grown.usable_after_rewrite_bytes < 0.55
    assert grown.usable_after_rewrite_bytes <= fresh.usable_bytes


def test_fill_at_attach_puts_new_data_between_reported_and_rewrite():
    full = zsim.capacity("raidz1 3+1", disk_size="3TB", fill_at_attach=0.8)
    empty = zsim.capacity("raidz1 3+1", disk_size="3TB")
    assert full.usable_bytes == empty.usable_bytes  # zfs list does not care what is stored
    assert full.usable_after_rewrite_bytes == empty.usable_after_rewrite_bytes
    assert full.usable_bytes < full.usable_new_data_bytes < full.usable_after_rewrite_bytes
    assert empty.usable_new_data_bytes == empty.usable_after_rewrite_bytes


def test_attach_commands_and_create_form():
    r = zsim.capacity("2x raidz1 3+1 + mirror 2", disk_size="4TB")
    assert r.zpool_create_form == "raidz1 sda sdb sdc raidz1 sde sdf sdg mirror sdi sdj"
    assert r.zpool_attach_commands == (
        "zpool attach tank raidz1-0 sdd",
        "zpool attach tank raidz1-1 sdh",
    )
    assert [s.vdev_index for s in r.expansion_steps] == [None, 0, 1]
    d = r.to_dict()
    assert d["usable_bytes"] == r.usable_bytes
    assert d["usable_after_rewrite_bytes"] == r.usable_after_rewrite_bytes
    assert d["vdevs"][0]["attached_devices"] == ["sdd"]
    assert [s["width"] for s in d["vdevs"][0]["steps"]] == [3, 4]
    assert d["expansion_steps"][1]["command"] == "zpool attach tank raidz1-0 sdd"


def test_both_spellings_give_the_same_capacity():
    a = zsim.capacity("raidz2 6+2", disk_size="8TB")
    b = zsim.capacity("raidz2 sda sdb sdc sdd sde sdf attach sdg sdh", disk_size="8TB")
    assert a == b


# ---------------------------------------------------------------- grammar


def test_grammar_both_spellings_and_round_trip():
    compact = parse_layout("2x raidz1 3+1 + mirror 2 log 1")
    named = parse_layout(
        "raidz1 sda sdb sdc attach sdd raidz1 sde sdf sdg attach sdh mirror sdi sdj log sdk"
    )
    assert compact == named
    vdev = compact.vdevs[0]
    assert (vdev.width, vdev.original_width, vdev.attached_devices) == (4, 3, ("sdd",))
    assert to_compact(compact) == "2x raidz1 3+1 + mirror 2 log 1"
    assert parse_layout(to_zpool(compact)) == compact
    assert parse_layout("raidz2 6+2") != parse_layout("raidz2 8")  # not the same vdev


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("raidz2 6+0", "attaches no disk"),
        ("mirror 2+1", "mirror"),
        ("stripe 3+1", "single-disk"),
        ("draid2:4d:1s:11c 11+1", "dRAID"),
        ("mirror sda sdb attach sdc", "mirror"),
        ("raidz3 250+6", "255"),
        ("raidz1 3 attach 1", r"3\+1"),
        ("attach sda", "must follow"),
        ("raidz1 sda sdb sdc attach", "names no device"),
    ],
)
def test_grammar_refuses(text, needle):
    with pytest.raises(ZsimError, match=needle):
        parse_layout(text)


# ---------------------------------------------------------------- rules of zpool attach


def test_release_before_2_3_is_refused():
    with pytest.raises(ZsimError, match=r"2\.3"):
        zsim.capacity("raidz1 3+1", disk_size="3TB", zfs_version="2.2")
    zsim.capacity("raidz1 3+1", disk_size="3TB", zfs_version="2.3")  # accepted


def test_rewrite_note_before_2_4():
    r = zsim.capacity("raidz1 3+1", disk_size="3TB", zfs_version="2.3")
    assert any("zfs rewrite" in n for n in r.notes)


def test_smaller_attached_disk():
    sizes = {"sdd": "2TB"}
    with pytest.raises(ZsimError, match="too small to attach"):
        zsim.capacity("raidz1 3+1", disk_size="3TB", disk_sizes=sizes)
    # a disk a little smaller than the others is accepted down to the metaslab space / width
    # (vdev_raidz_min_asize); the vdev then counts the smaller child in every column
    slightly = zsim.capacity("raidz1 3+1", disk_size="3TB", disk_sizes={"sdd": "2999GB"})
    same = zsim.capacity("raidz1 3+1", disk_size="3TB")
    assert slightly.vdevs[0].leaf_asize < same.vdevs[0].leaf_asize


def test_boot_area_limits_width_at_large_ashift():
    # vdev_raidz_attach_check(): new_children << ashift <= 3.5 MiB → 56 children at ashift 16
    zsim.capacity("raidz1 50+6", disk_size="1TB", ashift=16)
    with pytest.raises(ZsimError, match="vdev_raidz_attach_check"):
        zsim.capacity("raidz1 50+7", disk_size="1TB", ashift=16)


def test_bad_fill():
    for fill in (1.0, -0.1, "half", True):
        with pytest.raises(ZsimError, match="fill_at_attach"):
            zsim.capacity("raidz1 3+1", disk_size="3TB", fill_at_attach=fill)


# ---------------------------------------------------------------- properties

_layouts = st.tuples(st.integers(1, 3), st.integers(0, 5), st.integers(1, 4))


@settings(max_examples=40, deadline=None)
@given(
    _layouts,
    st.integers(20 * 10**9, 30 * 10**12),
    st.sampled_from([9, 12, 13]),
    st.floats(0, 0.95),
)
def test_ordering_and_monotone(shape, disk, ashift, fill):
    parity, extra, attached = shape
    created = parity + 1 + extra
    text = f"raidz{parity} {created}+{attached}"
    r = zsim.capacity(text, disk_size=disk, ashift=ashift, fill_at_attach=fill)
    assert r.usable_bytes <= r.usable_new_data_bytes <= r.usable_after_rewrite_bytes
    steps = r.expansion_steps
    for before, after in itertools.pairwise(steps):
        assert after.zpool_size_bytes > before.zpool_size_bytes
        assert after.usable_bytes >= before.usable_bytes
        assert after.usable_after_rewrite_bytes >= before.usable_after_rewrite_bytes
    for s in steps:
        assert s.usable_bytes <= s.usable_new_data_bytes <= s.usable_after_rewrite_bytes


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.integers(0, 8), st.integers(20 * 10**9, 30 * 10**12))
def test_unexpanded_vdev_is_todays_figures(parity, extra, disk):
    r = zsim.capacity(f"raidz{parity} {parity + 1 + extra}", disk_size=disk)
    assert r.usable_new_data_bytes == r.usable_bytes == r.usable_after_rewrite_bytes
    assert r.expansion_steps == () and r.zpool_attach_commands == ()
    assert r.zpool_create_form == r.zpool_form


def test_first_step_is_the_pool_as_created():
    grown = zsim.capacity("raidz2 5+3 + mirror 2", disk_size="6TB")
    created = zsim.capacity("raidz2 5 + mirror 2", disk_size="6TB")
    first = grown.expansion_steps[0]
    assert first.usable_bytes == created.usable_bytes
    assert first.zpool_size_bytes == created.zpool_size_bytes
    assert grown.expansion_steps[-1].usable_bytes == grown.usable_bytes


@st.composite
def _expanded_layouts(draw) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        parity = draw(st.integers(1, 3))
        created = draw(st.integers(parity + 1, 12))
        attached = draw(st.integers(0, 4))
        count = draw(st.integers(1, 3))
        prefix = f"{count}x " if count > 1 else ""
        parts.append(f"{prefix}raidz{parity} {created}" + (f"+{attached}" if attached else ""))
    if draw(st.booleans()):
        parts.append("mirror 2")
    tail = draw(st.sampled_from(["", " log 1", " special mirror 2 cache 1"]))
    return " + ".join(parts) + tail


@settings(max_examples=60, deadline=None)
@given(_expanded_layouts())
def test_expanded_layouts_round_trip_in_both_spellings(text):
    tree = parse_layout(text)
    assert parse_layout(to_compact(tree)) == tree
    assert parse_layout(to_zpool(tree)) == tree
    for vdev in tree.vdevs:
        assert vdev.as_created().width == vdev.original_width
        assert vdev.as_created().devices + vdev.attached_devices == vdev.devices
