"""The registry of bundled reference data sets: what each is, where its data is, how it runs.

``zsim validate`` takes its set names, its help text and its default sets from
:data:`REFERENCE_SETS`, and the tests under ``tests/validation/`` read each set's tolerance
from it. A set's data lives under ``calibration/reference/`` (``zsim/reference`` in the wheel,
see :func:`zsim.validation.common.reference_root`).
"""

from __future__ import annotations

import csv
import functools
import io
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from zsim.errors import ZsimError
from zsim.scenario import Scenario, scenario_from_dict
from zsim.validation import ars, ars_md, clemtibs, disksim, draid, tnbench
from zsim.validation.accuracy import device_kind, prediction_class, resilver_class
from zsim.validation.common import reference_root
from zsim.validation.report import Point


@dataclass(frozen=True)
class ReferenceSet:
    """One published data set zsim is checked against.

    ``scenario`` builds one of its runs (for ``disksim`` the drive's inline profile table: a
    trace replays on the bare drive); ``rows`` runs every point, taking the command's options
    named in ``options`` (``seed``, ``target_ci``), each row having ``to_dict()``; ``table``
    prints the rows under ``title``; ``summary`` gives the JSON summary (None: the set's JSON
    is the bare list of rows). ``tolerance``: the bounds its tests hold zsim to, by name.
    ``points`` turns the rows into uniform :class:`~zsim.validation.report.Point` s, each
    classed by the scenario it was predicted from (``zsim validate --all``); ``quick``: the
    set runs in about a minute or less, so ``zsim validate --all --quick`` runs it."""

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
    points: Callable[[list[Any]], list[Point]] = field(hash=False, default=lambda rows: [])
    default: bool = False
    quick: bool = False
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


# ---------------------------------------------------------------- rows → points
# One adapter per set: its rows as uniform points, each classed by the scenario it was
# predicted from (zsim.validation.accuracy.prediction_class). Figures that are not a rate of
# one run (Ars ratios and differences, DiskSim demerits, dRAID hours) get classes of their own.


def ars_points(rows: list[ars.ArsRow]) -> list[Point]:
    """Absolute MiB/s by their run's class; the ratios of two runs in "ratio: … vdev
    scaling"; the rs=1M − rs=128K differences (random reads; random writes with an fsync
    after each) in "difference: <class>"."""
    out = []
    for r in rows:
        what = r.point.what
        if r.point.unit == "ratio":
            top = what.split(" ÷ ")[0]
            kind = device_kind(ars.ars_scenario(top, "128K", "randwrite"))
            klass = f"ratio: {kind} vdev scaling (random write)"
        elif " − " in what:  # "raidz2 8 1M randread: rs=1M − rs=128K (MiB/s)"
            if "fsync" in what:
                sc = ars.ars_scenario("raidz2 8", "1M", "randwrite", fsync=1)
            else:
                sc = ars.ars_scenario("raidz2 8", "1M", "randread")
            klass = f"difference: {prediction_class(sc)}"
        else:  # "raidz2 8 rs=128K 1M randwrite 8x8"
            layout, rest = what.split(" rs=")
            rs, _bs, rw, _jobs = rest.split()
            klass = prediction_class(ars.ars_scenario(layout, rs, rw))
        out.append(
            Point("ars", r.point.id, klass, r.point.measured, r.zsim, r.baseline, r.point.unit)
        )
    return out


def ars_md_points(rows: list[ars.ArsRow]) -> list[Point]:
    """md RAID6 rates by their run's class (e.g. "HDD md RAID random read"); each md ÷ ZFS
    (or ZFS ÷ md) 4K ratio in "ratio: HDD md RAID vs ZFS (<the runs' workload>)"."""
    out = []
    for r in rows:
        if r.point.unit == "ratio":
            rw = "random write" if "randwrite" in r.point.what else "random read"
            sc = ars_md.md_scenario("md-raid6 8", "randread", "4K")
            klass = f"ratio: {device_kind(sc)} md RAID vs ZFS ({rw})"
        else:
            jobs = 1 if "single-process" in r.point.id else 8
            size = "128GiB" if jobs == 1 else "16GiB"
            sc = ars_md.md_scenario("md-raid6 8", "randread", "1M", jobs, jobs, size)
            klass = prediction_class(sc)
        out.append(
            Point("ars-md", r.point.id, klass, r.point.measured, r.zsim, r.baseline, r.point.unit)
        )
    return out


