"""Calibration from real measurements: plan fio/dd runs, run them, parse, fit, validate.

``plan`` writes fio job files and dd commands for a target; ``run`` executes them with the real
tools and stores each result atomically; :mod:`~zsim.calibrate.fio`, :mod:`~zsim.calibrate.dd`
and :mod:`~zsim.calibrate.zpool` parse tool output into :class:`Measurement` objects;
``fit`` turns them into a catalog profile; :mod:`zsim.validation.profile` predicts what was
measured (``validate_measurements`` is re-exported here).
"""

import importlib
from typing import Any

from zsim.calibrate.measurement import DirectionResult, Measurement, ParseError

__all__ = [
    "DirectionResult",
    "Measurement",
    "ParseError",
    "fit_device",
    "load_results",
    "make_plan",
    "profile_toml",
    "read_plan",
    "run_plan",
    "validate_measurements",
    "write_plan",
]

_LAZY = {
    "fit_device": "zsim.calibrate.fit",
    "profile_toml": "zsim.calibrate.fit",
    "load_results": "zsim.calibrate.load",
    "make_plan": "zsim.calibrate.plan",
    "read_plan": "zsim.calibrate.plan",
    "write_plan": "zsim.calibrate.plan",
    "run_plan": "zsim.calibrate.run",
    "validate_measurements": "zsim.validation.profile",
}


def __getattr__(name: str) -> Any:
    """The API functions, imported on first use (scipy and the engine load only then)."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'zsim.calibrate' has no attribute {name!r}")
