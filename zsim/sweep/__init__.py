"""Sweeps: many scenarios (layouts × disks × workloads) evaluated by one engine, locally or on
a Dask cluster, into one tidy table; and the recommender that picks from it.

``zsim.sweep`` is both this package and a function: ``zsim.sweep(24, "seagate-ironwolf-12tb")``
calls :func:`zsim.sweep.table.sweep` (the package module is callable), while
``zsim.sweep.table``, ``zsim.sweep.execute``, ... stay importable and reachable as attributes.
A plain function named ``sweep`` in ``zsim`` would hide the package instead.

Modules: :mod:`~zsim.sweep.layouts` (which layouts), :mod:`~zsim.sweep.workloads` (named
workloads), :mod:`~zsim.sweep.point` (one scenario to run), :mod:`~zsim.sweep.execute` (run
them, locally or on Dask), :mod:`~zsim.sweep.table` (the table), :mod:`~zsim.sweep.recommend`
(the Pareto front).
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _CallableModule(types.ModuleType):
    """This package's module type: calling it calls :func:`zsim.sweep.table.sweep`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from zsim.sweep.table import sweep

        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
