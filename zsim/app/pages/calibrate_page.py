"""Page 4, "Calibrate and validate": upload what ``zsim calibrate run`` stored (or raw fio
JSON, dd summaries, zpool status/iostat and arcstat logs), fit a device profile, see every
run predicted against what was measured, and download the profile.

The work is :mod:`zsim.app.calibrate_upload` (pure; the library the CLI uses); this module
only draws it. Figures are SI internally; shown as MB/s (10⁶ bytes/s, with MiB/s beside
where the library prints both), IOPS, µs/ms, and block sizes in KiB/MiB (2¹⁰/2²⁰ bytes).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from zsim.app import calibrate_upload as cu
from zsim.app import ui
from zsim.app.pages import widgets
from zsim.units import MB, MiB, format_binary_size, format_rate, format_time, parse_size

T = TypeVar("T")

DEFAULT_NAME = "my-device"
KINDS = ("auto", "hdd", "ssd", "nvme")
KIND_LABELS = {
    "auto": "auto (from the QD1 random read's latency)",
    "hdd": "hdd (rotating disk)",
    "ssd": "ssd (SATA/SAS flash)",
    "nvme": "nvme (PCIe flash)",
}
#: session_state: the sample set is shown (the last action was the sample button)
SAMPLE_KEY = "cal_use_sample"
#: session_state: DES replays already run, by (upload digest, fit options, names)
DES_KEY = "cal_des_results"

INTRO = f"""
Fit a device profile to measurements of the real device, then see how well zsim predicts
every run with it. The loop, on the machine with the device (a disk of the model you will
buy is enough):

```
zsim calibrate plan --target /dev/sdX --out DIR   # or a file or folder: fio job files, dd
zsim calibrate run DIR                            # the real fio (resumes where it stopped)
```

then upload `DIR/results/*.json` here (what `zsim calibrate fit DIR --out NAME.toml` reads).
Raw fio JSON (`--output-format=json`), dd summaries (name the file `...read...` or
`...write...`), `zpool status`, `zpool iostat -v` and `arcstat` logs are read too; pool logs
are summarised, not fitted. No files at hand? "Use the sample measurements" fits the 43
steps measured on this project's own virtual disk. Up to {cu.MAX_FILES} files of at most
{cu.MAX_FILE_BYTES / MB:.0f} MB (10⁶ bytes) each.
"""


# ---------------------------------------------------------------- cached work


@st.cache_data(show_spinner=False, max_entries=4)
def _sample() -> tuple[tuple[str, bytes], ...]:
    return tuple(cu.sample_files())


@st.cache_data(show_spinner=False, max_entries=16)
def _parse(digest: str, _files: tuple[tuple[str, bytes], ...]) -> cu.Parsed:
    """Parsed uploads, cached by their SHA-256 (``digest``), not by file objects."""
    return cu.parse_uploads(list(_files))


@st.cache_data(show_spinner=False, max_entries=16)
def _fit(
    digest: str,
    name: str,
    kind: str,
    device_bytes: int | None,
    ghz: float,
    base_text: str,
    _parsed: cu.Parsed,
) -> cu.FitOutcome:
    """The fit of the uploads with ``digest`` (12 starts + a 60-refit bootstrap, and the
    leave-one-out refits: a few seconds), cached by the digest and the options."""
    return cu.fit_uploads(
        _parsed,
        name=name,
        kind=None if kind == "auto" else kind,
        device_bytes=device_bytes,
        ghz=ghz,
        base=cu.parse_base(base_text),
    )


# ---------------------------------------------------------------- formatting


def _value(value: float | None, unit: str) -> str:
    """A parameter's value in human units (the SI figure is in the CSV/JSON and TOML)."""
    if value is None or not math.isfinite(value):
        return "—"
    if unit == "s":
        return format_time(value)
    if unit == "B/s":
        return format_rate(value)
    if unit == "B":
        return ui.fmt_size(value)
    if unit == "IOPS":
        return f"{value:,.0f} IOPS"
    if unit == "rev/min":
        return f"{value:,.0f} rpm"
    return f"{value:.5g} {unit}"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:+.1%}"


