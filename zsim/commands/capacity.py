"""``zsim capacity``: usable space of a layout, and its text report."""

from __future__ import annotations

import argparse
from typing import Any

from zsim.capacity import CapacityReport, capacity
from zsim.errors import ZsimError
from zsim.hardware.catalog import load_profile
from zsim.units import format_binary_size, format_decimal_size, format_size


def _compress_ratio(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ZsimError(f"--compress-ratio {text!r} is not a number; give e.g. 1.6") from None
    return value


def cmd_capacity(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    logical_sector = 512
    if args.disk:
        profile = load_profile(args.disk)
        if profile.kind == "hba":
            raise ZsimError(f"--disk {args.disk!r} is an HBA; give a disk or SSD profile")
        disk_size: int | str = profile.size_bytes
        logical_sector = profile.logical_sector_bytes
    else:
        disk_size = args.disk_size
    class_sizes = {}
    for vclass, value in (
        ("log", args.log_size),
        ("special", args.special_size),
        ("dedup", args.special_size),
        ("cache", args.cache_size),
    ):
        if value is not None:
            class_sizes[vclass] = value  # noqa: PERF403 (a loop reads better with the filter)
    report = capacity(
        args.layout,
        disk_size,
        ashift=args.ashift,
        recordsize=args.recordsize,
        compress_ratio=_compress_ratio(args.compress_ratio),
        zfs_version=args.zfs_version,
        partitioning=args.partitioning,
        logical_sector=logical_sector,
        class_disk_size=class_sizes,
        fill_at_attach=_fill(args.fill_at_attach),
        written_between_attaches=not args.attached_back_to_back,
    )
    return report.to_dict(), _capacity_text(report)


def _fill(text: str) -> float:
    """``--fill-at-attach``: a fraction (0.8) or a percentage (80%)."""
    raw = str(text).strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise ZsimError(
            f"--fill-at-attach {raw[:30]!r} is not a number; give e.g. 0.8 or 80%"
        ) from None
    return value


def _capacity_text(r: CapacityReport) -> str:
    lines = [f"layout      {r.layout}"]
    if r.system == "zfs":
        lines.append(f"zpool form  zpool create tank {r.zpool_create_form or r.zpool_form}")
        lines.extend(f"            {command}" for command in r.zpool_attach_commands)
        lines.append(
            f"OpenZFS     {r.zfs_version}, ashift {r.ashift} "
            f"({format_binary_size(1 << (r.ashift or 9))} sectors), "
            f"partitioning: {r.partitioning}"
        )
    elif r.system == "md":
        lines.append(f"mdadm       mdadm --create /dev/md0 {r.zpool_form}")
    ndisks = round(r.raw_bytes / r.disk_bytes) if r.disk_bytes else 0
    lines.append(
        f"disks       {ndisks} × {format_size(r.disk_bytes)} = {format_size(r.raw_bytes)} raw"
    )
    if r.support_raw_bytes:
        lines.append(
            f"support     {format_size(r.support_raw_bytes)} of special/log/cache/spare devices"
        )
    lines.append("")
    if r.system in ("zfs", "zpool-on"):
        lines.append(f"zpool list SIZE      {format_size(r.zpool_size_bytes)}")
        lines.append(
            f"zfs USED+AVAIL       {format_size(r.usable_bytes)}   ({r.efficiency:.1%} of raw)"
        )
        if r.expansion_steps:
            lines.extend(_expansion_lines(r))
        lines.append(f"slop (reserved)      {format_size(r.slop_bytes)}")
        if r.embedded_log_bytes or r.special_embedded_log_bytes:
            lines.append(
                f"embedded log         "
                f"{format_size(r.embedded_log_bytes + r.special_embedded_log_bytes)}"
            )
        if r.special_bytes:
            lines.append(f"special class        {format_size(r.special_bytes)} (not in AVAIL)")
        if r.log_bytes:
            lines.append(f"log class            {format_size(r.log_bytes)} (not in AVAIL)")
    else:
        lines.append(
            f"usable               {format_size(r.usable_bytes)}   ({r.efficiency:.1%} of raw)"
        )
    lines.append(
        f"effective            {format_size(r.effective_bytes)}   "
        f"of {format_binary_size(r.recordsize)} records at {r.compress_ratio:.2f}× compression "
        f"({r.effective_efficiency:.1%} of raw)"
    )
    lines.append(f"fault tolerance      {r.fault_tolerance} disk(s) per vdev")
    if r.vdevs:
        lines.append("")
        header = (
            "vdev",
            "class",
            "layout",
            "raw",
            "labels",
            "geometry",
            "redundancy",
            "padding",
            "emb.log",
            "slop",
            "usable",
            "metaslabs",
        )
        rows: list[tuple[str, ...]] = [header]
        for v in r.vdevs:
            ms = (
                f"{v.metaslab_count} × {format_binary_size(1 << v.metaslab_shift)}"
                if v.metaslab_count
                else "-"
            )
            rows.append(
                (
                    str(v.index),
                    v.vclass,
                    v.layout,
                    *(
                        format_decimal_size(x)
                        for x in (
                            v.raw_bytes,
                            v.labels_bytes,
                            v.geometry_bytes,
                            v.redundancy_bytes,
                            v.padding_bytes,
                            v.embedded_log_bytes,
                            v.slop_bytes,
                            v.usable_bytes,
                        )
                    ),
                    ms,
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        lines.extend(
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows
        )
        lines.append("(sizes in decimal units: 1 TB = 10^12 B; the columns add up to raw)")
    if r.expansion_steps:
        lines.append("")
        lines.extend(_steps_table(r))
    lines.extend(f"note: {n}" for n in r.notes)
    return "\n".join(lines)


def _expansion_lines(r: CapacityReport) -> list[str]:
    """The three figures an expanded raidz adds under ``zfs USED+AVAIL``."""
    fill = (
        f"old blocks kept at their width, pool {r.fill_at_attach:.0%} full at "
        + ("each attach" if r.written_between_attaches else "the first attach, none written since")
        if r.fill_at_attach
        else "pool empty at each attach"
    )
    return [
        "  (what zfs list reports: the original width's data:parity ratio)",
        f"real, for new data   {format_size(r.usable_new_data_bytes)}   ({fill})",
        f"after zfs rewrite    {format_size(r.usable_after_rewrite_bytes)}   "
        "(every block at the new width)",
    ]


def _steps_table(r: CapacityReport) -> list[str]:
    """One row per attach: the pool as created, then after each ``zpool attach``."""
    rows: list[tuple[str, ...]] = [
        ("step", "attach", "zpool SIZE", "zfs USED+AVAIL", "real, new data", "after rewrite")
    ]
    rows.extend(
        (
            str(s.step),
            f"{s.device} to vdev {s.vdev_index}" if s.device else "as created",
            *(
                f"{format_decimal_size(x)} ({format_binary_size(x)})"
                for x in (
                    s.zpool_size_bytes,
                    s.usable_bytes,
                    s.usable_new_data_bytes,
                    s.usable_after_rewrite_bytes,
                )
            ),
        )
        for s in r.expansion_steps
    )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    return ["expansion steps (one zpool attach at a time):", *out]
