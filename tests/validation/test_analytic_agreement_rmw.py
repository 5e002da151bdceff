"""The analytic engine against the discrete-event engine on partial-record writes: fio jobs
whose writes cover part of a record (``bs`` 4K-16K into records of 32K-128K) — random
read-modify-writes on laid-out files (``rw=randrw`` and ``rw=randwrite`` with ``overwrite=1``;
:mod:`zsim.analytic.mixed`) and sequential writes into new files (``rw=write``, one draw in
four; :mod:`zsim.analytic.writes`), on scenarios hypothesis draws from
``tests/agreement_rmw.py`` (HDD-heavy, dRAID one in six).

For every draw, as in ``test_analytic_agreement_randrw.py``: a draw the analytic engine
declines is counted, not compared; else the DES runs (seed 1, 5 % CI target, 120 simulated
seconds) and a run that misses its CI target is inconclusive; else both directions' calls/s
together must agree within 15 % and the ``limit`` must name the same kind of resource (or
the other engine has it ≥ 70 % busy). No p99 is compared: the mixed model gives none.

``ZSIM_AGREEMENT_RMW_DRAWS`` sets the number of draws (default 20; 24 until 2026-11-28, when
CI passed 25 minutes: the first 20 are the same draws),
``ZSIM_AGREEMENT_WORKERS`` the DES processes run at once (default 2). Last run: see
``docs/analytic.md``.
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.agreement_rmw import rmw_scenarios
from tests.agreement_run import (
    rate_limit_failures,
    rate_limit_line,
    run_records,
    timed_table_lines,
)
from tests.validation.test_analytic_agreement import RATE_TOL, _key, compare

pytestmark = pytest.mark.slow

DRAWS = int(os.environ.get("ZSIM_AGREEMENT_RMW_DRAWS", "20"))
WORKERS = max(1, int(os.environ.get("ZSIM_AGREEMENT_WORKERS", "2")))
#: at least this share of the draws must be compared (not declined nor inconclusive)
MIN_COMPARED_SHARE = 0.5
BATCH = 8  # draws per hypothesis example


@functools.cache
def _draws() -> tuple[dict[str, Any], ...]:
    """The first ``DRAWS`` distinct draws of the derandomized strategy (the same everywhere)."""
    found: dict[str, dict[str, Any]] = {}

    # hypothesis starts from its simplest draws and varies one field at a time: batches of
    # distinct draws spread the first few dozen over the space (as the main test does)
    @settings(
        max_examples=4 * DRAWS,
        phases=[Phase.generate],
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.lists(rmw_scenarios(), min_size=BATCH, max_size=BATCH, unique_by=_key))
    def collect(draws: list[dict[str, Any]]) -> None:
        for draw in draws:
            if len(found) < DRAWS:
                found.setdefault(_key(draw), draw)

    collect()
    return tuple(found.values())


@functools.cache
def _records() -> tuple[dict[str, Any], ...]:
    return run_records(compare, _draws(), WORKERS)


def _failures(r: dict[str, Any]) -> list[str]:
    return rate_limit_failures(r, RATE_TOL)


def _line(r: dict[str, Any]) -> str:
    return rate_limit_line(r, _failures)


def test_print_the_rmw_agreement_table():
    records = _records()
    print("\n" + "\n".join(timed_table_lines(records, _failures, _line)))
    assert len(records) == DRAWS, len(records)


def test_enough_rmw_draws_are_compared():
    records = _records()
    compared = [r for r in records if r["status"] == "compared"]
    assert len(compared) >= MIN_COMPARED_SHARE * DRAWS, Counter(r["status"] for r in records)


#: disagreements of these draws, known misses of the analytic engine to be fixed, not a
#: tolerance (a new disagreement, or one past its bound, fails). The first run (2026-11-27)
#: had a SATA SSD raidz2 5 of 16K read-modify-writes at −15 %, the mixed model slowing a
#: flash leaf's reads by the txg's write share as a disk head's; a flash leaf now keeps its
#: free units for the reads (zsim.analytic.flash_share): +3.9 %. One since (the thirteenth
#: session): 4K writes into 32K records of 16 × 64 GiB files on a 4x mirror 2 of HDDs with
#: 2 GiB of RAM, −15.9 %. Its txgs are small (41 MB), so each 4K call rewrites about one
#: 128K indirect block in two copies — 164 KB of metadata per call beside 32 KB of data, in
#: both engines alike. It agreed (−2.2 %: 1082 against 1106 calls/s) while the analytic
#: engine spread a mirror's indirect blocks over its children as if striped; every child
#: writes them whole (as the DES does, AnalyticVdev.leaf_fan), and what else in the
#: read-modify-write model was offsetting that is not found yet.
KNOWN_MISSES: dict[str, float] = {
    "seagate-exos-x 4x mirror 2 rs=32K randwrite bs=4K j=16 qd=4 64GiB ram=2GiB": 0.2,
}


def test_every_compared_rmw_draw_agrees_with_the_des():
    failing = [r for r in _records() if r["status"] == "compared" and _failures(r)]
    text = "\n".join(_line(r) for r in failing)
    for r in failing:
        assert r["label"] in KNOWN_MISSES, text
        assert r["limit_agrees"] and abs(r["rate_err"]) <= KNOWN_MISSES[r["label"]], text
