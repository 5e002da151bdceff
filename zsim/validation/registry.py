"""The registry of bundled reference data sets: what each is, where its data is, how it runs.

``zsim validate`` takes its set names, its help text and its default sets from
:data:`REFERENCE_SETS`, and the tests under ``tests/validation/`` read each set's tolerance
from it. A set's data lives under ``calibration/reference/`` (``zsim/reference`` in the wheel,
see :func:`zsim.validation.common.reference_root`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from zsim.errors import ZsimError
from zsim.validation import ars, clemtibs, disksim, draid, tnbench


@dataclass(frozen=True)
class ReferenceSet:
    """One published data set zsim is checked against.

    ``scenario`` builds one of its runs (for ``disksim`` the drive's inline profile table: a
    trace replays on the bare drive); ``rows`` runs every point, taking the command's options
    named in ``options`` (``seed``, ``target_ci``), each row having ``to_dict()``; ``table``
    prints the rows under ``title``; ``summary`` gives the JSON summary (None: the set's JSON
    is the bare list of rows). ``tolerance``: the bounds its tests hold zsim to, by name."""

    name: str
    description: str
    data: tuple[str, ...]
    scenario: Callable[..., Any]
    rows: Callable[..., list[Any]]
    table: Callable[[list[Any]], str]
    summary: Callable[[list[Any]], dict[str, Any]] | None
    json_key: str
    title: str
    tolerance: Mapping[str, float] = field(hash=False)
    default: bool = False
    options: tuple[str, ...] = ("seed",)

    def run(self, *, seed: int = 1, target_ci: float = 0.03) -> list[Any]:
        """Every row, with the options this set takes."""
        given = {"seed": seed, "target_ci": target_ci}
        return self.rows(**{key: given[key] for key in self.options})

    def to_json(self, rows: list[Any]) -> Any:
        """The set's part of ``zsim validate --json``."""
        if self.summary is None:
            return [r.to_dict() for r in rows]
        return {"rows": [r.to_dict() for r in rows], "summary": self.summary(rows)}

    def text(self, rows: list[Any]) -> str:
        """The set's part of ``zsim validate``: its title, then its table."""
        return f"{self.title}\n{self.table(rows)}"


def _frozen(values: dict[str, float]) -> Mapping[str, float]:
    return MappingProxyType(values)


REFERENCE_SETS: tuple[ReferenceSet, ...] = (
    ReferenceSet(
        name="ars",
        description="Ars Technica, 8 x IronWolf",
        data=(ars.REFERENCE_FILE,),
        scenario=ars.ars_scenario,
        rows=ars.ars_rows,
        table=ars.ars_table,
        summary=ars.ars_summary,
        json_key="ars-ironwolf8",
        title="Ars Technica, 8 x IronWolf 12TB (MiB/s or ratio; zsim vs the rule of thumb)",
        tolerance=ars.TOLERANCE,
        default=True,
        options=("seed", "target_ci"),
    ),
    ReferenceSet(
        name="disksim",
        description="DiskSim 4.0 validation traces",
        data=("disksim", "disksim/drives.csv"),
        scenario=disksim.disksim_drive_profile,
        rows=disksim.disksim_rows,
        table=disksim.disksim_table,
        summary=None,
        json_key="disksim-traces",
        title="DiskSim 4.0 validation traces, datasheet-level drives, queue depth 1",
        tolerance=_frozen(
            {
                # |zsim mean − measured mean| ÷ measured mean, every drive
                "mean_access_time": 0.30,
                # the goal on the write-through drives: demerit ≤ 15 % of the measured mean
                "write_through_goal": 0.15,
                # what the worst write-through drive reaches today
                "write_through_worst": 0.40,
                # our demerit on DiskSim's own predictions against its rms tool, ms
                "rms_tool_ms": 0.002,
                # with each drive's full DiskSim parameter files: the goal on every drive
                "full_params_goal": 0.03,
                # and the mean access time, every drive
                "full_params_mean": 0.10,
            }
        ),
        default=True,
    ),
    ReferenceSet(
        name="tnbench",
        description="tn-bench dd on NVMe raidz1",
        data=(tnbench.REFERENCE_FILE,),
        scenario=tnbench.tnbench_scenario,
        rows=tnbench.tnbench_rows,
        table=tnbench.tnbench_table,
        summary=tnbench.tnbench_summary,
        json_key="tnbench-m50",
        title="tn-bench, TrueNAS M50, dd on raidz1 4 NVMe",
        tolerance=_frozen(
            {
                "absolute": 0.25,  # each dd rate
                "ratio_factor": 1.5,  # write rise 1 → 10 threads, against the measured one
                "saturation_measured": 0.02,  # the reference's own change past saturation
                "saturation_zsim": 0.10,  # zsim's change past the same point
            }
        ),
    ),
    ReferenceSet(
        name="clemtibs",
        description="fio on a 5 x 12 TB raidz2",
        data=(clemtibs.REFERENCE_FILE,),
        scenario=clemtibs.clemtibs_scenario,
        rows=clemtibs.clemtibs_rows,
        table=clemtibs.clemtibs_table,
        summary=clemtibs.clemtibs_summary,
        json_key="clemtibs-zfs-benchmark",
        title="clemtibs, fio on raidz2 5 x Toshiba X300 Pro 12TB",
        tolerance=_frozen({"absolute": 0.25}),  # every point, both disk descriptions
    ),
    ReferenceSet(
        name="draid",
        description="OpenZFS dRAID rebuild times, 90 x 16 TB",
        data=(draid.REFERENCE_FILE,),
        scenario=draid.draid_scenario,
        rows=draid.draid_rows,
        table=draid.draid_table,
        summary=draid.draid_summary,
        json_key="openzfs-draid-rebuild",
        title="OpenZFS dRAID Howto, 90 x 16 TB HDD, 90 % full (hours)",
        tolerance=_frozen(
            {
                "narrowest": 0.30,  # D = 1, distributed spare
                "every_point": 0.70,  # every distributed-spare point
                "traditional": 0.50,  # the healing resilver onto a new disk
            }
        ),
        options=(),
    ),
)

SET_NAMES: tuple[str, ...] = tuple(s.name for s in REFERENCE_SETS)
DEFAULT_SETS: tuple[str, ...] = tuple(s.name for s in REFERENCE_SETS if s.default)


def reference_set(name: str) -> ReferenceSet:
    """The registered set ``name``; a :class:`ZsimError` naming the choices otherwise."""
    for s in REFERENCE_SETS:
        if s.name == name:
            return s
    raise ZsimError(f"unknown reference set {name!r}: choose from {', '.join(SET_NAMES)}")


def sets_help() -> str:
    """The sets and the default, as ``zsim validate --help`` lists them."""
    listed = ", ".join(f"{s.name} ({s.description})" for s in REFERENCE_SETS)
    return f"Sets: {listed}. Default: {' and '.join(DEFAULT_SETS)}."


def run_sets(
    names: Iterable[str] | None, *, seed: int = 1, target_ci: float = 0.03
) -> tuple[dict[str, Any], str]:
    """Run the named sets (None or empty: the default ones) in the registry's order: the
    JSON by each set's ``json_key``, and the printed tables one after another."""
    wanted = list(dict.fromkeys(names or DEFAULT_SETS))
    for name in wanted:
        reference_set(name)  # an unknown name is an error before anything runs
    data: dict[str, Any] = {}
    parts = []
    for s in REFERENCE_SETS:
        if s.name in wanted:
            rows = s.run(seed=seed, target_ci=target_ci)
            data[s.json_key] = s.to_json(rows)
            parts.append(s.text(rows))
    return data, "\n\n".join(parts)
