"""The analytic engine's sync-write (ZIL) model: its pure sub-models and its range."""

from __future__ import annotations

import math

import pytest

import zsim
from zsim.analytic.sync_range import sync_writes
from zsim.analytic.validity import OutOfRange, validity
from zsim.analytic.zil_parts import (
    LeafLoad,
    batch_completion,
    burst_stall,
    busiest_vdev_records,
    commits_per_lwb,
    erlang_c_wait,
    flash_hold,
    itx_log_bytes,
    leaf_state,
    lone_probability,
    lwb_plan,
    rotor_aliquot,
)
from zsim.des.zil import LR_WRITE_BYTES, ZIL_CHAIN_BYTES, ZIL_MAX_BLOCK
from zsim.hardware import flash
from zsim.hardware.catalog import load_profile
from zsim.scenario import scenario_from_dict
from zsim.units import MiB


def _scenario(
    layout: str,
    disk: str,
    log: str | None = None,
    version: str = "2.3",
    pool: dict[str, object] | None = None,
    **workload: object,
):
    hw: dict[str, object] = {"disk": disk, "ram": "8GiB", "cpu_cores": 8, "zfs_version": version}
    if log:
        hw["log_device"] = log
    wl: dict[str, object] = {
        "tool": "fio", "rw": "randwrite", "bs": "8K", "numjobs": 4, "iodepth": 1,
        "ioengine": "psync", "sync": True, "size": "4GiB",
    }  # fmt: skip
    wl.update(workload)
    return scenario_from_dict(
        {
            "name": "sync unit",
            "hardware": hw,
            "pool": {
                "layout": layout,
                "ashift": 12,
                "recordsize": "8K",
                "compression": "off",
                **(pool or {}),
            },
            "workload": wl,
        },
        source="test",
    )


def test_log_records_copy_the_data_rounded_to_8_bytes_unless_indirect():
    assert itx_log_bytes(8192, False) == LR_WRITE_BYTES + 8192
    assert itx_log_bytes(8190, False) == LR_WRITE_BYTES + 8192
    assert itx_log_bytes(131072, True) == LR_WRITE_BYTES


def test_lwbs_fill_to_zil_maxblocksize():
    one = itx_log_bytes(8192, False)
    per_lwb = (ZIL_MAX_BLOCK - ZIL_CHAIN_BYTES) // one
    plan = lwb_plan(4, one)
    assert plan.lwbs == 1 and plan.last_bytes == ZIL_CHAIN_BYTES + 4 * one
    plan = lwb_plan(per_lwb + 1, one)
    assert plan.lwbs == 2
    assert plan.full_bytes == ZIL_CHAIN_BYTES + per_lwb * one <= ZIL_MAX_BLOCK
    assert plan.last_bytes == ZIL_CHAIN_BYTES + one
    # a copied 128K record does not fit beside the chain: one lwb each
    big = itx_log_bytes(131072, False)
    assert lwb_plan(3, big).lwbs == 3


def test_commit_chains_split_only_with_the_single_committer_rule():
    assert commits_per_lwb(1, True) == commits_per_lwb(1, False) == 1.0
    assert commits_per_lwb(8, False) == 8.0
    assert commits_per_lwb(8, True) == 4.0
    assert lone_probability(1, 1e-5, 1e-3, True) == 1.0
    assert lone_probability(4, 1e-5, 1e-3, False) == 0.0
    assert 0.0 < lone_probability(2, 1e-3, 1e-3, True) == pytest.approx(0.5)


def test_burst_stall_is_continuous_and_grows_with_the_burst():
    cycle = 1e-3
    assert burst_stall(0.0, cycle) == 0.0
    assert burst_stall(cycle, cycle) == pytest.approx(cycle / 2)
    assert burst_stall(cycle * (1 - 1e-9), cycle) == pytest.approx(cycle / 2)
    assert burst_stall(0.1, cycle) == pytest.approx(0.1 - cycle / 2)
    assert burst_stall(2e-4, cycle) < burst_stall(4e-4, cycle)


