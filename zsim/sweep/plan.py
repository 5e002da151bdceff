"""A sweep's plan: its inputs resolved and its capacity rows computed, before any engine runs.

:func:`plan_sweep` is step 1 of :func:`zsim.sweep.table.sweep` (see :mod:`zsim.sweep.table`):
disk profiles and prices, workloads, the base scenario with ``--ashift``/``--recordsize``/
``--set`` applied and validated once per (disk, workload), the layouts
(:func:`zsim.sweep.layouts.enumerate_layouts`, or the explicit list) and every (layout, disk,
count) row's capacity (:func:`zsim.capacity`) and cost. The table's columns and their units
(:data:`UNITS`, :func:`columns_for`) are defined here too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zsim.capacity import capacity
from zsim.errors import ZsimError
from zsim.hardware.catalog import DEVICE_KINDS, Profile, load_profile
from zsim.layout.grammar import parse_layout, to_compact
from zsim.layout.tree import ZfsLayout, ZpoolOnBlock
from zsim.scenario import apply_overrides, scenario_from_dict
from zsim.sweep.layouts import MAX_HOT_SPARES, RAIDZ_MAX_WIDTH, enumerate_layouts
from zsim.sweep.point import scenario_input
from zsim.sweep.resilver import RESILVER_COLUMNS
from zsim.sweep.workloads import WorkloadSpec, resolve_workloads
from zsim.units import TB, TiB, parse_ashift, parse_size
from zsim.version import __version__
from zsim.zfs.version import parse_zfs_version

ENGINES = ("analytic", "des", "baseline", "auto")
DEFAULT_ENGINE = "analytic"

LAYOUT_COLUMNS: tuple[str, ...] = ("layout", "disk", "disks", "vdevs", "spares")
CAPACITY_COLUMNS: tuple[str, ...] = (
    "raw_bytes",
    "usable_bytes",
    "usable_tb",
    "usable_tib",
    "efficiency",
)
#: Durability facts known from the layout alone; the simulated ones (resilver time, loss
#: probability) follow them when asked for (:mod:`zsim.sweep.resilver`).
DURABILITY_COLUMNS: tuple[str, ...] = ("fault_tolerance",)
COST_COLUMNS: tuple[str, ...] = ("price_usd", "price_source", "cost_usd", "usd_per_usable_tb")
#: Per-workload columns, named ``<workload>.<metric>``.
WORKLOAD_METRICS: tuple[str, ...] = (
    "bytes_per_s",
    "iops",
    "latency_mean_s",
    "latency_p99_s",
    "limit",
    "usd_per_iops",
    "ci_rel",
    "seed",
    "error",
    "accuracy",
    "engine",
    "declined",
)
#: What each column holds, in which unit (``docs/sweep.md`` prints this table).
UNITS: dict[str, str] = {
    "layout": "compact layout grammar (DESIGN.md §3)",
    "disk": "disk model (catalog name or profile)",
    "disks": "devices in the pool, spares included",
    "vdevs": "data (normal-class) top-level vdevs",
    "spares": "hot spare disks + dRAID distributed spares",
    "raw_bytes": "bytes, all disks",
    "usable_bytes": "bytes, zfs list USED+AVAIL of the empty pool",
    "usable_tb": "TB = 10^12 bytes",
    "usable_tib": "TiB = 2^40 bytes",
    "efficiency": "usable_bytes / raw_bytes",
    "fault_tolerance": "disks that may fail, whichever they are, without data loss",
    "price_usd": "USD per disk",
    "price_source": "catalog | command line | empty (no price known)",
    "cost_usd": "USD, all disks",
    "usd_per_usable_tb": "USD per usable TB (10^12 bytes)",
    "W.bytes_per_s": "bytes/s, read + write",
    "W.iops": "I/O operations per second, read + write",
    "W.latency_mean_s": "seconds, mean over reads and writes (empty: engine gives none)",
    "W.latency_p99_s": "seconds, the slower direction's 99th percentile (empty: none given)",
    "W.limit": "the resource that bounds the result",
    "W.usd_per_iops": "USD per I/O per second",
    "W.ci_rel": "95% CI half-width / mean (des only)",
    "W.seed": "the point's seed",
    "W.error": "why the engine gave no figures for this point (empty: it did)",
    "W.accuracy": "{class, points, rel_error_p10, rel_error_p90, engine}: the band of errors "
    "measured on validation points of the prediction's class (p10/p90 empty below 5 points; "
    "CSV: compact JSON)",
    "W.engine": "the engine that answered this point: analytic | des | baseline (on an error, "
    "the one asked)",
    "W.declined": "true when the analytic engine's validity range leaves the point out (then "
    "W.error says why; --engine auto answers it with the DES)",
    "engine": "analytic | des | baseline | auto (the sweep's choice; W.engine: which answered)",
}

_FORBIDDEN_SETS = {
    "pool.layout": "the sweep varies the layout; list layouts with --layouts instead",
    "hardware.disk": "the sweep varies the disk; list disk models with --disk instead",
    "pool.failed": "degraded pools name devices of one layout; use 'zsim simulate' for them",
    "resilver.disk": "a failed disk is a device of one layout; use 'zsim resilver' for it",
}


def columns_for(workloads: Sequence[str], resilver: bool = False) -> list[str]:
    """The table's columns, in order, for these workload names (``resilver``: with the
    resilver and durability columns)."""
    extra = list(RESILVER_COLUMNS) if resilver else []
    cols = [*LAYOUT_COLUMNS, *CAPACITY_COLUMNS, *DURABILITY_COLUMNS, *extra, *COST_COLUMNS]
    for w in workloads:
        cols.extend(f"{w}.{m}" for m in WORKLOAD_METRICS)
    cols.append("engine")
    return cols


# ---------------------------------------------------------------- inputs


@dataclass(frozen=True)
class DiskChoice:
    """One disk model of a sweep, with its price per disk (USD) and where that came from."""

    spec: str
    profile: Profile
    price_usd: float | None
    price_source: str | None

    @property
    def name(self) -> str:
        """The name shown in the table: the catalog name, or the profile file's stem."""
        return self.profile.name if self.profile.name != "inline" else self.spec


