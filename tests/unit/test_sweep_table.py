"""The sweep table: points, capacity from zsim.capacity, prices, figures, files (zsim.sweep.table).

Every sweep here uses the rule-of-thumb engine (fast, deterministic) in this process
(``workers=1``).
"""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

import zsim
from zsim.sweep import plan as splan
from zsim.sweep import table as tbl
from zsim.sweep.layouts import enumerate_layouts
from zsim.sweep.point import point_seeds
from zsim.sweep.workloads import PRESETS, load_workloads_file, resolve_workloads

IRONWOLF = "seagate-ironwolf-12tb"
EVO = "samsung-870-evo-500gb"  # the one catalog profile with a price_usd (80)
FAST = {"engine": "baseline", "workers": 1}


@pytest.fixture(scope="module")
def table12() -> tbl.SweepTable:
    return tbl.sweep(12, IRONWOLF, **FAST)


def test_one_row_per_layout_with_all_columns(table12):
    layouts = enumerate_layouts(12)
    assert [r["layout"] for r in table12.rows] == layouts
    assert table12.workloads == list(PRESETS)
    cols = table12.columns
    for col in ("layout", "disk", "disks", "vdevs", "spares", "raw_bytes", "usable_bytes"):
        assert col in cols
    for col in ("usable_tb", "usable_tib", "efficiency", "fault_tolerance", "engine"):
        assert col in cols
    for col in ("price_usd", "price_source", "cost_usd", "usd_per_usable_tb"):
        assert col in cols
    for w in PRESETS:
        for metric in splan.WORKLOAD_METRICS:
            assert f"{w}.{metric}" in cols
    assert all(set(cols) <= set(r) for r in table12.rows)


def test_capacity_comes_from_zsim_capacity(table12):
    size = zsim.load_profile(IRONWOLF).size_bytes
    for row in table12.rows:
        report = zsim.capacity(row["layout"], size, ashift=12)
        assert row["usable_bytes"] == report.usable_bytes
        assert row["raw_bytes"] == 12 * size == report.raw_bytes + report.support_raw_bytes
        assert row["usable_tb"] == pytest.approx(report.usable_bytes / 1e12)
        assert row["usable_tib"] == pytest.approx(report.usable_bytes / 2**40)
        assert row["efficiency"] == pytest.approx(report.usable_bytes / row["raw_bytes"])
        assert row["fault_tolerance"] == report.fault_tolerance
        assert row["disks"] == 12 and row["disk"] == IRONWOLF
    by_layout = {r["layout"]: r for r in table12.rows}
    assert by_layout["2x raidz2 6"]["vdevs"] == 2 and by_layout["2x raidz2 6"]["spares"] == 0
    assert by_layout["raidz2 10 spare 2"]["spares"] == 2
    assert by_layout["draid2:8d:1s:12c"]["spares"] == 1
    assert by_layout["stripe 12"]["fault_tolerance"] == 0
    assert by_layout["4x mirror 3"]["fault_tolerance"] == 2
    assert by_layout["raidz3 12"]["fault_tolerance"] == 3


def test_figures_seeds_and_no_placeholders(table12):
    n = len(table12.rows) * len(table12.workloads)
    seeds = point_seeds(1, n)
    k = 0
    for row in table12.rows:
        assert row["engine"] == "baseline"
        for w in table12.workloads:
            assert row[f"{w}.error"] is None
            assert row[f"{w}.iops"] > 0 and row[f"{w}.bytes_per_s"] > 0
            assert row[f"{w}.limit"]
            assert row[f"{w}.seed"] == seeds[k]
            k += 1
            # the rule of thumb gives no latency: empty, never a made-up 0
            assert row[f"{w}.latency_mean_s"] is None and row[f"{w}.latency_p99_s"] is None
            assert row[f"{w}.usd_per_iops"] is None
        assert row["price_usd"] is None and row["price_source"] is None
        assert row["cost_usd"] is None and row["usd_per_usable_tb"] is None


def test_bandwidth_is_read_plus_write(table12):
    row = table12.rows[1]  # 6x mirror 2
    bs = 16 * 1024
    assert row["vm-16k.bytes_per_s"] == pytest.approx(row["vm-16k.iops"] * bs)


def test_prices_from_the_command_line_and_the_catalog():
    t = tbl.sweep(4, [IRONWOLF, EVO], ["4k-randread"], prices=[f"{IRONWOLF}=$250"], **FAST)
    for row in t.rows:
        n_iops = row["4k-randread.iops"]
        if row["disk"] == IRONWOLF:
            assert row["price_usd"] == 250 and row["price_source"] == "command line"
        else:
            assert row["price_usd"] == 80 and row["price_source"] == "catalog"
        assert row["cost_usd"] == row["price_usd"] * 4
        assert row["usd_per_usable_tb"] == pytest.approx(row["cost_usd"] / row["usable_tb"])
        assert row["4k-randread.usd_per_iops"] == pytest.approx(row["cost_usd"] / n_iops)
    assert [r["disk"] for r in t.rows] == [IRONWOLF] * 6 + [EVO] * 6
    over = tbl.sweep(4, EVO, ["4k-randread"], prices={EVO: 99.5}, **FAST)
    assert {r["price_source"] for r in over.rows} == {"command line"}
    assert {r["cost_usd"] for r in over.rows} == {398.0}


