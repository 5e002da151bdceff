"""Run the points of a sweep: in this process, in local processes, or on a Dask cluster.

:func:`run_points` evaluates every :class:`~zsim.sweep.point.SweepPoint` (by default with
:func:`~zsim.sweep.point.evaluate_point`) and returns one row per point, ordered by
``point.index``. Each point carries its own seed, so the rows are the same whichever way the
points ran and in whichever order they finished.

Where the points run:

* ``scheduler`` given (``"tcp://host:8786"``), or else the environment variable
  ``DASK_SCHEDULER_ADDRESS`` set: on that Dask cluster through ``distributed.Client``
  (``pip install "zsim[dist]"``; the workers need zsim installed too). ``scheduler="local"``
  runs locally whatever the environment says.
* otherwise in ``workers`` local processes (``concurrent.futures.ProcessPoolExecutor``,
  started with ``spawn``), or in this process when ``workers=1`` or there is only one task.

Cheap points are sent in chunks (see :func:`chunk_points`) so that thousands of
millisecond-scale analytic or baseline points do not drown in per-task overhead; DES points,
which take seconds each, are sent one per task and first, so the slow ones start early.

**Results file (resume).** With ``results_path`` every finished row is appended to a
JSON-lines file as soon as it arrives (written, flushed and fsynced once per arriving
chunk), so a killed sweep loses at most the chunks that were running. The format:

* UTF-8 text, one JSON object per line, each line ending in ``\\n``; nothing else (no header).
* Each object is one row exactly as :func:`run_points` returns it (for
  :func:`~zsim.sweep.point.evaluate_point`: ``index``, ``key``, the labels, ``engine``,
  ``seed``, ``read_bytes_per_s`` …, ``limit``, ``ci_rel``, ``error``; SI units). ``key`` (a
  string, :attr:`SweepPoint.key`: a hash of scenario, engine, seed and sim-time cap) and
  ``index`` are always present. Non-finite floats are written as ``NaN``/``Infinity`` as
  Python's :mod:`json` does; other values JSON cannot hold are written as strings.
* Lines are in the order the rows finished, not by index. A file may hold rows of points that
  are no longer in the sweep (they are ignored and kept); when a key appears more than once
  the last row wins.

On start, rows whose ``key`` matches a point of the sweep are reused (with ``index`` set to
the point's current index) and those points are not run again. A last line without its
``\\n`` (the process was killed while writing it) is cut off the file and its point re-run. Any
other line that is not a JSON object with a string ``key`` stops the run with a
:class:`~zsim.errors.ZsimError` naming the line, rather than appending to a file that is not
a results file. When a results file is used, the returned rows are read back from their JSON
lines, so a resumed sweep returns exactly what an uninterrupted one does.

**Errors.** :func:`~zsim.sweep.point.evaluate_point` turns a :class:`~zsim.errors.ZsimError`
of one point into a row with ``error`` set. Any other exception raised while evaluating a
point stops the sweep with a :class:`~zsim.errors.ZsimError` naming the point's index and
labels and the original message (the worker's traceback is attached as a note), after the
rows finished so far were saved; a rerun with the same results file resumes from there.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import IO, Any

from zsim.errors import ZsimError
from zsim.files import RESULTS_LIMIT, read_bytes
from zsim.sweep.point import SweepPoint, evaluate_point

#: Environment variable naming the Dask scheduler when ``scheduler`` is not given.
SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"
#: Seconds to wait for the Dask scheduler to answer before giving up.
CONNECT_TIMEOUT_SECONDS = 10.0
#: Chunks per worker the cheap points are cut into (more chunks balance the load better,
#: fewer cost less per-task overhead).
CHUNKS_PER_WORKER = 4
#: Most points in one chunk (bounds the work lost to a crash and the gap between progress
#: updates: 256 analytic points of ~1 ms each is a quarter of a second).
MAX_CHUNK = 256
#: Engines whose points take seconds each and are sent one per task.
EXPENSIVE_ENGINES = frozenset({"des"})

Evaluate = Callable[[SweepPoint], dict[str, Any]]
# What a worker sends back for a chunk: the rows finished (in chunk order) and, if a point
# raised, (its index, exception type name, message, traceback text).
_Failure = tuple[int, str, str, str]
_ChunkResult = tuple[list[dict[str, Any]], _Failure | None]


# ------------------------------------------------------------------ public entry point


def run_points(
    points: Sequence[SweepPoint],
    *,
    evaluate: Evaluate = evaluate_point,
    scheduler: str | None = None,
    results_path: str | Path | None = None,
    workers: int | None = None,
    progress: bool | None = None,
) -> list[dict[str, Any]]:
    """Evaluate every point and return the rows ordered by ``point.index``.

    Args:
        points: the sweep.
        evaluate: the function run on each point (module-level, so it pickles by reference).
        scheduler: a Dask scheduler address (``"tcp://host:8786"``); ``None`` uses the
            environment variable ``DASK_SCHEDULER_ADDRESS`` when set, else local processes;
            ``"local"`` always runs locally.
        results_path: a JSON-lines file of finished rows (see the module docstring): rows
            already there are reused, new ones are appended as they finish.
        workers: local processes (ignored on Dask); ``None`` → :func:`os.cpu_count`;
            ``1`` → run in this process.
        progress: show a progress bar on stderr (done/total and ETA); ``None`` → only when
            stderr is a terminal.

    Raises:
        ZsimError: Dask asked for but not installed or not reachable; a results file that is
            not one; a point whose evaluation raised (naming its index and labels).
    """
    if workers is not None and workers < 1:
        raise ZsimError(f"workers must be at least 1, not {workers}; use 1 to run in-process")
    address = _scheduler_address(scheduler)
    store = _ResultStore(Path(results_path)) if results_path is not None else None
    rows: dict[int, dict[str, Any]] = {}  # position in `points` → row
    todo: list[tuple[int, SweepPoint]] = []
    saved = store.load() if store is not None else {}
    for pos, point in enumerate(points):
        old = saved.get(point.key)
        if old is not None:
            rows[pos] = {**old, "index": point.index}
        else:
            todo.append((pos, point))

    show = _stderr_is_terminal() if progress is None else progress
    bar = _make_progress(len(points), len(rows)) if show and points else None
    try:
        if todo:
            if store is not None:
                store.open()
            sink = _Sink(rows, store, bar)
            if address is not None:
                _run_dask(todo, evaluate, address, sink)
            else:
                n_workers = workers if workers is not None else (os.cpu_count() or 1)
                _run_local(todo, evaluate, n_workers, sink)
    finally:
        if bar is not None:
            bar.close()
        if store is not None:
            store.close()
    return [rows[pos] for pos in sorted(rows, key=lambda pos: (points[pos].index, pos))]


def chunk_points(points: Sequence[SweepPoint], workers: int) -> list[list[SweepPoint]]:
    """Cut the points into tasks: each expensive (DES) point alone, first; the cheap ones in
    chunks of ``ceil(n / (workers × CHUNKS_PER_WORKER))`` points, at most ``MAX_CHUNK``."""
    return [[p for _, p in chunk] for chunk in _tagged_chunks(list(enumerate(points)), workers)]


def _chunk_size(n_cheap: int, workers: int) -> int:
    return max(1, min(MAX_CHUNK, math.ceil(n_cheap / (max(1, workers) * CHUNKS_PER_WORKER))))


# ------------------------------------------------------------------ the worker side


def _run_chunk(evaluate: Evaluate, chunk: Sequence[SweepPoint]) -> _ChunkResult:
    """Evaluate a chunk in a worker; stop at the first point that raises and report it."""
    rows: list[dict[str, Any]] = []
    for point in chunk:
        try:
            row = evaluate(point)
            if not isinstance(row, dict):
                raise TypeError(f"evaluate returned {type(row).__name__}, not a dict row")
        except Exception as err:
            return rows, (point.index, type(err).__name__, str(err), traceback.format_exc())
        rows.append(row)
    return rows, None


# ------------------------------------------------------------------ the parent side


class _Sink:
    """Takes the rows of finished chunks: keeps them, saves them, advances the bar."""

    def __init__(
        self, rows: dict[int, dict[str, Any]], store: _ResultStore | None, bar: _Progress | None
    ) -> None:
        self.rows = rows
        self.store = store
        self.bar = bar

    def take(self, chunk: Sequence[tuple[int, SweepPoint]], result: _ChunkResult) -> None:
        """Keep and save the finished rows; raise the point's ZsimError if one failed."""
        done, failure = result
        finished = []
        for (pos, point), row in zip(chunk, done, strict=False):
            finished.append((pos, {**row, "index": point.index, "key": point.key}))
        if self.store is not None:
            finished = self.store.append(finished)
        self.rows.update(finished)
        if self.bar is not None and finished:
            self.bar.advance(len(finished))
        if failure is not None:
            raise _point_error(chunk[len(done)][1], failure)


