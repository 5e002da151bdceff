"""The README stays true: its two commands, its CLI output and its Python session."""

from __future__ import annotations

import doctest
import re
import subprocess
import sys

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()


def _sh_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)\n```", README, flags=re.S)


def test_readme_has_exactly_two_quick_start_commands():
    blocks = _sh_blocks()
    assert len(blocks) == 2
    assert all(len(b.strip().splitlines()) == 1 for b in blocks)


def test_ci_runs_the_readme_test_command():
    test_command = _sh_blocks()[1].strip()
    assert "pytest" in test_command
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_cli_example_output_is_real():
    block = re.search(r"```\n\$ (zsim capacity .*?)\n(.*?)\n```", README, flags=re.S)
    assert block is not None
    command, shown = block.group(1), block.group(2)
    args = re.findall(r'"[^"]*"|\S+', command)[1:]
    run = subprocess.run(
        [sys.executable, "-m", "zsim", *(a.strip('"') for a in args)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert run.stdout.strip() == shown.strip()


def test_python_session_is_real():
    session = re.search(r"```python\n(.*?)\n```", README, flags=re.S)
    assert session is not None
    parser = doctest.DocTestParser()
    test = parser.get_doctest(session.group(1), {}, "README", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0


def test_simulate_example_output_is_real():
    block = re.search(r"```\n\$ (zsim simulate \S+)\n(.*?)\n```", README, flags=re.S)
    assert block is not None
    args = block.group(1).split()[1:]
    run = subprocess.run(
        [sys.executable, "-m", "zsim", *args], capture_output=True, text=True, check=True, cwd=ROOT
    )

    # the wall time in the "precision" line differs from run to run; the "accuracy" band
    # follows the residuals file `zsim validate --all` regenerates
    def stable(text: str) -> list[str]:
        lines = text.strip().splitlines()
        return [line for line in lines if not line.startswith(("precision", "accuracy"))]

    assert stable(run.stdout) == stable(block.group(2))
