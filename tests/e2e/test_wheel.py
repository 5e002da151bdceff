"""The built wheel carries the catalog, and ``zsim capacity`` runs from it outside the checkout."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, need_module

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    need_module("build", "builds the wheel")
    need_module("hatchling", "the build backend, used without isolation so no download is needed")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    (path,) = out.glob("zsim-*.whl")
    return path


def test_wheel_carries_the_catalog(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {Path(n).name for n in names if n.startswith("zsim/models/") and n.endswith(".toml")}
    in_repo = {p.name for p in (ROOT / "models").glob("*.toml")}
    assert shipped == in_repo and len(shipped) >= 14
    assert "zsim/py.typed" in names
    assert "zsim/reference/ars-ironwolf8.toml" in names  # zsim validate's data


def test_installed_wheel_runs_outside_the_checkout(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    # The test environment's site-packages (numpy, scipy, simpy) are appended to the new
    # venv's path, so nothing is downloaded. A plain path entry does not run the .pth files
    # there, so the editable zsim of the checkout stays invisible: zsim comes from the wheel.
    site_dir = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    outer = [p for p in sys.path if p.endswith("site-packages")]
    (Path(site_dir) / "zsim_test_outer.pth").write_text("\n".join(outer) + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", str(wheel)],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run(
        [str(python), "-c", "import zsim; print(zsim.__file__)"],
        check=True,
        capture_output=True,
        text=True,
        cwd=elsewhere,
    ).stdout.strip()
    assert str(env_dir) in where, f"zsim imported from {where}, not from the installed wheel"
    run = subprocess.run(
        [
            str(env_dir / "bin" / "zsim"),
            "capacity",
            "raidz2 8",
            "--disk",
            "seagate-ironwolf-12tb",
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["disk_bytes"] == 12_000_138_625_024
