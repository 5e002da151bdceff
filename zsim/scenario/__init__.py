"""Scenarios: the hardware, pool and workload of one simulation, read from TOML (``DESIGN.md`` §4).

A scenario file has three tables and an optional top-level ``name``::

    [hardware]  disk = "seagate-ironwolf-12tb", hba, ram, cpu_cores, zfs_version, ...
    [pool]      layout = "raidz2 8", ashift, recordsize, compression, sync, fill, ...
    [workload]  tool = "fio", rw = "randwrite", bs = "1M", numjobs, iodepth, size, ...

Every key but ``hardware.disk``, ``pool.layout`` and the workload's shape (``rw``/``bs`` for fio,
``direction``/``bs`` for dd, ``file`` for a trace) has a default, documented on the dataclasses
below. Validation is eager: unknown keys, wrong types, values out of range and combinations that
cannot work are :class:`ScenarioError` s of one line that start with where the problem is
(``pool.toml: pool.ashift = "twelve": expected a whole number 9…16, e.g. 12``).

Inside a :class:`Scenario` every quantity is in SI base units (bytes as ``int``, bytes/s as
``float``, seconds as ``float``); units are parsed only by :mod:`zsim.units`.

The package, by job: :mod:`~zsim.scenario.keys` (the key table, constants and error messages),
:mod:`~zsim.scenario.schema` (the frozen dataclasses), :mod:`~zsim.scenario.checks` (their value
and combination checks), :mod:`~zsim.scenario.toml_read` (:func:`scenario_from_dict`,
:func:`load_scenario`), :mod:`~zsim.scenario.toml_write` (:meth:`Scenario.to_toml`'s tables),
:mod:`~zsim.scenario.protocols` (the dataclasses' shape as the checks and the writer read it) and
:mod:`~zsim.scenario.overrides` (``--set section.key=value``). Every public name is re-exported
here; import from :mod:`zsim.scenario`.
"""

from __future__ import annotations

from zsim.hardware.catalog import load_profile
from zsim.scenario.keys import (
    CHECKSUMS,
    COMPRESSIONS,
    DD_DIRECTIONS,
    DD_SOURCES,
    DIRECTS,
    FAILURE_DISTRIBUTIONS,
    IOENGINES,
    KEYS,
    LOGBIASES,
    MAX_RECORDSIZE,
    MIN_RECORDSIZE,
    ON_OFF,
    PRIMARYCACHES,
    REDUNDANT_METADATAS,
    RESILVER_METHODS,
    RW_ALIASES,
    RWS,
    SPARE_KINDS,
    SYNCS,
    TABLES,
    TOOL_KEYS,
    TOOLS,
    TRACE_FORMATS,
    WRITTEN_PATTERNS,
    XATTRS,
    ScenarioError,
)
from zsim.scenario.overrides import apply_overrides
from zsim.scenario.schema import (
    YEAR,
    DurabilitySpec,
    Hardware,
    Pool,
    ResilverSpec,
    Scenario,
    Workload,
)
from zsim.scenario.toml_read import load_scenario, scenario_from_dict

__all__ = [
    "CHECKSUMS",
    "COMPRESSIONS",
    "DD_DIRECTIONS",
    "DD_SOURCES",
    "DIRECTS",
    "FAILURE_DISTRIBUTIONS",
    "IOENGINES",
    "KEYS",
    "LOGBIASES",
    "MAX_RECORDSIZE",
    "MIN_RECORDSIZE",
    "ON_OFF",
    "PRIMARYCACHES",
    "REDUNDANT_METADATAS",
    "RESILVER_METHODS",
    "RWS",
    "RW_ALIASES",
    "SPARE_KINDS",
    "SYNCS",
    "TABLES",
    "TOOLS",
    "TOOL_KEYS",
    "TRACE_FORMATS",
    "WRITTEN_PATTERNS",
    "XATTRS",
    "YEAR",
    "DurabilitySpec",
    "Hardware",
    "Pool",
    "ResilverSpec",
    "Scenario",
    "ScenarioError",
    "Workload",
    "apply_overrides",
    "load_profile",
    "load_scenario",
    "scenario_from_dict",
]
