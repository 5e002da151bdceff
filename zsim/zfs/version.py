"""OpenZFS releases, for the rules and defaults that changed between them.

``zfs_version`` in a scenario or ``--zfs-version`` on the command line accepts ``"2.2"``,
``"2.1.5"``, ``"0.8"``, ``"0.6.4"`` or ``"master"`` (the development branch after the
newest release, 2.4.99 here). A pool's capacity depends on the release that *created* it
(metaslab size is fixed at creation), so that is the release to give.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from zsim.errors import ZsimError

#: The newest OpenZFS release zsim knows the rules of; the default everywhere.
CURRENT = "2.4"
#: What "master" means: the development branch the golden vectors were made from.
MASTER = (2, 4, 99)
_OLDEST = (0, 6, 0)


@dataclass(frozen=True, order=True)
class ZfsVersion:
    """An OpenZFS release as (major, minor, patch); compare with ``>=``: ``v >= (2, 1)``."""

    major: int
    minor: int
    patch: int = 0

    @property
    def key(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def at_least(self, *release: int) -> bool:
        padded = (*release, 0, 0)[:3]
        return self.key >= padded

    def __str__(self) -> str:
        if self.key == MASTER:
            return "master (2.4.99)"
        return f"{self.major}.{self.minor}.{self.patch}"


def parse_zfs_version(text: str | ZfsVersion | float | None) -> ZfsVersion:
    """Parse ``"2.2"`` / ``"2.1.5"`` / ``"master"``; ``None`` means :data:`CURRENT`."""
    if isinstance(text, ZfsVersion):
        return text
    if text is None:
        text = CURRENT
    raw = str(text).strip().lower().removeprefix("v").removeprefix("zfs-")
    if raw in ("master", "main", "head"):
        return ZfsVersion(*MASTER)
    match = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+))?", raw)
    if match is None:
        raise ZsimError(
            f"zfs_version {text!r} is not a release number; write e.g. '2.2', '2.1.5' or 'master'"
        )
    version = ZfsVersion(int(match.group(1)), int(match.group(2)), int(match.group(3) or 0))
    if version.key < _OLDEST or version.key > MASTER:
        raise ZsimError(
            f"zfs_version {text!r} is outside what zsim models (0.6.0 … 2.4 and 'master')"
        )
    return version


# Layout features and the first OpenZFS release that has them (release notes: 0.8.0
# allocation classes, 2.1.0 dRAID). Pool-property features are checked in zsim.scenario.
LAYOUT_FEATURES: tuple[tuple[str, str, tuple[int, int], str], ...] = (
    ("dRAID", "draid", (2, 1), "raidz"),
    ("special and dedup vdevs", "special/dedup", (0, 8), "a layout without them"),
    ("RAIDZ expansion", "expansion", (2, 3), "a raidz created at its full width"),
)


def check_layout_features(layout: Any, version: ZfsVersion) -> None:
    """Raise :class:`ZsimError` if ``layout`` (a ZFS layout) uses what ``version`` lacks."""
    uses = {
        "draid": any(v.kind == "draid" for v in layout.vdevs),
        "special/dedup": bool(layout.of_class("special", "dedup")),
        "expansion": any(v.attached for v in layout.vdevs),
    }
    for what, key, release, instead in LAYOUT_FEATURES:
        if uses[key] and not version.at_least(*release):
            needed = ".".join(str(n) for n in release)
            raise ZsimError(
                f"{what} need{'' if what.endswith('vdevs') else 's'} OpenZFS {needed} or later, "
                f"not {version}; set zfs_version ≥ {needed} or use {instead}"
            )
