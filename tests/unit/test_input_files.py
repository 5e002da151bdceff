"""Every file zsim reads goes through :mod:`zsim.files` (issue 19, item 2): regular files only,
a size limit per kind, one clear error naming the file, the limit and the fix, and never a
quote of the file's content."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from zsim.cli import main
from zsim.errors import ZsimError
from zsim.files import TOML_LIMIT, read_bytes, read_text


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    err = capsys.readouterr().err
    return code, err


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def test_reader_refuses_devices_fifos_folders_and_big_files(tmp_path, fifo):
    for path, words in (
        ("/dev/full", "character device, not a regular file"),
        ("/dev/zero", "character device"),
        (fifo, "fifo, not a regular file"),
        (tmp_path, "is a folder"),
        (tmp_path / "none", "does not exist"),
        ("/proc/self/mem", "cannot be read"),
    ):
        with pytest.raises(ZsimError, match=words):
            read_bytes(path, limit=100, what="scenario file")
    big = tmp_path / "big.toml"
    with open(big, "wb") as handle:
        handle.truncate(1500 * 2**20)  # sparse: 1.5 GB that takes no room
    with pytest.raises(ZsimError, match=r"larger than the 16 MiB .*give a smaller file"):
        read_bytes(big, limit=TOML_LIMIT, what="scenario file")
    (tmp_path / "bin").write_bytes(b"ok\xff\xfe")
    with pytest.raises(ZsimError, match="not UTF-8 text") as err:
        read_text(tmp_path / "bin", limit=100)
    assert "ok" not in str(err.value).split("(")[-1]


def test_sweep_results_must_be_a_regular_file(capsys, fifo):
    for results in ("/dev/full", str(fifo)):
        code, err = run(
            capsys, "sweep", "--disks", "4", "--disk", "seagate-ironwolf-12tb", "--results", results
        )
        assert code == 2 and err.count("\n") == 1 and "not a regular file" in err, err


def test_scenario_fifo_and_huge_file_are_refused(capsys, tmp_path, fifo):
    code, err = run(capsys, "simulate", str(fifo))
    assert code == 2 and "is a fifo, not a regular file" in err
    big = tmp_path / "big.toml"
    with open(big, "wb") as handle:
        handle.truncate(1500 * 2**20)
    code, err = run(capsys, "simulate", str(big))
    assert code == 2 and "larger than the 16 MiB" in err and err.count("\n") == 1


def test_a_trace_file_pointing_at_a_secret_is_not_echoed(capsys, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("root:$6$SECRETHASH:19000:0:99999:7:::\n")
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        '[pool]\nlayout = "raw 1"\n[hardware]\ndisk = "seagate-ironwolf-12tb"\n'
        f'[workload]\ntool = "trace"\nfile = "{secret}"\n'
    )
    code, err = run(capsys, "simulate", str(scenario))
    assert code == 2 and "SECRETHASH" not in err and "99999" not in err, err


def test_profiles_that_are_not_text_are_refused(capsys, tmp_path):
    binary = tmp_path / "bin.toml"
    binary.write_bytes(os.urandom(3000) + b"\xff")
    for profile, words in ((binary, "not UTF-8"), ("/proc/self/mem", "cannot be read")):
        code, err = run(capsys, "capacity", "raidz2 8", "--disk", str(profile))
        assert code == 2 and words in err and err.count("\n") == 1, err


def test_atomic_writes_follow_the_umask(tmp_path):
    from zsim.files import atomic_write_text

    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "new.txt", "x")
        assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o644
        os.umask(0o077)
        atomic_write_text(tmp_path / "other.txt", "x")
        assert (tmp_path / "other.txt").stat().st_mode & 0o777 == 0o600
        (tmp_path / "new.txt").chmod(0o640)
        atomic_write_text(tmp_path / "new.txt", "y")  # a replaced file keeps its mode
        assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(old)
