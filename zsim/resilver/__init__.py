"""Resilver, rebuild and scrub time, and the probability of losing data while it runs.

``zsim.resilver`` is both this package and a function: ``zsim.resilver(sc)`` calls
:func:`zsim.resilver.run.simulate_resilver` (the package module is callable, as
``zsim.sweep`` is), while ``zsim.resilver.run``, ``zsim.resilver.zfs_scan``, ... stay
importable. Modules: :mod:`~zsim.resilver.target` (what must be rebuilt),
:mod:`~zsim.resilver.zfs_scan` (the ZFS scan on the discrete-event engine),
:mod:`~zsim.resilver.md_rebuild` (md recovery), :mod:`~zsim.resilver.run` (windows to time and
the progress curve), :mod:`~zsim.resilver.durability` (loss probabilities, via
:mod:`zsim.reliability`). ``docs/resilver.md`` explains the model.
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _CallableModule(types.ModuleType):
    """This package's module type: calling it calls :func:`simulate_resilver`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from zsim.resilver.run import simulate_resilver

        return simulate_resilver(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
