"""Streamlit AppTest of the Design, Compare and Scaling pages: the default render, a changed
input giving what the library computes for the same scenario, bad input giving st.error and
no exception. (The Calibrate and Resilver pages have their own files.)"""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("streamlit", reason="the app's tests need streamlit (pip install -e '.[dev]')")

from streamlit.testing.v1 import AppTest

import zsim
from tests.conftest import ROOT
from zsim.app import design as model
from zsim.app import figures, scaling_model
from zsim.app.pages import widgets

IRONWOLF = zsim.load_profile("seagate-ironwolf-12tb")


#: workloads in the analytic engine's range: pages that need no DES run render in a second
FAST = "backup-1m-write,4k-randread"


def app(**query: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    return settle(at)


def settle(at: AppTest, timeout_s: float = 300.0) -> AppTest:
    """Rerun while the Design page's resilver runs in the background (a browser's page
    polls for it; AppTest does not run fragments on a timer)."""
    deadline = time.monotonic() + timeout_s
    while any(c.value.startswith(widgets.RESILVER_WAIT_TEXT) for c in at.caption):
        assert time.monotonic() < deadline, "the background resilver did not finish"
        time.sleep(0.3)
        at.run()
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def tb(layout: str) -> str:
    usable = zsim.capacity(layout, disk_size=IRONWOLF.capacity, ashift=12).usable_bytes
    return f"{usable / 1e12:,.2f} TB"


def no_des(monkeypatch) -> list[str]:
    """Make the discrete-event engine's entry point fail (and record the attempt): a page
    that starts it on a sidebar change shows an error, and the list says so."""
    import zsim.des.run

    attempts: list[str] = []

    def refuse(sc, *args, **kwargs):
        attempts.append(sc.workload.rw or "")
        raise AssertionError("the app ran the discrete-event engine on a sidebar change")

    monkeypatch.setattr(zsim.des.run, "simulate_des", refuse)
    return attempts


def fast(sc):
    """What the page shows for a scenario: the library's fast answer."""
    return figures.fast_answer(sc, zsim.simulate)


def bad_cell(value: str) -> bool:
    """A cell that shows nothing useful: None, nan, <NA> or an error instead of a reason."""
    v = value.strip().lower()
    return v in ("none", "nan", "<na>", "error") or v.startswith(("error", "internal error"))


def test_design_page_default_render_shows_the_librarys_figures(monkeypatch):
    attempts = no_des(monkeypatch)
    at = app()
    clean(at)
    assert attempts == []
    assert at.title[0].value == "Design a pool"
    m = metrics(at)
    assert m["Usable capacity (TB)"] == tb("raidz2 8")
    report = zsim.capacity("raidz2 8", disk_size=IRONWOLF.capacity)
    assert m["Usable capacity (TiB)"] == f"{report.usable_bytes / 2**40:,.2f} TiB"
    table = at.dataframe[0].value
    assert list(table["workload"]) == [model.PRESET_LABELS[w] for w in model.DEFAULT_WORKLOADS]
    for w in model.DEFAULT_WORKLOADS:
        sc = model.Design().scenario(w)
        res, declined = fast(sc)
        row = table[table["workload"] == model.PRESET_LABELS[w]].iloc[0]
        assert row["engine"] == figures.ENGINE_LABELS[res.engine]
        assert row["MB/s"] == round((res.read.bytes_per_s + res.write.bytes_per_s) / 1e6, 1)
        assert row["limited by"] == figures.assumptions(sc, res, declined).limit
        assert row["jobs × queue depth"].startswith(
            f"{sc.workload.numjobs} jobs × iodepth {sc.workload.iodepth}"
        )
        rule = zsim.simulate(sc, engine="baseline")
        assert row["rule of thumb MB/s"] == round(
            (rule.read.bytes_per_s + rule.write.bytes_per_s) / 1e6, 1
        )
        if declined:  # the rule of thumb, labelled, and the analytic engine's reason
            assert "rule of thumb" in row["engine"]
            assert any(
                figures.short_reason(declined, 400) in c.value and "rule of thumb" in c.value
                for c in at.caption
            )
    for frame in at.dataframe:  # no None/nan/error cell anywhere
        for value in frame.value.astype(str).to_numpy().ravel():
            assert not bad_cell(value), value
    assert m["Resilver time"].endswith(" h")
    # the URE figure is labelled as what it is, in the CLI's words
    assert "P(unrecoverable block)" in m
    assert not any("read error in rebuild" in k for k in m)
    assert m["Per usable TB"] == "—"  # no price given: no cost is guessed


def test_sidebar_changes_never_run_the_discrete_event_engine(monkeypatch):
    attempts = no_des(monkeypatch)
    at = app()
    clean(at)
    at.number_input(key="w_disks").set_value(24).run()
    at.text_input(key="w_layout").set_value("3x raidz2 8").run()
    clean(at)
    assert metrics(at)["Usable capacity (TB)"] == tb("3x raidz2 8")
    at.selectbox(key="w_disk").set_value("wd-red-plus-12tb").run()
    clean(at)
    at.multiselect(key="w_workloads").select("4k-randwrite").run()
    clean(at)
    at.switch_page("app_pages/compare.py").run()
    clean(at)
    at.switch_page("app_pages/scaling.py").run()
    clean(at)
    assert attempts == []
    # the busiest resource is named as a class, never as one device
    at.switch_page("app_pages/design.py").run()
    limits = " ".join(at.dataframe[0].value["limited by"])
    assert "disk:" not in limits and "sda" not in limits


def test_design_page_changed_layout_gives_the_librarys_numbers_and_the_url():
    at = app(wl=FAST)
    clean(at)
    assert metrics(at)["Usable capacity (TB)"] == tb("raidz2 8")
    at.text_input(key="w_layout").set_value("4x mirror 2").run()
    clean(at)
    assert metrics(at)["Usable capacity (TB)"] == tb("4x mirror 2")
    assert at.query_params["layout"] == ["4x mirror 2"] or at.query_params["layout"] == (
        "4x mirror 2"
    )
    sc = model.Design(layout="4x mirror 2").scenario("backup-1m-write")
    expect = zsim.simulate(sc, engine="analytic")
    table = at.dataframe[0].value
    row = table[table["workload"] == model.PRESET_LABELS["backup-1m-write"]].iloc[0]
    assert row["MB/s"] == round(expect.write.bytes_per_s / 1e6, 1)
    # a price gives the cost per usable TB
    at.number_input(key="w_price").set_value(250.0).run()
    clean(at)
    usable = zsim.capacity("4x mirror 2", disk_size=IRONWOLF.capacity).usable_bytes
    assert metrics(at)["Per usable TB"] == f"${8 * 250 / (usable / 1e12):,.0f}"


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ("raidz3 3", "raidz3"),
        ("raidz2 6", "uses 6 disks but 8 were chosen"),
        ("raidz9 8", ""),
        ("foo", "'foo' in the layout 'foo' is neither a vdev type nor a disk name"),
        ("raidz2 8 +", "stray '+'"),
    ],
)
def test_design_page_bad_layout_shows_an_error_and_no_exception(layout, message):
    at = app(wl=FAST)
    at.text_input(key="w_layout").set_value(layout).run()
    assert not at.exception
    assert at.error, "a bad layout must show st.error"
    assert message in " ".join(e.value for e in at.error)
    assert "Traceback" not in " ".join(e.value for e in at.error)


