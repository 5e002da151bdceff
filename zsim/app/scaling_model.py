"""The "How vdevs scale" page's computations, without Streamlit.

The classic teaching picture — "performance scales with vdevs, not disks" — drawn from the
analytic engine: for 4, 8, 12, ... disks of one model, four families of pools built from
them (single-disk vdevs, 2-way mirrors, raidz2 vdevs of 4, and one raidz2 that grows wider)
under four fio workloads (4K and 1M, reads and writes), with the planners' rule of thumb
beside each point.

The workloads run 64 fio jobs × iodepth 4 over 2 TiB (64 × 32 GiB, far more than the
default 64 GiB of RAM), so reads reach the disks, and the pool, not the clients, sets the
rate up to a few dozen disks (buffered reads wait per job whatever the iodepth, so the job
count is what loads the pool). The 4K reads run on the default 128K
recordsize, where a raidz read of any size reads the whole record from every data disk —
the case the picture is about; the 4K writes on recordsize 4K (a zvol's or database's small
blocks: fio's partial-record writes into sparse files at 128K are outside the analytic
engine's range). 1M reads
are random (the picture is about the disks' positioning; sequential reads, which the
analytic engine also answers, are bound by the disks' streaming rate and scale plainly),
1M writes sequential, both at 1M records.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from typing import Any

from zsim.errors import ZsimError
from zsim.scenario import scenario_from_dict
from zsim.simulate import simulate


@dataclass(frozen=True)
class ScalingWorkload:
    """One of the page's workloads: fio shape and the recordsize it runs on."""

    name: str
    rw: str
    bs: str
    recordsize: str
    streaming: bool  # judged by MB/s (else IOPS)


WORKLOADS: tuple[ScalingWorkload, ...] = (
    ScalingWorkload("4K random read", "randread", "4K", "128K", False),
    ScalingWorkload("4K random write", "randwrite", "4K", "4K", False),
    ScalingWorkload("1M random read", "randread", "1M", "1M", True),
    ScalingWorkload("1M sequential write", "write", "1M", "1M", True),
)
FAMILIES: tuple[str, ...] = (
    "single disks",
    "2-way mirrors",
    "raidz2 vdevs of 4",
    "one wide raidz2",
)
NUMJOBS, IODEPTH, SIZE_PER_JOB = 64, 4, "32GiB"


def family_layout(family: str, disks: int) -> str:
    """The layout of ``disks`` disks in ``family`` (``disks`` a multiple of 4, ≥ 4)."""
    if disks < 4 or disks % 4:
        raise ZsimError(f"the scaling page uses multiples of 4 disks, not {disks}")
    if family == "single disks":
        return f"stripe {disks}"
    if family == "2-way mirrors":
        return f"{disks // 2}x mirror 2"
    if family == "raidz2 vdevs of 4":
        return f"{disks // 4}x raidz2 4" if disks > 4 else "raidz2 4"
    if family == "one wide raidz2":
        return f"raidz2 {disks}"
    raise ZsimError(f"unknown family {family!r}; use one of {', '.join(FAMILIES)}")


def vdev_count(family: str, disks: int) -> int:
    return {
        "single disks": disks,
        "2-way mirrors": disks // 2,
        "raidz2 vdevs of 4": disks // 4,
        "one wide raidz2": 1,
    }[family]


def scenario_dict(
    disk: str | dict[str, Any],
    layout: str,
    w: ScalingWorkload,
    ram: str = "64GiB",
    cpu_cores: int = 8,
) -> dict[str, Any]:
    return {
        "name": f"{layout}: {w.name}",
        "hardware": {"disk": disk, "ram": ram, "cpu_cores": cpu_cores},
        "pool": {"layout": layout, "recordsize": w.recordsize},
        "workload": {
            "tool": "fio",
            "rw": w.rw,
            "bs": w.bs,
            "numjobs": NUMJOBS,
            "iodepth": IODEPTH,
            "size": SIZE_PER_JOB,
        },
    }


def point(sc_toml: str, simulate: Any) -> dict[str, Any]:
    """One point's figures from ``simulate(toml, engine)`` (the app's cached call)."""
    res = simulate(sc_toml, "analytic")
    rule = simulate(sc_toml, "baseline")
    return {
        "iops": res.read.iops + res.write.iops,
        "bytes_per_s": res.read.bytes_per_s + res.write.bytes_per_s,
        "limit": res.limit,
        "rule_iops": rule.read.iops + rule.write.iops,
        "rule_bytes_per_s": rule.read.bytes_per_s + rule.write.bytes_per_s,
    }


def scaling_rows(
    disk: str | dict[str, Any],
    counts: list[int],
    simulate: Any,
    ram: str = "64GiB",
    cpu_cores: int = 8,
) -> list[dict[str, Any]]:
    """One row per (workload, family, disk count): zsim's and the rule of thumb's figures.

    ``simulate(scenario_toml, engine)`` returns a :class:`zsim.SimResult` (the app passes its
    cached call; tests pass :func:`direct_simulate`).
    """
    rows = []
    for w in WORKLOADS:
        for family in FAMILIES:
            for n in counts:
                layout = family_layout(family, n)
                sc = scenario_from_dict(
                    scenario_dict(disk, layout, w, ram, cpu_cores), source="the scaling page"
                )
                fig = point(sc.to_toml(), simulate)
                rows.append(
                    {
                        "workload": w.name,
                        "family": family,
                        "disks": n,
                        "vdevs": vdev_count(family, n),
                        "layout": layout,
                        "streaming": w.streaming,
                        **fig,
                    }
                )
    return rows


def direct_simulate(sc_toml: str, engine: str) -> Any:
    """Uncached ``zsim.simulate`` of a scenario TOML (for tests and scripts)."""
    return simulate(scenario_from_dict(tomllib.loads(sc_toml)), engine=engine)