def _bs(nbytes: int) -> str:
    return format_binary_size(nbytes).replace(".00 ", " ")


def _r(x: float | None, digits: int = 1) -> float | None:
    return None if x is None else round(x, digits)


def measurement_table(parsed: cu.Parsed) -> list[dict[str, Any]]:
    return [
        {
            "step": r["step"],
            "file": r["file"],
            "tool": r["tool"],
            "kind": r["kind"],
            "bs": _bs(r["bs_bytes"]),
            "QD": r["qd"],
            "jobs": r["numjobs"],
            "measured MB/s": _r(r["bytes_per_s"] / MB if r["bytes_per_s"] is not None else None),
            "measured IOPS": _r(r["iops"]),
            "status": "ok" if r["error"] == 0 else f"fio error {r['error']}: not fitted",
        }
        for r in cu.measurement_rows(parsed)
    ]


def parameter_table(fit: Any) -> list[dict[str, Any]]:
    out = []
    for p in cu.parameter_rows(fit):
        if p["stderr"] is not None:
            err = p["stderr"]
            shown = f"{err / MB:,.1f} MB/s" if p["unit"] == "B/s" else _value(err, p["unit"])
            se = f"±{p['rel_stderr']:.1%} ({shown})"
        else:
            se = "—"
        out.append(
            {
                "parameter": p["name"],
                "value": _value(p["value"], p["unit"]),
                "std. error (1 s.e.)": se,
                "fitted": "yes" if p["fitted"] else "no",
                "SI value": p["value"],
                "unit": p["unit"],
                "note": p["note"],
            }
        )
    return out


def residual_table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "step": r["step"],
            "kind": r["kind"],
            "bs": _bs(r["bs_bytes"]),
            "QD": r["qd"],
            "measured IOPS": _r(r["measured_iops"]),
            "predicted IOPS": _r(r["predicted_iops"]),
            "error": _pct(r["error"]),
            "in the fit": "yes" if r["fitted"] else f"no: {r['why_not_fitted'] or r['note']}",
            "leave-one-out": _pct(r["loo_error"]),
            "rule of thumb": _pct(r["rule_of_thumb_error"]),
        }
        for r in rows
    ]


def scatter(rows: list[dict[str, Any]]) -> Any:
    """Predicted against measured IOPS, log-log, with the y = x line and the ±15 % band."""
    import altair as alt

    data = [
        {
            "step": r["step"],
            "measured": r["measured_iops"],
            "predicted": r["predicted_iops"],
            "error": _pct(r["error"]),
            "shape": f"{r['kind']} {_bs(r['bs_bytes'])} QD{r['qd']}",
            "run": "in the fit" if r["fitted"] else "not fitted (predicted)",
        }
        for r in rows
        if r["predicted_iops"] and r["measured_iops"] and r["measured_iops"] > 0
    ]
    if not data:
        return None
    values = [d["measured"] for d in data] + [d["predicted"] for d in data]
    lo, hi = min(values) / 1.3, max(values) * 1.3
    scale = alt.Scale(type="log", domain=[lo, hi])
    points = (
        alt.Chart(alt.Data(values=data))
        .mark_point(filled=True, size=70)
        .encode(
            x=alt.X("measured:Q", title="measured IOPS", scale=scale),
            y=alt.Y("predicted:Q", title="predicted IOPS", scale=scale),
            color=alt.Color(
                "run:N",
                title=None,
                scale=alt.Scale(
                    domain=["in the fit", "not fitted (predicted)"], range=["#1f77b4", "#ff7f0e"]
                ),
            ),
            tooltip=[
                "step:N",
                "shape:N",
                alt.Tooltip("measured:Q", format=",.0f"),
                alt.Tooltip("predicted:Q", format=",.0f"),
                "error:N",
            ],
        )
    )
    lines = [
        {"x": lo, "y": lo * f, "line": name}
        for f, name in ((1.0, "y = x"), (1.15, "+15 %"), (1 / 1.15, "−15 %"))
    ] + [
        {"x": hi, "y": hi * f, "line": name}
        for f, name in ((1.0, "y = x"), (1.15, "+15 %"), (1 / 1.15, "−15 %"))
    ]
    guide = (
        alt.Chart(alt.Data(values=lines))
        .mark_line(color="#9e9e9e", clip=True)
        .encode(
            x=alt.X("x:Q", title="measured IOPS", scale=scale),
            y=alt.Y("y:Q", title="predicted IOPS", scale=scale),
            strokeDash=alt.StrokeDash(
                "line:N",
                legend=None,
                scale=alt.Scale(domain=["y = x", "+15 %", "−15 %"], range=[[1, 0], [4, 4], [4, 4]]),
            ),
            tooltip=["line:N"],
        )
    )
    return (guide + points).properties(height=420)


