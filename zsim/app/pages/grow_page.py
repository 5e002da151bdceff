"""Page 6, "Grow this pool": the sidebar's design grown by ``zpool attach`` (RAIDZ expansion)
or ``zpool add`` — the space ``zpool list`` and ``zfs list`` report against the space really
there, per expansion step (a chart, TB and TiB), the commands, the reflow's time and progress
curve, and each workload's performance before and after.

The rows come from :mod:`zsim.app.grow_view` (no Streamlit there). Space and performance are
``zsim.grow`` without the reflow (the analytic engine, under a second, cached); the reflow is a
discrete-event simulation, run in a worker process (:class:`zsim.app.background.GrowJobs`)
so that no sidebar change waits for it: the page says "computing…" and polls for it.
"""

from __future__ import annotations

import contextlib
from typing import Any

import streamlit as st

from zsim.app import design as model
from zsim.app import grow_view as gv
from zsim.app import ui
from zsim.app.background import GrowJobs
from zsim.app.pages import widgets
from zsim.errors import ZsimError

#: session_state key: the page's inputs, kept while another page is shown
INPUTS_KEY = "zsim_grow_inputs"
#: session_state key of a page's own query-string parameters (app.py writes them to the URL)
PAGE_QUERY_KEY = "zsim_page_query"
#: the page's widget keys, which are also its query-string keys
INPUT_KEYS = ("g_how", "g_n", "g_vdev", "g_add", "g_fill")
DEFAULTS: dict[str, Any] = {"g_how": "attach", "g_n": 1, "g_vdev": 0, "g_add": "", "g_fill": 50}
#: the line shown while the reflow runs (tests wait for it to go)
GROW_WAIT_TEXT = "Computing the reflow in the background…"
POLL_SECONDS = 1.0
SEED = 1


@st.cache_resource(show_spinner=False)
def grow_jobs() -> GrowJobs:
    return GrowJobs()


@st.cache_data(show_spinner=False, max_entries=128)
def cached_grow(request: str) -> Any:
    """``zsim.grow`` without the reflow: space and analytic performance (< 1 s). A grow
    OpenZFS refuses raises its :class:`ZsimError`, in the page's words."""
    try:
        return gv.run_request(request, SEED, reflow=False)
    except ZsimError as err:
        raise ZsimError(gv.app_message(str(err))) from None


@st.cache_data(show_spinner=False, max_entries=64)
def cached_space(scenario_toml: str, inputs: gv.GrowInputs) -> list[dict[str, Any]]:
    return gv.space_rows(ui.scenario_from_toml(scenario_toml), inputs)


def space_chart(rows: list[dict[str, Any]]) -> Any:
    """Grouped bars: the four space figures (TB) per step, TiB in the tooltip."""
    import altair as alt

    order = [name for _, name in gv.SPACE_FIGURES]
    steps = list(dict.fromkeys(r["pool"] for r in rows))
    return (
        alt.Chart(alt.Data(values=rows))
        .mark_bar()
        .encode(
            x=alt.X("pool:N", sort=steps, title=None, axis=alt.Axis(labelAngle=0, labelLimit=300)),
            xOffset=alt.XOffset("figure:N", sort=order),
            y=alt.Y("TB:Q", title="TB (10¹² bytes)"),
            color=alt.Color(
                "figure:N",
                sort=order,
                scale=alt.Scale(scheme="tableau10"),
                title=None,
                legend=alt.Legend(orient="bottom", labelLimit=400),
            ),
            tooltip=[
                alt.Tooltip("pool:N"),
                alt.Tooltip("figure:N"),
                alt.Tooltip("TB:Q", format=",.2f", title="TB (10¹² B)"),
                alt.Tooltip("TiB:Q", format=",.2f", title="TiB (2⁴⁰ B)"),
            ],
        )
        .properties(height=380)
    )


def progress_chart(rows: list[dict[str, Any]]) -> Any:
    """Percent of each attach's allocated bytes copied against hours since the first."""
    import altair as alt

    order = list(dict.fromkeys(r["attach"] for r in rows))  # the attaches in their order
    return (
        alt.Chart(alt.Data(values=rows))
        .mark_line(point=True)
        .encode(
            x=alt.X("hours:Q", title="hours since the first zpool attach"),
            y=alt.Y(
                "percent:Q", title="copied, % of the vdev's data", scale=alt.Scale(domain=[0, 100])
            ),
            color=alt.Color(
                "attach:N", sort=order, title="attach", legend=alt.Legend(orient="bottom")
            ),
            tooltip=[
                alt.Tooltip("attach:N"),
                alt.Tooltip("hours:Q", format=".2f"),
                alt.Tooltip("percent:Q", format=".1f", title="% copied"),
                alt.Tooltip("bytes:Q", format=".4~s", title="bytes copied"),
            ],
        )
        .properties(height=360)
    )


