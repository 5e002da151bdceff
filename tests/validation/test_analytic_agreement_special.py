"""The analytic engine against the discrete-event engine on pools with a special vdev that
takes the metadata (the txg's indirect blocks) while the data stays on the data vdevs, on
scenarios hypothesis draws from ``tests/agreement_special.py`` (hard-disk pools with an SSD
special vdev; random and sequential reads and buffered writes; 16K-1M records; 1-16 jobs).

For every draw, as in ``test_analytic_agreement.py``: a draw the analytic engine declines is
counted, not compared; else the DES runs (seed 1, 5 % CI target, 120 simulated seconds) and a
run that misses its CI target is inconclusive; else the calls/s must agree within 15 %, the
read p99s within 30 % and the ``limit`` must name the same kind of resource (or the other
engine has it ≥ 70 % busy).

``ZSIM_AGREEMENT_SPECIAL_DRAWS`` sets the number of draws (default 20),
``ZSIM_AGREEMENT_WORKERS`` the DES processes run at once (default 2).
"""

from __future__ import annotations

import functools
import os
import statistics
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.agreement_run import run_records, table_lines
from tests.agreement_special import special_scenarios
from tests.validation.test_analytic_agreement import _failures, _key, _line, compare

pytestmark = pytest.mark.slow

DRAWS = int(os.environ.get("ZSIM_AGREEMENT_SPECIAL_DRAWS", "20"))
WORKERS = max(1, int(os.environ.get("ZSIM_AGREEMENT_WORKERS", "2")))
#: at least this share of the draws must be compared (not declined nor inconclusive)
MIN_COMPARED_SHARE = 0.7
BATCH = 8  # draws per hypothesis example


@functools.cache
def _draws() -> tuple[dict[str, Any], ...]:
    """The first ``DRAWS`` distinct draws of the derandomized strategy (the same everywhere)."""
    found: dict[str, dict[str, Any]] = {}

    @settings(
        max_examples=4 * DRAWS,
        phases=[Phase.generate],
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.lists(special_scenarios(), min_size=BATCH, max_size=BATCH, unique_by=_key))
    def collect(draws: list[dict[str, Any]]) -> None:
        for draw in draws:
            if len(found) < DRAWS:
                found.setdefault(_key(draw), draw)

    collect()
    return tuple(found.values())


@functools.cache
def _records() -> tuple[dict[str, Any], ...]:
    return run_records(compare, _draws(), WORKERS)


def test_print_the_special_agreement_table():
    records = _records()
    print("\n" + "\n".join(table_lines(records, _failures, _line)))
    assert len(records) == DRAWS, len(records)


def test_enough_special_draws_are_compared():
    records = _records()
    compared = [r for r in records if r["status"] == "compared"]
    assert len(compared) >= MIN_COMPARED_SHARE * DRAWS, Counter(r["status"] for r in records)
    assert statistics.median(abs(r["rate_err"]) for r in compared) <= 0.05


#: disagreements of these draws, known misses of the analytic engine to be fixed, not a
#: tolerance; a new one, or one of these past 25 %, fails. None since 2026-11-28: the two
#: 16K-record sequential reads of hard disks (−19 %, −18 %) came from stream tables that
#: measured less than the jobs hold in flight (``stream_sample.IN_FLIGHT_SETS``); one now
#: agrees (+10 %), the other (8 jobs) is declined.
KNOWN_MISSES: tuple[str, ...] = ()


def test_every_compared_special_draw_agrees_with_the_des():
    failing = [r for r in _records() if r["status"] == "compared" and _failures(r)]
    text = "\n".join(_line(r) for r in failing)
    for r in failing:
        assert r["label"] in KNOWN_MISSES, text
        assert abs(r["rate_err"]) <= 0.25, text
