"""The RAIDZ expansion (reflow) rate against the one clean published figure found.

Source: openzfs/zfs PR #16819 "Optimize RAIDZ expansion" (Alexander Motin, merged for 2.3.0,
https://github.com/openzfs/zfs/pull/16819): "With these changes expanding RAIDZ1 from 4 to 5
children I am able to reach 6-12GB/s rate on SSDs and ~500MB/s on HDDs, both are limited by
devices instead of CPU." The HDDs, their fill and the data are not given. zsim runs the same
expansion on its ``seagate-exos-x16-16tb`` profile (the stand-in the dRAID validation uses for
unnamed enterprise drives), the pool 10 % full of 1 MiB records written in one stream (a test
pool), and compares ``zpool status``'s rate ("copied at …"): allocated bytes per second.

The PR's SSD figure (6-12 GB/s, drives not named) is checked on ``samsung-pm1725a-1.6tb``
behind the NVMe example's HBA, 30 % full: at least the range's low end less 50 %.

Tolerance: ±35 % — "~500MB/s" is a rounded figure from unnamed drives (the four HDD profiles
of the catalog give 445–569 MB/s for the same expansion, docs/grow.md), and the fill is a guess.

Other figures found and not used (docs/grow.md says why): #16803 (16.6 MB/s, zfs 2.2.99, the
one-sector-per-I/O copy before #16819) and #18103 (84.6 MB/s averaged over an expansion that
stalled past 100 %).
"""

from __future__ import annotations

import dataclasses

import pytest

import zsim
from zsim.grow.run import simulate_grow

pytestmark = pytest.mark.slow

PUBLISHED_BYTES_PER_S = 500e6
TOLERANCE = 0.35


@pytest.fixture(scope="module")
def reflow():
    base = zsim.load_scenario("examples/scenarios/resilver-raidz2-8-ironwolf.toml")
    hardware = dataclasses.replace(base.hardware, disk=zsim.load_profile("seagate-exos-x16-16tb"))
    pool = dataclasses.replace(base.pool, layout="raidz1 4", fill=0.1, recordsize=1 << 20)
    resilver = dataclasses.replace(base.resilver, disk="sda", written="sequential")
    sc = dataclasses.replace(base, hardware=hardware, pool=pool, resilver=resilver)
    result = simulate_grow(sc, attach=1)
    (one,) = result.reflows
    error = one.bytes_per_s / PUBLISHED_BYTES_PER_S - 1
    print(
        f"\nraidz1 4 → 5, exos-x16, 10 % full: zsim {one.bytes_per_s / 1e6:.0f} MB/s, "
        f"published ~500 MB/s (PR #16819): error {error:+.0%}, limit {one.limit}"
    )
    return one


def test_rate_within_tolerance_of_pr_16819(reflow):
    assert reflow.bytes_per_s == pytest.approx(PUBLISHED_BYTES_PER_S, rel=TOLERANCE)


def test_limited_by_the_devices_as_the_pr_says(reflow):
    assert reflow.limit.startswith("disk:")
    assert reflow.utilization.get("cpu", 0.0) < 0.5


#: the PR's SSD figure: "6-12GB/s rate on SSDs" (drives not named)
PUBLISHED_SSD_LOW = 6e9
SSD_TOLERANCE = 0.5


@pytest.fixture(scope="module")
def ssd_reflow():
    base = zsim.load_scenario("examples/scenarios/nvme-raidz1-1m-write.toml")
    hardware = dataclasses.replace(
        base.hardware, disk=zsim.load_profile("samsung-pm1725a-1.6tb"), zfs_version="2.3"
    )
    pool = dataclasses.replace(base.pool, layout="raidz1 4", fill=0.3, recordsize=1 << 20)
    sc = dataclasses.replace(base, hardware=hardware, pool=pool)
    (one,) = simulate_grow(sc, attach=1).reflows
    print(
        f"\nraidz1 4 → 5, pm1725a behind a 9500-16i, 30 % full: zsim "
        f"{one.bytes_per_s / 1e9:.2f} GB/s, published 6-12 GB/s (PR #16819): "
        f"{one.bytes_per_s / PUBLISHED_SSD_LOW - 1:+.0%} from the low end, limit {one.limit}"
    )
    return one


def test_ssd_rate_reaches_the_low_end_of_pr_16819_within_tolerance(ssd_reflow):
    # the stated tolerance: within 50 % of the range's low end (drives and host not named)
    assert ssd_reflow.bytes_per_s >= PUBLISHED_SSD_LOW * (1 - SSD_TOLERANCE)
    assert ssd_reflow.bytes_per_s <= 12e9 * (1 + SSD_TOLERANCE)