# ---------------------------------------------------------------- the page


def _attempt(what: str, work: Callable[[], T]) -> T | None:
    """``work()``, or None after :func:`widgets.guard` showed its error."""
    done: list[T] = []
    with widgets.guard(what):
        done.append(work())
    return done[0] if done else None


def _inputs() -> tuple[str, str, str, float, str]:
    """Profile name, kind, device size text, CPU GHz and fixed keys from the widgets (the
    name and kind seeded from the URL)."""
    ss = st.session_state
    if "w_cal_name" not in ss:
        ss["w_cal_name"] = widgets.page_param("cal_name", DEFAULT_NAME)
    if "w_cal_kind" not in ss:
        kind = widgets.page_param("cal_kind", "auto")
        ss["w_cal_kind"] = kind if kind in KINDS else "auto"
    c = st.columns(3)
    name = c[0].text_input(
        "Profile name",
        key="w_cal_name",
        max_chars=64,
        help="The profile's name and file name (NAME.toml): letters, digits, '.', '_', '-'",
    )
    kind = c[1].selectbox(
        "Device kind", KINDS, key="w_cal_kind", format_func=lambda k: KIND_LABELS[k]
    )
    size = c[2].text_input(
        "Device size",
        key="w_cal_size",
        placeholder="from the plan",
        help="Only for results without a plan (raw fio/dd output), e.g. 960GB or 1TiB",
    )
    with st.expander("More fit options"):
        ghz = st.number_input(
            "Host CPU clock (GHz)",
            min_value=0.5,
            max_value=6.0,
            value=3.0,
            step=0.1,
            key="w_cal_ghz",
            help="The per-call host time the engine charges scales with it",
        )
        base = st.text_input(
            "Fixed profile keys",
            key="w_cal_base",
            placeholder="e.g. pcie_gen=4, rpm=7200",
            help="KEY=VALUE pairs the data cannot give (zsim calibrate fit --base)",
        )
    return str(name), str(kind), str(size), float(ghz), str(base)


def _files() -> tuple[list[tuple[str, bytes]], str]:
    """The files to read and where they came from (uploads, or the sample set)."""
    ss = st.session_state
    if SAMPLE_KEY not in ss:
        ss[SAMPLE_KEY] = widgets.page_param("cal_sample", "0") == "1"

    def uploads_changed() -> None:
        ss[SAMPLE_KEY] = False

    c = st.columns([3, 1])
    uploaded = c[0].file_uploader(
        "Result files",
        accept_multiple_files=True,
        type=list(cu.UPLOAD_SUFFIXES),
        key="w_cal_files",
        on_change=uploads_changed,
        max_upload_size=math.ceil(cu.MAX_FILE_BYTES / MiB),
        help="DIR/results/*.json from 'zsim calibrate run', fio JSON, dd, zpool or arcstat output",
    )
    have_sample = cu.sample_dir() is not None
    if c[1].button(
        "Use the sample measurements" if have_sample else "Sample measurements not installed",
        key="w_cal_sample",
        disabled=not have_sample,
        help=f"43 steps measured on a virtio disk (calibration/results/{cu.SAMPLE_SET})"
        if have_sample
        else "They ship with the source tree, not with the wheel",
    ):
        ss[SAMPLE_KEY] = True
    if ss[SAMPLE_KEY] and have_sample:
        return list(_sample()), f"the sample set {cu.SAMPLE_SET}"
    files = [(f.name, f.getvalue()) for f in (uploaded or [])]
    return files, f"{len(files)} uploaded file{'s' if len(files) != 1 else ''}"


