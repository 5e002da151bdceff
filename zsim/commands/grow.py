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
        des=args.des,
    )
    return result.to_dict(), grow_text(result)


def _hours(seconds: float) -> str:
    return format_time(seconds)


PERF_COLUMNS = (("before", "before"), ("after", "after"), ("after_new_data", "after, new data"))


def _perf_table(title: str, perf: dict[str, Any]) -> list[str]:
    """The workload's rates before and after (and on new data after an attach), one column
    each; a side the engine declines says why below the table."""
    cols = [(key, label) for key, label in PERF_COLUMNS if key in perf]
    lines = ["", f"{title:<30}" + "".join(f"{label:>26}" for _, label in cols)]
    answered = [key for key, _ in cols if "declined" not in perf[key]]
    for direction in ("read", "write"):
        if not any(perf[key].get(direction, {}).get("iops") for key in answered):
            continue
        row = f"  {direction:<28}"
        for key, _ in cols:
            d = perf[key]
            rate = d.get(direction, {}).get("bytes_per_s", 0.0)
            row += f"{'—' if 'declined' in d else format_rate(rate):>26}"
        lines.append(row)
    if answered:
        lines.append(
            f"  {'limit':<28}" + "".join(f"{perf[key].get('limit', '—'):>26}" for key, _ in cols)
        )
    for key, label in cols:
        if "declined" in perf[key]:
            d = perf[key]
            lines.append(f"  {label}: the {d['engine']} engine declines: {d['declined']}")
    return lines


def _evening_lines(evening: dict[str, Any]) -> list[str]:
    """How far rewriting the data (each copy freed where it was) must go to even the vdevs."""
    parts = []
    for key, label in (("throttled", "with the allocation throttle"), ("unthrottled", "without")):
        e = evening.get(key)
        if e is None:
            continue
        if e["bytes_rewritten"] is None:
            parts.append(f"not within 10 passes {label}")
            continue
        when = f" ({_hours(e['seconds'])} at the write rate)" if e["seconds"] else ""
        parts.append(f"{format_size(e['bytes_rewritten'])} rewritten{when} {label}")
    within = next(iter(evening.values()))["within"]
    head = (
        f"  evening out: new writes alone keep the imbalance; rewrites of the old data bring "
        f"the vdevs within {within * 100:.0f} points of fullness of each other after "
    )
    return [head + "; ".join(parts)]


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
    lines += _perf_table("performance (analytic)", perf)
    if "des" in perf:
        lines += _perf_table("performance (discrete-event)", perf["des"])
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
    if spread and "evening_out" in spread:
        lines += _evening_lines(spread["evening_out"])
    if r.notes:
        lines.append("")
        lines += [f"note        {n}" for n in r.notes]
    return "\n".join(lines)
