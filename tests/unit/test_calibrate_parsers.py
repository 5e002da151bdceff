"""Golden tests for the tool-output parsers: fio JSON, dd summaries, zpool status/iostat, arcstat.

Expected figures are computed here from the raw files by independent means (the JSON is
decoded with the standard library, dd/zpool numbers are written out by hand), never by
calling the parser under test twice. Data: tests/data/calibrate/ (see its README.md) and,
read in place, the clemtibs logs under ../shared/reference/ (tests.conftest.shared_reference).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.conftest import shared_reference
from zsim.calibrate.dd import DdResult, dd_measurement, parse_dd_file, parse_dd_text
from zsim.calibrate.fio import parse_fio_file, parse_fio_text
from zsim.calibrate.measurement import Measurement, ParseError
from zsim.calibrate.zpool import (
    ScanStatus,
    parse_arcstat,
    parse_scan,
    parse_zpool_iostat,
)
from zsim.errors import UnitError, ZsimError
from zsim.units import parse_fio_size

DATA = Path(__file__).resolve().parents[1] / "data" / "calibrate"
ZPOOL = DATA / "zpool"
KIB, MIB, GIB, TIB = 2**10, 2**20, 2**30, 2**40


def reference_logs() -> Path:
    """The clemtibs logs (not shipped: no licence); skip without them, fail under CI."""
    return shared_reference("clemtibs-zfs-benchmark") / "zfs_benchmark_logs"


def raw_json(path: Path) -> dict:
    """fio's JSON document in a file, decoded independently of the parser under test."""
    text = path.read_text(encoding="utf-8")
    start = text.index("{") if text.startswith("{") else text.index("\n{") + 1
    document, _ = json.JSONDecoder().raw_decode(text, start)
    return document


def only(measurements: list[Measurement]) -> Measurement:
    assert len(measurements) == 1
    return measurements[0]


# ================================================================ parse_fio_size (zsim.units)


@pytest.mark.parametrize(
    ("text", "kb_base", "expected"),
    [
        ("4096", 1024, 4096),
        (4096, 1024, 4096),
        ("4k", 1024, 4096),
        ("4K", 1024, 4096),
        ("4kb", 1024, 4096),
        ("4KB", 1024, 4096),
        ("1m", 1024, MIB),
        ("2mb", 1024, 2 * MIB),
        ("10G", 1024, 10 * GIB),
        ("1t", 1024, TIB),
        ("1p", 1024, 2**50),
        ("16b", 1024, 16),
        ("0x1000", 1024, 4096),
        # fio's compatibility mode: IEC spellings are powers of 1000 (checked with fio 3.33)
        ("100KiB", 1024, 100_000),
        ("3MiB", 1024, 3_000_000),
        # kb_base=1000: SI spellings are 1000, IEC spellings 1024
        ("4k", 1000, 4000),
        ("4kB", 1000, 4000),
        ("4KB", 1000, 4000),
        ("4KiB", 1000, 4096),
        ("3MiB", 1000, 3 * MIB),
    ],
)
def test_parse_fio_size_follows_fio(text, kb_base, expected):
    assert parse_fio_size(text, kb_base) == expected


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        ("25%", "percentage"),
        ("1.5M", "cannot read"),
        ("-4k", "cannot read"),
        ("4q", "unknown fio size suffix"),
        ("4kibb", "unknown fio size suffix"),
        ("", "cannot read"),
        ("9" * 40, "digits"),
        (True, "not text"),
        (-1, "negative"),
    ],
)
def test_parse_fio_size_rejects_junk(bad, fragment):
    with pytest.raises(UnitError, match=fragment):
        parse_fio_size(bad)


def test_parse_fio_size_rejects_an_unknown_kb_base():
    with pytest.raises(UnitError, match="kb_base"):
        parse_fio_size("4k", kb_base=512)


# ================================================================ fio: captured fio 3.33 files

SINGLE_JOB_FILES = [
    "fio-3.33_randread_json.txt",
    "fio-3.33_write_jsonplus.txt",
    "fio-3.33_randwrite_json_normal.txt",
    "fio-3.33_group_reporting_numjobs2.txt",
    "fio-3.33_two_jobs.txt",
    "fio-3.33_randrw_mix70.txt",
    "fio-3.33_rate_iops.txt",
    "fio-3.33_offset_percent.txt",
]


@pytest.mark.parametrize("name", SINGLE_JOB_FILES)
def test_fio3_directions_match_the_json_fields(name):
    """bw_bytes → bytes/s, runtime ms → s, lat_ns/clat_ns ns → s, for every job and direction."""
    path = DATA / name
    document = raw_json(path)
    measurements = parse_fio_file(path)
    assert [m.name for m in measurements] == [job["jobname"] for job in document["jobs"]]
    for job, m in zip(document["jobs"], measurements, strict=True):
        assert m.source == f"{path}#{job['jobname']}"
        assert m.tool == "fio"
        assert m.tool_version == "fio-3.33" == document["fio version"]
        assert m.started == document["timestamp"]
        assert m.error == 0 and m.ok
        for key in ("read", "write"):
            raw, result = job[key], getattr(m, key)
            if raw["io_bytes"] == 0:
                assert result is None
                continue
            assert result.bytes_per_s == raw["bw_bytes"]
            assert result.iops == raw["iops"]
            assert result.io_bytes == raw["io_bytes"]
            assert result.runtime_s == raw["runtime"] / 1000
            assert result.lat_mean_s == pytest.approx(raw["lat_ns"]["mean"] * 1e-9, rel=1e-12)
            percentiles = raw["clat_ns"]["percentile"]
            assert result.clat_p50_s == pytest.approx(percentiles["50.000000"] * 1e-9)
            assert result.clat_p99_s == pytest.approx(percentiles["99.000000"] * 1e-9)
        runtimes = [job[k]["runtime"] / 1000 for k in ("read", "write") if job[k]["io_bytes"]]
        assert m.runtime_s == max(runtimes)


