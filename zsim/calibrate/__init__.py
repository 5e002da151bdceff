"""Calibration from real measurements: plan fio/dd runs, run them, parse, fit, validate.

``plan`` writes fio job files and dd commands for a target; ``run`` executes them with the real
tools and stores each result atomically; :mod:`~zsim.calibrate.fio`, :mod:`~zsim.calibrate.dd`
and :mod:`~zsim.calibrate.zpool` parse tool output into :class:`Measurement` objects;
``fit`` turns them into a catalog profile; ``validation`` predicts what was measured.
"""

from zsim.calibrate.measurement import DirectionResult, Measurement, ParseError

__all__ = ["DirectionResult", "Measurement", "ParseError"]
