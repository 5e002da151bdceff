"""The Resilver page's computations (``zsim/app/resilver_view.py``), without Streamlit widgets.

The cases are run through the app's ``st.cache_data`` wrapper (``widgets.cached_resilver``), so the
AppTest in ``tests/e2e/test_app_resilver_page.py`` reuses these runs in the same process (the
run under load takes ~40 s).
"""

from __future__ import annotations

import itertools
import json
import math

import pytest

pytest.importorskip("streamlit", reason="the app's cache; pip install 'zsim[app]'")

import zsim
from zsim.app import resilver_view as rv
from zsim.app import ui
from zsim.app.design import Design
from zsim.app.pages import widgets
from zsim.errors import ZsimError


def cached(toml: str) -> object:
    return widgets.cached_resilver(toml)


@pytest.fixture(scope="module")
def default_outcome() -> rv.Outcome:
    """8 × IronWolf 12TB raidz2 8: idle, under the first workload, and the dRAID cases."""
    return rv.compare(Design(), runner=cached, under_load=True)


def test_base_scenario_is_the_designs_resilver_scenario() -> None:
    design = Design()
    plan = rv.plan_cases(design)
    assert plan.cases[0].toml == design.resilver_scenario().to_toml()
    assert plan.disk == "sda"
    assert plan.disks == tuple(f"sd{c}" for c in "abcdefgh")


def test_default_design_cases() -> None:
    plan = rv.plan_cases(Design(), under_load=True)
    assert [c.key for c in plan.cases] == ["design", "under_load", "draid", "draid_heal"]
    assert plan.draid_layout == "draid2:5d:1s:8c"
    assert (plan.draid_parity, plan.draid_data, plan.draid_children) == (2, 5, 8)
    assert "5 is the most" in plan.draid_why
    loaded = plan.case("under_load")
    assert loaded is not None and loaded.loaded
    assert loaded.scenario().resilver.under_load is True
    heal = plan.case("draid_heal")
    assert heal is not None and heal.reference
    assert heal.scenario().resilver.spare == "new"
    assert plan.case("draid").scenario().resilver.spare == "distributed"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("parity", "data", "children", "expected"),
    [
        (2, 6, 9, "draid2:6d:1s:9c"),  # raidz2 8 plus one disk: the groups fit whole
        (2, 6, 8, "draid2:5d:1s:8c"),  # raidz2 8 on its own 8 disks: one data disk fewer
        (1, 1, 8, "draid1:1d:1s:8c"),  # mirrors
        (3, 8, 24, "draid3:8d:1s:24c"),
        (1, 1, 2, None),  # a mirror of 2 disks: no room for a group and a spare
    ],
)
def test_draid_layout_rule(parity: int, data: int, children: int, expected: str | None) -> None:
    layout, d = rv.draid_layout(parity, data, children)
    assert layout == expected
    if layout is not None:
        assert d + parity + 1 <= children


@pytest.mark.parametrize(
    ("layout", "disks", "shape"),
    [
        ("raidz2 8", 8, ("raidz2", 2, 6)),
        ("2x raidz1 5", 10, ("raidz1", 1, 4)),
        ("4x mirror 2", 8, ("mirror", 1, 1)),
        ("md-raid6 8", 8, ("md-raid6", 2, 6)),
        ("stripe 4", 4, None),
    ],
)
def test_redundancy_shape(layout: str, disks: int, shape: tuple[str, int, int] | None) -> None:
    assert rv.redundancy_shape(Design(layout=layout, disks=disks), "sda") == shape


def test_hot_spare_design_compares_the_draid_of_all_its_disks() -> None:
    plan = rv.plan_cases(Design(layout="raidz2 8 spare 1", disks=9))
    assert plan.draid_layout == "draid2:6d:1s:9c"


def test_no_load_time_is_the_librarys(default_outcome: rv.Outcome) -> None:
    design = Design()
    # the app answers as `zsim resilver --engine auto`: this pool is the analytic scan's
    direct = zsim.resilver(design.resilver_scenario(), engine="analytic")
    row = default_outcome.row("design")
    assert row is not None
    assert row["seconds"] == pytest.approx(direct.seconds, rel=1e-12)
    assert row["bytes_per_s"] == pytest.approx(direct.bytes_per_s, rel=1e-12)
    assert row["limit"] == direct.limit
    assert row["loss_probability"] == pytest.approx(direct.durability["loss_probability"])
    assert row["hours"] == pytest.approx(direct.seconds / 3600)


def test_under_load_is_slower_both_ways(default_outcome: rv.Outcome) -> None:
    idle, loaded = default_outcome.row("design"), default_outcome.row("under_load")
    assert idle is not None and loaded is not None
    assert loaded["seconds"] is not None
    assert loaded["seconds"] >= idle["seconds"]
    assert loaded["bytes_per_s"] <= idle["bytes_per_s"]
    # the resilver slows the workload down too
    for direction in ("read", "write"):
        during = loaded[f"load_{direction}_bytes_per_s_during"]
        alone = loaded[f"load_{direction}_bytes_per_s_alone"]
        assert during is not None and alone is not None
        assert during <= alone
    # a longer window without redundancy: not a smaller loss probability
    assert loaded["loss_probability"] >= idle["loss_probability"]
    assert "slows down too" in rv.load_text(default_outcome)