def test_fio3_command_line_job_takes_fio_defaults():
    path = DATA / "fio-3.33_randread_json.txt"
    m = only(parse_fio_file(path))
    assert (m.name, m.rw, m.bs, m.size) == ("randread4k", "randread", 4096, 16 * MIB)
    assert (m.iodepth, m.numjobs, m.ioengine, m.direct, m.sync, m.fsync) == (
        1,
        1,
        "psync",
        False,
        False,
        0,
    )
    assert (m.offset, m.offset_fraction, m.rate_bytes_per_s, m.rate_iops) == (0, None, 0.0, 0.0)
    assert m.options["filename"] == "/tmp/fiogen/x"
    assert m.write is None and m.direction() is m.read


def test_fio3_json_plus_ignores_the_histogram_bins():
    path = DATA / "fio-3.33_write_jsonplus.txt"
    assert "bins" in raw_json(path)["jobs"][0]["write"]["clat_ns"]
    m = only(parse_fio_file(path))
    assert (m.rw, m.bs) == ("write", 64 * KIB)
    assert m.read is None and m.write is not None


def test_fio3_json_between_text_header_and_normal_report():
    path = DATA / "fio-3.33_randwrite_json_normal.txt"
    text = path.read_text()
    assert text.startswith("randwrite: (g=0): rw=randwrite") and "Run status group 0" in text
    m = only(parse_fio_text(text, "run.log"))
    assert m.source == "run.log#randwrite"
    assert m.write.bytes_per_s == raw_json(path)["jobs"][0]["write"]["bw_bytes"]


def test_fio3_group_reporting_takes_numjobs_and_global_options():
    path = DATA / "fio-3.33_group_reporting_numjobs2.txt"
    document = raw_json(path)
    assert len(document["jobs"]) == 1
    m = only(parse_fio_file(path))
    assert (m.numjobs, m.iodepth, m.ioengine, m.direct, m.bs) == (2, 4, "libaio", True, 4096)
    assert m.options["filename"] == document["global options"]["filename"]
    assert m.options["rw"] == "randread"


def test_fio3_processes_without_group_reporting_are_aggregated():
    path = DATA / "fio-3.33_no_group_reporting_numjobs2.txt"
    first, second = (job["write"] for job in raw_json(path)["jobs"])
    m = only(parse_fio_file(path))
    assert (m.name, m.rw, m.bs, m.numjobs, m.fsync) == ("randwrite_procs", "randwrite", 8192, 2, 8)
    w = m.write
    assert w.bytes_per_s == first["bw_bytes"] + second["bw_bytes"]
    assert w.iops == pytest.approx(first["iops"] + second["iops"])
    assert w.io_bytes == first["io_bytes"] + second["io_bytes"]
    assert w.runtime_s == max(first["runtime"], second["runtime"]) / 1000
    n1, n2 = first["total_ios"], second["total_ios"]
    mean = (first["lat_ns"]["mean"] * n1 + second["lat_ns"]["mean"] * n2) / (n1 + n2)
    assert w.lat_mean_s == pytest.approx(mean * 1e-9)
    p50s = [job["clat_ns"]["percentile"]["50.000000"] for job in (first, second)]
    assert w.clat_p50_s == pytest.approx((p50s[0] * n1 + p50s[1] * n2) / (n1 + n2) * 1e-9)
    p99s = [job["clat_ns"]["percentile"]["99.000000"] for job in (first, second)]
    assert w.clat_p99_s == pytest.approx(max(p99s) * 1e-9)
    assert m.read is None


def test_fio3_two_jobs_in_file_order_with_their_own_options():
    seqread, syncwrite = parse_fio_file(DATA / "fio-3.33_two_jobs.txt")
    assert (seqread.name, seqread.rw, seqread.bs, seqread.sync) == (
        "seqread",
        "read",
        131072,
        False,
    )
    assert seqread.rate_bytes_per_s == 0.0
    assert (syncwrite.name, syncwrite.rw, syncwrite.bs) == ("syncwrite", "write", 16384)
    assert syncwrite.sync is True  # sync=dsync
    assert syncwrite.rate_bytes_per_s == 2 * MIB  # rate=4m,2m: the write part
    assert syncwrite.write.bytes_per_s <= 2 * MIB * 1.01


def test_fio3_mixed_randrw():
    path = DATA / "fio-3.33_randrw_mix70.txt"
    job = raw_json(path)["jobs"][0]
    m = only(parse_fio_file(path))
    assert (m.rw, m.rwmixread, m.bs, m.iodepth, m.direct) == ("randrw", 70, 16384, 8, True)
    assert m.read.iops == job["read"]["iops"] and m.write.iops == job["write"]["iops"]
    assert m.read.iops / (m.read.iops + m.write.iops) == pytest.approx(0.7, abs=0.02)
    assert m.direction() is m.read


