"""Page 5, "Resilver": the progress curve of a resilver for the design in the sidebar, on an
idle pool and (on request) under the design's workload, beside a dRAID of the same disks
rebuilt onto its distributed spare — with each case's time, rate, what limits it and the
probability of losing data over the mission.

The cases and rows come from :mod:`zsim.app.resilver_view` (no Streamlit there); each
resilver is ``zsim.resilver`` of a canonical scenario TOML, cached by
:func:`widgets.resilvers_when_ready` (in a worker process, off the page's critical path).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import streamlit as st

from zsim.app import design as model
from zsim.app import figures, ui
from zsim.app import resilver_view as rv
from zsim.app.pages import widgets

#: session_state key: the page's inputs, kept while another page is shown (Streamlit drops a
#: widget's state when the widget is not drawn in a run)
INPUTS_KEY = "zsim_resilver_inputs"
#: session_state key of a page's own query-string parameters (app.py writes them to the URL)
PAGE_QUERY_KEY = "zsim_page_query"

WRITTEN_LABELS = {
    "sequential": "sequentially (large files streamed)",
    "random": "randomly (small random overwrites)",
}
#: the page's widget keys, which are also its query-string keys (the URL holds the ones that
#: differ from their defaults)
INPUT_KEYS = ("r_disk", "r_written", "r_load", "r_wl", "r_draid", "r_draid_n")


def progress_chart(rows: list[dict[str, Any]]) -> Any:
    """Percent of the disk's allocated data resilvered against hours, one line per case."""
    import altair as alt

    order = list(dict.fromkeys(r["case"] for r in rows))
    return (
        alt.Chart(alt.Data(values=rows))
        .mark_line(point=True)
        .encode(
            x=alt.X("hours:Q", title="hours since the resilver started"),
            y=alt.Y(
                "percent:Q",
                title=["resilvered, % of the disk's", "allocated data"],
                scale=alt.Scale(domain=[0, 100]),
            ),
            color=alt.Color(
                "case:N",
                sort=order,
                scale=alt.Scale(scheme="category10"),
                title="case",
                legend=alt.Legend(orient="bottom", columns=1, labelLimit=600),
            ),
            tooltip=[
                alt.Tooltip("case:N"),
                alt.Tooltip("hours:Q", format=".2f", title="hours"),
                alt.Tooltip("percent:Q", format=".1f", title="% done"),
                alt.Tooltip("bytes:Q", format=".4~s", title="bytes resilvered"),
            ],
        )
        .properties(height=420)
    )


# ---------------------------------------------------------------- inputs


def _current_design() -> model.Design | None:
    """The sidebar's design, or ``None`` when its inputs do not make one (the sidebar has
    shown the error)."""
    design: model.Design | None = st.session_state.get(widgets.DESIGN_KEY)
    return design


def _from_query() -> dict[str, Any]:
    """The page's inputs from the URL (a shared link), read once per session."""
    q = st.query_params
    out: dict[str, Any] = {}
    if "r_disk" in q:
        out["r_disk"] = str(q["r_disk"])
    if q.get("r_written") in rv.WRITTEN:
        out["r_written"] = str(q["r_written"])
    if "r_load" in q:
        out["r_load"] = str(q["r_load"]) in ("1", "true", "True")
    if "r_wl" in q:
        out["r_wl"] = str(q["r_wl"])
    if "r_draid" in q:
        out["r_draid"] = str(q["r_draid"]) not in ("0", "false", "False")
    if "r_draid_n" in q:
        with contextlib.suppress(ValueError):
            out["r_draid_n"] = int(str(q["r_draid_n"]))
    return out


def _seed_inputs(design: model.Design, disks: tuple[str, ...]) -> None:
    """Put the page's inputs into session state before the widgets are drawn: from the URL
    on the first visit, else as they were left; invalid ones back to their defaults."""
    ss = st.session_state
    if INPUTS_KEY not in ss:
        ss[INPUTS_KEY] = {**_from_query(), "draid_n_auto": None}
    saved = ss[INPUTS_KEY]
    for key in INPUT_KEYS:
        if key not in ss and key in saved:
            ss[key] = saved[key]
    if disks and ss.get("r_disk") not in disks:
        ss["r_disk"] = disks[0]
    if ss.get("r_written") not in rv.WRITTEN:
        ss["r_written"] = "sequential"
    ss.setdefault("r_load", False)
    ss.setdefault("r_draid", True)
    workloads = list(design.workloads)
    if workloads and ss.get("r_wl") not in workloads:
        ss["r_wl"] = workloads[0]
    # the dRAID's disk count follows the design's until it is changed on this page
    auto, n = saved.get("draid_n_auto"), ss.get("r_draid_n")
    if not isinstance(n, int) or not 2 <= n <= 255 or n == auto:
        ss["r_draid_n"] = max(2, min(255, design.disks))
    saved["draid_n_auto"] = design.disks


