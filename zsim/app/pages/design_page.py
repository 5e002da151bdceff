"""Page 1, "Design a pool": capacity with its breakdown, every chosen workload's speed, what
it assumes and what limits it (the analytic engine; where it declines, the rule of thumb,
labelled, with the reason), the rule of thumb beside it, resilver time and loss probability,
cost; a button that runs the discrete-event simulation for one workload with a progress bar
(the only place the page starts it); designs pinned side by side; a one-page report."""

from __future__ import annotations

import time
from typing import Any

import streamlit as st

from zsim.app import design as model
from zsim.app import figures, pins, ui
from zsim.app.pages import design_extras, widgets
from zsim.units import TB, KiB, TiB


def capacity_chart(rows: list[dict[str, Any]]) -> Any:
    import altair as alt

    data = [{**r, "design": "pool", "TB": r["tb"], "TiB": r["tib"]} for r in rows]
    order = [p for _, p in model.BREAKDOWN_PARTS]
    return (
        alt.Chart(alt.Data(values=data))
        .mark_bar()
        .encode(
            x=alt.X("sum(TB):Q", title="raw capacity of all disks, TB (10^12 bytes)"),
            y=alt.Y("design:N", title=None, axis=None),
            color=alt.Color(
                "part:N",
                sort=order,
                title="where the raw bytes go",
                legend=alt.Legend(orient="right"),
            ),
            order=alt.Order("share:Q", sort="descending"),
            tooltip=[
                alt.Tooltip("part:N"),
                alt.Tooltip("TB:Q", format=".3f", title="TB"),
                alt.Tooltip("TiB:Q", format=".3f", title="TiB"),
                alt.Tooltip("share:Q", format=".2%", title="share of raw"),
            ],
        )
        # Streamlit sizes the whole chart (axis and legend included) to this height
        .properties(height=190)
    )


def latency_chart(quantiles: dict[str, dict[str, float]]) -> Any:
    import altair as alt

    data = [
        {"direction": d, "quantile": float(q), "latency_ms": v * 1e3}
        for d, qs in quantiles.items()
        for q, v in qs.items()
    ]
    return (
        alt.Chart(alt.Data(values=data))
        .mark_line(point=True)
        .encode(
            x=alt.X("latency_ms:Q", title="completion latency, ms", scale=alt.Scale(type="log")),
            y=alt.Y("quantile:Q", title="fraction of I/Os completed within (CDF)"),
            color=alt.Color("direction:N", title="direction"),
            tooltip=[
                "direction:N",
                alt.Tooltip("quantile:Q", format=".3f"),
                alt.Tooltip("latency_ms:Q", format=".3f", title="ms"),
            ],
        )
        .properties(height=280)
    )


def workload_rows(design: model.Design, seed: int = 1) -> list[dict[str, Any]]:
    """Each workload's figures from the fast engines (the analytic engine, else the rule of
    thumb with its reason) — or the DES result of the same scenario and seed when its button
    ran it. Never starts the DES."""
    rows = []
    for name in design.workloads:
        sc = design.scenario(name)
        toml = sc.to_toml()
        res, rule, declined = widgets.cached_fast(toml)
        des = widgets.known_des(toml, seed)
        label = model.PRESET_LABELS.get(name, "custom")
        row = figures.figure_row(name, label, sc, des or res, rule, declined)
        row["recordsize"] = design.workload_recordsize(name)
        rows.append(row)
    return rows


def design_summary(design: model.Design) -> dict[str, Any]:
    """A pinned design's summary (:func:`zsim.app.pins.summary`) from the caches: its
    capacity, fast figures, resilver once the background run has it, cost."""
    report = widgets.cached_capacity(design)
    rows = workload_rows(design, int(st.session_state.get("w_des_seed", 1)))
    res = widgets.resilver_if_ready(design.resilver_scenario().to_toml())
    resilver = model.resilver_summary(res) if res is not None else None
    return pins.summary(design, report, rows, resilver, model.costs(design, report.usable_bytes))


