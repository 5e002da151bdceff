"""The "Grow this pool" page's pure helpers (no Streamlit): the request, its figures as rows.

The page grows the sidebar's design by ``zpool attach`` (RAIDZ expansion of one raidz vdev,
N disks, one after another) or ``zpool add`` (a vdev in the layout grammar, ``DESIGN.md``
§3), with the pool ``fill`` full (``zfs list`` USED over USED+AVAIL) at each attach. Every
figure comes from zsim's API:

* **space** per expansion step — ``zpool list`` SIZE, ``zfs list`` USED+AVAIL (the original
  width's deflate ratio), the space really usable for new data, after ``zfs rewrite`` — from
  :func:`zsim.capacity` of the grown layout (``CapacityReport.expansion_steps``,
  :mod:`zsim.zfs.expansion`; ``docs/grow.md`` gives the OpenZFS functions);
* **reflow** time and progress curve from :func:`zsim.grow.run.simulate_grow` with the
  reflow simulated (discrete-event engine, :mod:`zsim.grow.reflow`) — the page runs it in a
  worker process (:class:`zsim.app.background.GrowJobs`), through :func:`run_request`;
* **performance** before and after, each workload on the analytic engine
  (``simulate_grow(..., reflow=False)``), or its reason for declining.

Bytes, seconds and bytes/s inside; TB (10¹²) and TiB (2⁴⁰) side by side where shown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zsim.app import design as model
from zsim.app import figures
from zsim.errors import ZsimError
from zsim.grow.plan import plan_grow
from zsim.grow.result import GrowResult
from zsim.grow.run import grow_capacity, simulate_grow
from zsim.layout.grammar import parse_layout
from zsim.layout.tree import ZfsLayout
from zsim.scenario import Scenario, scenario_from_dict
from zsim.units import MB, TB, TiB, format_size, format_time

#: the two ways to grow a pool, as the page's radio offers them
KINDS = ("attach", "add-vdev")
KIND_LABELS = {
    "attach": "Attach disks to a raidz vdev (zpool attach, RAIDZ expansion, OpenZFS ≥ 2.3)",
    "add-vdev": "Add a vdev (zpool add)",
}
#: the four space figures of each step: (CapacityReport / PoolStep attribute, label)
SPACE_FIGURES = (
    ("zpool_size_bytes", "zpool list SIZE"),
    ("usable_bytes", "zfs list USED+AVAIL"),
    ("usable_new_data_bytes", "real, for new data"),
    ("usable_after_rewrite_bytes", "after zfs rewrite"),
)
HOUR = 3600.0

#: what bounds a reflow when no resource is ≥ 85 % busy (zsim.grow.reflow's own words)
REFLOW_LIMIT_WORDS = {
    "reflow": "the copy's own window (at most raidz_expand_max_copy_bytes = 160 MiB in "
    "flight, 2 removal-class I/Os per disk): no resource is ≥ 85 % busy",
    "foreground": "the workload running beside it",
    "nothing-allocated": "nothing to copy: the vdev holds no data (pool fill 0 %)",
}
#: the same in a metric's few words
REFLOW_LIMIT_SHORT = {
    "reflow": "copy window",
    "foreground": "the workload",
    "nothing-allocated": "no data",
}


@dataclass(frozen=True)
class GrowInputs:
    """What the page asks for. ``kind`` ``attach``: ``attach`` disks onto data vdev ``vdev``
    (0-based among the data vdevs); ``add-vdev``: the vdev(s) ``add_vdev`` (layout text).
    ``fill``: the pool's fill (``zfs list`` USED over USED+AVAIL, 0 ≤ f < 1) at each attach."""

    kind: str = "attach"
    attach: int = 1
    vdev: int = 0
    add_vdev: str = ""
    fill: float = 0.5

    def check(self) -> None:
        """Raise :class:`ZsimError` naming the fix for inputs zsim.grow would not take."""
        if self.kind not in KINDS:
            raise ZsimError(f"grow: {self.kind!r} is not one of {', '.join(KINDS)}")
        if not 0 <= self.fill < 1:
            raise ZsimError(
                f"pool fill at the attach {self.fill:.0%} must be at least 0 % and below 100 %"
            )
        if self.kind == "add-vdev" and not self.add_vdev.strip():
            raise ZsimError("give the vdev to add in the layout grammar, e.g. 'raidz2 8'")


def scenario_dict(design: model.Design, inputs: GrowInputs, workload: str = "") -> dict[str, Any]:
    """The scenario the grow runs on: the design's, for ``workload`` (default: its first),
    with ``pool.fill`` = the fill at the attach. Without a workload the records are the
    design's recordsize, or OpenZFS's default 128K for "auto" (as the resilver's)."""
    name = workload or (design.workloads[0] if design.workloads else model.CUSTOM)
    d = design.scenario_dict(name)
    if not workload:
        d["pool"]["recordsize"] = "128K" if design.recordsize == "auto" else design.recordsize
    d["pool"]["fill"] = inputs.fill
    return d


