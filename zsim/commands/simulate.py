"""``zsim simulate`` and ``zsim resilver``: run one scenario, and their text reports."""

from __future__ import annotations

import argparse
from typing import Any

from zsim.errors import ZsimError
from zsim.scenario import load_scenario
from zsim.scenario.accuracy import accuracy_text
from zsim.simulate import simulate
from zsim.units import format_rate, format_size, format_time


def cmd_simulate(args: argparse.Namespace) -> tuple[dict[str, Any], str]:

    if not 0 < args.target_ci < 1:
        raise ZsimError(f"--target-ci {args.target_ci} must be between 0 and 1, e.g. 0.02")
    if args.max_wall <= 0:
        raise ZsimError(f"--max-wall {args.max_wall} must be more than 0 seconds")
    if args.max_sim <= 0:
        raise ZsimError(f"--max-sim {args.max_sim} must be more than 0 seconds")
    scenario = load_scenario(args.scenario, overrides=args.set)
    result = simulate(
        scenario,
        engine=args.engine,
        seed=args.seed,
        target_ci=args.target_ci,
        max_sim_seconds=args.max_sim,
        max_wall_seconds=args.max_wall,
    )
    return result.to_dict(), _simulate_text(result)


def _simulate_text(r: Any) -> str:
    sc = r.scenario
    lines = [
        f"scenario    {sc['pool']['layout']} of {sc['hardware']['disk_spec']}, "
        f"{_workload_text(sc['workload'])}",
        f"engine      {r.engine}" + (f", seed {r.seed}" if r.engine == "des" else ""),
        "",
        f"{'':<7}{'bandwidth':<32}{'IOPS':>10}  {'mean lat':>10}  {'p50':>10}  {'p99':>10}",
    ]
    for label, d in (("read", r.read), ("write", r.write)):
        if d.iops == 0:
            continue
        lines.append(
            f"{label:<7}{format_rate(d.bytes_per_s):<32}{d.iops:>10.0f}  "
            f"{format_time(d.latency_mean):>10}  {_maybe_time(d.latency_p50):>10}  "
            f"{_maybe_time(d.latency_p99):>10}"
        )
    lines.append("")
    lines.append(f"limit       {r.limit}")
    if r.accuracy is not None:
        lines.append(f"accuracy    {accuracy_text(r.accuracy)}")
    if r.utilization:
        top = sorted(r.utilization.items(), key=lambda kv: -kv[1])[:4]
        lines.append("busiest     " + ", ".join(f"{k} {v:.0%}" for k, v in top))
    if r.ci_rel is not None:
        lines.append(
            f"precision   ±{r.ci_rel:.1%} (95% CI of the I/O rate), "
            f"{r.sim_seconds:.1f} s simulated in {r.wall_seconds:.1f} s"
        )
    lines.extend(f"note: {n}" for n in r.notes)
    return "\n".join(lines)


def _maybe_time(seconds: float | None) -> str:
    """A latency, or "n/a" where the engine does not model it (analytic write percentiles)."""
    return "n/a" if seconds is None else format_time(seconds)


def _workload_text(w: dict[str, Any]) -> str:
    if w.get("tool") == "trace":
        return f"trace {w.get('file')} ({w.get('format')})"
    if w.get("tool") == "dd":
        return f"dd {w.get('direction')} bs={w.get('bs')} streams={w.get('streams', 1)}"
    return (
        f"fio {w.get('rw')} bs={w.get('bs')} numjobs={w.get('numjobs', 1)} "
        f"iodepth={w.get('iodepth', 1)}"
    )


def cmd_resilver(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    # imported when run: it loads the discrete-event engine, which `zsim --help` does not need
    from zsim.resilver.run import simulate_resilver

    scenario = load_scenario(args.scenario, overrides=args.set)
    durability = not args.no_durability
    from zsim.analytic.validity import OutOfRange

    try:
        result = simulate_resilver(
            scenario, seed=args.seed, durability=durability, engine=args.engine
        )
    except OutOfRange as err:  # only with --engine analytic: auto falls back to the DES
        raise ZsimError(f"{err} (on the command line: --engine des, or auto)") from None
    return result.to_dict(), _resilver_text(result)


def _hours(seconds: float | None) -> str:
    return "—" if seconds is None else f"{format_time(seconds)} ({seconds / 3600:.2f} h)"


def _resilver_text(r: Any) -> str:
    sc = r.scenario
    lines = [
        f"scenario    {sc['pool']['layout']} of {sc['hardware']['disk_spec']}, "
        f"fill {sc['pool']['fill']:.0%}, {r.disk} fails",
    ]
    if r.lost:
        lines.append("resilver    none: the failed disk's data is lost (no redundancy)")
    else:
        lines += [
            f"method      {r.method}" + (f", {r.spare} spare" if r.system == "zfs" else ""),
            f"time        {_hours(r.seconds)}",
            f"resilvered  {format_size(r.bytes_resilvered)} at {format_rate(r.bytes_per_s)}",
            f"read        {format_size(r.bytes_read)} from the surviving disks",
            f"limit       {r.limit}",
        ]
        if r.scrub_seconds is not None:
            lines.append(f"scrub       {_hours(r.scrub_seconds)} (the whole pool)")
        if r.total_seconds is not None and r.total_seconds != r.seconds:
            lines.append(f"total       {_hours(r.total_seconds)} (rebuild, then its scrub)")
        if r.progress:
            marks = list(r.progress[1:])[:: max(1, len(r.progress) // 4)]
            shares = [f"{b / max(1, r.bytes_resilvered):.0%} at {t / 3600:.1f} h" for t, b in marks]
            lines.append("progress    " + ", ".join(shares))
    if r.under_load:
        u = r.under_load
        lines.append(f"under load  {_hours(u['seconds'])}, limit {u['limit']}")
        during = u.get("foreground_during")
        alone = u.get("foreground_alone")
        if during and alone:
            for d in ("read", "write"):
                if alone[d]["iops"]:
                    lines.append(
                        f"  workload {d}: {format_rate(during[d]['bytes_per_s'])} during vs "
                        f"{format_rate(alone[d]['bytes_per_s'])} alone"
                    )
    if r.durability:
        du = r.durability
        years = du["mission_seconds"] / (365.25 * 86400)
        lines += [
            f"durability  AFR {du['afr']:.2%}, {years:.0f} years: "
            f"P(loss) {du['loss_probability']:.3g} "
            f"(95% CI {du['loss_probability_ci95'][0]:.3g}…{du['loss_probability_ci95'][1]:.3g})",
            f"            P(unrecoverable block) {du['ure_probability']:.3g}; "
            f"MTTDL formula {du['mttdl_seconds'] / (365.25 * 86400):.3g} years → "
            f"P(loss) {du['mttdl_loss_probability']:.3g}",
        ]
    lines.extend(f"note: {n}" for n in r.notes)
    return "\n".join(lines)
