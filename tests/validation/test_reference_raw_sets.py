"""The published reference sets, read from their raw files with zsim's parsers.

The project ships only derived figures (``calibration/reference/``); these tests derive them
again from the raw files in the shared reference folder (read in place: their licences keep
them out of the project) and check the shipped figures are what zsim's own parsers and fits
give. Without the shared folder they skip, and under CI they fail (tests.conftest).
"""

from __future__ import annotations

import tomllib

import pytest

from tests.conftest import ROOT, shared_reference
from zsim.validation.raw_sets import (
    clemtibs_pool_rates,
    clemtibs_runs,
    fit_disk_write_rate,
    parse_tnbench,
)

MiB, GiB = 1 << 20, 1 << 30
REFERENCE = ROOT / "calibration" / "reference"


def shipped(name: str) -> dict:
    return tomllib.loads((REFERENCE / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def clemtibs_logs():
    return shared_reference("clemtibs-zfs-benchmark") / "zfs_benchmark_logs"


def test_clemtibs_fio_logs_reproduce_the_shipped_run_figures(clemtibs_logs):
    runs = clemtibs_runs(clemtibs_logs)
    assert len(runs) == 23
    checked = 0
    for run in shipped("clemtibs-zfs-benchmark.toml")["run"]:
        m = runs[(run["pool"], run["job"])]
        assert m.ok == run["valid"]
        assert (m.rw, m.numjobs) == (run["rw"], run["numjobs"])
        for direction in ("read", "write"):
            if direction not in run:
                continue
            want, got = run[direction], getattr(m, direction)
            assert got.bytes_per_s / MiB == pytest.approx(want["MiBps"], abs=0.051)
            assert got.iops == pytest.approx(want["iops"], abs=0.051)
            assert got.lat_mean_s * 1e3 == pytest.approx(want["lat_mean_ms"], abs=5.1e-4)
            if "clat_p99_ms" in want:
                assert got.clat_p99_s * 1e3 == pytest.approx(want["clat_p99_ms"], abs=5.1e-4)
            else:
                assert got.clat_p99_s is None
            assert got.runtime_s == pytest.approx(want["runtime_s"], abs=0.051)
            checked += 1
    assert checked >= 24


def test_clemtibs_iostat_reproduces_the_shipped_pool_rates_and_the_disk_rate_fit(clemtibs_logs):
    rates = []
    for want in shipped("clemtibs-zfs-benchmark.toml")["pool_disk_rates"]:
        phase = "read" if want["job"] == "large_read" else "write"
        path = clemtibs_logs / want["pool"] / want["job"] / "zfs" / "zpool_iostat.log"
        got = clemtibs_pool_rates(path, want["pool"], phase)
        assert got.samples == want["samples"]
        if phase == "read":
            assert got.read_bytes_per_s / MiB == pytest.approx(want["pool_read_MiBps"], abs=0.051)
            assert got.read_ops == pytest.approx(want["pool_read_ops"], abs=0.51)
        else:
            assert got.write_bytes_per_s / MiB == pytest.approx(want["pool_write_MiBps"], abs=0.051)
            per_disk = sum(got.disk_write) / len(got.disk_write) / MiB
            assert per_disk == pytest.approx(want["per_disk_write_MiBps_mean"], abs=0.051)
            assert max(got.disk_write) / MiB == pytest.approx(want["per_disk_write_MiBps_max"])
            rates.append(got)
    fit = fit_disk_write_rate(rates)
    want = shipped("clemtibs-zfs-benchmark-fit.toml")["disk_write_rate"]
    assert fit.value / MiB == pytest.approx(want["value_MiBps"], abs=0.006)
    assert fit.stderr / MiB == pytest.approx(want["stderr_MiBps"], abs=6e-4)
    assert fit.samples == want["samples"] == 680  # 68 seconds x 5 disks x 2 pools


def test_tnbench_json_reproduces_the_shipped_points():
    path = shared_reference("nickf1227-tn-bench") / "m50" / "tn_bench_results.json"
    points, measurements = parse_tnbench(path)
    want = {p["threads"]: p for p in shipped("tnbench-m50.toml")["point"]}
    assert [p.threads for p in points] == sorted(want)
    for p in points:
        w = want[p.threads]
        assert p.write_mib_s == w["dd_write_MiBps"] and p.read_mib_s == w["dd_read_MiBps"]
        assert (p.write_samples, p.read_samples) == (w["write_samples"], w["read_samples"])
        assert round(p.pool_write_bytes_per_s / MiB) == w["pool_write_MiBps"]
        assert round(p.pool_read_bytes_per_s / MiB) == w["pool_read_MiBps"]
    assert len(measurements) == 8
    write10 = next(m for m in measurements if m.name == "write-10T")
    assert (write10.tool, write10.numjobs, write10.bs) == ("dd", 10, MiB)
    assert write10.write.bytes_per_s / MiB == pytest.approx(2039.11)
    assert write10.write.io_bytes == 10 * 20 * GiB


def test_shipped_clemtibs_fit_rows_report_every_error():
    fit = shipped("clemtibs-zfs-benchmark-fit.toml")
    rows = fit["row"]
    assert {r["job"] for r in rows} >= {"async_seq_write", "large_read", "slog_punisher-slog"}
    for r in rows:
        for key in ("datasheet", "fitted", "rule"):
            expected = r[f"{key}_MiBps"] / r["measured_MiBps"] - 1
            assert r[f"{key}_error"] == pytest.approx(expected, rel=2e-3, abs=2e-3)
