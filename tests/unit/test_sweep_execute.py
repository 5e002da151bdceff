"""The sweep executor: inline, local processes and a Dask cluster give the same rows; resume
from a results file; errors name the point; the Dask scheduler address and its failures."""

from __future__ import annotations

import io
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import zsim
from tests.conftest import ROOT, need_module
from zsim.errors import ZsimError
from zsim.sweep import execute
from zsim.sweep.execute import chunk_points, run_points
from zsim.sweep.point import SweepPoint, evaluate_point, point_seeds, scenario_input

LAYOUTS = ("4x mirror 2", "raidz2 8", "2x raidz1 4", "stripe 8", "2x raidz2 4", "mirror 8")
CALLS_ENV = "ZSIM_TEST_SWEEP_CALLS"


def _points(n_baseline: int = 14, n_des: int = 3) -> list[SweepPoint]:
    """Baseline points (fast) and a few small DES points capped in *simulated* time (2 s), so
    their results do not depend on the machine's speed."""
    sc = zsim.load_scenario(ROOT / "examples/scenarios/ars-mirrors-4k-randread.toml")
    base = scenario_input(sc)
    n = n_baseline + n_des
    seeds = point_seeds(20240601, n)
    points = []
    for i in range(n):
        layout = LAYOUTS[i % len(LAYOUTS)]
        scenario = {k: dict(v) if isinstance(v, dict) else v for k, v in base.items()}
        scenario["pool"]["layout"] = layout
        scenario["workload"]["numjobs"] = 4 + i % 5
        engine = "des" if i % (n // n_des) == 1 and i // (n // n_des) < n_des else "baseline"
        labels = {"layout": layout, "numjobs": scenario["workload"]["numjobs"]}
        points.append(
            SweepPoint(
                i, scenario, engine, seeds[i], labels, max_wall_seconds=120.0, max_sim_seconds=2.0
            )
        )
    assert sum(p.engine == "des" for p in points) == n_des
    return points


# Module-level evaluate functions: they pickle by reference into processes and Dask workers.


def evaluate_counted(point: SweepPoint) -> dict[str, Any]:
    """evaluate_point, leaving one file per call in the folder named by $ZSIM_TEST_SWEEP_CALLS."""
    calls = Path(os.environ[CALLS_ENV])
    (calls / f"{point.index}-{os.getpid()}-{time.monotonic_ns()}").touch()
    return evaluate_point(point)


def evaluate_failing(point: SweepPoint) -> dict[str, Any]:
    """Raises a plain (non-zsim) exception on point 5."""
    if point.index == 5:
        raise RuntimeError("disk model exploded")
    return {"index": point.index, "value": point.seed % 1000}


def evaluate_where(point: SweepPoint) -> dict[str, Any]:
    """Says whether it ran inside a Dask worker."""
    try:
        from distributed import get_worker

        get_worker()
        on_dask = True
    except (ImportError, ValueError):
        on_dask = False
    return {"index": point.index, "on_dask": on_dask}


def _calls(folder: Path) -> list[int]:
    return sorted(int(p.name.split("-")[0]) for p in folder.iterdir())


@pytest.fixture(scope="module")
def points() -> list[SweepPoint]:
    return _points()


@pytest.fixture(scope="module")
def reference(points: list[SweepPoint]) -> list[dict[str, Any]]:
    """The rows computed in this process, one point after another."""
    return run_points(points, workers=1, progress=False)


@pytest.fixture(scope="module")
def dask_address() -> Any:
    """A real two-process Dask cluster on this machine; its scheduler address."""
    need_module("distributed", "runs sweeps on a Dask cluster; pip install 'zsim[dist]'")
    from distributed import LocalCluster

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    )
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


def test_reference_rows(points: list[SweepPoint], reference: list[dict[str, Any]]) -> None:
    assert [r["index"] for r in reference] == list(range(len(points)))
    assert [r["key"] for r in reference] == [p.key for p in points]
    for point, row in zip(points, reference, strict=True):
        assert row["error"] is None, row
        assert row["engine"] == point.engine
        assert row["read_iops"] > 0
        if point.engine == "des":
            assert row["ci_rel"] is not None


def test_des_point_is_reproducible(points: list[SweepPoint]) -> None:
    """Same seed, same sim-time cap → the same numbers (the DES is deterministic)."""
    des = next(p for p in points if p.engine == "des")
    assert evaluate_point(des) == evaluate_point(des)


def test_local_processes_match_inline(
    points: list[SweepPoint], reference: list[dict[str, Any]]
) -> None:
    shuffled = list(reversed(points))  # input order does not matter: rows come by index
    assert run_points(shuffled, workers=2, progress=False) == reference


def test_dask_matches_inline(
    points: list[SweepPoint], reference: list[dict[str, Any]], dask_address: str
) -> None:
    assert run_points(points, scheduler=dask_address, progress=False) == reference


