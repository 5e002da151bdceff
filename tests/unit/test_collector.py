"""The cyclic garbage collector is off while an event loop runs and back after
(:mod:`zsim.machine.collector`); pausing it changes no figure."""

from __future__ import annotations

import gc
import threading

import pytest
import simpy

import zsim
from zsim.machine.collector import collector_paused
from zsim.machine.run_guard import RunGuard, run_until
from zsim.scenario import scenario_from_dict


@pytest.fixture(autouse=True)
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_paused_inside_and_restored_after_even_on_error():
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_overlapping_threads_leave_it_on_whichever_ends_first():
    inside = threading.Barrier(2)
    first_out = threading.Event()
    states: list[bool] = []

    def early() -> None:
        with collector_paused():
            inside.wait()
        first_out.set()

    def late() -> None:
        with collector_paused():
            inside.wait()
            first_out.wait()
            states.append(gc.isenabled())  # the other thread left: still paused for this one

    threads = [threading.Thread(target=early), threading.Thread(target=late)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert states == [False]
    assert gc.isenabled()


def test_run_until_pauses_it_only_while_the_events_run():
    env = simpy.Environment()
    seen: list[bool] = []
    env.process(_probe(env, seen))
    run_until(env, 1.0, RunGuard(max_wall_seconds=60.0))
    assert seen == [False]
    assert gc.isenabled()


def _probe(env: simpy.Environment, seen: list[bool]):
    yield env.timeout(0.5)
    seen.append(gc.isenabled())


def test_a_run_gives_the_same_figures_with_the_collector_running_throughout(monkeypatch):
    sc = scenario_from_dict(
        {
            "hardware": {"disk": "samsung-870-evo-500gb", "ram": "8GiB"},
            "pool": {"layout": "raidz1 4", "recordsize": "16K"},
            "workload": {"rw": "randread", "bs": "16K", "numjobs": 4, "size": "4GiB"},
        }
    )
    kwargs = {"engine": "des", "seed": 3, "max_sim_seconds": 0.3, "max_wall_seconds": 120.0}
    paused = zsim.simulate(sc, **kwargs)
    monkeypatch.setattr("gc.disable", lambda: None)  # the pause does nothing now
    running = zsim.simulate(sc, **kwargs)
    assert running.read.iops == paused.read.iops
    assert running.read.latency_p99 == paused.read.latency_p99
    assert running.utilization == paused.utilization


def test_the_api_leaves_the_collector_as_it_found_it():
    sc = scenario_from_dict(
        {
            "hardware": {"disk": "samsung-870-evo-500gb", "ram": "8GiB"},
            "pool": {"layout": "mirror 2"},
            "workload": {"rw": "randread", "bs": "16K", "size": "4GiB"},
        }
    )
    zsim.simulate(sc, engine="analytic")
    assert gc.isenabled()
    gc.disable()
    zsim.simulate(sc, engine="analytic")
    assert not gc.isenabled()
