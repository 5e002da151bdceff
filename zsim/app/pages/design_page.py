"""Page 1, "Design a pool": capacity with its breakdown, every chosen workload's speed and
what limits it (analytic engine where it is valid, else the discrete-event engine with
reproducible caps), the rule of thumb beside it, resilver time and loss probability, cost; and
a button that runs the discrete-event engine for one workload with a progress bar."""

from __future__ import annotations

import time
from typing import Any

import streamlit as st

from zsim.app import design as model
from zsim.app import ui
from zsim.app.pages import widgets
from zsim.units import MB, TB, KiB, TiB


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


def workload_rows(design: model.Design) -> list[dict[str, Any]]:
    """Each workload's figures: the analytic engine where valid, else the DES (cached)."""
    rows = []
    for name in design.workloads:
        sc = design.scenario(name)
        toml = sc.to_toml()
        _engine, why = model.auto_engine(sc)
        res = widgets.cached_simulate(toml, "auto")
        rule = widgets.cached_simulate(toml, "baseline")
        row = model.result_row(name, res, rule)
        row["recordsize"] = design.workload_recordsize(name)
        row["why_des"] = why
        rows.append(row)
    return rows


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1e3, 2)


def _table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The performance table as shown (MB = 10^6 bytes, ms)."""
    return [
        {
            "workload": r["label"],
            "recordsize": r["recordsize"],
            "engine": r["engine"],
            "MB/s": round(r["bytes_per_s"] / MB, 1),
            "IOPS": round(r["iops"]),
            "mean latency (ms)": _ms(r["latency_mean_s"]),
            "p99 latency (ms)": _ms(r["latency_p99_s"]),
            "limited by": r["limit"],
            "rule of thumb MB/s": round(r["rule_bytes_per_s"] / MB, 1),
            "rule of thumb IOPS": round(r["rule_iops"]),
        }
        for r in rows
    ]


def render() -> None:
    st.title("Design a pool")
    design = st.session_state.get(widgets.DESIGN_KEY)
    if design is None:
        st.info("Fix the design in the sidebar to see its capacity and speed.")
        return
    st.caption(
        f"{design.disks} × {design.disk_label()} as `{design.layout}` — analytic engine where "
        f"it is valid, the discrete-event engine (5 % CI) elsewhere; change anything in the "
        f"sidebar."
    )

    report = None
    with widgets.guard("capacity"):
        report = widgets.cached_capacity(design)
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

    rows: list[dict[str, Any]] = []
    with widgets.guard("performance"):
        st.subheader("Performance")
        with st.spinner("Computing each workload (the DES takes a few seconds the first time)"):
            rows = workload_rows(design)
        st.dataframe(_table(rows), hide_index=True, width="stretch")
        for r in rows:
            if r["why_des"]:
                st.caption(f"{r['label']}: discrete-event engine — {r['why_des']}.")
        worst = [r for r in rows if r["rule_vs_zsim"] and not 0.5 <= r["rule_vs_zsim"] <= 2]
        for r in worst:
            st.caption(
                f"The rule of thumb says {r['rule_iops']:,.0f} IOPS for {r['label']}, "
                f"{r['rule_vs_zsim']:.1f}× zsim's {r['iops']:,.0f}."
            )

    res_summary: dict[str, Any] = {}
    with widgets.guard("resilver"):
        st.subheader("Resilver and durability")
        sc = design.resilver_scenario()
        with st.spinner("Simulating the resilver"):
            res = widgets.cached_resilver(sc.to_toml())
        res_summary = model.resilver_summary(res)
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
        c[1].metric("Resilver rate", ui.fmt_rate(res.bytes_per_s), help=f"limit: {res.limit}")
        mission = res_summary["mission_seconds"]
        years = f"{mission / (365.25 * 86400):.0f} years" if mission else "mission"
        c[2].metric(
            f"P(data loss) over {years}",
            ui.fmt_prob(res_summary["loss_probability"]),
            help="AFR from the disk's profile; docs/durability.md",
        )
        c[3].metric("P(read error in rebuild)", ui.fmt_prob(res_summary["ure_probability"]))

    st.subheader("Cost")
    cost = model.costs(design, report.usable_bytes if report is not None else 0)
    money = st.columns(2)
    money[0].metric("Disks", ui.fmt_usd(cost["cost_usd"]))
    money[1].metric("Per usable TB", ui.fmt_usd(cost["usd_per_usable_tb"]))
    if design.price_usd is None:
        st.caption("Enter the price per disk in the sidebar to see costs; zsim does not guess.")

    _des_section(design)

    st.subheader("Downloads")
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


def _des_section(design: model.Design) -> None:
    st.subheader("Discrete-event run")
    name = st.selectbox(
        "Workload",
        list(design.workloads),
        key="w_des_workload",
        format_func=lambda w: model.PRESET_LABELS.get(w, "Custom (fio-like)"),
    )
    seed = int(st.number_input("Seed", min_value=0, value=1, step=1, key="w_des_seed"))
    with widgets.guard("discrete-event run"):
        toml = design.scenario_toml(name)
        result = widgets.remembered_des(toml, seed)
        if st.button("Run the discrete-event engine", key="w_des_run", type="primary"):
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

            result = model.simulate_des(ui.scenario_from_toml(toml), seed=seed, progress=progress)
            bar.progress(1.0, text=f"done in {time.perf_counter() - started:.1f} s")
            widgets.remember_des(toml, seed, result)
        if result is None:
            st.caption(
                "Runs the SimPy model until the 95 % confidence interval of the I/O rate "
                "is within 5 % (or 120 simulated seconds)."
            )
            return
        row = model.result_row(name, result)
        c = st.columns(4)
        c[0].metric("Bandwidth", ui.fmt_rate(row["bytes_per_s"]))
        c[1].metric("IOPS", ui.fmt_iops(row["iops"]))
        c[2].metric("95 % CI (±)", "—" if result.ci_rel is None else f"{result.ci_rel:.1%}")
        c[3].metric("Limited by", result.limit)
        q = result.details.get("latency_quantiles_s") or {}
        if q:
            st.altair_chart(latency_chart(q), width="stretch")
        st.caption(
            f"{result.sim_seconds:.0f} s simulated ({result.warmup_seconds:.1f} s warm-up cut) "
            f"in {result.wall_seconds:.1f} s, seed {result.seed}."
        )
        widgets.downloads("zsim-des", rows=[row], document=result.to_dict(), key="des")
