"""``zpool-on``: a one-vdev ZFS pool on an md RAID device (parity below ZFS)."""

from __future__ import annotations

from zsim.scenario import scenario_from_dict
from zsim.simulate import simulate


def _run(layout: str, rw: str):
    sc = scenario_from_dict(
        {
            "hardware": {"disk": "seagate-ironwolf-12tb", "ram": "32GiB", "zfs_version": "2.2"},
            "pool": {"layout": layout, "recordsize": "128K", "fill": 0.05},
            "workload": {
                "tool": "fio",
                "rw": rw,
                "bs": "1M",
                "numjobs": 8,
                "iodepth": 4,
                "size": "16GiB",
            },
        }
    )
    return simulate(sc, seed=1, target_ci=0.05, max_sim_seconds=6, max_wall_seconds=600)


def test_reads_reach_every_member_of_the_md_array():
    r = _run("zpool-on md-raid6 8 chunk=64K", "randread")
    ios = r.details["device_ios"]
    assert sorted(ios) == [f"sd{c}" for c in "abcdefgh"]  # the members, not "md0"
    assert min(ios.values()) > 0.5 * max(ios.values())  # parity rotates: all members read
    assert r.limit.startswith("disk:sd")
    assert r.read.bytes_per_s > 0


def test_partial_stripe_writes_pay_md_read_modify_write():
    """ZFS's 128 KiB records do not fill md's 384 KiB stripes: md reads old data or parity
    before it writes, which raidz2 (full-stripe, variable-width writes) never does."""
    on_md = _run("zpool-on md-raid6 8 chunk=64K", "randwrite")
    raidz = _run("raidz2 8", "randwrite")
    assert on_md.write.bytes_per_s < raidz.write.bytes_per_s
