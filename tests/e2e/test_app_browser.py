"""The Streamlit app in a real browser: ``streamlit run app.py`` driven by Playwright.

AppTest (tests/e2e/test_app_*_page.py) runs the pages' Python; this file checks what a user
sees: each of the six pages opened by its URL draws its title, its key figures, its charts
(a Vega chart whose marks have no area counts as not drawn) and no error or traceback; typing
a layout in the sidebar changes the figures to what the library computes and puts the design
in the URL; a bad layout shows an error naming the problem; and a link with the design in its
query string reopens it.

It needs the system's chromium (Debian package ``chromium``; no ``playwright install``) and
the ``playwright`` Python package: without them it skips, and fails under CI
(``ZSIM_REQUIRE_TOOLS=1``). One server serves the whole module, so the second visit of a
design is answered from the app's st.cache_data. Full-page screenshots of every page and
interaction, and the server's log, are kept under ``ZSIM_ARTIFACTS`` (default: a folder in the
system temp) in ``app-screenshots/``; the test prints where.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.conftest import ROOT, artifacts_dir, need_module, need_tool

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.slow, pytest.mark.needs_tool("chromium")]

#: a long wait: the first visit builds the analytic engine's device tables and simulates the
#: default design's resilver (seconds; more with cold caches on a busy 2-core machine)
SLOW_MS = 180_000
#: the server runs app.py with zsim.des.run.simulate_des wrapped to log each call here (the
#: module's ``des_log`` fixture's file): a sidebar change must add no line
DES_LOG_ENV = "ZSIM_TEST_DES_LOG"
#: ``python -c`` program that starts ``streamlit`` with the DES entry point wrapped
LAUNCH = """
import os, sys
import zsim.des.run as des_run
real = des_run.simulate_des
def logged(sc, *args, **kwargs):
    with open(os.environ["ZSIM_TEST_DES_LOG"], "a") as log:
        log.write(f"{sc.name}\\n")
    return real(sc, *args, **kwargs)
des_run.simulate_des = logged
from streamlit.web.cli import main
sys.argv = ["streamlit", *sys.argv[1:]]
sys.exit(main())
"""
VIEWPORT = {"width": 1400, "height": 1000}
#: Streamlit 1.67's data-testids (checked in its rendered DOM)
EXCEPTION = "stException"  # an uncaught exception's box (traceback or not)
ERROR = "stAlertContentError"  # st.error
WARNING = "stAlertContentWarning"  # st.warning
RUNNING = "stStatusWidget"  # the "Running..." widget in the toolbar
CHART = "stVegaLiteChart"  # st.altair_chart / st.vega_lite_chart
METRIC, METRIC_LABEL, METRIC_VALUE = "stMetric", "stMetricLabel", "stMetricValue"
TABLE = "stDataFrame"  # st.dataframe (a canvas; the visible cells are also in the DOM)
DISK = "seagate-ironwolf-12tb"  # the app's default design: 8 of these as raidz2 8


# ---------------------------------------------------------------- expected figures


def usable(layout: str) -> tuple[str, str]:
    """The usable capacity the Design page should show for ``layout`` of the default disk,
    from the library: ("68.10 TB", "61.94 TiB")."""
    import zsim

    disk = zsim.load_profile(DISK)
    report = zsim.capacity(layout, disk_size=disk.capacity, ashift=12)
    return f"{report.usable_bytes / 1e12:,.2f} TB", f"{report.usable_bytes / 2**40:,.2f} TiB"


def default_resilver_time() -> str:
    """The default design's resilver time as the pages format it: ``zsim resilver --engine
    auto`` of the design's resilver scenario, seed 1 (the analytic scan answers this one)."""
    from zsim.app.design import Design
    from zsim.resilver.run import simulate_resilver
    from zsim.units import format_time

    sc = Design().resilver_scenario()
    return format_time(simulate_resilver(sc, seed=1, engine="analytic").seconds)


