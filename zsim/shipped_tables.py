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
gives — the measurements are seeded and deterministic; the test answers the app's default
design from the bundles alone and again with them off, and compares the figures.
``ZSIM_SHIPPED_TABLES=off`` turns them off (to time or check the measurement itself).
"""

from __future__ import annotations

import functools
import io
import json
import os
import threading
import zipfile
import zlib
from pathlib import Path
from typing import Any

from zsim.errors import ZsimError

#: where the bundles live (inside the package: the wheel ships them)
SHIPPED_DIR = Path(__file__).resolve().parent / "measured_tables"
#: the kinds the preset sweeps and the app's default designs measure: each has a bundle
SHIPPED_KINDS = ("point", "streams", "runs", "logs", "logbursts")
#: deflate level of the bundles' entries (fixed: the same entries give the same bytes)
COMPRESS_LEVEL = 6

#: what a damaged bundle or entry raises when read: it is then measured instead
_DAMAGED = (KeyError, ValueError, EOFError, OSError, zipfile.BadZipFile, zlib.error)
#: ZipFile's reads share one file position and count its users outside their own lock
_READ_LOCK = threading.Lock()


def shipped_enabled() -> bool:
    """Whether the bundles serve: ``ZSIM_SHIPPED_TABLES`` unset, ``on`` or ``off``."""
    value = os.environ.get("ZSIM_SHIPPED_TABLES", "").strip().lower()
    if value not in ("", "on", "off"):
        raise ZsimError(
            f"ZSIM_SHIPPED_TABLES must be 'on' or 'off', not {value!r}: set it to off to "
            f"measure every table, or unset it"
        )
    return value != "off"


def bundle_path(kind: str, revision: str) -> Path:
    """The bundle of ``kind`` measured on code ``revision``."""
    return SHIPPED_DIR / f"{kind}-{revision}.zip"


@functools.cache
def load_bundle(kind: str, revision: str) -> zipfile.ZipFile | None:
    """The bundle of ``kind`` on ``revision`` (read into memory once per process; an entry
    is unpacked when asked for: a sweep worker needs a few hundred of the bundle's entries,
    and parsing all of them cost ~0.8 s), or None when there is none."""
    try:
        return zipfile.ZipFile(io.BytesIO(bundle_path(kind, revision).read_bytes()))
    except _DAMAGED:
        return None  # none for this revision (or damaged): measured as without bundles


def shipped_entry(kind: str, revision: str, digest: str) -> Any:
    """The shipped entry of ``kind`` on ``revision`` named ``digest``, or None."""
    if not shipped_enabled():
        return None
    bundle = load_bundle(kind, revision)
    if bundle is None:
        return None
    try:
        with _READ_LOCK:
            raw = bundle.read(f"{digest}.json")
        return json.loads(raw)
    except _DAMAGED:
        return None  # not shipped (or damaged): measured


def read_bundle(path: Path) -> dict[str, Any]:
    """Every entry of the bundle file ``path`` by digest (for the script that writes them)."""
    with zipfile.ZipFile(path) as bundle:
        return {n.removesuffix(".json"): json.loads(bundle.read(n)) for n in bundle.namelist()}


def write_bundle(path: Path, entries: dict[str, Any]) -> None:
    """Write a bundle byte-for-byte reproducibly on a given zlib (entries in digest order,
    one fixed time stamp, system and permissions, :data:`COMPRESS_LEVEL`)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    with zipfile.ZipFile(tmp, "w") as out:
        for digest in sorted(entries):
            info = zipfile.ZipInfo(f"{digest}.json", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # unix, wherever it is written
            info.external_attr = 0o644 << 16
            text = json.dumps(entries[digest], separators=(",", ":"))
            out.writestr(info, text, compresslevel=COMPRESS_LEVEL)
    tmp.replace(path)
