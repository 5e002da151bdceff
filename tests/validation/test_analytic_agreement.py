"""The analytic engine against the discrete-event engine on scenarios hypothesis draws.

``tests/agreement_space.py`` draws layouts (stripes, mirrors of 2/3, raidz1-3 at widths 3-12
in 1-3 vdevs, dRAID), disks (two HDDs, an NVMe and a SATA SSD), record and block sizes (4K …
1M), fio shapes (randread / randwrite / write, 1-16 jobs, iodepth 1-8, O_DIRECT), file and
memory sizes. For every draw:

* if the analytic engine declines (outside its validity range) the draw is counted, not
  compared — declining is the honest answer there;
* else the DES runs (seed 1, 5 % CI target, a cap of 120 simulated seconds, so every draw
  gives the same answer on every machine; every draw today reaches its CI target by 82 s); a
  DES run that does not reach its CI target by the cap is *inconclusive* and not compared (the
  reference is not precise enough to judge against);
* else the analytic bandwidth/IOPS must be within 15 % of the DES's, the analytic p99 latency
  within 30 % (where it gives one: not for buffered writes), and the `limit` the same *kind*
  of resource: a disk (or the txg throttle waiting on the disks), the bus (link, expander,
  HBA), the host (CPU, memory) or the clients. A borderline case — where the other engine
  also has the named resource ≥ 70 % busy — counts as agreeing.

``test_print_the_agreement_table`` prints the whole table and a summary (drawn, declined by
reason, inconclusive, compared, median and worst errors); ``test_every_compared_draw_agrees``
holds the analytic engine to the DES — every compared draw within the tolerances and naming
the same kind of limit, but for the known misses listed at :data:`KNOWN_MISSES`;
``test_enough_draws_are_compared`` keeps the validity range from growing so narrow that the
goal means little (last run, 2026-11-28: 58 of 72 compared, rate error median 0.8 %; no
known miss, docs/analytic.md). dRAID, randrw, read-modify-writes, sequential reads, sync
writes, degraded pools, cache and special vdevs have their own tests
(``test_analytic_agreement_<class>.py``).
"""

from __future__ import annotations

import functools
import json
import os
import statistics
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.agreement_space import scenarios

pytestmark = pytest.mark.slow

# 72 here (the first 72 of the 110 drawn before, to keep CI under 25 minutes: 23 streaming
# writes, 24 random reads, 25 random writes) and 196 more in the per-class tests (dRAID,
# randrw, read-modify-writes, sequential reads, dRAID sequential reads, flash sync writes,
# degraded pools, cache and special vdevs 20 each, HDD sync writes 16): 268 draws in all,
# each class at least 20
DRAWS = int(os.environ.get("ZSIM_AGREEMENT_DRAWS", "72"))
BATCH = 20  # draws evaluated at once, one DES run per core in parallel (at least two)
WORKERS = max(2, min(BATCH, os.cpu_count() or 2))
MIN_COMPARED = DRAWS * 2 // 5  # 28 of 72
DES_SIM = 120.0  # simulated seconds; the slowest draw reaches its CI at 82 s
DES_WALL = 600.0  # a safety net only: no draw needs more than ~15 s
DES_CI = 0.05
RATE_TOL = 0.15
P99_TOL = 0.30


def _kind(limit: str) -> str:
    if limit.startswith("disk:") or limit == "txg":
        return "pool"
    if limit.startswith("link:") or limit in ("hba", "expander"):
        return "bus"
    if limit in ("cpu", "memory"):
        return "host"
    return limit


def _busy(util: dict[str, float], kind: str) -> float:
    if kind == "client":
        return 0.0
    values = [v for k, v in util.items() if _kind(k) == kind]
    return max(values, default=0.0)