def test_fio3_rate_iops_cap():
    m = only(parse_fio_file(DATA / "fio-3.33_rate_iops.txt"))
    assert m.rate_iops == 200.0
    assert m.read.iops == pytest.approx(200, rel=0.02)


def test_fio3_offset_and_size_as_percentages():
    m = only(parse_fio_file(DATA / "fio-3.33_offset_percent.txt"))
    assert (m.offset, m.offset_fraction, m.size) == (0, 0.25, None)
    assert m.options["offset"] == "25%"


# ================================================================ fio 2.x (hand-made layout)


def test_fio2_units_kib_and_microseconds():
    path = DATA / "fio-2.2.10_handmade.json"
    randread, seqwrite = parse_fio_file(path)
    assert randread.tool_version == "fio-2.2.10"
    assert randread.started == 1483228800
    r = randread.read
    assert r.io_bytes == 1_000_000 * 1024  # io_bytes in KiB in fio 2
    assert r.bytes_per_s == 100_000 * 1024  # bw in KiB/s
    assert r.iops == 25_000 and r.runtime_s == 10.0
    assert r.lat_mean_s == pytest.approx(155.25e-6)  # lat in µs
    assert r.clat_p50_s == pytest.approx(143e-6) and r.clat_p99_s == pytest.approx(310e-6)
    assert (randread.bs, randread.iodepth, randread.ioengine, randread.direct) == (
        4096,
        32,
        "libaio",
        True,
    )
    assert randread.size == 4 * GIB and randread.write is None
    assert (seqwrite.rw, seqwrite.bs, seqwrite.numjobs) == ("write", 128 * KIB, 2)
    assert seqwrite.write.bytes_per_s == 500 * MIB
    assert seqwrite.write.io_bytes == 40_000 * 128 * KIB


# ================================================================ fio: synthetic documents


def fio_text(jobs: list[dict], *, version: str | None = "fio-3.36", header: str = "") -> str:
    document: dict = {"timestamp": 1745739229, "jobs": jobs}
    if version is not None:
        document["fio version"] = version
    return header + json.dumps(document, indent=2) + "\n"


def fio3_direction(io_bytes: int = 0, runtime_ms: int = 0, **extra) -> dict:
    seconds = runtime_ms / 1000
    ios = io_bytes // 4096
    block = {
        "io_bytes": io_bytes,
        "io_kbytes": io_bytes >> 10,
        "bw_bytes": round(io_bytes / seconds) if seconds else 0,
        "bw": round(io_bytes / seconds / 1024) if seconds else 0,
        "iops": ios / seconds if seconds else 0.0,
        "runtime": runtime_ms,
        "total_ios": ios,
        "lat_ns": {"mean": 2_000_000.0, "N": ios},
        "clat_ns": {
            "mean": 1_900_000.0,
            "N": ios,
            "percentile": {"50.000000": 1_500_000, "99.000000": 9_000_000},
        },
    }
    block.update(extra)
    return block


def fio3_job(name: str = "job", options: dict | None = None, **directions) -> dict:
    job = {"jobname": name, "groupid": 0, "error": 0, "job options": options or {}}
    job.update(directions)
    return job


def write_job(options: dict | None = None, name: str = "job") -> dict:
    return fio3_job(name, options, read=fio3_direction(), write=fio3_direction(4 * MIB, 1000))


def test_fio_failed_run_is_returned_with_its_error():
    job = write_job({"rw": "randwrite"})
    job["error"] = 24
    m = only(parse_fio_text(fio_text([job]), "x.json"))
    assert m.error == 24 and not m.ok
    assert m.write.io_bytes == 4 * MIB


def test_fio_missing_percentiles_are_none():
    direction = fio3_direction(4 * MIB, 1000)
    direction["clat_ns"]["percentile"] = {"1.000000": 8032}
    job = fio3_job(write=direction, read=fio3_direction())
    m = only(parse_fio_text(fio_text([job]), "x.json"))
    assert m.write.clat_p50_s is None and m.write.clat_p99_s is None
    assert m.write.lat_mean_s == pytest.approx(2e-3)


def test_fio_early_3x_without_bw_bytes_uses_kib_bw():
    direction = fio3_direction(4 * MIB, 1000)
    del direction["bw_bytes"]
    job = fio3_job(write=direction, read=fio3_direction())
    m = only(parse_fio_text(fio_text([job], version="fio-3.1"), "x.json"))
    assert m.write.bytes_per_s == direction["bw"] * 1024


def test_fio_unified_rw_reporting_mixed_block():
    job = fio3_job(options={"rw": "randwrite"}, mixed=fio3_direction(4 * MIB, 1000))
    m = only(parse_fio_text(fio_text([job]), "x.json"))
    assert m.read is None and m.write.io_bytes == 4 * MIB


