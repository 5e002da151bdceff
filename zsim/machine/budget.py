"""The resource budget a discrete-event run must fit before it is built (issue 19).

A scenario can ask for more than any machine can simulate — a billion I/Os in flight, a
million jobs, an exabyte per call, thousands of vdevs — and the engine would spend minutes
and gigabytes building or running it before any wall-time cap is checked. :func:`check_budget`
estimates the run's state from the scenario alone and raises :class:`ZsimError` naming the
limit, the scenario's value and how to raise it, before anything is built.

The limits suit a 2-core machine with 24 GiB of memory and sit far above every example,
preset and validation scenario (``tests/unit/test_budget.py`` checks that they all pass).
Each can be raised (or lowered) with an environment variable:

================================  ==========  ==================================================
variable                          default     what it bounds
================================  ==========  ==================================================
``ZSIM_MAX_JOBS``                 4096        fio ``numjobs`` / dd ``streams``
``ZSIM_MAX_INFLIGHT``             65536       I/Os in flight: jobs × iodepth (1 for psync/sync)
``ZSIM_MAX_LEAVES``               2048        leaf devices of the layout
``ZSIM_MAX_VDEVS``                1024        top-level vdevs of a ZFS pool
``ZSIM_MAX_BS``                   1 GiB       the largest single I/O (``bs``)
``ZSIM_MAX_RECORDS_PER_CALL``     1048576     records one call touches × I/Os in flight
``ZSIM_MAX_RECORDS``              2^36        records of all files (jobs × size / recordsize)
================================  ==========  ==================================================

The run itself is bounded by :class:`zsim.machine.run_guard.RunGuard` (wall time inside the
event loop, memory growth ``ZSIM_MAX_MEMORY``, completions logged ``ZSIM_MAX_COMPLETIONS``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from zsim.errors import ZsimError
from zsim.layout.tree import ZfsLayout, ZpoolOnBlock
from zsim.scenario import Scenario
from zsim.units import GiB


@dataclass(frozen=True)
class Limit:
    """One bound: its environment variable, default and what it counts."""

    env: str
    default: int
    what: str

    def value(self) -> int:
        """The bound in force: ``$env`` if set (a whole number ≥ 1), else the default."""
        raw = os.environ.get(self.env)
        if raw is None or raw.strip() == "":
            return self.default
        try:
            value = int(raw.strip())
        except ValueError:
            raise ZsimError(f"{self.env}={raw!r} must be a whole number ≥ 1") from None
        if value < 1:
            raise ZsimError(f"{self.env}={raw!r} must be a whole number ≥ 1")
        return value


JOBS = Limit("ZSIM_MAX_JOBS", 4096, "jobs (fio numjobs, dd streams)")
INFLIGHT = Limit("ZSIM_MAX_INFLIGHT", 65536, "I/Os in flight (jobs × iodepth)")
LEAVES = Limit("ZSIM_MAX_LEAVES", 2048, "leaf devices")
VDEVS = Limit("ZSIM_MAX_VDEVS", 1024, "top-level vdevs")
BS = Limit("ZSIM_MAX_BS", GiB, "bytes in one I/O (bs)")
RECORDS_PER_CALL = Limit(
    "ZSIM_MAX_RECORDS_PER_CALL", 1 << 20, "records in flight (records per call × I/Os in flight)"
)
RECORDS = Limit("ZSIM_MAX_RECORDS", 1 << 36, "records in all files (jobs × records per file)")
LIMITS = (JOBS, INFLIGHT, LEAVES, VDEVS, BS, RECORDS_PER_CALL, RECORDS)


@dataclass(frozen=True)
class Demand:
    """What a scenario's run holds, estimated from the scenario alone."""

    jobs: int
    inflight: int
    leaves: int
    vdevs: int
    bs: int
    records_in_flight: int
    records: int

    def against(self) -> tuple[tuple[Limit, int], ...]:
        return (
            (JOBS, self.jobs),
            (INFLIGHT, self.inflight),
            (LEAVES, self.leaves),
            (VDEVS, self.vdevs),
            (BS, self.bs),
            (RECORDS_PER_CALL, self.records_in_flight),
            (RECORDS, self.records),
        )


def demand(sc: Scenario) -> Demand:
    """The run's size: clients, devices, the largest I/O and the records it keys state by."""
    w, rs = sc.workload, sc.pool.recordsize
    if w.tool == "dd":
        jobs, slots, file_bytes = w.streams, 1, w.bytes
    elif w.tool == "fio":
        jobs, file_bytes = w.numjobs, w.size
        slots = 1 if w.ioengine in ("psync", "sync") else w.iodepth
    else:  # trace replay: one request at a time on one disk
        jobs, slots, file_bytes = 1, 1, 0
    bs = w.bs or 0
    inflight = jobs * slots
    layout = sc.layout_tree()
    if isinstance(layout, ZfsLayout):
        leaves, vdevs = len(layout.devices), len(layout.vdevs)
    elif isinstance(layout, ZpoolOnBlock):
        leaves, vdevs = len(layout.block.devices), 1
    else:
        leaves = len(getattr(layout, "devices", ()))
        vdevs = 1
    per_call = -(-bs // rs) + 1 if bs else 0  # an unaligned call straddles one more record
    records = jobs * max(1, -(-file_bytes // rs)) if file_bytes else 0
    return Demand(jobs, inflight, leaves, vdevs, bs, per_call * inflight, records)


def check_budget(sc: Scenario) -> None:
    """Raise :class:`ZsimError` if the scenario's run would exceed a limit of the budget."""
    for limit, value in demand(sc).against():
        bound = limit.value()
        if value > bound:
            raise ZsimError(
                f"the scenario needs {value:,} {limit.what}, above the discrete-event "
                f"engine's limit of {bound:,}: make the scenario smaller, or raise the limit "
                f"with the environment variable {limit.env} (at the risk of a run that takes "
                f"very long or runs out of memory)"
            )