def compare(draw: dict[str, Any]) -> dict[str, Any]:
    """Run both engines on one draw (in a worker process); a flat record."""
    import zsim
    from zsim.analytic.validity import OutOfRange
    from zsim.scenario import scenario_from_dict

    sc = scenario_from_dict(draw, source="agreement draw")
    w = draw["workload"]
    label = (
        f"{draw['hardware']['disk'][:14]} {draw['pool']['layout']} "
        f"rs={draw['pool']['recordsize'] >> 10}K {w['rw']}{w.get('rwmixread', '')} "
        f"bs={w['bs'] >> 10}K "
        f"j={w['numjobs']} qd={w['iodepth']}{' direct' if w['direct'] else ''} "
        f"{w['size']} ram={draw['hardware']['ram']}"
    )
    if draw["pool"].get("failed"):
        label += f" failed={','.join(draw['pool']['failed'])}"
    if draw["hardware"].get("special_device"):
        label += (
            f" on {draw['hardware']['special_device'][:10]}"
            f" small={draw['pool']['special_small_blocks'] >> 10}K"
        )
    if draw["hardware"].get("cache_device"):
        label += f" on {draw['hardware']['cache_device'][:10]} fill={draw['pool']['cache_fill']}"
    try:
        a = zsim.simulate(sc, engine="analytic")
    except OutOfRange as err:
        return {"label": label, "status": "declined", "reason": str(err).split(": ", 1)[-1]}
    d = zsim.simulate(
        sc,
        engine="des",
        seed=1,
        target_ci=DES_CI,
        max_sim_seconds=DES_SIM,
        max_wall_seconds=DES_WALL,
    )
    # randrw: both directions' IOPS are fixed shares of the calls; compare reads (which
    # carry the latency distribution) and the total rate
    direction = "write" if w["rw"] in ("write", "randwrite") else "read"
    ad, dd = getattr(a, direction), getattr(d, direction)
    a_total, d_total = a.read.iops + a.write.iops, d.read.iops + d.write.iops
    record = {
        "label": label,
        "analytic_iops": a_total,
        "des_iops": d_total,
        "analytic_p99": ad.latency_p99,
        "des_p99": dd.latency_p99,
        "analytic_limit": a.limit,
        "des_limit": d.limit,
        "analytic_util": a.utilization,
        "des_util": d.utilization,
        "ci_rel": d.ci_rel,
        "analytic_ms": a.wall_seconds * 1e3,
    }
    if d.ci_rel is None or d.ci_rel > DES_CI or d_total <= 0:
        record["status"] = "inconclusive"
        return record
    record["status"] = "compared"
    record["rate_err"] = a_total / d_total - 1.0
    record["p99_err"] = (
        ad.latency_p99 / dd.latency_p99 - 1.0 if ad.latency_p99 and dd.latency_p99 else None
    )
    ak, dk = _kind(a.limit), _kind(d.limit)
    record["limit_agrees"] = (
        ak == dk or _busy(a.utilization, dk) >= 0.7 or _busy(d.utilization, ak) >= 0.7
    )
    return record


def _key(draw: dict[str, Any]) -> str:
    return json.dumps(draw, sort_keys=True)


def _failures(r: dict[str, Any]) -> list[str]:
    out = []
    if abs(r["rate_err"]) > RATE_TOL:
        out.append(f"rate {r['rate_err']:+.0%}")
    if r["p99_err"] is not None and abs(r["p99_err"]) > P99_TOL:
        out.append(f"p99 {r['p99_err']:+.0%}")
    if not r["limit_agrees"]:
        out.append(f"limit {r['analytic_limit']} vs {r['des_limit']}")
    return out


def _line(r: dict[str, Any]) -> str:
    if r["status"] == "declined":
        return f"  declined      {r['label']}: {r['reason']}"
    if r["status"] == "inconclusive":
        ci = "none" if r["ci_rel"] is None else f"{r['ci_rel']:.3f}"
        return f"  inconclusive  {r['label']} (DES CI {ci})"
    p99 = "   n/a" if r["p99_err"] is None else f"{r['p99_err']:+6.0%}"
    bad = _failures(r)
    return (
        f"  {'FAIL' if bad else 'ok':12s}  rate {r['rate_err']:+6.0%}  p99 {p99}  "
        f"{r['analytic_limit']:>12s} / {r['des_limit']:<12s} {r['label']}"
    )


