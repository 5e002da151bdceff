"""``zsim sweep`` and ``zsim recommend``: their options as :func:`zsim.sweep.table.sweep` and
:func:`zsim.sweep.recommend.recommend` arguments."""

from __future__ import annotations

import argparse
from typing import Any

from zsim.sweep.recommend import recommend
from zsim.sweep.table import sweep


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


def cmd_sweep(args: argparse.Namespace) -> tuple[dict[str, Any], str]:

    table = sweep(**_sweep_kwargs(args), out=args.out, resilver=args.resilver)
    text = table.text()
    if args.out:
        text += f"\nwrote {args.out}"
    return table.to_dict(), text


def cmd_recommend(args: argparse.Namespace) -> tuple[dict[str, Any], str]:

    result = recommend(
        **_sweep_kwargs(args),
        min_usable=args.min_usable,
        min_fault_tolerance=args.min_fault_tolerance,
        max_cost=args.max_cost,
        resilver=args.resilver,
    )
    return result.to_dict(), result.text()