def test_a_shared_link_opens_its_design():
    at = app(layout="2x raidz2 4", price="300", wl=FAST)
    clean(at)
    assert metrics(at)["Usable capacity (TB)"] == tb("2x raidz2 4")
    assert metrics(at)["Disks"] == "$2,400"


def test_a_bad_link_parameter_is_a_warning_not_a_failure():
    at = app(n="eight", wl=FAST)
    assert not at.exception
    assert any("ignored ?n=eight" in w.value for w in at.warning)
    assert metrics(at)["Usable capacity (TB)"] == tb("raidz2 8")


def test_compare_page_lists_the_sweeps_layouts_and_changes_with_the_disks():
    at = app(wl=FAST)
    at.switch_page("app_pages/compare.py").run()
    clean(at)
    table = zsim.sweep(8, "seagate-ironwolf-12tb", ["4k-randread"], engine="baseline",
                       workers=1, progress=False)  # fmt: skip
    assert metrics(at)["Layouts compared"] == str(len(table.rows))
    shown = at.dataframe[0].value
    row = shown[shown["layout"] == "raidz2 8"].iloc[0]
    assert row["usable TB"] == round(
        zsim.capacity("raidz2 8", IRONWOLF.capacity).usable_bytes / 1e12, 2
    )
    assert "★" in set(shown["Pareto"])
    for value in shown.astype(str).to_numpy().ravel():  # a reason where no figure exists
        assert not bad_cell(value), value
    # 12 disks: more layouts, the library's count again
    at.number_input(key="w_disks").set_value(12)
    at.text_input(key="w_layout").set_value("2x raidz2 6").run()
    clean(at)
    table12 = zsim.sweep(12, "seagate-ironwolf-12tb", ["4k-randread"], engine="baseline",
                         workers=1, progress=False)  # fmt: skip
    assert metrics(at)["Layouts compared"] == str(len(table12.rows))


