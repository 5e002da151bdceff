"""Pick layouts from a sweep: constraints, the Pareto front, and a reason for each pick.

:func:`recommend` (also ``zsim.recommend(...)`` and ``zsim recommend``):

1. **Constraints** filter the rows: ``min_usable`` (``zfs list`` USED+AVAIL; ``"100TB"`` is
   10^12-based, ``"100TiB"`` 2^40-based), ``min_fault_tolerance`` (disks that may fail), and
   ``max_cost`` (USD for all disks; rows without a known price cannot be shown to meet it
   and are left out). Capacity, fault tolerance and cost are known before any engine runs,
   so only the rows that meet them are simulated. When no row meets them the error says
   how close the best one comes and what to change.
2. **Objectives**: usable bytes (more is better), each workload's performance (more is
   better; bytes/s, which ranks a workload's layouts exactly as its IOPS do), fault
   tolerance (more is better), with ``resilver=True`` (``--resilver``) the probability of
   losing the pool within the durability mission (less is better: it weighs the rebuild
   time, hot and distributed spares and the parity together; :mod:`zsim.sweep.resilver`),
   and total cost (less is better; compared only when every candidate has a price). Rows
   whose engine gave no figure for some workload are left out (listed in ``excluded``).
3. **Pareto front**: a row is picked when no other candidate is at least as good on every
   objective and better on one.
4. **Reasons**: each pick names what it is best at among the candidates that survive at
   least as many failures as it does ("most usable space among layouts surviving ≥ 2
   failures"), then its largest shortfall against the best there ("38 % fewer 4k-randread
   IOPS than 12x mirror 2"). A pick that is best at nothing is a middle ground, and says
   how close it comes to the best on its strongest measure and what it gains over that
   layout.

Without ``resilver=True`` durability is the fault tolerance alone, and hot spares only cost
space; with it, a spare's shorter rebuild window shows in the loss probability.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zsim.errors import ZsimError
from zsim.sweep.layouts import MAX_HOT_SPARES, RAIDZ_MAX_WIDTH
from zsim.sweep.plan import DEFAULT_ENGINE, SweepPlan, plan_sweep
from zsim.sweep.resilver import add_resilver_columns
from zsim.sweep.table import SweepTable, fmt_tb, run_plan, workload_cell
from zsim.units import TiB, format_size, parse_size
from zsim.version import __version__


@dataclass(frozen=True)
class Objective:
    """One measure of the Pareto front: a row key and whether more (+1) or less (−1) wins."""

    name: str
    key: str
    sense: int
    label: str

    def value(self, row: Mapping[str, Any]) -> float:
        return float(row[self.key])

    def better(self, a: float, b: float) -> bool:
        return a > b if self.sense > 0 else a < b


@dataclass(frozen=True)
class Pick:
    """A layout on the Pareto front, why it is there, and the measures it is best at."""

    row: dict[str, Any]
    reason: str
    best_at: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "best_at": list(self.best_at), **self.row}


@dataclass(frozen=True)
class Recommendation:
    """The result of :func:`recommend`.

    ``constraints``: what was asked (bytes, disks, USD). ``objectives``: the front's measures.
    ``picks``: the Pareto front, most fault-tolerant first, then most usable.
    ``candidates``: rows that met the constraints and have every figure. ``considered``:
    rows before the constraints. ``excluded``: candidates left out, with why. ``table``: the
    evaluated candidates' sweep table.
    """

    constraints: dict[str, Any]
    objectives: tuple[Objective, ...]
    picks: tuple[Pick, ...]
    candidates: int
    considered: int
    excluded: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = ()
    table: SweepTable | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (SI units; ``picks`` carry their full table rows)."""
        return {
            "zsim_version": __version__,
            "inputs": self.table.inputs if self.table is not None else None,
            "constraints": self.constraints,
            "objectives": [
                {"name": o.name, "key": o.key, "better": "more" if o.sense > 0 else "less"}
                for o in self.objectives
            ],
            "considered": self.considered,
            "candidates": self.candidates,
            "picks": [p.to_dict() for p in self.picks],
            "excluded": list(self.excluded),
            "notes": list(self.notes),
        }

    def text(self) -> str:
        """The ``zsim recommend`` text: the picks' figures, then one reason per pick."""
        return render_text(self)


# ---------------------------------------------------------------- constraints


def _min_usable(value: int | str | None) -> int | None:
    if value is None:
        return None
    nbytes = parse_size(value)
    if nbytes <= 0:
        raise ZsimError(f"--min-usable {value!r} must be more than 0, e.g. 100TB")
    return nbytes


