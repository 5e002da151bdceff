"""The on-disk cache of measured tables (the analytic engine's device points, stream tables
and run replays, the resilver's scan rates, the HDD seek curves' fitted joints): where it
lives, how an entry is named, and the bound on its size.

Each entry is a deterministic (seeded) function of its key and of the model code it was
measured on, so processes (sweep workers, Dask workers, the app, the tests) share entries
through JSON files named ``{kind}-{revision}-{digest}.json``:

* ``kind``: which table (``point``, ``streams``, ``runs``, ``scan``, ``seek``);
* ``revision``: a hash of the source of the modules the measurement runs
  (:func:`source_revision`), so a change to the model's code measures anew;
* ``digest``: a hash of the key.

The cache never grows without bound. At a process's first store, and again each time it
has stored an eighth of the bound (at least 1 MiB) since, :func:`prune_cache` removes, of
the folder's entries (no other file in it is touched):

1. entries of a known kind measured on another revision of its code, and files of an older
   naming, once unused (not read or written) for :data:`STALE_AFTER` seconds — a second
   install of another version that shares the folder keeps what it uses today;
2. then, while the folder holds more than the bound, the least recently used entries, down
   to three quarters of it.

The modules that measure tables call :func:`load_or_measure` (the entry, else the one shipped
with zsim for this code revision, :mod:`zsim.shipped_tables`, else the measurement, stored);
they keep their own in-memory memo in front of it.

A read refreshes an entry's modification time, which is what "used" means here. A removed
or damaged entry is measured again; nothing else depends on a file being there.

``ZSIM_CACHE_DIR`` moves the folder (``off``: memory only); ``ZSIM_CACHE_MAX_MB`` sets the
bound in MiB (default :data:`DEFAULT_MAX_BYTES`; 0: nothing is written, what is there is
still read).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from zsim.errors import ZsimError
from zsim.files import atomic_write_text
from zsim.hardware.catalog import Profile
from zsim.shipped_tables import shipped_entry
from zsim.units import MiB

T = TypeVar("T")

#: bound on the folder's size, bytes; a full test run on one revision keeps ~100 MiB
DEFAULT_MAX_BYTES = 512 * MiB
#: an entry of another revision (or naming) goes once unused this long, s
STALE_AFTER = 24 * 3600.0
#: after pruning, the least recently used entries go until the folder holds this share
PRUNE_TO = 0.75

#: an entry's file name: kind, revision, digest (:func:`entry_path`)
ENTRY_FILE = re.compile(r"^([a-z]+)-([0-9a-f]{16})-([0-9a-f]{24})\.json$")
#: entries of the older naming (before zsim.table_cache): device tables and scan rates at the
#: top, stream tables under ``streams/``; nothing else in the folder is ever touched
_OLD_NAME = re.compile(r"^(scan-)?[0-9a-f]{24}\.json$")
_OLD_STREAMS = re.compile(r"^[0-9a-f]{24}\.json$")

#: kind → the modules its entries are measured on (registered by the modules that store)
_KINDS: dict[str, tuple[str, ...]] = {}
_LOCK = threading.Lock()
_STATE = {"stored": 0, "pruned": False}


def cache_dir() -> Path | None:
    """Where entries are kept: ``$ZSIM_CACHE_DIR``, else ``~/.cache/zsim/device-tables``;
    ``ZSIM_CACHE_DIR=off`` keeps them in memory only."""
    env = os.environ.get("ZSIM_CACHE_DIR")
    if env == "off":
        return None
    return Path(env) if env else Path.home() / ".cache" / "zsim" / "device-tables"


def max_cache_bytes() -> int:
    """The folder's bound, bytes: ``$ZSIM_CACHE_MAX_MB`` MiB, else :data:`DEFAULT_MAX_BYTES`."""
    env = os.environ.get("ZSIM_CACHE_MAX_MB")
    if not env:
        return DEFAULT_MAX_BYTES
    try:
        mib = float(env)
    except ValueError:
        mib = -1.0
    if not (math.isfinite(mib) and mib >= 0):
        raise ZsimError(
            f"ZSIM_CACHE_MAX_MB must be a number of MiB (0 or more), not {env!r}: set it to "
            f"e.g. 512, or unset it for the default ({DEFAULT_MAX_BYTES // MiB} MiB)"
        )
    return int(mib * MiB)