def test_scaling_page_shows_the_analytic_engines_figures():
    at = app(wl=FAST)
    at.switch_page("app_pages/scaling.py").run()
    clean(at)
    rows = scaling_model.scaling_rows("seagate-ironwolf-12tb", [4, 24],
                                      scaling_model.direct_simulate)  # fmt: skip
    wide = next(r for r in rows if r["workload"] == "4K random read"
                and r["family"] == "one wide raidz2" and r["disks"] == 24)  # fmt: skip
    assert metrics(at)["4K reads, 24 disks: one wide raidz2"] == f"{wide['iops']:,.0f} IOPS"
    # the teaching point, from the model: narrow vdevs scale, one wide raidz2 does not
    narrow = next(r for r in rows if r["workload"] == "4K random read"
                  and r["family"] == "raidz2 vdevs of 4" and r["disks"] == 24)  # fmt: skip
    assert narrow["iops"] > 3 * wide["iops"]
    assert any("data +" in m.value for m in at.markdown)


def test_scaling_page_with_a_bad_custom_disk_shows_an_error():
    at = app(wl=FAST)
    at.switch_page("app_pages/scaling.py").run()
    at.selectbox(key="w_disk").set_value("custom").run()
    at.text_input(key="w_cd_capacity").set_value("12XB").run()
    assert not at.exception
    assert at.error


def test_design_page_des_button_runs_the_des_and_shows_its_ci_and_latency_distribution():
    at = app(wl="4k-randread")
    clean(at)
    assert "Bandwidth" not in metrics(at)  # nothing runs before the button
    assert at.dataframe[0].value["engine"].iloc[0] == "analytic engine"
    at.button(key="w_des_run").click().run()
    clean(at)
    sc = model.Design(workloads=("4k-randread",)).scenario("4k-randread")
    expect = model.simulate_des(sc, seed=1)
    m = metrics(at)
    assert m["Bandwidth"] == f"{expect.read.bytes_per_s / 1e6:,.1f} MB/s"
    assert m["95 % CI (±)"] == f"{expect.ci_rel:.1%}"
    assert m["Limited by"] == expect.limit
    # the table above now shows the DES figure for this scenario and seed
    row = at.dataframe[0].value.iloc[0]
    assert row["engine"] == figures.ENGINE_LABELS["des"]
    assert row["MB/s"] == round(expect.read.bytes_per_s / 1e6, 1)
    # the latency distribution: a CDF of the DES's quantiles, in ms
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    cdf = [s for s in specs if s["encoding"]["x"]["field"] == "latency_ms"]
    assert len(cdf) == 1
    assert cdf[0]["encoding"]["x"]["title"] == "completion latency, ms"
    assert "read" in expect.details["latency_quantiles_s"]
    # another seed is another run, shown only after its button press
    at.number_input(key="w_des_seed").set_value(2).run()
    assert "Bandwidth" not in metrics(at)
    assert at.dataframe[0].value["engine"].iloc[0] == "analytic engine"
    # back to seed 1: kept by scenario and seed, shown without running again
    at.number_input(key="w_des_seed").set_value(1).run()
    assert metrics(at)["Bandwidth"] == f"{expect.read.bytes_per_s / 1e6:,.1f} MB/s"


def test_pinned_designs_are_side_by_side_and_the_report_is_offered():
    at = app(wl=FAST)
    clean(at)
    at.button(key="w_pin").click().run()
    at.text_input(key="w_layout").set_value("4x mirror 2").run()
    at.button(key="w_pin").click().run()
    clean(at)
    pinned = at.dataframe[-1].value
    names = [c for c in pinned.columns if c != "measure"]
    assert names == [
        "A: raidz2 8 of 8 × seagate-ironwolf-12tb",
        "B: 4x mirror 2 of 8 × seagate-ironwolf-12tb",
    ]
    usable = pinned[pinned["measure"] == "usable capacity"].iloc[0]
    assert usable[names[0]].startswith(tb("raidz2 8"))
    assert usable[names[1]].startswith(tb("4x mirror 2"))
    for value in pinned.astype(str).to_numpy().ravel():
        assert not bad_cell(value), value
    labels = [b.proto.label for b in at.get("download_button")]
    assert "One-page report (Markdown)" in labels
    at.button(key="w_pins_clear").click().run()
    assert not any("measure" in f.value.columns for f in at.dataframe)