def render() -> None:
    st.title("Design a pool")
    design = st.session_state.get(widgets.DESIGN_KEY)
    if design is None:
        st.info("Fix the design in the sidebar to see its capacity and speed.")
        return
    st.caption(
        f"{design.disks} × {design.disk_label()} as `{design.layout}` — figures from the "
        f"analytic engine; where it declines, the planners' rule of thumb, labelled as such. "
        f"The discrete-event simulation runs only on its button below. Change anything in the "
        f"sidebar."
    )
    seed = int(st.session_state.get("w_des_seed", 1))

    report = None
    with widgets.guard("capacity"):
        report = widgets.cached_capacity(design)
        _capacity(report)

    rows: list[dict[str, Any]] = []
    with widgets.guard("performance"):
        st.subheader("Performance")
        rows = workload_rows(design, seed)
        _performance(rows)

    res_summary: dict[str, Any] | None = None
    with widgets.guard("resilver"):
        st.subheader("Resilver and durability")
        sc = design.resilver_scenario()
        keep = [d.resilver_scenario().to_toml() for d in design_extras.pinned()]
        res = widgets.resilver_when_ready(sc.to_toml(), keep=keep)
        if res is not None:
            res_summary = model.resilver_summary(res)
            _resilver(design, sc, res, res_summary)

    st.subheader("Cost")
    cost = model.costs(design, report.usable_bytes if report is not None else 0)
    money = st.columns(2)
    money[0].metric("Disks", ui.fmt_usd(cost["cost_usd"]))
    money[1].metric("Per usable TB", ui.fmt_usd(cost["usd_per_usable_tb"]))
    if design.price_usd is None:
        st.caption("Enter the price per disk in the sidebar to see costs; zsim does not guess.")

    _des_section(design, rows)

    summary = pins.summary(design, report, rows, res_summary, cost)
    design_extras.pins_section(design, summary, design_summary)

    st.subheader("Downloads")
    design_extras.report_button(
        summary,
        scenario_toml=design.scenario_toml(design.workloads[0]),
        resilver_toml=design.resilver_scenario().to_toml(),
        capacity_notes=tuple(report.notes) if report is not None else (),
    )
    doc = {
        "design": model.design_to_query(design),
        "capacity": report.to_dict() if report is not None else None,
        "workloads": rows,
        "resilver": res_summary,
        "cost": cost,
    }
    widgets.downloads(
        "zsim-design",
        scenario_toml=design.scenario_toml(design.workloads[0]),
        rows=rows,
        document=doc,
    )


def _capacity(report: Any) -> None:
    st.subheader("Capacity")
    c = st.columns(4)
    c[0].metric(
        "Usable capacity (TB)",
        f"{report.usable_bytes / TB:,.2f} TB",
        help="zfs list USED+AVAIL of the empty pool; TB = 10^12 bytes",
    )
    c[1].metric(
        "Usable capacity (TiB)",
        f"{report.usable_bytes / TiB:,.2f} TiB",
        help="TiB = 2^40 bytes",
    )
    c[2].metric(
        "Raw (all disks)",
        f"{(report.raw_bytes + report.support_raw_bytes) / TB:,.1f} TB",
        help=ui.fmt_size(report.raw_bytes + report.support_raw_bytes),
    )
    c[3].metric(
        "Efficiency",
        f"{report.efficiency:.1%}",
        help=f"fault tolerance: {report.fault_tolerance} disk(s)",
    )
    breakdown = model.capacity_breakdown(report)
    st.altair_chart(capacity_chart(breakdown), width="stretch")
    for note in report.notes:
        st.caption(note)


def _performance(rows: list[dict[str, Any]]) -> None:
    st.dataframe(figures.table_rows(rows), hide_index=True, width="stretch")
    st.caption(
        "MB = 10^6 bytes. Accuracy band: p10…p90 of zsim's error on the validation points of "
        "the same class of prediction (the rule of thumb: its own error). 'client' means the "
        "jobs' own queue depth bounds the rate, not a disk."
    )
    for r in rows:
        if r["declined"] and r["engine"] == "baseline":
            st.caption(
                f"**{r['label']}**: rule of thumb shown, not zsim's model — the analytic "
                f"engine declines: {figures.short_reason(r['declined'], 400)}. Run the "
                f"discrete-event simulation below for zsim's figure."
            )
    worst = [r for r in rows if r["rule_vs_zsim"] and not 0.5 <= r["rule_vs_zsim"] <= 2]
    for r in worst:
        st.caption(
            f"The rule of thumb says {r['rule_iops']:,.0f} IOPS for {r['label']}, "
            f"{r['rule_vs_zsim']:.1f}× zsim's {r['iops']:,.0f}."
        )
    with st.expander("What each figure assumes"):
        st.dataframe(
            [{"workload": r["label"], **r["assumptions"]} for r in rows],
            hide_index=True,
            width="stretch",
        )