@pytest.mark.parametrize(
    ("options", "field", "expected"),
    [
        ({"rw": "rw"}, "rw", "readwrite"),
        ({"readwrite": "randrw"}, "rw", "randrw"),
        ({"rw": "randread:8"}, "rw", "randread"),
        ({}, "rw", "read"),
        ({"rwmixwrite": "30"}, "rwmixread", 70),
        ({"rw": "write", "bs": "4k,64k"}, "bs", 65536),
        ({"rw": "read", "bs": "4k,64k"}, "bs", 4096),
        ({"rw": "write", "bs": ",8k"}, "bs", 8192),
        ({"rw": "write", "blocksize": "16k"}, "bs", 16384),
        ({"rw": "write", "bs": "4k", "kb_base": "1000"}, "bs", 4000),
        ({"rw": "write", "bs": "4KiB"}, "bs", 4000),
        ({"rw": "randrw", "rate": "10m,5m"}, "rate_bytes_per_s", 10 * MIB),
        ({"rw": "write", "rate": "10m,5m"}, "rate_bytes_per_s", 5 * MIB),
        ({"rw": "write", "rate": "10m"}, "rate_bytes_per_s", 10 * MIB),
        ({"rw": "read", "rate": ",5m"}, "rate_bytes_per_s", 0),
        ({"rw": "write", "rate_iops": "500,200"}, "rate_iops", 200),
        ({"sync": "1"}, "sync", True),
        ({"sync": "sync"}, "sync", True),
        ({"sync": "dsync"}, "sync", True),
        ({"sync": "none"}, "sync", False),
        ({"sync": "0"}, "sync", False),
        ({"direct": "true"}, "direct", True),
        ({"buffered": "0"}, "direct", True),
        ({"offset": "1g"}, "offset", GIB),
        ({"offset": "12.5%"}, "offset_fraction", 0.125),
        ({"size": "2g"}, "size", 2 * GIB),
        ({"size": "50%"}, "size", None),
        ({"iodepth": "32", "ioengine": "io_uring"}, "iodepth", 32),
        ({"ioengine": "io_uring"}, "ioengine", "io_uring"),
    ],
)
def test_fio_options_map_to_measurement_fields(options, field, expected):
    m = only(parse_fio_text(fio_text([write_job(options)]), "x.json"))
    assert getattr(m, field) == expected


def test_fio_global_options_are_overridden_by_job_options():
    document = json.loads(fio_text([write_job({"bs": "64k"})]))
    document["global options"] = {"bs": "4k", "ioengine": "libaio"}
    m = only(parse_fio_text(json.dumps(document), "x.json"))
    assert (m.bs, m.ioengine) == (65536, "libaio")


def test_fio_several_jobs_keep_file_order():
    text = fio_text([write_job(name="b"), write_job(name="a"), write_job(name="b")])
    measurements = parse_fio_text(text, "x.json")
    assert [(m.name, m.numjobs) for m in measurements] == [("b", 2), ("a", 1)]


def test_fio_without_json_says_how_to_get_it():
    with pytest.raises(ParseError, match=r"^run\.log: no fio JSON found.*--output-format=json"):
        parse_fio_text("fio-3.36\nStarting 4 processes\n", "run.log")


def test_fio_truncated_json_names_the_line():
    text = fio_text([write_job()], header="fio-3.36\nStarting 1 process\n")
    cut = text[: len(text) // 2]
    with pytest.raises(ParseError) as caught:
        parse_fio_text(cut, "run.log")
    assert caught.value.path == "run.log"
    assert caught.value.line == cut.count("\n") + 1
    assert "cut off or malformed" in str(caught.value)


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"rw": "sideways"}, "fio I/O pattern"),
        ({"bs": "4x"}, "option bs="),
        ({"numjobs": "0"}, "numjobs"),
        ({"direct": "maybe"}, "option direct="),
        ({"offset": "150%"}, "percentage 0…100%"),
        ({"rwmixread": "120"}, "0…100"),
        ({"kb_base": "512"}, "kb_base"),
    ],
)
def test_fio_bad_options_name_the_job_and_its_line(options, fragment):
    text = fio_text([write_job(options, name="bad")], header="fio-3.36\n")
    jobname_line = text.split("\n").index('      "jobname": "bad",') + 1
    with pytest.raises(ParseError, match=fragment) as caught:
        parse_fio_text(text, "run.log")
    assert caught.value.line == jobname_line
    assert "fio job 'bad' (jobs[0])" in str(caught.value)


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda d: d.pop("jobs"), "'jobs' list"),
        (lambda d: d.update(jobs=[]), "'jobs' list"),
        (lambda d: d["jobs"][0].pop("jobname"), "'jobname'"),
        (lambda d: d["jobs"][0]["write"].pop("iops"), "missing 'iops'"),
        (lambda d: d["jobs"][0]["write"].update(runtime="60"), "expected a number"),
        (lambda d: d["jobs"][0]["write"].update(io_bytes=-1), "finite number"),
        (lambda d: d["jobs"][0].update(write=[1, 2]), "expected a JSON object"),
        (lambda d: d["jobs"][0].pop("write") and d["jobs"][0].pop("read"), "no 'read' or"),
        (lambda d: d.update({"fio version": 3}), "expected text"),
        (lambda d: d["jobs"][0]["job options"].update(bs=["4k"]), "expected a value"),
    ],
)
def test_fio_wrong_documents_raise_parse_error(mutate, fragment):
    document = json.loads(fio_text([write_job()]))
    mutate(document)
    with pytest.raises(ParseError, match=fragment):
        parse_fio_text(json.dumps(document, indent=1), "x.json")


