"""``zsim layout`` (a layout's compact and zpool forms) and ``zsim models`` (the hardware
catalog)."""

from __future__ import annotations

import argparse
from typing import Any

from zsim.hardware.catalog import SCHEMA, list_profiles, load_profile
from zsim.layout.grammar import parse_layout, to_compact, to_zpool
from zsim.layout.tree import ZfsLayout
from zsim.units import format_rate, format_size, format_time, parse_rate, parse_size, parse_time


def cmd_layout(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    tree = parse_layout(args.layout)
    data: dict[str, Any] = {
        "compact": to_compact(tree),
        "zpool_form": to_zpool(tree),
        "system": tree.system,
        "fault_tolerance": tree.fault_tolerance,
    }
    lines = [f"compact     {data['compact']}", f"zpool form  {data['zpool_form']}"]
    if isinstance(tree, ZfsLayout):
        data["vdevs"] = [
            {"class": v.vclass, "type": v.type_word(), "devices": list(v.devices)}
            for v in tree.vdevs
        ]
        lines.extend(
            f"  {v.vclass:<8} {v.type_word():<24} {' '.join(v.devices)}" for v in tree.vdevs
        )
    return data, "\n".join(lines)


def cmd_models(args: argparse.Namespace) -> tuple[Any, str]:
    if args.name:
        profile = load_profile(args.name)
        data = profile.to_dict()
        lines = [f"{profile.name}: {profile.vendor or ''} {profile.model or ''} ({profile.kind})"]
        for key, value in data.items():
            if key in ("name", "sources", "kind"):
                continue
            shown = _show_value(key, value)
            source = profile.source_of(key) if key not in ("vendor", "model") else None
            lines.append(f"  {key:<22} {shown}" + (f"   [{source}]" if source else ""))
        return data, "\n".join(lines)
    rows: list[dict[str, Any]] = []
    for name in list_profiles(args.kind):
        p = load_profile(name)
        rows.append(
            {
                "name": name,
                "kind": p.kind,
                "vendor": p.vendor,
                "model": p.model,
                "capacity_bytes": p.capacity_bytes or p.capacity,
            }
        )
    text = "\n".join(
        f"{r['name']:<32} {r['kind']:<5} {(r['vendor'] or '') + ' ' + (r['model'] or ''):<40} "
        + (format_size(r["capacity_bytes"]) if r["capacity_bytes"] else "")
        for r in rows
    )
    return rows, text


def _show_value(key: str, value: Any) -> str:
    parser = SCHEMA.get(key, (None,))[0]
    if parser is parse_size and isinstance(value, int):
        return format_size(value)
    if parser is parse_rate:
        return format_rate(value)
    if parser is parse_time:
        return format_time(value)
    return str(value)
