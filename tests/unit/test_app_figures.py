"""The app's figures (zsim/app/figures.py) and pins/report (zsim/app/pins.py), without
Streamlit: the fast path never runs the DES, every figure says what it assumes, no cell is
None/nan/"error", the busiest resource is named as a class."""

from __future__ import annotations

import math

import pytest

import zsim
from zsim.analytic.validity import OutOfRange
from zsim.app import design as model
from zsim.app import figures, pins
from zsim.app.des_store import DesStore
from zsim.units import format_binary_size
from zsim.zfs.arc import arc_data_bytes
from zsim.zfs.version import parse_zfs_version

BAD_CELLS = ("none", "nan", "<na>", "error")


def no_bad_cells(rows):
    for row in rows:
        for key, value in row.items():
            assert value is not None, (key, row)
            if isinstance(value, float):
                assert math.isfinite(value), (key, row)
            text = str(value).strip().lower()
            assert text not in BAD_CELLS and not text.startswith("error"), (key, text)


def randread_scenario(**changes):
    return model.Design(workloads=("4k-randread",), **changes).scenario("4k-randread")


def test_short_reason_drops_the_exception_frame_and_stays_short():
    long = (
        "outside the analytic engine's validity range: fio rw='randrw': mixed jobs — reads "
        "queued behind the txg's bursts of writes; use --engine des"
    )
    assert figures.short_reason(long) == "fio rw='randrw': mixed jobs"
    text = "sync writes (O_SYNC, fsync, sync=always) and the ZIL are modelled by the DES only"
    assert figures.short_reason(text) == text
    cut = figures.short_reason("word " * 40, limit=30)
    assert len(cut) <= 30 and cut.endswith("…")


def test_fast_answer_gives_the_rule_of_thumb_and_the_reason_where_the_analytic_engine_declines():
    sc = randread_scenario()
    calls = []

    def stand_in(scenario, engine):
        calls.append(engine)
        if engine == "analytic":
            raise OutOfRange(
                "outside the analytic engine's validity range: because; use --engine des"
            )
        return zsim.simulate(scenario, engine=engine)

    res, why = figures.fast_answer(sc, stand_in)
    assert calls == ["analytic", "baseline"]  # never the DES
    assert res.engine == "baseline"
    assert figures.short_reason(why) == "because"


def test_fast_answer_is_the_analytic_engines_figure_where_it_answers():
    sc = randread_scenario()
    res, why = figures.fast_answer(sc, zsim.simulate)
    assert why is None
    direct = zsim.simulate(sc, engine="analytic")
    assert res.engine == "analytic"
    assert res.read.iops == pytest.approx(direct.read.iops)


def test_busiest_names_a_class_not_a_device():
    eight = {f"disk:sd{c}": 0.97 for c in "abcdefgh"}
    assert figures.busiest({**eight, "cpu": 0.2}) == "all 8 disks ~97 % busy"
    some = {**{f"disk:sd{c}": 0.3 for c in "abcdef"}, "disk:sdg": 0.9, "disk:sdh": 0.88}
    assert figures.busiest(some) == "2 of 8 disks ~90 % busy"
    assert figures.busiest({"cpu": 1.0, "disk:sda": 0.5}) == "CPU ~100 % busy"
    assert "rule of thumb" in figures.busiest({})


def test_limit_words_explain_client_and_device_limits():
    util = {f"disk:sd{c}": 0.99 for c in "abcd"}
    words = figures.limit_words("client", util, "analytic")
    assert "queue depth" in words and "not a disk" in words
    assert figures.limit_words("disk:sda", util, "des") == "all 4 disks ~99 % busy"
    assert "write throttle" in figures.limit_words("txg", util, "des")
    rule = figures.limit_words("rule-of-thumb: 2 vdevs x 1 disk", {}, "baseline")
    assert rule == "rule of thumb: 2 vdevs x 1 disk"


def test_assumptions_come_from_the_scenario_and_the_result():
    sc = randread_scenario(ram="32GiB")
    res = zsim.simulate(sc, engine="analytic")
    a = figures.assumptions(sc, res)
    w = sc.workload
    assert a.jobs.startswith(f"{w.numjobs} jobs × iodepth {w.iodepth}")
    arc = arc_data_bytes(32 * 2**30, parse_zfs_version(sc.hardware.zfs_version))
    assert format_binary_size(arc) in a.working_set
    assert f"{format_binary_size(32 * 2**30)} RAM" in a.working_set
    assert a.split.startswith("100 % reads")
    hit = res.details["arc_hit_ratio"]
    assert a.arc_hits == f"{round(100 * hit)} % of reads hit the ARC"
    assert a.engine == "analytic engine"
    rule = zsim.simulate(sc, engine="baseline")
    b = figures.assumptions(sc, rule, "outside the analytic engine's validity range: x")
    assert "rule of thumb" in b.engine and "declines: x" in b.engine
    assert "ignores the ARC" in b.arc_hits