def default_grow() -> tuple[str, str, str]:
    """What the Grow page should show for the default design with one disk attached (the
    library's ``zsim.grow`` of the page's scenario, seed 1): the reflow time, and the
    ``zfs list`` USED+AVAIL and after-rewrite space after the attach, TB and TiB."""
    import zsim
    from zsim.app import grow_view as gv
    from zsim.app import ui
    from zsim.app.design import Design

    inputs = gv.GrowInputs()
    sc = ui.scenario_from_toml(gv.grow_toml(Design(), inputs))
    res = zsim.grow(sc, attach=1, vdev=0, seed=1)
    after = res.space_after

    def both(b: int) -> str:
        return f"{b / 1e12:,.2f} TB ({b / 2**40:,.2f} TiB)"

    return (
        ui.fmt_time(res.seconds),
        both(after["usable_bytes"]),
        both(after["usable_after_rewrite_bytes"]),
    )


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def shots() -> Path:
    return artifacts_dir("app-screenshots")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    chromium = need_tool("chromium", "the app's browser tests drive the system's chromium")
    need_module("playwright", "the app's browser tests drive chromium with Playwright")
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=30_000)  # the default 5 s is short for a busy 2-core runner
    args = ["--disable-dev-shm-usage"]  # containers often have a small /dev/shm
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")  # chromium refuses to run as root with its sandbox
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, headless=True, args=args)
        yield b
        b.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tail(path: Path, lines: int = 40) -> str:
    text = path.read_text(errors="replace") if path.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


def healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/_stcore/health", timeout=5) as r:
            return r.read().decode().strip() == "ok"
    except OSError:
        return False


@pytest.fixture(scope="module")
def des_log(shots: Path) -> Path:
    """The file the server logs each discrete-event run to (one scenario name a line)."""
    path = shots / "des-runs.log"
    path.write_text("")
    return path


def des_runs(des_log: Path) -> list[str]:
    return des_log.read_text().splitlines()


@pytest.fixture(scope="module")
def app(browser: Browser, shots: Path, des_log: Path) -> Iterator[str]:
    """``streamlit run app.py`` on a free port (the DES's entry point logged to
    ``des_log``); yields its base URL."""
    port = free_port()
    log_path = shots / "streamlit.log"
    env = {
        **os.environ,
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
        DES_LOG_ENV: str(des_log),
    }
    cmd = [
        sys.executable, "-c", LAUNCH, "run", "app.py",
        "--server.headless", "true", "--server.address", "127.0.0.1",
        "--server.port", str(port), "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
    ]  # fmt: skip
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (
                f"streamlit exited with {proc.returncode}; its log ({log_path}):\n{tail(log_path)}"
            )
            if healthy(base):
                break
            assert time.monotonic() < deadline, (
                f"streamlit did not answer {base}/_stcore/health within 60 s; its log "
                f"({log_path}):\n{tail(log_path)}"
            )
            time.sleep(0.5)
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)


@pytest.fixture
def page(browser: Browser, app: str) -> Iterator[Page]:
    """A fresh browser context (so a fresh Streamlit session) per test."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(SLOW_MS)
    pg = context.new_page()
    yield pg
    context.close()


# ---------------------------------------------------------------- helpers


def open_page(page: Page, app: str, path: str, title: str | re.Pattern[str]) -> None:
    """Open ``app/path`` and wait for the page's title (its h1)."""
    from playwright.sync_api import expect

    page.goto(f"{app}/{path}")
    expect(page.get_by_role("heading", level=1, name=title, exact=True)).to_be_visible(
        timeout=SLOW_MS
    )


def settle(page: Page, quiet_s: float = 1.0) -> None:
    """Wait until the script run is over: the "Running..." widget gone for ``quiet_s``."""
    deadline = time.monotonic() + SLOW_MS / 1000
    quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < quiet_s:
        if page.get_by_test_id(RUNNING).count():
            quiet_since = time.monotonic()
        assert time.monotonic() < deadline, "the app was still running after 180 s"
        page.wait_for_timeout(200)


def metric(page: Page, label: str) -> Any:
    """The value (locator) of the st.metric labelled exactly ``label``."""
    box = page.get_by_test_id(METRIC).filter(
        has=page.get_by_test_id(METRIC_LABEL).get_by_text(label, exact=True)
    )
    return box.get_by_test_id(METRIC_VALUE)


