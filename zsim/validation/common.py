"""What every reference set shares: where the bundled data is, and the error of a figure.

The reference data is ``calibration/reference`` of a checkout, shipped in the wheel as
``zsim/reference`` (``pyproject.toml``, force-include).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

# where the bundled data is: defined with the prediction classes, whose residuals file is
# part of it and which zsim.simulate (lower in the layers) reads
from zsim.scenario.accuracy import reference_root

__all__ = ["median_abs", "reference_root", "relative_error"]


def relative_error(predicted: float, measured: float) -> float:
    """(predicted − measured) ÷ measured: the signed error every table prints."""
    return (predicted - measured) / measured


def median_abs(errors: Iterable[float]) -> float:
    """Median of the absolute errors."""
    return statistics.median(abs(e) for e in errors)
