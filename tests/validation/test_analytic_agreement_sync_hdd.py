"""Sync writes to HDD data vdevs without a SLOG: the analytic engine (its log tables,
:mod:`zsim.analytic.sync_hdd`) against the discrete-event engine.

Hypothesis draws fio jobs that commit every call
(:func:`tests.agreement_sync_hdd.hdd_sync_scenarios`: O_SYNC or ``sync=always``; random or
sequential; whole records of 4K-16K, one or two per call; 1-16 jobs; stripes, mirrors,
raidz1-3 (one to three vdevs) and dRAID1-3 of five HDD models; OpenZFS 0.8-2.4) and runs
both engines as ``test_analytic_agreement.py`` does (DES: seed 1, 5 % CI target, a cap of
simulated time; a run that misses its CI is inconclusive, not compared). A compared draw
agrees when the rates are within 15 %, the p99 latencies within 30 % (where the analytic
engine gives one: one call per job at a time, the txg's write-back bursts under 1 % of the
time) and the ``limit`` names the same kind of resource (or the other engine has it ≥ 70 %
busy).

``ZSIM_SYNC_HDD_DRAWS`` sets the number of draws (default 16, to keep CI under 25
minutes; 24 and 30 were run when the model was built), ``ZSIM_SYNC_WORKERS`` the DES
processes run at once (default 2).
"""

from __future__ import annotations

import functools
import os
import statistics
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.agreement_sync_hdd import hdd_sync_scenarios
from tests.validation.test_analytic_agreement import _key
from tests.validation.test_analytic_agreement_sync import (
    _line,
    _summary,
    compare_engines,
    print_table,
)

pytestmark = pytest.mark.slow

DRAWS = int(os.environ.get("ZSIM_SYNC_HDD_DRAWS", "16"))
BATCH = 6
WORKERS = int(os.environ.get("ZSIM_SYNC_WORKERS", "2"))
MIN_COMPARED = min(20, DRAWS * 2 // 3)


def compare(draw: dict[str, Any]) -> dict[str, Any]:
    """Both engines on one draw (in a worker process), as the sync agreement test runs them
    (its DES settings): a flat record."""
    w, hw, pool = draw["workload"], draw["hardware"], draw["pool"]
    mode = "sync=always" if pool.get("sync") else "O_SYNC"
    label = (
        f"{hw['disk']} {pool['layout']} rs={pool['recordsize'] >> 10}K "
        f"{w['rw']} bs={w['bs'] >> 10}K j={w['numjobs']} qd={w['iodepth']} "
        f"{mode} {w['size']} ram={hw['ram']} {hw['zfs_version']} cores={hw['cpu_cores']}"
    )
    return compare_engines(draw, label, "HDD sync agreement draw")


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
        @given(st.lists(hdd_sync_scenarios(), min_size=BATCH, max_size=BATCH, unique_by=_key))
        def batch(draws: list[dict[str, Any]]) -> None:
            fresh = [d for d in draws if _key(d) not in seen][: DRAWS - len(records)]
            seen.update(_key(d) for d in fresh)
            records.extend(pool.map(compare, fresh))

        batch()
    return tuple(records)


def test_print_the_hdd_sync_agreement_table():
    records = _records()
    print_table(records)
    assert len(records) == DRAWS, len(records)


def test_enough_hdd_sync_draws_are_compared():
    s = _summary(_records())
    assert len(s["compared"]) >= MIN_COMPARED, (len(s["compared"]), dict(s["declined"]))
    assert statistics.median(s["rate_errors"]) <= 0.05


#: disagreements of these draws, known misses of the analytic engine to be fixed, not a
#: tolerance. A new disagreement fails. (Before the log tables started the log where the
#: DES does, after the working files beside the txg's write-back, three draws missed.)
KNOWN_MISSES: dict[str, float] = {}


def test_every_compared_hdd_sync_draw_agrees_with_the_des():
    s = _summary(_records())
    text = "\n".join(_line(r) for r in s["failing"])
    for r in s["failing"]:
        assert r["label"] in KNOWN_MISSES, text
        assert abs(r["rate_err"]) <= KNOWN_MISSES[r["label"]], text
