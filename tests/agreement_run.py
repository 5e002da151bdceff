"""What the agreement tests of a scenario class share (``test_analytic_agreement_*.py``):
both engines on each draw (``test_analytic_agreement.compare``, in worker processes) and the
table they print. Each test keeps its own ``_draws()``: hypothesis derandomizes from the
drawing function's own source, so moving it here would draw other scenarios."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

Record = dict[str, Any]


def run_records(compare: Callable[[Any], Record], draws: tuple, workers: int) -> tuple[Record, ...]:
    """``compare`` on every draw, ``workers`` processes at once (1: in this process)."""
    if workers == 1:
        return tuple(map(compare, draws))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return tuple(pool.map(compare, draws))


def table_lines(
    records: tuple[Record, ...],
    failures: Callable[[Record], list[str]],
    line: Callable[[Record], str],
) -> list[str]:
    """One line per draw, then the counts, the rate errors and the decline reasons."""
    compared = [r for r in records if r["status"] == "compared"]
    declined = Counter(r["reason"] for r in records if r["status"] == "declined")
    lines = [line(r) for r in records]
    lines.append(
        f"drawn {len(records)}, declined {sum(declined.values())}, inconclusive "
        f"{sum(r['status'] == 'inconclusive' for r in records)}, compared {len(compared)}, "
        f"disagreeing: {sum(bool(failures(r)) for r in compared)}"
    )
    errors = [abs(r["rate_err"]) for r in compared]
    if errors:
        lines.append(
            f"|rate error| median {statistics.median(errors):.1%}, worst {max(errors):.1%}"
        )
    lines.extend(f"declined {n}: {reason}" for reason, n in declined.most_common())
    return lines
