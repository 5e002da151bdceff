"""``zsim calibrate plan|run|fit`` and ``zsim validate``: their options as the calibration and
validation functions' arguments."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from zsim.calibrate import commands
from zsim.commands.validate_all import cmd_validate_all, progress_for
from zsim.errors import ZsimError
from zsim.validation.profile_command import validate_command
from zsim.validation.registry import run_sets


def cmd_validate(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    if args.profile:
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
    if args.all:
        return cmd_validate_all(args)
    if args.quick or args.write or args.out_dir:
        raise ZsimError("--quick, --write and --out-dir go with --all; add it")

    progress = progress_for(sys.stderr)
    try:
        return run_sets(args.sets, seed=args.seed, target_ci=args.target_ci, progress=progress)
    finally:
        progress.close()


def cmd_calibrate(args: argparse.Namespace) -> tuple[dict[str, Any], str]:

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