def metric_text(page: Page, label: str) -> str:
    from playwright.sync_api import expect

    value = metric(page, label)
    expect(value).to_have_count(1, timeout=SLOW_MS)
    return value.inner_text().strip()


def texts(page: Page, testid: str) -> list[str]:
    return [e.inner_text().strip() for e in page.get_by_test_id(testid).all()]


def no_errors(page: Page, where: str) -> None:
    """No exception box and no st.error on the page; warnings are printed, not failed."""
    assert not texts(page, EXCEPTION), f"{where}: exception shown: {texts(page, EXCEPTION)}"
    assert not texts(page, ERROR), f"{where}: st.error shown: {texts(page, ERROR)}"
    assert page.get_by_text("Page not found").count() == 0, f"{where}: 'Page not found'"
    for w in texts(page, WARNING):
        print(f"{where}: warning shown: {w}")
    for t in truncated(page):
        print(f"{where}: text cut off with an ellipsis: {t!r}")


def truncated(page: Page) -> list[str]:
    """Metric labels and values cut off by their column (CSS ellipsis)."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll(
              '[data-testid="stMetricLabel"] *, [data-testid="stMetricValue"] *'))
            .filter(e => getComputedStyle(e).textOverflow === 'ellipsis'
                         && e.scrollWidth > e.clientWidth)
            .map(e => e.textContent.trim())
            .filter((t, i, all) => all.indexOf(t) === i)"""
    )


def charts(page: Page, expected: int) -> list[dict[str, Any]]:
    """Wait for ``expected`` Vega charts to draw their SVG; each one's largest mark group
    (bars, lines, points; not text, axes or legends): ``{"w": px, "h": px, "marks": n}``."""
    from playwright.sync_api import expect

    expect(page.get_by_test_id(CHART)).to_have_count(expected, timeout=SLOW_MS)
    page.wait_for_function(
        f"""() => Array.from(document.querySelectorAll('[data-testid="{CHART}"]'))
                  .every(c => c.querySelector('svg.marks, canvas'))""",
        timeout=60_000,
    )
    page.wait_for_timeout(500)  # Vega lays out once more after the first draw
    return page.evaluate(
        f"""() => Array.from(document.querySelectorAll('[data-testid="{CHART}"]')).map(c => {{
          const svg = c.querySelector('svg.marks');
          if (!svg) return {{canvas: true, w: 1e9, h: 1e9, marks: 1}};
          let w = 0, h = 0, marks = 0;
          for (const g of svg.querySelectorAll('g.role-mark')) {{
            if (g.closest('.role-axis, .role-legend, .role-title')) continue;
            if (g.classList.contains('mark-text')) continue;  // labels, not data
            const b = g.getBBox();
            marks += 1; w = Math.max(w, b.width); h = Math.max(h, b.height);
          }}
          return {{w, h, marks}};
        }})"""
    )


def charts_drawn(page: Page, where: str, expected: int) -> None:
    """Every chart's marks cover some area. Streamlit 1.67 makes a chart's ``height`` the
    whole chart's (title, axes and legend included), so a small height can leave the plot
    0 px tall: the axes and legend draw, the bars do not."""
    empty = [
        f"chart {i + 1} of {expected}: marks {c['w']:.0f} × {c['h']:.1f} px"
        for i, c in enumerate(charts(page, expected))
        if not (c["marks"] and c["w"] >= 8 and c["h"] >= 8)
    ]
    assert not empty, f"{where}: chart(s) drawn without area: {empty}"


def screenshot(page: Page, shots: Path, name: str) -> Path:
    """A full-page PNG. Streamlit scrolls inside its main block, not the document, so the
    viewport is stretched to the content's height for the shot."""
    page.mouse.move(1, 1)  # no tooltip left over from a click
    height = page.evaluate(
        """() => Math.max(...['stMain', 'stSidebarContent'].map(t =>
              document.querySelector(`[data-testid="${t}"]`)?.scrollHeight || 0))"""
    )
    page.set_viewport_size({"width": VIEWPORT["width"], "height": max(VIEWPORT["height"], height)})
    page.wait_for_timeout(800)  # charts re-layout to the new size
    path = shots / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(VIEWPORT)
    assert path.stat().st_size > 10_000, f"{path} is almost empty"
    return path