def grow_toml(design: model.Design, inputs: GrowInputs, workload: str = "") -> str:
    """:func:`scenario_dict` as canonical TOML (the file ``zsim grow`` runs)."""
    sc = scenario_from_dict(scenario_dict(design, inputs, workload), source="the app's grow")
    return str(sc.to_toml())


def request_key(scenario_toml: str, inputs: GrowInputs) -> str:
    """One grow as text (JSON): the cache key, and what the worker runs
    (:func:`run_request`)."""
    req: dict[str, Any] = {"scenario": scenario_toml}
    if inputs.kind == "attach":
        req.update(attach=inputs.attach, vdev=inputs.vdev)
    else:
        req["add_vdev"] = inputs.add_vdev.strip()
    return json.dumps(req, sort_keys=True)


def run_request(request: str, seed: int = 1, reflow: bool = False) -> GrowResult:
    """``zsim.grow`` of a :func:`request_key` text; ``reflow=True`` simulates the reflow on
    the discrete-event engine (seconds), else only space and analytic performance (< 1 s)."""
    import tomllib

    req = json.loads(request)
    sc = scenario_from_dict(tomllib.loads(req["scenario"]), source="the app's grow")
    return simulate_grow(
        sc,
        attach=req.get("attach"),
        add_vdev=req.get("add_vdev"),
        vdev=int(req.get("vdev", 0)),
        reflow=reflow,
        seed=seed,
    )


def vdev_choices(layout: str) -> tuple[tuple[int, str], ...]:
    """The data vdevs of a ZFS layout as (index among data vdevs, ``raidz2-0: raidz2 8
    (sda…sdh)``), the name ``zpool attach`` takes first; none for other layouts."""
    tree = parse_layout(layout)
    if not isinstance(tree, ZfsLayout):
        return ()
    out = []
    data = 0
    for pos, v in enumerate(tree.vdevs):
        if v.vclass != "normal":
            continue
        span = f"{v.devices[0]}…{v.devices[-1]}" if len(v.devices) > 1 else v.devices[0]
        out.append((data, f"{v.type_word()}-{pos}: {v.compact()} ({span})"))
        data += 1
    return tuple(out)


#: the command line's words in zsim.grow's messages → the page's controls
APP_WORDS = (
    ("use --add-vdev to grow", "choose “Add a vdev” to grow"),
    ("or use --add-vdev", "or choose “Add a vdev”"),
    ("with --add-vdev instead", "with “Add a vdev” instead"),
    (
        "set --set hardware.zfs_version=2.3 (or later)",
        "set the OpenZFS release to 2.3 or later (sidebar → Hardware)",
    ),
    ("use --attach to expand", "use “Attach disks” to expand"),
    ("--attach ", "attach "),
    ("--add-vdev", "the vdev to add"),
    ("--vdev ", "vdev "),
)


def app_message(text: str) -> str:
    """A :class:`ZsimError` message of ``zsim.grow`` in the page's words: its command-line
    flags named as the page's controls."""
    for cli, page in APP_WORDS:
        text = text.replace(cli, page)
    return text


def default_add_vdev(layout: str) -> str:
    """The vdev the page offers to add: one like the pool's first data vdev, as created
    (``raidz2 8`` for ``2x raidz2 8``), or ``raidz2 8`` for a layout without one."""
    tree = parse_layout(layout)
    if isinstance(tree, ZfsLayout) and tree.data_vdevs:
        return str(tree.data_vdevs[0].as_created().compact())
    return "raidz2 8"


# ---------------------------------------------------------------- space per step


def _figure_rows(step: int, label: str, source: Any) -> list[dict[str, Any]]:
    rows = []
    for key, name in SPACE_FIGURES:
        b = int(getattr(source, key))
        rows.append(
            {"step": step, "pool": label, "figure": name, "bytes": b, "TB": b / TB, "TiB": b / TiB}
        )
    return rows