@pytest.mark.parametrize(
    ("prices", "fragment"),
    [
        (["nope=10"], "not a swept disk"),
        ([f"{IRONWOLF}=abc"], "not a number"),
        ([f"{IRONWOLF}=-5"], "more than 0"),
        ([f"{IRONWOLF}"], "MODEL=USD"),
    ],
)
def test_bad_prices(prices, fragment):
    with pytest.raises(zsim.ZsimError, match=fragment):
        splan.plan_sweep(4, IRONWOLF, prices=prices)


def test_several_counts_and_explicit_layouts():
    t = tbl.sweep("4,6", IRONWOLF, "media-1m-read", **FAST)
    assert [r["disks"] for r in t.rows] == [4] * 6 + [6] * len(enumerate_layouts(6))
    assert t.inputs["disks"] == [4, 6]
    exp = tbl.sweep(None, IRONWOLF, "4k-randread", layouts="raidz2 6; 3x mirror 2 log 1", **FAST)
    assert [(r["layout"], r["disks"]) for r in exp.rows] == [
        ("raidz2 6", 6),
        ("3x mirror 2 log 1", 7),
    ]
    assert exp.inputs["layouts"] == ["raidz2 6", "3x mirror 2 log 1"]
    with pytest.raises(zsim.ZsimError, match="uses 6 disks but --disks says 8"):
        splan.plan_sweep(8, IRONWOLF, layouts=["raidz2 6"])


def test_workload_recordsize_and_overrides_reach_the_points():
    plan = splan.plan_sweep(6, IRONWOLF, ["vm-16k", "media-1m-read"])
    points = tbl.build_points(plan)
    by = {(p.labels["layout"], p.labels["workload"]): p for p in points}
    assert by[("raidz2 6", "vm-16k")].scenario["pool"]["recordsize"] == "16KiB"
    assert by[("raidz2 6", "media-1m-read")].scenario["pool"]["recordsize"] == "1MiB"
    assert by[("raidz2 6", "vm-16k")].scenario["pool"]["layout"] == "raidz2 6"
    assert by[("raidz2 6", "vm-16k")].scenario["hardware"]["disk"]["kind"] == "hdd"
    plan = splan.plan_sweep(
        6,
        IRONWOLF,
        ["vm-16k", "media-1m-read"],
        recordsize="64K",
        ashift=13,
        overrides=["hardware.hba=lsi-9300-8i"],
    )
    for p in tbl.build_points(plan):
        assert p.scenario["pool"]["recordsize"] == "64KiB"
        assert p.scenario["pool"]["ashift"] == 13
        assert p.scenario["hardware"]["hba"] == "lsi-9300-8i"
    assert plan.inputs["ashift"] == 13 and plan.inputs["recordsize"] == 65536


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"overrides": ["pool.layout=mirror 2"]}, "--layouts"),
        ({"overrides": ["hardware.disk=x"]}, "--disk"),
        ({"overrides": ["pool.recordsise=1M"]}, "did you mean 'recordsize'"),
        ({"overrides": ["pool.ashift=20"]}, "ashift"),
        ({"engine": "fast"}, "unknown engine"),
        ({"disk": "nope"}, "no hardware profile"),
        ({"disk": "lsi-9300-8i"}, "not a disk"),
        ({"disk": None}, "--disk"),
        ({"disks": 0}, "--disks"),
        ({"disks": "x"}, "--disks"),
        ({"disks": None}, "--disks N"),
        ({"workloads": "vm16k"}, "did you mean 'vm-16k'"),
    ],
)
def test_bad_input_names_the_fix(kwargs, fragment):
    args = {"disks": 6, "disk": IRONWOLF, **kwargs}
    with pytest.raises(zsim.ZsimError, match=fragment):
        splan.plan_sweep(args.pop("disks"), args.pop("disk"), **args)


def test_old_openzfs_leaves_out_draid():
    plan = splan.plan_sweep(24, IRONWOLF, "4k-randread", overrides=["hardware.zfs_version=2.0"])
    assert not any(r["layout"].startswith("draid") for r in plan.rows)
    assert any("predates dRAID" in n for n in plan.notes)