def render() -> None:
    st.title("Calibrate and validate")
    st.markdown(INTRO)
    files, origin = _files()
    name, kind, size_text, ghz, base_text = _inputs()
    query = {}
    if name.strip() and name.strip() != DEFAULT_NAME:
        query["cal_name"] = name.strip()
    if kind != "auto":
        query["cal_kind"] = kind
    if st.session_state.get(SAMPLE_KEY):
        query["cal_sample"] = "1"
    st.session_state["zsim_page_query"] = query
    if not files:
        st.info("Upload result files, or use the sample measurements, to fit a profile.")
        return

    parsed = _attempt("reading the files", lambda: _parse(cu.upload_digest(files), tuple(files)))
    if parsed is None:
        return
    st.subheader("Measurements")
    st.caption(
        f"{len(parsed.measurements)} runs in {len(parsed.files)} files ({origin}). MB/s = "
        f"10⁶ bytes/s; block sizes in KiB/MiB (2¹⁰/2²⁰ bytes); QD = commands in flight."
    )
    if parsed.measurements:
        st.dataframe(measurement_table(parsed), hide_index=True, width="stretch")
    if parsed.pool_text:
        st.markdown("**Pool logs** (describe a pool, not the device: summarised, not fitted)")
        st.code(parsed.pool_text, language=None)
    if not parsed.measurements:
        st.info("No fio or dd runs among the files: nothing to fit.")
        return

    def fit() -> tuple[cu.FitOutcome, str]:
        profile_name = cu.check_profile_name(name)
        device_bytes = parse_size(size_text) if size_text.strip() else None
        with st.spinner("Fitting (12 starts, a 60-refit bootstrap, leave-one-out refits)"):
            outcome = _fit(parsed.digest, profile_name, kind, device_bytes, ghz, base_text, parsed)
        return outcome, profile_name

    done = _attempt("fit", fit)
    if done is not None:
        _results(parsed, *done)