# ---------------------------------------------------------------- inputs


def _from_query() -> dict[str, Any]:
    q = st.query_params
    out: dict[str, Any] = {}
    if q.get("g_how") in gv.KINDS:
        out["g_how"] = str(q["g_how"])
    for key in ("g_n", "g_vdev", "g_fill"):
        if key in q:
            with contextlib.suppress(ValueError):
                out[key] = int(str(q[key]))
    if "g_add" in q:
        out["g_add"] = str(q["g_add"])
    return out


def _inputs(design: model.Design) -> gv.GrowInputs:
    """Draw the page's inputs (seeded from the URL, then as they were left)."""
    ss = st.session_state
    if INPUTS_KEY not in ss:
        ss[INPUTS_KEY] = _from_query()
    saved = ss[INPUTS_KEY]
    for key in INPUT_KEYS:
        if key not in ss:
            ss[key] = saved.get(key, DEFAULTS[key])
    choices = dict(gv.vdev_choices(design.layout))
    if ss["g_vdev"] not in choices:
        ss["g_vdev"] = 0
    if not ss["g_add"]:
        ss["g_add"] = gv.default_add_vdev(design.layout)
    if not isinstance(ss["g_n"], int) or not 1 <= ss["g_n"] <= 255:
        ss["g_n"] = 1
    if not isinstance(ss["g_fill"], int) or not 0 <= ss["g_fill"] <= 99:
        ss["g_fill"] = 50
    st.radio("How", list(gv.KINDS), key="g_how", format_func=lambda k: gv.KIND_LABELS[k])
    c = st.columns([1, 2, 2])
    if ss["g_how"] == "attach":
        c[0].number_input("Disks to attach", min_value=1, max_value=255, step=1, key="g_n")
        c[1].selectbox(
            "to the vdev",
            list(choices) or [0],
            key="g_vdev",
            format_func=lambda i: choices.get(i, "no data vdev"),
            help="zpool attach expands a raidz vdev by one column per disk, one after another",
        )
    else:
        c[0].text_input(
            "vdev to add",
            key="g_add",
            help="The layout grammar: `raidz2 8`, `mirror 2`, `2x raidz1 4`; new disks of the "
            "design's model",
        )
    c[2].slider(
        "Pool fill at the attach (%)",
        0,
        99,
        key="g_fill",
        help="zfs list USED over USED+AVAIL when each disk is attached (or the vdev added): "
        "what the reflow copies, and the old blocks that keep the old width",
    )
    query: dict[str, str] = {}
    for key in INPUT_KEYS:
        saved[key] = ss[key]
        if key in ("g_n", "g_vdev") and ss["g_how"] != "attach":
            continue
        if key == "g_add" and ss["g_how"] != "add-vdev":
            continue
        if ss[key] != DEFAULTS[key]:
            query[key] = str(ss[key])
    ss[PAGE_QUERY_KEY] = query
    return gv.GrowInputs(
        kind=ss["g_how"],
        attach=int(ss["g_n"]),
        vdev=int(ss["g_vdev"]),
        add_vdev=str(ss["g_add"]),
        fill=int(ss["g_fill"]) / 100,
    )


# ---------------------------------------------------------------- output


def _space(rows: list[dict[str, Any]], commands: tuple[str, ...]) -> None:
    st.subheader("Space: reported against real")
    st.altair_chart(space_chart(rows), width="stretch")
    st.markdown(gv.gap_text(rows))
    st.dataframe(gv.space_table(rows), hide_index=True, width="stretch")
    st.caption(
        "SIZE: metaslab space, parity included. USED+AVAIL: what `zfs list` shows (the "
        "vdev's original data:parity ratio). Real, for new data: what fits when the pool was "
        "this full at each attach (old blocks keep their width). After `zfs rewrite`: every "
        "block at the new width. 128 KiB records; docs/grow.md explains each figure."
    )
    st.markdown("**Commands**, one after another (each attach waits for the previous reflow):")
    st.code("\n".join(commands), language="shell")


def _reflow_result(request: str) -> Any | None:
    """The reflow if done, else ``None`` after starting it and drawing a polling line."""
    jobs = grow_jobs()
    found = jobs.result(request, SEED)
    if found is not None:
        return found
    jobs.keep_only({(request, SEED)})
    jobs.submit(request, SEED)

    @st.fragment(run_every=POLL_SECONDS)
    def poll() -> None:
        try:
            done = jobs.result(request, SEED) is not None
        except Exception:  # the page's next run shows the error through its guard
            done = True
        if done:
            st.rerun(scope="app")
        jobs.submit(request, SEED)
        st.caption(
            f"{GROW_WAIT_TEXT} ({jobs.running_for(request, SEED):.0f} s so far; the figures "
            f"above do not wait for it)"
        )

    poll()
    return None