def test_seeds_depend_on_the_grid_not_the_subset():
    plan = splan.plan_sweep(8, IRONWOLF, ["4k-randread", "media-1m-read"], seed=7)
    full = {(p.labels["layout"], p.labels["workload"]): p.seed for p in tbl.build_points(plan)}
    subset = tbl.build_points(plan, plan.rows[3:5])
    assert [p.index for p in subset] == [0, 1, 2, 3]
    for p in subset:
        assert p.seed == full[(p.labels["layout"], p.labels["workload"])]
    assert len(set(full.values())) == len(full)


def test_figures_of_a_mixed_workload():
    result = {
        "read_iops": 300.0,
        "write_iops": 100.0,
        "read_bytes_per_s": 300.0 * 16384,
        "write_bytes_per_s": 100.0 * 16384,
        "read_latency_mean_s": 0.010,
        "write_latency_mean_s": 0.002,
        "read_latency_p99_s": 0.05,
        "write_latency_p99_s": 0.08,
        "limit": "disk:sda",
        "ci_rel": 0.03,
        "error": None,
    }
    f = tbl._figures(result, 1000.0)
    assert f["iops"] == 400 and f["bytes_per_s"] == 400 * 16384
    assert f["latency_mean_s"] == pytest.approx((300 * 0.010 + 100 * 0.002) / 400)
    assert f["latency_p99_s"] == 0.08
    assert f["usd_per_iops"] == pytest.approx(2.5)
    failed = {"error": "outside range", "engine": "analytic", "declined": True}
    assert tbl._figures(failed, 10.0) == failed


def test_every_point_failing_alike_is_an_error(monkeypatch):
    import sys

    def broken(*args, **kwargs):
        raise zsim.ZsimError("this engine is not built yet")

    monkeypatch.setattr(sys.modules["zsim.simulate"], "simulate", broken)
    with pytest.raises(zsim.ZsimError, match="every point of the sweep failed: this engine"):
        tbl.sweep(4, IRONWOLF, "4k-randread", **FAST)


def test_every_point_declined_names_the_auto_engine(monkeypatch):
    import sys

    from zsim.analytic.validity import OutOfRange

    def declines(*args, **kwargs):
        raise OutOfRange("outside the analytic engine's validity range: x; use --engine des")

    monkeypatch.setattr(sys.modules["zsim.simulate"], "simulate", declines)
    with pytest.raises(zsim.ZsimError, match="--engine auto answers these points"):
        tbl.sweep(4, IRONWOLF, "4k-randread", engine="analytic", workers=1)


def test_files_are_written_whole(tmp_path):
    csv_path, json_path = tmp_path / "s.csv", tmp_path / "s.json"
    t = tbl.sweep(4, IRONWOLF, ["4k-randread", "media-1m-read"], out=csv_path, **FAST)
    t.write(json_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv", "s.json"], "no temp files"
    rows = list(csv.DictReader(io.StringIO(csv_path.read_text())))
    assert list(rows[0]) == t.columns
    assert [r["layout"] for r in rows] == [r["layout"] for r in t.rows]
    assert rows[0]["price_usd"] == "" and rows[0]["4k-randread.latency_mean_s"] == ""
    assert int(rows[0]["usable_bytes"]) == t.rows[0]["usable_bytes"]
    doc = json.loads(json_path.read_text())
    assert doc["zsim_version"] == zsim.__version__
    assert doc["inputs"]["engine"] == "baseline" and doc["inputs"]["disks"] == [4]
    assert list(doc["inputs"]["workloads"]) == ["4k-randread", "media-1m-read"]
    assert doc["columns"] == t.columns and len(doc["rows"]) == len(t.rows)
    assert doc == json.loads(json.dumps(t.to_dict()))
    with pytest.raises(zsim.ZsimError, match=r"\.csv or \.json"):
        tbl.sweep(4, IRONWOLF, out=tmp_path / "s.txt", **FAST)


def test_text_table_shows_units(table12):
    text = table12.text()
    assert "usable TB" in text and "TiB" in text
    assert "media-1m-read MB/s" in text and "4k-randread IOPS" in text
    assert "TB = 10^12 B, TiB = 2^40 B" in text
    assert "2x raidz2 6" in text


def test_zsim_sweep_is_the_table_modules_function():
    t = zsim.sweep(4, IRONWOLF, "4k-randread", **FAST)
    assert isinstance(t, tbl.SweepTable)
    assert zsim.sweep is tbl.sweep


def test_local_processes():
    t = tbl.sweep(4, IRONWOLF, "4k-randread", engine="baseline", workers=2)
    assert t.rows == tbl.sweep(4, IRONWOLF, "4k-randread", **FAST).rows


def test_results_file_resumes(tmp_path):
    path = tmp_path / "r.jsonl"
    first = tbl.sweep(4, IRONWOLF, "4k-randread", results=path, **FAST)
    lines = path.read_text().splitlines()
    assert len(lines) == len(first.rows)
    again = tbl.sweep(4, IRONWOLF, "4k-randread", results=path, **FAST)
    assert again.rows == first.rows
    assert path.read_text().splitlines() == lines, "nothing was run again"


def test_workloads_file(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text(
        '[workload.vm-32k]\ndescription = "VMs on 32K zvols"\nrecordsize = "32K"\n'
        'tool = "fio"\nrw = "randread"\nbs = "32K"\nnumjobs = 4\niodepth = 16\n'
    )
    loaded = load_workloads_file(path)
    assert list(loaded) == ["vm-32k"] and loaded["vm-32k"].recordsize == "32K"
    assert [w.name for w in resolve_workloads(None, path)] == ["vm-32k"]
    both = resolve_workloads(["vm-32k", "4k-randread"], path)
    assert [w.name for w in both] == ["vm-32k", "4k-randread"]
    plan = splan.plan_sweep(4, IRONWOLF, workloads_file=path)
    assert tbl.build_points(plan)[0].scenario["pool"]["recordsize"] == "32KiB"
    assert math.isclose(
        tbl.sweep(4, IRONWOLF, workloads_file=path, **FAST).rows[0]["vm-32k.bytes_per_s"],
        tbl.sweep(4, IRONWOLF, workloads_file=path, **FAST).rows[0]["vm-32k.iops"] * 32768,
    )


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('[workload.x]\ntool = "fio"\nrw = "randread"\nbs = "4K"\nnumjob = 4\n', "numjobs"),
        ('[workload.x]\ntool = "fio"\nrw = "randread"\n', "bs"),
        ("[other]\na = 1\n", r"only \[workload\.NAME\]"),
        ('[workload."a.b"]\ntool = "fio"\nrw = "read"\nbs = "1M"\n', "letters, digits"),
        ("[workload.x\n", "not valid TOML"),
    ],
)
def test_bad_workloads_file(tmp_path, text, fragment):
    path = tmp_path / "w.toml"
    path.write_text(text)
    with pytest.raises(zsim.ZsimError, match=fragment):
        load_workloads_file(path)
    with pytest.raises(zsim.ZsimError, match="does not exist"):
        load_workloads_file(tmp_path / "missing.toml")


