"""``--set section.key=value`` overrides, applied to scenario data before it is checked."""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from zsim.scenario.keys import (
    KEYS,
    TABLES,
    ScenarioError,
    did_you_mean,
    looks_like_path,
    resolve_path,
    unknown_key,
)

# ---------------------------------------------------------------- overrides


def _split_override(text: str) -> tuple[str | None, str, str]:
    """``"pool.recordsize=1M"`` → ``("pool", "recordsize", "1M")``; ``name=x`` → (None, ...)."""
    where = f"override {text!r}"
    if not isinstance(text, str) or "=" not in text:
        raise ScenarioError(f"{where}: write section.key=value, e.g. pool.recordsize=1M")
    target, _, value = text.partition("=")
    target = target.strip()
    if target == "name":
        return None, "name", value.strip()
    section, dot, key = target.partition(".")
    if not dot or not key or "." in key:
        raise ScenarioError(f"{where}: write section.key=value, e.g. pool.recordsize=1M")
    if section not in KEYS:
        raise ScenarioError(f"{where}: unknown table [{section}]; {did_you_mean(section, TABLES)}")
    if key not in KEYS[section]:
        raise ScenarioError(f"{where}: {unknown_key(section, key)}")
    return section, key, value.strip()


def _override_value(section: str, key: str, text: str, where: str) -> Any:
    """Override text → the TOML type the key expects; sizes, rates and names stay text."""
    spec = KEYS[section][key]
    fail = ScenarioError(f"{where}: expected {spec.expected}, e.g. {section}.{key}={spec.example}")
    if spec.kind in ("int", "ashift"):
        try:
            return int(text.replace("_", ""), 10)
        except ValueError:
            raise fail from None
    if spec.kind == "float":
        try:
            return float(text)
        except ValueError:
            raise fail from None
    if spec.kind == "bool":
        if text.lower() not in ("true", "false"):
            raise fail
        return text.lower() == "true"
    if spec.kind == "profile" and text.startswith("{"):
        try:
            return tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError as err:
            raise ScenarioError(f"{where}: the inline table is not valid TOML: {err}") from None
    if (spec.kind == "profile" and looks_like_path(text)) or (section, key) == (
        "workload",
        "file",
    ):
        return str(resolve_path(text, Path.cwd()))  # typed on a command line: from here
    return text


def apply_overrides(data: Mapping[str, Any], overrides: list[str]) -> dict[str, Any]:
    """A copy of scenario ``data`` with ``section.key=value`` overrides applied, in order.

    Values become the type the key expects (``workload.numjobs=8`` → 8,
    ``workload.direct=true`` → True); sizes, rates and names stay text for validation to parse.
    Relative paths are taken from the current directory. ``pool.fill`` and ``pool.allocated``
    are alternatives: setting one drops the other. ``data`` is not changed.
    """
    out = copy.deepcopy(dict(data))
    for text in overrides:
        section, key, raw = _split_override(text)
        if section is None:
            out["name"] = raw
            continue
        value = _override_value(section, key, raw, f"override {text!r}")
        table = out.get(section)
        table = dict(table) if isinstance(table, Mapping) else {}
        table[key] = value
        if section == "pool" and key in ("fill", "allocated"):
            table.pop("allocated" if key == "fill" else "fill", None)
        out[section] = table
    return out
