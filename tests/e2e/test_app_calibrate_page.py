"""The Calibrate and validate page, run through ``app.py`` with Streamlit's AppTest.

Opening the page: app.py registers one small script per page (``app_pages/calibrate.py``,
``url_path="calibrate"``), which ``AppTest.switch_page`` selects (streamlit 1.67 matches
``st.navigation`` pages by script path; before the first run, by the file name, which is the
url_path here, so the default page is never rendered). Should app.py register callables
instead (``st.Page(calibrate_page.render, ...)``), switch_page cannot select them (it raises
ValueError: no script path); the page is then asked for by the hash ``st.Page`` derives from
its ``url_path``. Each test checks the page's title, so a wrong page fails loudly.

The figures the page shows are checked against the calibration library called directly on
the same files (``load_results`` → ``fit_device`` → ``predict_iops``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("streamlit")
pytest.importorskip("altair")

from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

ROOT = Path(__file__).resolve().parents[2]
PAGE_SCRIPT = "app_pages/calibrate.py"
SAMPLE = ROOT / "calibration" / "results" / "vm-virtio-file-2026-11-22" / "results"


def open_calibrate(**query: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params.update(query)
    if (ROOT / PAGE_SCRIPT).is_file():
        at.switch_page(PAGE_SCRIPT)
    else:  # callable pages (see the module's docstring)
        at._page_hash = calc_hash("calibrate")
    at.run()
    assert [t.value for t in at.title] == ["Calibrate and validate"]
    return at


def ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def library_summary() -> tuple[float, float, dict[str, float]]:
    """mean |error| and worst |error| of the closed-form predictions of every finished run
    (not ``prepare``), and the fitted parameters, from the library directly (its fit of the
    sample folder is shared with the unit tests: one fit when both run)."""
    from tests.unit.test_app_calibrate import library_fit
    from zsim.calibrate.forward import predict_iops

    loaded, fit = library_fit()
    errors = [
        predict_iops(fit.profile, m, fit.device_bytes) / m.direction().iops - 1.0
        for m in loaded.measurements
        if m.ok and m.purpose != "prepare"
    ]
    params = {p.name: p.value for p in fit.parameters}
    return sum(map(abs, errors)) / len(errors), max(map(abs, errors)), params


def test_default_render_has_no_error():
    at = open_calibrate()
    ok(at)
    assert at.info and "Upload result files" in at.info[0].value
    assert len(at.file_uploader) == 1
    assert at.button(key="w_cal_sample").label == "Use the sample measurements"
    assert not at.metric
    assert "zsim calibrate run DIR" in at.markdown[0].value


def test_sample_button_fits_and_shows_the_library_figures():
    at = open_calibrate()
    at.button(key="w_cal_sample").click().run()
    ok(at)
    mean_abs, worst, params = library_summary()
    shown = metrics(at)
    assert shown["mean |error|"] == f"{mean_abs:.1%}"
    assert abs(float(shown["worst error"].rstrip("%"))) == pytest.approx(worst * 100, abs=0.05)
    assert shown["runs in the fit"] == "39 of 49"
    assert "rule of thumb mean |error|" in shown
    # the parameters table: every fitted parameter, its SI value as the library fitted it
    table = next(df.value for df in at.dataframe if "parameter" in df.value.columns).set_index(
        "parameter"
    )
    assert set(table.index) == set(params)
    for name, value in params.items():
        assert table.loc[name, "SI value"] == pytest.approx(value, rel=1e-12)
    assert table.loc["read_latency", "value"].endswith("µs")
    # measurements and residuals tables, the chart, the downloads, the URL
    assert any(len(df.value) == 50 and "measured IOPS" in df.value.columns for df in at.dataframe)
    assert any(len(df.value) == 49 and "predicted IOPS" in df.value.columns for df in at.dataframe)
    labels = [d.proto.label for d in at.get("download_button")]
    assert labels == [
        "Profile (my-device.toml)",
        "Results (CSV)",
        "Results (JSON)",
        "Scenario (TOML)",
    ]
    # the scenario of a measured run is the one `zsim validate --profile` replays
    from zsim.app import calibrate_upload as cu

    scenario = at.get("download_button")[3].proto
    assert scenario.label == "Scenario (TOML)"
    run = at.selectbox(key="cal-scenario-run").value
    parsed = cu.parse_uploads(cu.sample_files())
    outcome = cu.fit_uploads(parsed, name="my-device", leave_one_out=False)
    assert "raw 1" in cu.replay_scenario_toml(outcome, parsed.measurements, run)
    assert at.get("download_button")[0].proto.url  # the file is served
    assert at.query_params.get("cal_sample") == "1"
    # one run replayed with the discrete-event engine (about 1.5 s)
    at.multiselect(key="w_cal_des").set_value(["randread-4k-qd1"]).run()
    at.button(key="w_cal_des_run").click().run()
    ok(at)
    des = next(df.value for df in at.dataframe if "DES IOPS" in df.value.columns)
    assert list(des["step"]) == ["randread-4k-qd1"]
    assert des["DES IOPS"][0] > 0


def test_junk_upload_shows_an_error_not_a_traceback():
    at = open_calibrate()
    at.file_uploader(key="w_cal_files").upload("junk.json", b"\x00\xffnot a result\n").run()
    assert not at.exception
    assert len(at.error) == 1
    assert "junk.json, line 1: not a result zsim reads" in at.error[0].value
    assert not at.metric


def test_path_in_an_upload_name_shows_an_error():
    at = open_calibrate()
    data = (SAMPLE / "randread-4k-qd1.json").read_bytes()
    at.file_uploader(key="w_cal_files").upload("../../etc/x.json", data).run()
    assert not at.exception
    # a browser sends base names; a crafted request with a path is refused before writing
    assert [e.value for e in at.error] == [
        "reading the files: file '../../etc/x.json': give a plain file name, without "
        "folders or '..'"
    ]
    assert not at.metric


def test_bad_profile_name_shows_an_error():
    at = open_calibrate()
    at.button(key="w_cal_sample").click().run()
    at.text_input(key="w_cal_name").set_value("../etc").run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        "fit: profile name '../etc': use letters, digits, '.', '_' and '-' (starting with a "
        "letter or digit, at most 64), e.g. my-ssd"
    ]


def test_url_seeds_the_profile_name_and_kind():
    at = open_calibrate(cal_name="ssd-a", cal_kind="nvme")
    ok(at)
    assert at.text_input(key="w_cal_name").value == "ssd-a"
    assert at.selectbox(key="w_cal_kind").value == "nvme"
    assert at.query_params.get("cal_name") == "ssd-a"
    assert at.query_params.get("cal_kind") == "nvme"
