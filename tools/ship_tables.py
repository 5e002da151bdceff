"""Measure the tables zsim ships (zsim/measured_tables/, :mod:`zsim.shipped_tables`) anew.

Run after a change to the model's code, when ``tests/unit/test_shipped_tables.py`` says a
bundle is of another revision:

    python tools/ship_tables.py [--workers N]

It measures, with the bundles off and an empty cache folder, what the everyday questions
need (:func:`_measure`): ``zsim sweep`` of every preset workload on 8, 24 and 60 disks of the
catalog's default disk, and the app's Design page for its default design and the changes a
planner makes first (``benchmarks/bench_app.py``'s steps), resilver included, and the
Compare and How-vdevs-scale pages as they open; then writes one
bundle per kind and code revision and removes bundles of other revisions. A bundle whose
entries come out the same is left as it is (git sees no change). Takes ~3 minutes on two
cores.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DISK = "seagate-ironwolf-12tb"
SWEEP_DISKS = (8, 24, 60)
#: the How-vdevs-scale page's disk counts as it opens (up to 24, by 4)
SCALING_COUNTS = range(4, 25, 4)


def _measure(workers: int | None) -> None:
    import zsim
    from zsim.app import background, figures, scaling_model
    from zsim.app.design import DEFAULT_WORKLOADS, Design, sweep_rows
    from zsim.app.pages.compare_page import WORKLOADS as COMPARE_WORKLOADS

    for n in SWEEP_DISKS:
        start = time.perf_counter()
        zsim.sweep(n, DISK, workers=workers, progress=False)
        print(f"sweep {n} disks: {time.perf_counter() - start:.1f} s", flush=True)
    start = time.perf_counter()
    base = Design()
    designs = (
        base,
        base.replace(disks=24, layout="3x raidz2 8"),
        base.replace(disks=24, layout="3x raidz2 8", disk="wd-red-plus-12tb"),
        base.replace(
            disks=24,
            layout="3x raidz2 8",
            disk="wd-red-plus-12tb",
            workloads=(*DEFAULT_WORKLOADS, "4k-randwrite"),
        ),
    )
    for design in designs:
        for name in design.workloads:
            figures.fast_answer(design.scenario(name), zsim.simulate)
        background.fast_resilver(design.resilver_scenario().to_toml(), 1)
    print(f"app designs: {time.perf_counter() - start:.1f} s", flush=True)
    start = time.perf_counter()
    # the Compare page and the How-vdevs-scale page as they open (their defaults)
    sweep_rows(base, tuple(COMPARE_WORKLOADS), engine="analytic")
    scaling_model.scaling_rows(DISK, list(SCALING_COUNTS), scaling_model.direct_simulate)
    print(f"app compare and scaling pages: {time.perf_counter() - start:.1f} s", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="zsim-ship-") as tmp:
        # set before zsim is imported: the sweep's local worker processes inherit them (a
        # Dask cluster's workers would not: they measure into their own folders)
        os.environ["ZSIM_CACHE_DIR"] = tmp
        os.environ["ZSIM_SHIPPED_TABLES"] = "off"
        for name in ("ZSIM_CACHE_MAX_MB", "DASK_SCHEDULER_ADDRESS"):
            os.environ.pop(name, None)
        sys.path.insert(0, str(ROOT))
        _measure(args.workers)

        import json

        import zsim.resilver.scan_disk  # noqa: F401  (registers its kind)
        from zsim import table_cache
        from zsim.shipped_tables import (
            SHIPPED_DIR,
            SHIPPED_KINDS,
            bundle_path,
            read_bundle,
            write_bundle,
        )

        bundles: dict[tuple[str, str], dict[str, object]] = defaultdict(dict)
        for path in sorted(Path(tmp).iterdir()):
            m = table_cache.ENTRY_FILE.match(path.name)
            if m:
                kind, revision, digest = m.groups()
                bundles[(kind, revision)][digest] = json.loads(path.read_text())
    # check everything before a file is written or removed
    kinds = table_cache.registered_kinds()
    for kind, revision in bundles:
        current = table_cache.source_revision(kinds[kind]) if kind in kinds else "unregistered"
        if revision != current:
            raise SystemExit(f"{kind}: measured on {revision}, the code is {current}: none written")
    missing = set(SHIPPED_KINDS) - {kind for kind, _ in bundles}
    if missing:
        raise SystemExit(f"nothing measured of {sorted(missing)}; nothing written")
    SHIPPED_DIR.mkdir(exist_ok=True)
    keep = set()
    for (kind, revision), entries in sorted(bundles.items()):
        path = bundle_path(kind, revision)
        keep.add(path.name)
        same = path.exists() and read_bundle(path) == entries
        if not same:  # (an unchanged bundle keeps its bytes, whatever this zlib writes)
            write_bundle(path, entries)
        size = path.stat().st_size
        print(f"{path.relative_to(ROOT)}: {len(entries)} entries, {size} B"
              + (" (unchanged)" if same else ""))  # fmt: skip
    for old in SHIPPED_DIR.glob("*.zip"):
        if old.name not in keep:
            old.unlink()
            print(f"removed {old.relative_to(ROOT)} (another revision)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