def _save_inputs(design: model.Design, disks: tuple[str, ...]) -> None:
    """Keep the inputs for the next visit and put the non-default ones in the URL."""
    ss = st.session_state
    saved = ss[INPUTS_KEY]
    for key in INPUT_KEYS:
        if key in ss:
            saved[key] = ss[key]
    defaults: dict[str, Any] = {
        "r_disk": disks[0] if disks else "",
        "r_written": "sequential",
        "r_load": False,
        "r_wl": design.workloads[0] if design.workloads else "",
        "r_draid": True,
        "r_draid_n": design.disks,
    }
    query: dict[str, str] = {}
    for key in INPUT_KEYS:
        value = ss.get(key)
        if key == "r_wl" and not ss.get("r_load"):
            continue
        if key == "r_draid_n" and not ss.get("r_draid"):
            continue
        if value is not None and value != defaults[key]:
            query[key] = ("1" if value else "0") if isinstance(value, bool) else str(value)
    ss[PAGE_QUERY_KEY] = query


def _inputs(design: model.Design) -> dict[str, Any]:
    """Draw the page's inputs; return them as :func:`rv.plan_cases` keywords."""
    ss = st.session_state
    disks = rv.failed_disk_choices(design)
    _seed_inputs(design, disks)
    c = st.columns([1, 2, 2])
    if disks:
        c[0].selectbox(
            "Failed disk",
            list(disks),
            key="r_disk",
            help="The data disk that dies (default: the first, as `zsim resilver`)",
        )
    c[1].radio(
        "The data was written",
        list(rv.WRITTEN),
        key="r_written",
        format_func=lambda w: WRITTEN_LABELS[w],
        horizontal=True,
        help="Small random overwrites scatter the blocks, and the scan seeks between "
        "them (resilver.written)",
    )
    c[2].caption(
        f"Pool fill {design.fill:.0%} (sidebar → Dataset → Pool fill), "
        f"{rv.resilver_recordsize(design)} records"
        f"{' (OpenZFS default: recordsize auto)' if design.recordsize == 'auto' else ''}."
    )
    c = st.columns([1, 2, 1, 1])
    c[0].checkbox(
        "Also under load",
        key="r_load",
        help="Runs the workload during the resilver (resilver.under_load): the "
        "resilver slowed by the load and the load by the resilver. Takes 30 s to "
        "a few minutes the first time.",
    )
    if ss["r_load"] and design.workloads:
        c[1].selectbox(
            "Workload during the resilver",
            list(design.workloads),
            key="r_wl",
            format_func=lambda w: model.PRESET_LABELS.get(w, "Custom (fio-like)"),
        )
    c[2].checkbox(
        "Compare with dRAID",
        key="r_draid",
        help="A dRAID of the same disks rebuilt onto its distributed spare",
    )
    if ss["r_draid"]:
        c[3].number_input(
            "dRAID disks",
            min_value=2,
            max_value=255,
            step=1,
            key="r_draid_n",
            help="Children of the dRAID compared (default: the design's disk "
            "count); more disks than the group width is where dRAID gains",
        )
    _save_inputs(design, disks)
    return {
        "disk": ss.get("r_disk", "") if disks else "",
        "written": ss["r_written"],
        "under_load": bool(ss["r_load"]),
        "workload": ss.get("r_wl", "") if ss["r_load"] else "",
        "draid": bool(ss["r_draid"]),
        "draid_children": int(ss["r_draid_n"]) if ss["r_draid"] else 0,
    }


# ---------------------------------------------------------------- output


def _run(plan: rv.Plan) -> dict[str, Any] | None:
    """Every case's resilver, or ``None`` while some still run in the background (the page
    then shows a line that polls for them and reruns when they are done)."""
    found = widgets.resilvers_when_ready([case.toml for case in plan.cases])
    if found is None:
        if any(case.loaded for case in plan.cases):
            st.caption("The case under load runs the workload too: 30 s to a few minutes.")
        return None
    return {case.key: r for case, r in zip(plan.cases, found, strict=True)}