def test_fio_file_that_cannot_be_read(tmp_path):
    with pytest.raises(ParseError, match="cannot read"):
        parse_fio_file(tmp_path / "missing.json")


# ================================================================ fio: the clemtibs reference runs


def reference_fio_logs() -> list[Path]:
    return sorted(reference_logs().glob("*/*/*.log"))


def reference_run(pool: str, test: str) -> Measurement:
    folder = reference_logs() / pool / test
    return only(parse_fio_file(next(folder.glob("*.log"))))


def test_every_reference_fio_run_parses():
    logs = reference_fio_logs()
    assert len(logs) == 23
    root = reference_logs()
    runs = {path.relative_to(root).parent.as_posix(): only(parse_fio_file(path)) for path in logs}
    failed = {key for key, m in runs.items() if not m.ok}
    assert failed == {"tank_raidz2_nospecial_slog/metadata_stress_2"}
    broken = runs["tank_raidz2_nospecial_slog/metadata_stress_2"]
    assert broken.error == 24 and broken.write.io_bytes == 5_820_416
    assert all(m.tool_version == "fio-3.36" for m in runs.values())


def test_reference_figures_match_the_published_table():
    seq = reference_run("tank_raidz2_nospecial_slog", "async_seq_write")
    assert round(seq.write.bytes_per_s / MIB, 1) == 489.8
    assert round(seq.write.iops) == 490
    assert (seq.rw, seq.bs, seq.numjobs, seq.iodepth, seq.ioengine) == (
        "write",
        MIB,
        4,
        4,
        "libaio",
    )
    assert round(seq.write.lat_mean_s * 1e3, 3) == 29.008
    assert round(seq.write.clat_p99_s * 1e3, 3) == 31.588
    large = reference_run("tank_raidz2_nospecial_slog", "large_read")
    assert round(large.read.bytes_per_s / MIB, 1) == 720.8
    mixed = reference_run("tank_raidz2_nospecial_slog", "mixed_rw")
    assert (round(mixed.read.iops), round(mixed.write.iops)) == (1409, 610)
    assert mixed.rwmixread == 70 and mixed.rw == "randrw"
    meta = reference_run("tank_raidz2_nospecial_slog", "metadata_stress")
    assert meta.write.clat_p50_s is None and meta.write.clat_p99_s is None
    assert (meta.bs, meta.numjobs) == (512, 8)


def test_reference_slog_punisher_is_the_only_o_sync_job():
    with_slog = reference_run("tank_raidz2_nospecial_slog", "slog_punisher")
    without = reference_run("tank_raidz2_nospecial_noslog", "slog_punisher")
    assert with_slog.sync and without.sync
    assert round(without.write.clat_p99_s * 1e3, 3) == 8.978
    assert round(with_slog.write.clat_p99_s * 1e3, 3) == 1.434
    assert not reference_run("tank_raidz2_nospecial_slog", "sync_seq_write").sync


# ================================================================ dd


def test_dd_gnu_plain():
    result = parse_dd_file(DATA / "dd_gnu-9.1_plain.txt")
    assert result == DdResult(67108864, 0.0168262, 67108864 / 0.0168262, 64, 0, 64, 0)


def test_dd_gnu_progress_takes_the_final_summary():
    result = parse_dd_file(DATA / "dd_gnu-9.1_progress.txt")
    assert (result.bytes, result.seconds) == (2147483648, 7.3015)
    assert result.bytes_per_s == 2147483648 / 7.3015
    assert (result.records_in_full, result.records_out_full) == (2048, 2048)


@pytest.mark.parametrize(
    ("name", "nbytes", "seconds"),
    [
        ("dd_gnu-9.1_512_bytes.txt", 512, 0.000213657),
        ("dd_gnu-9.1_1_byte.txt", 1, 0.000175511),
        ("dd_gnu-9.1_zero_bytes.txt", 0, 4.2824e-05),
        ("dd_bsd_classic_handmade.txt", 1073741824, 1.234567),
        ("dd_freebsd13_progress_handmade.txt", 1073741824, 2.051234),
    ],
)
def test_dd_summary_files(name, nbytes, seconds):
    result = parse_dd_file(DATA / name)
    assert (result.bytes, result.seconds) == (nbytes, seconds)
    assert result.bytes_per_s == nbytes / seconds


@pytest.mark.parametrize(
    ("text", "nbytes", "seconds"),
    [
        ("1073741824 bytes (1.1 GB) copied, 1.23456 s, 870 MB/s", 1073741824, 1.23456),
        ("1073741824 bytes (1.1 GB, 1.0 GiB) copied, 1,23 s, 873 MB/s", 1073741824, 1.23),
        ("512 bytes copied, 0.000123 s, 4.2 MB/s", 512, 0.000123),
        ("1 byte copied, 0.5 s, 2 B/s", 1, 0.5),
        ("1073741824 bytes (1.0GB) copied, 1.234 seconds, 870.0MB/s", 1073741824, 1.234),
        (
            "  1073741824 bytes (1074 MB, 1024 MiB) transferred 1.234s, 870 MB/s",
            1073741824,
            1.234,
        ),
        ("  1,073,741,824 bytes (1074 MB, 1024 MiB) transferred 1.234s, 870 MB/s", 2**30, 1.234),
        ("1+0 records in\r\n1+0 records out\n4096 bytes copied, 0.001 s, 4.1 MB/s\n", 4096, 0.001),
        ("dd: warning: partial read (512 bytes); suggest iflag=fullblock\n5 bytes copied, 1 s, "
         "5 B/s", 5, 1.0),
    ],
)  # fmt: skip
def test_dd_summary_forms(text, nbytes, seconds):
    result = parse_dd_text(text, "dd.txt")
    assert (result.bytes, result.seconds, result.bytes_per_s) == (nbytes, seconds, nbytes / seconds)


