"""Degraded md arrays: reads rebuild from the surviving members, writes skip the missing one."""

from __future__ import annotations

import pytest

from zsim.layout.md_map import plan_stripe_write
from zsim.scenario import ScenarioError, scenario_from_dict
from zsim.simulate import simulate

KiB = 1024


def _scenario(layout: str, failed: list[str], rw: str = "randread"):
    return scenario_from_dict(
        {
            "hardware": {"disk": "seagate-ironwolf-12tb", "ram": "8GiB"},
            "pool": {"layout": layout, "fill": 0.01, "failed": failed},
            "workload": {
                "tool": "fio",
                "rw": rw,
                "bs": "4K",
                "numjobs": 32,
                "iodepth": 1,
                "size": "32GiB",
                "direct": True,
            },
        }
    )


def _run(layout: str, failed: list[str], rw: str = "randread"):
    sc = _scenario(layout, failed, rw)
    return simulate(sc, seed=1, target_ci=0.05, max_sim_seconds=5, max_wall_seconds=600)


def test_raid6_read_of_a_missing_block_reads_the_rest_of_the_row():
    healthy = _run("md-raid6 8", [])
    degraded = _run("md-raid6 8", ["sdc"])
    ios = degraded.details["device_ios"]
    assert ios["sdc"] == 0
    assert degraded.details["reconstructed_reads"] > 0
    # about 1 in 6 data blocks lives on the missing member; each of those costs 6 reads
    assert degraded.read.iops < healthy.read.iops


def test_raid1_reads_avoid_the_missing_member():
    r = _run("md-raid1 2", ["sda"])
    assert r.details["device_ios"]["sda"] == 0
    assert r.details["device_ios"]["sdb"] > 0


def test_degraded_stripe_write_plan_never_reads_or_writes_the_missing_member():
    """A 4 KiB write to column 0 of row 0 of a RAID6 of 8 (P and Q on members 6 and 7 for
    row 0 in left-symmetric order is not assumed: members come from the plan itself)."""
    healthy = plan_stripe_write(6, 8, 512 * KiB, 0, {0: [(0, 4 * KiB)]})
    target = healthy.writes[0][0]  # the member holding the written data
    degraded = plan_stripe_write(
        6, 8, 512 * KiB, 0, {0: [(0, 4 * KiB)]}, failed=frozenset({target})
    )
    assert all(m != target for m, _, _ in degraded.reads)
    assert all(m != target for m, _, _ in degraded.writes)
    assert degraded.reads  # parity must be recomputed from the surviving data


@pytest.mark.parametrize(
    ("layout", "failed", "fragment"),
    [
        ("md-raid6 8", ["sda", "sdb", "sdc"], "survives 2"),
        ("md-raid0 4", ["sda"], "survives 0"),
        ("md-raid5 4", ["sdz"], "no device 'sdz'"),
        ("raw 4", ["sda"], "ZFS pools, md arrays and btrfs RAID1/RAID10"),
    ],
)
def test_bad_failed_members_are_one_line_errors(layout, failed, fragment):
    with pytest.raises(ScenarioError, match=fragment):
        _scenario(layout, failed)