def test_erlang_c_is_mm1_with_one_server_and_zero_when_idle():
    assert erlang_c_wait(0.5, 1, 1.0) == pytest.approx(1.0)  # ρ/(1−ρ)·h
    assert erlang_c_wait(0.0, 4, 1.0) == 0.0
    assert math.isinf(erlang_c_wait(4.0, 4, 1.0))
    assert erlang_c_wait(2.0, 8, 1.0) < erlang_c_wait(6.0, 8, 1.0)


def test_a_flush_holds_a_unit_for_the_drives_flush_time():
    p = flash.flash_params(load_profile("samsung-870-evo-500gb"))
    assert p.flush_latency > 0
    plain = flash_hold(p, 16384, False, 1)
    assert flash_hold(p, 16384, True, 1) == pytest.approx(plain + p.flush_latency)
    assert flash_hold(p, 0, True, 1) == p.flush_latency
    assert flash_hold(p, 131072, False, 8) > flash_hold(p, 131072, False, 1)  # bandwidth shared


def test_leaf_state_counts_units_by_littles_law():
    p = flash.flash_params(load_profile("samsung-870-evo-500gb"))
    light = leaf_state(p, [LeafLoad(100.0, 16384, True)], chains=1)
    assert light.busy == pytest.approx(100.0 * flash_hold(p, 16384, True, 1.0), rel=1e-6)
    # a lone chain meets only itself: its write and flush, no wait
    assert light.done[0] == pytest.approx(flash_hold(p, 16384, True, 1.0))
    heavy = leaf_state(p, [LeafLoad(4000.0, 16384, True)], chains=2)
    assert heavy.busy > light.busy and heavy.done[0] > light.done[0]
    assert 0.0 < light.util < heavy.util <= 1.0
    # units a write-back burst holds slow the log's writes (bandwidth shared)
    held = leaf_state(p, [LeafLoad(100.0, 131072, False)], chains=1, held=4.0)
    assert held.done[0] > leaf_state(p, [LeafLoad(100.0, 131072, False)], chains=1).done[0]


def test_a_batch_shares_the_drives_bandwidth_as_the_des_device_does():
    p = flash.flash_params(load_profile("intel-x25m-160gb"))
    one = batch_completion(p, 1, 131072, False, 0.0)
    four = batch_completion(p, 4, 131072, False, 0.0)
    # bandwidth-bound: four 128K writes take about four times one, not one (parallel units)
    # nor six (waves of three units each at the shared rate)
    assert 3.0 * one < four < 4.5 * one


def test_the_rotor_spreads_a_batch_of_records_over_vdevs():
    assert rotor_aliquot(True, False, 1, 1) == MiB
    assert rotor_aliquot(False, False, 3, 6) == 3 * MiB
    assert rotor_aliquot(True, True, 4, 6) == 8 * MiB
    assert busiest_vdev_records(1, 8) == 1.0
    assert busiest_vdev_records(8, 8) == pytest.approx(6.0)  # (8 + 7+6+5+4+5+6+7) / 8
    assert busiest_vdev_records(8, 1000) < 8.0
    assert busiest_vdev_records(8, 1000) > 7.9


def test_the_range_takes_flash_log_paths_and_declines_hdd_ones():
    assert validity(_scenario("mirror 2", "samsung-870-evo-500gb")) is None
    ssd_slog = _scenario("raidz2 6 log mirror 2", "seagate-ironwolf-12tb", "samsung-870-evo-500gb")
    assert validity(ssd_slog) is None
    # HDD data vdevs without a SLOG: log tables (zsim.analytic.sync_hdd) for whole records
    # whose log records hold their data; an HDD log vdev is the DES's
    assert validity(_scenario("raidz2 6", "seagate-ironwolf-12tb")) is None
    reason = validity(_scenario("raidz2 6 log 1", "seagate-ironwolf-12tb"))
    assert reason is not None and "HDD log vdev" in reason
    throughput = _scenario("raidz2 6", "seagate-ironwolf-12tb", pool={"logbias": "throughput"})
    reason = validity(throughput)
    assert reason is not None and "WR_INDIRECT" in reason
    assert validity(_scenario("mirror 2", "samsung-870-evo-500gb", sync=False, fsync=4)) is None
    reason = validity(_scenario("2x raidz1 4", "samsung-870-evo-500gb", pool={"layout":
                                "draid1:2d:4c:0s"}))  # fmt: skip
    assert reason is not None and "dRAID" in reason