def _point_error(point: SweepPoint, failure: _Failure) -> ZsimError:
    _index, kind, message, tb = failure
    err = ZsimError(
        f"sweep point {point.index} ({_labels_text(point)}) failed: {kind}: {message}; "
        "fix the cause and rerun (finished rows are kept when a results file is used)"
    )
    err.add_note("worker traceback:\n" + tb.rstrip())
    return err


def _chunk_error(
    chunk: Sequence[tuple[int, SweepPoint]], err: BaseException, where: str
) -> ZsimError:
    points = [p for _, p in chunk]
    which = (
        f"sweep point {points[0].index} ({_labels_text(points[0])})"
        if len(points) == 1
        else f"sweep points {points[0].index}…{points[-1].index}"
    )
    return ZsimError(
        f"{which} could not run {where}: {type(err).__name__}: {err}; the evaluate function "
        "must be a module-level function importable there, and zsim installed where it runs"
    )


def _labels_text(point: SweepPoint) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.labels.items()) or "no labels"


def _tagged_chunks(
    todo: Sequence[tuple[int, SweepPoint]], workers: int
) -> list[list[tuple[int, SweepPoint]]]:
    """:func:`chunk_points` over ``(position, point)`` pairs."""
    heavy = [item for item in todo if item[1].engine in EXPENSIVE_ENGINES]
    light = [item for item in todo if item[1].engine not in EXPENSIVE_ENGINES]
    size = _chunk_size(len(light), workers)
    return [[item] for item in heavy] + [light[i : i + size] for i in range(0, len(light), size)]


