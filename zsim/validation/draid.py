"""The resilver model against OpenZFS's published dRAID rebuild curve.

Data: ``calibration/reference/openzfs-draid-rebuild.toml`` (OpenZFS "dRAID Howto": 90 HDDs of
16 TB, 90 % full, one distributed spare; hours read off the chart, ±5 %). zsim runs the same
pools on its ``seagate-exos-x16-16tb`` profile (the Howto does not name the drives) with
1 MiB records written sequentially: a sequential rebuild to the distributed spare for every
(parity, D) on the chart, and a healing resilver onto a new disk (``draid1:8d``) for the
traditional spare, whose published time is flat across D.

The release is the chart's: openzfs-docs added it on 2020-11-24/25 (commits 81e990f,
cadc18c), eleven days after dRAID was merged (b2255edcc0), so the rebuild ran the 2.1 code
line with ``zfs_rebuild_vdev_limit`` = 32 MiB per child (``vdev_rebuild.c``; 64 MiB only
from 2.1.12, commit 973934b965). zsim runs it as ``zfs_version = "2.1"``
(docs/research/resilver-time.md).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from typing import Any

from zsim.errors import ZsimError
from zsim.resilver.run import simulate_resilver
from zsim.scenario import Scenario, scenario_from_dict
from zsim.validation.common import map_runs, median_abs, reference_root, relative_error

REFERENCE_FILE = "openzfs-draid-rebuild.toml"
DISK = "seagate-exos-x16-16tb"
ZFS_VERSION = "2.1"  # the code the chart was made with (see above)
TRADITIONAL_D = 8  # the data width of the pool the traditional spare is simulated on


def draid_measurements() -> dict[str, Any]:
    """The chart's figures (the ``draid_90x16TB`` table), read from the bundled file."""
    text = reference_root().joinpath(REFERENCE_FILE).read_text(encoding="utf-8")
    return tomllib.loads(text)["draid_90x16TB"]


def draid_scenario(layout: str, spare: str, fill: float) -> Scenario:
    """The 16 TB HDD pool ``layout`` at ``fill``, one disk failing onto ``spare``
    ("distributed" or "new")."""
    return scenario_from_dict(
        {
            "hardware": {
                "disk": DISK,
                "ram": "256GiB",
                "cpu_cores": 16,
                "zfs_version": ZFS_VERSION,
            },
            "pool": {"layout": layout, "recordsize": "1M", "fill": fill},
            "workload": {"rw": "randread", "bs": "128K"},
            "resilver": {"spare": spare},
        }
    )


def _hours(layout: str, spare: str, fill: float) -> float:
    sc = draid_scenario(layout, spare, fill)
    seconds = simulate_resilver(sc, durability=False).seconds
    if seconds is None:  # only a lost pool has no resilver time; one failed disk never loses it
        raise ZsimError(f"{layout}: the pool is lost, so there is no resilver time to compare")
    return seconds / 3600


@dataclass(frozen=True)
class DraidRow:
    """One point of the chart: published hours against zsim's. ``parity`` is "draid1" or
    "draid3" for a distributed spare; the traditional spare's row has ``spare`` "new"."""

    parity: str
    data_disks: int
    spare: str  # "distributed" or "new"
    published_hours: float
    zsim_hours: float

    @property
    def id(self) -> str:
        if self.spare == "new":
            return "traditional-spare"
        return f"{self.parity}-{self.data_disks}d-distributed"

    @property
    def zsim_error(self) -> float:
        return relative_error(self.zsim_hours, self.published_hours)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "parity": self.parity,
            "data_disks": self.data_disks,
            "spare": self.spare,
            "published_hours": self.published_hours,
            "zsim_hours": self.zsim_hours,
            "zsim_error": self.zsim_error,
        }


def draid_rows(workers: int | None = None) -> list[DraidRow]:
    """Every distributed-spare point of the chart, in the file's order, then the traditional
    spare (a healing resilver onto a new disk of ``draid1:8d``); ``workers`` processes run
    them (default: one per core; 1: in this process)."""
    ref = draid_measurements()
    fill, n = ref["fill"], ref["disks"]
    points = [
        (
            parity,
            int(d),
            "distributed",
            published,
            f"draid{parity.removeprefix('draid')}:{d}d:1s:{n}c",
        )
        for parity, by_d in ref["distributed_spare_hours"].items()
        for d, published in by_d.items()
    ]
    points.append(
        ("draid1", TRADITIONAL_D, "new", ref["traditional_spare_hours"],
         f"draid1:{TRADITIONAL_D}d:1s:{n}c")
    )  # fmt: skip
    runs = [(layout, spare, fill) for *_, spare, _published, layout in points]
    hours = map_runs(_hours_of, runs, workers)
    return [
        DraidRow(parity, d, spare, published, h)
        for (parity, d, spare, published, _layout), h in zip(points, hours, strict=True)
    ]


def _hours_of(run: tuple[str, str, float]) -> float:
    return _hours(*run)


def draid_summary(rows: list[DraidRow]) -> dict[str, Any]:
    """Median absolute error of zsim over the points."""
    return {"zsim_median_abs_error": median_abs(r.zsim_error for r in rows), "total": len(rows)}


def draid_table(rows: list[DraidRow]) -> str:
    """Published vs zsim hours, with zsim's error."""
    lines = [f"{'vdev':<8}{'D':>4}{'published h':>13}{'zsim h':>9}{'error':>8}"]
    for r in rows:
        if r.spare == "new":
            lines.append(
                f"{'new disk':<12}{r.published_hours:>13.1f}{r.zsim_hours:>9.2f}"
                f"{r.zsim_error:>+8.0%}"
            )
        else:
            lines.append(
                f"{r.parity:<8}{r.data_disks:>4}{r.published_hours:>13.1f}{r.zsim_hours:>9.2f}"
                f"{r.zsim_error:>+8.0%}"
            )
    return "\n".join(lines)