def space_rows(sc: Scenario, inputs: GrowInputs) -> list[dict[str, Any]]:
    """The four space figures per step: as the pool is, then after each attach (or after
    the ``zpool add``). Raises :class:`ZsimError` for a grow OpenZFS refuses."""
    plan = plan_grow(
        sc,
        attach=inputs.attach if inputs.kind == "attach" else None,
        add_vdev=inputs.add_vdev if inputs.kind == "add-vdev" else None,
        vdev=inputs.vdev,
    )
    fill = min(inputs.fill, 0.999)
    before = grow_capacity(plan.before, {}, fill)
    after = grow_capacity(plan.after, plan.disk_sizes, fill)
    rows = _figure_rows(0, f"now: {plan.before.pool.layout}", before)
    if plan.kind == "add-vdev":
        return rows + _figure_rows(1, f"+ {inputs.add_vdev.strip()} (zpool add)", after)
    steps = after.expansion_steps[-plan.attach :]
    for n, s in enumerate(steps, 1):
        width = plan.before.layout_tree().data_vdevs[plan.vdev_index].width + n  # type: ignore[union-attr]
        rows += _figure_rows(n, f"+ {s.device} ({width} wide)", s)
    return rows


def gap_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """The last step's reported-vs-real gap in words, TB and TiB stated."""
    last = max(r["step"] for r in rows)
    fig = {r["figure"]: r["bytes"] for r in rows if r["step"] == last}
    pool = next(r["pool"] for r in rows if r["step"] == last)
    reported, real = fig["zfs list USED+AVAIL"], fig["real, for new data"]
    rewritten = fig["after zfs rewrite"]
    if rewritten == reported:
        return (
            f"After {pool}, `zfs list` reports {_tb(reported)}, and that is what the pool "
            f"holds: no raidz vdev has been expanded, so every block is charged at the width "
            f"it is written with."
        )
    return (
        f"After {pool}, `zfs list` reports {_tb(reported)}, but new data really fits "
        f"{_tb(real)}, and {_tb(rewritten)} once every block is rewritten at the new width "
        f"(`zfs rewrite`, OpenZFS 2.4+; on 2.3 copy the data): "
        f"{_tb(rewritten - reported)} ({(rewritten - reported) / reported:.0%}) more than "
        f"reported. ZFS keeps charging every block at the vdev's original data:parity ratio "
        f"(vdev_set_deflate_ratio(), vdev.c), and blocks written before an attach keep their "
        f"old width."
    )


def _tb(b: float) -> str:
    return f"{b / TB:,.2f} TB ({b / TiB:,.2f} TiB)"


def space_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per step, each figure as "12.0 TB (10.91 TiB)"."""
    out: dict[int, dict[str, Any]] = {}
    for r in rows:
        out.setdefault(r["step"], {"pool": r["pool"]})[r["figure"]] = _tb(r["bytes"])
    return [out[k] for k in sorted(out)]


# ---------------------------------------------------------------- the reflow


def reflow_limit_words(limit: str, util: Mapping[str, float]) -> str:
    """What bounded one reflow, in words: the busiest resource (≥ 85 % busy), or the copy's
    own window (:data:`REFLOW_LIMIT_WORDS`)."""
    if limit in REFLOW_LIMIT_WORDS:
        return REFLOW_LIMIT_WORDS[limit]
    if limit.startswith("disk:"):
        return f"the disks: {figures.busiest(util)} (reading the old rows, writing the new)"
    return figures.limit_words(limit, util, "des")


def reflow_limit_short(limit: str) -> str:
    """:func:`reflow_limit_words` in a metric's few words: "disks", "CPU", "copy window"."""
    if limit in REFLOW_LIMIT_SHORT:
        return REFLOW_LIMIT_SHORT[limit]
    kind = limit.split(":", 1)[0]
    return {"disk": "disks", "link": "disk links", "cpu": "CPU", "hba": "HBA"}.get(kind, kind)


def progress_rows(result: GrowResult) -> list[dict[str, Any]]:
    """The reflows' progress curves, one after another as OpenZFS runs them: hours since the
    first attach, percent of that attach's allocated bytes copied (``zpool status``)."""
    rows: list[dict[str, Any]] = []
    start = 0.0
    for r in result.reflows:
        name = f"{r.vdev}: {r.old_width} → {r.new_width} wide"
        for t, b in r.progress:
            pct = 100.0 * b / r.bytes_copied if r.bytes_copied else 100.0
            rows.append(
                {
                    "attach": name,
                    "seconds": start + t,
                    "hours": (start + t) / HOUR,
                    "percent": pct,
                    "bytes": b,
                }
            )
        start += r.seconds
    return rows


def reflow_summary(result: GrowResult) -> list[dict[str, Any]]:
    """One row per attach: time, bytes copied, rate, its limit in words, the scrub after."""
    return [
        {
            "attach": f"{r.vdev}: {r.old_width} → {r.new_width} wide",
            "seconds": r.seconds,
            "bytes_copied": r.bytes_copied,
            "bytes_per_s": r.bytes_per_s,
            "limit": r.limit,
            "limit_words": reflow_limit_words(r.limit, r.utilization),
            "scrub_seconds": r.scrub_seconds,
        }
        for r in result.reflows
    ]


# ---------------------------------------------------------------- performance


