"""The measured tables shipped with zsim: what a fresh install answers from without measuring.

The analytic engine's tables (device points, stream tables, run replays, log tables) are
measured by the DES on first use and kept in the disk cache (:mod:`zsim.table_cache`); a
cold sweep of 24 disks spends ~30 s measuring them. The entries that the everyday questions
need — ``zsim sweep`` of the preset workloads and the app's default designs on the catalog's
default disk, as ``tools/ship_tables.py`` lists them — are measured once by that script on
the same code and shipped here, one zip bundle per kind and code revision:
``measured_tables/{kind}-{revision}.zip``, holding ``{digest}.json`` under the cache's own
names (kind, :func:`zsim.table_cache.source_revision`, key digest).

A bundle serves only the revision it was measured on: once the model's code changes, its
entries no longer match any name and are measured as before (``tests/unit/test_shipped_tables.py``
fails until the script has measured them anew). They are the same numbers a measurement
gives — the measurements are seeded and deterministic, and the test re-measures scenarios
with the bundles off and compares. ``ZSIM_SHIPPED_TABLES=off`` turns them off (to time or
check the measurement itself).
"""

from __future__ import annotations

import functools
import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

#: where the bundles live (inside the package: the wheel ships them)
SHIPPED_DIR = Path(__file__).resolve().parent / "measured_tables"


def shipped_enabled() -> bool:
    """False when ``ZSIM_SHIPPED_TABLES=off``."""
    return os.environ.get("ZSIM_SHIPPED_TABLES", "").lower() != "off"


def bundle_path(kind: str, revision: str, base: Path | None = None) -> Path:
    """The bundle of ``kind`` measured on code ``revision``."""
    return (SHIPPED_DIR if base is None else base) / f"{kind}-{revision}.zip"


@functools.cache
def load_bundle(kind: str, revision: str) -> zipfile.ZipFile | None:
    """The bundle of ``kind`` on ``revision`` (read into memory once per process; an entry
    is unpacked when asked for: a sweep worker needs a few hundred of the bundle's entries,
    and parsing all of them cost ~0.8 s), or None when there is none."""
    try:
        return zipfile.ZipFile(io.BytesIO(bundle_path(kind, revision).read_bytes()))
    except (OSError, zipfile.BadZipFile):
        return None  # none for this revision (or damaged): measured as without bundles


def shipped_entry(kind: str, revision: str, digest: str) -> Any:
    """The shipped entry of ``kind`` on ``revision`` named ``digest``, or None."""
    if not shipped_enabled():
        return None
    bundle = load_bundle(kind, revision)
    if bundle is None:
        return None
    try:
        return json.loads(bundle.read(f"{digest}.json"))
    except (KeyError, ValueError, zipfile.BadZipFile):
        return None  # not shipped (or damaged): measured


def write_bundle(path: Path, entries: dict[str, Any]) -> None:
    """Write a bundle byte-for-byte reproducibly (entries in digest order, one fixed time
    stamp), so a kind whose code did not change gives the same file again."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    with zipfile.ZipFile(tmp, "w") as out:
        for digest in sorted(entries):
            info = zipfile.ZipInfo(f"{digest}.json", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            out.writestr(info, json.dumps(entries[digest], separators=(",", ":")))
    tmp.replace(path)