def _resilver(design: model.Design, sc: Any, res: Any, summary: dict[str, Any]) -> None:
    c = st.columns(4)
    if res.lost:
        c[0].metric("Resilver time", "no redundancy")
    else:
        c[0].metric(
            "Resilver time",
            ui.fmt_time(res.seconds),
            help=f"one disk of a {design.fill:.0%} full pool of "
            f"{sc.pool.recordsize // KiB}K records, {res.method}",
        )
    c[1].metric(
        "Resilver rate",
        ui.fmt_rate(res.bytes_per_s),
        help="limited by " + figures.resilver_limit_words(res.limit, res.utilization, res.disk),
    )
    mission = summary["mission_seconds"]
    years = f"{mission / (365.25 * 86400):.0f} years" if mission else "the mission"
    no_rate = "not computed"
    c[2].metric(
        f"{pins.LOSS_LABEL} over {years}",
        ui.fmt_prob(summary["loss_probability"]) if summary["afr"] is not None else no_rate,
        help="P(the pool loses data) over the mission: AFR from the disk's profile, "
        "independent failures, these rebuild windows; docs/durability.md",
    )
    c[3].metric(
        pins.URE_LABEL,
        ui.fmt_prob(summary["ure_probability"]) if summary["afr"] is not None else no_rate,
        help=f"Over {years}. {pins.URE_HELP}",
    )
    st.caption(design_extras.resilver_note(design))


def _des_section(design: model.Design, rows: list[dict[str, Any]]) -> None:
    st.subheader("Run the discrete-event simulation")
    declined = [r["workload"] for r in rows if r["declined"]]
    names = list(design.workloads)
    default = names.index(declined[0]) if declined else 0
    c = st.columns([3, 1])
    name = c[0].selectbox(
        "Workload",
        names,
        index=default,
        key="w_des_workload",
        format_func=lambda w: model.PRESET_LABELS.get(w, "Custom (fio-like)"),
    )
    seed = int(c[1].number_input("Seed", min_value=0, value=1, step=1, key="w_des_seed"))
    with widgets.guard("discrete-event run"):
        toml = design.scenario_toml(name)
        result = widgets.known_des(toml, seed)
        if st.button("Run the discrete-event simulation", key="w_des_run", type="primary"):
            bar = st.progress(0.0, text="starting")
            started = time.perf_counter()

            def progress(sim_s: float, wall_s: float, ci_rel: float) -> None:
                share = min(sim_s / model.DES_MAX_SIM_SECONDS, 1.0)
                if ci_rel < float("inf"):
                    share = max(share, min(model.DES_TARGET_CI / ci_rel, 1.0))
                ci = f"CI ±{ci_rel:.1%}" if ci_rel < float("inf") else "warming up"
                bar.progress(
                    min(share, 0.99), text=f"{sim_s:.0f} s simulated in {wall_s:.1f} s, {ci}"
                )

            result = widgets.run_des(toml, seed, progress)
            bar.progress(1.0, text=f"done in {time.perf_counter() - started:.1f} s")
            st.rerun()  # the table above shows the DES figure from now on
        if result is None:
            st.caption(
                "Runs the SimPy model of this workload until the 95 % confidence interval of "
                f"the I/O rate is within {model.DES_TARGET_CI:.0%} (or "
                f"{model.DES_MAX_SIM_SECONDS:.0f} simulated seconds): a few seconds to a "
                "couple of minutes. The result is kept for this scenario and seed, and "
                "replaces the table's figure above."
            )
            return
        sc = design.scenario(name)
        label = model.PRESET_LABELS.get(name, "custom")
        row = figures.figure_row(name, label, sc, result, result, None)
        cols = st.columns(4)
        cols[0].metric("Bandwidth", ui.fmt_rate(row["bytes_per_s"]))
        cols[1].metric("IOPS", ui.fmt_iops(row["iops"]))
        cols[2].metric(
            "95 % CI (±)",
            "not reached" if result.ci_rel is None else f"{result.ci_rel:.1%}",
        )
        cols[3].metric("Limited by", result.limit, help=row["assumptions"]["limited by"])
        q = result.details.get("latency_quantiles_s") or {}
        if q:
            st.altair_chart(latency_chart(q), width="stretch")
        st.caption(
            f"{result.sim_seconds:.0f} s simulated ({result.warmup_seconds:.1f} s warm-up cut) "
            f"in {result.wall_seconds:.1f} s, seed {result.seed}. Limited by: "
            f"{row['assumptions']['limited by']}."
        )
        for note in result.notes:
            st.caption(note)
        widgets.downloads("zsim-des", rows=[row], document=result.to_dict(), key="des")