def _min_ft(value: int | str | None) -> int | None:
    if value is None:
        return None
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit():
        raise ZsimError(
            f"--min-fault-tolerance {value!r}: give a whole number of disk failures, e.g. 2"
        )
    return int(text)


def _max_cost(value: float | str | None) -> float | None:
    if value is None:
        return None
    text = str(value).strip().removeprefix("$").strip()
    try:
        usd = float(text)
    except ValueError:
        raise ZsimError(f"--max-cost {value!r} is not a number of US dollars; e.g. 20000") from None
    if not math.isfinite(usd) or usd <= 0:
        raise ZsimError(f"--max-cost {value!r} must be more than 0 USD, e.g. 20000")
    return usd


def _row_label(row: Mapping[str, Any], multi_disk: bool, multi_count: bool) -> str:
    label = row["layout"]
    if multi_disk:
        label += f" of {row['disk']}"
    if multi_count and not multi_disk:
        label += f" ({row['disks']} disks)"
    elif multi_count:
        label = f"{row['layout']} of {row['disks']} × {row['disk']}"
    return label


def _constraint_text(c: Mapping[str, Any]) -> str:
    parts = []
    if c.get("min_usable_bytes") is not None:
        parts.append(f"≥ {format_size(c['min_usable_bytes'])} usable")
    if c.get("min_fault_tolerance") is not None:
        n = c["min_fault_tolerance"]
        parts.append(f"surviving ≥ {n} disk failure{'' if n == 1 else 's'}")
    if c.get("max_cost_usd") is not None:
        parts.append(f"costing ≤ ${c['max_cost_usd']:,.0f}")
    return ", ".join(parts) or "no constraints"


