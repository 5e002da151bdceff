"""``zsim grow SCENARIO.toml --attach N | --add-vdev LAYOUT``: the grown pool's space, the
reflow time and the speed before and after, as text or JSON (``DESIGN.md`` §5)."""

from __future__ import annotations

import argparse
from typing import Any

from zsim.layout.grammar import parse_layout, to_compact
from zsim.scenario import load_scenario
from zsim.units import format_rate, format_size, format_time

SPACE_ROWS = (
    ("zpool list SIZE", "zpool_size_bytes"),
    ("zfs list USED+AVAIL", "usable_bytes"),
    ("real, for new data", "usable_new_data_bytes"),
    ("after a full rewrite", "usable_after_rewrite_bytes"),
)


def cmd_grow(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    # imported when run: the reflow loads the discrete-event engine
    from zsim.grow.run import simulate_grow

    scenario = load_scenario(args.scenario, overrides=args.set)
    result = simulate_grow(
        scenario,
        attach=args.attach,
        add_vdev=args.add_vdev,
        vdev=args.vdev,
        new_disk_size=args.new_disk_size,
        reflow=not args.no_reflow,
        under_load=args.under_load,
        seed=args.seed,
    )
    return result.to_dict(), grow_text(result)


def _hours(seconds: float) -> str:
    return format_time(seconds)


def _perf_line(label: str, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    out = []
    for direction in ("read", "write"):
        b, a = before.get(direction, {}), after.get(direction, {})
        if not b.get("iops") and not a.get("iops"):
            continue
        out.append(
            f"  {label}{direction:<22}{format_rate(b.get('bytes_per_s', 0.0)):>28}"
            f"{format_rate(a.get('bytes_per_s', 0.0)):>30}"
        )
    return out


def grow_text(r: Any) -> str:
    """The text report of a :class:`zsim.grow.result.GrowResult`."""
    before = to_compact(parse_layout(r.layout_before))
    after = to_compact(parse_layout(r.layout_after))
    lines = [
        f"grow        {before} → {after}, the pool {r.fill:.0%} full",
        *(f"            {c}" for c in r.commands),
        "",
        f"{'space':<24}{'before':>28}{'after':>30}",
    ]
    for label, key in SPACE_ROWS:
        was, now = format_size(r.space_before[key]), format_size(r.space_after[key])
        lines.append(f"  {label:<22}{was:>28}{now:>30}")
    if r.reflows:
        lines.append("")
    for k, rf in enumerate(r.reflows, start=1):
        head = f"reflow {k}" if len(r.reflows) > 1 else "reflow"
        lines.append(
            f"{head:<12}{rf.old_width} → {rf.new_width} wide: {_hours(rf.seconds)}, "
            f"{format_size(rf.bytes_copied)} copied at {format_rate(rf.bytes_per_s)}, "
            f"limit {rf.limit}"
        )
        if rf.scrub_seconds is not None:
            lines.append(f"{'':<12}then the scrub OpenZFS starts: {_hours(rf.scrub_seconds)}")
        if rf.under_load is not None:
            ul = rf.under_load
            fg = ul["foreground_during"]
            lines.append(
                f"{'':<12}under the workload: {_hours(ul['seconds'])}; the workload meanwhile "
                f"reads {format_rate(fg['read']['bytes_per_s'])}, writes "
                f"{format_rate(fg['write']['bytes_per_s'])}"
            )
    if r.seconds is not None and len(r.reflows) > 1:
        lines.append(f"{'all':<12}{_hours(r.seconds)} of reflow, one attach after another")
    perf = r.performance
    b, a = perf.get("before", {}), perf.get("after", {})
    lines += ["", f"{'performance (analytic)':<24}{'before':>28}{'after':>30}"]
    for side, d in (("before", b), ("after", a)):
        if "declined" in d:
            lines.append(f"  {side}: the analytic engine declines: {d['declined']}")
    if "declined" not in b and "declined" not in a:
        lines += _perf_line("", b, a)
        lines.append(f"  {'limit':<22}{b.get('limit', ''):>28}{a.get('limit', ''):>30}")
    spread = perf.get("spread")
    if spread:
        lines += ["", "new writes over the vdevs (metaslab.c rotor + free-space bias)"]
        for i, v in enumerate(spread["vdevs"]):
            row = (
                f"  {i}: {v['vdev']:<22} {v['allocated_fraction']:>4.0%} full, "
                f"share {v['share_by_free_space']:.0%} (empty pool {v['share_empty_pool']:.0%})"
            )
            if "throttled" in spread:
                t, u = spread["throttled"], spread["unthrottled"]
                row += f", busy {t['vdev_busy'][i]:.0%} (no throttle {u['vdev_busy'][i]:.0%})"
            lines.append(row)
        if "throttled" in spread:
            lines.append(
                f"  writes {format_rate(spread['throttled']['write_bytes_per_s'])} with the "
                f"allocation throttle; {format_rate(spread['unthrottled']['write_bytes_per_s'])} "
                f"without it (zio_dva_throttle_enabled=0)"
            )
    if r.notes:
        lines.append("")
        lines += [f"note        {n}" for n in r.notes]
    return "\n".join(lines)