def _disksim_scenario(drive: str) -> Scenario:
    """The bare drive replaying its DiskSim trace, as ``examples/scenarios`` spells it."""
    folder = reference_root().joinpath("disksim")
    table = csv.DictReader(io.StringIO(folder.joinpath("drives.csv").read_text(encoding="utf-8")))
    row = next(r for r in table if r["drive"] == drive)
    trace = folder.joinpath(f"{row['stem']}.trace")
    return scenario_from_dict(
        {
            "hardware": {"disk": disksim.disksim_drive_profile(row)},
            "pool": {"layout": "raw 1"},
            "workload": {"tool": "trace", "file": str(trace), "format": "disksim-validate"},
        },
        source="disksim",
    )


def disksim_points(rows: list[disksim.TraceRow]) -> list[Point]:
    """Per drive: the mean access time (ms) in the trace's class, and the demerit (ms; its
    error is its share of the measured mean, the rule of thumb's that of a constant service
    time) in "<class> (demerit)"."""
    out = []
    for r in rows:
        klass = prediction_class(_disksim_scenario(r.drive))
        out.append(
            Point(
                "disksim", f"{r.drive} mean", klass, r.measured_mean_ms, r.zsim_mean_ms, None, "ms"
            )
        )
        out.append(
            Point(
                "disksim",
                f"{r.drive} demerit",
                f"{klass} (demerit)",
                r.measured_mean_ms,
                r.demerit_ms,
                r.constant_pct * r.measured_mean_ms,
                "ms (demerit)",
                given_error=r.demerit_pct,
                given_baseline_error=r.constant_pct,
            )
        )
    return out


def tnbench_points(rows: list[tnbench.TnRow]) -> list[Point]:
    """Every dd point, the ARC-served 1-thread read included (a miss is reported, not hidden)."""
    return [
        Point(
            "tnbench",
            r.id,
            prediction_class(tnbench.tnbench_scenario(r.direction, r.threads)),
            r.measured,
            r.zsim,
            r.baseline,
            "MiB/s",
        )
        for r in rows
    ]


@functools.lru_cache(maxsize=16)
def _clemtibs_class(job: str, slog: bool) -> str:
    return prediction_class(clemtibs.clemtibs_scenario(job, None, slog))


def clemtibs_points(rows: list[clemtibs.ClemRow]) -> list[Point]:
    """Every measured run with zsim at datasheet level (the set's first prediction)."""
    out = []
    for r in rows:
        slog = r.job == clemtibs.SYNC_JOB and r.pool.endswith("_slog")
        out.append(
            Point(
                "clemtibs",
                f"{r.id} {r.pool}",
                _clemtibs_class(r.job, slog),
                r.measured,
                r.zsim,
                r.baseline,
                "MiB/s",
            )
        )
    return out