def test_sync_disabled_is_a_buffered_write():
    assert sync_writes(_scenario("mirror 2", "samsung-870-evo-500gb"))
    assert sync_writes(_scenario("mirror 2", "samsung-870-evo-500gb", sync=False,
                                 pool={"sync": "always"}))  # fmt: skip
    off = _scenario("mirror 2", "samsung-870-evo-500gb", pool={"sync": "disabled"})
    assert not sync_writes(off)


def test_commits_answer_with_their_parts():
    res = zsim.simulate(_scenario("mirror 2", "samsung-870-evo-500gb"), engine="analytic")
    w, d = res.write, res.details
    assert res.limit == "zil" and w.iops > 0
    # Little's law: four jobs, one call each
    assert w.latency_mean == pytest.approx(4 / w.iops)
    # a commit holds at least the drive's 1 ms flush
    assert d["zil_commit_mean_s"] > 1e-3
    assert w.latency_p50 is not None and w.latency_p99 is not None
    assert w.latency_p50 <= w.latency_p99


def test_a_protected_slog_commits_faster_than_an_unprotected_one():
    slow = zsim.simulate(
        _scenario("stripe 2 log 1", "samsung-870-evo-500gb", "samsung-870-evo-500gb",
                  numjobs=2), engine="analytic",
    )  # fmt: skip
    fast = zsim.simulate(
        _scenario("stripe 2 log 1", "samsung-870-evo-500gb", "wd-ultrastar-sn840-3.2tb",
                  numjobs=2), engine="analytic",
    )  # fmt: skip
    assert fast.write.iops > 3 * slow.write.iops


def test_a_lone_committer_waits_no_timeout_from_2_2():
    before = zsim.simulate(
        _scenario("mirror 2", "samsung-870-evo-500gb", version="0.8", numjobs=1),
        engine="analytic",
    )
    after = zsim.simulate(_scenario("mirror 2", "samsung-870-evo-500gb", numjobs=1),
                          engine="analytic")  # fmt: skip
    assert after.write.iops > before.write.iops


def test_an_hdd_pool_without_slog_commits_from_its_log_table():
    res = zsim.simulate(_scenario("raidz2 6", "seagate-ironwolf-12tb"), engine="analytic")
    w, d = res.write, res.details
    assert res.limit == "zil" and not d["slog"]
    # each commit waits for a flush that puts its log block on the platter: milliseconds
    assert 2e-3 < d["zil_commit_mean_s"] < 0.1
    assert w.latency_mean == pytest.approx(4 / w.iops)
    # the txg's write-back bursts hold the commits back: fewer calls/s than between them
    assert 0 < d["txg_write_back_s"] < d["txg_period_s"]
    assert w.iops < d["zil_commits_between_txgs_per_s"]
    assert w.latency_p50 is not None and w.latency_p50 >= d["zil_commit_mean_s"] * 0.5
    with pytest.raises(OutOfRange, match="HDD log vdev"):
        zsim.simulate(_scenario("raidz2 6 log 1", "seagate-ironwolf-12tb"), engine="analytic")


def test_fsync_every_n_calls_commits_once_per_n_and_counts_only_the_calls():
    every = zsim.simulate(_scenario("mirror 2", "samsung-870-evo-500gb"), engine="analytic")
    fsync = zsim.simulate(
        _scenario("mirror 2", "samsung-870-evo-500gb", sync=False, fsync=8, numjobs=2),
        engine="analytic",
    )
    # eight calls share one commit's flush: far more calls/s than a commit per call
    assert fsync.write.iops > 3 * every.write.iops
    # fio counts a call done before its commit: the latency is the calls' own CPU
    assert fsync.write.latency_mean < 0.1 * every.write.latency_mean
    assert fsync.details["zil_commit_mean_s"] > 1e-3  # the commit still waits for a flush