def test_dd_zero_seconds_gives_an_infinite_rate_that_dd_measurement_refuses():
    result = parse_dd_text("4096 bytes copied, 0 s, Infinity B/s", "dd.txt")
    assert math.isinf(result.bytes_per_s)
    with pytest.raises(ParseError, match="0 s"):
        dd_measurement(result, direction="write", bs=4096, source="dd.txt", name="w")


def test_dd_error_is_quoted():
    with pytest.raises(ParseError) as caught:
        parse_dd_file(DATA / "dd_gnu-9.1_enospc.txt")
    assert caught.value.line == 1
    assert "dd: error writing '/dev/full': No space left on device" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("hello\nworld\n", 2, "the last line is 'world'"),
        ("", None, "the output is empty"),
        ("1+0 records in\n1+0 records out\n", 2, "bytes (…) copied"),
        ("1073741824 bytes (1.1 GB, 1.0 GiB) copied, 1.2", 1, "cut off or unknown dd summary"),
    ],
)
def test_dd_without_a_summary(text, line, fragment):
    with pytest.raises(ParseError, match=r"^dd\.txt") as caught:
        parse_dd_text(text, "dd.txt")
    assert caught.value.line == line
    assert fragment in str(caught.value)
    assert "transferred" in str(caught.value)


def test_dd_measurement_is_exact():
    result = parse_dd_file(DATA / "dd_gnu-9.1_plain.txt")
    m = dd_measurement(result, direction="write", bs=MIB, streams=2, source="dd.txt", name="w")
    assert (m.tool, m.rw, m.bs, m.numjobs, m.runtime_s) == ("dd", "write", MIB, 2, 0.0168262)
    assert m.read is None
    assert m.write.bytes_per_s == 67108864 / 0.0168262
    assert m.write.iops == m.write.bytes_per_s / MIB
    assert m.write.io_bytes == 67108864 and m.ok
    read = dd_measurement(result, direction="read", bs=4096, source="dd.txt", name="r")
    assert read.write is None and read.read.iops == read.read.bytes_per_s / 4096


@pytest.mark.parametrize(("direction", "bs", "streams"), [("randread", 4096, 1), ("read", 0, 1)])
def test_dd_measurement_rejects_bad_arguments(direction, bs, streams):
    result = parse_dd_file(DATA / "dd_gnu-9.1_plain.txt")
    with pytest.raises(ZsimError):
        dd_measurement(result, direction=direction, bs=bs, streams=streams, source="s", name="n")


# ================================================================ zpool status: scan

SCAN_FILES = {
    "status_0.6_resilvered.txt": ScanStatus(
        "resilver", "finished", 3, bytes=round(1.23 * TIB), seconds=5 * 3600 + 12 * 60, errors=0,
        when="Sun Jan  1 00:00:00 2017",
    ),
    "status_0.7_resilver_in_progress.txt": ScanStatus(
        "resilver", "in_progress", 6, bytes=300 * GIB, scanned_bytes=round(1.23 * TIB),
        total_bytes=round(4.56 * TIB), scan_rate=123 * MIB, percent_done=27.0,
        seconds_to_go=7 * 3600 + 52 * 60, when="Sun Jan  1 00:00:00 2017",
    ),
    "status_0.8_scrub_repaired.txt": ScanStatus(
        "scrub", "finished", 3, bytes=0, seconds=12 * 3600 + 34 * 60 + 56, errors=0,
        when="Sun Mar 10 12:58:57 2019",
    ),
    "status_0.8_resilver_in_progress.txt": ScanStatus(
        "resilver", "in_progress", 6, bytes=300 * GIB, scanned_bytes=round(4.56 * TIB),
        issued_bytes=round(2.34 * TIB), total_bytes=round(10.1 * TIB),
        scan_rate=round(1.23 * GIB), issue_rate=600 * MIB, percent_done=23.12,
        seconds_to_go=3 * 3600 + 45 * 60 + 12, when="Sun Mar 10 09:00:00 2019",
    ),
    "status_0.8_scrub_paused.txt": ScanStatus(
        "scrub", "in_progress", 3, bytes=0, scanned_bytes=round(4.56 * TIB),
        issued_bytes=round(2.34 * TIB), total_bytes=round(10.1 * TIB), percent_done=23.12,
        paused=True, when="Mon Mar 11 08:00:00 2019",
    ),
    "status_2.1_resilvered.txt": ScanStatus(
        "resilver", "finished", 3, bytes=round(1.23 * TIB), seconds=86400 + 5 * 3600 + 12 * 60 + 34,
        errors=0, when="Sun Jan 15 06:12:34 2023",
    ),
    "status_2.2_resilver_in_progress.txt": ScanStatus(
        "resilver", "in_progress", 6, bytes=300 * GIB, scanned_bytes=round(4.56 * TIB),
        issued_bytes=round(2.34 * TIB), total_bytes=round(10.1 * TIB),
        scan_rate=round(1.23 * GIB), issue_rate=600 * MIB, percent_done=23.12,
        seconds_to_go=3 * 3600 + 45 * 60 + 12, when="Sat Apr 26 10:00:00 2025",
    ),
    "status_2.2_scrub_no_estimate.txt": ScanStatus(
        "scrub", "in_progress", 3, bytes=0, scanned_bytes=812 * GIB, issued_bytes=0,
        total_bytes=round(10.1 * TIB), scan_rate=round(1.02 * GIB), percent_done=0.0,
        when="Sat Apr 26 10:00:00 2025",
    ),
    "status_2.2_draid_rebuilt.txt": ScanStatus(
        "rebuild", "finished", 6, bytes=round(1.2 * TIB), seconds=600.0, errors=0,
        vdev="draid1:4d:7c:1s-0", when="Sat Apr 26 10:10:00 2025",
    ),
    "status_scrub_canceled.txt": ScanStatus(
        "scrub", "canceled", 3, when="Sat Apr 26 11:00:00 2025"
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SCAN_FILES))
def test_scan_forms_across_releases(name):
    path = ZPOOL / name
    assert parse_scan(path.read_text(), str(path)) == SCAN_FILES[name]


