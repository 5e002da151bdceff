"""The ``zsim`` command line. It only parses arguments, calls the API and prints.

Exit codes: 0 success; 2 bad input (one line on stderr, no traceback); 1 an internal error
(a bug: one line asking for a report, the traceback only with ``ZSIM_DEBUG=1``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from zsim.version import __version__
from zsim.capacity import PARTITIONINGS, CapacityReport, capacity
from zsim.errors import ZsimError
from zsim.hardware.catalog import SCHEMA, list_profiles, load_profile
from zsim.layout.grammar import parse_layout, to_compact, to_zpool
from zsim.layout.tree import ZfsLayout
from zsim.sweep.layouts import RAIDZ_MAX_WIDTH
from zsim.units import (
    format_binary_size,
    format_decimal_size,
    format_rate,
    format_size,
    format_time,
    parse_rate,
    parse_size,
    parse_time,
)
from zsim.zfs.version import CURRENT


class _UsageError(ZsimError):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{message} (see '{self.prog} --help')")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="zsim",
        description="Performance and capacity simulator for ZFS pools and conventional RAID.",
    )
    parser.add_argument("--version", action="version", version=f"zsim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    cap = sub.add_parser(
        "capacity",
        help="usable space of a layout, byte-exact against OpenZFS",
        description="Usable capacity of a pool layout: zpool list SIZE, zfs list USED+AVAIL, "
        "slop, per-vdev breakdown, and the effective capacity for a recordsize.",
    )
    cap.add_argument("layout", help="layout, e.g. '2x raidz2 6' or 'raidz2 sda sdb sdc sdd'")
    size = cap.add_mutually_exclusive_group(required=True)
    size.add_argument("--disk-size", help="bytes per disk: '12TB', '10.9TiB' or an integer")
    size.add_argument("--disk", metavar="MODEL", help="take the size from a catalog profile")
    cap.add_argument("--ashift", default="12", help="log2 sector size, 9…16 (default 12)")
    cap.add_argument("--recordsize", default="128K", help="for effective capacity (default 128K)")
    cap.add_argument("--compress-ratio", default="1.0", help="assumed compression ratio (≥ 1)")
    cap.add_argument("--zfs-version", default=CURRENT, help=f"OpenZFS release (default {CURRENT})")
    cap.add_argument(
        "--partitioning",
        choices=PARTITIONINGS,
        default="linux",
        help="'linux': zpool create on whole Linux disks (default); 'none': devices as given",
    )
    cap.add_argument("--log-size", help="size of each log device (default: --disk-size)")
    cap.add_argument("--special-size", help="size of each special/dedup device")
    cap.add_argument("--cache-size", help="size of each cache device")
    cap.add_argument("--json", action="store_true", help="print the JSON document")

    sim = sub.add_parser(
        "simulate",
        help="predict what fio or dd measures on a pool (discrete-event engine)",
        description="Run a scenario TOML (DESIGN.md §4) through an engine and print bandwidth, "
        "IOPS, latency and the limiting resource.",
    )
    sim.add_argument("scenario", help="scenario TOML file")
    sim.add_argument("--engine", choices=("des", "analytic", "baseline"), default="des")
    sim.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    _set_option(sim, "override one scenario key, e.g. --set pool.recordsize=1M (repeatable)")
    sim.add_argument("--target-ci", type=float, default=0.02, help="stop at this 95%% CI")
    sim.add_argument(
        "--max-sim",
        type=float,
        default=600.0,
        help="cap in simulated seconds (default 600); a run it stops is the same on every machine",
    )
    sim.add_argument(
        "--max-wall",
        type=float,
        default=60.0,
        help="wall-time cap, seconds (default 60); a run it stops depends on the machine's speed",
    )
    sim.add_argument("--json", action="store_true", help="print the JSON document")

    res = sub.add_parser(
        "resilver",
        help="how long a resilver (rebuild) takes, and the risk of losing data meanwhile",
        description="Simulate the resilver the scenario's [resilver] table describes (which "
        "disk fails, how the data was written) at pool.fill, with the durability figures of "
        "[durability] (docs/resilver.md, docs/durability.md).",
    )
    res.add_argument("scenario", help="scenario TOML file")
    res.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    _set_option(res, "override one scenario key, e.g. --set resilver.disk=sdc (repeatable)")
    res.add_argument(
        "--no-durability", action="store_true", help="skip the loss-probability Monte Carlo"
    )
    res.add_argument("--json", action="store_true", help="print the JSON document")

    cal = sub.add_parser(
        "calibrate",
        help="measure real hardware with fio and dd, and fit a profile to the results",
        description="plan: write fio job files and dd commands for a device, file or folder; "
        "run: run a plan with the real fio (resumable); fit: fit a device profile to the "
        "results. See docs/calibration.md.",
    )
    csub = cal.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    cplan = csub.add_parser("plan", help="write the fio jobs and dd commands that measure a device")
    cplan.add_argument("--target", required=True, help="a block device, a file or a folder")
    cplan.add_argument("--kind", choices=("single-disk", "pool"), default="single-disk")
    cplan.add_argument("--out", required=True, metavar="DIR", help="folder to write the plan to")
    cplan.add_argument("--size", help="bytes of the target to use ('4GiB'); a device: all")
    cplan.add_argument("--runtime", help="each timed job's run time ('20s')")
    cplan.add_argument("--ramp", help="each timed job's ramp time, not measured ('2s')")
    cplan.add_argument("--depths", help="queue depths of the 4 KiB sweeps, e.g. 1,2,4,8,16,32")
    cplan.add_argument("--large-depths", help="queue depths of the 64 KiB and 1 MiB sweeps")
    cplan.add_argument("--long-write", help="bytes of the long sequential write ('64GiB')")
    cplan.add_argument("--rate", help="cap every job at this rate ('200MB/s'): a slow disk")
    cplan.add_argument("--rate-iops", help="cap every job at this many IOPS")
    cplan.add_argument("--no-writes", action="store_true", help="read-only plan")
    cplan.add_argument("--no-dd", action="store_true", help="leave out the dd runs")
    cplan.add_argument(
        "--destroy-data",
        action="store_true",
        help="allow writing to a device that holds a filesystem or data (it is destroyed)",
    )
    cplan.add_argument("--json", action="store_true")
    crun = csub.add_parser("run", help="run a plan with the real fio and dd (resumes)")
    crun.add_argument("plan_dir", metavar="PLAN_DIR")
    crun.add_argument("--fio", help="path of the fio binary (default: fio on PATH)")
    crun.add_argument("--only", help="run only these steps (comma-separated names)")
    crun.add_argument("--json", action="store_true")
    cfit = csub.add_parser("fit", help="fit a device profile to fio/dd results")
    cfit.add_argument("results", nargs="+", metavar="RESULTS", help="result files or folders")
    cfit.add_argument("--out", required=True, metavar="FILE", help="profile TOML to write")
    cfit.add_argument("--name", help="profile name (default: the file name)")
    cfit.add_argument("--kind", choices=("hdd", "ssd", "nvme"), help="default: from the data")
    cfit.add_argument("--device-size", help="the device's size, when no plan says it")
    cfit.add_argument("--cpu-ghz", type=float, default=3.0, help="host clock, GHz (default 3)")
    cfit.add_argument(
        "--scenario",
        metavar="TOML",
        help="the results are pool-level runs on this scenario's pool: fit the host's CPU-cost "
        "multipliers instead of a device, and write the scenario with them to --out",
    )
    cfit.add_argument(
        "--base",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a profile key the data cannot give, e.g. pcie_gen=4, rpm=7200 (repeatable)",
    )
    cfit.add_argument("--json", action="store_true")

    from zsim.validation.registry import DEFAULT_SETS, SET_NAMES, sets_help

    val = sub.add_parser(
        "validate",
        help="predicted vs measured on the bundled reference sets, with errors",
        description="Run the bundled published measurements through zsim and the rule of "
        "thumb and print every error. " + sets_help(),
    )
    val.add_argument(
        "sets",
        nargs="*",
        metavar="SET",
        help=f"reference sets to run: {', '.join(SET_NAMES)} "
        f"(default: {' '.join(DEFAULT_SETS)})",
    )
    val.add_argument("--seed", type=int, default=1)
    val.add_argument("--target-ci", type=float, default=0.03)
    val.add_argument(
        "--profile",
        metavar="NAME",
        help="validate a (fitted) profile instead: the positional arguments are then fio/dd "
        "result files or folders, each predicted with this profile",
    )
    val.add_argument(
        "--scenario",
        metavar="TOML",
        help="with --profile: the pool the results were measured on (default: the bare "
        "device, layout 'raw 1')",
    )
    val.add_argument("--plot", metavar="PNG", help="with --profile: write predicted vs measured")
    val.add_argument("--engine", choices=("des", "analytic"), default="des", help="with --profile")
    val.add_argument(
        "--no-loo", action="store_true", help="with --profile: skip leave-one-out refits"
    )
    val.add_argument("--json", action="store_true")

    lay = sub.add_parser(
        "layout",
        help="parse a layout and print it in both spellings",
        description="Check a layout and print its compact and zpool create spellings.",
    )
    lay.add_argument("layout")
    lay.add_argument("--json", action="store_true")

    swp = sub.add_parser(
        "sweep",
        help="every sensible layout of N disks × workloads: capacity, speed, cost in one table",
        description="Enumerate the layouts of N disks (stripe, mirrors, raidz1-3 at every "
        "width that divides N or leaves ≤ 3 hot spares, dRAID), run each workload on each "
        "through an engine, and print one table: usable TB and TiB, fault tolerance, cost, "
        "MB/s or IOPS per workload. docs/sweep.md lists the columns.",
    )
    _sweep_options(swp)
    swp.add_argument(
        "--out", metavar="FILE", help="also write the table to FILE.csv or FILE.json (atomically)"
    )
    swp.add_argument(
        "--resilver",
        action="store_true",
        help="also simulate each layout's resilver time and loss probability (1-10 s per "
        "layout; --set pool.fill=0.8, --set durability.afr=0.02 apply)",
    )

    rec = sub.add_parser(
        "recommend",
        help="the Pareto front of a sweep under constraints, with a reason for each pick",
        description="Sweep the layouts of N disks, keep those that meet the constraints, and "
        "print the Pareto front over usable space, each workload's speed, fault tolerance, "
        "with --resilver the probability of data loss, and cost, each pick with a short "
        "reason.",
    )
    _sweep_options(rec)
    rec.add_argument(
        "--resilver",
        action="store_true",
        help="also simulate each feasible layout's resilver and loss probability and make "
        "P(data loss) an objective (1-10 s per layout)",
    )
    rec.add_argument(
        "--min-usable",
        metavar="SIZE",
        help="least usable space (zfs list USED+AVAIL): '100TB' (10^12) or '90TiB' (2^40)",
    )
    rec.add_argument(
        "--min-fault-tolerance", metavar="N", help="least number of disk failures to survive"
    )
    rec.add_argument("--max-cost", metavar="USD", help="most to spend on all disks, USD")

    mod = sub.add_parser(
        "models",
        help="list the hardware catalog, or show one profile",
        description="List catalog profiles (models/), or show one with its sources.",
    )
    mod.add_argument("name", nargs="?", help="profile to show")
    mod.add_argument("--kind", choices=("hdd", "ssd", "nvme", "hba"))
    mod.add_argument("--json", action="store_true")
    return parser


def _set_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--set KEY=VALUE`` (repeatable): scenario overrides, as ``apply_overrides`` reads them."""
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=help_text)


