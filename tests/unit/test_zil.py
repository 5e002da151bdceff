"""The ZIL in the engine: sync writes commit through log blocks on a SLOG or on the pool."""

from __future__ import annotations

import pytest

from zsim.hardware.catalog import load_profile
from zsim.hardware.flash import flash_params
from zsim.hardware.hdd import hdd_params
from zsim.scenario import scenario_from_dict
from zsim.simulate import simulate
from zsim.zfs.version import parse_zfs_version

pytestmark = pytest.mark.slow

HDD = "seagate-ironwolf-12tb"
OPTANE = "intel-optane-p4800x-375gb"


def _scenario(layout: str, *, sync: bool = True, bs: str = "4K", numjobs: int = 1, **extra):
    pool = {"layout": layout, "recordsize": "128K", "fill": 0.01, **extra.pop("pool", {})}
    work = {
        "tool": "fio",
        "rw": extra.pop("rw", "randwrite"),
        "bs": bs,
        "numjobs": numjobs,
        "size": "2GiB",
        "ioengine": "psync",
        "sync": sync,
        **extra,
    }
    return scenario_from_dict(
        {
            "hardware": {"disk": HDD, "log_device": OPTANE, "ram": "32GiB", "zfs_version": "2.2"},
            "pool": pool,
            "workload": work,
        }
    )


def _run(sc, seconds: float = 8.0):
    return simulate(sc, seed=2, target_ci=0.03, max_sim_seconds=seconds, max_wall_seconds=600)


def test_slog_helps_small_sync_writes_by_the_latency_ratio():
    """One 4 KiB O_SYNC writer: without a SLOG each commit waits for an HDD write and
    flush (at least half a revolution on average); with an Optane SLOG for a flash write.
    IOPS rise by well over 10× and each commit costs about the SLOG's write latency plus the
    per-call CPU work, not more."""
    pool = _run(_scenario("raidz2 6"))
    slog = _run(_scenario("raidz2 6 log 1"), seconds=2)
    hdd = hdd_params(load_profile(HDD))
    optane = flash_params(load_profile(OPTANE))
    assert pool.details["slog"] is False and slog.details["slog"] is True
    assert pool.details["zil_commit_mean_s"] >= hdd.period / 2
    assert slog.details["zil_commit_mean_s"] <= 5 * optane.write_latency + 50e-6
    assert slog.write.iops > 10 * pool.write.iops
    assert pool.limit in ("zil",) or pool.limit.startswith("disk:")


def test_slog_changes_nothing_for_async_streaming_writes():
    common = {"rw": "write", "bs": "1M", "numjobs": 4, "sync": False}
    without = _run(_scenario("raidz2 6", **common), seconds=8)
    with_log = _run(_scenario("raidz2 6 log 1", **common), seconds=8)
    assert "zil_commits" not in with_log.details
    assert with_log.write.bytes_per_s == pytest.approx(without.write.bytes_per_s, rel=0.01)
    log_disk = [k for k in with_log.details["device_ios"] if k not in without.details["device_ios"]]
    assert log_disk and all(with_log.details["device_ios"][k] == 0 for k in log_disk)


def test_small_sync_writes_without_slog_are_written_twice_to_the_pool():
    """4 KiB sync writes (< zfs_immediate_write_sz) go into log blocks on the data vdevs now
    and into their records at txg sync: the pool writes both."""
    r = _run(_scenario("mirror 2", bs="4K"), seconds=12)
    d = r.details
    assert d["zil_indirect_writes"] == 0
    assert d["zil_log_bytes"] >= d["zil_commits"] * 4096  # the data went into the log
    assert d["txgs_synced"] >= 1  # and the records were written again by the txg


def test_large_sync_writes_without_slog_go_indirect_and_with_slog_into_the_log():
    big = {"bs": "128K", "rw": "write"}
    pool = _run(_scenario("mirror 2", **big))
    slog = _run(_scenario("mirror 2 log 1", **big))
    assert pool.details["zil_indirect_writes"] >= pool.details["zil_commits"] * 0.9
    assert pool.details["zil_log_bytes"] < pool.details["zil_commits"] * 1024
    assert slog.details["zil_indirect_writes"] == 0
    assert slog.details["zil_log_bytes"] >= slog.details["zil_commits"] * 128 * 1024


def test_logbias_throughput_bypasses_the_slog_for_data():
    r = _run(_scenario("mirror 2 log 1", bs="8K", pool={"logbias": "throughput"}))
    assert r.details["zil_indirect_writes"] >= r.details["zil_commits"] * 0.9


def test_sync_disabled_commits_nothing_and_sync_always_commits_every_write():
    off = _run(_scenario("mirror 2", pool={"sync": "disabled"}))
    assert "zil_commits" not in off.details
    always = _run(_scenario("mirror 2", sync=False, pool={"sync": "always"}))
    n_writes = always.write.iops * always.sim_seconds
    assert always.details["zil_commits"] == pytest.approx(n_writes, rel=0.2)
    assert off.write.iops > 5 * always.write.iops


def test_fsync_every_n_writes_commits_once_per_n():
    r = _run(_scenario("mirror 2 log 1", sync=False, fsync=8, rw="write", bs="4K"), seconds=2)
    writes = r.write.iops * r.sim_seconds
    assert r.details["zil_commits"] == pytest.approx(writes / 8, rel=0.15)


def test_pool_sync_is_deterministic():
    a = _run(_scenario("raidz2 6 log 1", numjobs=4), seconds=1)
    b = _run(_scenario("raidz2 6 log 1", numjobs=4), seconds=1)
    assert a.write.iops == b.write.iops and a.details == b.details


def test_zil_record_state_rules_by_release():
    from zsim.des.zil import is_indirect

    v22, v23, v24 = (parse_zfs_version(v) for v in ("2.2", "2.3", "2.4"))
    kw = {"logbias": "latency", "direct": False, "commit_now": True}
    assert is_indirect(32768, 131072, has_slog=False, version=v22, **kw)
    assert not is_indirect(32767, 131072, has_slog=False, version=v22, **kw)
    assert not is_indirect(1 << 20, 131072, has_slog=True, version=v22, **kw)
    assert is_indirect(4096, 131072, has_slog=True, version=v22, logbias="throughput",
                       direct=False, commit_now=True)  # fmt: skip
    assert is_indirect(4096, 131072, has_slog=True, version=v23, logbias="latency", direct=True,
                       commit_now=True)  # fmt: skip
    assert not is_indirect(4096, 131072, has_slog=True, version=v22, logbias="latency",
                           direct=True, commit_now=True)  # fmt: skip
    # 2.4: a 32 KiB commit into a 128 KiB record stays in the log (less than half a record)
    assert not is_indirect(32768, 131072, has_slog=False, version=v24, **kw)
    assert is_indirect(65536, 131072, has_slog=False, version=v24, **kw)


@pytest.mark.parametrize(
    ("release", "pct"), [("0.8", 5), ("2.2", 5), ("2.2.3", 5), ("2.2.4", 10), ("2.3", 10)]
)
def test_commit_timeout_pct_is_10_from_2_2_4(release, pct):
    """zil.c: zfs_commit_timeout_pct = 5 in zfs-2.2.3, 10 in zfs-2.2.4 (commit 7ea8331009)."""
    from zsim.des.zil import commit_timeout_pct

    assert commit_timeout_pct(parse_zfs_version(release)) == pct