def parse_price(text: str) -> tuple[str, float]:
    """``"MODEL=USD"`` (``"wd-red-plus-12tb=249.99"``, ``$`` allowed) → (model, USD)."""
    model, sep, value = str(text).partition("=")
    model, value = model.strip(), value.strip().removeprefix("$").strip()
    if value.lower().endswith("usd"):
        value = value[:-3].strip()
    if not sep or not model or not value:
        raise ZsimError(f"--price {text!r}: write MODEL=USD, e.g. --price wd-red-plus-12tb=250")
    try:
        usd = float(value)
    except ValueError:
        raise ZsimError(
            f"--price {text!r}: {value!r} is not a number of US dollars; write e.g. {model}=250"
        ) from None
    if not math.isfinite(usd) or usd <= 0:
        raise ZsimError(f"--price {text!r}: a price must be more than 0 USD, e.g. {model}=250")
    return model, usd


def _prices(prices: Mapping[str, float] | Iterable[str] | None) -> dict[str, float]:
    if prices is None:
        return {}
    if isinstance(prices, Mapping):
        out = {}
        for model, usd in prices.items():
            _, out[model] = parse_price(f"{model}={usd}")
        return out
    if isinstance(prices, str):
        prices = [prices]
    return dict(parse_price(p) for p in prices)


def _disk_choices(disks: Sequence[str], prices: dict[str, float]) -> list[DiskChoice]:
    out: list[DiskChoice] = []
    for spec in dict.fromkeys(disks):
        profile = load_profile(spec)
        if profile.kind not in DEVICE_KINDS:
            raise ZsimError(
                f"--disk {spec!r} is an {profile.kind.upper()} profile, not a disk; give a disk or "
                f"SSD such as 'seagate-ironwolf-12tb' ('zsim models' lists them)"
            )
        if spec in prices or profile.name in prices:
            price, source = prices.get(spec, prices.get(profile.name)), "command line"
        elif profile.price_usd is not None:
            price, source = profile.price_usd, "catalog"
        else:
            price, source = None, None
        out.append(DiskChoice(spec, profile, price, source))
    known = {d.spec for d in out} | {d.profile.name for d in out}
    stray = [m for m in prices if m not in known]
    if stray:
        raise ZsimError(
            f"--price names {stray[0]!r}, which is not a swept disk; price one of "
            f"{', '.join(d.spec for d in out)}"
        )
    return out


def _as_list(value: Any, what: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, int):
        return [value]
    if isinstance(value, Iterable):
        return list(value)
    raise ZsimError(f"{what} {value!r} is not a list; give e.g. [24, 36]")