def apply_constraints(
    rows: Sequence[dict[str, Any]], constraints: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The rows that meet ``constraints``; a :class:`ZsimError` saying how close the best
    comes when none does."""
    min_bytes = constraints.get("min_usable_bytes")
    min_ft = constraints.get("min_fault_tolerance")
    max_cost = constraints.get("max_cost_usd")
    if max_cost is not None and all(r["cost_usd"] is None for r in rows):
        raise ZsimError(
            "--max-cost needs prices, and no swept disk has one; give --price MODEL=USD"
        )
    ok = [
        r
        for r in rows
        if (min_ft is None or r["fault_tolerance"] >= min_ft)
        and (min_bytes is None or r["usable_bytes"] >= min_bytes)
        and (max_cost is None or (r["cost_usd"] is not None and r["cost_usd"] <= max_cost))
    ]
    if ok:
        return ok
    wanted = _constraint_text(constraints)
    tolerant = [r for r in rows if min_ft is None or r["fault_tolerance"] >= min_ft]
    if not tolerant:
        most = max(r["fault_tolerance"] for r in rows)
        raise ZsimError(
            f"no layout meets the constraints ({wanted}): the most any survives is {most} disk "
            f"failure(s); lower --min-fault-tolerance or sweep more disks"
        )
    roomy = [r for r in tolerant if min_bytes is None or r["usable_bytes"] >= min_bytes]
    if not roomy:
        best = max(tolerant, key=lambda r: r["usable_bytes"])
        which = "most usable layout" + (" that survives enough failures" if min_ft else "")
        raise ZsimError(
            f"no layout meets the constraints ({wanted}): the {which} is {best['layout']} of "
            f"{best['disks']} × {best['disk']} with {format_size(best['usable_bytes'])}; lower "
            f"--min-usable, or sweep more or larger disks"
        )
    priced = [r for r in roomy if r["cost_usd"] is not None]
    if not priced:
        raise ZsimError(
            f"no layout meets the constraints ({wanted}): those with enough space and "
            f"tolerance have no price; give --price MODEL=USD"
        )
    cheapest = min(priced, key=lambda r: r["cost_usd"])
    raise ZsimError(
        f"no layout meets the constraints ({wanted}): the cheapest with enough space and "
        f"tolerance is {cheapest['layout']} of {cheapest['disks']} × {cheapest['disk']} at "
        f"${cheapest['cost_usd']:,.0f}; raise --max-cost"
    )


# ---------------------------------------------------------------- the front


def objectives_for(
    table: SweepTable,
    rows: Sequence[Mapping[str, Any]],
    workloads: Sequence[str] | None = None,
) -> list[Objective]:
    """The front's measures for these rows: usable space, each workload's speed (default: all
    of the table's), fault tolerance, and cost when every row has a price."""
    out = [Objective("usable", "usable_bytes", +1, "usable space")]
    for name in table.workloads if workloads is None else workloads:
        unit = "MB/s" if table.streaming[name] else "IOPS"
        out.append(Objective(f"performance:{name}", f"{name}.bytes_per_s", +1, f"{name} {unit}"))
    out.append(Objective("fault_tolerance", "fault_tolerance", +1, "fault tolerance"))
    if table.resilver and rows and all(r.get("loss_probability") is not None for r in rows):
        out.append(Objective("loss", "loss_probability", -1, "P(loss)"))
    if rows and all(r["cost_usd"] is not None for r in rows):
        out.append(Objective("cost", "cost_usd", -1, "total cost"))
    return out


def dominates(a: Mapping[str, Any], b: Mapping[str, Any], objectives: Sequence[Objective]) -> bool:
    """True when ``a`` is at least as good as ``b`` on every objective and better on one."""
    strictly = False
    for o in objectives:
        va, vb = o.value(a), o.value(b)
        if o.better(vb, va):
            return False
        if o.better(va, vb):
            strictly = True
    return strictly


def pareto_front(
    rows: Sequence[dict[str, Any]], objectives: Sequence[Objective]
) -> list[dict[str, Any]]:
    """The rows no other row dominates, in their original order."""
    return [r for r in rows if not any(dominates(q, r, objectives) for q in rows if q is not r)]


def _figure(o: Objective, row: Mapping[str, Any], table: SweepTable) -> str:
    """A measure's value in its display unit."""
    if o.name == "usable":
        return f"{fmt_tb(row['usable_tb'])} TB"
    if o.name == "cost":
        return f"${row['cost_usd']:,.0f}"
    if o.name == "fault_tolerance":
        return str(row["fault_tolerance"])
    if o.name == "loss":
        return f"P(loss) {row['loss_probability']:.2g}"
    name = o.name.split(":", 1)[1]
    unit = "MB/s" if table.streaming[name] else "IOPS"
    return f"{workload_cell(row, name, table.streaming[name])} {unit}"


def _superlatives(wins: Sequence[Objective], row: Mapping[str, Any], table: SweepTable) -> str:
    """``most usable space (219.2 TB) and fastest for vm-16k (474 IOPS), db-8k-sync (...)``."""
    parts = []
    fast = [o for o in wins if o.name.startswith("performance:")]
    for o in wins:
        if o.name == "usable":
            parts.append(f"most usable space ({_figure(o, row, table)})")
        elif o.name == "cost":
            parts.append(f"cheapest ({_figure(o, row, table)})")
        elif o.name == "loss":
            parts.append(f"least likely to lose data ({_figure(o, row, table)})")
    if fast:
        shown = ", ".join(f"{o.name.split(':', 1)[1]} ({_figure(o, row, table)})" for o in fast[:3])
        more = f" and {len(fast) - 3} more" if len(fast) > 3 else ""
        parts.insert(1 if parts and wins[0].name == "usable" else 0, f"fastest for {shown}{more}")
    return " and ".join(parts)


def _pct(fraction: float) -> str:
    """``38 %``; one decimal below 1 % so that a small difference does not read as none."""
    return f"{100 * fraction:.1f} %" if abs(fraction) < 0.01 else f"{100 * fraction:.0f} %"


def _times(ratio: float) -> str:
    """``4.7×``, ``470×``, ``8.9e6×``: two significant figures, no exponent below 1000."""
    if ratio < 1000:
        return f"{float(f'{ratio:.2g}'):g}×"
    mantissa, exponent = f"{ratio:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}×"


def _shortfall(o: Objective, mine: float, best: float, other: str) -> str:
    """``38 % fewer vm-16k IOPS than 12x mirror 2`` (mine is worse than best)."""
    if o.name == "loss":
        return f"{_times(mine / best)} as likely to lose data as {other}"
    if o.sense < 0:
        return f"costs {_pct(mine / best - 1)} more than {other}"
    pct = _pct(1 - mine / best)
    if o.name == "usable":
        return f"{pct} less usable space than {other}"
    name = o.name.split(":", 1)[1]
    if o.label.endswith("MB/s"):
        return f"{pct} less {name} bandwidth than {other}"
    return f"{pct} fewer {name} IOPS than {other}"


def _gain(o: Objective, mine: float, theirs: float) -> str:
    """``2.1× its vm-16k IOPS`` / ``45 % more usable space`` (mine is better)."""
    if o.name == "loss":
        return f"{_times(theirs / mine)} less likely to lose data"
    if o.sense < 0:
        return f"costs {_pct(1 - mine / theirs)} less"
    what = "usable space" if o.name == "usable" else o.label
    if o.name == "fault_tolerance":
        return f"survives {int(mine - theirs)} more disk failure(s)"
    ratio = mine / theirs
    if ratio >= 2:
        return f"{ratio:.1f}× its {what}"
    return f"{_pct(ratio - 1)} more {what}"


def _deficit(o: Objective, mine: float, best: float) -> float:
    """How far ``mine`` falls short of ``best``, as a fraction of the better value."""
    return 1 - mine / best if o.sense > 0 else 1 - best / mine


def _only_tolerance(
    row: Mapping[str, Any],
    candidates: Sequence[Mapping[str, Any]],
    measures: Sequence[Objective],
    ft: int,
    widest: int,
    label: Any,
) -> tuple[str, tuple[str, ...]]:
    """The reason of a pick whose scope has nothing to compare: it survives the most."""
    others = [c for c in candidates if c is not row and c["fault_tolerance"] >= ft]
    if ft <= widest:
        return (f"the same figures as {label(others[0])}" if others else "the only candidate"), ()
    reason = f"survives the most disk failures ({ft})"
    losses = []
    for o in measures:
        top = max(candidates, key=lambda c: o.sense * o.value(c))
        if o.better(o.value(top), o.value(row)) and o.value(row) > 0 and o.value(top) > 0:
            losses.append((_deficit(o, o.value(row), o.value(top)), o, top))
    if losses:
        _, o, top = max(losses, key=lambda x: x[0])
        reason += "; " + _shortfall(o, o.value(row), o.value(top), label(top))
    return reason, ("fault_tolerance",)


def explain(
    row: Mapping[str, Any],
    candidates: Sequence[Mapping[str, Any]],
    objectives: Sequence[Objective],
    table: SweepTable,
    label: Any,
) -> tuple[str, tuple[str, ...]]:
    """The reason a front member was picked, and the measures it is best at."""
    ft = row["fault_tolerance"]
    scope = [c for c in candidates if c["fault_tolerance"] >= ft]
    widest = min(c["fault_tolerance"] for c in candidates)
    where = "" if ft <= widest else f" among layouts surviving ≥ {ft} failures"
    if ft == max(c["fault_tolerance"] for c in candidates) and ft > widest:
        where = f" among layouts surviving {ft} failures (the most)"
    measures = [o for o in objectives if o.name != "fault_tolerance"]
    best: dict[str, Mapping[str, Any]] = {}
    for o in measures:
        top = scope[0]
        for c in scope[1:]:
            if o.better(o.value(c), o.value(top)):
                top = c
        best[o.name] = top
    spread = [o for o in measures if len({o.value(c) for c in scope}) > 1]
    if not spread:  # alone (or tied) at its fault tolerance: tolerance is why it is here
        return _only_tolerance(row, candidates, measures, ft, widest, label)
    wins = [o for o in spread if not o.better(o.value(best[o.name]), o.value(row))]
    losses = [
        (o, _deficit(o, o.value(row), o.value(best[o.name])))
        for o in spread
        if o not in wins and o.value(best[o.name]) > 0 and o.value(row) > 0
    ]
    if wins:
        reason = _superlatives(wins, row, table) + where
        if losses:
            o, _ = max(losses, key=lambda x: x[1])
            reason += "; " + _shortfall(o, o.value(row), o.value(best[o.name]), label(best[o.name]))
        return reason, tuple(o.name for o in wins)
    if not losses:  # no figure to compare (zeros): it is here because nothing dominates it
        return "no other layout is at least as good on every measure", ()
    # A middle ground: closest to the best on one measure, ahead of that layout on another.
    o, _ = min(losses, key=lambda x: x[1])
    ref = best[o.name]
    gains = [
        (g, (g.value(row) / g.value(ref)) if g.sense > 0 else g.value(ref) / g.value(row))
        for g in objectives
        if g.better(g.value(row), g.value(ref)) and g.value(ref) > 0 and g.value(row) > 0
    ]
    reason = f"a middle ground{where}: " + _shortfall(o, o.value(row), o.value(ref), label(ref))
    if gains:
        g, _ = max(gains, key=lambda x: x[1])
        reason += f", but {_gain(g, g.value(row), g.value(ref))}"
    return reason, ()


# ---------------------------------------------------------------- the API


def pick(
    table: SweepTable,
    *,
    min_usable: int | str | None = None,
    min_fault_tolerance: int | str | None = None,
    max_cost: float | str | None = None,
    considered: int | None = None,
) -> Recommendation:
    """The Pareto front of an evaluated ``table`` under the constraints (module docstring)."""
    constraints = {
        "min_usable_bytes": _min_usable(min_usable),
        "min_usable": None if min_usable is None else str(min_usable),
        "min_fault_tolerance": _min_ft(min_fault_tolerance),
        "max_cost_usd": _max_cost(max_cost),
    }
    rows = apply_constraints(table.rows, constraints)
    notes = list(table.notes)

    def missing(r: Mapping[str, Any], w: str) -> bool:
        return bool(r.get(f"{w}.error")) or r.get(f"{w}.bytes_per_s") is None

    compared = []
    for w in table.workloads:
        if all(missing(r, w) for r in rows):
            why = next((r[f"{w}.error"] for r in rows if r.get(f"{w}.error")), "no figures")
            notes.append(f"{w} is not compared: the engine gave no figure for any layout ({why})")
        else:
            compared.append(w)
    if not compared and table.workloads:
        raise ZsimError(
            f"the {table.engine} engine gave no figures for any workload ({notes[-1]}); "
            f"try another --engine"
        )
    excluded = []
    complete = []
    for r in rows:
        failed = [w for w in compared if missing(r, w)]
        if failed:
            why = r.get(f"{failed[0]}.error") or "no figure"
            excluded.append(
                {"layout": r["layout"], "disk": r["disk"], "disks": r["disks"],
                 "reason": f"no {failed[0]} figure: {why}"}
            )  # fmt: skip
        else:
            complete.append(r)
    objectives = objectives_for(table, complete, compared)
    if "cost" not in [o.name for o in objectives]:
        unpriced = sorted({r["disk"] for r in complete if r["cost_usd"] is None})
        notes.append(
            f"cost is not compared: no price for {', '.join(unpriced)} (give --price MODEL=USD)"
        )
    front = pareto_front(complete, objectives)
    multi_disk = len({r["disk"] for r in complete}) > 1
    multi_count = len({r["disks"] for r in complete}) > 1

    def label(r: Mapping[str, Any]) -> str:
        return _row_label(r, multi_disk, multi_count)

    front.sort(key=lambda r: (-r["fault_tolerance"], -r["usable_bytes"]))
    picks = []
    for r in front:
        reason, best_at = explain(r, complete, objectives, table, label)
        picks.append(Pick(dict(r), reason, best_at))
    return Recommendation(
        constraints=constraints,
        objectives=tuple(objectives),
        picks=tuple(picks),
        candidates=len(complete),
        considered=considered if considered is not None else len(table.rows),
        excluded=tuple(excluded),
        notes=tuple(notes),
        table=table,
    )


def recommend(
    disks: int | str | Sequence[int] | None = None,
    disk: str | Sequence[str] | None = None,
    workloads: str | Sequence[str] | None = None,
    *,
    min_usable: int | str | None = None,
    min_fault_tolerance: int | str | None = None,
    max_cost: float | str | None = None,
    table: SweepTable | None = None,
    workloads_file: str | Path | None = None,
    engine: str = DEFAULT_ENGINE,
    prices: Mapping[str, float] | Iterable[str] | None = None,
    ashift: int | str | None = None,
    recordsize: int | str | None = None,
    overrides: Sequence[str] = (),
    layouts: str | Sequence[str] | None = None,
    max_width: int = RAIDZ_MAX_WIDTH,
    max_spares: int = MAX_HOT_SPARES,
    results: str | Path | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    seed: int = 1,
    progress: bool | None = None,
    resilver: bool = False,
) -> Recommendation:
    """The layouts worth choosing for ``disks`` × ``disk`` under ``workloads``.

    ``min_usable`` (bytes or text: ``"100TB"`` decimal, ``"100TiB"`` binary),
    ``min_fault_tolerance`` (disk failures survived) and ``max_cost`` (USD, all disks)
    filter the layouts before any engine runs; the rest are the options of
    :func:`zsim.sweep.table.sweep`. ``resilver``: also simulate each feasible layout's
    resilver and loss probability, which becomes an objective (the analytic scan where it
    answers, else about 1–10 s per layout).
    Give ``table`` (an evaluated :class:`SweepTable`) instead to pick from a sweep already
    run. Returns a :class:`Recommendation`.
    """
    if table is not None:
        return pick(
            table,
            min_usable=min_usable,
            min_fault_tolerance=min_fault_tolerance,
            max_cost=max_cost,
        )
    plan: SweepPlan = plan_sweep(
        disks,
        disk,
        workloads,
        workloads_file=workloads_file,
        engine=engine,
        prices=prices,
        ashift=ashift,
        recordsize=recordsize,
        overrides=overrides,
        layouts=layouts,
        max_width=max_width,
        max_spares=max_spares,
        seed=seed,
    )
    constraints = {
        "min_usable_bytes": _min_usable(min_usable),
        "min_fault_tolerance": _min_ft(min_fault_tolerance),
        "max_cost_usd": _max_cost(max_cost),
    }
    feasible = apply_constraints(plan.rows, constraints)
    evaluated = run_plan(
        plan, feasible, scheduler=scheduler, results=results, workers=workers, progress=progress
    )
    if resilver:
        add_resilver_columns(plan, evaluated.rows, workers)
        evaluated.resilver = True
        evaluated.inputs = {**evaluated.inputs, "resilver": True}
    return pick(
        evaluated,
        min_usable=min_usable,
        min_fault_tolerance=min_fault_tolerance,
        max_cost=max_cost,
        considered=len(plan.rows),
    )


# ---------------------------------------------------------------- text


def render_text(rec: Recommendation) -> str:
    """The picks as a compact table, then a numbered reason for each."""
    table = rec.table
    assert table is not None
    models = ", ".join(m["name"] for m in table.inputs["disk_models"])
    counts = ", ".join(str(n) for n in table.inputs["disks"])
    measures = ", ".join(o.label for o in rec.objectives)
    lines = [
        f"{counts} disks of {models}; {_constraint_text(rec.constraints)}; engine {table.engine}",
        f"{rec.candidates} of {rec.considered} layouts meet the constraints; "
        f"{len(rec.picks)} on the Pareto front of: {measures}",
        "",
    ]
    multi_disk = len({p.row["disk"] for p in rec.picks}) > 1
    multi_count = len({p.row["disks"] for p in rec.picks}) > 1
    priced = any(p.row["cost_usd"] is not None for p in rec.picks)
    header = ["#", "layout"]
    if multi_disk:
        header.append("disk")
    if multi_count or multi_disk:
        header.append("disks")
    header += ["usable TB", "TiB", "FT"]
    if priced:
        header.append("cost")
    lossy = any(o.name == "loss" for o in rec.objectives)
    if lossy:
        header += ["resilver h", "P(loss)"]
    header += [f"{w} {'MB/s' if table.streaming[w] else 'IOPS'}" for w in table.workloads]
    body = []
    for i, p in enumerate(rec.picks, 1):
        r = p.row
        cells = [str(i), r["layout"]]
        if multi_disk:
            cells.append(r["disk"])
        if multi_count or multi_disk:
            cells.append(str(r["disks"]))
        cells += [
            fmt_tb(r["usable_tb"]),
            f"{r['usable_bytes'] / TiB:.2f}",
            str(r["fault_tolerance"]),
        ]
        if priced:
            cells.append("-" if r["cost_usd"] is None else f"${r['cost_usd']:,.0f}")
        if lossy:
            hours = r.get("resilver_seconds")
            cells += [
                "-" if hours is None else f"{hours / 3600:.1f}",
                f"{r['loss_probability']:.2g}",
            ]
        cells += [workload_cell(r, w, table.streaming[w]) for w in table.workloads]
        body.append(cells)
    widths = [max(len(x[i]) for x in [header, *body]) for i in range(len(header))]
    texts = 2 + multi_disk
    lines.extend(
        "  ".join(
            c.ljust(w) if 0 < i < texts else c.rjust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=True))
        ).rstrip()
        for line in [header, *body]
    )
    lines.append("")
    lines.extend(f"{i}. {p.row['layout']}: {p.reason}" for i, p in enumerate(rec.picks, 1))
    lines.append("")
    lines.append(
        "usable: zfs list USED+AVAIL (TB = 10^12 B, TiB = 2^40 B); FT: disks that may fail "
        "without data loss; MB/s = 10^6 B/s"
    )
    lines.extend(
        f"excluded: {e['layout']} ({e['disks']} × {e['disk']}): {e['reason']}"
        for e in rec.excluded[:5]
    )
    lines.extend(f"note: {n}" for n in rec.notes)
    return "\n".join(lines)
