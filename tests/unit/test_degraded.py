"""Degraded pools (``pool.failed``): which leaves a block touches with a disk missing, what
that does to random-read IOPS, and one-line errors for failures a pool cannot survive."""

from __future__ import annotations

import tomllib
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zsim
from zsim.des.vdev import ASYNC_WRITE, SYNC_READ, LeafQueue, MissingLeaf, TopVdev
from zsim.layout.grammar import parse_layout
from zsim.layout.raidz import raidz_column_map
from zsim.machine.resources import DevIO
from zsim.scenario import Pool, ScenarioError, apply_overrides, scenario_from_dict

HDD = {"disk": "seagate-ironwolf-12tb", "hba": "lsi-9300-8i", "ram": "64GiB", "cpu_cores": 8}
ASHIFT = 12


class _Disk:
    """A device that records what reaches it and never completes (loads keep growing)."""

    def __init__(self) -> None:
        self.ios: list[DevIO] = []
        self.env = SimpleNamespace(now=0.0)  # the queue stamps arrivals with env.now

    def submit(self, io: DevIO) -> None:
        self.ios.append(io)


def _top(layout: str, failed: set[int] = frozenset(), rotating: bool = True, on_reconstruct=None):
    vdev = parse_layout(layout).vdevs[0]
    disks = [_Disk() for _ in vdev.devices]
    leaves = [LeafQueue(d, 1 << 20) for d in disks]  # type: ignore[arg-type]
    top = TopVdev(vdev, leaves, ASHIFT, 1 << 40, rotating, failed, on_reconstruct=on_reconstruct)
    return top, disks


# ---------------------------------------------------------------- TopVdev: leaves touched


def test_healthy_callers_are_unchanged():
    top, _ = _top("raidz2 6")
    assert top.failed == frozenset()
    assert all(type(leaf) is LeafQueue for leaf in top.leaves)
    assert top.leaf_ios(0, 128 * 1024, False) == [
        col for col in top.leaf_ios(0, 128 * 1024, True) if col[0] not in (0, 1)
    ]


@settings(max_examples=60)
@given(
    n=st.integers(2, 4),
    data=st.data(),
    offsets=st.lists(st.integers(0, 1 << 20), min_size=1, max_size=40),
    rotating=st.booleans(),
)
def test_mirror_reads_never_touch_a_failed_child(n, data, offsets, rotating):
    failed = data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n - 1))
    top, disks = _top(f"mirror {n}", failed, rotating)
    answered = []
    for off in offsets:
        top.io(off << ASHIFT, 4096, False, SYNC_READ, lambda: answered.append(1))
    assert answered == []  # nothing went to a missing leaf (it answers at once)
    assert all(disks[i].ios == [] for i in failed)
    assert sum(top.leaves[i].queued for i in range(n) if i not in failed) == len(offsets)
    if len(offsets) >= 2 * n:  # the load spreads over every survivor
        assert all(disks[i].ios for i in range(n) if i not in failed)


def test_mirror_writes_skip_the_failed_child():
    top, disks = _top("mirror 3", {1})
    assert top.io(0, 8192, True, ASYNC_WRITE, lambda: None) == 2
    assert [len(d.ios) for d in disks] == [1, 0, 1]


@settings(max_examples=200)
@given(
    parity=st.integers(1, 3),
    extra=st.integers(1, 10),
    sectors=st.integers(1, 64),
    block=st.integers(0, 1 << 16),
    data=st.data(),
)
def test_raidz_degraded_read_reads_every_surviving_column_only_when_data_is_missing(
    parity, extra, sectors, block, data
):
    width = parity + extra
    failed = data.draw(st.sets(st.integers(0, width - 1), min_size=1, max_size=parity))
    top, _ = _top(f"raidz{parity} {width}", failed)
    offset, psize = block << ASHIFT, sectors << ASHIFT
    rmap = raidz_column_map(offset, psize, ASHIFT, width, parity)
    used = [c for c in rmap.columns if c.size]
    data_cols = [(c.child, c.offset, c.size) for c in used if not c.is_parity]
    surviving = [(c.child, c.offset, c.size) for c in used if c.child not in failed]
    before = top.reconstruct_bytes
    reads = top.leaf_ios(offset, psize, False)
    if any(child in failed for child, _, _ in data_cols):
        assert reads == surviving  # all data and parity columns that are left
        assert top.reconstruct_bytes - before == rmap.data_bytes
    else:
        assert reads == data_cols  # parity is not read
        assert top.reconstruct_bytes == before
    assert top.leaf_ios(offset, psize, True) == surviving  # writes skip the missing column