def _inline_chunks(
    todo: Sequence[tuple[int, SweepPoint]],
) -> list[list[tuple[int, SweepPoint]]]:
    """Runs of consecutive points in index order: each DES point alone, cheap ones up to
    :func:`chunk_points`'s size for one worker."""
    ordered = sorted(todo, key=lambda item: item[1].index)
    size = _chunk_size(sum(p.engine not in EXPENSIVE_ENGINES for _, p in ordered), 1)
    chunks: list[list[tuple[int, SweepPoint]]] = []
    chunk: list[tuple[int, SweepPoint]] = []
    for item in ordered:
        heavy = item[1].engine in EXPENSIVE_ENGINES
        if chunk and (heavy or len(chunk) >= size):
            chunks.append(chunk)
            chunk = []
        chunk.append(item)
        if heavy:
            chunks.append(chunk)
            chunk = []
    return [*chunks, chunk] if chunk else chunks


def _run_local(
    todo: Sequence[tuple[int, SweepPoint]], evaluate: Evaluate, workers: int, sink: _Sink
) -> None:
    chunks = _tagged_chunks(todo, workers)
    if workers == 1 or len(chunks) <= 1:
        # In this process, in index order (a failure leaves exactly the points before it
        # done), in chunks of consecutive points so the results file is synced per chunk.
        for chunk in _inline_chunks(todo):
            sink.take(chunk, _run_chunk(evaluate, [p for _, p in chunk]))
        return
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(chunks)), mp_context=context, initializer=_worker_init
    )
    pending: dict[Future[_ChunkResult], list[tuple[int, SweepPoint]]] = {}
    error: BaseException | None = None
    try:
        for chunk in chunks:
            pending[pool.submit(_run_chunk, evaluate, [p for _, p in chunk])] = chunk
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                chunk = pending.pop(future)
                if future.cancelled():
                    continue
                try:
                    sink.take(chunk, _local_result(future, chunk))
                except ZsimError as err:
                    # Stop: start nothing new, but keep the rows of the chunks still running
                    # (the pool cannot stop them anyway); report the first failure.
                    if error is None:
                        error = err
                        for other in pending:
                            other.cancel()
        if error is not None:
            raise error
    except BaseException as err:
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        if not isinstance(err, Exception):  # Ctrl-C: stop the running points now
            for process in processes:
                process.terminate()
        raise
    pool.shutdown(wait=True)