def _metrics(design: model.Design, main: Mapping[str, Any], result: Any) -> None:
    years = (main.get("mission_seconds") or 5 * rv.YEAR) / rv.YEAR
    c = st.columns(4)
    c[0].metric(
        "Resilver time",
        ui.fmt_time(main["seconds"]),
        help=f"{main['case']}; {ui.fmt_size(main['bytes_resilvered'])} written to the replacement",
    )
    c[1].metric(
        "Resilver rate",
        ui.fmt_rate(main["bytes_per_s"]),
        help="Bytes written to the replacement per second, SI MB = 10^6 bytes",
    )
    c[2].metric(
        "Limited by",
        figures.resilver_limit_short(main["limit"], main["disk"]),
        help=f"{main['limit_words']}: the busiest resource (≥ 85 % busy), or the scan's "
        f"own pacing when none is",
    )
    c[3].metric(
        f"P(loss) over {years:.0f} years",
        ui.fmt_prob(main["loss_probability"]),
        help="docs/durability.md: AFR from the disk's profile, independent failures",
    )
    st.caption(
        f"Disk {main['disk']} of `{design.layout}` ({design.disks} × {design.disk_label()}) "
        f"fails; {ui.fmt_size(main['bytes_resilvered'])} to rebuild, "
        f"{ui.fmt_size(main['bytes_read'])} read from the surviving disks."
        + (f" {result.notes[0]}." if getattr(result, "notes", ()) else "")
    )


def _summary_table(out: rv.Outcome) -> None:
    rows = rv.table_rows(out.summary)
    for r in rows:  # a short reason where a figure does not exist, never None
        for k in list(r):
            if k.startswith("P(loss)"):
                r[k] = "none of its own" if r[k] is None else ui.fmt_prob(r[k])
        # a column of text and numbers is text throughout (Arrow takes one type a column)
        scrub, wait = r["then scrub (h)"], r["wait before (h)"]
        r["then scrub (h)"] = "no scrub needed (healing)" if scrub is None else f"{scrub:.2f}"
        r["wait before (h)"] = "no rebuild" if wait is None else f"{wait:.1f}"
    st.dataframe(rows, hide_index=True, width="stretch")
    st.caption(
        "Time: from the start of the rebuild until redundancy is back. 'then scrub': the "
        "scrub a sequential rebuild starts (checksums), redundancy already back. 'wait "
        "before': from the failure to the start (durability.replace_after; none for a "
        "distributed or hot spare) — counted in P(loss), not in the time. P(loss) "
        "of the under-load case: if every rebuild ran under that load."
    )


def _show(design: model.Design, out: rv.Outcome) -> None:
    plan = out.plan
    main = out.row("design")
    assert main is not None
    if out.lost:
        st.warning(out.message)
        return
    _metrics(design, main, out.results["design"])
    st.subheader("Progress")
    st.altair_chart(progress_chart(out.progress), width="stretch")
    st.caption(
        "The curve `zpool status` would show: zsim samples 8 stretches of the allocated "
        "space (4 under load) and integrates their rates; outer zones of a disk are faster."
    )
    st.subheader("Cases")
    _summary_table(out)
    text = rv.load_text(out)
    if text:
        st.markdown(f"**Under load.** {text}")
    if plan.draid_why:
        st.subheader("dRAID")
        st.markdown(plan.draid_why)
        speed = rv.speedup_text(out)
        if speed:
            st.markdown(speed)


def render() -> None:
    st.title("Resilver")
    design = _current_design()
    if design is None:
        st.info("Fix the design in the sidebar to see its resilver.")
        return
    st.caption(
        "How long the pool runs without its full redundancy after a disk dies: the rebuild "
        "onto a new disk, with and without the workload, beside a dRAID of the same disks "
        "rebuilt onto its distributed spare (docs/resilver.md, docs/durability.md)."
    )
    out: rv.Outcome | None = None
    with widgets.guard("resilver"):
        inputs = _inputs(design)
        plan = rv.plan_cases(design, **inputs)
        results = _run(plan)
        if results is not None:
            out = rv.outcome(plan, results)
            _show(design, out)
    if out is not None:
        st.subheader("Downloads")
        widgets.downloads(
            "zsim-resilver",
            scenario_toml=out.plan.cases[0].toml,
            rows=out.progress if out.progress else out.summary,
            document=out.document(),
            key="resilver",
        )
