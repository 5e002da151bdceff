"""The analytic resilver's pure pieces and its engine switch (fast; the agreement with the
DES is ``tests/validation/test_resilver_analytic_agreement.py``)."""

from __future__ import annotations

from typing import Any

import pytest

import zsim
from zsim.analytic.validity import OutOfRange
from zsim.errors import ZsimError
from zsim.resilver.scan_disk import merge_extents, quantize_gap
from zsim.scenario import scenario_from_dict
from zsim.units import KiB, MiB


def _sc(layout: str, disk: str = "samsung-pm9a3-3.84tb", **resilver: Any) -> Any:
    return scenario_from_dict(
        {
            "hardware": {"disk": disk, "ram": "64GiB", "cpu_cores": 8},
            "pool": {"layout": layout, "fill": 0.5, "recordsize": "1M"},
            "workload": {"rw": "randread", "bs": "128K"},
            "resilver": resilver,
        }
    )


def test_adjacent_small_zios_merge_up_to_the_limit() -> None:
    extents = [(i * 128 * KiB, 128 * KiB, 1) for i in range(16)]
    ios, runs = merge_extents(extents, MiB, 32 * KiB)
    assert runs == [(0, 2 * MiB)]
    assert ios == 2  # eight 128K zios per 1 MiB aggregate


def test_a_zio_larger_than_the_limit_is_issued_alone() -> None:
    extents = [(i * 512 * KiB, 512 * KiB, 1) for i in range(4)]
    ios, _ = merge_extents(extents, 128 * KiB, 32 * KiB)
    assert ios == 4


def test_gaps_beyond_the_gap_limit_split_runs() -> None:
    extents = [(0, 4 * KiB, 1), (4 * KiB + 64 * KiB, 4 * KiB, 1), (200 * KiB, 4 * KiB, 1)]
    ios, runs = merge_extents(extents, MiB, 32 * KiB)
    assert ios == 3 and len(runs) == 3


def test_gap_grid() -> None:
    assert quantize_gap(0) == 0
    assert quantize_gap(1000) == 0
    g = quantize_gap(1_000_000)
    assert 0.9 < g / 1_000_000 < 1.1 and g % 4096 == 0


def test_engine_switch_keeps_the_json_and_names_the_engine() -> None:
    sc = _sc("mirror 2")
    result = zsim.resilver(sc, durability=False, engine="analytic")
    data = result.to_dict()
    assert data["engine"] == "analytic"
    assert data["seconds"] > 0 and data["bytes_per_s"] > 0
    assert data["progress"][-1]["bytes"] == pytest.approx(data["bytes_resilvered"], rel=1e-6)
    assert len(data["windows"]) == 8
    # a rebuild copies one disk's allocated half: never faster than the flash reads allow
    assert data["bytes_per_s"] < 10e9


def test_analytic_raidz_reads_every_surviving_column() -> None:
    result = zsim.resilver(_sc("raidz2 6"), durability=False, engine="analytic")
    assert result.bytes_read == pytest.approx(5 * result.bytes_resilvered, rel=0.02)


def test_declines_what_it_does_not_model() -> None:
    with pytest.raises(OutOfRange, match="md"):
        zsim.resilver(
            _sc("md-raid6 6", "seagate-exos-x16-16tb"), durability=False, engine="analytic"
        )
    with pytest.raises(OutOfRange, match="distributed"):
        zsim.resilver(_sc("draid2:4d:1s:14c"), durability=False, engine="analytic")


def test_auto_takes_the_analytic_answer_else_runs_the_des() -> None:
    """engine="auto" (the CLI's --engine auto, every row of sweep/recommend --resilver)."""
    answered = zsim.resilver(_sc("mirror 2"), durability=False, engine="auto")
    assert answered.engine == "analytic"
    exact = zsim.resilver(_sc("mirror 2"), durability=False, engine="analytic")
    assert answered.seconds == exact.seconds
    declined = zsim.resilver(
        _sc("md-raid6 6", "seagate-exos-x16-16tb"), durability=False, engine="auto"
    )
    assert declined.engine != "analytic" and declined.seconds > 0


def test_unknown_engine_is_refused() -> None:
    with pytest.raises(ZsimError, match="engine"):
        zsim.resilver(_sc("mirror 2"), engine="fast")


def test_md_on_flash_is_held_at_speed_limit_max() -> None:
    result = zsim.resilver(_sc("md-raid1 2"), durability=False, engine="analytic")
    assert result.engine == "analytic"
    assert result.limit == "md-speed-limit"
    assert result.bytes_per_s == pytest.approx(200000 * 1024, rel=1e-6)