def test_dask_scheduler_from_environment(
    points: list[SweepPoint], dask_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", dask_address)
    rows = run_points(points[:6], evaluate=evaluate_where, workers=1, progress=False)
    assert [r["on_dask"] for r in rows] == [True] * 6
    # "local" overrides the environment
    rows = run_points(points[:6], evaluate=evaluate_where, scheduler="local", workers=1)
    assert [r["on_dask"] for r in rows] == [False] * 6


def test_dask_worker_exception_names_the_point(points: list[SweepPoint], dask_address: str) -> None:
    with pytest.raises(ZsimError, match=r"sweep point 5 \(layout=mirror 8, numjobs=4\)"):
        run_points(points, evaluate=evaluate_failing, scheduler=dask_address, progress=False)


def test_unreachable_scheduler_is_a_quick_zsim_error(
    points: list[SweepPoint], monkeypatch: pytest.MonkeyPatch
) -> None:
    need_module("distributed", "runs sweeps on a Dask cluster; pip install 'zsim[dist]'")
    monkeypatch.setattr(execute, "CONNECT_TIMEOUT_SECONDS", 1.0)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    start = time.monotonic()
    with pytest.raises(ZsimError, match="cannot reach the Dask scheduler") as info:
        run_points(points[:3], scheduler=address, progress=False)
    assert time.monotonic() - start < 10
    assert address in str(info.value)
    assert "--scheduler" in str(info.value)


def test_missing_distributed_names_the_fix(
    points: list[SweepPoint], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed → ImportError
    with pytest.raises(ZsimError, match=r'pip install "zsim\[dist\]"'):
        run_points(points[:3], scheduler="tcp://127.0.0.1:8786", progress=False)


@pytest.mark.parametrize("workers", [1, 2])
def test_resume_runs_only_missing_points(
    points: list[SweepPoint],
    reference: list[dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    workers: int,
) -> None:
    results = tmp_path / "rows.jsonl"
    calls = tmp_path / "calls"
    calls.mkdir()
    monkeypatch.setenv(CALLS_ENV, str(calls))
    half = len(points) // 2
    first = run_points(points[:half], evaluate=evaluate_counted, results_path=results, workers=1)
    assert first == reference[:half]
    assert _calls(calls) == list(range(half))
    # A row of a point that is not in the sweep any more, then kill mid-write of the last line.
    data = results.read_text()
    lines = data.splitlines(keepends=True)
    assert len(lines) == half
    stranger = json.dumps({"index": 99, "key": "not-a-point", "value": 1}) + "\n"
    cut = lines[-1][: len(lines[-1]) // 2]
    results.write_text("".join(lines[:-1]) + stranger + cut)
    truncated_index = json.loads(lines[-1])["index"]
    for p in calls.iterdir():
        p.unlink()

    rows = run_points(
        points, evaluate=evaluate_counted, results_path=results, workers=workers, progress=False
    )
    assert rows == reference
    assert _calls(calls) == sorted([truncated_index, *range(half, len(points))])
    saved = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(saved) == len(points) + 1  # every point once, plus the stranger
    assert {r["key"] for r in saved} == {p.key for p in points} | {"not-a-point"}

    # Everything done: nothing runs again.
    for p in calls.iterdir():
        p.unlink()
    assert run_points(points, evaluate=evaluate_counted, results_path=results) == reference
    assert _calls(calls) == []


def test_resume_reindexes_reused_rows(points: list[SweepPoint], tmp_path: Path) -> None:
    results = tmp_path / "rows.jsonl"
    run_points(points[:4], results_path=results, workers=1)
    moved = [
        SweepPoint(
            10 + p.index,
            p.scenario,
            p.engine,
            p.seed,
            p.labels,
            p.max_wall_seconds,
            p.max_sim_seconds,
        )
        for p in points[:4]
    ]
    rows = run_points(moved, evaluate=evaluate_failing, results_path=results, workers=1)
    assert [r["index"] for r in rows] == [10, 11, 12, 13]


def test_corrupt_results_file_is_a_zsim_error(points: list[SweepPoint], tmp_path: Path) -> None:
    results = tmp_path / "rows.csv"
    results.write_text("layout,iops\nraidz2 8,79\n")
    with pytest.raises(ZsimError, match=r"rows\.csv:1 is not a sweep result"):
        run_points(points[:2], results_path=results, workers=1)


@pytest.mark.parametrize("workers", [1, 2])
def test_worker_exception_names_the_point_after_saving(
    points: list[SweepPoint], tmp_path: Path, workers: int
) -> None:
    results = tmp_path / "rows.jsonl"
    with pytest.raises(ZsimError) as info:
        run_points(
            points, evaluate=evaluate_failing, results_path=results, workers=workers, progress=False
        )
    message = str(info.value)
    assert "sweep point 5 (layout=mirror 8, numjobs=4)" in message
    assert "RuntimeError: disk model exploded" in message
    assert any("disk model exploded" in note for note in info.value.__notes__)
    saved = [json.loads(line) for line in results.read_text().splitlines()]
    assert saved, "the rows finished before the failure are saved"
    assert 5 not in {r["index"] for r in saved}
    if workers == 1:  # in order: exactly the points before the failing one
        assert sorted(r["index"] for r in saved) == list(range(5))


def test_evaluate_point_errors_become_rows() -> None:
    scenario = {
        "hardware": {"disk": "seagate-ironwolf-12tb"},
        "pool": {"layout": "raidz3 3"},
        "workload": {"tool": "fio", "rw": "randread", "bs": "4K"},
    }
    bad = SweepPoint(0, scenario, "baseline", 1, {"layout": "raidz3 3"})
    (row,) = run_points([bad], workers=1)
    assert row["error"] and "raidz3" in row["error"]


def test_chunks_batch_cheap_points_and_isolate_des() -> None:
    cheap = [SweepPoint(i, {}, "analytic", i) for i in range(1000)]
    des = [SweepPoint(1000 + i, {}, "des", i) for i in range(3)]
    chunks = chunk_points(cheap[:500] + des + cheap[500:], workers=4)
    assert chunks[:3] == [[d] for d in des]
    assert {len(c) for c in chunks[3:-1]} == {63}  # ceil(1000 / (4 workers × 4))
    assert [p for c in chunks[3:] for p in c] == cheap
    assert max(len(c) for c in chunk_points(cheap * 100, workers=1)) == execute.MAX_CHUNK
    assert chunk_points(cheap[:5], workers=8) == [[p] for p in cheap[:5]]


@pytest.mark.parametrize("workers", [1, 2])
def test_the_same_point_twice_gives_two_rows(points: list[SweepPoint], workers: int) -> None:
    rows = run_points([points[0], points[0], points[2]], evaluate=evaluate_failing, workers=workers)
    assert [r["index"] for r in rows] == [0, 0, 2]


def test_bad_workers_is_a_zsim_error(points: list[SweepPoint]) -> None:
    with pytest.raises(ZsimError, match="workers must be at least 1"):
        run_points(points, workers=0)


def test_progress_bar_on_request(points: list[SweepPoint], capsys: pytest.CaptureFixture) -> None:
    run_points(points[:4], evaluate=evaluate_failing, workers=1, progress=True)
    assert "4/4" in capsys.readouterr().err
    run_points(points[:4], evaluate=evaluate_failing, workers=1, progress=False)
    assert capsys.readouterr().err == ""


def test_text_progress_line() -> None:
    out = io.StringIO()
    bar = execute._TextProgress(10, 4, stream=out)
    assert "4/10 points  ETA --:--" in out.getvalue()
    bar.advance(6)
    bar.close()
    assert "10/10 points  ETA 00:00" in out.getvalue()
    assert out.getvalue().endswith("\n")


def test_progress_falls_back_to_text(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("rich", "rich.console", "rich.progress", "tqdm"):
        monkeypatch.setitem(sys.modules, name, None)  # import → ImportError
    bar = execute._make_progress(3, 0)
    assert isinstance(bar, execute._TextProgress)
    bar.close()


@pytest.mark.parametrize(
    ("address", "fragment"),
    [
        ("::::", "IPv6 host needs brackets"),
        ("tcp://::1:8786", "IPv6 host needs brackets"),
        ("tcp://host", "no port"),
        ("tcp://:8786", "no host"),
        ("tcp://host:99999", "1 to 65535"),
        ("tcp://host:abc", "1 to 65535"),
        ("foo://host:8786", "unknown scheme 'foo'"),
        ("tcp://[::1", "]:PORT"),
    ],
)
def test_malformed_scheduler_address_fails_before_connecting(
    points: list[SweepPoint], monkeypatch: pytest.MonkeyPatch, address: str, fragment: str
) -> None:
    def no_client(address: str) -> Any:
        raise AssertionError("tried to connect")

    monkeypatch.setattr(execute, "_dask_client", no_client)
    with pytest.raises(ZsimError, match="is not a Dask scheduler address") as info:
        run_points(points[:3], scheduler=address, progress=False)
    assert fragment in str(info.value) and repr(address) in str(info.value)
    monkeypatch.setenv(execute.SCHEDULER_ENV, address)
    with pytest.raises(ZsimError, match=execute.SCHEDULER_ENV):
        run_points(points[:3], progress=False)


@pytest.mark.parametrize(
    "address",
    [
        "tcp://127.0.0.1:8786",
        "127.0.0.1:8786",
        "tls://h:1",
        "tcp://[::1]:8786",
        "inproc://10.0.0.1/1/2",
        "local",
    ],
)
def test_wellformed_scheduler_addresses_pass_the_form_check(address: str) -> None:
    execute._scheduler_address(address)


def test_closed_port_is_refused_at_once_without_dask_retries(
    points: list[SweepPoint], monkeypatch: pytest.MonkeyPatch
) -> None:
    need_module("distributed", "runs sweeps on a Dask cluster; pip install 'zsim[dist]'")
    # the default timeout stays: a refused connection must not wait for it
    start = time.monotonic()
    with pytest.raises(ZsimError, match="connection refused") as info:
        run_points(points[:3], scheduler="tcp://127.0.0.1:1", progress=False)
    assert time.monotonic() - start < 5
    assert "tcp://127.0.0.1:1" in str(info.value) and "\n" not in str(info.value)
