"""The rule-of-thumb baseline (iXsystems "Six Metrics"): its arithmetic, layout by layout."""

from __future__ import annotations

import pytest

import zsim
from zsim.baseline import (
    RW_MODES,
    BaselineEstimate,
    baseline_estimate,
    disk_rates,
    rule_shares,
)
from zsim.errors import CatalogError, ZsimError
from zsim.hardware.catalog import Profile

MiB = 1 << 20
K4 = 4096


@pytest.fixture(scope="module")
def ironwolf() -> Profile:
    return zsim.load_profile("seagate-ironwolf-12tb")


@pytest.fixture(scope="module")
def disk() -> tuple[float, float]:
    """(streaming bytes/s, random IOPS) of one IronWolf as the rule uses them."""
    stream = 210e6  # max_sustained
    iops = 1 / (0.0085 + 0.5 * 60 / 7200)  # avg_seek_read + half a rotation at 7200 rpm
    return stream, iops


def est(layout: str, profile: Profile, rw: str, bs: int) -> BaselineEstimate:
    return baseline_estimate(zsim.parse_layout(layout), profile, rw, bs)


def test_disk_rates_hdd(ironwolf, disk):
    rates = disk_rates(ironwolf)
    assert rates.read_bw == rates.write_bw == disk[0]
    assert rates.read_iops == pytest.approx(disk[1])
    assert rates.read_iops == pytest.approx(78.947, rel=1e-4)
    assert rates.write_iops == rates.read_iops


def test_raidz2_8(ironwolf, disk):
    stream, iops = disk
    seq = est("raidz2 8", ironwolf, "read", MiB)
    assert seq.read_bytes_per_s == pytest.approx(6 * stream)  # N − p = 6 data disks
    assert seq.read_iops == pytest.approx(6 * stream / MiB)
    assert seq.write_bytes_per_s == 0
    assert est("raidz2 8", ironwolf, "write", MiB).write_bytes_per_s == pytest.approx(6 * stream)
    rand = est("raidz2 8", ironwolf, "randread", K4)
    assert rand.read_iops == pytest.approx(iops)  # one disk of IOPS
    assert rand.read_bytes_per_s == pytest.approx(iops * K4)
    assert rand.limit == "rule-of-thumb: 1 vdev x 1 disk read IOPS"
    assert est("raidz2 8", ironwolf, "randwrite", K4).write_iops == pytest.approx(iops)


def test_mirrors_4x2(ironwolf, disk):
    stream, iops = disk
    layout = "4x mirror 2"
    assert est(layout, ironwolf, "read", MiB).read_bytes_per_s == pytest.approx(8 * stream)
    assert est(layout, ironwolf, "write", MiB).write_bytes_per_s == pytest.approx(4 * stream)
    assert est(layout, ironwolf, "randread", K4).read_iops == pytest.approx(8 * iops)
    write = est(layout, ironwolf, "randwrite", K4)
    assert write.write_iops == pytest.approx(4 * iops)
    assert write.limit == "rule-of-thumb: 4 vdevs x 1 disk write IOPS"


def test_stripe_8(ironwolf, disk):
    stream, iops = disk
    for rw, field, want in (
        ("read", "read_bytes_per_s", 8 * stream),
        ("write", "write_bytes_per_s", 8 * stream),
        ("randread", "read_iops", 8 * iops),
        ("randwrite", "write_iops", 8 * iops),
    ):
        bs = K4 if rw.startswith("rand") else MiB
        assert getattr(est("stripe 8", ironwolf, rw, bs), field) == pytest.approx(want), rw


def test_md_raid6_8(ironwolf, disk):
    stream, iops = disk
    layout = "md-raid6 8"
    assert est(layout, ironwolf, "read", MiB).read_bytes_per_s == pytest.approx(6 * stream)
    assert est(layout, ironwolf, "write", MiB).write_bytes_per_s == pytest.approx(6 * stream)
    assert est(layout, ironwolf, "randread", K4).read_iops == pytest.approx(8 * iops)
    assert est(layout, ironwolf, "randwrite", K4).write_iops == pytest.approx(8 / 6 * iops)


def test_md_other_levels(ironwolf, disk):
    stream, iops = disk
    assert est("md-raid5 4", ironwolf, "randwrite", K4).write_iops == pytest.approx(iops)
    assert est("md-raid10 8", ironwolf, "randwrite", K4).write_iops == pytest.approx(4 * iops)
    assert est("md-raid10 8", ironwolf, "read", MiB).read_bytes_per_s == pytest.approx(8 * stream)
    assert est("md-raid1 3", ironwolf, "write", MiB).write_bytes_per_s == pytest.approx(stream)
    assert est("md-raid0 4", ironwolf, "randwrite", K4).write_iops == pytest.approx(4 * iops)


