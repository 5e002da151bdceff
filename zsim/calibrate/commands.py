"""The ``zsim calibrate plan|run|fit`` commands (``zsim validate --profile`` is in
:mod:`zsim.validation.profile_command`): option
parsing and text output only; the work is done by the API modules beside this one.

Each command takes its options as typed keyword arguments, the option texts as given on the
command line (``size="4GiB"``); :mod:`zsim.cli` maps its parsed arguments onto them. Each
returns ``(data, text)``: the JSON document and the text report."""

from __future__ import annotations

import sys
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zsim.errors import ZsimError
from zsim.files import atomic_write_text
from zsim.units import format_rate, format_size, format_time, parse_rate, parse_size, parse_time

# Each command imports what it runs (the fit and scipy, the runner, the engine, matplotlib)
# inside its body, so that 'zsim --help' and the other commands do not load them.


def _depths(text: str | None, what: str) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        depths = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise ZsimError(f"{what} must be whole numbers separated by commas, e.g. 1,4,32") from None
    if not depths or min(depths) < 1:
        raise ZsimError(f"{what} must be at least 1, e.g. 1,4,32")
    return depths


def plan_command(
    *,
    target: str,
    out: str | Path,
    kind: str = "single-disk",
    destroy_data: bool = False,
    size: str | None = None,
    runtime: str | None = None,
    ramp: str | None = None,
    depths: str | None = None,
    large_depths: str | None = None,
    long_write: str | None = None,
    rate: str | None = None,
    rate_iops: str | None = None,
    no_writes: bool = False,
    no_dd: bool = False,
) -> tuple[dict[str, Any], str]:
    """``zsim calibrate plan``: write the fio jobs and dd commands that measure ``target``.

    ``size``, ``long_write`` are sizes (``"4GiB"``), ``runtime``, ``ramp`` times (``"20s"``),
    ``rate`` a rate (``"200MB/s"``), ``depths``/``large_depths`` queue depths (``"1,4,32"``),
    ``rate_iops`` a whole number as text; ``None`` (or empty) keeps the plan's default."""
    from zsim.calibrate.plan import PlanOptions, make_plan, write_plan

    changes: dict[str, Any] = {"kind": kind, "allow_destroy": destroy_data}
    if size:
        changes["size"] = parse_size(size)
    if runtime:
        changes["runtime_s"] = parse_time(runtime)
    if ramp:
        changes["ramp_s"] = parse_time(ramp)
    if (d := _depths(depths, "--depths")) is not None:
        changes["depths_4k"] = d
    if (d := _depths(large_depths, "--large-depths")) is not None:
        changes["depths_large"] = d
    if long_write:
        changes["long_write_bytes"] = parse_size(long_write)
    if rate:
        changes["rate_bw"] = parse_rate(rate)
    if rate_iops:
        try:
            changes["rate_iops"] = int(rate_iops)
        except ValueError:
            raise ZsimError(f"--rate-iops {rate_iops!r}: give a whole number") from None
    if no_writes:
        changes["include_writes"] = False
    if no_dd:
        changes["include_dd"] = False
    options = PlanOptions(**changes)
    plan = make_plan(target, options)
    out = write_plan(plan, out)
    for warning in plan.warnings:
        sys.stderr.write(f"zsim: warning: {warning}\n")
    timed = [s for s in plan.steps if s.tool == "fio"]
    data = {
        "plan_dir": str(out),
        "target": plan.target,
        "data_path": plan.data_path,
        "target_type": plan.target_type,
        "rotational": plan.rotational,
        "steps": [s.name for s in plan.steps],
        "destructive": any(s.destructive for s in plan.steps),
        "warnings": list(plan.warnings),
    }
    estimate = len(timed) * (plan.options.runtime_s + plan.options.ramp_s)
    lines = [
        f"plan written to {out}: {len(plan.steps)} steps on {plan.data_path} "
        f"({plan.target_type}{', rotational' if plan.rotational else ''})",
        f"  fio jobs: {len(timed)} (about {format_time(estimate)} of timed runs, plus the "
        f"long write and dd)",
        f"  run it:   zsim calibrate run {out}     (or: bash {out}/run.sh)",
        f"  then:     zsim calibrate fit {out} --out calibration/profiles/NAME.toml",
    ]
    return data, "\n".join(lines)


