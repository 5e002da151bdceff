"""Page 2, "Compare layouts": every sensible layout of the design's disks (``zsim sweep``),
side by side — capacity, random-read and random-write IOPS, streaming writes, fault tolerance,
cost, and on request resilver time and loss probability — with the Pareto front marked and
the rule of thumb's figures beside zsim's, to show where folklore misleads."""

from __future__ import annotations

from typing import Any

import streamlit as st

from zsim.app import design as model
from zsim.app import figures
from zsim.app.pages import widgets
from zsim.sweep.recommend import Objective, objectives_for, pareto_front
from zsim.units import MB

#: the sweep's preset workloads this page compares, and what each measures
WORKLOADS: dict[str, str] = {
    "4k-randread": "4K random read IOPS",
    "4k-randwrite": "4K random write IOPS",
    "backup-1m-write": "1M streaming write MB/s",
}
STREAMING = "backup-1m-write"


def pareto(table: Any, rows: list[dict[str, Any]], with_resilver: bool) -> set[str]:
    """Layouts on the Pareto front (``zsim recommend``'s objectives: usable space, each
    workload's speed, fault tolerance, cost when priced; plus resilver time when known)."""
    complete = [
        r for r in rows if all(r.get(f"{w}.bytes_per_s") is not None for w in table.workloads)
    ]
    objectives = objectives_for(table, complete)
    if with_resilver:
        complete = [r for r in complete if r.get("resilver_seconds") is not None]
        objectives.append(Objective("resilver", "resilver_seconds", -1, "resilver time"))
    return {r["layout"] for r in pareto_front(complete, objectives)}


def comparison_rows(table: Any, rule: Any, front: set[str]) -> list[dict[str, Any]]:
    """One row per layout: zsim's figures, the rule of thumb's, and the front (SI units)."""
    rules = {r["layout"]: r for r in rule.rows}
    out = []
    for r in table.rows:
        q = rules.get(r["layout"], {})
        row = {
            "layout": r["layout"],
            "pareto": r["layout"] in front,
            "usable_bytes": r["usable_bytes"],
            "usable_tb": r["usable_tb"],
            "usable_tib": r["usable_tib"],
            "efficiency": r["efficiency"],
            "fault_tolerance": r["fault_tolerance"],
            "cost_usd": r["cost_usd"],
            "usd_per_usable_tb": r["usd_per_usable_tb"],
        }
        for w in WORKLOADS:
            row[f"{w}.iops"] = r.get(f"{w}.iops")
            row[f"{w}.bytes_per_s"] = r.get(f"{w}.bytes_per_s")
            row[f"{w}.limit"] = r.get(f"{w}.limit")
            row[f"{w}.error"] = r.get(f"{w}.error")
            row[f"{w}.rule_iops"] = q.get(f"{w}.iops")
            row[f"{w}.rule_bytes_per_s"] = q.get(f"{w}.bytes_per_s")
        for key in ("resilver_seconds", "loss_probability"):
            row[key] = r.get(key)
        out.append(row)
    return out