@functools.cache
def source_revision(modules: tuple[str, ...]) -> str:
    """A hash of the source of ``modules`` (paths under zsim/ without ``.py``: a module, or a
    package and every ``.py`` file in it), 16 hex digits."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for rel in modules:
        package = root / rel
        files = sorted(package.rglob("*.py")) if package.is_dir() else [root / f"{rel}.py"]
        for path in files:
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def register_kind(kind: str, modules: tuple[str, ...]) -> None:
    """Declare that entries of ``kind`` are measured on ``modules`` (their revision names
    the entries, and entries of other revisions of them are pruned)."""
    if not re.fullmatch(r"[a-z]+", kind):
        raise ValueError(f"a cache kind is lower-case letters, not {kind!r}")
    _KINDS[kind] = modules


_PROFILE_KEYS: dict[int, tuple[Profile, str]] = {}


def profile_key(profile: Profile) -> str:
    """A disk profile's identity in a cache key: its full contents (inline and fitted profiles
    may share a catalog name). Memoised per object; the object is kept so its id stays
    unique."""
    held = _PROFILE_KEYS.get(id(profile))
    if held is not None and held[0] is profile:
        return held[1]
    key = json.dumps(profile.to_dict(), sort_keys=True, default=str)
    _PROFILE_KEYS[id(profile)] = (profile, key)
    return key


def entry_name(kind: str, key: Sequence[Any]) -> tuple[str, str]:
    """(revision, digest) of the entry of ``kind`` (registered) for ``key``
    (JSON-serialisable): the revision of the code it is measured on and a hash of the key."""
    revision = source_revision(_KINDS[kind])
    digest = hashlib.sha256(json.dumps([kind, revision, *key]).encode()).hexdigest()[:24]
    return revision, digest


def entry_path(kind: str, key: Sequence[Any]) -> Path | None:
    """The file of the entry of ``kind`` (registered) for ``key`` (JSON-serialisable), or
    None when the cache is off."""
    base = cache_dir()
    if base is None:
        return None
    revision, digest = entry_name(kind, key)
    return base / f"{kind}-{revision}-{digest}.json"


def registered_kinds() -> dict[str, tuple[str, ...]]:
    """Each registered kind and the modules its entries are measured on."""
    return dict(_KINDS)


def load_entry(path: Path | None) -> Any:
    """The JSON an entry holds (and it counts as used now), or None: no cache, no entry, or
    a damaged one (measured again)."""
    if path is None:
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    # a read-only folder, or pruned meanwhile: the entry still serves
    with contextlib.suppress(OSError):
        os.utime(path)
    return data


def store_entry(path: Path | None, data: Any) -> None:
    """Write an entry atomically; prune the folder when it is due (module docstring)."""
    bound = max_cache_bytes()
    if path is None or bound == 0:
        return  # no disk cache (ZSIM_CACHE_DIR=off or ZSIM_CACHE_MAX_MB=0)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data)
        atomic_write_text(path, text)
    except OSError:
        return  # a read-only home: the in-memory caches still work
    with _LOCK:
        _STATE["stored"] += len(text)
        due = not _STATE["pruned"] or _STATE["stored"] >= max(bound / 8, MiB)
        if due:
            _STATE["pruned"] = True
            _STATE["stored"] = 0
    if due:
        prune_cache(path.parent, bound)


def load_or_measure(
    kind: str,
    key: Sequence[Any],
    measure: Callable[[], T],
    decode: Callable[[Any], T],
    encode: Callable[[T], Any],
) -> T:
    """The entry of ``kind`` for ``key``: ``decode`` of what the disk cache holds, else of
    the entry shipped with zsim (:mod:`zsim.shipped_tables`), else ``measure()``,
    stored as ``encode`` of it. An entry ``decode`` rejects (``KeyError``, ``TypeError``,
    ``ValueError``: damaged, or of another shape) is measured again."""
    path = entry_path(kind, key)
    data = load_entry(path)
    if data is None:  # (a shipped entry is not copied: the bundle stays where it is)
        data = shipped_entry(kind, *entry_name(kind, key))
    if data is not None:
        try:
            return decode(data)
        except (KeyError, TypeError, ValueError):
            pass  # measured again below
    value = measure()
    store_entry(path, encode(value))
    return value


@dataclass(frozen=True)
class PruneReport:
    """What :func:`prune_cache` found and removed: files and bytes."""

    files: int
    bytes: int
    removed_stale: int
    removed_lru: int
    removed_bytes: int


def prune_cache(
    base: Path | None = None, max_bytes: int | None = None, now: float | None = None
) -> PruneReport:
    """Bring the folder ``base`` (default :func:`cache_dir`) within ``max_bytes`` (default
    :func:`max_cache_bytes`) as the module docstring says. Safe beside other processes
    using the folder: a file another one removed first is skipped."""
    base = cache_dir() if base is None else base
    bound = max_cache_bytes() if max_bytes is None else max_bytes
    if base is None or not base.is_dir():
        return PruneReport(0, 0, 0, 0, 0)
    now = time.time() if now is None else now
    current = {kind: source_revision(mods) for kind, mods in _KINDS.items()}
    entries = []  # (mtime, size, path, stale)
    for path in _entries(base):
        try:
            st = path.stat()
        except OSError:
            continue
        m = ENTRY_FILE.match(path.name)
        if m is None:
            stale = True  # the older naming: never read again
        else:
            kind, revision = m.group(1), m.group(2)
            stale = kind in current and current[kind] != revision
        entries.append((st.st_mtime, st.st_size, path, stale))
    files, total = len(entries), sum(e[1] for e in entries)
    left = total
    removed_stale = removed_lru = 0
    keep = []
    for mtime, size, path, stale in entries:
        if stale and now - mtime > STALE_AFTER and _remove(path):
            removed_stale += 1
            left -= size
        else:
            keep.append((mtime, size, path))
    if left > bound:
        keep.sort(key=lambda e: e[0])
        for _, size, path in keep:
            if left <= PRUNE_TO * bound:
                break
            if _remove(path):
                removed_lru += 1
                left -= size
    return PruneReport(files, total, removed_stale, removed_lru, total - left)


def _entries(base: Path) -> list[Path]:
    """The folder's cache entries, of either naming; any other file is left alone."""
    found = [p for p in base.glob("*.json") if ENTRY_FILE.match(p.name) or _OLD_NAME.match(p.name)]
    streams = base / "streams"
    if streams.is_dir():
        found += [p for p in streams.glob("*.json") if _OLD_STREAMS.match(p.name)]
    return found


def _remove(path: Path) -> bool:
    """Remove ``path``; True when it is gone (another process may have removed it first)."""
    try:
        path.unlink()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True
