"""Sequential reads (fio ``rw=read``): the analytic engine against the discrete-event engine.

Hypothesis draws buffered sequential-read scenarios (:func:`seqread_scenarios`: stripes,
mirrors of 2/3, raidz1-3 at widths 3-12 in 1-3 vdevs, dRAID; two HDDs, an NVMe and a SATA SSD;
records of 32K-1M, blocks from a quarter record to four records; 1-8 jobs, iodepth 1/4; files
of 4-64 GiB against 8-64 GiB of RAM (files the ARC holds whole are declined); OpenZFS 0.8
(8 MiB zfetch distance), 2.2 and 2.3 (64 MiB)) and runs both engines as
``test_analytic_agreement.py`` does (DES: seed 1, 5 % CI target, a cap of simulated time; a
run that misses its CI is inconclusive). A compared draw agrees when the rates are within
15 % and the ``limit`` names the same kind of resource (or the other engine has it ≥ 70 %
busy, or it is the jobs' own CPU against the clients with their threads, in either engine,
within 5 points of the 85 % that tells them apart), and the p99 latencies within 30 % where
the analytic engine gives one (it gives none for sequential reads today: see
``SeqReadModel.solve``).

``ZSIM_SEQREAD_DRAWS`` sets the number of draws (default 20), ``ZSIM_SEQREAD_WORKERS`` the
DES processes run at once (default 2).
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

from tests.validation.test_analytic_agreement import (
    DES_CI,
    _busy,
    _failures,
    _key,
    _kind,
)

pytestmark = pytest.mark.slow

DRAWS = int(os.environ.get("ZSIM_SEQREAD_DRAWS", "20"))
BATCH = 8
WORKERS = int(os.environ.get("ZSIM_SEQREAD_WORKERS", "2"))
DES_SIM = 60.0  # simulated seconds (every draw so far reached its CI well before)
DES_WALL = 600.0  # a safety net only

DISKS = ["seagate-ironwolf-12tb", "seagate-exos-x20-20tb", "wd-ultrastar-sn840-3.2tb",
         "samsung-870-evo-500gb"]  # fmt: skip
RECORDS = [32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20]


@st.composite
def layouts(draw: Any) -> str:
    # dRAID drawn rarely: its records below ~80 KiB per data disk are declined (a stream's
    # group moves the busiest disk along the file), and its answered range has its own test
    # (test_analytic_agreement_draid_seqread.py)
    kinds = ["stripe", "stripe", "mirror", "mirror", "mirror", "raidz", "raidz", "raidz"]
    kind = draw(st.sampled_from([*kinds, "raidz", "draid"]))
    if kind == "stripe":
        return f"stripe {draw(st.integers(1, 8))}"
    if kind == "mirror":
        return f"{draw(st.integers(1, 4))}x mirror {draw(st.sampled_from([2, 3]))}"
    if kind == "raidz":
        parity = draw(st.integers(1, 3))
        width = draw(st.integers(parity + 2, 12))
        count = draw(st.integers(1, 3))
        return f"{count}x raidz{parity} {width}" if count > 1 else f"raidz{parity} {width}"
    parity = draw(st.integers(1, 2))
    data = draw(st.sampled_from([2, 4, 8]))
    children = draw(st.integers(data + parity, data + parity + 6))
    return f"draid{parity}:{data}d:{children}c:0s"


@st.composite
def seqread_scenarios(draw: Any) -> dict[str, Any]:
    disk = draw(st.sampled_from(DISKS))
    layout = draw(layouts())
    # flash streams 32K records at ~10⁵ records/s, which the DES needs minutes for: 128K up
    records = RECORDS if "ironwolf" in disk or "exos" in disk else RECORDS[2:]
    recordsize = draw(st.sampled_from(records))
    bs = recordsize * draw(st.sampled_from([1, 1, 2, 4])) // draw(st.sampled_from([1, 1, 4]))
    return {
        "name": "seqread agreement draw",
        "hardware": {
            "disk": disk,
            "ram": f"{draw(st.sampled_from([8, 16, 64]))}GiB",
            "cpu_cores": draw(st.sampled_from([4, 8, 16])),
            "zfs_version": draw(
                st.sampled_from(["2.2", "2.3"] if "draid" in layout else ["0.8", "2.2", "2.3"])
            ),
        },
        "pool": {
            "layout": layout,
            "ashift": 12,
            "recordsize": recordsize,
            "compression": draw(st.sampled_from(["off", "lz4"])),
        },
        "workload": {
            "tool": "fio",
            "rw": "read",
            "bs": bs,
            "numjobs": draw(st.sampled_from([1, 2, 4, 8])),
            "iodepth": draw(st.sampled_from([1, 4])),
            # mostly more than the ARC holds (files it holds whole are declined)
            "size": f"{draw(st.sampled_from([4, 16, 32, 64]))}GiB",
        },
    }


def compare(draw: dict[str, Any]) -> dict[str, Any]:
    """Both engines on one draw (in a worker process): a flat record."""
    import zsim
    from zsim.analytic.validity import OutOfRange
    from zsim.scenario import scenario_from_dict

    sc = scenario_from_dict(draw, source="seqread agreement draw")
    w, hw = draw["workload"], draw["hardware"]
    label = (
        f"{hw['disk'][:14]} {draw['pool']['layout']} rs={draw['pool']['recordsize'] >> 10}K "
        f"bs={w['bs'] >> 10}K j={w['numjobs']} qd={w['iodepth']} {w['size']} "
        f"ram={hw['ram']} {hw['zfs_version']} {draw['pool']['compression']}"
    )
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
        "analytic_iops": a.read.iops,
        "des_iops": d.read.iops,
        "analytic_p99": a.read.latency_p99,
        "des_p99": d.read.latency_p99,
        "analytic_limit": a.limit,
        "des_limit": d.limit,
        "ci_rel": d.ci_rel,
        "analytic_ms": a.wall_seconds * 1e3,
        "des_s": d.wall_seconds,
    }
    if d.ci_rel is None or d.ci_rel > DES_CI or d.read.iops <= 0:
        record["status"] = "inconclusive"
        return record
    record["status"] = "compared"
    record["rate_err"] = a.read.iops / d.read.iops - 1.0
    ap, dp = a.read.latency_p99, d.read.latency_p99
    record["p99_err"] = ap / dp - 1.0 if ap and dp else None
    ak, dk = _kind(a.limit), _kind(d.limit)
    # the jobs' own CPU ("cpu") against too few I/Os in flight ("client") is the DES's 85 %
    # rule on its threads' busy share, which it counts from the run's start (warm-up
    # included): with either engine's share within 5 points of the threshold (the DES's:
    # the same CPU per call at its own call rate) either name is the same answer
    shares = (a.details["client_busy"], a.details["client_busy"] * d.read.iops / a.read.iops)
    near = min(abs(share - 0.85) for share in shares) <= 0.05
    borderline = {ak, dk} == {"host", "client"} and near
    record["limit_agrees"] = (
        ak == dk or borderline or _busy(a.utilization, dk) >= 0.7 or _busy(d.utilization, ak) >= 0.7
    )
    return record


def _line(r: dict[str, Any]) -> str:
    if r["status"] == "declined":
        return f"  declined      {r['label']}: {r['reason']}"
    if r["status"] == "inconclusive":
        ci = "none" if r["ci_rel"] is None else f"{r['ci_rel']:.3f}"
        return f"  inconclusive  {r['label']} (DES CI {ci})"
    bad = _failures(r)
    p99 = "   n/a" if r["p99_err"] is None else f"{r['p99_err']:+6.0%}"
    return (
        f"  {'FAIL' if bad else 'ok':12s}  rate {r['rate_err']:+6.1%}  p99 {p99}  "
        f"{r['analytic_limit']:>12s} / {r['des_limit']:<12s} {r['label']} "
        f"(analytic {r['analytic_ms']:.0f} ms, DES {r['des_s']:.1f} s)"
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
        @given(st.lists(seqread_scenarios(), min_size=BATCH, max_size=BATCH, unique_by=_key))
        def batch(draws: list[dict[str, Any]]) -> None:
            fresh = [d for d in draws if _key(d) not in seen][: DRAWS - len(records)]
            seen.update(_key(d) for d in fresh)
            records.extend(pool.map(compare, fresh))

        batch()
    return tuple(records)


def test_print_the_seqread_agreement_table():
    records = _records()
    compared = [r for r in records if r["status"] == "compared"]
    errors = [abs(r["rate_err"]) for r in compared]
    lines = [_line(r) for r in records]
    lines.append(
        f"drawn {len(records)}, declined {sum(r['status'] == 'declined' for r in records)}, "
        f"inconclusive {sum(r['status'] == 'inconclusive' for r in records)}, compared "
        f"{len(compared)}, disagreeing {sum(bool(_failures(r)) for r in compared)}"
    )
    p99s = [abs(r["p99_err"]) for r in compared if r["p99_err"] is not None]
    if errors:
        lines.append(
            f"|rate error| median {statistics.median(errors):.1%}, worst {max(errors):.1%}; "
            f"|p99 error| median {statistics.median(p99s) if p99s else 0:.1%}, worst "
            f"{max(p99s, default=0):.1%} over {len(p99s)}"
        )
    declined = Counter(r["reason"] for r in records if r["status"] == "declined")
    for reason, n in declined.most_common():
        lines.append(f"declined {n}: {reason}")
    print("\n" + "\n".join(lines))
    assert len(records) == DRAWS, len(records)


def test_most_seqread_draws_are_compared():
    compared = [r for r in _records() if r["status"] == "compared"]
    assert len(compared) >= DRAWS * 2 // 3, len(compared)
    assert statistics.median(abs(r["rate_err"]) for r in compared) <= 0.05


def test_every_compared_seqread_draw_agrees_with_the_des():
    failing = [r for r in _records() if r["status"] == "compared" and _failures(r)]
    assert not failing, "\n".join(_line(r) for r in failing)
