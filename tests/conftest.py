"""Shared test set-up: hypothesis profiles, paths, and the system-tool requirement rule."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"

settings.register_profile("default", deadline=None)
settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(
    "ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "default")
)


#: The files whose tests take minutes, slowest first. They are collected first and xdist hands
#: files out in collection order (``--no-loadscope-reorder`` in pyproject.toml), so they start
#: at once on both workers and the many short files fill in around them; by default xdist
#: orders files by their number of tests, which started the 9-minute agreement file last, to
#: run alone for the final minutes of CI. Only the order changes, never what runs.
SLOWEST_FILES = (
    "tests/validation/test_analytic_agreement.py",
    "tests/validation/test_analytic_agreement_sync.py",
    "tests/validation/test_ars_ironwolf8.py",
    "tests/validation/test_analytic_agreement_seqread.py",
    "tests/validation/test_ars_md.py",
    "tests/validation/test_resilver_openzfs_draid.py",
    "tests/validation/test_analytic_agreement_randrw.py",
    "tests/validation/test_clemtibs.py",
    "tests/e2e/test_calibrate_real.py",
    "tests/e2e/test_app_resilver_page.py",
    "tests/validation/test_analytic_agreement_draid.py",
    "tests/validation/test_resilver_analytic_agreement.py",
    "tests/validation/test_fast_pool_trends.py",
)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: a worker per core and one more. Part of the suite waits rather than
    computes (fio at its rate caps, the browser, the command line's subprocesses), and on
    two cores a third worker fills that time; the CPU-bound files share the cores as before.
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` sets the number."""
    given = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if given:
        return int(given)
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
    return cores + 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {path: i for i, path in enumerate(SLOWEST_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


def tools_required() -> bool:
    """True under CI (``ZSIM_REQUIRE_TOOLS=1``): a missing system tool fails instead of skipping."""
    return os.environ.get("ZSIM_REQUIRE_TOOLS") == "1"


def need_tool(name: str, why: str) -> str:
    """Return the path of system tool ``name``; skip (or, in CI, fail) when it is absent."""
    path = shutil.which(name)
    if path is None:
        message = f"needs system tool {name!r} ({why}); install it"
        if tools_required():
            pytest.fail(message + " — ZSIM_REQUIRE_TOOLS=1 forbids skipping")
        pytest.skip(message)
    return path


def need_module(name: str, why: str) -> None:
    """Skip (or, in CI, fail) when an optional Python package is not installed."""
    try:
        __import__(name)
    except ImportError:
        message = f"needs Python package {name!r} ({why}); pip install it"
        if tools_required():
            pytest.fail(message + " — ZSIM_REQUIRE_TOOLS=1 forbids skipping")
        pytest.skip(message)


def shared_reference(name: str) -> Path:
    """A folder of the project's shared reference set (``../shared/reference/NAME`` beside the
    checkout, or under ``ZSIM_SHARED_DIR``). Raw files whose licence keeps them out of the
    project are read there in place; skip without them, fail under CI (``CI`` set), where the
    reference sets must be present."""
    roots = [Path(p) for p in (os.environ.get("ZSIM_SHARED_DIR"),) if p]
    roots += [ROOT.parent / "shared", Path("/work/shared")]
    for root in roots:
        folder = root / "reference" / name
        if folder.is_dir():
            return folder
    message = (
        f"needs the shared reference set {name!r} (../shared/reference/{name} beside the "
        f"checkout, or ZSIM_SHARED_DIR)"
    )
    if os.environ.get("CI"):
        pytest.fail(message + " — CI forbids skipping")
    pytest.skip(message)


def artifacts_dir(name: str) -> Path:
    """The folder tests keep pictures and reports in (``$ZSIM_ARTIFACTS/name``; CI keeps
    ``.ci-artifacts/``, elsewhere a folder in the system temp), created, and printed so the
    run's output says where."""
    import tempfile

    root = Path(os.environ.get("ZSIM_ARTIFACTS") or Path(tempfile.gettempdir()) / "zsim-artifacts")
    out = root / name
    out.mkdir(parents=True, exist_ok=True)
    print(f"\n{name.replace('-', ' ')} artefacts: {out}")
    return out