def test_raidz_4k_record_on_a_missing_disk_reads_both_parity_columns():
    rebuilt = []
    top, disks = _top(
        "raidz2 6", {2}, on_reconstruct=lambda nbytes, done: (rebuilt.append(nbytes), done())
    )
    finished = []
    # block at sector 0: parity on children 0 and 1, the data sector on child 2 (missing)
    assert top.io(0, 4096, False, SYNC_READ, lambda: finished.append(1)) == 2
    assert [len(d.ios) for d in disks] == [1, 1, 0, 0, 0, 0]
    for disk in disks:  # the leaves answer: the read completes through the rebuild hook
        for io in disk.ios:
            io.done()
    assert rebuilt == [4096] and finished == [1]
    assert (top.reconstructions, top.reconstruct_bytes) == (1, 4096)
    # block at sector 3: data on child 5, healthy, one read
    assert top.leaf_ios(3 << ASHIFT, 4096, False) == [(5, 0, 4096)]


@settings(max_examples=100)
@given(
    spec=st.sampled_from(["draid1:4d:0s:5c", "draid2:4d:1s:11c", "draid2:8d:2s:24c"]),
    sectors=st.integers(1, 64),
    block=st.integers(0, 1 << 16),
    data=st.data(),
)
def test_draid_degraded_read_reads_the_whole_group_when_data_is_missing(spec, sectors, block, data):
    vdev = parse_layout(spec).vdevs[0]
    failed = data.draw(
        st.sets(st.integers(0, vdev.width - vdev.nspares - 1), min_size=1, max_size=vdev.parity)
    )
    top, _ = _top(spec, failed)
    healthy, _ = _top(spec)
    offset, psize = block << ASHIFT, sectors << ASHIFT
    group = healthy.leaf_ios(offset, psize, True)  # parity columns first, then data
    data_cols = healthy.leaf_ios(offset, psize, False)
    reads = top.leaf_ios(offset, psize, False)
    surviving = [col for col in group if col[0] not in failed]
    if any(col[0] in failed for col in data_cols):
        assert reads == surviving
    else:
        assert reads == data_cols
    assert top.leaf_ios(offset, psize, True) == surviving


def test_draid_failed_child_idles_the_named_disk_and_every_other_child_works():
    # draid2:4d:1s:11c: slices permute all 11 children (the spare space moves with them),
    # so any child holds data; the failed one, and only it, takes no I/O
    top, disks = _top("draid2:4d:1s:11c", {10})
    assert isinstance(top.leaves[10], MissingLeaf) and top.leaves[10].device is disks[10]
    group = 6 * (16 << 20)  # one redundancy group: 6 columns of 16 MiB rows
    for g in range(400):
        top.io(g * group, 16384, False, SYNC_READ, lambda: None)
        top.io(g * group, 16384, True, ASYNC_WRITE, lambda: None)
    assert disks[10].ios == []
    assert all(disks[i].ios for i in range(10))


def test_top_vdev_refuses_more_failures_than_it_survives():
    with pytest.raises(ValueError, match="FAULTED"):
        _top("raidz1 4", {0, 1})
    with pytest.raises(ValueError, match="FAULTED"):
        _top("mirror 2", {0, 1})


# ---------------------------------------------------------------- the engine


def _sc(layout: str, failed: list[str], jobs: int = 40):
    return scenario_from_dict(
        {
            "hardware": HDD,
            "pool": {
                "layout": layout,
                "recordsize": "4K",
                "primarycache": "metadata",
                "failed": failed,
            },
            "workload": {
                "tool": "fio",
                "rw": "randread",
                "bs": "4K",
                "numjobs": jobs,
                "iodepth": 1,
                "size": "64GiB",
            },
        }
    )


def _run(sc, seed: int = 1):
    return zsim.simulate(sc, seed=seed, target_ci=0.05, max_sim_seconds=5, max_wall_seconds=600)


def test_degraded_raidz_4k_random_reads_fall():
    """raidz2 5, 4 KiB records: a record is one data sector plus two parity sectors just
    before it. With sda gone, the records whose data was there read both parity columns
    (on sdd and sde): more disk I/Os per read, fewer disks. Expected ≈ ½…⅔ of healthy."""
    healthy = _run(_sc("raidz2 5", []))
    degraded = _run(_sc("raidz2 5", ["sda"]))
    ios = degraded.details["device_ios"]
    ratio = degraded.read.iops / healthy.read.iops
    print(
        f"raidz2 5 4K randread: healthy {healthy.read.iops:.0f} IOPS, sda failed "
        f"{degraded.read.iops:.0f} IOPS ({ratio:.2f}); device I/Os {ios}"
    )
    assert ios["sda"] == 0 and degraded.utilization["disk:sda"] == 0.0
    assert degraded.limit != "disk:sda"
    # disk I/Os per read: 1 healthy; 1 + 1/5 degraded (a fifth of the reads read 2 columns)
    per_read = [sum(r.details["device_ios"].values()) / (r.read.iops * r.sim_seconds)
                for r in (healthy, degraded)]  # fmt: skip
    assert per_read[1] / per_read[0] == pytest.approx(1.2, abs=0.1)
    assert 0.4 < ratio < 0.8


