"""Reading scenarios: TOML data to a checked :class:`~zsim.scenario.Scenario`.

:func:`scenario_from_dict` validates data as :mod:`tomllib` reads it; :func:`load_scenario` reads a
file and applies ``--set`` overrides (:mod:`zsim.scenario.overrides`) first.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from zsim.errors import ZsimError, check_arg
from zsim.files import TOML_LIMIT, read_bytes
from zsim.hardware.catalog import Profile, load_profile, parse_profile
from zsim.scenario.checks import both_fill_and_allocated, foreign_key
from zsim.scenario.keys import (
    KEYS,
    PROFILE_KEYS,
    TABLES,
    TOOL_KEYS,
    TOP_KEYS,
    ScenarioError,
    bad_value,
    did_you_mean,
    looks_like_path,
    resolve_path,
    show_value,
    unknown_key,
)
from zsim.scenario.overrides import apply_overrides
from zsim.scenario.schema import DurabilitySpec, Hardware, Pool, ResilverSpec, Scenario, Workload
from zsim.units import parse_rate, parse_size, parse_time

# ---------------------------------------------------------------- reading TOML data


def _convert(section: str, key: str, raw: Any) -> Any:
    """A TOML value to the field's type (sizes to bytes, rates to bytes/s); types checked here,
    ranges by the dataclasses."""
    kind = KEYS[section][key].kind
    try:
        if kind == "size":
            return parse_size(raw)
        if kind == "rate":
            return parse_rate(raw)
        if kind == "time":
            return parse_time(raw)
    except ZsimError as err:
        raise bad_value(section, key, raw, str(err)) from None
    valid = {
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "ashift": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "float": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "bool": lambda v: isinstance(v, bool),
        "text": lambda v: isinstance(v, str),
        "enum": lambda v: isinstance(v, str),
        "profile": lambda v: isinstance(v, str | Mapping),
        "names": lambda v: isinstance(v, str | list) and all(isinstance(n, str) for n in v),
    }[kind]
    if not valid(raw):
        raise bad_value(section, key, raw)
    if kind == "float":
        return float(raw)
    if kind == "names":  # a TOML list, or "sdc,sdd" as --set gives it
        items = raw.split(",") if isinstance(raw, str) else raw
        return tuple(n.strip() for n in items if n.strip())
    if kind == "enum":
        return raw.strip().lower()
    return raw


def _load_profile(key: str, spec: str | Mapping[str, Any], base: Path) -> tuple[Profile, str]:
    """Resolve a profile given as a catalog name, a path or an inline table → (profile, spec)."""
    if isinstance(spec, Mapping):
        where = f"hardware.{key} (inline table)"
        return parse_profile(dict(spec), "inline", where=where), "inline"
    try:
        if looks_like_path(spec):
            path = resolve_path(spec, base)
            if not path.is_file():
                raise ScenarioError(
                    f"hardware.{key} = {show_value(spec)}: no profile file at {path}; give a path "
                    f"relative to the scenario file, or a catalog name such as "
                    f"{KEYS['hardware'][key].example}"
                )
            return load_profile(path), str(path)
        return load_profile(spec), spec
    except ScenarioError:
        raise
    except ZsimError as err:
        raise ScenarioError(f"hardware.{key}: {err}") from None


def _table(data: Mapping[str, Any], section: str) -> dict[str, Any]:
    """One table, its keys checked and its values converted (not yet range-checked)."""
    raw = data.get(section, {})
    if not isinstance(raw, Mapping):
        raise ScenarioError(
            f"{section} = {show_value(raw)}: expected a table; write [{section}] on a line of its "
            f"own with its keys below"
        )
    values = {}
    for key, value in raw.items():
        if key not in KEYS[section]:
            raise unknown_key(section, key)
        values[key] = _convert(section, key, value)
    return values


def _hardware(values: dict[str, Any], base: Path) -> Hardware:
    if "disk" not in values:
        raise ScenarioError(
            'hardware.disk is missing; name the pool\'s disks, e.g. disk = "seagate-ironwolf-12tb" '
            "in [hardware] (a catalog name, a profile path or an inline table)"
        )
    for key in PROFILE_KEYS:
        if key in values:
            profile, spec = _load_profile(key, values[key], base)
            values[key] = profile
            values["disk_spec" if key == "disk" else f"{key}_spec"] = spec
    return Hardware(**values)


def _pool(values: dict[str, Any]) -> Pool:
    if "layout" not in values:
        raise ScenarioError('pool.layout is missing; add e.g. layout = "raidz2 8" to [pool]')
    if "fill" in values and "allocated" in values:
        raise both_fill_and_allocated()
    return Pool(**values)


def _workload(values: dict[str, Any], base: Path) -> Workload:
    tool = values.get("tool", Workload.tool)
    if tool in TOOL_KEYS:
        for key in values:
            if key != "tool" and key not in TOOL_KEYS[tool]:
                raise foreign_key(key, tool, values[key])
    if tool == "trace" and values.get("file"):
        path = resolve_path(values["file"], base)
        if not _is_file(path):
            detail = f"no trace file at {path}; give a path relative to the scenario file"
            raise bad_value("workload", "file", values["file"], detail)
        values["file"] = str(path)
    return Workload(**values)


_TABLE_EXAMPLES = {
    "hardware": 'disk = "seagate-ironwolf-12tb"',
    "pool": 'layout = "raidz2 8"',
    "workload": 'tool = "fio", rw = "randwrite", bs = "1M"',
}


def _build(data: Mapping[str, Any], base: Path) -> Scenario:
    if not isinstance(data, Mapping):
        raise ScenarioError(
            f"a scenario is a table with [{'], ['.join(TABLES)}], not {show_value(data)}"
        )
    for key in data:
        if key not in TOP_KEYS:
            raise ScenarioError(f"unknown table [{key}]; {did_you_mean(key, list(TOP_KEYS))}")
    for section, example in _TABLE_EXAMPLES.items():
        if section not in data:
            raise ScenarioError(f"the [{section}] table is missing; add it with {example}")
    return Scenario(
        hardware=_hardware(_table(data, "hardware"), base),
        pool=_pool(_table(data, "pool")),
        workload=_workload(_table(data, "workload"), base),
        name=data.get("name", ""),
        resilver=ResilverSpec(**_table(data, "resilver")),
        durability=DurabilitySpec(**_table(data, "durability")),
    )


def scenario_from_dict(
    data: Mapping[str, Any], *, source: str = "scenario", base_dir: str | Path | None = None
) -> Scenario:
    """Validate scenario data (as :mod:`tomllib` reads it) into a :class:`Scenario`.

    ``source`` starts every error message (the file name); relative profile and trace paths
    are taken from ``base_dir`` (default: the current directory).
    """
    check_arg("scenario_from_dict", "data", data, Mapping, "a table (dict) of TOML tables")
    bad = [k for k in data if not isinstance(k, str)]
    if bad:
        raise ScenarioError(
            f"scenario_from_dict: data keys must be table names (text), not "
            f"{type(bad[0]).__name__}; give e.g. {{'pool': {{'layout': 'raidz2 8'}}}}"
        )
    base = Path(base_dir if base_dir is not None else Path.cwd()).resolve()
    try:
        return _build(data, base)
    except ZsimError as err:
        raise ScenarioError(f"{source}: {err}") from None


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):  # a name too long, a NUL byte
        return False


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def _read_toml(path: Path, source: str) -> dict[str, Any]:
    """The TOML document at ``path``; a missing, unreadable or invalid file is an error."""
    if not _exists(path):
        what = "does not exist"
        raise ScenarioError(
            f"{source}: the scenario file {what}; give the path of a .toml file "
            f"(examples in examples/scenarios/)"
        )
    try:
        data = read_bytes(path, limit=TOML_LIMIT, what="scenario file")
    except ZsimError as err:
        raise ScenarioError(str(err)) from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError(
            f"{source}: not valid TOML: {err}; fix the syntax at that place"
        ) from None
    except RecursionError:
        raise ScenarioError(
            f"{source}: its arrays or tables are nested too deeply; flatten them"
        ) from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{source}: not UTF-8 text; save it as UTF-8 TOML") from None


def load_scenario(path: str | Path, overrides: list[str] | None = None) -> Scenario:
    """Read a scenario TOML file; ``overrides`` (``"pool.recordsize=1M"``, …) apply first.

    Relative profile and trace paths in the file are taken from the file's folder.
    """
    check_arg("load_scenario", "path", path, (str, os.PathLike), "the path of a scenario file")
    given: Any = overrides  # callers pass anything
    if given is not None and (
        not isinstance(given, list | tuple) or not all(isinstance(o, str) for o in given)
    ):
        raise ScenarioError(
            "load_scenario: overrides must be a list of 'key=value' texts, e.g. "
            "['pool.recordsize=1M']"
        )
    file = Path(path)
    data = _read_toml(file, str(path))
    if overrides:
        try:
            data = apply_overrides(data, overrides)
        except ZsimError as err:
            raise ScenarioError(f"{path}: {err}") from None
    return scenario_from_dict(data, source=str(path), base_dir=file.parent)
