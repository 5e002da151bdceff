"""Resilver simulations off the page's critical path (no Streamlit here).

The Design page's performance figures come from the analytic engine in about a second, but
its resilver time is a discrete-event scan of the pool (:func:`zsim.resilver.run.
simulate_resilver`): 3-6 s for a new design on this project's 2-core machines. So the page
hands the resilver to :class:`ResilverJobs` — one worker *process* (a thread would share the
GIL with the page and slow its own figures down), results kept by (scenario TOML, seed) —
shows the capacity and performance at once, and the resilver when it is ready. A planner who
changes the design again before it is ready does not wait for it either: jobs not yet started
for designs no longer shown are cancelled (:meth:`ResilverJobs.keep_only`). The "Grow this
pool" page's reflow (:func:`grow_of_request`, a discrete-event copy of the vdev) runs the same
way in :class:`GrowJobs`.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import sys
import threading
import time
import types
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any


def resilver_of_toml(scenario_toml: str, seed: int) -> Any:
    """``zsim.resilver`` of a canonical scenario TOML (runs in the worker process)."""
    import tomllib

    from zsim.resilver.run import simulate_resilver
    from zsim.scenario import scenario_from_dict

    sc = scenario_from_dict(tomllib.loads(scenario_toml), source="the app's resilver")
    return simulate_resilver(sc, seed=seed)


def remember_resilver_of_toml(scenario_toml: str, seed: int, result: Any) -> None:
    """Keep a worker's :func:`resilver_of_toml` in this process's memo of
    :func:`zsim.resilver.run.simulate_resilver` (the same call here then answers at once)."""
    import tomllib

    from zsim.resilver.run import remember_resilver
    from zsim.scenario import scenario_from_dict

    sc = scenario_from_dict(tomllib.loads(scenario_toml), source="the app's resilver")
    remember_resilver(sc, result, seed)


@functools.lru_cache(maxsize=256)
def fast_resilver(scenario_toml: str, seed: int) -> Any | None:
    """The analytic resilver of a canonical scenario TOML (milliseconds once its device
    tables are warm), or ``None`` where that engine declines (a dRAID distributed spare,
    md on HDDs, …: the background worker then simulates it)."""
    import tomllib

    from zsim.analytic.validity import OutOfRange
    from zsim.resilver.run import simulate_resilver
    from zsim.scenario import scenario_from_dict

    sc = scenario_from_dict(tomllib.loads(scenario_toml), source="the app's resilver")
    try:
        return simulate_resilver(sc, seed=seed, engine="analytic")
    except OutOfRange:
        return None


def grow_of_request(request: str, seed: int) -> Any:
    """``zsim.grow`` with its reflow simulated, of a request that
    :func:`zsim.app.grow_view.request_key` wrote (runs in the worker process)."""
    from zsim.app.grow_view import run_request

    return run_request(request, seed, reflow=True)


@contextlib.contextmanager
def _neutral_main() -> Iterator[None]:
    """A spawned worker re-imports the parent's ``__main__`` module by its file — under
    Streamlit that is the running page script (Streamlit puts it in ``sys.modules``), which
    would run the whole app in the worker. While a worker starts, ``__main__`` is an empty
    module with neither a file nor a spec, so the worker imports nothing of the parent's."""
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


class ResilverJobs:
    """Resilver runs in one worker process, by (scenario TOML, seed); finished results are
    kept (least recently used dropped past ``capacity``). Thread-safe."""

    def __init__(
        self,
        capacity: int = 128,
        run: Callable[[str, int], Any] = resilver_of_toml,
        remember: Callable[[str, int, Any], None] | None = remember_resilver_of_toml,
    ) -> None:
        self.capacity = capacity
        self._run = run  # a module-level function: the worker imports it by name
        # what this process does with a finished result (a resilver: the library's memo)
        self._remember = remember
        self._remembered: set[tuple[str, int]] = set()
        self._jobs: OrderedDict[tuple[str, int], Future[Any]] = OrderedDict()
        self._started: dict[tuple[str, int], float] = {}
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # spawn: a fresh interpreter, safe beside the server's threads (fork is not)
            self._pool = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn")
            )
        return self._pool

    def submit(self, scenario_toml: str, seed: int = 1) -> None:
        """Start (queue) the resilver of ``scenario_toml`` unless it is known."""
        key = (scenario_toml, seed)
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and not job.cancelled():
                self._jobs.move_to_end(key)
                return
            with _neutral_main():  # the first submit starts the worker process
                self._jobs[key] = self._executor().submit(self._run, scenario_toml, seed)
            self._started[key] = time.monotonic()
            while len(self._jobs) > self.capacity:
                old, _ = self._jobs.popitem(last=False)
                self._remembered.discard(old)
                self._started.pop(old, None)

    def result(self, scenario_toml: str, seed: int = 1) -> Any | None:
        """The finished result, or ``None`` while it runs (or was never submitted). A run
        that failed raises its exception here (a :class:`zsim.ZsimError` names the fix)."""
        with self._lock:
            job = self._jobs.get((scenario_toml, seed))
        if job is None or not job.done() or job.cancelled():
            return None
        result = job.result()
        key = (scenario_toml, seed)
        if self._remember is not None and key not in self._remembered:
            self._remember(scenario_toml, seed, result)
            with self._lock:
                self._remembered.add(key)
        return result

    def running_for(self, scenario_toml: str, seed: int = 1) -> float:
        """Seconds since the job was submitted (0 when it is not known)."""
        with self._lock:
            started = self._started.get((scenario_toml, seed))
        return 0.0 if started is None else time.monotonic() - started

    def keep_only(self, wanted: set[tuple[str, int]]) -> None:
        """Cancel queued (not yet started) jobs that are not ``wanted``: the designs the
        planner has moved on from."""
        with self._lock:
            for key, job in list(self._jobs.items()):
                if key not in wanted and not job.done() and job.cancel():
                    del self._jobs[key]
                    self._started.pop(key, None)

    def shutdown(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None


class GrowJobs(ResilverJobs):
    """The "Grow this pool" page's reflow simulations (:func:`grow_of_request`), in their own
    worker process, by (request, seed): the same queue, cache and cancelling as the
    resilvers'."""

    def __init__(self, capacity: int = 64) -> None:
        super().__init__(capacity, run=grow_of_request, remember=None)