def _worker_init() -> None:
    """In each local worker: leave Ctrl-C to the parent, which stops the workers itself
    (otherwise every worker prints its own KeyboardInterrupt traceback)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _local_result(
    future: Future[_ChunkResult], chunk: Sequence[tuple[int, SweepPoint]]
) -> _ChunkResult:
    try:
        return future.result()
    except BrokenProcessPool as err:
        raise ZsimError(
            "a worker process died (killed, or out of memory?) while running sweep points "
            f"{', '.join(str(p.index) for _, p in chunk)}; rerun (with a results file, "
            "finished points are not run again) or use fewer workers"
        ) from err
    except Exception as err:
        raise _chunk_error(chunk, err, "in a local process") from err


#: Address schemes of Dask's network transports, whose location is ``HOST:PORT``.
_HOST_PORT_SCHEMES = frozenset({"tcp", "tls", "ws", "wss", "ucx"})
#: Other schemes Dask knows (their location is not checked here).
_OTHER_SCHEMES = frozenset({"inproc"})
_LOCAL_HINT = "or drop --scheduler / unset DASK_SCHEDULER_ADDRESS to run locally"


def _scheduler_address(scheduler: str | None) -> str | None:
    source = "--scheduler"
    if scheduler is None:
        scheduler = os.environ.get(SCHEDULER_ENV) or None
        source = SCHEDULER_ENV
    if scheduler is None or scheduler.strip().lower() == "local":
        return None
    address = scheduler.strip()
    _check_address_form(address, source)
    return address


def _check_address_form(address: str, source: str) -> None:
    """Refuse an address Dask could not parse, before any thread or connection is started."""
    problem = _address_problem(address)
    if problem is not None:
        raise ZsimError(
            f"{source} {address!r} is not a Dask scheduler address ({problem}); give it as "
            f"tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786 or tcp://[::1]:8786), {_LOCAL_HINT}"
        )


def _split_address(address: str) -> tuple[str, str]:
    scheme, sep, location = address.partition("://")
    return (scheme.lower(), location) if sep else ("tcp", address)


def _address_problem(address: str) -> str | None:
    scheme, location = _split_address(address)
    if scheme in _OTHER_SCHEMES:
        return None if location else "nothing after the scheme"
    if scheme not in _HOST_PORT_SCHEMES:
        known = ", ".join(sorted(_HOST_PORT_SCHEMES | _OTHER_SCHEMES))
        return f"unknown scheme {scheme!r}; known: {known}"
    try:
        _host_port(location)
    except ValueError as err:
        return str(err)
    return None


def _host_port(location: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``[IPV6]:PORT`` → (host, port); ValueError saying what is wrong."""
    if location.startswith("["):
        host, sep, rest = location[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise ValueError("a bracketed IPv6 host needs ]:PORT after it, as in [::1]:8786")
        port_text = rest[1:]
    else:
        host, sep, port_text = location.rpartition(":")
        if not sep:
            raise ValueError("no port; the scheduler's default is 8786")
        if ":" in host:
            raise ValueError("an IPv6 host needs brackets, as in [::1]:8786")
    if not host:
        raise ValueError("no host before the port")
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ValueError(f"port {port_text!r} is not a number from 1 to 65535")
    return host, int(port_text)


def _check_reachable(address: str) -> None:
    """Open (and close) a plain TCP connection to the scheduler, so that a refused port or an
    unknown host fails at once with one line instead of after Dask's retries."""
    scheme, location = _split_address(address)
    if scheme not in _HOST_PORT_SCHEMES - {"ucx"}:
        return
    host, port = _host_port(location)
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_SECONDS):
            pass
    except OSError as err:
        if isinstance(err, ConnectionRefusedError):
            why = "connection refused: nothing listens on that port"
        elif isinstance(err, socket.gaierror):
            why = f"unknown host {host!r}"
        elif isinstance(err, TimeoutError):
            why = f"no answer within {CONNECT_TIMEOUT_SECONDS:g} s"
        else:
            why = err.strerror or str(err)
        raise ZsimError(
            f"cannot reach the Dask scheduler at {address} ({why}); start it (dask scheduler, "
            "then dask worker ADDRESS on each machine), check the host and port "
            f"(tcp://host:8786), {_LOCAL_HINT}"
        ) from None