def run_command(
    *, plan_dir: str | Path, fio: str | None = None, only: str | None = None
) -> tuple[dict[str, Any], str]:
    """``zsim calibrate run``: run a plan with the real fio and dd; ``only`` names steps
    (comma-separated) to run, ``fio`` the fio binary (default: fio on PATH)."""
    from zsim.calibrate.run import run_plan, text_progress

    steps = [x.strip() for x in only.split(",")] if only else None
    summary = run_plan(plan_dir, fio=fio, progress=text_progress(sys.stderr), only=steps)
    if summary.cleaned:
        count = len(summary.cleaned)
        sys.stderr.write(
            f"zsim: removed {count} partial file{'s' if count > 1 else ''} of an interrupted "
            f"run ({', '.join(summary.cleaned)})\n"
        )
    data = {
        "plan_dir": str(summary.plan_dir),
        "ran": list(summary.ran),
        "skipped": list(summary.skipped),
        "results": [str(p) for p in summary.results],
        "seconds": summary.seconds,
        "cleaned": list(summary.cleaned),
    }
    text = (
        f"ran {len(summary.ran)} steps, skipped {len(summary.skipped)} already done, in "
        f"{format_time(summary.seconds)}; results in {Path(plan_dir) / 'results'}\n"
        f"next: zsim calibrate fit {plan_dir} --out calibration/profiles/NAME.toml"
    )
    return data, text


