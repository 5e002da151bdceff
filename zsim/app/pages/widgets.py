"""Streamlit pieces every page shares: the design sidebar, errors, caching, downloads.

The pages only call :mod:`zsim.app.design` (and through it the public API); this module
turns its inputs and outputs into widgets, with the pure helpers of :mod:`zsim.app.ui`
(formatting, CSV/JSON, scenario TOML). It is the only module outside the pages that imports
Streamlit, so it lives beside them in :mod:`zsim.app.pages`. Rules it enforces for every page:

* no traceback reaches the page: :func:`guard` shows a :class:`zsim.ZsimError` as
  ``st.error`` with its message (which names the fix) and anything else as a short
  "internal error" line;
* results are cached keyed by the canonical scenario TOML (:func:`cached_fast`,
  :func:`cached_simulate`), so the same design gives the same figures at once; they come
  from the fast engines only — the discrete-event engine runs on its button
  (:func:`run_des`), and its results are kept by scenario and seed (:func:`known_des`);
* the design lives in the URL query string (:func:`sync_query`), so a link reopens it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import streamlit as st

from zsim.app import design as model
from zsim.app.background import ResilverJobs, fast_resilver
from zsim.app.des_store import DesStore
from zsim.app.figures import fast_answer
from zsim.app.ui import (
    CUSTOM_DISK_DEFAULTS,
    FLASH_FIELDS,
    HDD_FIELDS,
    catalog_names,
    scenario_from_toml,
    to_csv,
    to_json,
)
from zsim.errors import ZsimError
from zsim.simulate import simulate
from zsim.units import format_binary_multiple, parse_size

#: session_state key of the current :class:`~zsim.app.design.Design`
DESIGN_KEY = "zsim_design"
#: session_state key: the query string was read into the widgets
LOADED_KEY = "zsim_query_loaded"
#: the engines the pages' figures come from on every run (the DES only on its button)
FAST_ENGINES = ("analytic", "baseline")
#: how often the Design page looks for its background resilver, s
RESILVER_POLL_SECONDS = 1.0
#: the line shown while it runs (tests and the benchmark wait for it to go)
RESILVER_WAIT_TEXT = "Simulating the resilver of this design in the background"


# ---------------------------------------------------------------- errors


class guard(contextlib.AbstractContextManager["guard"]):
    """``with guard("what"):`` runs a block; a :class:`ZsimError` becomes ``st.error`` (its
    message names the fix), any other exception one ``st.error`` line — never a traceback —
    and the rest of the block is skipped. Streamlit's own control flow (``st.rerun``,
    ``st.stop``) derives from ``BaseException`` and passes through."""

    def __init__(self, what: str = "") -> None:
        self.what = what

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: Any
    ) -> bool:
        if err is None or not isinstance(err, Exception):
            return False
        where = self.what
        if isinstance(err, ZsimError):
            st.error(f"{where}: {err}" if where else str(err))
        else:  # a bug: say so, without a traceback
            st.error(
                f"internal error{' in ' + where if where else ''}: {type(err).__name__}: "
                f"{err}. This is a bug in zsim; please report it with the link of this page."
            )
        return True


# ---------------------------------------------------------------- caching


@st.cache_data(show_spinner=False, max_entries=512)
def cached_simulate(scenario_toml: str, engine: str, seed: int = 1) -> Any:
    """``zsim.simulate`` of a canonical scenario TOML by a fast engine: ``engine``
    "analytic" or "baseline". The pages never start the DES from here (a sidebar change must
    answer in seconds): it runs only on its button (:func:`run_des`)."""
    if engine not in FAST_ENGINES:
        raise ZsimError(
            f"the app's figures come from {' or '.join(FAST_ENGINES)}, not {engine!r}; "
            f"the discrete-event engine runs on its button"
        )
    return simulate(scenario_from_toml(scenario_toml), engine=engine, seed=seed)


@st.cache_data(show_spinner=False, max_entries=512)
def cached_fast(scenario_toml: str) -> tuple[Any, Any, str | None]:
    """The fast answer for one scenario: (answer, rule of thumb, the analytic engine's reason
    for declining or ``None``) — :func:`zsim.app.figures.fast_answer`, never the DES."""
    sc = scenario_from_toml(scenario_toml)
    res, declined = fast_answer(sc, simulate)
    rule = res if declined else simulate(sc, engine="baseline")
    return res, rule, declined


@st.cache_resource(show_spinner=False)
def _des_store() -> DesStore:
    return DesStore()


def run_des(
    scenario_toml: str, seed: int, progress: Callable[[float, float, float], None] | None
) -> Any:
    """Run the page's bounded DES (:func:`zsim.app.design.simulate_des`) for a scenario and
    keep the result by (scenario TOML, seed) for every later run and session."""
    store = _des_store()
    found = store.get(scenario_toml, seed)
    if found is not None:
        return found
    result = model.simulate_des(scenario_from_toml(scenario_toml), seed=seed, progress=progress)
    store.put(scenario_toml, seed, result)
    return result


def known_des(scenario_toml: str, seed: int) -> Any | None:
    """The DES result of (scenario TOML, seed) if its button ran it; never runs it."""
    return _des_store().get(scenario_toml, seed)


@st.cache_data(show_spinner=False, max_entries=128)
def cached_capacity(design: model.Design) -> Any:
    return model.capacity_report(design)


@st.cache_data(show_spinner=False, max_entries=64)
def cached_resilver(scenario_toml: str, seed: int = 1) -> Any:
    """``zsim resilver --engine auto``: the analytic scan where it answers, else simulated."""
    fast = fast_resilver(scenario_toml, seed)
    if fast is not None:
        return fast
    # imported when used: it loads the discrete-event engine
    from zsim.resilver.run import simulate_resilver

    return simulate_resilver(scenario_from_toml(scenario_toml), seed=seed)


@st.cache_resource(show_spinner=False)
def _resilver_jobs() -> ResilverJobs:
    return ResilverJobs()


def resilver_if_ready(scenario_toml: str, seed: int = 1) -> Any | None:
    """The background resilver of a scenario if it is done, else ``None`` (and it is
    started, unless it runs already). Raises what the run raised."""
    jobs = _resilver_jobs()
    found = jobs.result(scenario_toml, seed)
    if found is None:
        jobs.submit(scenario_toml, seed)
    return found


def resilver_when_ready(scenario_toml: str, seed: int = 1, keep: Sequence[str] = ()) -> Any | None:
    """The resilver of a scenario if it is done, else ``None`` after starting it in the
    background (:class:`zsim.app.background.ResilverJobs`) and drawing a line that polls
    for it and reruns the page when it is ready (:func:`resilvers_when_ready`)."""
    found = resilvers_when_ready([scenario_toml], seed, keep)
    return None if found is None else found[0]


def resilvers_when_ready(
    scenario_tomls: Sequence[str], seed: int = 1, keep: Sequence[str] = ()
) -> list[Any] | None:
    """The resilvers of several scenarios once all are done, else ``None`` after starting
    the missing ones in the background and drawing a line that polls for them and reruns the
    page when they are ready. Queued runs of other scenarios than these and ``keep`` (the
    pinned designs') are cancelled: the planner has moved on. Raises what a run raised (the
    page's guard shows it)."""
    # the analytic scan answers most pools in milliseconds; the rest run in the worker
    fast = [fast_resilver(t, seed) for t in scenario_tomls]
    if all(r is not None for r in fast):
        return fast
    jobs = _resilver_jobs()
    found = [
        f if f is not None else jobs.result(t, seed)
        for t, f in zip(scenario_tomls, fast, strict=True)
    ]
    if all(r is not None for r in found):
        return found
    scenario_tomls = [t for t, f in zip(scenario_tomls, fast, strict=True) if f is None]
    jobs.keep_only({*((t, seed) for t in scenario_tomls), *((t, seed) for t in keep)})
    for toml in scenario_tomls:
        jobs.submit(toml, seed)

    @st.fragment(run_every=RESILVER_POLL_SECONDS)
    def poll() -> None:
        try:
            done = sum(jobs.result(t, seed) is not None for t in scenario_tomls)
        except Exception:  # the page's next run shows the error through its guard
            done = len(scenario_tomls)
        if done == len(scenario_tomls):
            st.rerun(scope="app")
        for toml in scenario_tomls:
            jobs.submit(toml, seed)  # again if another session cancelled it
        waited = max(jobs.running_for(t, seed) for t in scenario_tomls)
        count = f", {done} of {len(scenario_tomls)} done" if len(scenario_tomls) > 1 else ""
        st.caption(
            f"{RESILVER_WAIT_TEXT} ({waited:.0f} s so far{count}); the figures above do not "
            f"wait for it."
        )

    poll()
    return None


@st.cache_data(show_spinner=False, max_entries=32)
def cached_sweep(
    design: model.Design, workloads: tuple[str, ...], engine: str, resilver: bool = False
) -> Any:
    return model.sweep_rows(design, workloads, engine=engine, resilver=resilver)


# ---------------------------------------------------------------- downloads


def downloads(
    stem: str,
    *,
    scenario_toml: str | None = None,
    rows: Sequence[Mapping[str, Any]] | None = None,
    document: Any = None,
    key: str = "",
) -> None:
    """Download buttons: the scenario TOML (what ``zsim simulate`` runs), results as CSV and
    JSON (SI base units)."""
    cols = st.columns(3)
    k = key or stem
    if scenario_toml is not None:
        cols[0].download_button(
            "Scenario (TOML)",
            scenario_toml,
            file_name=f"{stem}.toml",
            mime="application/toml",
            key=f"dl-toml-{k}",
            help="The file `zsim simulate` runs",
        )
    if rows is not None:
        cols[1].download_button(
            "Results (CSV)",
            to_csv(rows),
            file_name=f"{stem}.csv",
            mime="text/csv",
            key=f"dl-csv-{k}",
            help="SI base units: bytes, seconds, bytes/s",
        )
    if document is not None or rows is not None:
        cols[2].download_button(
            "Results (JSON)",
            to_json(document if document is not None else list(rows or [])),
            file_name=f"{stem}.json",
            mime="application/json",
            key=f"dl-json-{k}",
            help="SI base units: bytes, seconds, bytes/s",
        )


# ---------------------------------------------------------------- the design sidebar


def _init_widgets(d: model.Design) -> None:
    """Seed the widgets' session state from a design (the URL's, once per session)."""
    ss = st.session_state
    ss["w_disk"] = d.disk
    ss["w_disks"] = d.disks
    ss["w_layout"] = d.layout
    ss["w_hba"] = d.hba or "(none)"
    ss["w_support"] = d.support_device
    ss["w_ram"] = d.ram
    ss["w_cpu"] = d.cpu_cores
    ss["w_zfs"] = d.zfs_version or "current"
    ss["w_rs"] = d.recordsize
    ss["w_ashift"] = d.ashift
    ss["w_comp"] = d.compression
    ss["w_ratio"] = d.compress_ratio
    ss["w_sync"] = d.sync
    ss["w_fill"] = round(d.fill * 100)
    ss["w_price"] = d.price_usd
    ss["w_workloads"] = list(d.workloads)
    ss["w_c_rw"] = d.custom.rw
    ss["w_c_bs"] = format_binary_multiple(d.custom.bs)
    ss["w_c_jobs"] = d.custom.numjobs
    ss["w_c_qd"] = d.custom.iodepth
    ss["w_c_mix"] = d.custom.rwmixread
    ss["w_c_sync"] = d.custom.sync
    cd = dict(d.custom_disk)
    for key, default in CUSTOM_DISK_DEFAULTS.items():
        ss[f"w_cd_{key}"] = str(cd.get(key, default))


def _custom_disk_table() -> tuple[tuple[str, Any], ...]:
    ss = st.session_state
    kind = ss["w_cd_kind"]
    fields = HDD_FIELDS if kind == "hdd" else FLASH_FIELDS
    out: list[tuple[str, Any]] = [("kind", kind)]
    for f in fields:
        text = str(ss[f"w_cd_{f}"]).strip()
        value: Any = text
        if f in ("rpm", "read_iops", "write_iops"):
            try:
                value = int(float(text))
            except ValueError:
                raise ZsimError(f"custom disk: {f} {text!r} must be a whole number") from None
        out.append((f, value))
    return tuple(out)


def design_sidebar() -> model.Design | None:
    """Draw the design inputs in the sidebar (shared by every page) and return the design,
    or ``None`` after showing an error that names the fix."""
    ss = st.session_state
    if not ss.get(LOADED_KEY):
        d, problems = model.design_from_query(st.query_params.to_dict())
        _init_widgets(d)
        ss["zsim_query_problems"] = problems
        ss[LOADED_KEY] = True
    disks, flash, hbas = catalog_names()
    sb = st.sidebar
    sb.header("Design")
    sb.selectbox(
        "Disk model",
        [*disks, model.CUSTOM],
        key="w_disk",
        help="From the catalog (models/), or define your own",
    )
    if ss["w_disk"] == model.CUSTOM:
        with sb.expander("Custom disk", expanded=True):
            st.selectbox("Kind", ["hdd", "ssd", "nvme"], key="w_cd_kind")
            fields = HDD_FIELDS if ss["w_cd_kind"] == "hdd" else FLASH_FIELDS
            for f in fields:
                st.text_input(f.replace("_", " "), key=f"w_cd_{f}")
    sb.number_input("Number of disks", min_value=1, max_value=240, step=1, key="w_disks")
    with sb.expander("Layout pickers"):
        kind = st.selectbox(
            "vdev type",
            ["raidz2", "raidz1", "raidz3", "mirror", "stripe", "draid1", "draid2", "draid3"],
            key="w_pick_kind",
        )
        width = st.number_input(
            "Disks per vdev (dRAID: data + parity per group)",
            min_value=1,
            max_value=64,
            value=8,
            key="w_pick_width",
        )
        if st.button("Use this layout", key="w_pick_apply"):
            try:
                ss["w_layout_next"] = model.picker_layout(kind, int(width), int(ss["w_disks"]))
                st.rerun()
            except ZsimError as err:
                st.error(str(err))
    if "w_layout_next" in ss:  # a picker's layout, applied before the text box is drawn
        ss["w_layout"] = ss.pop("w_layout_next")
    sb.text_input(
        "Layout",
        key="w_layout",
        help="Compact (`2x raidz2 6`, `4x mirror 2 log mirror 2`, `draid2:4d:1s:8c`) or the "
        "`zpool create` form (`raidz2 sda sdb ...`). Spares, log, cache and special vdevs "
        "follow the data vdevs.",
    )
    with sb.expander("Hardware"):
        st.selectbox("HBA", ["(none)", *hbas], key="w_hba")
        st.selectbox(
            "Log / cache / special device",
            flash,
            key="w_support",
            help="Used when the layout has log, cache or special vdevs",
        )
        st.text_input("RAM", key="w_ram", help="e.g. 64GiB")
        st.number_input("CPU cores", min_value=1, max_value=512, step=1, key="w_cpu")
        st.selectbox(
            "OpenZFS release",
            ["current", "2.4", "2.3", "2.2", "2.1", "2.0", "0.8", "0.7"],
            key="w_zfs",
        )
    with sb.expander("Dataset"):
        st.selectbox(
            "recordsize",
            list(model.RECORDSIZES),
            key="w_rs",
            help="auto: each workload's usual recordsize (16K for VMs, 8K for "
            "databases, 1M for media and backups)",
        )
        st.selectbox("ashift", [9, 12, 13, 14], key="w_ashift")
        st.selectbox("compression", list(model.COMPRESSION), key="w_comp")
        if ss["w_comp"] != "off":
            st.number_input(
                "compression ratio", min_value=1.0, max_value=10.0, step=0.1, key="w_ratio"
            )
        st.selectbox("sync", list(model.SYNC), key="w_sync")
        st.slider("Pool fill for resilver (%)", 1, 100, key="w_fill")
    sb.number_input(
        "Price per disk (USD)",
        min_value=0.0,
        step=10.0,
        key="w_price",
        value=None,
        placeholder="enter to see costs",
        help="What you pay per disk; costs are not shown without it",
    )
    sb.multiselect(
        "Workloads",
        [*model.PRESET_LABELS, model.CUSTOM],
        format_func=lambda w: model.PRESET_LABELS.get(w, "Custom (fio-like)"),
        key="w_workloads",
    )
    if model.CUSTOM in ss["w_workloads"]:
        with sb.expander("Custom workload", expanded=True):
            st.selectbox("rw", list(model.FIO_RW), key="w_c_rw")
            st.text_input("bs", key="w_c_bs", help="e.g. 4K, 64K, 1M")
            st.number_input("numjobs", min_value=1, max_value=256, key="w_c_jobs")
            st.number_input("iodepth", min_value=1, max_value=1024, key="w_c_qd")
            st.number_input("rwmixread (%)", min_value=0, max_value=100, key="w_c_mix")
            st.checkbox("O_SYNC writes", key="w_c_sync")
    for problem in ss.get("zsim_query_problems", []):
        sb.warning(problem)
    ss[DESIGN_KEY] = None  # no page may show the figures of an earlier, valid design
    with guard("design"):
        design = read_design()
        design.check()
        ss[DESIGN_KEY] = design
    result: model.Design | None = ss[DESIGN_KEY]
    return result


def read_design() -> model.Design:
    """The design the sidebar's widgets describe (raises :class:`ZsimError` on bad text)."""
    ss = st.session_state
    bs_text = str(ss["w_c_bs"]).strip()
    custom = model.CustomWorkload(
        rw=ss["w_c_rw"],
        bs=parse_size(bs_text),
        numjobs=int(ss["w_c_jobs"]),
        iodepth=int(ss["w_c_qd"]),
        rwmixread=int(ss["w_c_mix"]),
        sync=bool(ss["w_c_sync"]),
    )
    price = ss.get("w_price")
    return model.Design(
        disk=ss["w_disk"],
        disks=int(ss["w_disks"]),
        layout=str(ss["w_layout"]).strip(),
        hba="" if ss["w_hba"] == "(none)" else ss["w_hba"],
        support_device=ss["w_support"],
        ram=str(ss["w_ram"]).strip(),
        cpu_cores=int(ss["w_cpu"]),
        zfs_version="" if ss["w_zfs"] == "current" else ss["w_zfs"],
        recordsize=ss["w_rs"],
        ashift=int(ss["w_ashift"]),
        compression=ss["w_comp"],
        compress_ratio=float(ss["w_ratio"]),
        sync=ss["w_sync"],
        fill=int(ss["w_fill"]) / 100,
        price_usd=None if price is None else float(price),
        workloads=tuple(ss["w_workloads"]),
        custom=custom,
        custom_disk=_custom_disk_table() if ss["w_disk"] == model.CUSTOM else (),
    )


def sync_query(design: model.Design | None, extra: Mapping[str, str] | None = None) -> None:
    """Write the design (and a page's own inputs) into the URL's query string. While the
    sidebar holds an invalid design the link keeps the last valid one."""
    if design is None:
        return
    params = model.design_to_query(design)
    if extra:
        params.update({k: str(v) for k, v in extra.items()})
    current = st.query_params.to_dict()
    if current != params:
        st.query_params.from_dict(params)


def page_param(key: str, default: str) -> str:
    """A page's own query-string input (read once per session into its widget)."""
    return str(st.query_params.get(key, default))