def _counts(disks: Any) -> list[int]:
    out: list[int] = []
    for item in _as_list(disks, "--disks"):
        text = str(item).strip()
        if isinstance(item, bool) or not text.isdigit() or int(text) < 1:
            raise ZsimError(
                f"--disks {item!r}: give whole numbers of disks ≥ 1, e.g. --disks 24,36"
            )
        out.append(int(text))
    return list(dict.fromkeys(out))


def _device_count(tree: Any) -> int:
    """Devices a parsed layout uses (data, support and spares)."""

    return len(tree.block.devices if isinstance(tree, ZpoolOnBlock) else tree.devices)


# ---------------------------------------------------------------- the plan


@dataclass
class SweepPlan:
    """A sweep's resolved inputs and its capacity rows, before any engine runs.

    ``rows`` are the table rows without workload figures, in grid order (disk model, then
    disk count, then layout); ``scenarios[(disk, workload)]`` the validated base scenario
    tables with ``pool.layout`` left to fill; ``inputs`` what the JSON output records.
    """

    inputs: dict[str, Any]
    disks: list[DiskChoice]
    workloads: list[WorkloadSpec]
    engine: str
    seed: int
    rows: list[dict[str, Any]]
    scenarios: dict[tuple[str, str], dict[str, Any]]
    notes: list[str] = field(default_factory=list)


def _base_overrides(
    ashift: int | str | None, recordsize: int | str | None, overrides: Sequence[str]
) -> list[str]:
    out = []
    if ashift is not None:
        out.append(f"pool.ashift={parse_ashift(ashift)}")
    if recordsize is not None:
        out.append(f"pool.recordsize={parse_size(recordsize)}")
    for text in overrides:
        target = str(text).partition("=")[0].strip()
        if target in _FORBIDDEN_SETS:
            raise ZsimError(f"--set {text!r}: {_FORBIDDEN_SETS[target]}")
        out.append(str(text))
    return out


def _base_scenario(
    disk: DiskChoice, work: WorkloadSpec, overrides: list[str]
) -> tuple[Any, dict[str, Any]]:
    """The validated scenario for one (disk, workload) and its tables (layout: a stand-in)."""

    pool: dict[str, Any] = {"layout": "stripe 1"}
    if work.recordsize is not None:
        pool["recordsize"] = work.recordsize
    hardware = {"disk": _inline_profile(disk.profile)}
    data = {"hardware": hardware, "pool": pool, "workload": dict(work.workload)}
    source = f"sweep ({disk.name}, workload {work.name})"
    try:
        data = apply_overrides(data, overrides)
    except ZsimError as err:
        raise ZsimError(f"--set: {err}") from None
    sc = scenario_from_dict(data, source=source)
    return sc, scenario_input(sc)


def _inline_profile(profile: Profile) -> dict[str, Any]:
    """A profile's figures as an inline table (SI units, sources left out).

    Points carry their disk inline rather than by catalog name: they run the same where the
    catalog differs (a Dask worker), a results file's resume keys change when a profile's
    figures do, and no point reads a profile file.
    """
    return {k: v for k, v in profile.to_dict().items() if k not in ("name", "sources")}


