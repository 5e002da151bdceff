"""Scenario tables as TOML items, for :meth:`zsim.scenario.Scenario.to_toml`.

Sizes are written as exact binary-unit text (``"128KiB"``), profiles as their catalog name or path
when they have one, else as an inline table.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from zsim.errors import ZsimError
from zsim.hardware.catalog import Profile, load_profile
from zsim.scenario.keys import KEYS, PROFILE_KEYS, TOOL_KEYS
from zsim.scenario.protocols import HardwareFields, PoolFields, WorkloadFields
from zsim.units import binary_multiple

# ---------------------------------------------------------------- writing TOML


def size_text(nbytes: int) -> str | int:
    """A size as exact text in the largest binary unit that divides it (``"128KiB"``, up to
    EiB), else (0, or not a whole number of KiB) the number itself."""
    count, prefix = binary_multiple(nbytes, largest="E")
    return f"{count}{prefix}iB" if nbytes and prefix else nbytes


def profile_value(profile: Profile, spec: str | None) -> str | dict[str, Any]:
    """How to write a profile: its catalog name or path, else an inline table of its fields."""
    if spec is not None and spec != "inline":
        return spec
    if spec is None and profile.name != "inline":
        try:
            if load_profile(profile.name) == profile:
                return profile.name
        except ZsimError:
            pass
    table = {k: v for k, v in profile.to_dict().items() if k not in ("name", "sources")}
    if profile.sources:
        table["sources"] = dict(profile.sources)
    return table


def hardware_items(hw: HardwareFields) -> dict[str, Any]:
    items: dict[str, Any] = {}
    for key in PROFILE_KEYS:
        profile = getattr(hw, key)
        if profile is not None:
            items[key] = profile_value(profile, getattr(hw, f"{key}_spec"))
    items.update(
        ram=size_text(hw.ram),
        cpu_cores=hw.cpu_cores,
        cpu_ghz=hw.cpu_ghz,
        cpu_io_cost_scale=hw.cpu_io_cost_scale,
        cpu_byte_cost_scale=hw.cpu_byte_cost_scale,
        zfs_version=hw.zfs_version,
    )
    if hw.expander_bw is not None:
        items["expander_bw"] = hw.expander_bw
    items["disks_per_link"] = hw.disks_per_link
    if hw.memory_bandwidth is not None:
        items["memory_bandwidth"] = hw.memory_bandwidth
    return items


def pool_items(pool: PoolFields) -> dict[str, Any]:
    items = asdict(pool)
    for key in ("recordsize", "special_small_blocks"):
        items[key] = size_text(items[key])
    if not pool.failed:
        del items["failed"]
    if not pool.fill_at_attach:  # a RAIDZ expansion's history: only when it has one
        del items["fill_at_attach"]
        del items["written_between_attaches"]
    if pool.allocated is None:
        del items["allocated"]
    else:
        items["allocated"] = size_text(pool.allocated)
        del items["fill"]
    return items


def changed_items(spec: Any, default: Any) -> dict[str, Any]:
    """The keys of an optional table that differ from its defaults (sizes as exact text)."""
    items = {}
    for f in fields(spec):
        value = getattr(spec, f.name)
        if value != getattr(default, f.name):
            items[f.name] = size_text(value) if f.name == "block_size" else value
    return items


def workload_items(work: WorkloadFields) -> dict[str, Any]:
    items: dict[str, Any] = {"tool": work.tool}
    for key in TOOL_KEYS[work.tool]:
        value = getattr(work, key)
        if value is not None:
            items[key] = size_text(value) if KEYS["workload"][key].kind == "size" else value
    return items
