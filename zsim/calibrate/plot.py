"""Predicted vs measured as a PNG: one point per measurement, zsim and the rule of thumb,
on log axes with the ±15 % band (the issue's acceptance band for device predictions)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from zsim.errors import ZsimError


def plot_validation(val: Any, path: str | Path) -> Path:
    """Write ``val`` (a :class:`zsim.validation.profile.Validation`) as a PNG, atomically."""
    import matplotlib  # only for the optional plot; it is slow to import

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(path)
    if out.suffix.lower() != ".png":
        raise ZsimError(f"--plot {str(path)!r}: write a .png file")
    if not out.parent.is_dir():
        raise ZsimError(f"--plot {str(path)!r}: folder {str(out.parent)!r} does not exist")
    rows = [r for r in val.rows if r.predicted_iops]
    if not rows:
        raise ZsimError("nothing to plot: no measurement was predicted")
    fig, ax = plt.subplots(figsize=(6.4, 6.0), dpi=110)
    meas = [r.measured_iops for r in rows]
    ax.scatter(meas, [r.predicted_iops for r in rows], label="zsim", color="tab:blue", zorder=3)
    rule = [(r.measured_iops, r.rule_of_thumb_iops) for r in rows if r.rule_of_thumb_iops]
    if rule:
        ax.scatter(
            *zip(*rule, strict=True),
            label="rule of thumb",
            marker="x",
            color="tab:orange",
            zorder=2,
        )
    low, high = min(meas) / 2, max(meas) * 2
    ax.plot([low, high], [low, high], color="black", lw=1, label="measured = predicted")
    ax.fill_between(
        [low, high],
        [low * 0.85, high * 0.85],
        [low * 1.15, high * 1.15],
        color="grey",
        alpha=0.2,
        label="±15 %",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(low, high)
    ax.set_ylim(low, high)
    ax.set_xlabel("measured (I/O per second)")
    ax.set_ylabel("predicted (I/O per second)")
    ax.set_title(f"{val.profile}: predicted vs measured ({val.engine})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    plt.close(fig)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_bytes(buf.getvalue())
    tmp.replace(out)
    return out