#: the performance table's columns (besides "workload" and "change")
PERF_COLUMNS = (
    ("read", "before", "read, before"),
    ("read", "after", "read, after"),
    ("read", "after_new_data", "read, after, new data"),
    ("write", "before", "write, before"),
    ("write", "after", "write, after"),
)


def perf_cell(answer: Mapping[str, Any], side: str) -> str:
    """One direction of an analytic answer ("812.3 MB/s · 775 IOPS"), "no reads" / "no
    writes" when the workload has none, or "declined" when the analytic engine declines it
    (the page gives the reason below the table: :func:`declined_reasons`)."""
    if "declined" in answer:
        return "declined"
    d = answer.get(side, {})
    if d.get("bytes_per_s", 0.0) <= 0:
        return f"no {side}s"
    return f"{d['bytes_per_s'] / MB:,.1f} MB/s · {d['iops']:,.0f} IOPS"


def _total(answer: Mapping[str, Any]) -> float | None:
    if "declined" in answer:
        return None
    return float(sum(answer.get(s, {}).get("bytes_per_s", 0.0) for s in ("read", "write")))


def change_text(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """The change of read + write bytes/s, or the short reason there is none ("declined":
    the analytic engine declines the workload before or after)."""
    b, a = _total(before), _total(after)
    if b is None or a is None:
        return "declined"
    if b <= 0:
        return "none: no I/O before"
    return f"{(a - b) / b:+.0%}"


def perf_rows(results: Mapping[str, GrowResult]) -> list[dict[str, Any]]:
    """Per workload: each direction before and after on the analytic engine, the change of
    read + write bytes/s, and the totals in bytes/s (``None`` where the engine declines).
    ``results``: workload name → ``zsim.grow`` of that workload's scenario."""
    rows = []
    for name, res in results.items():
        perf = res.performance
        row: dict[str, Any] = {"workload": model.PRESET_LABELS.get(name, "Custom (fio-like)")}
        for side, when, label in PERF_COLUMNS:
            # after an attach the data already there keeps its width; new data has the new
            # one (zpool add copies nothing: there is no second case)
            row[label] = perf_cell(perf[when], side) if when in perf else "—"

        row["change"] = change_text(perf["before"], perf["after"])
        row["before_bytes_per_s"] = _total(perf["before"])
        row["after_bytes_per_s"] = _total(perf["after"])
        rows.append(row)
    return rows


def declined_reasons(results: Mapping[str, GrowResult]) -> list[tuple[str, str]]:
    """(workload label, the analytic engine's reason) for each workload it declines,
    before or after the grow (the same reason is given once)."""
    out = []
    for name, res in results.items():
        why = {
            str(res.performance[side]["declined"])
            for side in ("before", "after")
            if "declined" in res.performance[side]
        }
        label = model.PRESET_LABELS.get(name, "Custom (fio-like)")
        out += [(label, figures.short_reason(w, 240)) for w in sorted(why)]
    return out


def evening_text(result: GrowResult) -> str | None:
    """How much rewriting evens the vdevs out (``performance.spread.evening_out``), in words,
    or ``None`` for a pool of one vdev."""
    spread = result.performance.get("spread") or {}
    evening = spread.get("evening_out")
    if not evening:
        return None
    e = evening.get("throttled") or evening["unthrottled"]
    within = f"within {e['within'] * 100:.0f} points of fullness of each other"
    if e["bytes_rewritten"] is None:
        return f"Rewriting the data ten times over does not bring the vdevs {within}."
    when = f", {format_time(e['seconds'])} at the write rate" if e["seconds"] else ""
    return (
        f"**Evening out.** New writes alone keep the imbalance (each vdev's free space shrinks "
        f"by the same fraction); rewrites of the old data free it where it was, and after "
        f"{format_size(e['bytes_rewritten'])} rewritten{when}, the vdevs are {within}."
    )


def spread_rows(result: GrowResult) -> list[dict[str, Any]]:
    """For a pool of several vdevs: each vdev's share of new writes (allocator weighting by
    free space, ``metaslab.c``), and how busy it is with the allocation throttle on."""
    spread = result.performance.get("spread")
    if not spread:
        return []
    busy = spread.get("throttled", {}).get("vdev_busy")
    rows = []
    for i, v in enumerate(spread["vdevs"]):
        rows.append(
            {
                "vdev": v["vdev"],
                "allocated": f"{v['allocated_fraction']:.0%}",
                "share of new writes": f"{v['share_by_free_space']:.0%}",
                "share when balanced": f"{v['share_empty_pool']:.0%}",
                "busy (throttle on)": f"{busy[i]:.0%}"
                if busy
                else "no write rate from the analytic engine",
            }
        )
    return rows
