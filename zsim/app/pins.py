"""Designs pinned side by side, and the one-page report of a design — without Streamlit.

A planner explores by changing one thing and looking; to choose, they pin two or three
designs (:data:`MAX_PINS`) and compare them. :func:`summary` condenses one design's figures
(capacity, performance with accuracy bands, resilver, risk, cost, assumptions) into plain
data; :func:`side_by_side` lays pinned summaries out as rows of text (one column per design,
never a ``None`` cell); :func:`report_markdown` writes the one-page report the Design page
offers for download, with the zsim version and the scenario TOML.

Units: SI base units in the summaries; the text says TB (10^12 bytes) and TiB (2^40 bytes),
MB/s (10^6 bytes/s), hours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from zsim.units import MB, TB, TiB, format_time

#: how many designs can be pinned at once
MAX_PINS = 3
#: the app's words for the loss figures (the same as ``zsim resilver``'s text report)
LOSS_LABEL = "P(loss)"
URE_LABEL = "P(unrecoverable block)"
URE_HELP = (
    "The probability of at least one unrecoverable block over the mission: a read error "
    "(URE) while some group had no redundancy left during a rebuild — a partial loss, "
    "reported apart from P(loss). `zsim resilver` prints the same figure as "
    "'P(unrecoverable block)'."
)


def _fmt_prob(p: float | None, why: str) -> str:
    return why if p is None else f"{p:.2e}"


def _years(seconds: float | None) -> str:
    return f"{seconds / (365.25 * 86400):.0f} years" if seconds else "the mission"


def summary(
    design: Any,
    report: Any,
    rows: Sequence[Mapping[str, Any]],
    resilver: Mapping[str, Any] | None,
    cost: Mapping[str, float | None],
) -> dict[str, Any]:
    """One design's figures as plain data: ``design`` (:class:`zsim.app.design.Design`),
    ``report`` (its :class:`zsim.capacity` report, or None when it failed), ``rows`` (the
    Design page's workload rows, :func:`zsim.app.figures.figure_row`), ``resilver``
    (:func:`zsim.app.design.resilver_summary`, or None) and ``cost``
    (:func:`zsim.app.design.costs`)."""
    return {
        "name": f"{design.layout} of {design.disks} × {design.disk_label()}",
        "layout": design.layout,
        "disks": design.disks,
        "disk": design.disk_label(),
        "usable_bytes": report.usable_bytes if report is not None else None,
        "efficiency": report.efficiency if report is not None else None,
        "fault_tolerance": report.fault_tolerance if report is not None else None,
        "workloads": [
            {
                "label": r["label"],
                "engine": r["engine_text"],
                "bytes_per_s": r["bytes_per_s"],
                "iops": r["iops"],
                "band": r["band"],
                "limit": r["assumptions"]["limited by"],
                "assumptions": dict(r["assumptions"]),
            }
            for r in rows
        ],
        "resilver": dict(resilver) if resilver else None,
        "cost_usd": cost.get("cost_usd"),
        "usd_per_usable_tb": cost.get("usd_per_usable_tb"),
    }


def _capacity_text(s: Mapping[str, Any]) -> str:
    if s["usable_bytes"] is None:
        return "not computed (the capacity model refused the layout)"
    return f"{s['usable_bytes'] / TB:,.2f} TB ({s['usable_bytes'] / TiB:,.2f} TiB)"


def _resilver_texts(s: Mapping[str, Any]) -> dict[str, str]:
    r = s["resilver"]
    if not r:
        pending = "not ready yet (simulating in the background)"
        return {"resilver time": pending, LOSS_LABEL: pending, URE_LABEL: pending}
    if r.get("lost"):
        time_text = "no rebuild: no redundancy (the disk's data is lost)"
    elif r.get("seconds") is None:
        time_text = "not computed"
    else:
        time_text = format_time(r["seconds"])
    no_rate = "not computed: the disk has no failure rate (afr or mtbf_hours)"
    years = _years(r.get("mission_seconds"))
    return {
        "resilver time": time_text,
        f"{LOSS_LABEL} over {years}": _fmt_prob(r.get("loss_probability"), no_rate),
        f"{URE_LABEL} over {years}": _fmt_prob(r.get("ure_probability"), no_rate),
    }


def _usd(x: float | None) -> str:
    return "no price entered" if x is None else f"${x:,.0f}"


def pin_rows(s: Mapping[str, Any]) -> dict[str, str]:
    """One summary as measure → text (every value a string, none empty)."""
    out: dict[str, str] = {
        "layout": s["layout"],
        "disks": f"{s['disks']} × {s['disk']}",
        "usable capacity": _capacity_text(s),
        "efficiency": "not computed" if s["efficiency"] is None else f"{s['efficiency']:.1%}",
        "disks that may fail": (
            "not computed" if s["fault_tolerance"] is None else str(s["fault_tolerance"])
        ),
    }
    for w in s["workloads"]:
        out[f"{w['label']}"] = (
            f"{w['bytes_per_s'] / MB:,.1f} MB/s, {w['iops']:,.0f} IOPS — {w['engine']}, "
            f"accuracy {w['band']}"
        )
        out[f"{w['label']}: limited by"] = w["limit"]
    out.update(_resilver_texts(s))
    out["cost of the disks"] = _usd(s["cost_usd"])
    out["cost per usable TB"] = _usd(s["usd_per_usable_tb"])
    return out


def side_by_side(pins: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Pinned summaries as rows (one per measure) and columns (one per design). A measure
    one design lacks (a workload the other did not run) reads "not in this design"."""
    columns = [f"{chr(65 + i)}: {p['name']}" for i, p in enumerate(pins)]
    per = [pin_rows(p) for p in pins]
    measures: list[str] = []
    for rows in per:
        measures.extend(m for m in rows if m not in measures)
    missing = "not in this design"
    return [
        {"measure": m, **{c: r.get(m, missing) for c, r in zip(columns, per, strict=True)}}
        for m in measures
    ]


def report_markdown(
    s: Mapping[str, Any],
    *,
    version: str,
    scenario_toml: str,
    capacity_notes: Sequence[str] = (),
    resilver_note: str = "",
) -> str:
    """The one-page report of a design summary (:func:`summary`) as Markdown: capacity,
    performance with accuracy bands, resilver, risk, cost, what each figure assumes, the
    zsim version and the scenario TOML (``zsim simulate`` runs it)."""
    lines = [
        f"# zsim design report: {s['name']}",
        "",
        f"zsim {version}. TB = 10^12 bytes, TiB = 2^40 bytes, MB/s = 10^6 bytes/s.",
        "",
        "## Capacity",
        "",
        f"- usable: {_capacity_text(s)}",
        f"- efficiency: {pin_rows(s)['efficiency']} of the raw bytes",
        f"- disks that may fail without losing data: {pin_rows(s)['disks that may fail']}",
    ]
    lines += [f"- {n}" for n in capacity_notes]
    lines += [
        "",
        "## Performance",
        "",
        "| workload | engine | MB/s | IOPS | accuracy band | limited by |",
        "|---|---|---:|---:|---|---|",
    ]
    for w in s["workloads"]:
        lines.append(
            f"| {w['label']} | {w['engine']} | {w['bytes_per_s'] / MB:,.1f} | "
            f"{w['iops']:,.0f} | {w['band']} | {w['limit']} |"
        )
    lines += ["", "## Resilver and risk", ""]
    lines += [f"- {k}: {v}" for k, v in _resilver_texts(s).items()]
    if resilver_note:
        lines.append(f"- {resilver_note}")
    lines += [
        "",
        "## Cost",
        "",
        f"- disks: {_usd(s['cost_usd'])}",
        f"- per usable TB: {_usd(s['usd_per_usable_tb'])}",
        "",
        "## Assumptions",
        "",
    ]
    for w in s["workloads"]:
        lines.append(f"**{w['label']}**")
        lines.append("")
        lines += [f"- {k}: {v}" for k, v in w["assumptions"].items()]
        lines.append("")
    lines += [
        "## Scenario",
        "",
        "The first workload's scenario (`zsim simulate` runs it; the others differ in "
        "`[workload]` and the recordsize):",
        "",
        "```toml",
        scenario_toml.rstrip(),
        "```",
        "",
    ]
    return "\n".join(lines)
