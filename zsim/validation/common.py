"""What every reference set shares: where the bundled data is, and the error of a figure.

The reference data is ``calibration/reference`` of a checkout, shipped in the wheel as
``zsim/reference`` (``pyproject.toml``, force-include).
"""

from __future__ import annotations

import importlib.resources
import statistics
from collections.abc import Iterable
from importlib.resources.abc import Traversable
from pathlib import Path


def reference_root() -> Traversable:
    """``calibration/reference`` of the checkout, or ``zsim/reference`` inside the wheel."""
    packaged = importlib.resources.files("zsim").joinpath("reference")
    if packaged.is_dir():
        return packaged
    # zsim/validation/common.py: parents[2] is the checkout's root
    return Path(__file__).resolve().parents[2] / "calibration" / "reference"


def relative_error(predicted: float, measured: float) -> float:
    """(predicted − measured) ÷ measured: the signed error every table prints."""
    return (predicted - measured) / measured


def median_abs(errors: Iterable[float]) -> float:
    """Median of the absolute errors."""
    return statistics.median(abs(e) for e in errors)
