"""Sync writes through the ZIL: the analytic engine against the discrete-event engine.

Hypothesis draws fio jobs that commit their writes
(:func:`tests.agreement_sync.sync_scenarios`: O_SYNC, ``sync=always`` or ``fsync=N``; random
or sequential; records of 8K-128K, one to four per call; 1-8 jobs, psync or libaio at iodepth
4; stripes, mirrors and raidz1/2 of SATA SSDs without a SLOG, or of HDDs or SSDs behind a
one-disk or mirrored SSD SLOG; OpenZFS 0.8, 2.2 and 2.3)
and runs both engines as ``test_analytic_agreement.py`` does (DES: seed 1, 5 % CI target, a
cap of simulated time; a run that misses its CI is inconclusive, not compared). A compared
draw agrees when the rates are within 15 %, the p99 latencies within 30 % (where the analytic
engine gives one: one call per job at a time) and the ``limit`` names the same kind of
resource (or the other engine has it ≥ 70 % busy).

``ZSIM_SYNC_DRAWS`` sets the number of draws (default 20: the first 20 of the 30 drawn
before, to keep CI under 25 minutes), ``ZSIM_SYNC_WORKERS`` the DES
processes run at once (default 2).
"""

from __future__ import annotations

import functools
import os
import statistics
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.agreement_sync import sync_scenarios
from tests.validation.test_analytic_agreement import (
    DES_CI,
    _busy,
    _failures,
    _key,
    _kind,
)

pytestmark = pytest.mark.slow