def _sweep_options(p: argparse.ArgumentParser) -> None:
    """Options shared by ``sweep`` and ``recommend`` (``zsim.sweep.table.sweep``)."""
    p.add_argument("--disks", metavar="N[,M...]", help="disk counts, e.g. 24 or 24,36")
    p.add_argument(
        "--disk",
        metavar="MODEL[,MODEL...]",
        required=True,
        help="catalog disk models ('zsim models' lists them) or profile TOML paths",
    )
    p.add_argument(
        "--workload",
        action="append",
        default=[],
        metavar="NAME[,NAME...]",
        help="workloads: vm-16k, db-8k-sync, media-1m-read, backup-1m-write, 4k-randread, "
        "4k-randwrite, or names from --workloads-file (default: all of them)",
    )
    p.add_argument("--workloads-file", metavar="FILE", help="TOML of [workload.NAME] tables")
    p.add_argument(
        "--engine",
        choices=("analytic", "des", "baseline", "auto"),
        default="analytic",
        help="analytic (default), des (seconds per scenario), baseline (the rule of thumb) "
        "or auto (analytic where valid, des for the rest)",
    )
    p.add_argument(
        "--price",
        action="append",
        default=[],
        metavar="MODEL=USD",
        help="price per disk, USD (overrides the catalog's; repeatable)",
    )
    p.add_argument("--ashift", help="log2 sector size for every pool (default 12)")
    p.add_argument(
        "--recordsize", help="recordsize for every workload (default: each workload's own)"
    )
    _set_option(p, "override a scenario key for every point, e.g. --set hardware.hba=lsi-9300-8i")
    p.add_argument(
        "--layouts", metavar="L1;L2", help="compare these layouts (';'-separated) instead"
    )
    p.add_argument(
        "--max-width",
        type=int,
        default=RAIDZ_MAX_WIDTH,
        help=f"widest raidz vdev to enumerate (default {RAIDZ_MAX_WIDTH})",
    )
    p.add_argument(
        "--results", metavar="FILE.jsonl", help="results file; an interrupted sweep resumes"
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Dask scheduler, e.g. tcp://host:8786 (default: local processes, or "
        "$DASK_SCHEDULER_ADDRESS)",
    )
    p.add_argument("--workers", type=int, help="local worker processes")
    p.add_argument("--seed", type=int, default=1, help="base seed (default 1)")
    p.add_argument("--json", action="store_true", help="print the JSON document")


