"""The sweep: layouts × disk models × disk counts × workloads → one tidy table.

:func:`sweep` (also ``zsim.sweep(...)`` and ``zsim sweep``) works in three steps:

1. :func:`zsim.sweep.plan.plan_sweep` resolves the inputs — disk profiles and prices,
   workloads, the base scenario with ``--ashift``/``--recordsize``/``--set`` applied and
   validated once per (disk, workload) — lists the layouts
   (:func:`zsim.sweep.layouts.enumerate_layouts`, or the explicit list) and computes every
   (layout, disk, count) row's capacity with :func:`zsim.capacity` and its cost. No engine
   runs yet; :mod:`zsim.sweep.recommend` filters these rows by capacity, fault tolerance and
   cost before any engine runs.
2. :func:`run_plan` turns rows × workloads into :class:`~zsim.sweep.point.SweepPoint` s (one
   seed per point from :func:`~zsim.sweep.point.point_seeds`, fixed by the point's place in
   the full grid, so a sweep and a recommendation over the same inputs share seeds and a
   results file), runs them with :func:`zsim.sweep.execute.run_points` (local processes, or
   Dask with a scheduler address; resumable with a results file) and folds the figures
   into the rows.
3. :class:`SweepTable` holds the rows and writes them as CSV or JSON (atomically) or text.

Columns (one row per layout, disk model and disk count; SI base units unless the name says
otherwise; defined in :mod:`zsim.sweep.plan`) — see ``docs/sweep.md`` for the full list with
units:

* ``LAYOUT_COLUMNS``: ``layout``, ``disk``, ``disks``, ``vdevs``, ``spares``.
* ``CAPACITY_COLUMNS``: ``raw_bytes`` (all disks), ``usable_bytes`` (``zfs list``
  USED+AVAIL), ``usable_tb`` (10^12 B), ``usable_tib`` (2^40 B), ``efficiency``
  (usable ÷ raw of all disks, hot spares included).
* ``DURABILITY_COLUMNS``: ``fault_tolerance`` (disks that can fail, any of them, without
  data loss); with ``resilver=True`` (``--resilver``) also
  :data:`zsim.sweep.resilver.RESILVER_COLUMNS`: ``resilver_seconds``, ``resilver_limit``,
  ``loss_probability``, ``ure_probability``, ``resilver_error``.
* ``COST_COLUMNS``: ``price_usd`` (per disk), ``price_source`` (``"catalog"``,
  ``"command line"`` or None), ``cost_usd`` (all disks), ``usd_per_usable_tb``. None when
  no price is known — never guessed.
* per workload ``W``, ``WORKLOAD_METRICS`` as ``W.bytes_per_s``, ``W.iops`` (read +
  write), ``W.latency_mean_s``, ``W.latency_p99_s``, ``W.limit``, ``W.usd_per_iops``,
  ``W.ci_rel``, ``W.seed``, ``W.error``, ``W.accuracy`` (the answer's band, a dict; compact
  JSON in CSV), ``W.engine`` (which engine answered: with ``auto``, the DES where the
  analytic engine declines), ``W.declined`` (the analytic engine's validity range left the
  point out). The text table marks DES answers of an ``auto`` sweep with ``*`` and shows a
  declined point as ``DES only``, each with the reason in the footer.
* ``engine``.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zsim.errors import ZsimError
from zsim.files import atomic_write_text
from zsim.sweep.execute import run_points
from zsim.sweep.layouts import MAX_HOT_SPARES, RAIDZ_MAX_WIDTH
from zsim.sweep.plan import (
    DEFAULT_ENGINE,
    UNITS,
    WORKLOAD_METRICS,
    SweepPlan,
    columns_for,
    plan_sweep,
)
from zsim.sweep.point import SweepPoint, point_seeds
from zsim.sweep.resilver import RESILVER_UNITS, add_resilver_columns
from zsim.units import MB, format_binary_size, format_decimal_size
from zsim.version import __version__

# ---------------------------------------------------------------- running


def build_points(plan: SweepPlan, rows: Sequence[dict[str, Any]] | None = None) -> list[SweepPoint]:
    """One point per (row, workload), in row order; seeds fixed by the full grid.

    ``rows``: a subset of ``plan.rows`` (default all). A point's seed depends only on its
    row's and workload's places in the plan, not on the subset.
    """
    chosen = plan.rows if rows is None else rows
    position = {id(r): i for i, r in enumerate(plan.rows)}
    nwork = len(plan.workloads)
    seeds = point_seeds(plan.seed, len(plan.rows) * nwork)
    points: list[SweepPoint] = []
    for row in chosen:
        r = position[id(row)]
        for j, work in enumerate(plan.workloads):
            base = plan.scenarios[(row["disk"], work.name)]
            scenario = {**base, "pool": {**base["pool"], "layout": row["layout"]}}
            points.append(
                SweepPoint(
                    index=len(points),
                    scenario=scenario,
                    engine=plan.engine,
                    seed=seeds[r * nwork + j],
                    labels={
                        "layout": row["layout"],
                        "disk": row["disk"],
                        "disks": row["disks"],
                        "workload": work.name,
                    },
                )
            )
    return points


def _figures(result: Mapping[str, Any], cost: float | None) -> dict[str, Any]:
    """One point's result row → the table's per-workload figures."""
    if result.get("error"):
        return {
            "error": str(result["error"]),
            "engine": result.get("engine"),
            "declined": bool(result.get("declined")),
        }
    r_iops, w_iops = result.get("read_iops") or 0.0, result.get("write_iops") or 0.0
    iops = r_iops + w_iops
    mean = p99 = None
    directions = [(d, n) for d, n in (("read", r_iops), ("write", w_iops)) if n > 0]
    means = [result.get(f"{d}_latency_mean_s") or 0.0 for d, _ in directions]
    p99s = [result.get(f"{d}_latency_p99_s") or 0.0 for d, _ in directions]
    if directions and all(m > 0 for m in means):
        mean = sum(m * n for m, (_, n) in zip(means, directions, strict=True)) / iops
    if directions and all(p > 0 for p in p99s):
        p99 = max(p99s)
    bandwidth = (result.get("read_bytes_per_s") or 0.0) + (result.get("write_bytes_per_s") or 0.0)
    figures = {
        "bytes_per_s": bandwidth,
        "iops": iops,
        "latency_mean_s": mean,
        "latency_p99_s": p99,
        "limit": result.get("limit"),
        "usd_per_iops": cost / iops if cost is not None and iops > 0 else None,
        "ci_rel": result.get("ci_rel"),
        "error": None,
        "accuracy": result.get("accuracy"),
        "engine": result.get("engine"),
        "declined": False,
    }
    # A non-finite figure is no figure (and JSON cannot hold it).
    return {
        k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in figures.items()
    }


def run_plan(
    plan: SweepPlan,
    rows: Sequence[dict[str, Any]] | None = None,
    *,
    scheduler: str | None = None,
    results: str | Path | None = None,
    workers: int | None = None,
    progress: bool | None = None,
) -> SweepTable:
    """Evaluate ``rows`` (default: all of the plan's) × the plan's workloads; the table.

    ``scheduler``, ``results``, ``workers`` and ``progress`` go to
    :func:`zsim.sweep.execute.run_points` unchanged (``results`` as ``results_path``).
    Raises :class:`ZsimError` when every point failed for the same reason (an engine that
    cannot run these scenarios at all), with that reason.
    """
    chosen = list(plan.rows if rows is None else rows)
    points = build_points(plan, chosen)
    results_rows = run_points(
        points,
        scheduler=scheduler,
        results_path=None if results is None else str(results),
        workers=workers,
        progress=progress,
    )
    by_index = {int(r["index"]): r for r in results_rows}
    errors = {str(r.get("error")) for r in results_rows if r.get("error")}
    if points and len(errors) == 1 and all(r.get("error") for r in results_rows):
        hint = ""
        if all(r.get("declined") for r in results_rows):
            # (the engine's own "use --engine des" is one scenario's way; a sweep has auto)
            hint = " — zsim sweep --engine auto answers these points with bounded DES runs"
        raise ZsimError(f"every point of the sweep failed: {errors.pop()}{hint}")
    names = [w.name for w in plan.workloads]
    out_rows: list[dict[str, Any]] = []
    point_iter = iter(points)
    for row in chosen:
        new = dict(row)
        for name in names:
            point = next(point_iter)
            figures = _figures(by_index.get(point.index, {"error": "no result"}), row["cost_usd"])
            for metric in WORKLOAD_METRICS:
                new[f"{name}.{metric}"] = figures.get(metric)
            new[f"{name}.seed"] = point.seed
        new["engine"] = plan.engine
        out_rows.append(new)
    return SweepTable(
        inputs=plan.inputs,
        workloads=names,
        streaming={w.name: w.streaming for w in plan.workloads},
        rows=out_rows,
        notes=list(plan.notes),
    )


# ---------------------------------------------------------------- the table


@dataclass
class SweepTable:
    """The sweep's result: one row per (layout, disk model, disk count).

    ``rows`` are flat dicts with :attr:`columns` as keys (module docstring; units in
    :data:`UNITS`). ``inputs`` records what produced them; ``streaming[W]`` says whether
    workload ``W`` is judged by bandwidth (bs ≥ 128 KiB) or by IOPS in the text table and
    the recommender.
    """

    inputs: dict[str, Any]
    workloads: list[str]
    streaming: dict[str, bool]
    rows: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    resilver: bool = False

    @property
    def columns(self) -> list[str]:
        return columns_for(self.workloads, self.resilver)

    @property
    def engine(self) -> str:
        return str(self.inputs["engine"])

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: zsim version, the inputs, columns, units and rows."""
        return {
            "zsim_version": __version__,
            "inputs": self.inputs,
            "columns": self.columns,
            "units": {**UNITS, **(RESILVER_UNITS if self.resilver else {})},
            "notes": list(self.notes),
            "rows": [{c: r.get(c) for c in self.columns} for r in self.rows],
        }

    def to_csv(self) -> str:
        """CSV text: a header of :attr:`columns`, empty cells for None."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.columns)
        for row in self.rows:
            writer.writerow([_csv_cell(row.get(c)) for c in self.columns])
        return buf.getvalue()

    def write(self, path: str | Path) -> Path:
        """Write the table to ``path``: CSV for ``.csv``, JSON for ``.json``; atomically."""
        target = Path(path)
        text = table_text_for(target, self)
        atomic_write_text(target, text)
        return target

    def text(self) -> str:
        """A compact text table (the ``zsim sweep`` output)."""
        return render_text(self)


def _csv_cell(value: Any) -> Any:
    """None → an empty cell; a dict (``W.accuracy``) → compact JSON; anything else as is."""
    if value is None:
        return ""
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return value


def check_out_path(path: str | Path) -> Path:
    """``--out`` must end in .csv or .json, in a folder that exists."""
    target = Path(path)
    if target.suffix.lower() not in (".csv", ".json"):
        raise ZsimError(f"--out {str(path)!r}: give a file ending in .csv or .json")
    if not target.parent.is_dir():
        raise ZsimError(f"--out {str(path)!r}: the folder {str(target.parent)!r} does not exist")
    return target


def table_text_for(target: Path, table: SweepTable) -> str:
    check_out_path(target)
    if target.suffix.lower() == ".csv":
        return table.to_csv()
    return json.dumps(table.to_dict(), indent=2, allow_nan=False) + "\n"


def fmt_tb(tb: float) -> str:
    """Terabytes with one decimal (two below 10 TB)."""
    return f"{tb:.1f}" if tb >= 10 else f"{tb:.2f}"


def _fmt_count(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def _fmt_money(x: float | None) -> str:
    if x is None:
        return "-"
    return f"${x:,.0f}" if x >= 100 else f"${x:.2f}"


def workload_cell(
    row: Mapping[str, Any], name: str, streaming: bool, mark_des: bool = False
) -> str:
    """The one figure the text table shows for a workload: MB/s if streaming, else IOPS;
    ``DES only`` where the analytic engine declines, ``error`` for any other failure;
    ``mark_des``: a ``*`` after a figure the DES gave (an ``auto`` sweep)."""
    if row.get(f"{name}.error"):
        return "DES only" if row.get(f"{name}.declined") else "error"
    if streaming:
        bw = row.get(f"{name}.bytes_per_s")
        cell = "-" if bw is None else f"{bw / MB:,.0f}"
    else:
        cell = _fmt_count(row.get(f"{name}.iops"))
    return cell + "*" if mark_des and row.get(f"{name}.engine") == "des" else cell


def render_text(table: SweepTable) -> str:
    """Render the table for a terminal; units in the header and the footer."""
    rows = table.rows
    multi_disk = len({r["disk"] for r in rows}) > 1
    multi_count = len({r["disks"] for r in rows}) > 1
    priced = any(r["cost_usd"] is not None for r in rows)
    header = ["layout"]
    if multi_disk:
        header.append("disk")
    if multi_count or multi_disk:
        header.append("disks")
    header += ["usable TB", "TiB", "eff.", "FT"]
    if priced:
        header += ["cost", "$/TB"]
    for name in table.workloads:
        header.append(f"{name} {'MB/s' if table.streaming[name] else 'IOPS'}")
    body = []
    for r in rows:
        cells = [r["layout"]]
        if multi_disk:
            cells.append(r["disk"])
        if multi_count or multi_disk:
            cells.append(str(r["disks"]))
        cells += [
            fmt_tb(r["usable_tb"]),
            f"{r['usable_tib']:.2f}",
            f"{r['efficiency']:.1%}",
            str(r["fault_tolerance"]),
        ]
        if priced:
            cells += [_fmt_money(r["cost_usd"]), _fmt_money(r["usd_per_usable_tb"])]
        auto = table.engine == "auto"
        cells += [workload_cell(r, n, table.streaming[n], auto) for n in table.workloads]
        body.append(cells)
    widths = [max(len(x[i]) for x in [header, *body]) for i in range(len(header))]
    texts = 1 + multi_disk  # layout (and disk) read left-aligned, figures right-aligned
    lines = [_title(table), ""]
    lines.extend(
        "  ".join(
            c.ljust(w) if i < texts else c.rjust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=True))
        ).rstrip()
        for line in [header, *body]
    )
    lines.append("")
    lines.append(
        "usable: zfs list USED+AVAIL (TB = 10^12 B, TiB = 2^40 B); eff.: usable / raw of all "
        "disks; FT: disks that may fail without data loss; MB/s = 10^6 B/s; IOPS read + write"
    )
    if priced:
        sources = sorted({f"{r['disk']}: {r['price_source']}" for r in rows if r["price_source"]})
        lines.append("prices per disk from " + "; ".join(sources))
    lines.extend(_footer_reasons(table))
    lines.extend(f"note: {n}" for n in table.notes)
    return "\n".join(lines)


def _footer_reasons(table: SweepTable) -> list[str]:
    """Why cells hold no figure (``DES only``, ``error``) and which the DES answered (``*``),
    each reason once with the workload and how many rows it covers."""
    rows = table.rows
    failures: dict[tuple[str, str, bool], int] = {}
    by_des: dict[str, int] = {}
    for r in rows:
        for n in table.workloads:
            if r.get(f"{n}.error"):
                key = (n, str(r[f"{n}.error"]), bool(r.get(f"{n}.declined")))
                failures[key] = failures.get(key, 0) + 1
            elif table.engine == "auto" and r.get(f"{n}.engine") == "des":
                by_des[n] = by_des.get(n, 0) + 1
    lines = []
    for (n, message, declined), count in failures.items():
        if declined:
            why = message.split(": ", 1)[-1].removesuffix("; use --engine des")
            lines.append(
                f"DES only: {n} on {count} of {len(rows)} rows, the analytic engine declines: "
                f"{why}; --engine auto answers these with bounded DES runs"
            )
        else:
            lines.append(f"error: {n} on {count} of {len(rows)} rows: {message}")
    if by_des:
        which = ", ".join(f"{n} on {count} rows" for n, count in by_des.items())
        lines.append(
            f"*: from the discrete-event engine (a bounded run to a 5 % CI), where the "
            f"analytic engine declines: {which}"
        )
    return lines


def _title(table: SweepTable) -> str:
    models = table.inputs["disk_models"]
    disks = ", ".join(
        f"{m['name']} ({format_decimal_size(m['size_bytes'])}, "
        f"{format_binary_size(m['size_bytes'])})"
        for m in models
    )
    counts = ", ".join(str(n) for n in table.inputs["disks"])
    what = "layouts" if len(models) == 1 and len(table.inputs["disks"]) == 1 else "rows"
    return (
        f"{counts} disks of {disks}; engine {table.engine}, seed {table.inputs['seed']}; "
        f"{len(table.rows)} {what} × {len(table.workloads)} workloads"
    )


# ---------------------------------------------------------------- the API


def sweep(
    disks: int | str | Sequence[int] | None = None,
    disk: str | Sequence[str] | None = None,
    workloads: str | Sequence[str] | None = None,
    *,
    workloads_file: str | Path | None = None,
    engine: str = DEFAULT_ENGINE,
    prices: Mapping[str, float] | Iterable[str] | None = None,
    ashift: int | str | None = None,
    recordsize: int | str | None = None,
    overrides: Sequence[str] = (),
    layouts: str | Sequence[str] | None = None,
    max_width: int = RAIDZ_MAX_WIDTH,
    max_spares: int = MAX_HOT_SPARES,
    out: str | Path | None = None,
    results: str | Path | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    seed: int = 1,
    progress: bool | None = None,
    resilver: bool = False,
) -> SweepTable:
    """Every sensible layout of ``disks`` disks of each ``disk`` model × ``workloads``.

    Parameters (the ``zsim sweep`` options):

    disks : disk counts, e.g. ``24`` or ``[24, 36]`` or ``"24,36"``; optional with ``layouts``.
    disk : catalog names (or profile paths), e.g. ``"seagate-ironwolf-12tb"``.
    workloads : preset or file workload names (default: all presets, or all of the file).
    workloads_file : TOML file of ``[workload.NAME]`` tables (:mod:`zsim.sweep.workloads`).
    engine : ``"analytic"`` (default), ``"des"``, ``"baseline"`` or ``"auto"`` (analytic
        where valid, the DES for the rest).
    prices : USD per disk by model (``{"wd-red-plus-12tb": 250}`` or ``["MODEL=USD"]``);
        overrides the catalog's ``price_usd``. Without either, cost columns stay empty.
    ashift, recordsize : pool settings for every scenario (recordsize default: each
        workload's own, else 128 KiB).
    overrides : ``section.key=value`` scenario overrides (``--set``), e.g.
        ``["hardware.hba=lsi-9300-8i"]``.
    layouts : explicit layouts (a list, or one string separated by ``;``) instead of the
        enumeration; the disk count is each layout's.
    max_width, max_spares : enumeration limits (:func:`zsim.sweep.layouts.enumerate_layouts`).
    out : also write the table to this ``.csv`` or ``.json`` file (atomically).
    results : a JSONL results file; an interrupted sweep resumes from it.
    scheduler : a Dask scheduler address (``tcp://host:8786``); default local processes
        (or ``DASK_SCHEDULER_ADDRESS``, as the executor reads it).
    workers : local worker processes (default: the executor's choice).
    seed : base seed; each point's seed comes from it and the point's place in the grid.
    progress : progress bar on/off (default: on a terminal only).
    resilver : also simulate each row's resilver and loss probability
        (:mod:`zsim.sweep.resilver`; the analytic scan where it answers, else about 1–10 s
        per row, in local processes).

    Returns a :class:`SweepTable`.
    """
    if out is not None:
        check_out_path(out)
    plan = plan_sweep(
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
    table = run_plan(plan, scheduler=scheduler, results=results, workers=workers, progress=progress)
    if resilver:
        add_resilver_columns(plan, table.rows, workers)
        table.resilver = True
        table.inputs = {**table.inputs, "resilver": True}
    if out is not None:
        table.write(out)
    return table
