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


# ---- jobs compared by rate and limit only (the mixed model gives no percentiles)
def rate_limit_failures(r: Record, rate_tol: float) -> list[str]:
    """What of a compared draw disagrees: its rate beyond ``rate_tol``, or its limit."""
    out = []
    if abs(r["rate_err"]) > rate_tol:
        out.append(f"rate {r['rate_err']:+.0%}")
    if not r["limit_agrees"]:
        out.append(f"limit {r['analytic_limit']} vs {r['des_limit']}")
    return out


def rate_limit_line(r: Record, failures: Callable[[Record], list[str]]) -> str:
    """One draw's line: declined, inconclusive, or its rate error, limits and analytic time."""
    if r["status"] == "declined":
        return f"  declined      {r['label']}: {r['reason']}"
    if r["status"] == "inconclusive":
        return f"  inconclusive  {r['label']} (DES CI {r['ci_rel']})"
    bad = failures(r)
    return (
        f"  {'FAIL' if bad else 'ok':12s}  rate {r['rate_err']:+6.1%}  "
        f"{r['analytic_limit']:>12s} / {r['des_limit']:<12s} {r['analytic_ms']:5.1f} ms  "
        f"{r['label']}"
    )


def timed_table_lines(
    records: tuple[Record, ...],
    failures: Callable[[Record], list[str]],
    line: Callable[[Record], str],
) -> list[str]:
    """:func:`table_lines` and the analytic engine's median and worst time."""
    lines = table_lines(records, failures, line)
    times = sorted(r["analytic_ms"] for r in records if r["status"] == "compared")
    if times:
        lines.append(f"analytic {statistics.median(times):.1f} ms median, {times[-1]:.1f} ms worst")
    return lines
