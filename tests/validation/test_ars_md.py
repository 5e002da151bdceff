"""md RAID + ext4 against the Ars Technica 8 × IronWolf measurements.

Source: Jim Salter, "ZFS versus RAID: Eight Ironwolf disks, two filesystems, one winner",
Ars Technica, May 2020 (figures in ``calibration/reference/ars-ironwolf8.toml``).

The runs and their set-up are :mod:`zsim.validation.ars_md`'s (the ``ars-md`` set of
``zsim validate``): md arrays on a 1 TiB partition at the head of each disk, 16 GiB per fio
job, buffered I/O; ZFS 4K random writes by the analytic engine (the DES spends minutes in
the write buffer's start-up at 64 GiB of RAM), the rest by the DES. "A single ext4 disk" is
modelled as ``md-raid1 2``: both members receive exactly the writes one ext4 disk would
(RAID1 writes every copy), so its write rate is a single disk's.

Tolerances (the Ars set's): absolute rates ±25 %; ratios on the measured side of 1 and within
a factor 1.5; "falls below" by direction only. Every point prints measured, predicted and
error. Points that miss are xfails carrying the error and the physical reason.
"""

from __future__ import annotations

import pytest

from zsim.validation.ars import TOLERANCE
from zsim.validation.ars_md import ars_md_rows, run_result

pytestmark = pytest.mark.slow

MiB = 1 << 20

_CACHE = (
    "the page cache: 8 × 16 GiB files against ~62 GiB of page cache give a min(1, C/W) = "
    "{hit:.0%} hit ratio; the article calls its reads uncached, and the disk-only rate "
    "(predicted × (1 − hit) = {uncached:.0f} MiB/s, exact for a closed loop whose hits cost "
    "no disk time) is {uncached_error:+.0%} off; the article does not state file sizes"
)
#: points zsim misses: (the reason, the largest |error| the miss may reach before it fails as a
#: new disagreement; each bound is about 1.3 × the error when it was written, 2026-11-28)
KNOWN_MISSES = {
    "mdraid6-8-1M-randread": (_CACHE, 1.0),
    "mdraid6-8-1M-randread-single-process": (
        _CACHE
        + "; even uncached, two 512 KiB chunk reads in parallel take ~10 ms (seek + the later "
        "of two rotations + transfer), not the 21 ms per 1 MiB the figure implies — cause not "
        "found",
        4.5,
    ),
    "raidz2-vs-mdraid6-4K-read": (
        "both engines read one 4 KiB block from one disk per miss with 8 calls in flight "
        "(buffered: one call per job); 4:1 needs more md concurrency than that (posixaio helper "
        "threads or O_DIRECT, which the article does not state); the page-cache (0.48) vs ARC "
        "(0.19) hit-ratio gap alone gives ~1.6",
        0.8,
    ),
    "raidz2-vs-mdraid6-4K-write": (
        "md RAID6 is too fast (36 MiB/s: below one ext4 disk, as the article says, but not by "
        "the article's margin); cause not found: ext4's 5-s journal commits, which flush the "
        "drives' write caches, change it little (35.6 MiB/s over 30 simulated s, "
        "docs/research/md-runs-fio-semantics.md)",
        0.8,
    ),
    "mirrors-vs-mdraid10-4K-write": (
        "md RAID10's run stops at its CI after 3 simulated s, while the members' 256 MiB "
        "drive caches still take the sorted dirty pages at interface speed (they end holding "
        "45 % of what md wrote to them): the figure is the caches filling; with ext4's 5-s "
        "journal commits, "
        "which flush them and are not modelled, a 30-s run gave 94 MiB/s instead of 163 "
        "(docs/research/md-runs-fio-semantics.md)",
        0.85,
    ),
}
ABSOLUTE = ("mdraid6-8-1M-randread", "mdraid6-8-1M-randread-single-process")
RATIOS = (
    "raidz2-vs-mdraid6-4K-read",
    "raidz2-vs-mdraid6-4K-write",
    "mirrors-vs-mdraid10-4K-read",
    "mirrors-vs-mdraid10-4K-write",
)


@pytest.fixture(scope="module")
def rows():
    return {r.point.id: r for r in ars_md_rows(seed=1)}


def test_every_point_reports_its_error(rows):
    assert sorted(rows) == sorted(ABSOLUTE + RATIOS)
    for r in rows.values():
        report(r.point.id, r.point.measured, r.zsim, r.point.unit)
        assert r.zsim > 0 and r.baseline > 0


@pytest.mark.parametrize("point", ABSOLUTE)
def test_mdraid6_1m_randread(rows, point):
    r = rows[point]
    error = report(point, r.point.measured, r.zsim, "MiB/s")
    if abs(error) > TOLERANCE["absolute"]:
        jobs = 1 if "single-process" in point else 8
        size = "128GiB" if jobs == 1 else "16GiB"
        result = run_result("md", "md-raid6 8", "randread", "1M", jobs, jobs, size)
        hit = result.details.get("page_cache_hit_ratio") or 0.0
        uncached = r.zsim * (1 - hit)
        off = (uncached - r.point.measured) / r.point.measured
        reason, bound = KNOWN_MISSES[point]
        assert abs(error) <= bound, f"{point}: {error:+.0%}, past its known miss's {bound:.0%}"
        reason = reason.format(hit=hit, uncached=uncached, uncached_error=off)
        pytest.xfail(f"{error:+.0%}: {reason}")


@pytest.mark.parametrize("point", RATIOS)
def test_md_vs_zfs_4k_ratio(rows, point):
    r = rows[point]
    report(point, r.point.measured, r.zsim, "ratio")
    # the winner is stated without hedging for every pair: zsim must name it
    assert r.zsim > 1, f"{point}: zsim has the article's loser winning ({r.zsim:.2f})"
    if not r.passed:
        error = r.zsim / r.point.measured - 1
        got = f"{r.zsim:.2f} vs {r.point.measured:.2f}"
        if point not in KNOWN_MISSES:
            pytest.fail(f"{point}: {error:+.0%} ({got}), outside the Ars set's tolerance")
        reason, bound = KNOWN_MISSES[point]
        assert abs(error) <= bound, f"{point}: {error:+.0%}, past its known miss's {bound:.0%}"
        pytest.xfail(f"{error:+.0%} ({got}): {reason}")


def rate(result, direction: str) -> float:
    return getattr(result, direction).bytes_per_s / MiB


def report(point: str, measured: float, predicted: float, unit: str) -> float:
    error = (predicted - measured) / measured
    print(f"\n{point:42s} measured {measured:8.2f} {unit:6s} zsim {predicted:8.2f}  {error:+.0%}")
    return error


def test_mdraid6_4k_writes_fall_below_a_single_ext4_disk():
    raid6 = rate(run_result("md", "md-raid6 8", "randwrite"), "write")
    single = rate(run_result("md", "md-raid1 2", "randwrite"), "write")
    print(
        f"\nmd RAID6 8 4K randwrite {raid6:.1f} MiB/s; one ext4 disk (md-raid1 2) "
        f"{single:.1f} MiB/s"
    )
    # md RAID6's read-modify-write pre-reads go out in waves (raid5.c
    # raid5_activate_delayed, IO_THRESHOLD), which keeps its disks from serving them as one
    # sorted stream
    assert raid6 < single, f"md RAID6 {raid6:.1f} MiB/s, one disk {single:.1f}"
