"""The "Grow this pool" page in Streamlit's AppTest: the figures it shows are the library's.

The page is opened the way a browser opening ``/grow`` does, by its script hash
(``calc_hash(url_path)``; ``tests/e2e/test_app_resilver_page.py`` says why). The reflow runs
in the page's worker process; AppTest does not run the polling fragment on a timer, so
:func:`settle` reruns the page until the "computing…" line is gone.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.conftest import ROOT

pytest.importorskip("streamlit", reason="the app; pip install 'zsim[app]'")
pytest.importorskip("altair", reason="the app's charts; pip install 'zsim[app]'")

from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

import zsim
from zsim.app import grow_view as gv
from zsim.app import ui
from zsim.app.design import Design
from zsim.app.pages import grow_page
from zsim.units import TB, TiB

GROW_URL_PATH = "grow"  # app.py: st.Page("app_pages/grow.py", url_path="grow")
#: workloads the analytic engine answers, so the page renders quickly
FAST = "backup-1m-write,4k-randread"


def grow_app(query: dict[str, str] | None = None) -> AppTest:
    """An AppTest of app.py opened on the Grow page (with a shared link's ``query``)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at._page_hash = calc_hash(GROW_URL_PATH)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    settle(at)
    assert [t.value for t in at.title] == ["Grow this pool"]
    return at


def settle(at: AppTest, timeout_s: float = 300.0) -> AppTest:
    deadline = time.monotonic() + timeout_s
    while any(c.value.startswith(grow_page.GROW_WAIT_TEXT) for c in at.caption):
        assert time.monotonic() < deadline, "the background reflow did not finish"
        time.sleep(0.3)
        at.run()
    return at


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def metric(at: AppTest, label: str) -> str:
    found = [m.value for m in at.metric if m.label == label]
    assert found, f"no metric {label!r}; metrics: {[m.label for m in at.metric]}"
    return str(found[0])


def table(at: AppTest, index: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = at.dataframe[index].value.to_dict("records")
    return rows


def library(design: Design, inputs: gv.GrowInputs, reflow: bool) -> Any:
    """``zsim.grow`` of the page's scenario, called directly."""
    scenario = ui.scenario_from_toml(gv.grow_toml(design, inputs))
    kw: dict[str, Any] = (
        {"attach": inputs.attach, "vdev": inputs.vdev}
        if inputs.kind == "attach"
        else {"add_vdev": inputs.add_vdev}
    )
    return zsim.grow(scenario, reflow=reflow, seed=1, **kw)


def both(b: int) -> str:
    return f"{b / TB:,.2f} TB ({b / TiB:,.2f} TiB)"


def test_default_page_shows_the_librarys_grow() -> None:
    at = grow_app({"wl": FAST})
    assert_clean(at)
    design = Design(workloads=tuple(FAST.split(",")))
    inputs = gv.GrowInputs()
    res = library(design, inputs, reflow=True)
    # the space table: the pool now, and after attaching one disk; TB and TiB both stated
    space = table(at, 0)
    assert [r["pool"] for r in space] == ["now: raidz2 8", "+ sdi (9 wide)"]
    after = res.space_after
    assert space[1]["zfs list USED+AVAIL"] == both(after["usable_bytes"])
    assert space[1]["after zfs rewrite"] == both(after["usable_after_rewrite_bytes"])
    assert space[1]["zpool list SIZE"] == both(after["zpool_size_bytes"])
    # the gap is real: after the attach the pool holds more than zfs list reports
    assert after["usable_after_rewrite_bytes"] > after["usable_bytes"]
    assert any("more than reported" in m.value for m in at.markdown)
    assert any("zpool attach tank raidz2-0 sdi" in c.value for c in at.code)
    # the reflow from the worker: the library's time, and its limit in words
    assert metric(at, "Reflow time") == ui.fmt_time(res.seconds)
    assert any("limited by" in m.value for m in at.markdown)
    charts = at.get("vega_lite_chart")
    assert len(charts) == 2  # the space bars and the reflow curve
    # performance: each workload's row, no empty / None cell
    perf = table(at, 1)
    assert len(perf) == 2
    for row in perf:
        for value in row.values():
            assert value not in (None, "", "None", "nan")


def test_attaching_more_disks_gives_one_bar_group_per_step() -> None:
    at = grow_app({"wl": FAST, "g_n": "3", "g_fill": "80"})
    assert_clean(at)
    design = Design(workloads=tuple(FAST.split(",")))
    inputs = gv.GrowInputs(attach=3, fill=0.8)
    res = library(design, inputs, reflow=False)
    space = table(at, 0)
    assert [r["pool"] for r in space][1:] == [
        "+ sdi (9 wide)",
        "+ sdj (10 wide)",
        "+ sdk (11 wide)",
    ]
    last = res.space_after
    assert space[-1]["real, for new data"] == both(last["usable_new_data_bytes"])
    # pool 80 % full at each attach: the old blocks keep their width, so new data fits less
    # than after a rewrite
    assert last["usable_new_data_bytes"] < last["usable_after_rewrite_bytes"]
    assert sum("zpool attach tank raidz2-0" in line for line in at.code[0].value.splitlines()) == 3
    assert len(table(at, 1)) == 2
    assert at.query_params["g_n"] == "3"  # the link reopens the same grow


def test_adding_a_vdev_shows_the_spread_and_no_reflow() -> None:
    at = grow_app({"wl": FAST, "g_how": "add-vdev", "g_add": "raidz2 8"})
    assert_clean(at)
    assert not [m for m in at.metric if m.label == "Reflow time"]
    assert any("zpool add tank raidz2" in c.value for c in at.code)
    space = table(at, 0)
    design = Design(workloads=tuple(FAST.split(",")))
    res = library(design, gv.GrowInputs(kind="add-vdev", add_vdev="raidz2 8"), reflow=False)
    assert space[1]["zfs list USED+AVAIL"] == both(res.space_after["usable_bytes"])
    spread = table(at, 2)  # the allocator's spread over the old and the new vdev
    assert [r["share of new writes"] for r in spread] == [
        f"{v['share_by_free_space']:.0%}" for v in res.performance["spread"]["vdevs"]
    ]
    # how much rewriting evens the vdevs out, from the library's figure for the page's first
    # workload (1 MiB writes: the write rate gives the hours)
    first = ui.scenario_from_toml(
        gv.grow_toml(design, gv.GrowInputs(kind="add-vdev", add_vdev="raidz2 8"), "backup-1m-write")
    )
    evening = gv.evening_text(zsim.grow(first, add_vdev="raidz2 8", reflow=False, seed=1))
    assert evening is not None and "Evening out" in evening
    assert any(m.value == evening for m in at.markdown)


def test_a_sidebar_change_does_not_wait_for_the_reflow() -> None:
    at = grow_app({"wl": FAST})
    at.text_input(key="w_layout").set_value("raidz1 8").run()
    # the space of the new design at once, its reflow still computing in the worker
    assert_clean(at)
    assert [r["pool"] for r in table(at, 0)] == ["now: raidz1 8", "+ sdi (9 wide)"]
    assert any(c.value.startswith(grow_page.GROW_WAIT_TEXT) for c in at.caption)
    assert not [m for m in at.metric if m.label == "Reflow time"]
    settle(at)
    assert_clean(at)
    design = Design(layout="raidz1 8", workloads=tuple(FAST.split(",")))
    res = library(design, gv.GrowInputs(), reflow=True)
    assert metric(at, "Reflow time") == ui.fmt_time(res.seconds)


def test_a_changed_fill_changes_the_real_space() -> None:
    at = grow_app({"wl": FAST})
    at.slider(key="g_fill").set_value(90).run()
    settle(at)
    assert_clean(at)
    design = Design(workloads=tuple(FAST.split(",")))
    res = library(design, gv.GrowInputs(fill=0.9), reflow=False)
    row = table(at, 0)[1]
    assert row["real, for new data"] == both(res.space_after["usable_new_data_bytes"])
    assert at.query_params["g_fill"] == "90"


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ({"layout": "4x mirror 2"}, "adds a copy"),
        ({"layout": "draid2:4d:1s:8c"}, "cannot expand a dRAID"),
        ({"g_n": "250"}, "more than a raidz vdev can have"),
        ({"zfs": "2.2"}, "needs OpenZFS 2.3"),
        ({"g_how": "add-vdev", "g_add": "raidz2 8 +"}, ""),
    ],
)
def test_bad_input_is_one_error_not_a_traceback(query: dict[str, str], words: str) -> None:
    at = grow_app({"wl": FAST, **query})
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1, [e.value for e in at.error]
    assert at.error[0].value.startswith("grow: ")
    assert words in at.error[0].value
    assert "Traceback" not in at.error[0].value
    assert "--" not in at.error[0].value  # the page's controls, not the command line's flags