@pytest.mark.parametrize(
    ("text", "kind", "state", "seconds"),
    [
        ("resilvered 1.23T in 0h5m with 0 errors on Sun Jan  1 00:00:00 2017", "resilver",
         "finished", 300.0),
        ("scan: scrub repaired 12K in 12:34:56 with 2 errors on Sun Jan  1 00:00:00 2023",
         "scrub", "finished", 45296.0),
        ("resilver canceled on Sun Jan  1 00:00:00 2023", "resilver", "canceled", None),
        ("resilver (draid2-0) canceled on Sun Jan  1 00:00:00 2023", "rebuild", "canceled", None),
        ("\x1b[1mscan:\x1b[0m resilvered 1M in 00:00:01 with 0 errors on Mon", "resilver",
         "finished", 1.0),
    ],
)  # fmt: skip
def test_scan_bare_lines(text, kind, state, seconds):
    status = parse_scan(text, "status.txt")
    assert (status.kind, status.state, status.seconds) == (kind, state, seconds)


def test_scan_rebuild_in_progress():
    text = (
        "  scan: resilver (draid1-0) in progress since Sat Apr 26 10:00:00 2025\n"
        "\t1.00T / 2.00T scanned at 1.00G/s, 900G / 2.00T issued at 900M/s\n"
        "\t800G resilvered, 50.00% done, 00:17:04 to go\n"
    )
    status = parse_scan(text, "status.txt")
    assert (status.kind, status.vdev, status.percent_done) == ("rebuild", "draid1-0", 50.0)
    assert (status.scanned_bytes, status.total_bytes, status.issued_bytes) == (
        TIB,
        2 * TIB,
        900 * GIB,
    )
    assert (status.scan_rate, status.issue_rate, status.seconds_to_go) == (GIB, 900 * MIB, 1024.0)


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("  pool: tank\n  scan: none requested\n", 2, "none requested"),
        ("  pool: tank\n  scan: resilvered lots quickly\n", 2, "expected an OpenZFS scan line"),
        ("  scan: resilver in progress since Mon\nconfig:\n", 1, "progress lines"),
        ("  scan: resilvered 1T in 5 minutes with 0 errors on Mon\n", 1, "duration"),
        ("", None, "empty"),
    ],
)
def test_scan_errors_name_the_line(text, line, fragment):
    with pytest.raises(ParseError, match=r"^status\.txt") as caught:
        parse_scan(text, "status.txt")
    assert caught.value.line == line
    assert fragment in str(caught.value)


# ================================================================ zpool iostat


def test_iostat_v_with_timestamps_and_sections():
    path = ZPOOL / "iostat_v_T_d_handmade.txt"
    first, second = parse_zpool_iostat(path.read_text(), str(path))
    assert (first.index, first.since_import, first.timestamp, first.line) == (
        0,
        True,
        "Sat Apr 26 10:00:00 UTC 2025",
        2,
    )
    assert (second.index, second.since_import, second.line) == (1, False, 22)
    names = [(row.name, row.depth, row.section) for row in first.rows]
    assert names == [
        ("tank", 0, "data"),
        ("raidz2-0", 1, "data"),
        *[(disk, 2, "data") for disk in ("sda", "sdb", "sdc", "sdd", "sde")],
        ("mirror-1", 1, "special"),
        ("nvme0n1", 2, "special"),
        ("nvme1n1", 2, "special"),
        ("nvme2n1p1", 1, "logs"),
        ("nvme3n1", 1, "cache"),
    ]
    pool = second.row("tank")
    assert (pool.alloc, pool.free) == (round(1.2 * TIB), round(20.6 * TIB))
    assert (pool.read_ops, pool.write_ops) == (0.0, round(1.96 * KIB))
    assert (pool.read_bytes_per_s, pool.write_bytes_per_s) == (0.0, 382 * MIB)
    disk = second.row("sda")
    assert (disk.alloc, disk.free, disk.write_bytes_per_s) == (None, None, round(74.2 * MIB))
    assert first.row("nvme0n1").read_bytes_per_s == 64 * KIB
    with pytest.raises(KeyError):
        first.row("sdz")