@pytest.mark.parametrize("rw", RW_MODES)
def test_vdevs_add_up(ironwolf, rw):
    bs = K4 if rw.startswith("rand") else MiB
    one, two = est("raidz2 8", ironwolf, rw, bs), est("2x raidz2 8", ironwolf, rw, bs)
    assert two.read_bytes_per_s == pytest.approx(2 * one.read_bytes_per_s)
    assert two.write_bytes_per_s == pytest.approx(2 * one.write_bytes_per_s)
    assert two.read_iops == pytest.approx(2 * one.read_iops)
    if rw in ("read", "write", "randread", "randwrite"):
        mixed = est("raidz2 8 + 4x mirror 2", ironwolf, rw, bs)
        mirrors = est("4x mirror 2", ironwolf, rw, bs)
        assert mixed.read_bytes_per_s == pytest.approx(
            one.read_bytes_per_s + mirrors.read_bytes_per_s
        )
        assert mixed.write_iops == pytest.approx(one.write_iops + mirrors.write_iops)


def test_support_vdevs_do_not_count(ironwolf):
    plain = est("raidz2 8", ironwolf, "randread", K4)
    extra = est("raidz2 8 log mirror 2 cache 1 special mirror 2", ironwolf, "randread", K4)
    assert extra.read_iops == pytest.approx(plain.read_iops)


def test_random_capped_by_streaming(ironwolf, disk):
    stream, iops = disk
    bs = 16 * MiB  # 8 disks x 210 MB/s / 16 MiB = 100 IOPS < 8 x 78.9
    capped = est("stripe 8", ironwolf, "randread", bs)
    assert capped.read_iops == pytest.approx(8 * stream / bs)
    assert capped.read_iops < 8 * iops
    assert capped.read_bytes_per_s == pytest.approx(8 * stream)
    assert "streaming read" in capped.limit


def test_mixes_are_half_of_the_harmonic_combination(ironwolf, disk):
    stream, iops = disk
    mix = est("4x mirror 2", ironwolf, "randrw", K4)
    r, w = 8 * iops, 4 * iops
    assert mix.read_iops == pytest.approx(r * w / (r + w))  # (2RW/(R+W)) / 2
    assert mix.write_iops == pytest.approx(mix.read_iops)
    seq = est("4x mirror 2", ironwolf, "readwrite", MiB)
    rb, wb = 8 * stream, 4 * stream
    assert seq.read_bytes_per_s == pytest.approx(rb * wb / (rb + wb))
    assert seq.write_bytes_per_s == pytest.approx(seq.read_bytes_per_s)


def test_draid_as_raidz_groups(ironwolf, disk):
    _, iops = disk
    shares = rule_shares("draid2:8d:2s:24c")
    assert shares[0].read_iops == pytest.approx(2.2)  # (24 − 2) / (8 + 2) groups
    assert shares[0].read_stream == pytest.approx(17.6)
    e = est("draid2:8d:2s:24c", ironwolf, "randwrite", K4)
    assert e.write_iops == pytest.approx(2.2 * iops)


def test_ssd_uses_datasheet_figures():
    ssd = zsim.load_profile("samsung-870-evo-500gb")
    e = est("mirror 2", ssd, "randread", K4)
    assert e.read_iops == pytest.approx(2 * ssd.read_iops)
    w = est("mirror 2", ssd, "write", MiB)
    assert w.write_bytes_per_s == pytest.approx(ssd.write_bw)


def test_layout_string_and_explanation(ironwolf):
    e = baseline_estimate("2x raidz2 6", ironwolf, "randread", K4)
    assert e.limit == "rule-of-thumb: 2 vdevs x 1 disk read IOPS"
    assert "Six Metrics" in e.explanation
    assert "half rotation" in e.explanation


def test_bad_input(ironwolf):
    with pytest.raises(ZsimError, match="rw"):
        est("raidz2 8", ironwolf, "random", K4)
    with pytest.raises(ZsimError, match="bs"):
        est("raidz2 8", ironwolf, "read", 0)
    with pytest.raises(CatalogError, match="not a disk"):
        est("raidz2 8", zsim.load_profile("lsi-9300-8i"), "read", MiB)
    no_seek = zsim.load_profile(
        {"kind": "hdd", "capacity": "4TB", "rpm": 5400, "max_sustained": "150MB/s"}
    )
    assert est("raidz1 3", no_seek, "read", MiB).read_bytes_per_s == pytest.approx(300e6)
    with pytest.raises(CatalogError, match="IOPS"):
        est("raidz1 3", no_seek, "randread", K4)
