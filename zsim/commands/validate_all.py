"""``zsim validate --all [--quick] [--write] [--out-dir DIR]``: every reference set into one
report, ``docs/validation.md``, and the residuals file every answer's band comes from.

Which files are written (``zsim validate --help`` says the same):

* ``--all`` runs every registered set and writes both files;
* ``--all --quick`` runs only the quick sets (:data:`~zsim.validation.registry.QUICK_SETS`)
  and writes nothing unless ``--write`` is given, so a quick check never replaces the
  committed report with a partial one by accident;
* the files go to the checkout (``docs/validation.md``, ``calibration/reference/
  accuracy.toml``) unless ``--out-dir DIR`` names a folder for both (``validation.md`` and
  ``accuracy.toml``); an installed zsim without a checkout needs ``--out-dir``.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from zsim.errors import ZsimError
from zsim.validation.accuracy import ACCURACY_FILE
from zsim.validation.registry import QUICK_SETS, SET_NAMES, Progress, SetRun, run_all
from zsim.validation.report import ReportMeta, Summary, summarize, write_report
from zsim.version import __version__

# zsim/commands/validate_all.py: parents[2] is the checkout's root
CHECKOUT = Path(__file__).resolve().parents[2]


def _line(index: int, total: int, run: SetRun) -> str:
    return f"[{index}/{total}] {run.reference.name}: {len(run.points)} points, {run.seconds:.0f} s"


class PlainProgress(Progress):
    """``[2/5] tnbench: 8 points, 41 s`` on ``stream`` as each set ends."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def start(self, index: int, total: int, name: str) -> None:
        self.stream.write(f"[{index}/{total}] {name}: running\n")
        self.stream.flush()

    def done(self, index: int, total: int, run: SetRun) -> None:
        self.stream.write(_line(index, total, run) + "\n")
        self.stream.flush()

    def close(self) -> None:
        """Nothing to tidy up."""


class RichProgress(PlainProgress):
    """A rich progress bar over the sets (a terminal), with the same line as each ends."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        # rich is a development dependency: imported only here, where a terminal asks for it
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed} sets done"),
            TimeElapsedColumn(),
            console=Console(file=stream),
        )
        self.task = self.bar.add_task("validate", total=None)
        self.bar.start()

    def start(self, index: int, total: int, name: str) -> None:
        self.bar.update(self.task, total=total, description=f"running {name}")

    def done(self, index: int, total: int, run: SetRun) -> None:
        self.bar.console.print(_line(index, total, run), markup=False, highlight=False)
        self.bar.advance(self.task)

    def close(self) -> None:
        self.bar.stop()


def progress_for(stream: TextIO) -> PlainProgress:
    """rich's bar when ``stream`` is a terminal and rich is installed; plain lines otherwise."""
    if stream.isatty():
        try:
            return RichProgress(stream)
        except ImportError:
            pass
    return PlainProgress(stream)


def report_paths(out_dir: str | None) -> tuple[Path, Path]:
    """Where the report and the residuals go: ``out_dir`` or the checkout."""
    if out_dir is not None:
        folder = Path(out_dir)
        if not folder.is_dir():
            raise ZsimError(f"--out-dir {out_dir}: no such folder; create it first")
        return folder / "validation.md", folder / ACCURACY_FILE
    reference = CHECKOUT / "calibration" / "reference"
    if not (reference.is_dir() and (CHECKOUT / "docs").is_dir()):
        raise ZsimError("no zsim checkout to write the report into; give --out-dir DIR")
    return CHECKOUT / "docs" / "validation.md", reference / ACCURACY_FILE


def _summary_dict(s: Summary) -> dict[str, Any]:
    return {
        "class": s.name,
        "points": s.points,
        "mean_abs_error": s.mean_abs_error,
        "rel_error_p10": s.rel_error_p10,
        "rel_error_p90": s.rel_error_p90,
        "baseline_mean_abs_error": s.baseline_mean_abs_error,
    }


def _summary_text(summaries: list[Summary]) -> str:
    def pct(x: float | None) -> str:
        return "—" if x is None else f"{x:+.0%}"

    lines = [f"{'class':<46} {'points':>6} {'mean|err|':>9} {'p10':>6} {'p90':>6} {'thumb':>6}"]
    for s in summaries:
        thumb = "—" if s.baseline_mean_abs_error is None else f"{s.baseline_mean_abs_error:.0%}"
        lines.append(
            f"{s.name:<46} {s.points:>6} {s.mean_abs_error:>9.0%} {pct(s.rel_error_p10):>6} "
            f"{pct(s.rel_error_p90):>6} {thumb:>6}"
        )
    return "\n".join(lines)


def cmd_validate_all(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    if args.sets:
        raise ZsimError("--all runs every set: give set names or --all, not both")
    if args.write and not args.quick:
        raise ZsimError("--write goes with --quick (a full --all always writes)")
    write = args.write or not args.quick
    names = QUICK_SETS if args.quick else SET_NAMES
    paths = report_paths(args.out_dir) if write else None  # a bad --out-dir fails first
    progress = progress_for(sys.stderr)
    start = time.perf_counter()
    try:
        runs = run_all(names, seed=args.seed, target_ci=args.target_ci, progress=progress)
    finally:
        progress.close()
    seconds = time.perf_counter() - start
    points = [p for run in runs for p in run.points]
    meta = ReportMeta(
        sets=tuple(run.reference.name for run in runs),
        date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        version=__version__,
        seconds=seconds,
        seed=args.seed,
        quick=args.quick,
    )
    written = [] if paths is None else write_report(points, meta, *paths)
    summaries = summarize(points, lambda p: p.klass)
    data: dict[str, Any] = {run.reference.json_key: run.reference.to_json(run.rows) for run in runs}
    data["report"] = {
        "sets": list(meta.sets),
        "points": len(points),
        "seconds": seconds,
        "classes": [_summary_dict(s) for s in summaries],
        "written": [str(p) for p in written],
    }
    parts = [run.reference.text(run.rows) for run in runs]
    parts.append(f"By prediction class ({len(points)} points)\n{_summary_text(summaries)}")
    if written:
        parts.append("wrote " + " and ".join(str(p) for p in written))
    else:
        parts.append("nothing written (--quick without --write)")
    return data, "\n\n".join(parts)
