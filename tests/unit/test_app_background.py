"""The Design page's background resilver (zsim/app/background.py): the same figures as
``zsim.resilver`` of the same scenario, from a worker process; queued runs of designs the
planner left are cancelled."""

from __future__ import annotations

import time

import pytest

from zsim.app import design as model
from zsim.app.background import ResilverJobs
from zsim.resilver.run import forget_resilvers, simulate_resilver


def wait(jobs: ResilverJobs, toml: str, timeout_s: float = 300.0):
    deadline = time.monotonic() + timeout_s
    while (found := jobs.result(toml)) is None:
        assert time.monotonic() < deadline, "the background resilver did not finish"
        time.sleep(0.1)
    return found


@pytest.fixture
def jobs():
    j = ResilverJobs()
    yield j
    j.shutdown()


def test_background_resilver_gives_the_librarys_figures(jobs):
    sc = model.Design(disks=4, layout="2x mirror 2", fill=0.05).resilver_scenario()
    toml = sc.to_toml()
    assert jobs.result(toml) is None  # never submitted: nothing, and nothing starts
    jobs.submit(toml)
    jobs.submit(toml)  # idempotent
    got = wait(jobs, toml)
    # the worker's result is in this process's memo: the same call answers with it
    assert simulate_resilver(sc, seed=1) is got
    forget_resilvers()  # and simulated here, it is the same
    direct = simulate_resilver(sc, seed=1)
    assert direct is not got
    assert got.seconds == pytest.approx(direct.seconds, rel=1e-12)
    assert got.limit == direct.limit


def test_queued_runs_of_designs_left_behind_are_cancelled(jobs):
    # small fills: quick resilvers; one worker, and the executor's call queue holds two more,
    # so the fourth job and later are still pending (cancellable) when keep_only runs
    tomls = [
        model.Design(disks=4, layout=layout, fill=0.02).resilver_scenario().to_toml()
        for layout in ("2x mirror 2", "raidz1 4", "raidz2 4", "stripe 4", "mirror 4")
    ]
    for toml in tomls:
        jobs.submit(toml)
    first, left, wanted = tomls[0], tomls[3], tomls[4]
    jobs.keep_only({(first, 1), (wanted, 1)})
    assert jobs.running_for(left) == 0.0  # cancelled and forgotten
    wait(jobs, wanted)
    assert jobs.result(first) is not None
    assert jobs.result(left) is None