def test_iostat_without_v_one_sample_per_interval():
    path = ZPOOL / "iostat_T_u_no_v_handmade.txt"
    samples = parse_zpool_iostat(path.read_text(), str(path))
    assert [s.timestamp for s in samples] == ["1745661600", "1745661601", "1745661602"]
    assert [len(s.rows) for s in samples] == [2, 2, 2]
    assert samples[2].row("backup").read_bytes_per_s == 50 * MIB
    assert samples[1].row("tank").write_ops == round(1.96 * KIB)


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("hello\n", 1, "header"),
        ("      capacity     operations     bandwidth\nnope\n", 2, "column line"),
        (
            "   capacity  operations  bandwidth\npool alloc free read write read write\n"
            "----\ntank 1T 2T 1 2 3M\n",
            4,
            "zpool iostat -v row",
        ),
        (
            "   capacity  operations  bandwidth\npool alloc free read write read write\n",
            1,
            "no rows",
        ),
        ("", None, "no zpool iostat block"),
    ],
)
def test_iostat_errors(text, line, fragment):
    with pytest.raises(ParseError, match=r"^iostat\.txt") as caught:
        parse_zpool_iostat(text, "iostat.txt")
    assert caught.value.line == line
    assert fragment in str(caught.value)


# ================================================================ arcstat


def test_arcstat_columns_and_scales():
    path = ZPOOL / "arcstat_handmade.txt"
    rows = parse_arcstat(path.read_text(), str(path))
    assert len(rows) == 3  # the repeated header is skipped
    first, second, third = rows
    assert first["time"] == "10:00:00"
    assert first["read"] == 1200.0  # counts scale by 1000 (arcstat prettynum)
    assert second["ddread"] == 30_000.0
    assert first["size"] == 28 * GIB and first["c"] == 31 * GIB  # sizes by 1024
    assert first["avail"] == 2.5 * GIB
    assert (second["ddh%"], second["ph%"]) == (97.0, 40.0)
    assert third["avail"] == -12345.0


def test_arcstat_duplicate_columns_get_suffixes():
    text = "    time  hits  c  size  c\n10:00:00  8.8K  31G  28G  30G\n"
    (row,) = parse_arcstat(text, "arc.txt")
    assert list(row) == ["time", "hits", "c", "size", "c_2"]
    assert (row["hits"], row["c"], row["c_2"]) == (8800.0, 31 * GIB, 30 * GIB)


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("10:00:00 1 2\n", 1, "header line"),
        ("time hits miss\n10:00:00 1\n", 2, "expected 3 arcstat values"),
        ("time hits miss\n10:00:00 1 lots\n", 2, "miss value 'lots'"),
        ("", None, "no arcstat header"),
    ],
)
def test_arcstat_errors(text, line, fragment):
    with pytest.raises(ParseError, match=r"^arc\.txt") as caught:
        parse_arcstat(text, "arc.txt")
    assert caught.value.line == line
    assert fragment in str(caught.value)


# ================================================================ zpool/arcstat: reference logs


def test_reference_iostat_logs_parse():
    paths = sorted(reference_logs().glob("*/*/zfs/zpool_iostat.log"))
    assert len(paths) == 23
    for path in paths:
        samples = parse_zpool_iostat(path.read_text(), str(path))
        pool = path.parts[-4]
        assert samples[0].since_import and not any(s.since_import for s in samples[1:])
        assert all(s.rows[0].name == pool and s.rows[0].depth == 0 for s in samples)
        sections = {row.section for row in samples[0].rows}
        assert sections == {"data"} | ({"logs"} if pool.endswith("_slog") else set()) | (
            {"special"} if "_special_" in pool else set()
        )
        disks = [row for row in samples[0].rows if row.depth == 2 and row.section == "data"]
        assert [row.name for row in disks] == ["sdd", "sde", "sdf", "sdg", "sdh"]
        assert all(row.alloc is None for row in disks)


def test_reference_iostat_disk_write_rate_during_async_seq_write():
    """README caveat 4: each HDD writes ≈ 165 MB/s on average while streaming (max ≈ 178)."""
    path = reference_logs() / "tank_raidz2_nospecial_slog/async_seq_write/zfs/zpool_iostat.log"
    samples = parse_zpool_iostat(path.read_text(), str(path))[1:]
    rates = [s.row("sdd").write_bytes_per_s for s in samples]
    busy = [rate for rate in rates if rate > 100 * MIB]
    assert len(busy) > 30
    assert 150e6 < sum(busy) / len(busy) < 180e6
    assert max(busy) / MIB == pytest.approx(178, abs=3)


def test_reference_arcstat_logs_parse():
    paths = sorted(reference_logs().glob("*/*/zfs/arcstat.log"))
    assert len(paths) == 23
    for path in paths:
        rows = parse_arcstat(path.read_text(), str(path))
        assert len(rows) > 10
        assert all(set(row) >= {"time", "hits", "hit%", "c", "c_2", "avail"} for row in rows)
        assert all(row["c"] == row["c_2"] for row in rows)
    mixed = parse_arcstat(
        (reference_logs() / "tank_raidz2_special_slog/mixed_rw/zfs/arcstat.log").read_text(), "a"
    )
    assert mixed[0]["c"] == 31 * GIB
