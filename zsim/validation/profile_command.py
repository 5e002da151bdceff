"""``zsim validate --profile NAME RESULTS…``: a (fitted) profile against measured fio/dd
results, with leave-one-out refits and the rule of thumb; option texts in, ``(data, text)``
out, like the commands of :mod:`zsim.calibrate.commands`."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zsim.calibrate.fit import fit_device
from zsim.calibrate.load import load_results
from zsim.errors import ZsimError
from zsim.hardware.catalog import load_profile
from zsim.scenario import load_scenario
from zsim.units import format_size
from zsim.validation.profile import validate_measurements


def validate_command(
    *,
    profile: str,
    sets: Sequence[str | Path],
    scenario: str | None = None,
    no_loo: bool = False,
    engine: str = "des",
    seed: int = 1,
    plot: str | None = None,
) -> tuple[dict[str, Any], str]:
    """``zsim validate --profile NAME RESULTS…``: predict every fio/dd result in ``sets``
    with the profile (on ``scenario``'s pool, else the bare device) and compare; leave-one-out
    refits unless ``no_loo``; ``plot`` a PNG path to write predicted vs measured to."""
    if not sets:
        raise ZsimError("--profile needs result files or folders to validate against")
    prof = load_profile(profile)
    loaded = load_results(sets)
    if not loaded.measurements:
        raise ZsimError("no fio or dd measurements among the files to validate against")
    base = None
    if scenario:
        base = load_scenario(scenario)
    fit = None
    device_bytes = prof.size_bytes
    if not no_loo and base is None:
        try:
            fit = fit_device(
                loaded.measurements,
                name=prof.name,
                kind=prof.kind,
                device_bytes=device_bytes,
                base=profile_base(prof),
            )
        except ZsimError as err:
            sys.stderr.write(f"zsim: note: no leave-one-out ({err})\n")

    def progress(i: int, n: int, name: str) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\r[{i}/{n}] {name[:50]:<50}")
            sys.stderr.flush()

    val = validate_measurements(
        prof,
        loaded.measurements,
        device_bytes=device_bytes,
        base=base,
        fit=fit,
        engine=engine,
        seed=seed,
        progress=progress,
    )
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    if plot:
        from zsim.calibrate.plot import plot_validation

        plot_validation(val, plot)
    return val.to_dict(), validation_text(val) + (f"\nplot written to {plot}" if plot else "")


def profile_base(profile: Any) -> dict[str, Any]:
    keep = (
        "pcie_gen",
        "pcie_lanes",
        "interface",
        "link_rate",
        "cache",
        "sector",
        "logical_sector",
        "physical_sector",
        "write_back",
        "power_loss_protection",
    )
    data = profile.to_dict()
    return {k: data[k] for k in keep if k in data}


def validation_text(val: Any) -> str:
    lines = [
        f"profile {val.profile}: predicted ({val.engine}) vs measured, IOPS; error = "
        f"predicted / measured − 1",
        f"{'measurement':<30} {'rw':<9} {'bs':>6} {'QD':>3} {'measured':>10} {'zsim':>10} "
        f"{'error':>7} {'LOO':>7} {'rule':>7}  limit",
    ]

    def pct(v: float | None) -> str:
        return f"{v:+7.1%}" if v is not None else f"{'—':>7}"

    for r in val.rows:
        pred = f"{r.predicted_iops:10.1f}" if r.predicted_iops is not None else f"{'—':>10}"
        lines.append(
            f"{r.name[:30]:<30} {r.rw:<9} {format_size(r.bs):>6} {r.outstanding:>3} "
            f"{r.measured_iops:10.1f} {pred} {pct(r.error)} {pct(r.loo_error)} "
            f"{pct(r.rule_of_thumb_error)}  {r.limit or r.note[:40]}"
        )
    s = val.summary()
    for key, label in (
        ("zsim", "zsim"),
        ("leave_one_out", "leave-one-out"),
        ("rule_of_thumb", "rule of thumb"),
    ):
        st = s[key]
        if st["n"]:
            lines.append(
                f"{label:<14} n={st['n']:<3} mean |error| {st['mean_abs']:.1%}, worst "
                f"{st['max_abs']:.1%}, bias {st['bias']:+.1%}"
            )
    lines.extend(f"note: {n}" for n in val.notes)
    return "\n".join(lines)
