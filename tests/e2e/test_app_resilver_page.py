"""The Resilver page in Streamlit's AppTest: the figures it shows are the library's.

``app.py`` builds its pages with ``st.navigation`` from functions (``st.Page(render,
url_path="resilver")``). ``AppTest.switch_page()`` (Streamlit 1.67) only finds *file* pages:
it first checks that ``page_path`` is a file next to ``app.py``, and a callable page has none
(its registered script path, ``app_pages/resilver.py``, does not exist), so it raises
ValueError. The tests therefore ask for the page the way a browser opening ``/resilver``
does: by the page's script hash, which ``st.Page`` computes as ``calc_hash(url_path)``
(set on AppTest's ``_page_hash``, what ``switch_page`` sets). This also skips rendering the
"Design a pool" page first (~45 s of simulations). Each test checks the title, so a change in
Streamlit's page hashing fails loudly instead of testing another page.

The resilver runs are cached per process by ``st.cache_data``; run together with
``tests/unit/test_app_resilver.py`` the run under load (~40 s) is shared.
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
from zsim.app import figures, ui
from zsim.app import resilver_view as rv
from zsim.app.design import Design
from zsim.app.pages import widgets

RESILVER_URL_PATH = "resilver"  # app.py: st.Page(resilver_page.render, url_path="resilver")


def resilver_page(query: dict[str, str] | None = None) -> AppTest:
    """An AppTest of app.py opened on the Resilver page (with a shared link's ``query``)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at._page_hash = calc_hash(RESILVER_URL_PATH)  # see the module docstring
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    settle(at)
    assert [t.value for t in at.title] == ["Resilver"]
    return at


def settle(at: AppTest, timeout_s: float = 600.0) -> AppTest:
    """Rerun while the page's resilvers run in the background (a browser's page polls for
    them; AppTest does not run fragments on a timer)."""
    deadline = time.monotonic() + timeout_s
    while any(c.value.startswith(widgets.RESILVER_WAIT_TEXT) for c in at.caption):
        assert time.monotonic() < deadline, "the background resilvers did not finish"
        time.sleep(0.3)
        at.run()
    return at


def metric(at: AppTest, label: str) -> str:
    found = [m.value for m in at.metric if m.label == label]
    assert found, f"no metric {label!r}; metrics: {[m.label for m in at.metric]}"
    return str(found[0])


def library(scenario: Any) -> Any:
    """``zsim resilver --engine auto`` of a scenario (the analytic scan where it answers,
    else the simulated one), memoised by the app's cache (the same call). A resilver the
    page's background worker made is in the library's memo under its scenario, so it is
    answered from there only when the test's scenario is the page's;
    ``tests/unit/test_app_background.py`` checks the worker's figures against a run here."""
    return widgets.cached_resilver(scenario.to_toml())


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_default_page_shows_the_librarys_resilver() -> None:
    at = resilver_page()
    assert_clean(at)
    design = Design()
    res = library(design.resilver_scenario())
    assert metric(at, "Resilver time") == ui.fmt_time(res.seconds)
    assert metric(at, "Resilver rate") == ui.fmt_rate(res.bytes_per_s)
    assert metric(at, "Limited by") == figures.resilver_limit_short(res.limit, res.disk)
    assert metric(at, "P(loss) over 5 years") == ui.fmt_prob(res.durability["loss_probability"])
    assert at.selectbox(key="r_disk").value == "sda"
    assert at.radio(key="r_written").value == "sequential"
    assert at.checkbox(key="r_draid").value is True
    assert at.get("vega_lite_chart"), "no progress chart"
    table = at.dataframe[0].value
    assert list(table["case"]) == [
        "raidz2 8: new disk, healing resilver",
        "draid2:5d:1s:8c: distributed spare, sequential rebuild",
        "draid2:5d:1s:8c: then healing onto the new disk",
    ]
    assert table["time (h)"].iloc[0] == round(res.seconds / 3600, 2)
    text = " ".join(m.value for m in at.markdown)
    assert "`draid2:5d:1s:8c`" in text and "every disk takes part" in text
    assert len(at.get("download_button")) == 3
    assert at.query_params.get("r_disk") is None  # defaults stay out of the URL


def test_written_randomly_gives_the_librarys_time() -> None:
    at = resilver_page()
    at.checkbox(key="r_draid").uncheck().run()  # the comparison is not needed here
    settle(at)
    at.radio(key="r_written").set_value("random").run()
    settle(at)
    assert_clean(at)
    d = rv.base_dict(Design())
    d["resilver"] = {"written": "random"}
    res = library(zsim.scenario_from_dict(d))
    assert metric(at, "Resilver time") == ui.fmt_time(res.seconds)
    assert metric(at, "Resilver time") != ui.fmt_time(library(Design().resilver_scenario()).seconds)
    assert metric(at, "Resilver rate") == ui.fmt_rate(res.bytes_per_s)
    assert len(at.dataframe[0].value) == 1
    assert at.query_params["r_written"] == "random"
    assert at.query_params["r_draid"] == "0"


def test_failed_disk_from_a_shared_link() -> None:
    at = resilver_page({"r_disk": "sdc", "r_draid": "0"})
    assert_clean(at)
    assert at.selectbox(key="r_disk").value == "sdc"
    d = rv.base_dict(Design())
    d["resilver"] = {"disk": "sdc"}
    res = library(zsim.scenario_from_dict(d))
    assert res.disk == "sdc"
    assert metric(at, "Resilver time") == ui.fmt_time(res.seconds)
    assert metric(at, "Limited by") == figures.resilver_limit_short(res.limit, res.disk)
    assert at.query_params["r_disk"] == "sdc"


def test_sidebar_layout_changes_the_cases() -> None:
    at = resilver_page()
    at.text_input(key="w_layout").set_value("raidz1 8").run()
    settle(at)
    assert_clean(at)
    design = Design(layout="raidz1 8")
    res = library(design.resilver_scenario())
    assert metric(at, "Resilver time") == ui.fmt_time(res.seconds)
    table = at.dataframe[0].value
    assert list(table["case"])[1] == "draid1:6d:1s:8c: distributed spare, sequential rebuild"
    plan = rv.plan_cases(design)
    draid = library(plan.case("draid").scenario())  # type: ignore[union-attr]
    assert table["time (h)"].iloc[1] == round(draid.seconds / 3600, 2)


def test_bad_layout_shows_an_error_not_a_traceback() -> None:
    at = resilver_page()
    at.text_input(key="w_layout").set_value("raidz3 3").run()
    settle(at)
    assert not at.exception
    assert at.error, "no error for raidz3 3"
    assert "raidz3" in at.error[0].value
    assert not at.metric  # no figures of the last good design
    assert at.info and "Fix the design" in at.info[0].value


def test_stripe_says_no_redundancy() -> None:
    at = resilver_page()
    at.text_input(key="w_layout").set_value("stripe 8").run()
    settle(at)
    assert_clean(at)
    assert at.warning and at.warning[0].value.startswith("No redundancy")
    assert not at.get("vega_lite_chart")


def test_under_load_case() -> None:
    at = resilver_page()
    at.checkbox(key="r_load").check().run()
    settle(at)
    assert_clean(at)
    table = at.dataframe[0].value
    assert len(table) == 4
    plan = rv.plan_cases(Design(), under_load=True)
    res = library(plan.case("under_load").scenario())  # type: ignore[union-attr]
    loaded_h = res.under_load["seconds"] / 3600
    assert table["time (h)"].iloc[1] == round(loaded_h, 2)
    assert table["time (h)"].iloc[1] >= table["time (h)"].iloc[0]
    assert any(m.value.startswith("**Under load.**") for m in at.markdown)
    assert at.query_params["r_load"] == "1"