DRAWS = int(os.environ.get("ZSIM_SYNC_DRAWS", "20"))
BATCH = 6
WORKERS = int(os.environ.get("ZSIM_SYNC_WORKERS", "2"))
MIN_COMPARED = min(20, DRAWS * 2 // 3)
DES_SIM = 60.0  # simulated seconds
DES_WALL = 600.0  # a safety net only


def compare(draw: dict[str, Any]) -> dict[str, Any]:
    """Both engines on one draw (in a worker process): a flat record."""
    w, hw, pool = draw["workload"], draw["hardware"], draw["pool"]
    log = f" on {hw['log_device'][:10]}" if "log_device" in hw else ""
    mode = "sync=always" if pool.get("sync") else "O_SYNC" if w["sync"] else f"fsync={w['fsync']}"
    label = (
        f"{hw['disk'][:12]} {pool['layout']}{log} rs={pool['recordsize'] >> 10}K "
        f"{w['rw']} bs={w['bs'] >> 10}K j={w['numjobs']} qd={w['iodepth']} "
        f"{mode} {hw['zfs_version']} "
        f"cores={hw['cpu_cores']}"
    )
    return compare_engines(draw, label, "sync agreement draw")


def compare_engines(draw: dict[str, Any], label: str, source: str) -> dict[str, Any]:
    """Both engines on one sync-write draw: a flat record under ``label`` (the analytic
    engine declined, the DES inconclusive, or both compared)."""
    import zsim
    from zsim.analytic.validity import OutOfRange
    from zsim.scenario import scenario_from_dict

    sc = scenario_from_dict(draw, source=source)
    try:
        a = zsim.simulate(sc, engine="analytic")
    except OutOfRange as err:
        return {"label": label, "status": "declined", "reason": str(err).split(": ", 1)[-1]}
    d = zsim.simulate(
        sc, engine="des", seed=1, target_ci=DES_CI, max_sim_seconds=DES_SIM,
        max_wall_seconds=DES_WALL,
    )  # fmt: skip
    record = {
        "label": label,
        "analytic_iops": a.write.iops,
        "des_iops": d.write.iops,
        "analytic_p99": a.write.latency_p99,
        "des_p99": d.write.latency_p99,
        "analytic_limit": a.limit,
        "des_limit": d.limit,
        "ci_rel": d.ci_rel,
        "analytic_ms": a.wall_seconds * 1e3,
        "des_s": d.wall_seconds,
    }
    if d.ci_rel is None or d.ci_rel > DES_CI or d.write.iops <= 0:
        record["status"] = "inconclusive"
        return record
    record["status"] = "compared"
    record["rate_err"] = a.write.iops / d.write.iops - 1.0
    record["p99_err"] = (
        a.write.latency_p99 / d.write.latency_p99 - 1.0
        if a.write.latency_p99 and d.write.latency_p99
        else None
    )
    ak, dk = _kind(a.limit), _kind(d.limit)
    record["limit_agrees"] = (
        ak == dk or _busy(a.utilization, dk) >= 0.7 or _busy(d.utilization, ak) >= 0.7
    )
    return record


def _line(r: dict[str, Any]) -> str:
    if r["status"] == "declined":
        return f"  declined      {r['label']}: {r['reason']}"
    if r["status"] == "inconclusive":
        ci = "none" if r["ci_rel"] is None else f"{r['ci_rel']:.3f}"
        return f"  inconclusive  {r['label']} (DES CI {ci})"
    bad = _failures(r)
    p99 = "   n/a" if r["p99_err"] is None else f"{r['p99_err']:+6.1%}"
    return (
        f"  {'FAIL' if bad else 'ok':12s}  rate {r['rate_err']:+6.1%}  p99 {p99}  "
        f"{r['analytic_limit']:>8s} / {r['des_limit']:<8s} {r['label']} "
        f"(analytic {r['analytic_ms']:.1f} ms, DES {r['des_s']:.1f} s)"
    )


@functools.cache
def _records() -> tuple[dict[str, Any], ...]:
    records: list[dict[str, Any]] = []
    seen: set[str] = set()

    with ProcessPoolExecutor(max_workers=WORKERS) as pool:

        @settings(
            max_examples=4 * DRAWS // BATCH + 4,
            phases=[Phase.generate],
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(st.lists(sync_scenarios(), min_size=BATCH, max_size=BATCH, unique_by=_key))
        def batch(draws: list[dict[str, Any]]) -> None:
            fresh = [d for d in draws if _key(d) not in seen][: DRAWS - len(records)]
            seen.update(_key(d) for d in fresh)
            records.extend(pool.map(compare, fresh))

        batch()
    return tuple(records)


def _summary(records: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    compared = [r for r in records if r["status"] == "compared"]
    return {
        "compared": compared,
        "declined": Counter(r["reason"] for r in records if r["status"] == "declined"),
        "inconclusive": sum(r["status"] == "inconclusive" for r in records),
        "failing": [r for r in compared if _failures(r)],
        "rate_errors": [abs(r["rate_err"]) for r in compared],
        "p99_errors": [abs(r["p99_err"]) for r in compared if r["p99_err"] is not None],
    }


def test_print_the_sync_agreement_table():
    records = _records()
    print_table(records)
    assert len(records) == DRAWS, len(records)


def print_table(records: tuple[dict[str, Any], ...]) -> None:
    """Every draw's line, then the counts, the errors and the reasons declined."""
    s = _summary(records)
    lines = [_line(r) for r in records]
    lines.append(
        f"drawn {len(records)}, declined {sum(s['declined'].values())}, inconclusive DES "
        f"{s['inconclusive']}, compared {len(s['compared'])}, disagreeing: {len(s['failing'])}"
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


def test_enough_sync_draws_are_compared():
    s = _summary(_records())
    assert len(s["compared"]) >= MIN_COMPARED, (len(s["compared"]), dict(s["declined"]))
    assert statistics.median(s["rate_errors"]) <= 0.05


#: disagreements of these draws, known misses of the analytic engine to be fixed, not a
#: tolerance. Found 2026-11-27 when the DES began to measure write runs over whole txg
#: cycles (it had passed at +14.6 %, measured over a span that ended mid-cycle; 60 and 120
#: simulated seconds give +15.3 % and +17.6 %): the analytic batches 4.0 commits per lwb
#: where the DES batches 3.5 (2.3's lwb issue rules with 8 writers; the multi-lwb commit
#: batches of docs/analytic.md). A new disagreement, or this one past 25 %, fails.
KNOWN_MISSES = {
    "samsung-870- 1x mirror 2 rs=16K randwrite bs=16K j=8 qd=1 O_SYNC 2.3 cores=4": 0.25,
}


def test_every_compared_sync_draw_agrees_with_the_des():
    s = _summary(_records())
    text = "\n".join(_line(r) for r in s["failing"])
    for r in s["failing"]:
        assert r["label"] in KNOWN_MISSES, text
        assert abs(r["rate_err"]) <= KNOWN_MISSES[r["label"]], text
