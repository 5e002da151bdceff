"""What the "Resilver" page computes, without Streamlit: the cases it compares and their rows.

For one :class:`~zsim.app.design.Design` the page compares resilvers of one failed disk:

* ``design`` — the design as it is: a new disk in the failed disk's slot, healed block by
  block (a dRAID design with distributed spares: its sequential rebuild onto the spare);
* ``under_load`` — the same with the design's workload running (``resilver.under_load``): the
  resilver slowed by the workload *and* the workload slowed by the resilver;
* ``draid`` — a dRAID of the same disks with one distributed spare, rebuilt sequentially, and
  ``draid_heal`` — the healing resilver onto the new disk that replaces the failed one later
  (for reference: redundancy is already back while it runs);
* ``new_disk`` — for a dRAID design with spares: the same failure healed onto a new disk;
* ``sequential`` — a mirror's ``zpool replace -s`` (sequential rebuild, then a scrub).

Every case is a :class:`zsim.Scenario` whose canonical TOML (``Scenario.to_toml()``) is the
cache key; the runner (``zsim.resilver`` by default, the page's ``st.cache_data`` wrapper in
the app) turns it into a :class:`~zsim.resilver.result.ResilverResult`. The rows are in SI
base units (seconds, bytes, bytes/s) plus hours and percent for the chart.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from zsim.app import design as model
from zsim.app.figures import resilver_limit_words
from zsim.errors import ZsimError
from zsim.layout.grammar import parse_layout
from zsim.layout.tree import MdArray, ZfsLayout, ZpoolOnBlock
from zsim.resilver.durability import pool_durability
from zsim.resilver.target import resolve_target
from zsim.scenario import scenario_from_dict
from zsim.units import MB

HOUR = 3600.0
YEAR = 365.25 * 86400.0
WRITTEN = ("sequential", "random")

#: what each case is called on the page (the layout is added in front)
CASE_KEYS = ("design", "under_load", "sequential", "new_disk", "draid", "draid_heal")

Runner = Callable[[str], Any]


# ---------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    """One resilver to simulate.

    ``toml`` is the scenario's canonical TOML (what ``zsim resilver`` runs; the cache key).
    ``loaded``: the case's figures are the result's ``under_load`` ones. ``reference``: the
    pool already has its redundancy back while this one runs (no exposure window, no loss
    probability of its own).
    """

    key: str
    label: str
    layout: str
    toml: str
    loaded: bool = False
    reference: bool = False
    note: str = ""

    def scenario(self) -> Any:
        return scenario_from_dict(tomllib.loads(self.toml), source=f"the {self.key} case")


@dataclass(frozen=True)
class Plan:
    """The cases for one design and the page's inputs, and what the page says about them.

    ``disks`` are the failed-disk choices (data devices of the layout), ``disk`` the one
    chosen (the library's default when the page leaves it empty); ``draid_layout`` is the
    dRAID compared (``None`` when there is none, ``draid_why`` says why, or how it was picked).
    ``lost`` is true when the failed disk has no redundancy (a stripe): only the ``design``
    case is run, for its loss probability.
    """

    cases: tuple[Case, ...]
    disks: tuple[str, ...]
    disk: str
    draid_layout: str | None = None
    draid_why: str = ""
    draid_parity: int = 0
    draid_data: int = 0
    draid_children: int = 0
    lost: bool = False
    workload: str = ""

    def case(self, key: str) -> Case | None:
        return next((c for c in self.cases if c.key == key), None)


def resilver_recordsize(design: model.Design) -> str:
    """The records the pool holds for the resilver (as :meth:`Design.resilver_scenario`):
    the design's recordsize, or OpenZFS's default 128K when it is "auto"."""
    return "128K" if design.recordsize == "auto" else design.recordsize


def base_dict(design: model.Design, workload: str = "") -> dict[str, Any]:
    """The scenario dict every case starts from: :meth:`Design.scenario_dict` of ``workload``
    (default: the design's first) with the resilver's recordsize. With the first workload it
    is the scenario :meth:`Design.resilver_scenario` returns."""
    name = workload or (design.workloads[0] if design.workloads else model.CUSTOM)
    d = design.scenario_dict(name)
    d["pool"]["recordsize"] = resilver_recordsize(design)
    return d


def _canonical(d: Mapping[str, Any], what: str) -> str:
    return str(scenario_from_dict(dict(d), source=what).to_toml())


def failed_disk_choices(design: model.Design) -> tuple[str, ...]:
    """The devices that can fail: the data vdevs' disks (ZFS) or the array's members (md)."""
    return data_devices(design.layout)


def data_devices(layout: str) -> tuple[str, ...]:
    """The data devices of a layout: its data vdevs' disks (ZFS; not hot spares, log, cache
    or special devices) or the array's members (md); none for other systems."""
    tree = parse_layout(layout)
    if isinstance(tree, ZpoolOnBlock):
        tree = tree.block
    if isinstance(tree, MdArray):
        return tuple(tree.devices)
    if isinstance(tree, ZfsLayout):
        return tuple(d for v in tree.data_vdevs for d in v.devices)
    return ()


def redundancy_shape(design: model.Design, disk: str) -> tuple[str, int, int] | None:
    """(kind, parity P, data disks per redundancy group D) of the vdev (or md array) that
    holds ``disk``; ``None`` when it has no redundancy (a single-disk vdev, RAID0). A mirror
    of n is P = n − 1 (at most 3, dRAID's limit), D = 1."""
    tree = parse_layout(design.layout)
    if isinstance(tree, ZpoolOnBlock):
        tree = tree.block
    if isinstance(tree, MdArray):
        shape = tree.redundancy
        if not shape.tolerance:
            return None
        return f"md-raid{tree.level}", min(shape.tolerance, 3), shape.group_width - shape.tolerance
    if not isinstance(tree, ZfsLayout):
        return None
    vdev = next((v for v in tree.data_vdevs if disk in v.devices), None)
    if vdev is None or vdev.kind == "disk":
        return None
    if vdev.kind == "mirror":
        return "mirror", min(vdev.width - 1, 3), 1
    if vdev.kind == "draid":
        return f"draid{vdev.parity}", vdev.parity, vdev.ndata
    return f"raidz{vdev.parity}", vdev.parity, vdev.width - vdev.parity


def draid_layout(parity: int, data: int, children: int) -> tuple[str | None, int]:
    """``draid{P}:{D}d:1s:{C}c`` for ``children`` disks: the design's parity, its data disks
    per group capped so that a group and one distributed spare fit (D + P + 1 ≤ C). Returns
    (layout, D used), or (None, 0) when not even D = 1 fits."""
    d = min(data, children - parity - 1)
    if parity < 1 or d < 1:
        return None, 0
    return f"draid{parity}:{d}d:1s:{children}c", d


def ideal_draid_speedup(parity: int, data: int, children: int) -> float:
    """How much faster a distributed-spare rebuild can be than a new disk, at best: each
    rebuilt column costs D + P column I/Os (D + P − 1 reads and one write) spread over the
    C − 1 surviving disks, where a new disk has to write every rebuilt byte itself — so
    (C − 1) / (D + P)."""
    return (children - 1) / (data + parity)


def plan_cases(
    design: model.Design,
    *,
    disk: str = "",
    written: str = "sequential",
    under_load: bool = False,
    workload: str = "",
    draid: bool = True,
    draid_children: int = 0,
    sequential: bool = True,
) -> Plan:
    """The cases to compare for ``design`` (raises :class:`ZsimError` naming the fix).

    ``disk``: the failed disk ("" = the library's default, the first data disk);
    ``written``: sequential | random (how the data was written); ``under_load`` adds the
    case with ``workload`` (default: the design's first) running; ``draid`` adds the dRAID
    comparison on ``draid_children`` disks (0 = the design's disk count); ``sequential``
    adds a mirror's sequential rebuild.
    """
    if written not in WRITTEN:
        raise ZsimError(f"written = {written!r}: use one of {', '.join(WRITTEN)}")
    workloads = design.workloads or (model.CUSTOM,)
    workload = workload or workloads[0]
    if workload not in workloads:
        raise ZsimError(
            f"the workload {workload!r} is not one of the design's; pick one of "
            f"{', '.join(workloads)}"
        )
    disks = failed_disk_choices(design)
    if disk and disks and disk not in disks:
        raise ZsimError(
            f"the failed disk {disk!r} is not a data disk of {design.layout!r}; "
            f"pick one of {', '.join(disks[:8])}"
        )

    def make(
        key: str,
        *,
        layout: str | None = None,
        src: str = "",
        failed: str | None = None,
        **extra: Any,
    ) -> Case:
        """A case: the design (or ``layout`` on its disks) failing ``failed`` (None: the
        page's disk), with ``extra`` ``[resilver]`` keys."""
        d = base_dict(design, src)
        if layout is not None:
            d["pool"]["layout"] = layout
            d["name"] = f"{layout} of {design.disk_label()}: resilver comparison"
        names = data_devices(d["pool"]["layout"])
        fails = disk if failed is None else failed
        table: dict[str, Any] = {}
        if fails and fails != (names[0] if names else ""):
            table["disk"] = fails
        if written != "sequential":
            table["written"] = written
        table.update(extra)
        if table:
            d["resilver"] = table
        return Case(key, "", d["pool"]["layout"], _canonical(d, f"the {key} case"))

    main = make("design")
    target = resolve_target(main.scenario())
    chosen = target.disk
    if target.system == "lost":
        main = dataclasses.replace(main, label=f"{design.layout}: no redundancy")
        return Plan((main,), disks, chosen, lost=True, workload=workload)
    main = dataclasses.replace(main, label=f"{design.layout}: {_how(target.method, target.spare)}")
    cases = [main]
    if under_load:
        c = make("under_load", src=workload, under_load=True)
        cases.append(
            dataclasses.replace(
                c, label=f"{main.label}, under load ({short_label(workload)})", loaded=True
            )
        )
    if (
        sequential
        and target.system == "zfs"
        and target.vdev is not None
        and target.vdev.kind == "mirror"
        and target.method == "healing"
    ):
        try:
            c = make("sequential", method="sequential")
            cases.append(
                dataclasses.replace(
                    c,
                    label=f"{design.layout}: new disk, sequential rebuild (zpool replace -s)",
                    note="redundancy is back after the rebuild; the scrub that follows is in "
                    "'then scrub'",
                )
            )
        except ZsimError:
            pass  # before OpenZFS 2.0: no sequential rebuild
    shape = redundancy_shape(design, chosen)
    plan_draid: dict[str, Any] = {}
    if target.spare == "distributed":
        c = make("new_disk", spare="new", method="healing")
        cases.append(
            dataclasses.replace(
                c, label=f"{design.layout}: new disk, healing resilver (no distributed spare)"
            )
        )
        plan_draid["draid_why"] = (
            "The design is already a dRAID with a distributed spare; its main case is the "
            "rebuild onto that spare, compared with healing a new disk in the failed slot."
        )
    elif draid and shape is not None:
        kind, parity, data = shape
        children = draid_children or design.disks
        layout, d = draid_layout(parity, data, children)
        plan_draid.update(draid_parity=parity, draid_data=d, draid_children=children)
        if layout is None:
            plan_draid["draid_why"] = (
                f"No dRAID comparison: a dRAID{parity} group of at least 1 data disk and "
                f"{parity} parity plus one distributed spare needs {parity + 2} disks; "
                f"there are {children}."
            )
        else:
            same = "the design's" if children == design.disks else "not the design's"
            groups = (
                f"the design has {data} data disks per group; {d} is the most for which a "
                f"group and one distributed spare fit in {children} disks"
                if d < data
                else f"as in the design's {kind}"
            )
            plan_draid["draid_layout"] = layout
            plan_draid["draid_why"] = (
                f"`{layout}`: {children} disks ({same} {design.disks}), parity {parity} like "
                f"the design's {kind}, redundancy groups of {d} data + {parity} parity disks "
                f"({groups}) and one distributed spare."
            )
            # the same disk name fails when the dRAID has it (compact layouts name their
            # disks sda, sdb, … in order), else its first disk
            failed = disk if disk in data_devices(layout) else ""
            try:
                c = make(
                    "draid", layout=layout, failed=failed, spare="distributed", method="sequential"
                )
                cases.append(
                    dataclasses.replace(
                        c,
                        label=f"{layout}: distributed spare, sequential rebuild",
                        note="redundancy is back after the rebuild; the scrub that follows is in "
                        "'then scrub'",
                    )
                )
                c = make("draid_heal", layout=layout, failed=failed, spare="new", method="healing")
                cases.append(
                    dataclasses.replace(
                        c,
                        label=f"{layout}: then healing onto the new disk",
                        reference=True,
                        note="after the distributed-spare rebuild: redundancy is already back "
                        "while it runs",
                    )
                )
            except ZsimError as err:
                plan_draid.pop("draid_layout")
                plan_draid["draid_why"] = f"No dRAID comparison for `{layout}`: {err}"
    elif draid:
        plan_draid["draid_why"] = "No dRAID comparison: the failed disk's vdev has no parity."
    return Plan(tuple(cases), disks, chosen, lost=False, workload=workload, **plan_draid)


def short_label(workload: str) -> str:
    """``VM store`` for ``vm-16k``: the preset's label without its details."""
    return model.PRESET_LABELS.get(workload, "custom workload").split(" (")[0]


def _how(method: str, spare: str) -> str:
    if spare == "distributed":
        return "distributed spare, sequential rebuild"
    if method == "rebuild":
        return "new disk, md recovery"
    return f"new disk, {method} {'resilver' if method == 'healing' else 'rebuild'}"


# ---------------------------------------------------------------- running and rows


def simulate_toml(toml: str, seed: int = 1) -> Any:
    """``zsim.resilver`` of a canonical scenario TOML (the runner outside the app)."""
    # imported when used: it loads the discrete-event engine
    from zsim.resilver.run import simulate_resilver

    return simulate_resilver(
        scenario_from_dict(tomllib.loads(toml), source="a resilver case"), seed=seed
    )


def run_cases(plan: Plan, runner: Runner = simulate_toml) -> dict[str, Any]:
    """Every case's :class:`ResilverResult`, by case key."""
    return {c.key: runner(c.toml) for c in plan.cases}


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def loaded_durability(case: Case, result: Any, seed: int = 1) -> dict[str, Any] | None:
    """The loss probabilities if every rebuild ran under the case's load
    (``durability.busy_fraction = 1``), from the simulated loaded time; ``None`` when the
    resilver does not finish under the load."""
    ul = result.under_load or {}
    if _finite(ul.get("seconds")) is None:
        return None
    sc = case.scenario()
    sc = dataclasses.replace(sc, durability=dataclasses.replace(sc.durability, busy_fraction=1.0))
    return dict(pool_durability(sc, resolve_target(sc), result, seed))


def _wait_seconds(case: Case, result: Any) -> float:
    """Seconds from the failure to the start of the rebuild: none for a distributed or hot
    spare, else ``durability.replace_after`` (as :mod:`zsim.resilver.durability` counts it)."""
    sc = case.scenario()
    tree = sc.layout_tree()
    hot = bool(getattr(tree, "of_class", lambda *_: ())("spare"))
    return 0.0 if hot or result.spare == "distributed" else float(sc.durability.replace_after)


@dataclass(frozen=True)
class Outcome:
    """The page's figures: ``summary`` (one row per case), ``progress`` (one row per case
    and point of its curve), ``lost`` with ``message`` for a design that cannot resilver."""

    plan: Plan
    results: dict[str, Any]
    summary: list[dict[str, Any]] = field(default_factory=list)
    progress: list[dict[str, Any]] = field(default_factory=list)
    lost: bool = False
    message: str = ""

    def row(self, key: str) -> dict[str, Any] | None:
        return next((r for r in self.summary if r["key"] == key), None)

    def document(self) -> dict[str, Any]:
        """The JSON download: the cases, their summaries and progress (SI units)."""
        return {
            "disk": self.plan.disk,
            "draid_layout": self.plan.draid_layout,
            "draid_choice": self.plan.draid_why,
            "lost": self.lost,
            "message": self.message,
            "summary": self.summary,
            "progress": self.progress,
        }


def summary_row(case: Case, result: Any, loaded: dict[str, Any] | None = None) -> dict[str, Any]:
    """One case's figures (SI units; ``None`` where there is no finite figure)."""
    dur = result.durability or {}
    row: dict[str, Any] = {
        "key": case.key,
        "case": case.label,
        "layout": case.layout,
        "disk": result.disk,
        "method": result.method,
        "spare": result.spare,
        "written": case.scenario().resilver.written,
        "under_load": case.loaded,
        "seconds": _finite(result.seconds),
        "total_seconds": _finite(result.total_seconds),
        "scrub_after_seconds": None,
        "bytes_resilvered": result.bytes_resilvered,
        "bytes_per_s": result.bytes_per_s,
        "bytes_read": result.bytes_read,
        "limit": result.limit,
        "limit_words": resilver_limit_words(result.limit, result.utilization, result.disk),
        "wait_seconds": None if result.lost else _wait_seconds(case, result),
        "loss_probability": dur.get("loss_probability"),
        "loss_probability_ci95": dur.get("loss_probability_ci95"),
        "ure_probability": dur.get("ure_probability"),
        "mission_seconds": dur.get("mission_seconds"),
        "note": case.note,
    }
    if result.method == "sequential" and row["seconds"] is not None and row["total_seconds"]:
        row["scrub_after_seconds"] = row["total_seconds"] - row["seconds"]
    if case.loaded:
        ul = result.under_load or {}
        secs = _finite(ul.get("seconds"))
        row.update(
            seconds=secs,
            total_seconds=secs,
            bytes_per_s=ul.get("bytes_per_s", 0.0),
            limit=ul.get("limit", ""),
            limit_words=resilver_limit_words(ul.get("limit", ""), {}, result.disk),
            loss_probability=(loaded or {}).get("loss_probability"),
            loss_probability_ci95=(loaded or {}).get("loss_probability_ci95"),
            ure_probability=(loaded or {}).get("ure_probability"),
        )
        if secs is None:
            row["note"] = "the resilver makes no progress under this load: it does not finish"
        during, alone = ul.get("foreground_during") or {}, ul.get("foreground_alone") or {}
        for direction in ("read", "write"):
            row[f"load_{direction}_bytes_per_s_during"] = (during.get(direction) or {}).get(
                "bytes_per_s"
            )
            row[f"load_{direction}_bytes_per_s_alone"] = (alone.get(direction) or {}).get(
                "bytes_per_s"
            )
        if ul.get("note"):
            row["note"] = ul["note"]
    if case.reference:
        row.update(loss_probability=None, loss_probability_ci95=None, ure_probability=None)
    row["hours"] = None if row["seconds"] is None else row["seconds"] / HOUR
    return row


def progress_rows(case: Case, result: Any) -> list[dict[str, Any]]:
    """The progress curve: one row per point, seconds and hours since the resilver started,
    bytes resilvered, and the fraction / percent of the disk's allocated data done. Points
    at an infinite time (a resilver starved by the load) are left out."""
    if case.loaded:
        points = [(p["seconds"], p["bytes"]) for p in (result.under_load or {}).get("progress", [])]
    else:
        points = list(result.progress)
    total = result.bytes_resilvered or (points[-1][1] if points else 0)
    rows = []
    for seconds, nbytes in points:
        if not math.isfinite(seconds):
            continue
        fraction = nbytes / total if total else 1.0
        rows.append(
            {
                "key": case.key,
                "case": case.label,
                "seconds": float(seconds),
                "hours": float(seconds) / HOUR,
                "bytes": int(nbytes),
                "fraction": fraction,
                "percent": 100.0 * fraction,
            }
        )
    return rows


def outcome(plan: Plan, results: Mapping[str, Any], seed: int = 1) -> Outcome:
    """The rows of the page from the cases' results (``run_cases``)."""
    if plan.lost:
        res = results["design"]
        dur = res.durability or {}
        years = (dur.get("mission_seconds") or 5 * YEAR) / YEAR
        p = dur.get("loss_probability")
        why = res.notes[0] if res.notes else f"{res.disk} has no redundancy"
        message = (
            f"No redundancy: {why}. There is no resilver to show. The pool loses data at "
            f"the first failure of any of its disks: P(loss) over {years:.0f} years "
            f"{'—' if p is None else f'{p:.3g}'}. Add parity or mirrors to the layout."
        )
        summary = [summary_row(plan.cases[0], res)]
        return Outcome(plan, dict(results), summary, [], lost=True, message=message)
    summary, progress = [], []
    for case in plan.cases:
        res = results[case.key]
        loaded = loaded_durability(case, res, seed) if case.loaded else None
        summary.append(summary_row(case, res, loaded))
        progress.extend(progress_rows(case, res))
    return Outcome(plan, dict(results), summary, progress)


def compare(design: model.Design, runner: Runner = simulate_toml, **inputs: Any) -> Outcome:
    """Plan, run and tabulate the cases for ``design`` (``inputs`` as :func:`plan_cases`)."""
    plan = plan_cases(design, **inputs)
    return outcome(plan, run_cases(plan, runner))


# ---------------------------------------------------------------- text for the page


def speedup_text(out: Outcome) -> str:
    """Why a distributed spare is (or is not) faster, with the figures of ``out``."""
    plan = out.plan
    main, dr = out.row("design"), out.row("draid")
    if plan.draid_layout is None or main is None or dr is None:
        return ""
    p, d, c = plan.draid_parity, plan.draid_data, plan.draid_children
    ideal = ideal_draid_speedup(p, d, c)
    t_main, t_dr = main["seconds"], dr["seconds"]
    if not t_main or not t_dr:
        return ""
    ratio = t_main / t_dr
    text = (
        f"**Why dRAID can be faster.** A new disk has to write every rebuilt byte itself, so "
        f"the resilver runs at most at that one disk's speed. A distributed spare is spare "
        f"space on every disk: each rebuilt column costs {d + p} column I/Os "
        f"({d + p - 1} read{'s' if d + p - 1 != 1 else ''} of the group's surviving columns "
        f"and one write), spread over all "
        f"{c - 1} surviving disks — every disk takes part in the rebuild. At best it is "
        f"({c} − 1) / ({d} + {p}) = **{ideal:.1f}×** as fast. Here zsim finds "
        f"{t_dr / HOUR:.1f} h against {t_main / HOUR:.1f} h: **{ratio:.2f}×**"
    )
    if ratio < 1.0:
        text += (
            ". No gain with so few disks: a group spans nearly every disk, so every disk "
            "reads about as much as the new disk would write, and the rebuild also reads "
            "parity it does not need. dRAID pays off when the disks are many times the "
            "group width (try more dRAID disks above)."
        )
    else:
        text += "."
    if dr.get("scrub_after_seconds"):
        text += (
            f" The sequential rebuild skips checksums; the scrub that follows takes "
            f"{dr['scrub_after_seconds'] / HOUR:.1f} h more, with redundancy already back."
        )
    if dr.get("wait_seconds") == 0 and (main.get("wait_seconds") or 0) > 0:
        text += (
            f" The distributed spare also starts at once, where a new disk is put in "
            f"{main['wait_seconds'] / HOUR:.0f} h after the failure (durability.replace_after): "
            f"P(loss) counts the whole time without redundancy, "
            f"{(main['wait_seconds'] + t_main) / HOUR:.1f} h against {t_dr / HOUR:.1f} h."
        )
    return text


def load_text(out: Outcome) -> str:
    """What the workload did to the resilver and the resilver to the workload."""
    main, ul = out.row("design"), out.row("under_load")
    if main is None or ul is None:
        return ""
    label = model.PRESET_LABELS.get(out.plan.workload, "the custom workload")
    if ul["seconds"] is None:
        head = (
            f"With {label} running, the resilver makes no progress in zsim's windows: it "
            f"does not finish while the load lasts."
        )
    elif main["seconds"]:
        head = (
            f"With {label} running, the resilver takes {ul['seconds'] / HOUR:.1f} h "
            f"instead of {main['seconds'] / HOUR:.1f} h "
            f"({ul['seconds'] / main['seconds']:.1f}×)."
        )
    else:
        head = ""
    parts = []
    for direction in ("read", "write"):
        during = ul.get(f"load_{direction}_bytes_per_s_during")
        alone = ul.get(f"load_{direction}_bytes_per_s_alone")
        if during is None or alone is None or alone <= 0:
            continue
        parts.append(
            f"{direction}s {during / MB:,.1f} MB/s instead of {alone / MB:,.1f} MB/s "
            f"on the healthy pool ({_percent(during / alone - 1)})"
        )
    tail = f" The workload slows down too: {'; '.join(parts)}." if parts else ""
    if ul.get("note") and not parts:
        tail = f" {ul['note']}."
    return head + tail


def _percent(x: float) -> str:
    """``−45 %``: a signed change with a real minus sign."""
    return f"{x * 100:+.0f} %".replace("-", "−")


def table_rows(summary: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The summary table in human units (h, MB/s), one row per case."""
    out = []
    for r in summary:
        years = (r.get("mission_seconds") or 5 * YEAR) / YEAR
        out.append(
            {
                "case": r["case"],
                "time (h)": None if r["hours"] is None else round(r["hours"], 2),
                "rate (MB/s)": round(r["bytes_per_s"] / MB, 1),
                f"P(loss) over {years:.0f} y": r["loss_probability"],
                "limited by": r.get("limit_words") or r["limit"],
                "then scrub (h)": None
                if not r.get("scrub_after_seconds")
                else round(r["scrub_after_seconds"] / HOUR, 2),
                "wait before (h)": None
                if r.get("wait_seconds") is None
                else round(r["wait_seconds"] / HOUR, 1),
            }
        )
    return out