def parse_base_items(items: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` texts (``--base pcie_gen=4``) → profile keys; a value is read as TOML
    (``4`` → 4, ``true`` → True) and kept as text when it is not TOML."""
    base: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ZsimError(f"--base {item!r}: write KEY=VALUE, e.g. --base pcie_gen=4")
        try:
            base[key.strip()] = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError:
            base[key.strip()] = value
    return base


def fit_command(
    *,
    results: Sequence[str | Path],
    out: str,
    name: str | None = None,
    kind: str | None = None,
    device_size: str | None = None,
    cpu_ghz: float = 3.0,
    scenario: str | None = None,
    base: Sequence[str] = (),
) -> tuple[dict[str, Any], str]:
    """``zsim calibrate fit``: fit a device profile to fio/dd ``results`` and write it to
    ``out`` (a .toml path); with ``scenario``, fit the host's CPU-cost multipliers instead
    (:func:`host_fit_command`). ``base`` holds ``KEY=VALUE`` profile keys the data cannot
    give (:func:`parse_base_items`), ``device_size`` a size as text."""
    from zsim.calibrate.fit import fit_device, profile_toml
    from zsim.calibrate.load import load_results

    path = Path(out)
    if path.suffix != ".toml":
        raise ZsimError(f"--out {out!r}: a profile is a .toml file")
    if scenario:
        return host_fit_command(results=results, scenario=scenario, out=out)
    if not path.parent.is_dir():
        raise ZsimError(f"--out {out!r}: folder {str(path.parent)!r} does not exist")
    loaded = load_results(results)
    if not loaded.measurements:
        raise ZsimError(
            "no fio or dd measurements among the files (zpool/arcstat logs alone describe a "
            "pool, not a device); give the results of 'zsim calibrate run'"
        )
    fit = fit_device(
        loaded.measurements,
        name=name or path.stem,
        kind=kind,
        device_bytes=parse_size(device_size) if device_size else None,
        ghz=cpu_ghz,
        base=parse_base_items(base),
    )
    when = time.strftime("%Y-%m-%d")
    atomic_write_text(path, profile_toml(fit, inputs=loaded.files, when=f"on {when}"))
    pool_logs, pool_text = pool_log_summary(loaded)
    data = fit.to_dict() | {"profile_file": str(path), "pool_logs": pool_logs}
    return data, fit_text(fit) + pool_text + f"\nprofile written to {path}"


def pool_log_summary(loaded: Any) -> tuple[dict[str, Any], str]:
    """What the zpool status / iostat / arcstat files among the results say, in SI units.

    They describe a pool, not the device being fitted: a resilver's or scrub's rate to set
    against ``zsim resilver``, the disks' rates and the ARC's size during a run."""
    data: dict[str, Any] = {"scans": {}, "iostat": {}, "arcstat": {}}
    lines = []
    for source, scan in loaded.scans.items():
        rate = scan.bytes / scan.seconds if scan.bytes and scan.seconds else None
        data["scans"][source] = {
            "kind": scan.kind,
            "state": scan.state,
            "bytes": scan.bytes,
            "seconds": scan.seconds,
            "bytes_per_s": rate,
            "issue_rate": scan.issue_rate,
        }
        shown = f", {format_rate(rate)}" if rate else ""
        took = f" in {format_time(scan.seconds)}" if scan.seconds else ""
        done = f" {format_size(scan.bytes)}" if scan.bytes else ""
        lines.append(f"{source}: {scan.kind} {scan.state}{done}{took}{shown}")
    for source, samples in loaded.iostat.items():
        live = [s for s in samples if not s.since_import]
        top = live[0].rows[0] if live and live[0].rows else None
        if top is None:
            continue
        reads = [s.rows[0].read_bytes_per_s or 0.0 for s in live]
        writes = [s.rows[0].write_bytes_per_s or 0.0 for s in live]
        data["iostat"][source] = {
            "pool": top.name,
            "samples": len(live),
            "mean_read_bytes_per_s": sum(reads) / len(reads),
            "mean_write_bytes_per_s": sum(writes) / len(writes),
        }
        mean_read, mean_write = sum(reads) / len(reads), sum(writes) / len(writes)
        lines.append(
            f"{source}: pool {top.name}, {len(live)} samples, mean read "
            f"{format_rate(mean_read)}, write {format_rate(mean_write)}"
        )
    for source, rows in loaded.arcstat.items():
        sizes = [r["size"] for r in rows if isinstance(r.get("size"), float | int)]
        if sizes:
            data["arcstat"][source] = {"samples": len(rows), "max_size_bytes": max(sizes)}
            lines.append(f"{source}: ARC up to {format_size(max(sizes))} over {len(rows)} samples")
    if not lines:
        return data, ""
    return data, "\n\npool logs (not used by the device fit):\n" + "\n".join(
        f"  {line}" for line in lines
    )


def fit_text(fit: Any) -> str:
    lines = [
        f"{fit.name}: {fit.kind}, {format_size(fit.device_bytes)}; "
        f"{sum(r.used for r in fit.residuals)} of {len(fit.residuals)} measurements fitted, "
        f"rms error {fit.rms_error:.1%} ({fit.status})",
        "",
        f"{'parameter':<18} {'value':>16} {'std. error':>12}  note",
    ]
    for p in fit.parameters:
        if p.unit == "s":
            value = format_time(p.value)
        elif p.unit == "B/s":
            value = format_rate(p.value)
        elif p.unit == "B":
            value = format_size(p.value)
        else:
            value = f"{p.value:.5g} {p.unit}"
        se = f"±{p.rel_stderr:.1%}" if p.rel_stderr is not None else "—"
        lines.append(f"{p.name:<18} {value:>16} {se:>12}  {p.note}")
    lines += ["", f"{'measurement':<34} {'measured':>11} {'fitted':>11} {'error':>8}"]
    for r in fit.residuals:
        pred = f"{r.predicted_iops:11.1f}" if r.predicted_iops is not None else f"{'—':>11}"
        err = f"{r.error:+8.1%}" if r.error is not None else f"{'—':>8}"
        mark = "" if r.used else f"  not fitted: {r.why}"
        lines.append(f"{r.name[:34]:<34} {r.measured_iops:11.1f} {pred} {err}{mark}")
    lines.extend(f"note: {n}" for n in fit.notes)
    return "\n".join(lines)


def host_fit_command(
    *, results: Sequence[str | Path], scenario: str, out: str, seed: int = 1
) -> tuple[dict[str, Any], str]:
    """``zsim calibrate fit RESULTS --scenario POOL.toml --out FITTED.toml``: pool-level runs
    → the host's CPU-cost multipliers (:mod:`zsim.calibrate.host_fit`), written as the
    scenario with ``hardware.cpu_io_cost_scale``/``cpu_byte_cost_scale`` set."""
    from zsim.calibrate.host_fit import PoolCase, fit_host_costs, with_multipliers
    from zsim.calibrate.jobs import job_scenario
    from zsim.calibrate.load import load_results
    from zsim.scenario import load_scenario

    path = Path(out)
    if not path.parent.is_dir():
        raise ZsimError(f"--out {out!r}: folder {str(path.parent)!r} does not exist")
    sc = load_scenario(scenario)
    loaded = load_results(results)
    cases = []
    for m in loaded.measurements:
        if not m.ok or m.purpose == "prepare":
            continue
        direction = "write" if m.direction() is m.write else "read"
        cases.append(
            PoolCase(
                name=m.name,
                scenario=job_scenario(m, sc.hardware.disk, base=sc),
                direction=direction,
                measured_bytes_per_s=m.direction().bytes_per_s,
            )
        )
    fit = fit_host_costs(cases, seed=seed or 1)
    fitted = with_multipliers(sc, fit.values)
    header = [
        f"# {sc.name or Path(scenario).stem}: CPU-cost multipliers fitted by 'zsim calibrate "
        f"fit --scenario' to {len(cases)} pool-level runs ({fit.message})",
    ]
    for p in fit.parameters:
        se = f" ± {p.stderr:.3g}" if p.stderr is not None else ""
        header.append(f"#   {p.name} = {p.value:.4g}{se}{'' if p.fitted else ' (kept)'} {p.note}")
    header.extend(
        f"#   {r.name}: measured {format_rate(r.measured)}, predicted "
        f"{format_rate(r.predicted)} ({r.error:+.1%}; {r.error_start:+.1%} before)"
        for r in fit.residuals
    )
    atomic_write_text(path, "\n".join(header) + "\n" + fitted.to_toml())
    text = "\n".join(line.removeprefix("# ") for line in header)
    return fit.to_dict() | {"scenario_file": str(path)}, text + f"\nscenario written to {path}"
