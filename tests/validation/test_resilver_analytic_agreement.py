"""The analytic resilver (``zsim.resilver(sc, engine="analytic")``) against the DES windows.

Every case: the same scenario through both engines (seed 1, no durability); the analytic
resilver time within 15 % of the DES's and the same kind of limit (a disk, the CPU, a bus
stage, the scan's own limits). Cases the analytic model declines
(:class:`zsim.analytic.validity.OutOfRange`) are listed with the reason and must stay
declined rather than answer wrongly. The table is printed (``pytest -s``). The DES results
are cached within the run. ``ZSIM_RESILVER_AGREEMENT_CASES=n`` runs the first n cases.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from zsim.analytic.validity import OutOfRange
from zsim.resilver.run import simulate_resilver
from zsim.scenario import Scenario, load_scenario, scenario_from_dict
from zsim.validation.draid import draid_scenario

pytestmark = pytest.mark.slow

TOLERANCE = 0.15
EXAMPLE = "examples/scenarios/resilver-raidz2-8-ironwolf.toml"


def _case(
    layout: str,
    disk: str = "seagate-exos-x16-16tb",
    fill: float = 0.5,
    recordsize: str = "1M",
    written: str = "sequential",
    zfs_version: str | None = None,
    **resilver: Any,
) -> dict[str, Any]:
    hardware: dict[str, Any] = {"disk": disk, "ram": "64GiB", "cpu_cores": 8}
    if zfs_version:
        hardware["zfs_version"] = zfs_version
    return {
        "hardware": hardware,
        "pool": {"layout": layout, "fill": fill, "recordsize": recordsize},
        "workload": {"rw": "randread", "bs": "128K"},
        "resilver": {"written": written, **resilver},
    }


def _md(layout: str, disk: str, speed_limit_max: str = "200000KiB/s") -> dict[str, Any]:
    spec = _case(layout, disk, md_speed_limit_max=speed_limit_max)
    del spec["resilver"]["written"]
    return spec


#: a spread of mirror / raidz / dRAID pools on HDD and SSD, fills 0.3–0.9, sorted and legacy
CASES: list[tuple[str, dict[str, Any]]] = [
    ("raidz1-4-hdd-f0.3", _case("raidz1 4", fill=0.3)),
    ("raidz2-6-hdd-128k-f0.9", _case("raidz2 6", fill=0.9, recordsize="128K")),
    ("raidz2-6-hdd-2.1", _case("raidz2 6", zfs_version="2.1.0")),
    ("raidz2-6-hdd-legacy-random", _case("raidz2 6", "seagate-exos-x16-16tb", 0.5, "128K",
                                          "random", "0.7.13")),
    ("mirror-2-hdd-seq-rebuild-f0.9", _case("mirror 2", fill=0.9, method="sequential")),
    ("mirror-2-hdd-f0.5", _case("mirror 2", "seagate-ironwolf-12tb")),
    ("raidz1-4-ssd", _case("raidz1 4", "samsung-pm9a3-3.84tb")),
    ("mirror-2-ssd-128k", _case("mirror 2", "samsung-pm9a3-3.84tb", recordsize="128K")),
    ("draid1-4d-new-spare", _case("draid1:4d:1s:11c", spare="new")),
    ("raidz2-8-ssd-128k-random", _case("raidz2 8", "samsung-pm9a3-3.84tb", 0.7, "128K",
                                        "random")),
    ("raidz2-8-hdd-128k-random", _case("raidz2 8", recordsize="128K", written="random")),
    ("md-raid5-4-ssd-speed-limit", _md("md-raid5 4", "samsung-pm9a3-3.84tb")),
    ("md-raid6-6-ssd", _md("md-raid6 6", "samsung-870-evo-500gb", "4000000KiB/s")),
    ("md-raid1-2-ssd", _md("md-raid1 2", "samsung-pm9a3-3.84tb", "8000000KiB/s")),
    ("mirror-2-hdd-128k-random-f0.7", _case("mirror 2", fill=0.7, recordsize="128K",
                                             written="random")),
]  # fmt: skip

#: cases where the DES's windows scatter beyond what the analytic model follows, each with
#: its own time tolerance and whether the limit kind must match (the reason is the comment)
KNOWN: list[tuple[str, Scenario, float, bool]] = [
    # some DES windows of this packed raidz have one surviving disk 100 % busy and the others
    # a third (134-257 MB/s across positions of one pool): the slow disk issues 1 MiB
    # aggregates at ~60 % of its media rate while the others stop aggregating (~306 KiB
    # reads); the analytic disks run evenly
    ("2x-raidz2-6-hdd-f0.6", scenario_from_dict(_case("2x raidz2 6", fill=0.6)), 0.35, True),
    # the dRAID validation set's traditional-spare row, at a quarter of its width (the DES
    # stays quick): a window holds ~6 dRAID groups, so the DES's busiest disk changes from
    # window to window and none is >= 85 % busy over the run ("scan"); the analytic
    # resilver names the new disk, which every relevant group writes
    ("validation-draid1-8d-new-spare", draid_scenario("draid1:8d:1s:23c", "new", 0.9), 0.15,
     False),
]  # fmt: skip

#: cases the analytic model must decline (with the reason's key words)
DECLINED: list[tuple[str, dict[str, Any], str]] = [
    ("draid-distributed", _case("draid2:4d:1s:14c"), "distributed"),
    (
        "validation-draid-distributed",
        _case("draid1:4d:1s:90c", fill=0.9, spare="distributed"),
        "distributed",
    ),
    ("under-load", _case("raidz2 6", under_load=True), "under load"),
    ("md-raid6-hdd", {**_case("raidz2 6"), "pool": {"layout": "md-raid6 6", "fill": 0.5}}, "md"),
]

_DES: dict[str, Any] = {}


def _scenarios() -> list[tuple[str, Scenario]]:
    out = [(name, scenario_from_dict(spec)) for name, spec in CASES]
    if os.path.exists(EXAMPLE):
        out.insert(0, ("example-raidz2-8-ironwolf", load_scenario(EXAMPLE)))
    n = int(os.environ.get("ZSIM_RESILVER_AGREEMENT_CASES", "0") or 0)
    return out[:n] if n > 0 else out


def _kind(limit: str) -> str:
    return limit.split(":", 1)[0]


def _des(name: str, sc: Scenario) -> Any:
    if name not in _DES:
        _DES[name] = simulate_resilver(sc, durability=False)
    return _DES[name]


def test_analytic_resilver_agrees_with_des() -> None:
    rows, failures, slowest = [], [], 0.0
    for name, sc in _scenarios():
        des = _des(name, sc)
        simulate_resilver(sc, durability=False, engine="analytic")  # warm the tables
        started = time.perf_counter()
        ana = simulate_resilver(sc, durability=False, engine="analytic")
        wall = time.perf_counter() - started
        slowest = max(slowest, wall)
        assert ana.to_dict()["engine"] == "analytic"
        assert des.seconds and ana.seconds
        err = ana.seconds / des.seconds - 1
        ok = abs(err) <= TOLERANCE and _kind(ana.limit) == _kind(des.limit)
        rows.append(
            f"{name:32s} des {des.seconds / 3600:8.2f} h  analytic {ana.seconds / 3600:8.2f} h"
            f"  {err:+6.1%}  limit {des.limit}/{ana.limit}  {wall * 1e3:5.1f} ms"
            f"  {'ok' if ok else 'FAIL'}"
        )
        if not ok:
            failures.append(name)
    print("\n" + "\n".join(rows) + f"\nslowest warm analytic: {slowest * 1e3:.1f} ms")
    assert not failures, f"outside {TOLERANCE:.0%} or another limit kind: {failures}"


@pytest.mark.parametrize(("name", "spec", "words"), DECLINED, ids=[d[0] for d in DECLINED])
def test_analytic_resilver_declines(name: str, spec: dict[str, Any], words: str) -> None:
    sc = scenario_from_dict(spec)
    with pytest.raises(OutOfRange, match=words):
        simulate_resilver(sc, durability=False, engine="analytic")


@pytest.mark.parametrize(
    ("name", "sc", "tolerance", "same_limit"), KNOWN, ids=[k[0] for k in KNOWN]
)
def test_analytic_resilver_known_differences(
    name: str, sc: Scenario, tolerance: float, same_limit: bool
) -> None:
    """The cases of :data:`KNOWN`: the analytic time within their own tolerance."""
    des = _des(name, sc)
    ana = simulate_resilver(sc, durability=False, engine="analytic")
    assert des.seconds and ana.seconds
    err = ana.seconds / des.seconds - 1
    print(f"\n{name}: des {des.seconds / 3600:.2f} h analytic {ana.seconds / 3600:.2f} h "
          f"{err:+.1%} limit {des.limit}/{ana.limit}")  # fmt: skip
    assert abs(err) <= tolerance
    if same_limit:
        assert _kind(ana.limit) == _kind(des.limit)
