"""The ``zsim`` command line. It only parses arguments, calls the API and prints.

This module holds the parser and :func:`main`; each command's handler (options → API call →
data and text) is in :mod:`zsim.commands`.

Exit codes: 0 success; 2 bad input (one line on stderr, no traceback); 1 an internal error
(a bug: one line asking for a report, the traceback only with ``ZSIM_DEBUG=1``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from zsim.capacity import PARTITIONINGS
from zsim.errors import ZsimError
from zsim.sweep.layouts import RAIDZ_MAX_WIDTH
from zsim.table_cache import max_cache_bytes
from zsim.validation.registry import DEFAULT_SETS, QUICK_SETS, SET_NAMES, sets_help
from zsim.version import __version__
from zsim.zfs.version import CURRENT


class _UsageError(ZsimError):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{message} (see '{self.prog} --help')")


def _seed(text: str) -> int:
    """argparse type of ``--seed``: a whole number 0 ≤ seed < 2**63 in ASCII digits."""
    if not (text.isascii() and text.isdigit() and len(text) <= 19):
        raise argparse.ArgumentTypeError(
            f"{text[:30]!r} is not a seed; give a whole number from 0 to 2**63 - 1, e.g. 1"
        )
    return int(text)


def _whole(text: str) -> int:
    """argparse type of a whole-number option: ASCII digits, at most 9 of them."""
    if not (text.isascii() and text.isdigit() and len(text) <= 9):
        raise argparse.ArgumentTypeError(f"{text[:30]!r} is not a whole number; give e.g. 4")
    return int(text)


def _finite(text: str) -> float:
    """argparse type of a number option: a finite number (no nan, no inf)."""
    try:
        value = float(text) if text.isascii() else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text[:30]!r} is not a finite number; give e.g. 60")
    return value


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
    cap.add_argument(
        "--fill-at-attach",
        default="0",
        help="expanded raidz ('raidz2 6+2'): how full the pool was at each zpool attach, "
        "e.g. 0.8 or 80%% (default 0: empty)",
    )
    cap.add_argument(
        "--attached-back-to-back",
        action="store_true",
        help="with --fill-at-attach: the pool was that full at the first attach only, and "
        "nothing was written between the attaches (each moved the same data)",
    )
    cap.add_argument("--json", action="store_true", help="print the JSON document")

    sim = sub.add_parser(
        "simulate",
        help="predict what fio or dd measures on a pool (discrete-event engine)",
        description="Run a scenario TOML (DESIGN.md §4) through an engine and print bandwidth, "
        "IOPS, latency and the limiting resource.",
    )
    sim.add_argument("scenario", help="scenario TOML file")
    sim.add_argument("--engine", choices=("des", "analytic", "baseline"), default="des")
    sim.add_argument("--seed", type=_seed, default=1, help="random seed (default 1)")
    _set_option(sim, "override one scenario key, e.g. --set pool.recordsize=1M (repeatable)")
    sim.add_argument("--target-ci", type=_finite, default=0.02, help="stop at this 95%% CI")
    sim.add_argument(
        "--max-sim",
        type=_finite,
        default=600.0,
        help="cap in simulated seconds (default 600); a run it stops is the same on every machine",
    )
    sim.add_argument(
        "--max-wall",
        type=_finite,
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
    res.add_argument("--seed", type=_seed, default=1, help="random seed (default 1)")
    _set_option(res, "override one scenario key, e.g. --set resilver.disk=sdc (repeatable)")
    res.add_argument(
        "--no-durability", action="store_true", help="skip the loss-probability Monte Carlo"
    )
    res.add_argument(
        "--engine",
        choices=("des", "analytic", "auto"),
        default="des",
        help="des: the scan simulated in windows (default); analytic: the same scan solved "
        "with formulas (milliseconds; refuses what it does not model); auto: analytic where "
        "it answers, else des",
    )
    res.add_argument("--json", action="store_true", help="print the JSON document")

    grw = sub.add_parser(
        "grow",
        help="grow a pool: RAIDZ expansion (zpool attach) or an added vdev (zpool add)",
        description="The scenario's pool grown by --attach N disks (RAIDZ expansion, OpenZFS "
        "2.3+) or --add-vdev LAYOUT: space before and after (SIZE, zfs list USED+AVAIL, real, "
        "after rewrite), the reflow time on the discrete-event engine, and the workload's "
        "speed before and after on the analytic engine (docs/grow.md).",
    )
    grw.add_argument("scenario", help="scenario TOML file (the pool as it is now)")
    how = grw.add_mutually_exclusive_group()
    how.add_argument("--attach", type=_whole, metavar="N", help="disks to attach, one by one")
    how.add_argument("--add-vdev", metavar="LAYOUT", help="vdev(s) to add, e.g. 'raidz2 6'")
    grw.add_argument(
        "--vdev", type=_whole, default=0, help="with --attach: which data vdev, from 0 (default 0)"
    )
    grw.add_argument("--new-disk-size", help="size of each new disk (default: the profile's)")
    grw.add_argument("--under-load", action="store_true", help="also the reflow under the workload")
    grw.add_argument("--no-reflow", action="store_true", help="space and speed only, no DES")
    grw.add_argument(
        "--des",
        action="store_true",
        help="also run the workload before and after on the discrete-event engine (bounded)",
    )
    grw.add_argument("--seed", type=_seed, default=1, help="random seed (default 1)")
    _set_option(grw, "override one scenario key, e.g. --set pool.fill=0.8 (repeatable)")
    grw.add_argument("--json", action="store_true", help="print the JSON document")

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
    cfit.add_argument("--cpu-ghz", type=_finite, default=3.0, help="host clock, GHz (default 3)")
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
        help=f"reference sets to run: {', '.join(SET_NAMES)} (default: {' '.join(DEFAULT_SETS)})",
    )
    val.add_argument("--seed", type=_seed, default=1)
    val.add_argument("--target-ci", type=_finite, default=0.03)
    val.add_argument(
        "--all",
        action="store_true",
        help="run every set (progress on stderr) and write the validation report: "
        "docs/validation.md (every point, per-class and per-set summaries) and "
        "calibration/reference/accuracy.toml (the residuals per prediction class that give "
        "every simulate and sweep answer its band)",
    )
    val.add_argument(
        "--quick",
        action="store_true",
        help=f"with --all: only the quick sets ({', '.join(QUICK_SETS)}); writes nothing "
        "unless --write is given, so the committed report is never replaced by a partial one",
    )
    val.add_argument(
        "--write", action="store_true", help="with --all --quick: write the report files too"
    )
    val.add_argument(
        "--out-dir",
        metavar="DIR",
        help="with --all: write validation.md and accuracy.toml into DIR instead of the "
        "checkout (needed when zsim is installed without one)",
    )
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
        help="also simulate each layout's resilver time and loss probability (the analytic "
        "scan where it answers, else 1-10 s of DES per layout; --set pool.fill=0.8, --set "
        "durability.afr=0.02 apply)",
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
        "P(loss) an objective (the analytic scan where it answers, else 1-10 s per layout)",
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
        type=_whole,
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
    p.add_argument("--workers", type=_whole, help="local worker processes")
    p.add_argument("--seed", type=_seed, default=1, help="base seed (default 1)")
    p.add_argument("--json", action="store_true", help="print the JSON document")


#: each command's handler as (module in :mod:`zsim.commands`, function), imported when that
#: command runs: calibration and validation pull in scipy.optimize (~0.3 s), which
#: ``zsim capacity`` and the sweep's worker processes (they start by importing this module)
#: need not pay
_COMMANDS: dict[str, tuple[str, str]] = {
    "capacity": ("capacity", "cmd_capacity"),
    "calibrate": ("calibrate", "cmd_calibrate"),
    "simulate": ("simulate", "cmd_simulate"),
    "resilver": ("simulate", "cmd_resilver"),
    "grow": ("grow", "cmd_grow"),
    "validate": ("calibrate", "cmd_validate"),
    "layout": ("catalog", "cmd_layout"),
    "models": ("catalog", "cmd_models"),
    "sweep": ("sweep", "cmd_sweep"),
    "recommend": ("sweep", "cmd_recommend"),
}


def _handler(command: str) -> Callable[[argparse.Namespace], tuple[Any, str]]:
    module, function = _COMMANDS[command]
    handler: Callable[[argparse.Namespace], tuple[Any, str]] = getattr(
        importlib.import_module(f"zsim.commands.{module}"), function
    )
    return handler


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
        max_cache_bytes()  # a bad ZSIM_CACHE_MAX_MB is named before any work starts
        data, text = _handler(args.command)(args)
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
