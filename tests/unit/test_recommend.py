"""The recommender: constraints, the Pareto front, and the reasons (zsim.sweep.recommend)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zsim
from zsim.sweep.recommend import (
    Recommendation,
    dominates,
    objectives_for,
    pareto_front,
    pick,
    recommend,
)
from zsim.sweep.table import SweepTable

W = "4k-randread"


def make_table(
    spec: list[tuple[str, float, int, float, float | None]],
    workloads: tuple[str, ...] = (W,),
) -> SweepTable:
    """Rows (layout, usable TB, fault tolerance, IOPS, cost USD) of one 12-disk model."""
    rows = []
    for layout, tb, ft, iops, cost in spec:
        usable = int(tb * 1e12)
        row = {
            "layout": layout,
            "disk": "disk-a",
            "disks": 12,
            "usable_bytes": usable,
            "usable_tb": usable / 1e12,
            "usable_tib": usable / 2**40,
            "fault_tolerance": ft,
            "price_usd": None if cost is None else cost / 12,
            "price_source": None if cost is None else "command line",
            "cost_usd": cost,
        }
        for w in workloads:
            row[f"{w}.iops"] = iops
            row[f"{w}.bytes_per_s"] = iops * 4096
            row[f"{w}.error"] = None
        rows.append(row)
    inputs = {
        "disk_models": [{"name": "disk-a", "size_bytes": 12 * 10**12}],
        "disks": [12],
        "engine": "baseline",
        "seed": 1,
    }
    return SweepTable(inputs, list(workloads), dict.fromkeys(workloads, False), rows)


POOL = [
    ("stripe 24", 140, 0, 2500, None),
    ("12x mirror 2", 72, 1, 2000, None),
    ("6x raidz2 4", 70, 2, 900, None),
    ("4x raidz2 6", 95, 2, 600, None),
    ("3x raidz2 8", 90, 2, 400, None),  # dominated by 4x raidz2 6
    ("2x raidz2 12", 110, 2, 300, None),
    ("2x raidz3 12", 100, 3, 300, None),
]


def test_front_under_constraints_with_reasons():
    rec = pick(make_table(POOL), min_fault_tolerance=2)
    layouts = [p.row["layout"] for p in rec.picks]
    assert layouts == ["2x raidz3 12", "2x raidz2 12", "4x raidz2 6", "6x raidz2 4"]
    assert rec.candidates == 5 and rec.considered == 7
    reasons = {p.row["layout"]: p.reason for p in rec.picks}
    assert reasons["2x raidz2 12"].startswith("most usable space (110.0 TB)")
    assert "67 % fewer 4k-randread IOPS than 6x raidz2 4" in reasons["2x raidz2 12"]
    assert reasons["6x raidz2 4"].startswith("fastest for 4k-randread (900 IOPS)")
    assert "36 % less usable space than 2x raidz2 12" in reasons["6x raidz2 4"]
    assert reasons["2x raidz3 12"] == (
        "survives the most disk failures (3); 67 % fewer 4k-randread IOPS than 6x raidz2 4"
    )
    assert reasons["4x raidz2 6"] == (
        "a middle ground: 14 % less usable space than 2x raidz2 12, but 2.0× its 4k-randread IOPS"
    )
    best = {p.row["layout"]: p.best_at for p in rec.picks}
    assert best["2x raidz2 12"] == ("usable",)
    assert best["6x raidz2 4"] == (f"performance:{W}",)
    assert best["4x raidz2 6"] == ()
    assert best["2x raidz3 12"] == ("fault_tolerance",)


def test_no_pick_is_dominated_and_every_other_candidate_is():
    table = make_table(POOL)
    rec = pick(table, min_fault_tolerance=1)
    objectives = list(rec.objectives)
    candidates = [r for r in table.rows if r["fault_tolerance"] >= 1]
    picked = [p.row for p in rec.picks]
    for p in picked:
        assert not any(dominates(c, p, objectives) for c in candidates)
    for c in candidates:
        if c["layout"] not in {p["layout"] for p in picked}:
            assert any(dominates(p, c, objectives) for p in picked)


rows_strategy = st.lists(
    st.tuples(
        st.integers(1, 200),  # usable TB
        st.integers(0, 3),  # fault tolerance
        st.integers(1, 5000),  # IOPS
        st.integers(1, 5000),  # MB/s-ish second workload
        st.one_of(st.none(), st.integers(1000, 20000)),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=150)
@given(rows_strategy)
def test_front_property(spec):
    table = make_table(
        [(f"L{i}", tb, ft, iops, cost) for i, (tb, ft, iops, _, cost) in enumerate(spec)]
    )
    for row, (_, _, _, mbs, _) in zip(table.rows, spec, strict=True):
        row[f"{W}.bytes_per_s"] = row[f"{W}.iops"] * 4096
        row["media.bytes_per_s"] = mbs * 1e6
        row["media.iops"] = mbs
        row["media.error"] = None
    table.workloads.append("media")
    table.streaming["media"] = True
    rec = pick(table)
    objectives = list(rec.objectives)
    assert ("cost" in [o.name for o in objectives]) == all(c is not None for *_, c in spec)
    picked = [p.row for p in rec.picks]
    assert picked and len(picked) <= len(table.rows)
    for p in rec.picks:
        assert not any(dominates(c, p.row, objectives) for c in table.rows)
        assert p.reason
        for name in p.best_at:
            words = {"usable": "usable space", "cost": "cheapest", "fault_tolerance": "survives"}
            assert words.get(name, "fastest") in p.reason
    names = {p["layout"] for p in picked}
    for c in table.rows:
        assert c["layout"] in names or any(dominates(p, c, objectives) for p in picked)


def test_cost_is_an_objective_when_every_row_has_a_price():
    spec = [
        ("2x raidz2 6", 95, 2, 600, 3000.0),
        ("2x raidz2 6 ", 95, 2, 600, 2400.0),  # the same pool, cheaper disks
        ("raidz2 12", 110, 2, 300, 3000.0),
    ]
    rec = pick(make_table(spec), max_cost=2500)
    assert [p.row["layout"] for p in rec.picks] == ["2x raidz2 6 "]
    assert "cost" in [o.name for o in rec.objectives]
    rec = pick(make_table(spec))
    assert "2x raidz2 6" not in [p.row["layout"] for p in rec.picks], "dominated on cost"
    cheap = next(p for p in rec.picks if p.row["layout"] == "2x raidz2 6 ")
    assert "cheapest ($2,400)" in cheap.reason and "cost" in cheap.best_at


def test_min_usable_respects_tb_and_tib():
    spec = [("a", 105, 2, 100, None), ("b", 115, 2, 50, None)]  # 105 TB = 95.5 TiB
    assert {p.row["layout"] for p in pick(make_table(spec), min_usable="100TB").picks} == {"a", "b"}
    assert {p.row["layout"] for p in pick(make_table(spec), min_usable="100TiB").picks} == {"b"}
    assert {p.row["layout"] for p in pick(make_table(spec), min_usable=110 * 10**12).picks} == {"b"}


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"min_fault_tolerance": 4}, "the most any survives is 3"),
        ({"min_usable": "500TB"}, "most usable layout is stripe 24"),
        (
            {"min_usable": "105TB", "min_fault_tolerance": 3},
            "that survives enough failures is 2x raidz3 12",
        ),
        ({"max_cost": 1000}, "give --price"),
        ({"min_usable": "lots"}, "cannot read"),
        ({"min_fault_tolerance": "two"}, "whole number"),
        ({"max_cost": "cheap"}, "not a number"),
        ({"max_cost": -1}, "more than 0"),
    ],
)
def test_constraints_that_cannot_be_met(kwargs, fragment):
    with pytest.raises(zsim.ZsimError, match=fragment):
        pick(make_table(POOL), **kwargs)


def test_too_expensive_names_the_cheapest():
    spec = [("a", 100, 2, 100, 5000.0), ("b", 100, 2, 100, 6000.0)]
    with pytest.raises(zsim.ZsimError, match=r"cheapest .* is a of 12 × disk-a at \$5,000"):
        pick(make_table(spec), max_cost=4000)


def test_workloads_without_figures():
    table = make_table(POOL[:4], workloads=(W, "vm-16k"))
    for row in table.rows:
        row["vm-16k.error"] = "outside the analytic engine's validity range"
        row["vm-16k.bytes_per_s"] = None
    table.rows[0][f"{W}.error"] = "boom"
    table.rows[0][f"{W}.bytes_per_s"] = None
    rec = pick(table)
    assert [o.name for o in rec.objectives] == ["usable", f"performance:{W}", "fault_tolerance"]
    assert any("vm-16k is not compared" in n for n in rec.notes)
    assert [e["layout"] for e in rec.excluded] == ["stripe 24"]
    assert "boom" in rec.excluded[0]["reason"]
    for row in table.rows:
        row[f"{W}.error"] = "no"
    with pytest.raises(zsim.ZsimError, match="no figures for any workload"):
        pick(table)


def test_front_helpers():
    table = make_table(POOL)
    objectives = objectives_for(table, table.rows)
    front = pareto_front(table.rows, objectives)
    assert "3x raidz2 8" not in [r["layout"] for r in front]
    assert "stripe 24" in [r["layout"] for r in front]


@pytest.fixture(scope="module")
def real() -> Recommendation:
    return recommend(
        24,
        "seagate-ironwolf-12tb",
        ["4k-randread", "media-1m-read"],
        min_usable="100TB",
        min_fault_tolerance=2,
        engine="baseline",
        workers=1,
    )


def test_recommend_end_to_end(real):
    assert real.considered == 30 and real.picks
    for p in real.picks:
        assert p.row["usable_bytes"] >= 100 * 10**12 and p.row["fault_tolerance"] >= 2
        assert p.row["4k-randread.iops"] > 0
    assert real.table is not None and len(real.table.rows) == real.candidates
    layouts = [p.row["layout"] for p in real.picks]
    assert "6x raidz2 4" in layouts  # the most IOPS with two failures survived
    doc = json.loads(json.dumps(real.to_dict(), allow_nan=False))
    assert {"constraints", "objectives", "picks", "candidates", "excluded", "notes"} <= set(doc)
    assert doc["constraints"]["min_usable_bytes"] == 100 * 10**12
    assert all("reason" in p and "layout" in p for p in doc["picks"])
    text = real.text()
    assert "Pareto front" in text and "usable TB" in text and "1. " in text
    assert zsim.recommend is recommend


def test_recommend_from_a_table_matches(real):
    table = zsim.sweep(
        24, "seagate-ironwolf-12tb", ["4k-randread", "media-1m-read"], engine="baseline", workers=1
    )
    again = recommend(table=table, min_usable="100TB", min_fault_tolerance=2)
    assert [p.row for p in again.picks] == [p.row for p in real.picks]
    assert [p.reason for p in again.picks] == [p.reason for p in real.picks]


def test_loss_probability_is_an_objective_when_the_resilver_was_simulated():
    """With the resilver columns (``--resilver``) the probability of data loss joins the
    front: a layout with the same space, speed and fault tolerance but a hot spare's shorter
    rebuild window is no longer dominated, and its reason says how much less likely it is
    to lose data."""
    spec = [
        ("raidz2 11 spare 1", 90, 2, 300, None),
        ("raidz2 12", 100, 2, 300, None),
        ("2x raidz2 6", 80, 2, 600, None),
    ]
    table = make_table(spec)
    without = pick(table)
    assert "loss" not in [o.name for o in without.objectives]
    assert "raidz2 11 spare 1" not in [p.row["layout"] for p in without.picks]
    for row, loss, hours in zip(table.rows, (2e-9, 5e-8, 3e-8), (10.0, 34.0, 33.0), strict=True):
        row["loss_probability"] = loss
        row["resilver_seconds"] = hours * 3600
    table.resilver = True
    rec = pick(table)
    assert "loss" in [o.name for o in rec.objectives]
    spare = next(p for p in rec.picks if p.row["layout"] == "raidz2 11 spare 1")
    assert "least likely to lose data (P(loss) 2e-09)" in spare.reason and "loss" in spare.best_at
    wide = next(p for p in rec.picks if p.row["layout"] == "raidz2 12")
    assert "25× as likely to lose data as raidz2 11 spare 1" in wide.reason
    assert "resilver h" in rec.text() and "P(loss)" in rec.text()
    # a row without the figure (a resilver that failed) leaves loss out of the objectives
    table.rows[1]["loss_probability"] = None
    assert "loss" not in [o.name for o in pick(table).objectives]


def test_recommend_with_resilver_end_to_end():
    rec = recommend(
        6,
        "seagate-ironwolf-12tb",
        ["4k-randread"],
        min_fault_tolerance=1,
        engine="baseline",
        workers=1,
        resilver=True,
        layouts=["raidz1 6", "raidz1 5 spare 1", "3x mirror 2"],
    )
    assert "loss" in [o.name for o in rec.objectives]
    for p in rec.picks:
        assert 0 < p.row["loss_probability"] < 1 and p.row["resilver_seconds"] > 0
    losses = {p.row["layout"]: p.row["loss_probability"] for p in rec.picks}
    # a hot spare starts the rebuild at once instead of after a day's wait for a new disk
    assert losses["raidz1 5 spare 1"] < losses["raidz1 6"]
