"""Python's cyclic garbage collector, paused while an event loop runs.

Why: an engine's event loop keeps 10⁵–10⁶ objects alive (queued zios, ARC entries, the
completion log) and makes and drops millions more (events, device I/Os). Each automatic
collection walks the young generations, and each full one every live object, so the
collector took 14 % of an NVMe write run's wall time and 47 % of a 16K-record sequential
read run's (measured on the agreement draws: 10.0 → 8.6 s and 63 → 34 s, figures identical).

What it would collect there is next to nothing: SimPy clears a processed event's callbacks,
which breaks the event's only reference cycle, so events and I/Os are freed by reference
counting (about 900 cyclic objects found over a 9 s run). Memory stays bounded by the run
guard's cap (:class:`zsim.machine.run_guard.RunGuard`), which measures resident memory.

Nested and concurrent use (the app runs engines on worker threads) share one count: the
first to enter pauses the collector if it was running, the last to leave restores it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the body with automatic cyclic garbage collection off; it is back on after (if
    it was on before the outermost entry), also when the body raises."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
