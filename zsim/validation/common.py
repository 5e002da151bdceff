"""What every reference set shares: where the bundled data is, and the error of a figure.

The reference data is ``calibration/reference`` of a checkout, shipped in the wheel as
``zsim/reference`` (``pyproject.toml``, force-include).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

# where the bundled data is: defined with the prediction classes, whose residuals file is
# part of it and which zsim.simulate (lower in the layers) reads
from zsim.scenario.accuracy import reference_root

__all__ = ["map_runs", "median_abs", "reference_root", "relative_error"]

_In = TypeVar("_In")
_Out = TypeVar("_Out")


def map_runs(
    run: Callable[[_In], _Out], items: Sequence[_In], workers: int | None = None
) -> list[_Out]:
    """``run`` of each item, in order: a validation set's runs are independent and seeded, so
    they go one process per core at once (``workers``, default the cores; 1 or one item: in
    this process) and give the same answers as one after another. ``run`` must be a
    module-level function (the processes import it)."""
    count = min(len(items), workers or os.cpu_count() or 1)
    if count < 2:
        return [run(item) for item in items]
    with ProcessPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, items))


def relative_error(predicted: float, measured: float) -> float:
    """(predicted − measured) ÷ measured: the signed error every table prints."""
    return (predicted - measured) / measured


def median_abs(errors: Iterable[float]) -> float:
    """Median of the absolute errors."""
    return statistics.median(abs(e) for e in errors)