def query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def cell(table: Any, text: str) -> Any:
    """A cell of an st.dataframe showing exactly ``text`` (the grid draws on a canvas; the
    cells in view, the first rows, are also in an off-screen table: they count, but are not
    "visible")."""
    return table.locator("td", has_text=re.compile(f"^{re.escape(text)}$"))


def rows(table: Any) -> int:
    """An st.dataframe's number of rows (the grid's aria-rowcount counts the header too)."""
    return int(table.locator("table[role=grid]").get_attribute("aria-rowcount")) - 1


def type_layout(page: Page, layout: str) -> None:
    box = page.get_by_label("Layout", exact=True)
    box.fill(layout)
    box.press("Enter")


# ---------------------------------------------------------------- tests (cheapest order:
# the first Design visit fills the caches the later ones read)


def test_design_page(page, app, shots, des_log):
    from playwright.sync_api import expect

    from zsim.app.design import DEFAULT_WORKLOADS, PRESET_LABELS

    tb, tib = usable("raidz2 8")
    assert (tb, tib) == ("68.10 TB", "61.94 TiB")
    open_page(page, app, "", "Design a pool")  # the default page is "/" (and "/design")
    expect(metric(page, "Usable capacity (TB)")).to_have_text(tb, timeout=SLOW_MS)
    expect(metric(page, "Usable capacity (TiB)")).to_have_text(tib)
    expect(metric(page, "Resilver time")).to_have_text(default_resilver_time(), timeout=SLOW_MS)
    settle(page)
    expect(page.get_by_text(f"8 × {DISK} as raidz2 8")).to_be_visible()
    table = page.get_by_test_id(TABLE).first
    expect(table).to_be_visible()
    assert rows(table) == len(DEFAULT_WORKLOADS)
    for w in DEFAULT_WORKLOADS:  # a row per chosen workload, with its figures
        expect(cell(table, PRESET_LABELS[w])).to_have_count(1)
    assert metric_text(page, "Efficiency").endswith("%")
    no_errors(page, "design")
    assert des_runs(des_log) == [], "the Design page ran the discrete-event engine on its own"
    assert page.get_by_text("read error in rebuild").count() == 0
    expect(metric(page, "P(unrecoverable block)")).to_have_count(1)
    screenshot(page, shots, "01-design")
    charts_drawn(page, "design (capacity breakdown)", 1)


def test_the_design_page_is_also_served_at_design(page, app, shots):
    from playwright.sync_api import expect

    open_page(page, app, "design", "Design a pool")
    expect(metric(page, "Usable capacity (TB)")).to_have_text(
        usable("raidz2 8")[0], timeout=SLOW_MS
    )
    settle(page)
    no_errors(page, "/design")


def test_sidebar_changes_rerender_without_a_des_run(page, app, shots, des_log):
    from playwright.sync_api import expect

    before = des_runs(des_log)
    open_page(page, app, "", "Design a pool")
    expect(metric(page, "Usable capacity (TB)")).to_have_text(usable("raidz2 8")[0])
    box = page.get_by_label("Number of disks")
    box.fill("24")
    box.press("Enter")
    settle(page)
    type_layout(page, "3x raidz2 8")
    expect(metric(page, "Usable capacity (TB)")).to_have_text(
        usable("3x raidz2 8")[0], timeout=SLOW_MS
    )
    settle(page)
    no_errors(page, "design, 24 disks as 3x raidz2 8")
    table = page.get_by_test_id(TABLE).first
    expect(table).to_be_visible()
    assert des_runs(des_log) == before, "a sidebar change ran the discrete-event engine"
    screenshot(page, shots, "01b-design-3x-raidz2-8")