def test_draid_on_the_same_8_disks_is_not_faster(default_outcome: rv.Outcome) -> None:
    """What the model says for 8 disks: dRAID2 groups of 5 + 2 span 7 of the 8 disks, so
    every disk reads about as much as a new disk would write — (8 − 1) / (5 + 2) = 1.0× at
    best; zsim's sequential rebuild also reads parity, and comes out ~10 % slower. Its loss
    probability is still lower: the distributed spare starts at once (no 24 h wait)."""
    main, draid = default_outcome.row("design"), default_outcome.row("draid")
    heal = default_outcome.row("draid_heal")
    assert main is not None and draid is not None and heal is not None
    assert draid["layout"] == "draid2:5d:1s:8c"
    assert draid["method"] == "sequential" and draid["spare"] == "distributed"
    assert rv.ideal_draid_speedup(2, 5, 8) == pytest.approx(1.0)
    assert 0.7 < main["seconds"] / draid["seconds"] <= 1.0
    assert draid["scrub_after_seconds"] > 0
    assert draid["wait_seconds"] == 0 and main["wait_seconds"] == 24 * 3600
    assert draid["loss_probability"] < main["loss_probability"]
    assert heal["loss_probability"] is None  # redundancy is already back while it runs
    assert heal["seconds"] > 0
    assert "No gain with so few disks" in rv.speedup_text(default_outcome)


def test_draid_with_more_disks_than_its_groups_is_faster(default_outcome: rv.Outcome) -> None:
    """The same groups on 16 disks: every disk takes part, (16 − 1) / (6 + 2) = 1.9× at best."""
    plan = rv.plan_cases(Design(), draid_children=16)
    assert plan.draid_layout == "draid2:6d:1s:16c"
    case = plan.case("draid")
    assert case is not None
    res = cached(case.toml)
    main = default_outcome.row("design")
    assert main is not None
    speedup = main["seconds"] / res.seconds  # type: ignore[attr-defined]
    assert 1.0 < speedup <= rv.ideal_draid_speedup(2, 6, 16)


def test_progress_rows_go_from_0_to_100_percent(default_outcome: rv.Outcome) -> None:
    keys = [c.key for c in default_outcome.plan.cases]
    assert {r["key"] for r in default_outcome.progress} == set(keys)
    for key in keys:
        rows = [r for r in default_outcome.progress if r["key"] == key]
        assert len(rows) >= 5
        assert rows[0]["seconds"] == 0 and rows[0]["percent"] == 0
        assert rows[-1]["percent"] == pytest.approx(100.0)
        summary = default_outcome.row(key)
        assert summary is not None
        assert rows[-1]["seconds"] == pytest.approx(summary["seconds"])
        for a, b in itertools.pairwise(rows):
            assert b["seconds"] > a["seconds"]
            assert b["bytes"] > a["bytes"]
            assert b["hours"] == pytest.approx(b["seconds"] / 3600)
            assert b["fraction"] == pytest.approx(b["percent"] / 100)


def test_rows_are_json_without_nan(default_outcome: rv.Outcome) -> None:
    text = ui.to_json(default_outcome.document())
    doc = json.loads(text)
    assert len(doc["summary"]) == 4
    assert ui.to_csv(default_outcome.progress).startswith("key,case,seconds,hours,bytes")
    table = rv.table_rows(default_outcome.summary)
    assert table[0]["time (h)"] == round(default_outcome.summary[0]["hours"], 2)
    assert all(math.isfinite(r["hours"]) for r in default_outcome.summary)


def test_stripe_has_no_redundancy() -> None:
    out = rv.compare(Design(layout="stripe 8"), runner=cached, under_load=True)
    assert out.lost
    assert [c.key for c in out.plan.cases] == ["design"]
    assert out.progress == []
    assert out.message.startswith("No redundancy")
    assert "nothing can be resilvered" in out.message
    row = out.row("design")
    assert row is not None and row["seconds"] is None
    assert 0 < row["loss_probability"] < 1


def test_mirror_design_adds_the_sequential_rebuild() -> None:
    plan = rv.plan_cases(Design(layout="4x mirror 2"))
    assert [c.key for c in plan.cases] == ["design", "sequential", "draid", "draid_heal"]
    assert plan.draid_layout == "draid1:1d:1s:8c"
    assert plan.case("sequential").scenario().resilver.method == "sequential"  # type: ignore[union-attr]


def test_draid_design_compares_a_new_disk() -> None:
    plan = rv.plan_cases(Design(layout="draid2:5d:1s:8c"))
    assert [c.key for c in plan.cases] == ["design", "new_disk"]
    assert plan.cases[0].label.endswith("distributed spare, sequential rebuild")


def test_chosen_disk_and_written_reach_every_case() -> None:
    plan = rv.plan_cases(Design(), disk="sdc", written="random")
    for case in plan.cases:
        sc = case.scenario()
        assert sc.resilver.disk == "sdc"
        assert sc.resilver.written == "random"


def test_bad_inputs_name_the_fix() -> None:
    with pytest.raises(ZsimError, match="not a data disk"):
        rv.plan_cases(Design(), disk="sdz")
    with pytest.raises(ZsimError, match="written"):
        rv.plan_cases(Design(), written="backwards")
    with pytest.raises(ZsimError, match="not one of the design's"):
        rv.plan_cases(Design(), under_load=True, workload="4k-randread")
