"""md RAID / btrfs maps and the block-filesystem engine (fast runs, loose CIs)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zsim.des.linux.blockfs import simulate_blockfs
from zsim.errors import ZsimError
from zsim.layout.md_map import (
    btrfs_allocate_chunks,
    btrfs_chunk_copies,
    md_data_members,
    md_locate,
    md_pieces,
    parity_members,
    plan_stripe_write,
    raid56_member,
)
from zsim.machine.run_control import RunControl
from zsim.scenario import Hardware, Pool, Scenario, Workload, scenario_from_dict

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
HDD = {"disk": "seagate-ironwolf-12tb", "hba": "lsi-9300-8i", "ram": "64GiB", "cpu_cores": 8}
FAST = RunControl(target_ci=0.1, max_sim_seconds=3.0, max_wall_seconds=600, min_sim_seconds=0.5)

levels = st.sampled_from([(0, 2), (1, 2), (10, 2), (5, 3), (6, 4)])


def scenario(layout: str, workload: dict):
    return scenario_from_dict(
        {"hardware": dict(HDD), "pool": {"layout": layout, "fill": 0.01}, "workload": workload}
    )


# ---------------------------------------------------------------- md maps


@given(levels, st.integers(0, 6), st.sampled_from([4 * KiB, 64 * KiB, 512 * KiB]), st.data())
def test_every_logical_block_has_one_data_location(level_min, extra, chunk, data):
    level, minimum = level_min
    width = minimum + extra
    if level == 10 and width % 2:
        width += 1
    rows = 3 * width
    ndata = md_data_members(level, width)
    seen: dict[tuple[int, int], int] = {}
    for block in range(0, rows * ndata * chunk, chunk // 2):
        first = md_locate(level, width, chunk, block)[0]
        assert first not in seen, (block, seen.get(first))
        seen[first] = block
    offset = data.draw(st.integers(0, rows * ndata * chunk - 1))
    length = data.draw(st.integers(1, 3 * chunk))
    pieces = md_pieces(level, width, chunk, offset, length)
    assert sum(p.nbytes for p in pieces) == length
    assert pieces[0].logical == offset


@given(st.sampled_from([5, 6]), st.integers(0, 8), st.integers(0, 200))
def test_parity_never_shares_a_member_with_its_rows_data(level, extra, row):
    width = (3 if level == 5 else 4) + extra
    ndata = md_data_members(level, width)
    parity = parity_members(level, width, row)
    data = [raid56_member(level, width, row, c) for c in range(ndata)]
    assert len(set(parity)) == len(parity) == level - 4
    assert not set(parity) & set(data)
    assert sorted([*parity, *data]) == list(range(width))


def test_left_symmetric_rotation_matches_md():
    """RAID5 4 disks: row 0 P on disk 3, data 0,1,2; row 1 P on disk 2, data 3,0,1 (md.4)."""
    assert parity_members(5, 4, 0) == (3,)
    assert [raid56_member(5, 4, 0, c) for c in range(3)] == [0, 1, 2]
    assert parity_members(5, 4, 1) == (2,)
    assert [raid56_member(5, 4, 1, c) for c in range(3)] == [3, 0, 1]
    assert parity_members(6, 4, 0) == (3, 0)  # Q follows P, wrapping


@given(st.integers(2, 12), st.integers(0, 10_000))
def test_raid10_copies_on_different_members(width, chunk_index):
    copies = md_locate(10, width, 64 * KiB, chunk_index * 64 * KiB)
    assert len(copies) == 2
    assert copies[0][0] != copies[1][0]


def test_btrfs_raid1_chunks_rotate_over_devices_and_raid10_mirrors_pairs():
    chunks = btrfs_allocate_chunks("raid1", 4, 4)
    assert [c.devices for c in chunks] == [(0, 1), (2, 3), (0, 1), (2, 3)]
    (chunk,) = btrfs_allocate_chunks("raid10", 4, 1)
    elements = btrfs_chunk_copies("raid10", chunk, 0, 256 * KiB)
    assert [[d for d, _, _ in e] for e in elements] == [[0, 1], [2, 3], [0, 1], [2, 3]]


# ---------------------------------------------------------------- RAID5/6 write planning


def test_raid5_small_write_takes_rmw_large_partial_takes_rcw():
    chunk = 64 * KiB
    one = plan_stripe_write(5, 6, chunk, 0, {0: [(0, 4096)]})  # 1 of 5 columns
    assert (one.rmw_heads, one.rcw_heads) == (1, 0)
    assert len(one.reads) == 2  # old data + P, not the 4 other columns
    three = plan_stripe_write(5, 6, chunk, 0, {c: [(0, 4096)] for c in range(3)})
    assert (three.rmw_heads, three.rcw_heads) == (0, 1)  # rcw reads 2 < rmw's 4
    assert sum(n for _, _, n in three.reads) == 2 * 4096


def test_raid6_rmw_rcw_tie_goes_to_rcw_and_full_stripe_reads_nothing():
    chunk = 512 * KiB
    tie = plan_stripe_write(6, 8, chunk, 0, {0: [(0, 4096)], 1: [(0, 4096)]})  # 4 vs 4
    assert (tie.rmw_heads, tie.rcw_heads) == (0, 1)
    full = plan_stripe_write(6, 8, chunk, 5, {c: [(0, chunk)] for c in range(6)})
    assert full.reads == ()
    assert full.full_heads == chunk // 4096
    assert sum(n for _, _, n in full.writes) == 8 * chunk  # 6 data + P + Q


def test_sequential_write_on_raid5_reads_nothing():
    r = simulate_blockfs(
        scenario("md-raid5 4", {"tool": "dd", "direction": "write", "bs": "1M", "bytes": "8GiB"}),
        control=FAST,
    )
    assert r.write.bytes_per_s > 0
    assert r.details["stripe_heads_full"] > 0
    assert r.details["stripe_heads_rmw"] == r.details["stripe_heads_rcw"] == 0
    assert r.details["md_member_reads"] == 0


# ---------------------------------------------------------------- engine behaviour


def test_raid1_random_reads_spread_over_members():
    work = {
        "tool": "fio",
        "rw": "randread",
        "bs": "4K",
        "numjobs": 4,
        "iodepth": 4,
        "size": "16GiB",
        "direct": True,
    }
    r = simulate_blockfs(scenario("md-raid1 2", work), control=FAST)
    ios = r.details["device_ios"]
    assert min(ios.values()) > 0.3 * sum(ios.values())


def test_o_direct_bypasses_the_page_cache():
    work = {"tool": "fio", "rw": "randread", "bs": "4K", "numjobs": 2, "size": "1GiB"}
    buffered = simulate_blockfs(scenario("md-raid10 4", work), control=FAST)
    direct = simulate_blockfs(scenario("md-raid10 4", {**work, "direct": True}), control=FAST)
    assert buffered.details["page_cache_hit_ratio"] == pytest.approx(1.0)  # 2 GiB fits
    assert buffered.details["md_member_reads"] == 0
    assert direct.details["page_cache_hit_ratio"] is None
    assert direct.details["md_member_reads"] > 0


def test_fsync_adds_a_journal_commit():
    work = {"tool": "fio", "rw": "randwrite", "bs": "4K", "numjobs": 2, "size": "1GiB"}
    plain = simulate_blockfs(scenario("md-raid10 4", {**work, "direct": True}), control=FAST)
    synced = simulate_blockfs(
        scenario("md-raid10 4", {**work, "direct": True, "fsync": 1}), control=FAST
    )
    assert plain.details["journal_commits"] == 0
    assert synced.details["journal_commits"] > 0
    assert synced.write.latency_mean > plain.write.latency_mean


def test_raid6_pre_reads_go_out_in_waves_and_sync_writes_skip_them():
    # raid5.c: a stripe that must read waits on delayed_list until no released stripe is
    # still reading (IO_THRESHOLD 1), so buffered write-back's stripes read in fewer waves
    # than stripes; a REQ_SYNC (O_DIRECT) write's stripe reads at once
    work = {"tool": "fio", "rw": "randwrite", "bs": "4K", "numjobs": 4, "size": "4GiB"}
    buffered = simulate_blockfs(scenario("md-raid6 6", work), control=FAST)
    direct = simulate_blockfs(scenario("md-raid6 6", {**work, "direct": True}), control=FAST)
    d = buffered.details
    stripes = d["stripe_heads_rmw"] + d["stripe_heads_rcw"]
    assert stripes > 0 and 0 < d["preread_waves"] < stripes
    assert direct.details["stripe_heads_rmw"] + direct.details["stripe_heads_rcw"] > 0
    assert direct.details["preread_waves"] == 0


def test_a_run_that_ends_with_full_drive_caches_says_so():
    # unsynced writes only fill the drives' write caches (nothing flushes them); an fsync
    # after every write commits the journal, whose flush empties them
    work = {"tool": "fio", "rw": "randwrite", "bs": "4K", "numjobs": 2, "size": "1GiB"}
    plain = simulate_blockfs(scenario("md-raid10 4", {**work, "direct": True}), control=FAST)
    synced = simulate_blockfs(
        scenario("md-raid10 4", {**work, "direct": True, "fsync": 1}), control=FAST
    )
    cached = [n for n in plain.notes if "write caches still hold" in n]
    assert len(cached) == 1, plain.notes
    assert not [n for n in synced.notes if "write caches still hold" in n], synced.notes


def test_same_seed_same_result():
    work = {"tool": "fio", "rw": "randread", "bs": "64K", "numjobs": 4, "size": "32GiB"}
    sc = scenario("md-raid6 6", work)
    a = simulate_blockfs(sc, seed=3, control=FAST)
    b = simulate_blockfs(sc, seed=3, control=FAST)
    assert a.read == b.read
    assert a.events == b.events


def test_result_has_the_engine_fields():
    work = {"tool": "fio", "rw": "randread", "bs": "4K", "size": "8GiB", "direct": True}
    r = simulate_blockfs(scenario("btrfs-raid1 2", work), control=FAST)
    d = r.to_dict()
    assert d["engine"] == "des" and d["seed"] == 1
    assert d["scenario"]["pool"]["layout"] == "btrfs-raid1 2"
    assert r.limit in r.utilization or r.limit in ("client", "cpu", "writeback")
    assert r.read.iops > 0


def test_trace_workload_and_zfs_layout_are_refused():
    hw = Hardware(disk=scenario("md-raid1 2", {"tool": "dd", "direction": "read", "bs": "1M"})
                  .hardware.disk, disk_spec="seagate-ironwolf-12tb")  # fmt: skip
    sc = Scenario(hw, Pool(layout="md-raid6 8"), Workload(tool="trace", file="run.txt"))
    with pytest.raises(ZsimError, match="fio"):
        simulate_blockfs(sc)
    zfs = scenario("raidz2 8", {"tool": "fio", "rw": "randread", "bs": "4K"})
    with pytest.raises(ZsimError, match="simulate_des"):
        simulate_blockfs(zfs)
