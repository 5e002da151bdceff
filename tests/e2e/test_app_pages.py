"""Streamlit AppTest of the Design, Compare and Scaling pages: the default render, a changed
input giving what the library computes for the same scenario, bad input giving st.error and
no exception. (The Calibrate and Resilver pages have their own files.)"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("streamlit", reason="the app's tests need streamlit (pip install -e '.[dev]')")

from streamlit.testing.v1 import AppTest

import zsim
from tests.conftest import ROOT
from zsim.app import design as model
from zsim.app import scaling_model

IRONWOLF = zsim.load_profile("seagate-ironwolf-12tb")


#: workloads in the analytic engine's range: pages that need no DES run render in a second
FAST = "backup-1m-write,4k-randread"


def app(**query: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    for key, value in query.items():
        at.query_params[key] = value
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


def test_design_page_default_render_shows_the_librarys_figures():
    at = app()
    clean(at)
    assert at.title[0].value == "Design a pool"
    m = metrics(at)
    assert m["Usable capacity (TB)"] == tb("raidz2 8")
    report = zsim.capacity("raidz2 8", disk_size=IRONWOLF.capacity)
    assert m["Usable capacity (TiB)"] == f"{report.usable_bytes / 2**40:,.2f} TiB"
    table = at.dataframe[0].value
    assert list(table["workload"]) == [model.PRESET_LABELS[w] for w in model.DEFAULT_WORKLOADS]
    # the backup workload is in the analytic engine's range: the page shows its figure
    sc = model.Design().scenario("backup-1m-write")
    expect = zsim.simulate(sc, engine="analytic")
    row = table[table["workload"] == model.PRESET_LABELS["backup-1m-write"]].iloc[0]
    assert row["engine"] == "analytic"
    assert row["MB/s"] == round(expect.write.bytes_per_s / 1e6, 1)
    assert row["limited by"] == expect.limit
    rule = zsim.simulate(sc, engine="baseline")
    assert row["rule of thumb MB/s"] == round(rule.write.bytes_per_s / 1e6, 1)
    # outside its range the page names the DES and says why
    media = table[table["workload"] == model.PRESET_LABELS["media-1m-read"]].iloc[0]
    assert media["engine"] == "des"
    assert any("discrete-event engine" in c.value for c in at.caption)
    assert m["Resilver time"].endswith(" h")
    assert m["Per usable TB"] == "—"  # no price given: no cost is guessed


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
    [("raidz3 3", "raidz3"), ("raidz2 6", "uses 6 disks but 8 were chosen"), ("raidz9 8", "")],
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
    at = app(wl="media-1m-read")
    clean(at)
    assert "Bandwidth" not in metrics(at)  # nothing runs before the button
    at.button(key="w_des_run").click().run()
    clean(at)
    sc = model.Design(workloads=("media-1m-read",)).scenario("media-1m-read")
    expect = model.simulate_des(sc, seed=1)
    m = metrics(at)
    assert m["Bandwidth"] == f"{expect.read.bytes_per_s / 1e6:,.1f} MB/s"
    assert m["95 % CI (±)"] == f"{expect.ci_rel:.1%}"
    assert m["Limited by"] == expect.limit
    # the latency distribution: a CDF of the DES's quantiles, in ms
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    cdf = [s for s in specs if s["encoding"]["x"]["field"] == "latency_ms"]
    assert len(cdf) == 1
    assert cdf[0]["encoding"]["x"]["title"] == "completion latency, ms"
    assert "read" in expect.details["latency_quantiles_s"]
    # another seed is another run, shown only after its button press
    at.number_input(key="w_des_seed").set_value(2).run()
    assert "Bandwidth" not in metrics(at)