def test_rows_have_no_none_nan_or_error_cells():
    sc = randread_scenario()
    res = zsim.simulate(sc, engine="analytic")
    rule = zsim.simulate(sc, engine="baseline")
    answered = figures.figure_row("4k-randread", "4K random reads", sc, res, rule, None)
    declined = figures.figure_row("4k-randread", "4K random reads", sc, rule, rule, "why")
    no_bad_cells(figures.table_rows([answered, declined]))
    assert declined["rule_vs_zsim"] is None  # the rule is not compared with itself
    assert declined["latency_p99_text"].startswith("rule of thumb")


def summary_of(design, workloads=("4k-randread",)):
    rows = []
    for name in workloads:
        sc = design.scenario(name)
        res = zsim.simulate(sc, engine="analytic")
        rule = zsim.simulate(sc, engine="baseline")
        rows.append(figures.figure_row(name, name, sc, res, rule, None))
    report = zsim.capacity(design.layout, disk_size=design.disk_bytes())
    resilver = {
        "seconds": 7200.0,
        "lost": False,
        "loss_probability": 1e-6,
        "ure_probability": 2e-5,
        "mission_seconds": 5 * 365.25 * 86400,
        "afr": 0.01,
    }
    return pins.summary(design, report, rows, resilver, model.costs(design, report.usable_bytes))


def test_side_by_side_has_a_column_per_pinned_design_and_no_none():
    a = summary_of(model.Design(workloads=("4k-randread",)))
    b = summary_of(model.Design(layout="4x mirror 2", workloads=("4k-randread",), price_usd=250.0))
    table = pins.side_by_side([a, b])
    assert list(table[0]) == ["measure", f"A: {a['name']}", f"B: {b['name']}"]
    no_bad_cells(table)
    measures = {r["measure"]: r for r in table}
    assert "2.0 h" in measures["resilver time"][f"A: {a['name']}"]
    assert measures["cost of the disks"][f"A: {a['name']}"] == "no price entered"
    assert measures["cost of the disks"][f"B: {b['name']}"] == "$2,000"
    assert any(m.startswith(pins.URE_LABEL) for m in measures)


def test_report_has_every_section_the_version_and_the_scenario():
    d = model.Design(workloads=("4k-randread",))
    toml = d.scenario_toml("4k-randread")
    text = pins.report_markdown(summary_of(d), version=zsim.__version__, scenario_toml=toml)
    for heading in ("## Capacity", "## Performance", "## Resilver and risk", "## Cost",
                    "## Assumptions", "## Scenario"):  # fmt: skip
        assert heading in text
    assert f"zsim {zsim.__version__}" in text
    assert toml.strip() in text
    assert "None" not in text and "nan" not in text


def test_des_store_keeps_results_by_scenario_and_seed_and_drops_the_oldest():
    store = DesStore(capacity=2)
    store.put("a", 1, "ra")
    store.put("b", 1, "rb")
    assert store.get("a", 1) == "ra" and store.get("a", 2) is None
    store.put("c", 1, "rc")  # "b" is the least recently used
    assert store.get("b", 1) is None and store.get("a", 1) == "ra" and len(store) == 2


@pytest.mark.parametrize("layout", ["foo", "foo bar", "sda foo"])
def test_a_layout_without_a_vdev_type_is_refused(layout):
    with pytest.raises(zsim.ZsimError, match="neither a vdev type nor a disk name"):
        model.Design(disks=len(layout.split()), layout=layout).check()


@pytest.mark.parametrize("layout", ["sda sdb", "stripe 2", "nvme0n1 /dev/sdq"])
def test_single_disks_by_count_or_disk_name_are_accepted(layout):
    model.Design(disks=2, layout=layout).check()


def test_resilver_limits_say_which_side_of_the_rebuild_is_busy():
    util = {"disk:sda": 0.99, "disk:sdb": 0.4, "disk:sdc": 0.41}
    assert figures.resilver_limit_words("disk:sda", util, "sda") == (
        "1 of 3 disks ~99 % busy (the new disk, written)"
    )
    assert figures.resilver_limit_words("disk:sda", util, "sdb").endswith("(surviving disks, read)")
    assert "pacing" in figures.resilver_limit_words("scan", util, "sda")
    assert figures.resilver_limit_short("disk:sdb", "sda") == "surviving disks"
    assert figures.resilver_limit_short("scan", "sda") == "scan pacing"