def test_typing_a_layout_changes_the_figures_and_the_link(page, app, shots):
    from playwright.sync_api import expect

    tb, tib = usable("4x mirror 2")
    open_page(page, app, "", "Design a pool")
    expect(metric(page, "Usable capacity (TB)")).to_have_text(usable("raidz2 8")[0])
    type_layout(page, "4x mirror 2")
    expect(metric(page, "Usable capacity (TB)")).to_have_text(tb, timeout=SLOW_MS)
    expect(metric(page, "Usable capacity (TiB)")).to_have_text(tib)
    # the query string is written at the end of the run (after the workloads' engines)
    expect(page).to_have_url(
        re.compile(r"[?&]layout=4x(\+|%20)mirror(\+|%20)2(&|$)"), timeout=SLOW_MS
    )
    settle(page)
    assert query(page)["layout"] == ["4x mirror 2"]
    no_errors(page, "design, 4x mirror 2 typed")
    screenshot(page, shots, "02-design-typed-4x-mirror-2")


def test_a_link_with_the_design_reopens_it(page, app, shots):
    from playwright.sync_api import expect

    tb, tib = usable("4x mirror 2")
    open_page(page, app, "?layout=4x+mirror+2", "Design a pool")
    expect(page.get_by_label("Layout", exact=True)).to_have_value("4x mirror 2")
    expect(metric(page, "Usable capacity (TB)")).to_have_text(tb, timeout=SLOW_MS)
    expect(metric(page, "Usable capacity (TiB)")).to_have_text(tib)
    settle(page)
    assert query(page)["layout"] == ["4x mirror 2"]
    no_errors(page, "design from ?layout=4x+mirror+2")
    screenshot(page, shots, "03-design-from-link")


def test_a_bad_layout_shows_an_error_not_a_traceback(page, app, shots):
    from playwright.sync_api import expect

    good = usable("raidz2 8")[0]
    open_page(page, app, "", "Design a pool")
    expect(metric(page, "Usable capacity (TB)")).to_have_text(good, timeout=SLOW_MS)
    type_layout(page, "foo")
    error = page.get_by_test_id(ERROR)
    expect(error).to_have_count(1, timeout=SLOW_MS)
    expect(error).to_contain_text("'foo' in the layout 'foo' is neither a vdev type")
    type_layout(page, "raidz3 3")
    expect(error).to_have_count(1, timeout=SLOW_MS)
    expect(error).to_contain_text("raidz3 needs at least 4 disks")
    expect(error).to_contain_text("'raidz3 3'")
    settle(page)
    assert not texts(page, EXCEPTION), texts(page, EXCEPTION)
    screenshot(page, shots, "04-design-bad-layout")
    # the figures of the design before the typo are not shown as if they were this one's
    shown = texts(page, METRIC_VALUE)
    assert good not in shown, (
        f"the Design page still shows the previous design's figures ({shown}) under the "
        "error for 'raidz3 3'"
    )


def test_compare_page(page, app, shots):
    from playwright.sync_api import expect

    open_page(page, app, "compare", "Compare layouts")
    # every sensible layout of 8 disks, as `zsim sweep` lists them
    expect(metric(page, "Layouts compared")).to_have_text("21", timeout=SLOW_MS)
    settle(page)
    table = page.get_by_test_id(TABLE).first
    assert rows(table) == 21
    expect(cell(table, "4x mirror 2")).to_have_count(1)
    no_errors(page, "compare")
    screenshot(page, shots, "05-compare")
    charts_drawn(page, "compare", 3)


def test_scaling_page(page, app, shots):
    from playwright.sync_api import expect

    open_page(page, app, "scaling", "How vdevs scale")
    wide = metric(page, "4K reads, 24 disks: one wide raidz2")
    expect(wide).to_have_text(re.compile(r"^[\d,]+ IOPS$"), timeout=SLOW_MS)
    settle(page)
    iops = {
        fam: int(metric_text(page, f"4K reads, 24 disks: {fam}").split()[0].replace(",", ""))
        for fam in ("single disks", "2-way mirrors", "raidz2 vdevs of 4", "one wide raidz2")
    }
    # what the page teaches: random reads go as fast as the vdevs, not the disks
    assert iops["one wide raidz2"] * 3 < iops["raidz2 vdevs of 4"] < iops["2-way mirrors"], iops
    assert query(page).get("max") == ["24"]
    no_errors(page, "scaling")
    screenshot(page, shots, "06-scaling")
    charts_drawn(page, "scaling", 6)  # 4 workloads, 2 record anatomies