def _results(parsed: cu.Parsed, outcome: cu.FitOutcome, name: str) -> None:
    fit, val = outcome.fit, outcome.validation
    rows = cu.residual_rows(outcome)
    summary = val.summary()
    st.subheader(f"Fitted profile: {fit.name} ({fit.kind}, {ui.fmt_size(fit.device_bytes)})")
    c = st.columns(5)
    z, rule, loo = summary["zsim"], summary["rule_of_thumb"], summary["leave_one_out"]
    scored = [r for r in rows if r["error"] is not None]
    worst = max(scored, key=lambda r: abs(r["error"]), default=None)
    c[0].metric(
        "mean |error|",
        "—" if z["mean_abs"] is None else f"{z['mean_abs']:.1%}",
        help=f"Over {z['n']} runs predicted in closed form; error = predicted / "
        f"measured − 1, in IOPS",
    )
    c[1].metric(
        "worst error",
        "—" if worst is None else f"{worst['error']:+.1%}",
        help=None if worst is None else f"The run furthest from its prediction: {worst['step']}",
    )
    c[2].metric(
        "leave-one-out mean |error|",
        "—" if loo["mean_abs"] is None else f"{loo['mean_abs']:.1%}",
        help=f"Each of the {loo['n']} fitted runs predicted by a fit without it: "
        "how well the model generalises",
    )
    c[3].metric(
        "rule of thumb mean |error|",
        "—" if rule["mean_abs"] is None else f"{rule['mean_abs']:.1%}",
        help="The planners' rule (zsim.baseline) for the same jobs",
    )
    c[4].metric(
        "runs in the fit",
        f"{sum(r.used for r in fit.residuals)} of {len(rows)}",
        help=f"rms error of the fitted runs {fit.rms_error:.1%}; {fit.status}",
    )
    st.markdown("**Parameters**")
    st.dataframe(parameter_table(fit), hide_index=True, width="stretch")
    for note in fit.notes:
        st.caption(f"Note: {note}")
    st.markdown("**Predicted vs measured**")
    st.caption(
        "Closed-form predictions from the fitted profile: the same sub-models the "
        "discrete-event engine runs, without its queueing simulation (fast; what the fit "
        "itself minimises). Runs with no closed form (an HDD's queued or written runs, mixed "
        "read/write) show —: replay them with the DES below. Grey lines: y = x and ±15 %."
    )
    chart = scatter(rows)
    if chart is not None:
        st.altair_chart(chart, width="stretch")
    st.dataframe(residual_table(rows), hide_index=True, width="stretch")
    for note in val.notes:
        st.caption(f"Note: {note}")
    st.download_button(
        f"Profile ({name}.toml)",
        outcome.profile_toml,
        file_name=f"{name}.toml",
        mime="application/toml",
        key="cal-dl-profile",
        type="primary",
        help='A catalog profile: name it in a scenario (disk = "path/NAME.toml") or put it '
        "in models/",
    )
    with widgets.guard("downloads"):
        widgets.downloads(f"{name}-residuals", rows=rows, document=outcome.to_dict(), key="cal")
        runs = [m.name for m in parsed.measurements if m.ok and m.purpose != "prepare"]
        if runs:
            run = st.selectbox(
                "Scenario of one measured run, on the fitted device", runs, key="cal-scenario-run"
            )
            st.download_button(
                "Scenario (TOML)",
                cu.replay_scenario_toml(outcome, parsed.measurements, run),
                file_name=f"{name}-{run}.toml",
                mime="application/toml",
                key="cal-dl-scenario",
                help="`zsim simulate FILE` replays this run with the fitted profile",
            )
    _des_section(parsed, outcome, name)


def _des_section(parsed: cu.Parsed, outcome: cu.FitOutcome, name: str) -> None:
    st.subheader("Replay with the discrete-event engine")
    st.caption(
        f"`zsim validate --profile {name}.toml DIR` replays every run through `zsim simulate` "
        f"(layout `raw 1`), about 3 s each; here pick up to {cu.MAX_DES_RUNS}."
    )
    names = [r.name for r in outcome.validation.rows]
    chosen = st.multiselect(
        "Runs to replay", names, key="w_cal_des", max_selections=cu.MAX_DES_RUNS
    )
    store = st.session_state.setdefault(DES_KEY, {})
    key = (parsed.digest, outcome.profile_toml, tuple(chosen))
    with widgets.guard("discrete-event replay"):
        if st.button("Replay", key="w_cal_des_run", disabled=not chosen):
            with st.spinner(f"Simulating {len(chosen)} run{'s' if len(chosen) != 1 else ''}"):
                store[key] = cu.des_validation(outcome, parsed.measurements, chosen)
        val = store.get(key)
        if val is None:
            return
        closed = {r.name: r for r in outcome.validation.rows}
        table = []
        for r in val.rows:
            cf = closed.get(r.name)
            table.append(
                {
                    "step": r.name,
                    "measured IOPS": _r(r.measured_iops),
                    "DES IOPS": _r(r.predicted_iops),
                    "DES error": _pct(r.error),
                    "closed-form error": _pct(cf.error if cf else None),
                    "limited by": r.limit or r.note,
                }
            )
        st.dataframe(table, hide_index=True, width="stretch")
        s = val.summary()["zsim"]
        if s["n"]:
            st.caption(
                f"DES over {s['n']} runs: mean |error| {s['mean_abs']:.1%}, worst "
                f"{s['max_abs']:.1%} (seed {val.seed})."
            )
