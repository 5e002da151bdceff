"""How long a planner waits in the app; prints figures (not a test, no timed assertions).

Run: python benchmarks/bench_app.py [--chromium]

Each step is one Streamlit run of ``app.py`` in AppTest (the script as the server runs it, no
browser), in one fresh process, the way a planner meets the app; the figure printed is the
run's wall time (capacity and performance drawn), and where the Design page simulates the
resilver in the background, when its figures were shown too:

1. the Design page cold (default design: 8 × IronWolf 12 TB in ``raidz2 8``, the four
   default workloads): empty ``st.cache_data`` and, unless ``ZSIM_CACHE_DIR`` is set, an empty
   temporary folder for the analytic engine's device tables (the tables shipped with zsim
   serve these designs: ``ZSIM_SHIPPED_TABLES=off`` times measuring them);
2. 24 disks and layout ``3x raidz2 8`` (two sidebar changes; the first leaves the design
   invalid — 8 disks' layout on 24 — which the page refuses at once);
3. disk model → ``wd-red-plus-12tb``;
4. workloads → add ``4k-randwrite``;
5. back to the default design (cached: what a second look costs).

``--chromium`` also times the same first render and layout change in headless Chromium
(Playwright, as ``tests/e2e/test_app_browser.py``): page load until the capacity metric and
the performance table are drawn.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _apptest_steps() -> list[tuple[str, float, str]]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    out: list[tuple[str, float, str]] = []
    wait_text = _wait_text()

    def step(what: str, action: object) -> None:
        start = time.perf_counter()
        action()  # type: ignore[operator]
        wall = time.perf_counter() - start
        errors = "; ".join(e.value for e in at.error)[:120]
        if at.exception:
            errors = "EXCEPTION " + "; ".join(str(e.value) for e in at.exception)[:120]
        # the resilver, when the page runs it in the background: poll as the browser does
        waited = False
        while wait_text and any(c.value.startswith(wait_text) for c in at.caption):
            waited = True
            time.sleep(0.1)
            at.run()
        if waited:
            errors = f"(resilver shown after {time.perf_counter() - start:.2f} s) {errors}"
        out.append((what, wall, errors))

    step("Design page, cold, default design", at.run)
    step("  number of disks → 24 (layout not yet changed)",
         lambda: at.number_input(key="w_disks").set_value(24).run())  # fmt: skip
    step("  layout → 3x raidz2 8",
         lambda: at.text_input(key="w_layout").set_value("3x raidz2 8").run())  # fmt: skip
    step("  disk model → wd-red-plus-12tb",
         lambda: at.selectbox(key="w_disk").set_value("wd-red-plus-12tb").run())  # fmt: skip
    step("  workloads → + 4K random writes",
         lambda: at.multiselect(key="w_workloads").select("4k-randwrite").run())  # fmt: skip
    step("  back to the default design (cached)", lambda: _default(at))
    return out


def _wait_text() -> str:
    """The Design page's "resilver running in the background" line (none before issue 18)."""
    try:
        from zsim.app.pages.widgets import RESILVER_WAIT_TEXT
    except ImportError:
        return ""
    return RESILVER_WAIT_TEXT


def _default(at: object) -> None:
    at.selectbox(key="w_disk").set_value("seagate-ironwolf-12tb")  # type: ignore[attr-defined]
    at.number_input(key="w_disks").set_value(8)  # type: ignore[attr-defined]
    at.text_input(key="w_layout").set_value("raidz2 8")  # type: ignore[attr-defined]
    at.multiselect(key="w_workloads").unselect("4k-randwrite").run()  # type: ignore[attr-defined]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _chromium_steps() -> list[tuple[str, float, str]]:
    from playwright.sync_api import sync_playwright

    port = _free_port()
    cmd = [
        sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
        "--server.headless", "true", "--server.port", str(port),
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]  # fmt: skip
    # its own empty device-table folder: the server starts as cold as the AppTest run did
    env = {**os.environ, "ZSIM_CACHE_DIR": tempfile.mkdtemp(prefix="zsim-bench-app-web-")}
    server = subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    out: list[tuple[str, float, str]] = []
    try:
        url = f"http://127.0.0.1:{port}/"
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.3)
        with sync_playwright() as p:
            args = ["--disable-dev-shm-usage"]
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                args.append("--no-sandbox")
            browser = p.chromium.launch(
                executable_path=shutil.which("chromium"), headless=True, args=args
            )
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            start = time.perf_counter()
            page.goto(url)
            page.get_by_text("Usable capacity (TB)").first.wait_for(timeout=900_000)
            page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=900_000)
            _idle(page)
            out.append(("Chromium: Design page, cold", time.perf_counter() - start, ""))
            box = page.get_by_label("Number of disks")
            box.fill("24")
            box.press("Enter")
            _idle(page)
            layout = page.get_by_label("Layout", exact=True)
            start = time.perf_counter()
            layout.fill("3x raidz2 8")
            layout.press("Enter")
            # the new design's capacity drawn, then the run (performance table) finished
            page.get_by_text(_usable_tb("3x raidz2 8"), exact=True).wait_for(timeout=900_000)
            _idle(page)
            wall = time.perf_counter() - start
            out.append(("Chromium: layout → 3x raidz2 8 on 24 disks", wall, ""))
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return out


def _usable_tb(layout: str) -> str:
    """The Design page's "Usable capacity (TB)" text for ``layout`` of the default disk."""
    import zsim

    disk = zsim.load_profile("seagate-ironwolf-12tb")
    return f"{zsim.capacity(layout, disk_size=disk.capacity).usable_bytes / 1e12:,.2f} TB"


def _idle(page: object) -> None:
    """Wait until Streamlit's "running" indicator is gone."""
    page.wait_for_timeout(200)  # type: ignore[attr-defined]
    page.locator('[data-testid="stStatusWidget"]').wait_for(  # type: ignore[attr-defined]
        state="detached", timeout=900_000
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", action="store_true", help="also time headless Chromium")
    args = parser.parse_args()
    if "ZSIM_CACHE_DIR" not in os.environ:
        os.environ["ZSIM_CACHE_DIR"] = tempfile.mkdtemp(prefix="zsim-bench-app-")
    print(f"device tables: {os.environ['ZSIM_CACHE_DIR']}")
    rows = _apptest_steps()
    if args.chromium:
        rows += _chromium_steps()
    for what, wall, errors in rows:
        print(f"{what:<52} {wall:8.2f} s  {errors}")


if __name__ == "__main__":
    main()
