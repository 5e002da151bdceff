"""How OpenZFS spreads new writes over top-level vdevs that are unequally full (a vdev added
to a filled pool). Pure functions; bytes and bytes/s.

Source: ``module/zfs/metaslab.c`` (zfs-2.3.0), ``metaslab_alloc_dva()`` and
``metaslab_group_allocatable()``:

* **The rotor.** Allocations walk the normal class's metaslab groups (one per top-level vdev)
  in a ring (``mca_rotor``). A group takes blocks until the bytes it took this visit
  (``mca_aliquot``) reach ``mg_aliquot + mg_bias``, then the rotor moves on.
  ``mg_aliquot = metaslab_aliquot (1 MiB) × max(1, ndisks − nparity)``
  (``metaslab_group_activate()``; a mirror counts one disk, raidz its children).
* **The bias** (``metaslab_bias_enabled = 1``), set when a visit starts:
  ``ratio = vs_free × mc_alloc_groups × 100 / (mc_free + 1)`` and
  ``mg_bias = (ratio − 100) × mg_aliquot / 100``; so a visit takes about
  ``mg_aliquot × ratio / 100`` bytes, at least one block: new data goes to each vdev in
  proportion to its aliquot × its free space.
* **The allocation throttle** (``zio_dva_throttle_enabled = 1``, 0.7+): an async write's
  allocation skips a group whose outstanding allocations reached its queue depth
  (``mga_cur_max_alloc_queue_depth``, 32 growing to ``zfs_vdev_queue_depth_pct`` = 1000 %
  of ``zfs_vdev_async_write_max_active``) while another group has room. When a txg's writes
  are more than the vdevs take at once, each vdev is kept as busy as it can be and the
  excess spills to the others: the bias then decides only the share of a vdev that is not
  saturated (:func:`throttled_split`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from zsim.layout.tree import Vdev
from zsim.units import MiB

#: ``metaslab_aliquot`` (metaslab.c): 1 MiB
METASLAB_ALIQUOT = 1 * MiB


def group_aliquot(vdev: Vdev) -> int:
    """``mg_aliquot``: ``metaslab_aliquot × max(1, vdev_get_ndisks() − vdev_get_nparity())``.

    ``vdev_get_ndisks()`` is 1 for a mirror or a disk (no ``vdev_op_ndisks``), the children
    for raidz (``vdev_raidz_ndisks()``), the children less distributed spares for dRAID.
    """
    if vdev.kind in ("mirror", "disk"):
        return METASLAB_ALIQUOT
    ndisks = vdev.width - vdev.nspares
    return METASLAB_ALIQUOT * max(1, ndisks - vdev.parity)


def visit_bytes(free: int, class_free: int, groups: int, aliquot: int, block: int) -> int:
    """Bytes one rotor visit allocates on a group with ``free`` bytes free, of a class with
    ``class_free`` free over ``groups`` allocatable groups, blocks of ``block`` bytes.

    ``metaslab_alloc_dva()``: the visit stops at the first block that brings the visit's
    bytes to ``aliquot + bias`` or more, so it takes at least one block.
    """
    ratio = (free * groups * 100) // (class_free + 1)
    bias = ((ratio - 100) * aliquot) // 100
    target = aliquot + bias
    blocks = max(1, -(-target // block))
    return blocks * block


def bias_shares(free: Sequence[int], aliquots: Sequence[int], block: int) -> tuple[float, ...]:
    """Fraction of new data each group gets from the rotor and the bias alone.

    ``free``: free bytes of each normal-class top-level vdev (``vs_space − vs_alloc``);
    ``aliquots``: their :func:`group_aliquot`; ``block``: the allocation size (bytes). A vdev
    with no free space is not allocatable and gets nothing.
    """
    if len(free) != len(aliquots):
        raise ValueError("one aliquot per vdev")
    groups = sum(1 for f in free if f > 0)
    total = sum(f for f in free if f > 0)
    per_visit = [
        visit_bytes(f, total, groups, a, block) if f > 0 else 0
        for f, a in zip(free, aliquots, strict=True)
    ]
    visits = sum(per_visit)
    if visits == 0:
        return tuple(0.0 for _ in free)
    return tuple(v / visits for v in per_visit)


@dataclass(frozen=True)
class WriteSplit:
    """New writes over the vdevs: bytes/s each takes and the total; ``saturated``: the
    vdevs at their capacity."""

    rates: tuple[float, ...]
    total: float
    saturated: tuple[bool, ...]


def throttled_split(
    preferred: Sequence[float], capacities: Sequence[float], offered: float, throttle: bool = True
) -> WriteSplit:
    """Split an ``offered`` write rate (bytes/s) over vdevs that take at most ``capacities``.

    With the allocation throttle a vdev at its capacity takes no more and the rest is shared
    among the others in proportion to ``preferred`` (:func:`bias_shares`) — water filling.
    Without it (``zio_dva_throttle_enabled = 0``, or before 0.7) every vdev keeps its
    preferred share, so the pool writes ``min(offered, min capacity_i / share_i)``.
    """
    n = len(preferred)
    if len(capacities) != n:
        raise ValueError("one capacity per vdev")
    if not throttle:
        bound = min(
            (c / p for p, c in zip(preferred, capacities, strict=True) if p > 0),
            default=0.0,
        )
        total = min(offered, bound)
        fixed = tuple(p * total for p in preferred)
        sat = tuple(
            p > 0 and r >= c * (1 - 1e-9)
            for p, r, c in zip(preferred, fixed, capacities, strict=True)
        )
        return WriteSplit(fixed, total, sat)
    rates = [0.0] * n
    open_ = [i for i in range(n) if preferred[i] > 0]
    left = offered
    while open_ and left > 1e-9 * max(1.0, offered):
        weight = sum(preferred[i] for i in open_)
        # the first vdev to fill up at this round's shares
        step = min(left, min((capacities[i] - rates[i]) * weight / preferred[i] for i in open_))
        for i in open_:
            rates[i] += step * preferred[i] / weight
        left -= step
        open_ = [i for i in open_ if rates[i] < capacities[i] * (1 - 1e-9)]
    sat = tuple(r >= c * (1 - 1e-9) for r, c in zip(rates, capacities, strict=True))
    return WriteSplit(tuple(rates), sum(rates), sat)


@dataclass(frozen=True)
class EveningOut:
    """How rewriting a pool's data evens its vdevs out (:func:`evening_out`). ``curve``:
    (bytes rewritten, each vdev's allocated fraction); ``bytes_to_even``: bytes rewritten until
    the fullest and emptiest vdev are within ``within`` of each other (``None``: not within
    the ``limit`` × the data that was rewritten)."""

    curve: tuple[tuple[int, tuple[float, ...]], ...]
    bytes_to_even: int | None
    within: float


def evening_out(
    allocated: Sequence[int],
    space: Sequence[int],
    shares: Callable[[Sequence[int]], Sequence[float]],
    within: float = 0.05,
    steps_per_pass: int = 200,
    limit: float = 10.0,
) -> EveningOut:
    """Rewrite the pool's data, spread evenly over it, until its vdevs are within ``within``
    (a fraction of each vdev's space) of each other's fullness.

    Each rewrite is copy-on-write: the new copy goes where the allocator puts new data
    (``shares(free bytes per vdev)``: :func:`bias_shares`, or the throttle's split), and the
    old copy's blocks are freed where they were, in proportion to each vdev's allocated bytes
    (``dsl_free()`` → ``metaslab_free()``). Writing new data alone never evens a pool out:
    with shares in proportion to free space every vdev's free space shrinks by the same
    fraction. Integrated in steps of 1/``steps_per_pass`` of the data, up to ``limit`` × it.
    """
    if len(allocated) != len(space):
        raise ValueError("one space per vdev")
    alloc = [float(a) for a in allocated]
    data = sum(alloc)
    step = data / steps_per_pass if data else 0.0

    def fullness() -> tuple[float, ...]:
        return tuple(a / s if s else 0.0 for a, s in zip(alloc, space, strict=True))

    curve = [(0, fullness())]
    done = 0.0
    while data and done < limit * data:
        spread = max(curve[-1][1]) - min(curve[-1][1])
        if spread <= within:
            return EveningOut(tuple(curve), int(done), within)
        free = [max(0, int(s - a)) for s, a in zip(space, alloc, strict=True)]
        put = shares(free)
        alloc = [a + step * p - step * a / data for a, p in zip(alloc, put, strict=True)]
        done += step
        curve.append((int(done), fullness()))
    spread = max(curve[-1][1]) - min(curve[-1][1])
    return EveningOut(tuple(curve), int(done) if spread <= within and data else None, within)