def _dask_client(address: str) -> Any:
    try:
        from distributed import Client
    except ImportError as err:
        raise ZsimError(
            f"running a sweep on the Dask scheduler {address} needs the 'distributed' "
            'package; pip install "zsim[dist]" (or unset DASK_SCHEDULER_ADDRESS / drop '
            "--scheduler to run locally)"
        ) from err
    _check_reachable(address)
    try:
        return Client(address, timeout=CONNECT_TIMEOUT_SECONDS, set_as_default=False)
    except Exception as err:
        raise ZsimError(
            f"cannot reach the Dask scheduler at {address} within "
            f"{CONNECT_TIMEOUT_SECONDS:g} s ({type(err).__name__}: {err}); start it "
            "(dask scheduler, then dask worker ADDRESS on each machine), check the address "
            "and port (tcp://host:8786), or drop --scheduler / unset DASK_SCHEDULER_ADDRESS "
            "to run locally"
        ) from err


def _run_dask(
    todo: Sequence[tuple[int, SweepPoint]], evaluate: Evaluate, address: str, sink: _Sink
) -> None:
    client = _dask_client(address)
    futures: list[Any] = []
    try:
        from distributed import as_completed

        threads = sum(client.nthreads().values())  # worker threads now on the cluster
        if threads == 0:
            print(
                f"zsim: the Dask scheduler at {address} has no workers yet; the sweep waits "
                "for them (start some with: dask worker ADDRESS)",
                file=sys.stderr,
            )
        chunks = _tagged_chunks(todo, max(1, threads))
        chunk_of: dict[str, list[tuple[int, SweepPoint]]] = {}
        for chunk in chunks:
            future = client.submit(_run_chunk, evaluate, [p for _, p in chunk], pure=False)
            chunk_of[future.key] = chunk
            futures.append(future)
        for future in as_completed(futures, loop=client.loop):
            chunk = chunk_of[future.key]
            try:
                result = future.result()
            except Exception as err:
                raise _chunk_error(chunk, err, f"on the Dask cluster at {address}") from err
            sink.take(chunk, result)
    finally:
        if futures:
            client.cancel([f for f in futures if not f.done()])
        client.close()


# ------------------------------------------------------------------ results file