def _sweep_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "disks": args.disks,
        "disk": args.disk,
        "workloads": [w for item in args.workload for w in item.split(",")],
        "workloads_file": args.workloads_file,
        "engine": args.engine,
        "prices": args.price,
        "ashift": args.ashift,
        "recordsize": args.recordsize,
        "overrides": args.set,
        "layouts": args.layouts,
        "max_width": args.max_width,
        "results": args.results,
        "scheduler": args.scheduler,
        "workers": args.workers,
        "seed": args.seed,
    }


def _cmd_sweep(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from zsim.sweep.table import sweep

    table = sweep(**_sweep_kwargs(args), out=args.out, resilver=args.resilver)
    text = table.text()
    if args.out:
        text += f"\nwrote {args.out}"
    return table.to_dict(), text


def _cmd_recommend(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from zsim.sweep.recommend import recommend

    result = recommend(
        **_sweep_kwargs(args),
        min_usable=args.min_usable,
        min_fault_tolerance=args.min_fault_tolerance,
        max_cost=args.max_cost,
        resilver=args.resilver,
    )
    return result.to_dict(), result.text()


def _compress_ratio(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ZsimError(f"--compress-ratio {text!r} is not a number; give e.g. 1.6") from None
    return value


def _cmd_capacity(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    logical_sector = 512
    if args.disk:
        profile = load_profile(args.disk)
        if profile.kind == "hba":
            raise ZsimError(f"--disk {args.disk!r} is an HBA; give a disk or SSD profile")
        disk_size: int | str = profile.size_bytes
        logical_sector = profile.logical_sector_bytes
    else:
        disk_size = args.disk_size
    class_sizes = {}
    for vclass, value in (
        ("log", args.log_size),
        ("special", args.special_size),
        ("dedup", args.special_size),
        ("cache", args.cache_size),
    ):
        if value is not None:
            class_sizes[vclass] = value  # noqa: PERF403 (a loop reads better with the filter)
    report = capacity(
        args.layout,
        disk_size,
        ashift=args.ashift,
        recordsize=args.recordsize,
        compress_ratio=_compress_ratio(args.compress_ratio),
        zfs_version=args.zfs_version,
        partitioning=args.partitioning,
        logical_sector=logical_sector,
        class_disk_size=class_sizes,
    )
    return report.to_dict(), _capacity_text(report)


def _capacity_text(r: CapacityReport) -> str:
    lines = [f"layout      {r.layout}"]
    if r.system == "zfs":
        lines.append(f"zpool form  zpool create tank {r.zpool_form}")
        lines.append(
            f"OpenZFS     {r.zfs_version}, ashift {r.ashift} "
            f"({format_binary_size(1 << (r.ashift or 9))} sectors), "
            f"partitioning: {r.partitioning}"
        )
    elif r.system == "md":
        lines.append(f"mdadm       mdadm --create /dev/md0 {r.zpool_form}")
    ndisks = round(r.raw_bytes / r.disk_bytes) if r.disk_bytes else 0
    lines.append(
        f"disks       {ndisks} × {format_size(r.disk_bytes)} = {format_size(r.raw_bytes)} raw"
    )
    if r.support_raw_bytes:
        lines.append(
            f"support     {format_size(r.support_raw_bytes)} of special/log/cache/spare devices"
        )
    lines.append("")
    if r.system in ("zfs", "zpool-on"):
        lines.append(f"zpool list SIZE      {format_size(r.zpool_size_bytes)}")
        lines.append(
            f"zfs USED+AVAIL       {format_size(r.usable_bytes)}   ({r.efficiency:.1%} of raw)"
        )
        lines.append(f"slop (reserved)      {format_size(r.slop_bytes)}")
        if r.embedded_log_bytes or r.special_embedded_log_bytes:
            lines.append(
                f"embedded log         "
                f"{format_size(r.embedded_log_bytes + r.special_embedded_log_bytes)}"
            )
        if r.special_bytes:
            lines.append(f"special class        {format_size(r.special_bytes)} (not in AVAIL)")
        if r.log_bytes:
            lines.append(f"log class            {format_size(r.log_bytes)} (not in AVAIL)")
    else:
        lines.append(
            f"usable               {format_size(r.usable_bytes)}   ({r.efficiency:.1%} of raw)"
        )
    lines.append(
        f"effective            {format_size(r.effective_bytes)}   "
        f"of {format_binary_size(r.recordsize)} records at {r.compress_ratio:.2f}× compression "
        f"({r.effective_efficiency:.1%} of raw)"
    )
    lines.append(f"fault tolerance      {r.fault_tolerance} disk(s) per vdev")
    if r.vdevs:
        lines.append("")
        header = (
            "vdev",
            "class",
            "layout",
            "raw",
            "labels",
            "geometry",
            "redundancy",
            "padding",
            "emb.log",
            "slop",
            "usable",
            "metaslabs",
        )
        rows = [header]
        for v in r.vdevs:
            ms = (
                f"{v.metaslab_count} × {format_binary_size(1 << v.metaslab_shift)}"
                if v.metaslab_count
                else "-"
            )
            rows.append(
                (
                    str(v.index),
                    v.vclass,
                    v.layout,
                    *(
                        format_decimal_size(x)
                        for x in (
                            v.raw_bytes,
                            v.labels_bytes,
                            v.geometry_bytes,
                            v.redundancy_bytes,
                            v.padding_bytes,
                            v.embedded_log_bytes,
                            v.slop_bytes,
                            v.usable_bytes,
                        )
                    ),
                    ms,
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        lines.extend(
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows
        )
        lines.append("(sizes in decimal units: 1 TB = 10^12 B; the columns add up to raw)")
    lines.extend(f"note: {n}" for n in r.notes)
    return "\n".join(lines)


def _cmd_simulate(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from zsim.scenario import load_scenario
    from zsim.simulate import simulate

    if not 0 < args.target_ci < 1:
        raise ZsimError(f"--target-ci {args.target_ci} must be between 0 and 1, e.g. 0.02")
    if args.max_wall <= 0:
        raise ZsimError(f"--max-wall {args.max_wall} must be more than 0 seconds")
    if args.max_sim <= 0:
        raise ZsimError(f"--max-sim {args.max_sim} must be more than 0 seconds")
    scenario = load_scenario(args.scenario, overrides=args.set)
    result = simulate(
        scenario,
        engine=args.engine,
        seed=args.seed,
        target_ci=args.target_ci,
        max_sim_seconds=args.max_sim,
        max_wall_seconds=args.max_wall,
    )
    return result.to_dict(), _simulate_text(result)


def _simulate_text(r: Any) -> str:
    sc = r.scenario
    lines = [
        f"scenario    {sc['pool']['layout']} of {sc['hardware']['disk_spec']}, "
        f"{_workload_text(sc['workload'])}",
        f"engine      {r.engine}" + (f", seed {r.seed}" if r.engine == "des" else ""),
        "",
        f"{'':<7}{'bandwidth':<32}{'IOPS':>10}  {'mean lat':>10}  {'p50':>10}  {'p99':>10}",
    ]
    for label, d in (("read", r.read), ("write", r.write)):
        if d.iops == 0:
            continue
        lines.append(
            f"{label:<7}{format_rate(d.bytes_per_s):<32}{d.iops:>10.0f}  "
            f"{format_time(d.latency_mean):>10}  {_maybe_time(d.latency_p50):>10}  "
            f"{_maybe_time(d.latency_p99):>10}"
        )
    lines.append("")
    lines.append(f"limit       {r.limit}")
    if r.utilization:
        top = sorted(r.utilization.items(), key=lambda kv: -kv[1])[:4]
        lines.append("busiest     " + ", ".join(f"{k} {v:.0%}" for k, v in top))
    if r.ci_rel is not None:
        lines.append(
            f"precision   ±{r.ci_rel:.1%} (95% CI of the I/O rate), "
            f"{r.sim_seconds:.1f} s simulated in {r.wall_seconds:.1f} s"
        )
    lines.extend(f"note: {n}" for n in r.notes)
    return "\n".join(lines)


def _maybe_time(seconds: float | None) -> str:
    """A latency, or "n/a" where the engine does not model it (analytic write percentiles)."""
    return "n/a" if seconds is None else format_time(seconds)


def _workload_text(w: dict[str, Any]) -> str:
    if w.get("tool") == "trace":
        return f"trace {w.get('file')} ({w.get('format')})"
    if w.get("tool") == "dd":
        return f"dd {w.get('direction')} bs={w.get('bs')} streams={w.get('streams', 1)}"
    return (
        f"fio {w.get('rw')} bs={w.get('bs')} numjobs={w.get('numjobs', 1)} "
        f"iodepth={w.get('iodepth', 1)}"
    )


def _cmd_resilver(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from zsim.resilver.run import simulate_resilver
    from zsim.scenario import load_scenario

    scenario = load_scenario(args.scenario, overrides=args.set)
    result = simulate_resilver(scenario, seed=args.seed, durability=not args.no_durability)
    return result.to_dict(), _resilver_text(result)


def _hours(seconds: float | None) -> str:
    return "—" if seconds is None else f"{format_time(seconds)} ({seconds / 3600:.2f} h)"


def _resilver_text(r: Any) -> str:
    sc = r.scenario
    lines = [
        f"scenario    {sc['pool']['layout']} of {sc['hardware']['disk_spec']}, "
        f"fill {sc['pool']['fill']:.0%}, {r.disk} fails",
    ]
    if r.lost:
        lines.append("resilver    none: the failed disk's data is lost (no redundancy)")
    else:
        lines += [
            f"method      {r.method}" + (f", {r.spare} spare" if r.system == "zfs" else ""),
            f"time        {_hours(r.seconds)}",
            f"resilvered  {format_size(r.bytes_resilvered)} at {format_rate(r.bytes_per_s)}",
            f"read        {format_size(r.bytes_read)} from the surviving disks",
            f"limit       {r.limit}",
        ]
        if r.scrub_seconds is not None:
            lines.append(f"scrub       {_hours(r.scrub_seconds)} (the whole pool)")
        if r.total_seconds is not None and r.total_seconds != r.seconds:
            lines.append(f"total       {_hours(r.total_seconds)} (rebuild, then its scrub)")
        if r.progress:
            marks = list(r.progress[1:])[:: max(1, len(r.progress) // 4)]
            shares = [f"{b / max(1, r.bytes_resilvered):.0%} at {t / 3600:.1f} h" for t, b in marks]
            lines.append("progress    " + ", ".join(shares))
    if r.under_load:
        u = r.under_load
        lines.append(f"under load  {_hours(u['seconds'])}, limit {u['limit']}")
        during = u.get("foreground_during")
        alone = u.get("foreground_alone")
        if during and alone:
            for d in ("read", "write"):
                if alone[d]["iops"]:
                    lines.append(
                        f"  workload {d}: {format_rate(during[d]['bytes_per_s'])} during vs "
                        f"{format_rate(alone[d]['bytes_per_s'])} alone"
                    )
    if r.durability:
        du = r.durability
        years = du["mission_seconds"] / (365.25 * 86400)
        lines += [
            f"durability  AFR {du['afr']:.2%}, {years:.0f} years: "
            f"P(loss) {du['loss_probability']:.3g} "
            f"(95% CI {du['loss_probability_ci95'][0]:.3g}…{du['loss_probability_ci95'][1]:.3g})",
            f"            P(unrecoverable block) {du['ure_probability']:.3g}; "
            f"MTTDL formula {du['mttdl_seconds'] / (365.25 * 86400):.3g} years → "
            f"P(loss) {du['mttdl_loss_probability']:.3g}",
        ]
    lines.extend(f"note: {n}" for n in r.notes)
    return "\n".join(lines)


def _cmd_validate(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    if args.profile:
        from zsim.calibrate.commands import validate_command

        return validate_command(
            profile=args.profile,
            sets=args.sets,
            scenario=args.scenario,
            no_loo=args.no_loo,
            engine=args.engine,
            seed=args.seed,
            plot=args.plot,
        )
    if args.scenario or args.plot:
        raise ZsimError("--scenario and --plot go with --profile NAME; add it")
    from zsim.validation.registry import run_sets

    return run_sets(args.sets, seed=args.seed, target_ci=args.target_ci)


def _cmd_layout(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    tree = parse_layout(args.layout)
    data: dict[str, Any] = {
        "compact": to_compact(tree),
        "zpool_form": to_zpool(tree),
        "system": tree.system,
        "fault_tolerance": tree.fault_tolerance,
    }
    lines = [f"compact     {data['compact']}", f"zpool form  {data['zpool_form']}"]
    if isinstance(tree, ZfsLayout):
        data["vdevs"] = [
            {"class": v.vclass, "type": v.type_word(), "devices": list(v.devices)}
            for v in tree.vdevs
        ]
        lines.extend(
            f"  {v.vclass:<8} {v.type_word():<24} {' '.join(v.devices)}" for v in tree.vdevs
        )
    return data, "\n".join(lines)


def _cmd_models(args: argparse.Namespace) -> tuple[Any, str]:
    if args.name:
        profile = load_profile(args.name)
        data = profile.to_dict()
        lines = [f"{profile.name}: {profile.vendor or ''} {profile.model or ''} ({profile.kind})"]
        for key, value in data.items():
            if key in ("name", "sources", "kind"):
                continue
            shown = _show_value(key, value)
            source = profile.source_of(key) if key not in ("vendor", "model") else None
            lines.append(f"  {key:<22} {shown}" + (f"   [{source}]" if source else ""))
        return data, "\n".join(lines)
    rows = []
    for name in list_profiles(args.kind):
        p = load_profile(name)
        rows.append(
            {
                "name": name,
                "kind": p.kind,
                "vendor": p.vendor,
                "model": p.model,
                "capacity_bytes": p.capacity_bytes or p.capacity,
            }
        )
    text = "\n".join(
        f"{r['name']:<32} {r['kind']:<5} {(r['vendor'] or '') + ' ' + (r['model'] or ''):<40} "
        + (format_size(r["capacity_bytes"]) if r["capacity_bytes"] else "")
        for r in rows
    )
    return rows, text


def _show_value(key: str, value: Any) -> str:
    parser = SCHEMA.get(key, (None,))[0]
    if parser is parse_size and isinstance(value, int):
        return format_size(value)
    if parser is parse_rate:
        return format_rate(value)
    if parser is parse_time:
        return format_time(value)
    return str(value)


def _cmd_calibrate(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from zsim.calibrate import commands

    if args.action is None:
        raise ZsimError("say what to do: zsim calibrate plan|run|fit (see --help)")
    if args.action == "plan":
        return commands.plan_command(
            target=args.target,
            out=args.out,
            kind=args.kind,
            destroy_data=args.destroy_data,
            size=args.size,
            runtime=args.runtime,
            ramp=args.ramp,
            depths=args.depths,
            large_depths=args.large_depths,
            long_write=args.long_write,
            rate=args.rate,
            rate_iops=args.rate_iops,
            no_writes=args.no_writes,
            no_dd=args.no_dd,
        )
    if args.action == "run":
        return commands.run_command(plan_dir=args.plan_dir, fio=args.fio, only=args.only)
    return commands.fit_command(
        results=args.results,
        out=args.out,
        name=args.name,
        kind=args.kind,
        device_size=args.device_size,
        cpu_ghz=args.cpu_ghz,
        scenario=args.scenario,
        base=args.base,
    )


_COMMANDS = {
    "capacity": _cmd_capacity,
    "calibrate": _cmd_calibrate,
    "simulate": _cmd_simulate,
    "resilver": _cmd_resilver,
    "validate": _cmd_validate,
    "layout": _cmd_layout,
    "models": _cmd_models,
    "sweep": _cmd_sweep,
    "recommend": _cmd_recommend,
}


def _join_negative_values(argv: Sequence[str]) -> list[str]:
    """``--disk-size -4TB`` → ``--disk-size=-4TB``, so the value reaches the unit parser and
    its message ("negative") instead of argparse's "expected one argument"."""
    out: list[str] = []
    for arg in argv:
        if (
            out
            and out[-1].startswith("--")
            and "=" not in out[-1]
            and arg[:2].startswith("-")
            and arg[1:2].isdigit()
        ):
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    try:
        args = parser.parse_args(_join_negative_values(sys.argv[1:] if argv is None else argv))
        if args.command is None:
            parser.print_help()
            return 2
        data, text = _COMMANDS[args.command](args)
        out = json.dumps(data, indent=2, allow_nan=False) if args.json else text
        sys.stdout.write(out + "\n")
        return 0
    except ZsimError as err:
        sys.stderr.write(f"zsim: error: {err}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("zsim: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as err:  # a bug, not bad input
        if os.environ.get("ZSIM_DEBUG"):
            raise
        sys.stderr.write(
            f"zsim: internal error: {type(err).__name__}: {err} — please report it "
            f"(ZSIM_DEBUG=1 shows the traceback)\n"
        )
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
