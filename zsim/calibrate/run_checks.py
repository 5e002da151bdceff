"""The checks :func:`~zsim.calibrate.run.run_plan` makes before it lets fio or dd write: the
target must look as the plan recorded it (or as zsim's last step left it — size, identity and
the sha256 of its first MiB, :func:`recheck_target`), a block device must not be in use
(:func:`recheck_device`); and the partial files of a killed run are removed
(:func:`clean_parts`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path

from zsim.calibrate.devices import block_device_in_use, target_changes, target_state
from zsim.calibrate.plan import Plan, Step, TargetState, block_device_problems
from zsim.errors import ZsimError
from zsim.files import TEXT_LIMIT, atomic_write_text, read_text

#: ``results/.target-state``: the target's state after the last step, as JSON (``state``), and
#: the step being run (``running``, None between steps): what the next step compares with.
STATE_FILE = ".target-state"
_REPLAN = (
    "check that nothing else uses it, then re-plan with `zsim calibrate plan` "
    "(add --destroy-data only if its data may be lost)"
)


def clean_parts(results_dir: Path) -> tuple[str, ...]:
    """Remove the ``.*.part`` files a killed run left in ``results/``; their names."""
    removed = []
    for part in sorted(results_dir.glob(".*.part")):
        with contextlib.suppress(OSError):
            part.unlink()
            removed.append(part.name)
    return tuple(removed)


def current_state(plan: Plan) -> TargetState:
    try:
        return target_state(plan.data_path)
    except OSError as err:
        raise ZsimError(
            f"cannot read {plan.data_path} to check it before writing ({err.strerror}); "
            "check the path and permissions"
        ) from None


def expected_state(plan: Plan, results_dir: Path) -> tuple[TargetState, bool]:
    """What the target should look like now: as the last step of an earlier run left it
    (``results/.target-state``), else as planned; and whether that run was stopped in a step
    (then only the target's identity is compared: the step's writes are half done)."""
    assert plan.target_state is not None  # run_plan refuses plans without one
    path = results_dir / STATE_FILE
    if not path.exists():
        return plan.target_state, False
    try:
        doc = json.loads(read_text(path, limit=TEXT_LIMIT, what="target state"))
        state = TargetState(**doc["state"])
        running = doc["running"]
        if not isinstance(running, (str, type(None))):
            raise TypeError(running)
    except (ValueError, TypeError, KeyError, RecursionError):
        raise ZsimError(
            f"{path} is damaged; delete it and re-create the plan with `zsim calibrate plan`"
        ) from None
    return state, running is not None


def save_state(results_dir: Path, state: TargetState, *, running: str | None) -> None:
    doc = {"state": state.__dict__, "running": running}
    atomic_write_text(results_dir / STATE_FILE, json.dumps(doc) + "\n")


def recheck_target(plan: Plan, step: Step, expected: TargetState, *, identity_only: bool) -> None:
    """Refuse to run ``step`` when the target is not as the plan (or zsim's last step) left
    it: created, deleted, replaced, resized or written to by something else."""
    changes = target_changes(
        expected,
        current_state(plan),
        block=plan.target_type == "block",
        identity_only=identity_only,
    )
    if changes:
        raise ZsimError(
            f"refusing to run step {step.name}: the target {plan.data_path} changed since "
            f"{'the plan was made' if expected == plan.target_state else 'zsim last used it'} "
            f"({'; '.join(changes)}); {_REPLAN}"
        )


def recheck_device(plan: Plan, pending: Sequence[Step]) -> None:
    """Refuse to write to a block device that is in use (mounted, swap, held) — always — or
    that gained a filesystem since planning (unless the plan allowed destroying it)."""
    if plan.target_type != "block" or not any(step.writes for step in pending):
        return
    name = plan.device_name or Path(plan.target).name
    in_use = block_device_in_use(name)
    if in_use:
        raise ZsimError(
            f"refusing to write to {plan.target}: " + "; ".join(in_use) + "; unmount it, "
            "swapoff it or stop what holds it (--destroy-data does not override a device in "
            "use), or choose another device"
        )
    if plan.options.allow_destroy or not any(step.destructive for step in pending):
        return
    problems = block_device_problems(name)
    if problems:
        raise ZsimError(
            f"refusing to write to {plan.target}: " + "; ".join(problems) + "; it changed "
            "since the plan was made — re-plan with --destroy-data to overwrite it, or choose "
            "another device"
        )
