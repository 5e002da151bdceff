"""``zsim sweep --resilver``: the resilver and durability columns."""

from __future__ import annotations

import pytest

import zsim
from zsim.sweep.resilver import RESILVER_COLUMNS


@pytest.fixture(scope="module")
def table():
    return zsim.sweep(
        disk="seagate-ironwolf-12tb",
        workloads="media-1m-read",
        engine="baseline",
        layouts=["stripe 4", "2x mirror 2", "raidz1 4", "raidz2 4 spare 1"],
        resilver=True,
        workers=1,
    )


def test_columns_are_there_only_when_asked(table):
    assert all(c in table.columns for c in RESILVER_COLUMNS)
    plain = zsim.sweep(
        disk="seagate-ironwolf-12tb", workloads="media-1m-read", engine="baseline",
        layouts=["2x mirror 2"],
    )  # fmt: skip
    assert not any(c in plain.columns for c in RESILVER_COLUMNS)


def test_rows_carry_the_simulated_figures(table):
    rows = {r["layout"]: r for r in table.rows}
    assert rows["stripe 4"]["resilver_seconds"] is None
    assert rows["stripe 4"]["resilver_limit"] == "no-redundancy"
    for layout in ("2x mirror 2", "raidz1 4", "raidz2 4 spare 1"):
        assert rows[layout]["resilver_seconds"] > 3600, layout
        assert 0 < rows[layout]["loss_probability"] < rows["stripe 4"]["loss_probability"]
    # one parity loses data far more often than two (with a hot spare, no wait)
    assert rows["raidz1 4"]["loss_probability"] > 100 * rows["raidz2 4 spare 1"]["loss_probability"]


def test_the_same_sweep_gives_the_same_figures(table):
    again = zsim.sweep(
        disk="seagate-ironwolf-12tb", workloads="media-1m-read", engine="baseline",
        layouts=["stripe 4", "2x mirror 2", "raidz1 4", "raidz2 4 spare 1"], resilver=True,
        workers=2,
    )  # fmt: skip
    for a, b in zip(table.rows, again.rows, strict=True):
        assert a["resilver_seconds"] == b["resilver_seconds"]
        assert a["loss_probability"] == b["loss_probability"]


def test_csv_and_json_hold_the_columns(table, tmp_path):
    csv_text = table.to_csv()
    assert "resilver_seconds" in csv_text.splitlines()[0]
    doc = table.to_dict()
    assert "loss_probability" in doc["units"]
    assert doc["inputs"]["resilver"] is True
