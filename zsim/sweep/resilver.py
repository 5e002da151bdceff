"""The sweep's resilver and durability columns (``zsim sweep --resilver``).

For each row (layout, disk model, disk count) one resilver is simulated with
:func:`zsim.resilver` on the row's base scenario (the first workload's: its record size and
``--set`` overrides, so ``--set pool.fill=0.8`` or ``--set durability.afr=0.02`` apply), and
its loss probability computed. The resilver comes from the analytic scan where it answers
(milliseconds; checked against the discrete-event scan within 15 % on the resilver
validation cases), else from the discrete-event engine (about 1–10 s of wall time a row);
the loss probability's Monte Carlo trials cost the rest. It is opt-in; rows run in local
worker processes.

Columns (:data:`RESILVER_COLUMNS`): ``resilver_seconds`` (until redundancy is back; empty for
a layout without redundancy), ``resilver_limit``, ``loss_probability`` (the pool within
``durability.mission``, default 5 years), ``ure_probability`` (an unrecoverable read while a
group had no redundancy left), ``resilver_error`` (why a row has none).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from zsim.errors import ZsimError
from zsim.scenario import scenario_from_dict
from zsim.sweep.point import point_seeds

RESILVER_COLUMNS: tuple[str, ...] = (
    "resilver_seconds",
    "resilver_limit",
    "loss_probability",
    "ure_probability",
    "resilver_error",
)
RESILVER_UNITS: dict[str, str] = {
    "resilver_seconds": "seconds until redundancy is back after one disk fails (empty: none)",
    "resilver_limit": "what bounds the resilver rate (docs/resilver.md)",
    "loss_probability": "probability of losing the pool within durability.mission",
    "ure_probability": "probability of an unrecoverable read with no redundancy left",
    "resilver_error": "why the row has no resilver figures (empty: it has)",
}
#: Monte Carlo trials per row (the durability table's default is 20000; a sweep row's
#: confidence interval is in the single-resilver JSON when a figure matters)
SWEEP_TRIALS = 5000


def resilver_row(task: tuple[dict[str, Any], int]) -> dict[str, Any]:
    """One row's resilver figures from (scenario tables, seed); errors become a cell."""
    # imported here: it loads the discrete-event engine, which ``import zsim`` does not
    from zsim.resilver.run import simulate_resilver

    data, seed = task
    data = {**data, "durability": {"trials": SWEEP_TRIALS, **data.get("durability", {})}}
    try:
        r = simulate_resilver(
            scenario_from_dict(data, source="sweep row"), seed=seed, engine="auto"
        )
    except ZsimError as err:
        return dict.fromkeys(RESILVER_COLUMNS) | {"resilver_error": str(err)}
    d = r.durability or {}
    return {
        "resilver_seconds": r.seconds,
        "resilver_limit": r.limit,
        "loss_probability": d.get("loss_probability"),
        "ure_probability": d.get("ure_probability"),
        "resilver_error": None,
    }


def add_resilver_columns(
    plan: Any, rows: Sequence[dict[str, Any]], workers: int | None = None
) -> None:
    """Fill :data:`RESILVER_COLUMNS` into ``rows`` (in place). Seeds: one per row of the
    plan, spawned from the plan's seed after the workload points' (so adding the columns
    changes no other figure)."""
    position = {(r["layout"], r["disk"], r["disks"]): i for i, r in enumerate(plan.rows)}
    seeds = point_seeds(plan.seed + 1_000_003, len(plan.rows))
    first = plan.workloads[0].name
    tasks = []
    for row in rows:
        base = plan.scenarios[(row["disk"], first)]
        data = {**base, "pool": {**base["pool"], "layout": row["layout"]}}
        tasks.append((data, seeds[position[(row["layout"], row["disk"], row["disks"])]]))
    if workers == 1 or len(tasks) <= 1:
        results = [resilver_row(t) for t in tasks]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(resilver_row, tasks))
    for row, figures in zip(rows, results, strict=True):
        row.update(figures)
