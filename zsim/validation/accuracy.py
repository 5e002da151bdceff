"""How sure an answer is: :func:`prediction_class` and :func:`accuracy_for`, re-exported
from :mod:`zsim.scenario.accuracy` (where :func:`zsim.simulate`, lower in the package's
layers, reaches them) beside the report that writes the residuals they read
(:mod:`zsim.validation.report`)."""

from __future__ import annotations

from zsim.scenario.accuracy import (
    ACCURACY_ENV,
    ACCURACY_FILE,
    DEVICE_KINDS,
    LAYOUT_KINDS,
    MIN_POINTS,
    WORKLOAD_KINDS,
    Accuracy,
    accuracy_for,
    accuracy_of_class,
    accuracy_text,
    band,
    device_kind,
    layout_kind,
    load_residuals,
    prediction_class,
    residuals_path,
    resilver_class,
    workload_kind,
)

__all__ = [
    "ACCURACY_ENV",
    "ACCURACY_FILE",
    "DEVICE_KINDS",
    "LAYOUT_KINDS",
    "MIN_POINTS",
    "WORKLOAD_KINDS",
    "Accuracy",
    "accuracy_for",
    "accuracy_of_class",
    "accuracy_text",
    "band",
    "device_kind",
    "layout_kind",
    "load_residuals",
    "prediction_class",
    "residuals_path",
    "resilver_class",
    "workload_kind",
]