def _display(rows: list[dict[str, Any]], with_resilver: bool) -> list[dict[str, Any]]:
    """The table as shown: numbers as text with their thousands separators, and where a
    figure does not exist a short reason (never None, nan or "error")."""

    def fig(r: dict[str, Any], key: str, scale: float = 1.0, fmt: str = ",.0f") -> str:
        value = r[key]
        if value is not None:
            return format(value / scale, fmt)
        workload = key.split(".")[0]
        why = r.get(f"{workload}.error")
        return f"no analytic figure: {figures.short_reason(why, 48)}" if why else "not computed"

    def rule(r: dict[str, Any], key: str, scale: float = 1.0, fmt: str = ",.0f") -> str:
        value = r[key]
        return "no rule for this layout" if value is None else format(value / scale, fmt)

    out = []
    for r in rows:
        d: dict[str, Any] = {
            "layout": r["layout"],
            "Pareto": "★" if r["pareto"] else "",
            "usable TB": round(r["usable_tb"], 2),
            "usable TiB": round(r["usable_tib"], 2),
            "efficiency %": round(r["efficiency"] * 100, 1),
            "disks that may fail": r["fault_tolerance"],
            "4K rand read IOPS": fig(r, "4k-randread.iops"),
            "rule of thumb": rule(r, "4k-randread.rule_iops"),
            "4K rand write IOPS": fig(r, "4k-randwrite.iops"),
            "rule of thumb ": rule(r, "4k-randwrite.rule_iops"),
            "1M write MB/s": fig(r, f"{STREAMING}.bytes_per_s", MB, ",.1f"),
            "rule of thumb  ": rule(r, f"{STREAMING}.rule_bytes_per_s", MB, ",.1f"),
            "$ per usable TB": (
                "no price entered"
                if r["usd_per_usable_tb"] is None
                else f"{r['usd_per_usable_tb']:,.1f}"
            ),
        }
        if with_resilver:
            secs, loss = r["resilver_seconds"], r["loss_probability"]
            d["resilver h"] = "not computed" if secs is None else f"{secs / 3600:,.1f}"
            d["P(loss) 5 y"] = "not computed" if loss is None else f"{loss:.2e}"
        out.append(d)
    return out


def scatter(rows: list[dict[str, Any]], y: str, title: str, scale: float = 1.0) -> Any:
    """Usable TB against ``rows[y] / scale`` (``title`` names the unit after the scaling)."""
    import altair as alt

    data = [
        {
            "layout": r["layout"],
            "usable TB": r["usable_tb"],
            "value": r[y] / scale,
            "front": "Pareto front" if r["pareto"] else "dominated",
            "fault tolerance": r["fault_tolerance"],
        }
        for r in rows
        if r[y] is not None
    ]
    return (
        alt.Chart(alt.Data(values=data))
        .mark_point(filled=True, size=90)
        .encode(
            x=alt.X("usable TB:Q", title="usable capacity, TB (10^12 bytes)"),
            y=alt.Y("value:Q", title=title),
            color=alt.Color(
                "front:N",
                title=None,
                scale=alt.Scale(domain=["Pareto front", "dominated"], range=["#d62728", "#9e9e9e"]),
            ),
            shape=alt.Shape("fault tolerance:O", title="disks that may fail"),
            tooltip=[
                "layout:N",
                alt.Tooltip("usable TB:Q", format=".1f"),
                alt.Tooltip("value:Q", format=",.0f", title=title),
                "fault tolerance:O",
            ],
        )
        .properties(height=320)
    )


def folklore_chart(rows: list[dict[str, Any]]) -> Any:
    """zsim's 4K random read IOPS against the rule of thumb's, per layout."""
    import altair as alt

    data = []
    for r in rows:
        for source, key in (
            ("zsim", "4k-randread.iops"),
            ("rule of thumb", "4k-randread.rule_iops"),
        ):
            if r[key] is not None:
                data.append({"layout": r["layout"], "source": source, "IOPS": r[key]})
    return (
        alt.Chart(alt.Data(values=data))
        .mark_bar()
        .encode(
            y=alt.Y("layout:N", title=None, sort=None),
            x=alt.X("IOPS:Q", title="4K random read IOPS (8 jobs × iodepth 8)"),
            color=alt.Color("source:N", title=None),
            yOffset="source:N",
            tooltip=["layout:N", "source:N", alt.Tooltip("IOPS:Q", format=",.0f")],
        )
        .properties(height=alt.Step(9))
    )