def draid_points(rows: list[draid.DraidRow]) -> list[Point]:
    """Rebuild hours, in the resilver class of the pool (e.g. "HDD dRAID resilver")."""
    ref = draid.draid_measurements()
    out = []
    for r in rows:
        layout = f"{r.parity}:{r.data_disks}d:1s:{ref['disks']}c"
        sc = draid.draid_scenario(layout, r.spare, ref["fill"])
        out.append(
            Point("draid", r.id, resilver_class(sc), r.published_hours, r.zsim_hours, None, "hours")
        )
    return out


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
        points=ars_points,
        tolerance=ars.TOLERANCE,
        default=True,
        options=("seed", "target_ci"),
    ),
    ReferenceSet(
        name="ars-md",
        description="Ars Technica, md RAID + ext4 beside ZFS",
        data=(ars.REFERENCE_FILE,),
        scenario=ars_md.md_scenario,
        rows=ars_md.ars_md_rows,
        table=ars.ars_table,
        summary=ars.ars_summary,
        json_key="ars-ironwolf8-md",
        title="Ars Technica, 8 x IronWolf 12TB, md RAID + ext4 (MiB/s or ratio; zsim vs the "
        "rule of thumb)",
        points=ars_md_points,
        tolerance=ars.TOLERANCE,
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
        points=disksim_points,
        quick=True,
        tolerance=_frozen(
            {
                # |zsim mean − measured mean| ÷ measured mean, every drive
                "mean_access_time": 0.30,
                # the goal on the write-through drives: demerit ≤ 15 % of the measured mean
                "write_through_goal": 0.15,
                # what the worst write-through drive reaches today (HP C2490A, 28.5 %; 35.0 %
                # before the read-ahead stopped for a nearer seek)
                "write_through_worst": 0.30,
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
        points=tnbench_points,
        quick=True,
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
        points=clemtibs_points,
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
        points=draid_points,
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
    names: Iterable[str] | None,
    *,
    seed: int = 1,
    target_ci: float = 0.03,
    progress: Progress | None = None,
) -> tuple[dict[str, Any], str]:
    """Run the named sets (None or empty: the default ones) in the registry's order: the
    JSON by each set's ``json_key``, and the printed tables one after another; telling
    ``progress`` when each starts and ends."""
    wanted = list(dict.fromkeys(names or DEFAULT_SETS))
    for name in wanted:
        reference_set(name)  # an unknown name is an error before anything runs
    chosen = [s for s in REFERENCE_SETS if s.name in wanted]
    tell = progress or Progress()
    data: dict[str, Any] = {}
    parts = []
    for i, s in enumerate(chosen, start=1):
        tell.start(i, len(chosen), s.name)
        start = time.perf_counter()
        rows = s.run(seed=seed, target_ci=target_ci)
        data[s.json_key] = s.to_json(rows)
        parts.append(s.text(rows))
        tell.done(i, len(chosen), SetRun(s, rows, s.points(rows), time.perf_counter() - start))
    return data, "\n\n".join(parts)


QUICK_SETS: tuple[str, ...] = tuple(s.name for s in REFERENCE_SETS if s.quick)


@dataclass(frozen=True)
class SetRun:
    """One set run for the report: its rows, their points and the wall seconds it took."""

    reference: ReferenceSet
    rows: list[Any]
    points: list[Point]
    seconds: float


class Progress:
    """What :func:`run_all` tells as it goes; the default tells nothing."""

    def start(self, index: int, total: int, name: str) -> None:
        """Set ``name``, the ``index``-th (from 1) of ``total``, starts."""

    def done(self, index: int, total: int, run: SetRun) -> None:
        """Set ``index`` of ``total`` is done."""


def run_all(
    names: Iterable[str],
    *,
    seed: int = 1,
    target_ci: float = 0.03,
    progress: Progress | None = None,
) -> list[SetRun]:
    """Run the named sets in the registry's order, each into its points, telling
    ``progress`` when each starts and ends."""
    wanted = list(dict.fromkeys(names))
    chosen = [reference_set(name) for name in wanted]  # unknown names fail before any runs
    chosen.sort(key=REFERENCE_SETS.index)
    tell = progress or Progress()
    runs = []
    for i, s in enumerate(chosen, start=1):
        tell.start(i, len(chosen), s.name)
        start = time.perf_counter()
        rows = s.run(seed=seed, target_ci=target_ci)
        run = SetRun(s, rows, s.points(rows), time.perf_counter() - start)
        tell.done(i, len(chosen), run)
        runs.append(run)
    return runs
