"""The analytic engine's sequential-read model (``zsim.analytic.seqread``) and its stream tables
(``zsim.analytic.seqstreams``): the pure parts, the placement against the DES's own, the
stream loop's mechanisms, the validity range, and the DES's prefetch across a file's wrap."""

from __future__ import annotations

import pytest

import zsim
from zsim.analytic import seqstreams
from zsim.analytic.seqread import (
    SeqReadModel,
    aliquot,
    leaf_busy,
    limit_of,
    prefetch_window,
)
from zsim.analytic.stream_sample import (
    FLASH_MAX_WARMUP,
    IN_FLIGHT_SETS,
    MAX_DRAID_RECORDS,
    MAX_STREAM_RECORDS,
    MEASURED_RECORDS,
    MIN_DRAID_DISK_BYTES,
    MIN_DRAID_GROUPS,
    draid_groups,
    draid_records,
    stream_records,
    stream_warmup,
)
from zsim.analytic.validity import validity
from zsim.des.engine import Engine
from zsim.layout import parse_layout
from zsim.machine.run_control import RunControl
from zsim.scenario import apply_overrides, scenario_from_dict
from zsim.units import KiB, MiB
from zsim.zfs.version import parse_zfs_version


def _scenario(*overrides: str):
    data = {
        "hardware": {"disk": "seagate-ironwolf-12tb", "ram": "16GiB", "zfs_version": "2.3"},
        "pool": {"layout": "raidz2 8", "recordsize": "1M"},
        "workload": {"tool": "fio", "rw": "read", "bs": "1M", "numjobs": 4, "iodepth": 4,
                     "size": "32GiB"},
    }  # fmt: skip
    return scenario_from_dict(apply_overrides(data, list(overrides)), source="test")


# ---- pure parts


def test_the_prefetch_window_is_zfetch_max_distance_in_records():
    assert prefetch_window(64 * MiB, MiB) == 64
    assert prefetch_window(8 * MiB, 128 * KiB) == 64
    assert prefetch_window(8 * MiB, 16 * MiB) == 1  # at least the next record


def test_the_aliquot_follows_the_release():
    v08, v22, v24 = (parse_zfs_version(v) for v in ("0.8", "2.2", "2.4"))
    # raidz2 8: 6 data disks, 8 children; one vdev of the pool
    assert aliquot(v08, 6, 8, 1.0, 1) == 512 * KiB * 8
    assert aliquot(v22, 6, 8, 1.0, 1) == MiB * 6
    assert aliquot(v24, 6, 8, 1.0, 1) == 2 * MiB * 6
    # a vdev with half the space of two gets its share × the vdevs
    assert aliquot(v22, 1, 2, 0.25, 2) == MiB // 2


def test_the_limit_follows_the_des_rule():
    assert limit_of({"memory": 0.9, "disk:sda": 1.0}, 0.0) == "memory"
    assert limit_of({"memory": 0.2, "disk:sda": 0.97, "cpu": 0.5}, 0.0) == "disk:sda"
    assert limit_of({"memory": 0.2, "disk:sda": 0.5}, 0.9) == "cpu"
    assert limit_of({"memory": 0.2, "disk:sda": 0.5}, 0.3) == "client"


def test_a_vdevs_leaves_are_busy_in_proportion_to_the_bytes_they_read():
    m = SeqReadModel(_scenario("pool.layout=2x raidz1 3"))
    table = seqstreams.StreamTable(
        records_per_s=100.0,
        leaf_busy=(0.9, 0.5, 0.7, 1.0, 0.2, 0.0),
        leaf_bytes_per_record=(1.0, 1.0, 2.0, 3.0, 1.0, 0.0),
        leaf_ios_per_record=(0.1,) * 6,
        record_latency=0.01,
    )
    busy = leaf_busy(m.vdevs, table)
    # vdev 1: 2.1 busy over 4 bytes; vdev 2: 1.2 over 4, its idle (parity) leaf stays idle
    assert busy == pytest.approx([0.525, 0.525, 1.05, 0.9, 0.3, 0.0])


# ---- the placement is the DES's