def render() -> None:
    st.title("Compare layouts")
    design = st.session_state.get(widgets.DESIGN_KEY)
    if design is None:
        st.info("Fix the design in the sidebar to compare its layouts.")
        return
    st.caption(
        f"Every sensible layout of {design.disks} × {design.disk_label()} (stripes, mirrors, "
        f"raidz1-3 at each width with the rest as hot spares, dRAID), as `zsim sweep` lists "
        f"them; performance from the analytic engine (each workload at its usual recordsize), "
        f"the rule of thumb beside it. ★ marks the Pareto front: no other layout is at least as "
        f"good on every measure (usable space, the three speeds, fault tolerance, cost when "
        f"priced, resilver time when computed) and better on one."
    )
    # the resilver columns simulate a resilver per layout (the DES): only on the button, and
    # kept for the designs it was pressed for (a sidebar change drops them, runs nothing)
    done: set[str] = st.session_state.setdefault("zsim_cmp_resilver_for", set())
    key = repr(sorted(model.design_to_query(design).items()))
    if st.button(
        "Add resilver time and loss probability",
        key="w_cmp_resilver",
        disabled=key in done,
        help="Simulates a resilver for every layout: a minute or two the first time for a "
        "design; kept while you come back to the same design",
    ):
        done.add(key)
    with_resilver = key in done
    with widgets.guard("comparison"):
        what = "Simulating every layout's resilver" if with_resilver else "Sweeping every layout"
        with st.spinner(what):
            table = widgets.cached_sweep(design, tuple(WORKLOADS), "analytic", with_resilver)
            rule = widgets.cached_sweep(design, tuple(WORKLOADS), "baseline", False)
        front = pareto(table, table.rows, with_resilver)
        rows = comparison_rows(table, rule, front)
        st.metric("Layouts compared", len(rows), help=f"{len(front)} on the Pareto front")
        st.dataframe(_display(rows, with_resilver), hide_index=True, width="stretch")
        reasons: dict[str, list[str]] = {}
        for r in rows:
            for w in WORKLOADS:
                why = r[f"{w}.error"]
                if why:
                    reasons.setdefault(figures.short_reason(why, 400), []).append(
                        f"{r['layout']} ({w})"
                    )
        for why, where in reasons.items():
            st.caption(
                f"No analytic figure for {', '.join(where)}: {why}. The rule of thumb is "
                f"beside it; put the layout in the sidebar and run the discrete-event "
                f"simulation on the Design page for zsim's figure."
            )
        c = st.columns(2)
        c[0].altair_chart(scatter(rows, "4k-randread.iops", "4K random read IOPS"), width="stretch")
        c[1].altair_chart(
            scatter(rows, f"{STREAMING}.bytes_per_s", "1M streaming write, MB/s", MB),
            width="stretch",
        )
        if with_resilver:
            c = st.columns(2)
            c[0].altair_chart(
                scatter(rows, "resilver_seconds", "resilver time, hours", 3600.0), width="stretch"
            )
            c[1].altair_chart(
                scatter(rows, "4k-randwrite.iops", "4K random write IOPS"), width="stretch"
            )
        st.subheader("Where the rule of thumb misleads")
        st.caption(
            "The planners' rule: a raidz vdev reads and writes small blocks like one disk, a "
            "mirror reads like all its disks; streaming scales with the data disks. zsim "
            "counts the ARC, queueing, the txg's batching of writes and the column maps."
        )
        st.altair_chart(folklore_chart(rows), width="stretch")
        ratios = [
            (r["layout"], r["4k-randwrite.iops"] / r["4k-randwrite.rule_iops"])
            for r in rows
            if r["4k-randwrite.iops"] and r["4k-randwrite.rule_iops"]
        ]
        if ratios:
            lo = min(ratios, key=lambda t: t[1])
            hi = max(ratios, key=lambda t: t[1])
            st.caption(
                f"4K random writes: zsim predicts {lo[1]:.1f}× ({lo[0]}) to {hi[1]:.0f}× "
                f"({hi[0]}) the rule of thumb — ZFS gathers random writes into sequential "
                f"txg writes, which the rule ignores."
            )
        widgets.downloads(
            "zsim-compare",
            rows=rows,
            document=table.to_dict(),
            scenario_toml=design.scenario_toml(design.workloads[0]),
        )