def _reflow(result: Any) -> list[dict[str, Any]]:
    summary = gv.reflow_summary(result)
    total = result.seconds or 0.0
    copied = sum(r["bytes_copied"] for r in summary)
    c = st.columns(4)
    c[0].metric("Reflow time", ui.fmt_time(total), help="Every attach's copy, one after another")
    c[1].metric(
        "Copy rate",
        ui.fmt_rate(copied / total if total else None),
        help=f"{ui.fmt_size(copied)} allocated bytes copied per second (SI MB = 10⁶ bytes)",
    )
    c[2].metric(
        "Limited by",
        gv.reflow_limit_short(summary[-1]["limit"]) if summary else "—",
        help="The busiest resource (≥ 85 % busy) of the last attach's copy, or the copy's "
        "own window when none is; in words below",
    )
    c[3].metric(
        "Then scrub",
        ui.fmt_time(result.scrub_seconds),
        help="OpenZFS scrubs after each reflow (zfs_scrub_after_expand); the new space is "
        "usable when the copy ends",
    )
    st.altair_chart(progress_chart(gv.progress_rows(result)), width="stretch")
    for r in summary:
        st.markdown(
            f"**{r['attach']}**: {ui.fmt_size(r['bytes_copied'])} copied in "
            f"{ui.fmt_time(r['seconds'])} at {ui.fmt_rate(r['bytes_per_s'])} — limited by "
            f"{r['limit_words']}."
        )
    st.caption(
        "The copy reads every allocated byte of the vdev at the old width and writes it at "
        "the new, in offset order (spa_raidz_expand_thread(), vdev_raidz.c), simulated on the "
        "discrete-event engine. The vdev keeps its parity throughout: no degraded window. "
        "An idle pool; a workload during the copy slows both (`zsim grow --under-load`)."
    )
    return summary


def _performance(design: model.Design, inputs: gv.GrowInputs) -> list[dict[str, Any]]:
    results = {}
    for name in design.workloads:
        request = gv.request_key(gv.grow_toml(design, inputs, name), inputs)
        results[name] = cached_grow(request)
    rows = gv.perf_rows(results)
    st.subheader("Performance before and after")
    keys = ("workload", *(label for _, _, label in gv.PERF_COLUMNS), "change")
    shown = [{k: r[k] for k in keys} for r in rows]
    st.dataframe(shown, hide_index=True, width="stretch")
    reasons = gv.declined_reasons(results)
    st.caption(
        "Analytic engine, each workload at its recordsize. After an attach, reads of the "
        "data already there find its blocks at the width they were born at (OpenZFS's "
        "expanded map: every disk, parity read too); 'new data' is data written since, or "
        "rewritten, at the new width. After zpool add, the data already there stays on the "
        "old vdevs, so its reads run as before; 'new data' is spread over every vdev. Writes "
        "are always new blocks."
        + "".join(f" {name} — the analytic engine declines: {why}." for name, why in reasons)
    )
    spread = gv.spread_rows(next(iter(results.values()))) if results else []
    if spread:
        st.markdown(
            "**New writes across the vdevs** — the allocator weights each vdev by its free "
            "space (metaslab.c), so the emptier one takes more; with the allocation throttle "
            "the others take the rest:"
        )
        st.dataframe(spread, hide_index=True, width="stretch")
        evening = gv.evening_text(next(iter(results.values())))
        if evening:
            st.markdown(evening)
    return rows


def render() -> None:
    st.title("Grow this pool")
    design: model.Design | None = st.session_state.get(widgets.DESIGN_KEY)
    if design is None:
        st.info("Fix the design in the sidebar to grow it.")
        return
    st.caption(
        "Attach disks to a raidz vdev (RAIDZ expansion, OpenZFS 2.3+) or add a vdev: the space "
        "ZFS will report and the space really there, how long the reflow takes, and how fast "
        "the grown pool is (docs/grow.md)."
    )
    document: dict[str, Any] = {}
    toml = ""
    with widgets.guard("grow"):
        inputs = _inputs(design)
        inputs.check()
        toml = gv.grow_toml(design, inputs)
        request = gv.request_key(toml, inputs)
        fast = cached_grow(request)  # raises a ZsimError for a grow OpenZFS refuses
        rows = cached_space(toml, inputs)
        _space(rows, fast.commands)
        document.update(fast.to_dict(), space_steps=rows)
        if inputs.kind == "attach":
            st.subheader("Reflow")
            found = _reflow_result(request)
            if found is not None:
                document["reflow"] = _reflow(found)
                document["seconds"] = found.seconds
                document["reflows"] = [r.to_dict() for r in found.reflows]
        else:
            st.caption("zpool add copies nothing: the new space is usable at once.")
        document["performance_rows"] = _performance(design, inputs)
    if document:
        st.subheader("Downloads")
        widgets.downloads(
            "zsim-grow",
            scenario_toml=toml,
            rows=document["space_steps"],
            document=document,
            key="grow",
        )
