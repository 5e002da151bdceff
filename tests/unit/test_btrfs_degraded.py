"""Degraded btrfs RAID1/RAID10 (``mount -o degraded``, one device missing): reads whose
``pid % 2`` copy is on the missing device go to the surviving copy, writes and superblocks
skip it, and a second missing device is refused."""

from __future__ import annotations

import pytest

import zsim
from zsim.des.linux.mdraid_map import BlockParams, BtrfsDevice, MemberQueue
from zsim.errors import ZsimError
from zsim.scenario import ScenarioError, scenario_from_dict


def _scenario(layout: str, failed: list[str], rw: str = "randread", **workload):
    job = {"numjobs": 32, "iodepth": 1, "size": "32GiB", "direct": True} | workload
    return scenario_from_dict(
        {
            "hardware": {"disk": "seagate-ironwolf-12tb", "ram": "8GiB"},
            "pool": {"layout": layout, "fill": 0.01, "failed": failed},
            "workload": {"tool": "fio", "rw": rw, "bs": "4K", **job},
        }
    )


def _run(layout: str, failed: list[str], rw: str = "randread", **workload):
    sc = _scenario(layout, failed, rw, **workload)
    return zsim.simulate(sc, seed=1, target_ci=0.05, max_sim_seconds=20, max_wall_seconds=600)


@pytest.mark.parametrize("layout", ["btrfs-raid1 4", "btrfs-raid10 4"])
def test_random_reads_move_to_the_surviving_copies(layout):
    healthy = _run(layout, [])
    degraded = _run(layout, ["sdc"])
    before, after = healthy.details["device_ios"], degraded.details["device_ios"]
    assert set(after) == {"sda", "sdb", "sdc", "sdd"}  # the layout's names
    assert all(before[name] > 0 for name in before)
    assert "redirected_reads" not in healthy.details
    # the missing device does no I/O; its reads went to the other copy of each chunk
    assert after["sdc"] == 0
    assert all(after[name] > 0 for name in ("sda", "sdb", "sdd"))
    assert degraded.details["redirected_reads"] > 0
    # the chunk allocator pairs sdc with sdd (most unallocated space first, ties by
    # device order), so sdd serves both copies' share of reads
    assert after["sdd"] > 1.5 * after["sda"]
    # 4 disks serving random reads → 3, one of them carrying twice its load
    ratio = degraded.read.iops / healthy.read.iops
    assert 0.55 < ratio < 0.85, ratio


def test_writes_and_superblocks_skip_the_missing_device():
    job = {"numjobs": 8, "size": "1GiB", "direct": False, "fsync": 1}
    healthy = _run("btrfs-raid1 4", [], "randwrite", **job)
    degraded = _run("btrfs-raid1 4", ["sdc"], "randwrite", **job)
    assert healthy.details["device_ios"]["sdc"] > 0  # superblocks at least
    ios = degraded.details["device_ios"]
    assert ios["sdc"] == 0
    assert ios["sdd"] > 0
    assert degraded.write.iops > 0
    assert degraded.details["redirected_reads"] == 0


@pytest.mark.parametrize("layout", ["btrfs-raid1 4", "btrfs-raid10 6"])
def test_two_missing_devices_are_refused(layout):
    with pytest.raises(ZsimError, match="survives 1 missing device, not 2") as err:
        _scenario(layout, ["sda", "sdb"])
    message = str(err.value)
    assert "\n" not in message
    assert "fail at most 1" in message


@pytest.mark.parametrize(
    ("failed", "fragment"),
    [
        (["sdz"], "no device 'sdz' in pool.layout \"btrfs-raid1 4\" (sda … sdd)"),
        (["sdb", "sdb"], "'sdb' is listed twice"),
    ],
)
def test_bad_names_are_one_line_errors(failed, fragment):
    with pytest.raises(ScenarioError) as err:
        _scenario("btrfs-raid1 4", failed)
    assert fragment in str(err.value)


def test_the_device_model_refuses_two_missing_devices_too():
    queues = [MemberQueue(None, BlockParams(), 0) for _ in range(4)]  # type: ignore[arg-type]
    with pytest.raises(ZsimError, match="fail at most 1"):
        BtrfsDevice("raid1", queues, BlockParams(), failed=frozenset({0, 1}))
