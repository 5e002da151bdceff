"""Blocks born before a RAIDZ expansion's attach keep their width (issue 20).

OpenZFS 2.3 ``vdev_raidz_map_alloc_expanded()`` lays such a block's logical rows over every
child of the wider vdev; a block of several rows is read whole, parity included
(``vdev_raidz_io_start_read()``). These tests check zsim's map against a transcription of the
C loops, where zsim puts the old blocks (``born_regions``), that both engines read them so
(and agree), the scenario keys' refusals and what ``zsim grow`` reports.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zsim
from zsim.analytic.demands import PoolModel
from zsim.des.engine import Engine
from zsim.errors import ZsimError
from zsim.layout.raidz import raidz_asize, raidz_expanded_reads
from zsim.machine.run_control import RunControl
from zsim.zfs.expansion import allocated_before_attach, born_regions

SCENARIO = "examples/scenarios/resilver-raidz2-8-ironwolf.toml"


def _transcribed(offset: int, psize: int, ashift: int, phys: int, logical: int, parity: int):
    """The sectors each child reads, by the C loops of vdev_raidz_map_alloc_expanded() (the
    reflow finished: every row at the physical width) and vdev_raidz_io_start_read()."""
    s = ((psize - 1) >> ashift) + 1
    q, r = divmod(s, logical - parity)
    bc = 0 if r == 0 else r + parity
    tot = s + parity * (q + (0 if r == 0 else 1))
    rows = -(-tot // logical)
    cols = min(tot, logical)
    read: dict[int, list[int]] = {}
    for row in range(rows):
        b = (offset >> ashift) + row * logical
        child, child_sector = b % phys, b // phys
        columns = []
        for c in range(cols):
            if child >= phys:
                child -= phys
                child_sector += 1
            size = 0 if (c >= parity and row == rows - 1 and bc and c >= bc) else 1
            columns.append([child, child_sector, size, c < parity])
            child += 1
        if parity == 1 and cols > 1 and offset & (1 << 20):
            columns[0][:2], columns[1][:2] = columns[1][:2], columns[0][:2]
        for child, sector, size, is_parity in columns:
            if size and not (is_parity and rows == 1):  # forceparity when rows > 1
                read.setdefault(child, []).append(sector)
    return {child: sorted(sectors) for child, sectors in read.items()}


@settings(max_examples=400, deadline=None)
@given(
    parity=st.integers(1, 3),
    logical_extra=st.integers(1, 10),
    attached=st.integers(1, 6),
    ashift=st.sampled_from([9, 12]),
    sector=st.integers(0, 1 << 22),
    psize=st.integers(1, 1 << 20),
)
def test_expanded_map_matches_the_c_loops(parity, logical_extra, attached, ashift, sector, psize):
    logical = parity + logical_extra
    phys = logical + attached
    offset = sector << ashift
    got: dict[int, list[int]] = {}
    for child, child_offset, nbytes in raidz_expanded_reads(
        offset, psize, ashift, phys, logical, parity
    ):
        got.setdefault(child, []).extend(
            range(child_offset >> ashift, (child_offset + nbytes) >> ashift)
        )
    assert {c: sorted(v) for c, v in got.items()} == _transcribed(
        offset, psize, ashift, phys, logical, parity
    )


def test_an_old_record_is_read_from_every_child_with_its_parity():
    # raidz2 4 → 8: a 128K record born 4 wide is 32 data + 32 parity sectors, 8 per child
    ios = raidz_expanded_reads(0, 128 * 1024, 12, 8, 4, 2)
    assert sorted(c for c, _, _ in ios) == list(range(8))
    assert {n for _, _, n in ios} == {8 * 4096}
    skip = 2 * 4096  # 64 sectors allocated as 66 (a multiple of parity + 1), the 2 not read
    assert sum(n for _, _, n in ios) == raidz_asize(128 * 1024, 12, 4, 2) - skip
    # a one-row block reads its data sectors only
    assert sum(n for _, _, n in raidz_expanded_reads(0, 8192, 12, 8, 4, 2)) == 8192


def _steps(layout: str):
    cap = zsim.capacity(layout, "12TB")
    return cap.vdevs[0].steps


def test_born_regions_follow_the_fill_before_each_attach():
    steps = _steps("raidz2 4+2")
    assert born_regions(steps, 0.0, 12) == ()
    refilled = born_regions(steps, 0.5, 12)
    assert [w for _, w in refilled] == [4, 5]
    assert refilled[0][0] == allocated_before_attach(steps, 0.5, 12)[0]
    assert refilled[1][0] > refilled[0][0]  # data written at width 5 before the second attach
    same = born_regions(steps, 0.5, 12, refill=False)
    assert same == ((refilled[0][0], 4),)  # attached one after another: all data born at 4
    assert allocated_before_attach(steps, 0.5, 12, refill=False) == [refilled[0][0]] * 2


def _scenario(layout: str, rw: str, fill_at_attach: float, bs: str = "128K", jobs: int = 4):
    text = {
        "pool.layout": layout,
        "pool.fill": "0.2",
        "pool.fill_at_attach": str(fill_at_attach),
        "hardware.zfs_version": "2.3",
        "hardware.ram": "16GiB",
        "workload.rw": rw,
        "workload.bs": bs,
        "workload.numjobs": str(jobs),
        "workload.iodepth": "1" if rw == "read" else "8",
    }
    return zsim.load_scenario(SCENARIO, overrides=[f"{k}={v}" for k, v in text.items()])


def test_both_engines_read_old_blocks_at_their_width():
    sc = _scenario("raidz2 4+4", "randread", 0.5)
    model = PoolModel(sc)
    v = model.vdevs[0]
    assert v.read_width == 4 and v.read_asize == raidz_asize(model.psize, 12, 4, 2)
    engine = Engine(sc, 1, RunControl())
    top = engine.zfs.tops[0]
    assert engine.zfs.file_asizes[0] == v.read_asize
    _, offset = engine.zfs.locate((0, 0))
    assert top.width_at(offset) == 4
    assert len(top.leaf_ios(offset, engine.zfs.psize, False)) == 8  # every child
    # new blocks (writes) are at the full width: 6 data columns + 2 parity
    assert len(top.leaf_ios(offset, engine.zfs.psize, True)) == 8
    assert top.leaf_ios(offset, engine.zfs.psize, False, 8) != top.leaf_ios(
        offset, engine.zfs.psize, False
    )


@pytest.mark.parametrize("rw", ["read", "randread"])
def test_old_blocks_are_slower_to_read_on_both_engines(rw):
    """A stream of 2+2 rows carries 50 % parity against 25 % for 6+2 rows (one job: no
    other stream's seeks); random reads touch all 8 disks instead of 6. Both engines agree
    within 15 %."""
    rates = {}
    for fill_at_attach in (0.5, 0.0):
        if rw == "read":
            sc = _scenario("raidz2 4+4", rw, fill_at_attach, bs="1M", jobs=1)
        else:
            sc = _scenario("raidz2 4+4", rw, fill_at_attach)
        des = zsim.simulate(sc, engine="des", target_ci=0.05, max_sim_seconds=30)
        fast = zsim.simulate(sc, engine="analytic")
        assert fast.read.bytes_per_s == pytest.approx(des.read.bytes_per_s, rel=0.15)
        rates[fill_at_attach] = des.read.bytes_per_s
    assert rates[0.5] < 0.95 * rates[0.0]
    if rw == "read":  # the data share of what the disks stream: 2/4 against 6/8
        assert rates[0.5] / rates[0.0] == pytest.approx(2 / 4 / (6 / 8), rel=0.05)


def test_fill_at_attach_needs_an_expanded_vdev_and_a_healthy_pool():
    with pytest.raises(ZsimError, match="fill_at_attach applies to a raidz vdev with disks"):
        _scenario("raidz2 8", "randread", 0.5)
    with pytest.raises(ZsimError, match="fill_at_attach"):
        _scenario("raidz2 4+4", "randread", 1.0)
    with pytest.raises(ZsimError, match="degraded reads of blocks born before an attach"):
        zsim.load_scenario(
            SCENARIO,
            overrides=["pool.layout=raidz2 4+4", "pool.fill_at_attach=0.3", "pool.failed=sda"],
        )


def test_grow_reports_old_and_new_data_and_both_engines():
    base = zsim.load_scenario(SCENARIO)
    sc = dataclasses.replace(base, pool=dataclasses.replace(base.pool, layout="raidz2 6", fill=0.4))
    r = zsim.grow(sc, attach=1, reflow=False, des=True)
    perf = r.performance
    assert perf["after"]["fill_at_attach"] == pytest.approx(0.4)
    assert perf["after_new_data"]["fill_at_attach"] == 0.0
    for key in ("before", "after", "after_new_data"):
        assert perf["des"][key]["engine"] == "des"
        assert 0 < perf["des"][key]["ci_rel"] < 0.2  # DESIGN.md §5: a des result's ci_rel
        assert perf["des"][key]["read"]["bytes_per_s"] > 0
    with pytest.raises(ZsimError, match="des"):
        zsim.grow(sc, attach=1, reflow=False, des="yes")  # type: ignore[arg-type]
