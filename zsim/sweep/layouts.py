"""Every layout a planner would consider for N identical disks, in the compact grammar.

:func:`enumerate_layouts` lists, for ``n_disks`` disks, in this order:

1. ``stripe N`` — no redundancy, the upper bound for space and speed.
2. ``K x mirror 2`` and ``K x mirror 3`` — two- and three-way mirrors.
3. ``K x raidzP W`` for P = 1, 2, 3 and every width W from P + 2 (raidz1 ≥ 3, raidz2 ≥ 4,
   raidz3 ≥ 5; a raidzP of P + 1 disks is legal but holds one disk of data, a mirror in
   disguise) up to ``max_width`` (default :data:`RAIDZ_MAX_WIDTH` = 16).
4. dRAID, one vdev over all N children: ``draidP:Dd:Ss:Nc`` for P = 1, 2, 3, D in
   :data:`DRAID_DATA` = (4, 8, 16) and S = 1 distributed spare (also S = 2 when N ≥ 40),
   wherever D + P + S ≤ N (``draid_config_by_type()`` in OpenZFS ``zpool_vdev.c``).

**Remainders.** When a width does not divide N (mirrors of 2 or 3 included), the disks left
over become hot spares: ``3x raidz2 7 spare 3`` for 24 disks, ``11x mirror 2 spare 1`` for
23. Only remainders of at most ``max_spares`` disks (default :data:`MAX_HOT_SPARES` = 3) are
kept; more idle disks than that is not a layout anyone builds. Two other ways to use a
remainder are deliberately *not* listed: vdevs of different widths (``2x raidz2 8 + raidz2 6``)
and a different vdev type (``3x raidz2 7 + mirror 2``). ``zpool create`` refuses both without
``-f`` ("mismatched replication level", ``get_replication()`` in ``zpool_vdev.c``), the mixed
type lowers the whole pool's fault tolerance to its weakest vdev, and unequal vdevs fill
unevenly. Give such layouts explicitly (``zsim sweep --layouts``) to compare them.

**Why raidz stops at 16 wide.** OpenZFS accepts 255 children, but the OpenZFS documentation's
RAIDZ page recommends 3 to 9 disks per raidz group for performance
(https://openzfs.github.io/openzfs-docs/Basic%20Concepts/RAIDZ.html), a raidz vdev does the
small-block IOPS of about one disk whatever its width, and a resilver reads every surviving
disk of the vdev. Planners go past ~12 only for archives; 16 keeps those in the table while
leaving out 24- or 60-wide single vdevs (pass ``max_width`` to widen). dRAID exists for wide
pools, so its children are always all N disks.

**Why D in {4, 8, 16}.** dRAID writes full stripes of D data sectors (no variable stripe
width, so every block is padded to a multiple of D sectors); with D a power of two a
128 KiB or 1 MiB record at ashift 9…12 fills whole rows. 8 is OpenZFS's default (``draid2``
alone means ``draid2:8d``), 4 the narrow choice for small pools and more IOPS, 16 the wide
one for capacity on large pools.

Every string returned parses with :func:`zsim.parse_layout` to a tree whose compact
spelling (:func:`zsim.layout.grammar.to_compact`) is the same string, and uses exactly
``n_disks`` devices. The order is deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable

from zsim.errors import ZsimError
from zsim.layout.grammar import MAX_DRAID_CHILDREN, MAX_RAIDZ_CHILDREN, vdev_group_text

#: Layout families :func:`enumerate_layouts` can include.
KINDS: tuple[str, ...] = ("stripe", "mirror", "raidz", "draid")
#: Widest raidz vdev enumerated by default (see the module docstring).
RAIDZ_MAX_WIDTH = 16
#: Most hot spares a remainder may leave (see the module docstring).
MAX_HOT_SPARES = 3
#: dRAID data disks per redundancy group enumerated (powers of two; 8 is OpenZFS's default).
DRAID_DATA: tuple[int, ...] = (4, 8, 16)
#: Children from which a second distributed spare is also enumerated.
DRAID_TWO_SPARES_FROM = 40
#: Mirror widths enumerated.
MIRROR_WIDTHS: tuple[int, ...] = (2, 3)


def _grouped(n_disks: int, width: int, vdev: str, max_spares: int) -> str | None:
    """``K x vdev`` with the remainder as hot spares, or None if the remainder is too large."""
    count, rest = divmod(n_disks, width)
    if count == 0 or rest > max_spares:
        return None
    return vdev_group_text(count, vdev, rest)


def enumerate_layouts(
    n_disks: int,
    *,
    max_width: int = RAIDZ_MAX_WIDTH,
    include: Iterable[str] = KINDS,
    max_spares: int = MAX_HOT_SPARES,
) -> list[str]:
    """The layouts of ``n_disks`` identical disks a planner would compare (module docstring).

    Parameters
    ----------
    n_disks : disks in the pool, data and spares together (≥ 1).
    max_width : widest raidz vdev to list (≥ 3; OpenZFS allows up to 255).
    include : the families to list, any of ``"stripe"``, ``"mirror"``, ``"raidz"``,
        ``"draid"`` (default: all).
    max_spares : most hot spares a remainder may leave (0: only widths that divide N).

    Returns the layout strings in the compact grammar, in a fixed order: stripe, mirrors,
    raidz1…3 by width, dRAID by parity, data disks and spares.
    """
    if isinstance(n_disks, bool) or not isinstance(n_disks, int) or n_disks < 1:
        raise ZsimError(f"the number of disks must be a whole number ≥ 1, not {n_disks!r}")
    if isinstance(max_width, bool) or not isinstance(max_width, int) or max_width < 3:
        raise ZsimError(f"max_width {max_width!r} must be a whole number ≥ 3 (raidz1 3)")
    if isinstance(max_spares, bool) or not isinstance(max_spares, int) or max_spares < 0:
        raise ZsimError(f"max_spares {max_spares!r} must be a whole number ≥ 0")
    kinds = [include] if isinstance(include, str) else list(include)
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ZsimError(f"unknown layout family {unknown[0]!r}; use any of {', '.join(KINDS)}")
    out: list[str] = []
    if "stripe" in kinds:
        out.append(f"stripe {n_disks}")
    if "mirror" in kinds:
        for width in MIRROR_WIDTHS:
            text = _grouped(n_disks, width, f"mirror {width}", max_spares)
            if text is not None:
                out.append(text)
    if "raidz" in kinds:
        for parity in (1, 2, 3):
            for width in range(parity + 2, min(max_width, MAX_RAIDZ_CHILDREN) + 1):
                text = _grouped(n_disks, width, f"raidz{parity} {width}", max_spares)
                if text is not None:
                    out.append(text)
    if "draid" in kinds and n_disks <= MAX_DRAID_CHILDREN:
        spare_counts = (1, 2) if n_disks >= DRAID_TWO_SPARES_FROM else (1,)
        out.extend(
            f"draid{parity}:{data}d:{spares}s:{n_disks}c"
            for parity in (1, 2, 3)
            for data in DRAID_DATA
            for spares in spare_counts
            if data + parity + spares <= n_disks
        )
    return out