@pytest.mark.parametrize("n", [2, 3])
def test_degraded_mirror_reads_keep_n_minus_1_of_n(n):
    """n-way mirror under a saturating load (40 jobs: every disk's queue stays full): losing
    one child leaves (n−1)/n of the spindles, so about (n−1)/n of the IOPS."""
    healthy = _run(_sc(f"mirror {n}", []))
    degraded = _run(_sc(f"mirror {n}", ["sdb"]))
    ratio = degraded.read.iops / healthy.read.iops
    print(
        f"mirror {n} 4K randread: healthy {healthy.read.iops:.0f} IOPS, sdb failed "
        f"{degraded.read.iops:.0f} IOPS ({ratio:.2f}, expected {(n - 1) / n:.2f})"
    )
    assert degraded.details["device_ios"]["sdb"] == 0
    assert ratio == pytest.approx((n - 1) / n, abs=0.08)


def test_degraded_runs_are_deterministic_and_writes_work():
    sc = _sc("2x raidz1 3", ["sdb", "sdf"], jobs=4)
    a, b = _run(sc, seed=5), _run(sc, seed=5)
    assert a.read == b.read and a.details["device_ios"] == b.details["device_ios"]
    write = scenario_from_dict(
        {
            "hardware": HDD,
            "pool": {"layout": "raidz2 6", "failed": ["sdc"]},
            "workload": {"tool": "fio", "rw": "randwrite", "bs": "1M", "size": "1GiB"},
        }
    )
    r = zsim.simulate(write, seed=1, target_ci=0.1, max_sim_seconds=3, max_wall_seconds=600)
    assert r.write.iops > 0 and r.details["device_ios"]["sdc"] == 0


# ---------------------------------------------------------------- the scenario key


def _pool(layout: str, failed) -> dict:
    return {
        "hardware": {"disk": "seagate-ironwolf-12tb"},
        "pool": {"layout": layout, "failed": failed},
        "workload": {"tool": "fio", "rw": "randread", "bs": "4K"},
    }


def test_failed_key_default_round_trip_and_override():
    assert Pool(layout="raidz2 8").failed == ()
    assert Pool(layout="raidz2 8", failed=["sdc"]).failed == ("sdc",)
    sc = scenario_from_dict(_pool("raidz2 8", ["sdc", "sdh"]))
    assert sc.pool.failed == ("sdc", "sdh")
    text = sc.to_toml()
    assert 'failed = ["sdc", "sdh"]' in text
    assert scenario_from_dict(tomllib.loads(text)) == sc
    healthy = scenario_from_dict(_pool("raidz2 8", []))
    assert "failed" not in healthy.to_toml()  # healthy scenarios print as before
    out = apply_overrides(_pool("raidz2 8", []), ["pool.failed=sda, sdb"])
    assert scenario_from_dict(out).pool.failed == ("sda", "sdb")


@pytest.mark.parametrize(
    ("layout", "failed", "fragment"),
    [
        ("raidz2 8", 1,
         'pool.failed = 1: expected a list of device names from pool.layout, e.g. ["sdc"]'),
        ("raidz2 8", [1], "expected a list of device names"),
        ("raidz2 8", ["sdz"],
         "no device 'sdz' in pool.layout \"raidz2 8\" (sda … sdh); did you mean"),
        ("raidz2 8", ["sdc", "sdc"], "'sdc' is listed twice"),
        ("raidz2 8", ["sda", "sdb", "sdc"],
         "3 failed devices in the raidz2 vdev (sda … sdh), which survives 2; the pool would be "
         "FAULTED (data lost)"),
        ("mirror 2", ["sda", "sdb"], "which survives 1; the pool would be FAULTED"),
        ("draid1:4d:1s:8c", ["sda", "sdh"], "draid1:4d:8c:1s vdev (sda … sdh), which survives 1"),
        ("stripe 4", ["sdc"], "'sdc' is a single-disk vdev with no redundancy"),
        ("raidz1 4 log mirror 2", ["sde"],
         "'sde' is a log device; failing log devices is not modelled yet"),
        ("raidz1 4 cache 1", ["sde"], "'sde' is a cache device"),
        ("raw 4", ["sda"], "degraded operation is modelled for ZFS pools, md arrays and btrfs"),
    ],
)  # fmt: skip
def test_bad_failed_values_are_one_clear_line(layout, failed, fragment):
    with pytest.raises(ScenarioError) as err:
        scenario_from_dict(_pool(layout, failed))
    message = str(err.value)
    assert "\n" not in message
    assert fragment in message, message


def test_two_vdevs_each_may_lose_what_they_survive():
    sc = scenario_from_dict(_pool("2x raidz1 4", ["sda", "sde"]))
    assert sc.pool.failed == ("sda", "sde")