def plan_sweep(
    disks: int | str | Sequence[int] | None = None,
    disk: str | Sequence[str] | None = None,
    workloads: str | Sequence[str] | None = None,
    *,
    workloads_file: str | Path | None = None,
    engine: str = DEFAULT_ENGINE,
    prices: Mapping[str, float] | Iterable[str] | None = None,
    ashift: int | str | None = None,
    recordsize: int | str | None = None,
    overrides: Sequence[str] = (),
    layouts: str | Sequence[str] | None = None,
    max_width: int = RAIDZ_MAX_WIDTH,
    max_spares: int = MAX_HOT_SPARES,
    seed: int = 1,
) -> SweepPlan:
    """Resolve a sweep's inputs and compute its capacity rows (see :func:`sweep`)."""

    if engine not in ENGINES:
        raise ZsimError(f"unknown engine {engine!r}; use one of {', '.join(ENGINES)}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ZsimError(f"seed {seed!r} must be a whole number ≥ 0")
    models = _as_list(disk, "--disk")
    if not models:
        raise ZsimError("no disk model given; name one with --disk, e.g. seagate-ironwolf-12tb")
    choices = _disk_choices(models, _prices(prices))
    works = resolve_workloads(_as_list(workloads, "--workload"), workloads_file)
    counts = _counts(disks)
    explicit = [
        s.strip() for s in (layouts.split(";") if isinstance(layouts, str) else layouts or [])
    ]
    explicit = list(dict.fromkeys(s for s in explicit if s))
    if not counts and not explicit:
        raise ZsimError("give the number of disks with --disks N (or the layouts with --layouts)")
    overrides_all = _base_overrides(ashift, recordsize, overrides)

    scenarios: dict[tuple[str, str], dict[str, Any]] = {}
    for d in choices:
        for w in works:
            sc, scenarios[(d.name, w.name)] = _base_scenario(d, w, overrides_all)
    # Pool and hardware settings are the same for every (disk, workload) but the recordsize,
    # which capacity's zfs list figures do not depend on.
    pool, hardware = sc.pool, sc.hardware
    has_draid = parse_zfs_version(hardware.zfs_version).at_least(2, 1)

    grid: list[tuple[int, str]] = []  # (disks, layout)
    notes: list[str] = []
    if explicit:
        for text in explicit:
            tree = parse_layout(text)
            n = _device_count(tree)
            if counts and n not in counts:
                raise ZsimError(
                    f"--layouts {text!r} uses {n} disks but --disks says "
                    f"{', '.join(map(str, counts))}; drop --disks or fix the layout"
                )
            grid.append((n, to_compact(tree)))
    else:
        include = (
            ("stripe", "mirror", "raidz", "draid") if has_draid else ("stripe", "mirror", "raidz")
        )
        if not has_draid:
            notes.append(f"no dRAID layouts: OpenZFS {hardware.zfs_version} predates dRAID (2.1)")
        for n in counts:
            found = enumerate_layouts(
                n, max_width=max_width, include=include, max_spares=max_spares
            )
            if not found:
                raise ZsimError(f"no layout fits {n} disks; use more disks")
            grid.extend((n, text) for text in found)

    rows: list[dict[str, Any]] = []
    for d in choices:
        size = d.profile.size_bytes
        for n, text in grid:
            report = capacity(
                text,
                size,
                ashift=pool.ashift,
                recordsize=pool.recordsize,
                zfs_version=hardware.zfs_version,
                partitioning=pool.partitioning,
                logical_sector=d.profile.logical_sector_bytes,
            )
            rows.append(_capacity_row(text, d, n, report))
    inputs = {
        "disks": counts or sorted({n for n, _ in grid}),
        "disk_models": [
            {
                "name": d.name,
                "spec": d.spec,
                "size_bytes": d.profile.size_bytes,
                "price_usd": d.price_usd,
                "price_source": d.price_source,
            }
            for d in choices
        ],
        "workloads": {w.name: w.to_dict() for w in works},
        "engine": engine,
        "seed": seed,
        "ashift": pool.ashift,
        "recordsize": None if recordsize is None else parse_size(recordsize),
        "set": list(overrides),
        "layouts": [t for _, t in grid] if explicit else None,
        "max_width": max_width,
        "max_spares": max_spares,
        "zfs_version": hardware.zfs_version,
        "zsim_version": __version__,
    }
    return SweepPlan(inputs, choices, works, engine, seed, rows, scenarios, notes)


def _capacity_row(text: str, disk: DiskChoice, n: int, report: Any) -> dict[str, Any]:
    raw = report.raw_bytes + report.support_raw_bytes
    usable = report.usable_bytes
    normal = [v for v in report.vdevs if v.vclass == "normal"]
    spares = sum(1 for v in report.vdevs if v.vclass == "spare")
    spares += _draid_spares(text)
    cost = disk.price_usd * n if disk.price_usd is not None else None
    return {
        "layout": text,
        "disk": disk.name,
        "disks": n,
        "vdevs": len(normal) or 1,
        "spares": spares,
        "raw_bytes": raw,
        "usable_bytes": usable,
        "usable_tb": usable / TB,
        "usable_tib": usable / TiB,
        "efficiency": usable / raw if raw else 0.0,
        "fault_tolerance": report.fault_tolerance,
        "price_usd": disk.price_usd,
        "price_source": disk.price_source,
        "cost_usd": cost,
        "usd_per_usable_tb": cost / (usable / TB) if cost is not None and usable else None,
    }


def _draid_spares(text: str) -> int:

    tree = parse_layout(text)
    if not isinstance(tree, ZfsLayout):
        return 0
    return sum(v.nspares for v in tree.data_vdevs if v.kind == "draid")