def test_presets_are_valid_scenario_workloads():
    assert set(PRESETS) >= {
        "vm-16k",
        "db-8k-sync",
        "media-1m-read",
        "backup-1m-write",
        "4k-randread",
        "4k-randwrite",
    }
    specs = resolve_workloads(None)
    assert [w.name for w in specs] == list(PRESETS)
    assert all(w.description for w in specs)
    by = {w.name: w for w in specs}
    assert by["vm-16k"].workload["rw"] == "randrw" and by["vm-16k"].workload["rwmixread"] == 70
    assert by["db-8k-sync"].workload["sync"] is True and by["db-8k-sync"].block_size == 8192
    assert by["media-1m-read"].streaming and not by["4k-randwrite"].streaming


def test_declined_cells_say_des_only_and_auto_marks_the_des_answers():
    """An analytic sweep shows "DES only" where the validity range leaves a point out, with
    the reason and the way to an answer in the footer; an ``auto`` sweep answers those with
    the DES and marks them."""
    # logbias=throughput: the log records point at records written at once (WR_INDIRECT),
    # which the HDD log tables do not run
    hdd_sync = ["--disks", "6", "--disk", "seagate-ironwolf-12tb", "--layouts", "raidz2 6",
                "--set", "pool.logbias=throughput"]  # fmt: skip
    analytic = _text_of([*hdd_sync, "--workload", "db-8k-sync"])
    assert "DES only" in analytic and " error" not in analytic
    [line] = [x for x in analytic.splitlines() if x.startswith("DES only:")]
    assert "db-8k-sync on 1 of 1 rows" in line and "HDD data vdevs without a log" in line
    assert line.endswith("--engine auto answers these with bounded DES runs")
    auto = _text_of([*hdd_sync, "--workload", "db-8k-sync", "--engine", "auto"])
    row = next(x for x in auto.splitlines() if x.startswith("raidz2 6"))
    sync_cell, read_cell = row.split()[-2:]
    assert sync_cell.endswith("*") and not read_cell.endswith("*")  # 4k-randread: analytic
    assert "DES only" not in auto
    assert any(x.startswith("*: from the discrete-event engine") for x in auto.splitlines())


def _text_of(args: list[str]) -> str:
    parsed = dict(zip(args[::2], args[1::2], strict=True))
    table = tbl.sweep(
        disk=parsed["--disk"],
        layouts=[parsed["--layouts"]],
        workloads=[parsed["--workload"], "4k-randread"],
        engine=parsed.get("--engine", "analytic"),
        overrides=[parsed["--set"]] if "--set" in parsed else (),
        workers=1,
    )
    return table.text()