@pytest.mark.parametrize(
    ("layout", "recordsize", "version"),
    [("3x raidz2 7", "128K", "2.2"), ("2x mirror 2", "1M", "0.8"), ("stripe 3", "256K", "2.4")],
)
def test_the_files_lie_where_the_des_lays_them(layout, recordsize, version):
    sc = _scenario(
        f"pool.layout={layout}", f"pool.recordsize={recordsize}",
        f"hardware.zfs_version={version}", "workload.numjobs=3", "workload.size=8GiB",
    )  # fmt: skip
    model = SeqReadModel(sc)
    placed = model._placement()
    zfs = Engine(sc, 1, RunControl()).zfs
    locate = seqstreams.rotor_locate(
        [(v.space, v.asize) for v in model.vdevs], placed.per_visit, placed.bases,
        model.file_records,
    )  # fmt: skip
    records = range(0, model.file_records, 7)
    assert all(locate(j, r) == zfs.locate((j, r)) for j in range(3) for r in records)
    assert list(placed.per_visit) == zfs.per_visit and placed.cycle == zfs.cycle
    for job in range(3):
        first: dict[int, int] = {}
        for record in range(3 * zfs.cycle):
            vdev, offset = zfs.locate((job, record))
            first.setdefault(vdev, offset)
        assert [placed.starts[v][job] for v in range(len(placed.starts))] == [
            first[v] for v in range(len(placed.starts))
        ]


# ---- the stream loop's mechanisms (the DES's vdev layer, run)


def _table(layout: str, *overrides: str, window: int = 16):
    sc = _scenario(f"pool.layout={layout}", "workload.numjobs=2", *overrides)
    m = SeqReadModel(sc)
    return m, m._pool_table(m._placement(), window, 0.0, 1.0, 0.0)


def test_raidz_streams_read_the_data_columns_only():
    m, table = _table("raidz2 8")
    # every leaf reads its share of the data: the leaves together move the record's data
    # (1 MiB), not its parity (a third more)
    assert sum(table.leaf_bytes_per_record) == pytest.approx(m.psize, rel=0.02)
    assert all(b > 0.9 for b in table.leaf_busy)


def test_a_mirror_reads_each_record_from_one_child():
    m, table = _table("mirror 2", "pool.recordsize=128K", "workload.bs=128K")
    assert sum(table.leaf_bytes_per_record) == pytest.approx(m.psize, rel=0.02)
    # and the vdev queue aggregates a child's neighbouring 128K reads (up to 1 MiB on HDDs):
    # fewer device I/Os than records
    assert sum(table.leaf_ios_per_record) < 0.5


def test_a_deeper_window_never_makes_a_stream_slower():
    _, shallow = _table("stripe 1", window=1)
    _, deep = _table("stripe 1", window=16)
    assert deep.records_per_s >= 0.97 * shallow.records_per_s


# ---- the engine and its range


def test_the_engine_answers_the_media_preset_shape_as_a_disk_bound_job(tmp_path, monkeypatch):
    monkeypatch.setenv("ZSIM_SHIPPED_TABLES", "off")  # measured here, not served
    monkeypatch.setenv("ZSIM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(seqstreams, "_CACHE", {})
    sc = _scenario()
    assert validity(sc) is None
    r = zsim.simulate(sc, engine="analytic")
    assert r.engine == "analytic" and r.write.iops == 0
    assert r.limit.startswith("disk:")
    # 8 IronWolf drives stream at most ~210 MB/s each, 6 of them data
    assert 300e6 < r.read.bytes_per_s < 8 * 210e6
    # the mean by Little's law: 4 jobs × 4 calls queued each; no percentiles
    assert r.read.latency_mean == pytest.approx(16 / r.read.iops)
    assert r.read.latency_p99 is None and r.read.latency_p50 is None
    assert list(tmp_path.rglob("*.json")), "the stream table went to the disk cache"
    again = zsim.simulate(sc, engine="analytic")
    assert again.read.bytes_per_s == r.read.bytes_per_s


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        (("workload.size=1GiB",), "files the ARC holds whole"),
        (("workload.direct=true",), "O_DIRECT sequential reads"),
        (("pool.primarycache=metadata",), "primarycache=metadata"),
        (("pool.layout=draid2:8d:1s:24c", "pool.recordsize=128K"), "dRAID sequential reads"),
        (("hardware.ram=2GiB", "workload.numjobs=16"), "fill half the ARC"),
    ],
)
def test_sequential_reads_it_cannot_model_are_declined(overrides, words):
    assert words in (validity(_scenario(*overrides)) or "")


def test_a_draid_table_measures_enough_records_to_cross_its_groups():
    # draid2:4d: groups of 6 children × 16 MiB = 96 MiB of the vdev. 1M records allocate
    # 6 columns of 256 KiB (1.5 MiB): 64 records a group
    assert draid_groups(4000, MiB, 12, 4, 2) == pytest.approx(4000 * 1.5 / 96)
    one = parse_layout("draid2:4d:1s:8c").data_vdevs
    # one stream crosses 20 groups within the usual sample; 4 streams need 4 × 20 × 64
    assert draid_records(MiB, 12, one, 1) == MEASURED_RECORDS
    assert draid_records(MiB, 12, one, 4) == 4 * MIN_DRAID_GROUPS * 64 == 5120
    assert validity(_scenario("pool.layout=draid2:4d:1s:8c")) is None
    # the allocated size fills the rows: 1M is 256 sectors, 86 rows of 3 data + 1 parity
    assert draid_groups(1, MiB, 12, 3, 1) == pytest.approx(4 * 86 * 4096 / (4 * 16 * MiB))
    # records go round the vdevs: each of two takes half of each stream's
    two = parse_layout("2x draid2:4d:1s:8c").data_vdevs
    assert draid_records(MiB, 12, two, 4) == 2 * 5120
    # no dRAID, no longer sample
    assert draid_records(4096, 12, parse_layout("raidz2 8").data_vdevs, 8) == MEASURED_RECORDS