@functools.cache
def _records() -> tuple[dict[str, Any], ...]:
    """Run the draws once for both tests below (about 4-6 minutes on 2 cores)."""
    records: list[dict[str, Any]] = []
    seen: set[str] = set()

    with ProcessPoolExecutor(max_workers=WORKERS) as pool:
        # hypothesis repeats and shrinks towards simple draws: keep each distinct scenario
        # once, until DRAWS distinct ones have run
        @settings(
            max_examples=4 * DRAWS // BATCH,
            phases=[Phase.generate],
            derandomize=True,  # the same 200 draws here and in CI
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(st.lists(scenarios(), min_size=BATCH, max_size=BATCH, unique_by=_key))
        def batch(draws: list[dict[str, Any]]) -> None:
            fresh = [d for d in draws if _key(d) not in seen][: DRAWS - len(records)]
            seen.update(_key(d) for d in fresh)
            records.extend(pool.map(compare, fresh))

        batch()
    return tuple(records)


def _summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    compared = [r for r in records if r["status"] == "compared"]
    errors = [abs(r["rate_err"]) for r in compared]
    p99s = [abs(r["p99_err"]) for r in compared if r["p99_err"] is not None]
    return {
        "compared": compared,
        "declined": Counter(r["reason"] for r in records if r["status"] == "declined"),
        "inconclusive": sum(r["status"] == "inconclusive" for r in records),
        "failing": [r for r in compared if _failures(r)],
        "rate_errors": errors,
        "p99_errors": p99s,
        "rate_within": sum(e <= RATE_TOL for e in errors),
    }


def test_print_the_agreement_table():
    records = _records()
    s = _summary(records)
    lines = [_line(r) for r in records]
    lines.append(
        f"drawn {len(records)}, declined {sum(s['declined'].values())}, inconclusive DES "
        f"{s['inconclusive']}, compared {len(s['compared'])}, rate within 15 %: "
        f"{s['rate_within']}, disagreeing on rate, p99 or limit: {len(s['failing'])}"
    )
    if s["rate_errors"]:
        lines.append(
            f"|rate error| median {statistics.median(s['rate_errors']):.1%}, worst "
            f"{max(s['rate_errors']):.1%}; |p99 error| median "
            f"{statistics.median(s['p99_errors']) if s['p99_errors'] else 0:.1%}, worst "
            f"{max(s['p99_errors'], default=0):.1%} over {len(s['p99_errors'])}"
        )
    for reason, n in s["declined"].most_common():
        lines.append(f"declined {n}: {reason}")
    print("\n" + "\n".join(lines))
    assert len(records) == DRAWS, len(records)


def test_enough_draws_are_compared():
    """At least 2 in 5 draws answered by both engines (the rest declined by the analytic
    engine's validity range, or inconclusive in the DES), and most within a few percent."""
    s = _summary(_records())
    compared = len(s["compared"])
    assert compared >= MIN_COMPARED, (compared, s["inconclusive"], dict(s["declined"]))
    assert statistics.median(s["rate_errors"]) <= 0.05


#: no known miss in this space's first 90 draws (2026-11-28), and so none in the 72 CI runs.
#: The last, an NVMe stripe of 2 sequential writers (+21 %), closed when the write model's
#: clients wait on the memory bus as the DES's do (zsim.analytic.writes.memory_stretch:
#: −2.2 %); before it, random 128K calls into 64K records on a raidz1 of 11 HDDs (+23 % →
#: +3 %) and the CPU-bound NVMe random writes on 4 cores (+46-49 % → +2 %): metadata blocks
#: compressed once whatever their copies, and txgs sized as the DES closes them when the CPU
#: binds (docs/analytic.md). A disagreement fails.
KNOWN_MISSES = 0
KNOWN_MISS_WORST = 0.5


def test_every_compared_draw_agrees_with_the_des():
    s = _summary(_records())
    text = "\n".join(_line(r) for r in s["failing"])
    assert len(s["failing"]) <= KNOWN_MISSES, text
    for r in s["failing"]:
        assert abs(r["rate_err"]) <= KNOWN_MISS_WORST, text
        assert r["p99_err"] is None or abs(r["p99_err"]) <= KNOWN_MISS_WORST, text
