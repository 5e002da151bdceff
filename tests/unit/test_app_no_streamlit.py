"""The wheel works without the ``[app]`` extra: only ``zsim.app.pages`` imports Streamlit.

Every other module of zsim, ``zsim.app``'s pure view modules included, imports in a fresh
interpreter in which ``import streamlit`` (and ``import altair``) fail as if not installed.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import zsim
from tests.conftest import ROOT

BLOCKED = ("streamlit", "altair")  # the [app] extra
SKIPPED = ("zsim.__main__",)  # runs the command line when imported


def _modules() -> list[str]:
    names = ["zsim"]
    for info in pkgutil.walk_packages(zsim.__path__, "zsim."):
        if info.name == "zsim.app.pages" or info.name.startswith("zsim.app.pages."):
            continue
        if info.name not in SKIPPED:
            names.append(info.name)
    return names


SCRIPT = """
import importlib, json, sys
for name in {blocked!r}:
    sys.modules[name] = None  # import name -> ImportError, as if not installed
failed = {{}}
for module in {modules!r}:
    try:
        importlib.import_module(module)
    except Exception as err:
        failed[module] = f"{{type(err).__name__}}: {{err}}"
print(json.dumps(failed))
"""


def test_every_module_but_the_pages_imports_without_streamlit() -> None:
    modules = _modules()
    assert "zsim.app.ui" in modules and "zsim.app.design" in modules
    assert "zsim.scenario" in modules and "zsim.cli" in modules
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(blocked=BLOCKED, modules=modules)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {}


def test_the_pages_do_need_streamlit() -> None:
    """The check above is real: the widgets module fails to import with Streamlit blocked."""
    script = SCRIPT.format(blocked=BLOCKED, modules=["zsim.app.pages.widgets"])
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert run.returncode == 0, run.stderr
    assert "streamlit" in json.loads(run.stdout)["zsim.app.pages.widgets"]