def test_calibrate_page(page, app, shots):
    from playwright.sync_api import expect

    open_page(page, app, "calibrate", "Calibrate and validate")
    button = page.get_by_role("button", name="Use the sample measurements")
    expect(button).to_be_enabled(timeout=SLOW_MS)
    settle(page)
    no_errors(page, "calibrate")
    screenshot(page, shots, "07-calibrate")
    button.click()
    expect(metric(page, "runs in the fit")).to_have_text("39 of 49", timeout=SLOW_MS)
    settle(page)
    assert re.fullmatch(r"\d+\.\d%", metric_text(page, "mean |error|"))
    zsim_err = float(metric_text(page, "mean |error|").rstrip("%"))
    rule_err = float(metric_text(page, "rule of thumb mean |error|").rstrip("%"))
    assert zsim_err < rule_err, (zsim_err, rule_err)
    fitted = page.get_by_role("heading", name=re.compile(r"^Fitted profile: my-device"))
    expect(fitted).to_be_visible()
    assert query(page).get("cal_sample") == ["1"]
    no_errors(page, "calibrate, sample measurements fitted")
    screenshot(page, shots, "08-calibrate-sample-fitted")
    charts_drawn(page, "calibrate (predicted vs measured)", 1)


def test_resilver_page(page, app, shots):
    from playwright.sync_api import expect

    open_page(page, app, "resilver", "Resilver")
    # the same resilver as the Design page's: one disk of the default design, healing
    expect(metric(page, "Resilver time")).to_have_text(default_resilver_time(), timeout=SLOW_MS)
    settle(page)
    assert re.fullmatch(r"[\d,.]+ MB/s", metric_text(page, "Resilver rate"))
    assert metric_text(page, "Limited by")
    assert re.fullmatch(r"\d\.\d\de-\d\d", metric_text(page, "P(loss) over 5 years"))
    # the cases: the design's healing resilver, and (by default) a dRAID of the same disks
    # rebuilt onto its distributed spare, then healed onto the new disk
    table = page.get_by_test_id(TABLE).first
    assert rows(table) == 3
    expect(cell(table, "raidz2 8: new disk, healing resilver")).to_have_count(1)
    no_errors(page, "resilver")
    screenshot(page, shots, "09-resilver")
    charts_drawn(page, "resilver (progress)", 1)


def test_grow_page(page, app, shots):
    from playwright.sync_api import expect

    reflow, reported, rewritten = default_grow()
    open_page(page, app, "grow", "Grow this pool")
    # the space at once; the reflow from the worker process when it is done
    table = page.get_by_test_id(TABLE).first
    expect(cell(table, reported)).to_have_count(1, timeout=SLOW_MS)
    expect(cell(table, rewritten)).to_have_count(1)
    assert reported != rewritten  # the gap the page is about
    expect(page.get_by_text("zpool attach tank raidz2-0 sdi")).to_have_count(1)
    expect(metric(page, "Reflow time")).to_have_text(reflow, timeout=SLOW_MS)
    settle(page)
    assert re.fullmatch(r"[\d,.]+ MB/s", metric_text(page, "Copy rate"))
    expect(page.get_by_text(re.compile("limited by the disks"))).to_have_count(1)
    no_errors(page, "grow")
    screenshot(page, shots, "10-grow")
    charts_drawn(page, "grow (space bars, reflow curve)", 2)
    # attaching to a mirror is refused with one message naming the fix
    open_page(page, app, "grow?layout=4x+mirror+2", "Grow this pool")
    expect(page.get_by_test_id(ERROR)).to_contain_text("adds a copy", timeout=SLOW_MS)
    assert not texts(page, EXCEPTION)
    screenshot(page, shots, "11-grow-mirror-refused")
