"""The analytic engine against the discrete-event engine on buffered random writes of small
whole records over large files: four hard-disk pools (raidz2, mirrors, raidz1, a stripe) with
16K records, 8 jobs over 8 × 8 GiB, 2 GiB of RAM (txgs of ~200 MB: the DES reaches its CI in
4-9 s a draw). Every txg rewrites the files' every indirect block, so
its metadata outlasts its data and the write throttle's txg size sets each record's share of
it (``WriteModel._throttled_txg_records``). The main test's space draws 64K-1M records for
writes; this one holds the case it leaves out.

Tolerances as in ``test_analytic_agreement.py`` (``compare``, ``_failures``): the calls/s
within 15 % and the same kind of ``limit``. Before the throttle's txg size (2026-11-28) the
analytic engine was −13.4 / −18.7 / −15.5 / −20.5 % on these four (a txg of 60 % of
``zfs_dirty_data_max`` against the DES's 0.85-0.90); after it +4.6 / +0.4 / +3.8 / −0.1 %.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import pytest

from tests.agreement_run import run_records, table_lines
from tests.validation.test_analytic_agreement import _failures, _line, compare

pytestmark = pytest.mark.slow

WORKERS = max(1, int(os.environ.get("ZSIM_AGREEMENT_WORKERS", "2")))
LAYOUTS = ("raidz2 8", "4x mirror 2", "raidz1 5", "stripe 3")


def _draw(layout: str) -> dict[str, Any]:
    return {
        "name": "small-record write draw",
        "hardware": {
            "disk": "seagate-ironwolf-12tb",
            "ram": "2GiB",
            "cpu_cores": 8,
            "zfs_version": "2.2",
        },
        "pool": {"layout": layout, "ashift": 12, "recordsize": 16384, "compression": "off"},
        "workload": {
            "tool": "fio",
            "rw": "randwrite",
            "bs": 16384,
            "numjobs": 8,
            "iodepth": 1,
            "direct": False,
            "size": "8GiB",
        },
    }


@functools.cache
def _records() -> tuple[dict[str, Any], ...]:
    return run_records(compare, tuple(_draw(layout) for layout in LAYOUTS), WORKERS)


def test_print_the_small_write_agreement_table():
    records = _records()
    print("\n" + "\n".join(table_lines(records, _failures, _line)))
    assert len(records) == len(LAYOUTS)


def test_every_small_write_draw_is_compared_and_agrees_with_the_des():
    records = _records()
    assert all(r["status"] == "compared" for r in records), [r["status"] for r in records]
    failing = [_line(r) for r in records if _failures(r)]
    assert not failing, "\n".join(failing)