def test_draid_reads_of_small_columns_or_needing_too_long_a_sample_are_declined():
    # 128K records over 8 data disks: 16 KiB per disk, under the 80 KiB the engines agree on
    sc = _scenario("pool.layout=draid2:8d:1s:24c", "pool.recordsize=128K")
    assert 128 * KiB // 8 < MIN_DRAID_DISK_BYTES
    assert "16384 B of a record per data disk" in (validity(sc) or "")
    # a pool of unlike vdevs: each vdev's share of the records differs
    mixed = _scenario("pool.layout=draid1:4d:1s:6c + draid1:14d:1s:16c", "hardware.ram=64GiB")
    assert "unlike vdevs" in (validity(mixed) or "")
    # 1M over 4 data disks, but 16 streams: 16 × 20 × 64 = 20,480 records
    sc = _scenario("pool.layout=draid2:4d:1s:8c", "workload.numjobs=16", "hardware.ram=64GiB")
    needed = draid_records(MiB, 12, sc.layout_tree().data_vdevs, 16)
    assert needed == 16 * 20 * 64 > MAX_DRAID_RECORDS
    assert f"would measure {needed} records in all" in (validity(sc) or "")


def test_a_disk_table_spans_four_times_the_records_the_jobs_hold_in_flight():
    # 16K records: zfetch's 64 MiB is 4096 records a job
    window = prefetch_window(64 * MiB, 16 * KiB)
    assert window == 4096
    assert stream_records(4, window, MEASURED_RECORDS) == IN_FLIGHT_SETS * 4 * 4096
    assert stream_warmup(4, window) == 4 * 4096
    # 1M records, one job: the usual sample is already longer
    assert stream_records(1, 64, MEASURED_RECORDS) == MEASURED_RECORDS
    # flash keeps its sample and a bounded warm-up
    assert stream_records(4, window, MEASURED_RECORDS, rotating=False) == MEASURED_RECORDS
    assert stream_warmup(4, window, rotating=False) == FLASH_MAX_WARMUP
    assert stream_records(4, window, 0, rotating=False) == 0


def test_disk_reads_whose_table_would_pass_its_bound_are_declined():
    small = ("pool.recordsize=16K", "workload.bs=16K", "hardware.ram=64GiB")
    # 8 jobs: 8 × 4096 of warm-up + 4 × that measured = 163,840 records
    reason = validity(_scenario(*small, "workload.numjobs=8")) or ""
    assert f"at most {MAX_STREAM_RECORDS}" in reason and "163840 records" in reason
    # 4 jobs: 81,920
    assert validity(_scenario(*small, "workload.numjobs=4")) is None
    # flash has no such bound
    flash = _scenario(*small, "workload.numjobs=8", "hardware.disk=wd-ultrastar-sn840-3.2tb")
    assert "at most" not in (validity(flash) or "")


def test_a_window_shorter_than_the_rotor_round_still_keeps_every_disk_busy(monkeypatch):
    # 0.8: 8 MiB of 1M records ahead, while each of 3 raidz1 6 vdevs takes 2.5 MiB a visit:
    # the vdevs take turns with each job's window, and two jobs keep all three busy
    monkeypatch.setenv("ZSIM_CACHE_DIR", "off")
    sc = _scenario("hardware.zfs_version=0.8", "pool.layout=3x raidz1 6", "workload.numjobs=2")
    model = SeqReadModel(sc)
    assert model.answer().window < 2 * model._placement().cycle
    r = zsim.simulate(sc, engine="analytic")
    assert r.limit.startswith("disk:")
    assert sum(v > 0.5 for k, v in r.utilization.items() if k.startswith("disk:")) == 18


# ---- the DES: zfetch starts again after a stream wraps to its file's start


def test_the_des_prefetches_again_after_a_file_wraps():
    sc = _scenario("workload.size=256MiB")
    engine = Engine(sc, 1, RunControl())
    job = engine.jobs[0]
    job.prefetched_to = engine.file_records  # the last pass prefetched to the file's end
    engine._prefetch(job, 0)  # the first record of the next pass
    assert job.prefetched_to == 1 + engine.prefetch_records