class _ResultStore:
    """The JSON-lines results file (format in the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file: IO[str] | None = None

    def load(self) -> dict[str, dict[str, Any]]:
        """Rows by key; cuts a last line left without its newline off the file."""
        if not os.path.lexists(self.path):
            return {}
        data = read_bytes(self.path, limit=RESULTS_LIMIT, what="results file")
        end = data.rfind(b"\n") + 1
        if end < len(data):  # killed while writing the last line: drop it, re-run its point
            try:
                with self.path.open("r+b") as f:
                    f.truncate(end)
            except OSError as err:
                raise ZsimError(f"cannot repair results file {self.path}: {err}") from err
        rows: dict[str, dict[str, Any]] = {}
        for number, line in enumerate(data[:end].decode("utf-8", "replace").split("\n"), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                row = None
            if not isinstance(row, dict) or not isinstance(row.get("key"), str):
                raise ZsimError(
                    f"{self.path}:{number} is not a sweep result (a JSON object with a "
                    "'key'); give a new results file, or delete that line to resume"
                )
            rows[row["key"]] = row
        return rows

    def open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.file = self.path.open("a", encoding="utf-8", newline="\n")
        except OSError as err:
            raise ZsimError(
                f"cannot write results file {self.path}: {err}; give a writable path"
            ) from err

    def append(self, rows: Iterable[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict]]:
        """Write the rows, one line each, flush and fsync; return them as read back."""
        assert self.file is not None
        out = []
        lines = []
        for pos, row in rows:
            line = json.dumps(row, default=_json_default)
            lines.append(line + "\n")
            out.append((pos, json.loads(line)))
        if lines:
            self.file.write("".join(lines))
            self.file.flush()
            os.fsync(self.file.fileno())
        return out

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


def _json_default(value: Any) -> Any:
    """numpy scalars as Python numbers; anything else JSON cannot hold as its text."""
    item = getattr(value, "item", None)
    if callable(item):
        try:
            return item()
        except (TypeError, ValueError):
            pass
    return str(value)


# ------------------------------------------------------------------ progress


class _Progress:
    """A progress line on stderr: done/total, and ETA from the points run so far."""

    def __init__(self, total: int, done: int) -> None:
        self.total = total
        self.done = done
        self.start_done = done
        self.start = time.monotonic()

    def eta_seconds(self) -> float | None:
        """Seconds left at the rate of the points finished in this run; None before one."""
        ran = self.done - self.start_done
        if ran <= 0:
            return None
        return (time.monotonic() - self.start) / ran * (self.total - self.done)

    def eta_text(self) -> str:
        eta = self.eta_seconds()
        if eta is None:
            return "ETA --:--"
        minutes, seconds = divmod(round(eta), 60)
        hours, minutes = divmod(minutes, 60)
        return (
            f"ETA {hours:d}:{minutes:02d}:{seconds:02d}"
            if hours
            else f"ETA {minutes:02d}:{seconds:02d}"
        )

    def advance(self, n: int) -> None:
        self.done += n

    def close(self) -> None:
        pass


class _TextProgress(_Progress):
    """Plain ``sweep 12/40 points  ETA 01:23`` rewritten in place (at most 4 times a second)."""

    def __init__(self, total: int, done: int, stream: IO[str] | None = None) -> None:
        super().__init__(total, done)
        self.stream = stream if stream is not None else sys.stderr
        self.last = 0.0
        self._draw()

    def _draw(self) -> None:
        self.stream.write(f"\rsweep {self.done}/{self.total} points  {self.eta_text()}   ")
        self.stream.flush()
        self.last = time.monotonic()

    def advance(self, n: int) -> None:
        super().advance(n)
        if self.done >= self.total or time.monotonic() - self.last >= 0.25:
            self._draw()

    def close(self) -> None:
        self._draw()
        self.stream.write("\n")
        self.stream.flush()


class _RichProgress(_Progress):
    def __init__(self, total: int, done: int) -> None:
        super().__init__(total, done)
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.bar = Progress(
            TextColumn("sweep"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("points  {task.fields[eta]}"),
            console=Console(stderr=True),
        )
        self.task = self.bar.add_task("sweep", total=total, completed=done, eta=self.eta_text())
        self.bar.start()

    def advance(self, n: int) -> None:
        super().advance(n)
        self.bar.update(self.task, completed=self.done, eta=self.eta_text())

    def close(self) -> None:
        self.bar.stop()


class _TqdmProgress(_Progress):
    def __init__(self, total: int, done: int) -> None:
        super().__init__(total, done)
        from tqdm import tqdm

        self.bar = tqdm(total=total, initial=done, file=sys.stderr, unit="point", desc="sweep")

    def advance(self, n: int) -> None:
        super().advance(n)
        self.bar.update(n)

    def close(self) -> None:
        self.bar.close()


def _stderr_is_terminal() -> bool:
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def _make_progress(total: int, done: int) -> _Progress:
    """rich if installed, else tqdm, else a plain text line."""
    for kind in (_RichProgress, _TqdmProgress):
        try:
            return kind(total, done)
        except ImportError:
            continue
    return _TextProgress(total, done)
