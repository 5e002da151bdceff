"""RAIDZ expansion (OpenZFS 2.3+): the space of a raidz vdev grown by ``zpool attach``.

After ``zpool attach POOL raidzP-N DISK`` completes, a raidz vdev is one column wider. OpenZFS
then reports its space in three different ways at once, and zsim gives each one:

* ``zpool list`` SIZE: the metaslab space, parity included. The vdev's asize becomes
  ``min child asize × children`` (``vdev_raidz_open()``, ``module/zfs/vdev_raidz.c``); the
  metaslab size stays what it was at creation, so the new space arrives as more metaslabs of
  the old size (``vdev_expand()`` → ``vdev_metaslab_init()``, ``module/zfs/vdev.c``).
* ``zfs list`` USED+AVAIL: the metaslab space deflated with the ratio of the *original* width.
  ``vdev_set_deflate_ratio()`` (vdev.c) asks ``vdev_psize_to_asize_txg(vd, 128 KiB, txg=0)``,
  and ``vdev_raidz_get_logical_width()`` (vdev_raidz.c) answers txg 0 with
  ``vd_original_width``; the comment above ``vdev_set_deflate_ratio()`` says the ratio can never
  change, since existing block pointers were charged with it. So the reported space grows only
  by the raw space added, at the old data:parity rate.
* The data that really fits: a block born after the expansion is laid out at the new width
  (``vdev_raidz_asize()`` / ``vdev_raidz_psize_to_asize()`` with the block's birth txg) and
  allocates less than an old one, yet is still charged ``(asize >> 9) × ratio``
  (``dva_get_dsize_sync()``, ``module/zfs/spa_misc.c``). The pool therefore holds more than
  ``zfs list`` says: :func:`rewrite_scaled` converts reported bytes into data at a width. Old
  blocks keep their width until rewritten (``zfs rewrite``, 2.4+, or a copy).

Every figure is an integer function of the same rules :mod:`zsim.zfs.space` and
:func:`zsim.layout.raidz.raidz_asize` implement; this module only adds what expansion changes.
``docs/grow.md`` explains the figures with worked examples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from zsim.errors import ZsimError
from zsim.layout.raidz import raidz_asize
from zsim.layout.tree import SIZED_CLASSES, Vdev
from zsim.units import MiB
from zsim.zfs.space import (
    SPA_OLD_MAXBLOCKSIZE,
    deflate_ratio,
    deflated,
    has_embedded_log,
    metaslab_shift,
    slop_shares,
    slop_space,
)
from zsim.zfs.version import ZfsVersion

#: ``VDEV_BOOT_SIZE`` (``include/sys/vdev_impl.h``): 3.5 MiB of boot area per leaf, which the
#: expansion uses as scratch space for the first stripe it moves.
VDEV_BOOT_SIZE = 7 * MiB // 2
#: The first release with RAIDZ expansion (``feature@raidz_expansion``, commit 5caeef02fa).
EXPANSION_RELEASE = (2, 3)
#: The first release with ``zfs rewrite`` (rewrites blocks in place at the vdev's new width).
REWRITE_RELEASE = (2, 4)
#: The pool name the printed commands use (as ``zsim capacity`` prints ``zpool create tank``).
POOL_NAME = "tank"


def raidz_vdev_asize(leaf_asize: int, children: int) -> int:
    """Allocatable bytes of a raidz vdev: smallest child asize × children.

    Source: ``vdev_raidz_open()`` in ``module/zfs/vdev_raidz.c`` (``*asize *= vdev_children``
    once no expansion is running; ``vdev_children − 1`` while one is).
    """
    return leaf_asize * children


def attach_min_leaf_asize(metaslab_bytes: int, children: int) -> int:
    """The smallest leaf asize (bytes) ``zpool attach`` accepts for a raidz of ``children``.

    Source: ``spa_vdev_attach()`` (``module/zfs/spa.c``) compares the new device's asize with
    ``vdev_get_min_asize()`` of a child, which is ``vdev_raidz_min_asize()`` (vdev_raidz.c):
    ``ceil(parent min_asize / children)``; the parent's min_asize is its asize aligned down to
    the metaslab size (``vdev_get_min_asize()`` in vdev.c), i.e. its metaslab space. A smaller
    device fails with EOVERFLOW ("device is too small").
    """
    return -(-metaslab_bytes // children)


def attach_fits_boot_area(new_children: int, ashift: int) -> bool:
    """Whether ``vdev_raidz_attach_check()`` (vdev_raidz.c) allows growing to ``new_children``.

    The expansion copies its first rows through the boot area as scratch space, so it needs
    ``new_children << ashift ≤ VDEV_BOOT_SIZE``: at most 896 children at ashift 12, 224 at 14,
    56 at 16 (otherwise ``zpool attach`` fails with ENOTSUP).
    """
    return new_children << ashift <= VDEV_BOOT_SIZE


@dataclass(frozen=True)
class ExpansionStep:
    """One top-level vdev's space after its ``step``-th attach completed (0: as created).

    Bytes throughout. ``metaslab_bytes`` is the vdev's part of ``zpool list`` SIZE;
    ``dspace_bytes`` that space deflated with ``deflate_ratio`` (the reported ratio, fixed at
    creation); ``width_deflate_ratio`` is the ratio a vdev created at this width would have;
    ``block_asize`` what a 128 KiB block born now allocates (``vdev_raidz_psize_to_asize()``).
    """

    step: int
    device: str | None  # the disk attached at this step (None for step 0)
    width: int
    leaf_asize: int  # the smallest child's allocatable bytes
    vdev_asize: int
    metaslab_shift: int
    metaslab_count: int
    metaslab_bytes: int
    deflate_ratio: int
    width_deflate_ratio: int
    block_asize: int
    dspace_bytes: int
    embedded_log_bytes: int


def static_step(
    vdev: Vdev,
    ashift: int,
    leaf_asize: int,
    asize: int,
    shift: int,
    metaslab_bytes: int,
    ratio: int,
    elog: int,
) -> ExpansionStep:
    """The single step of a vdev that is never expanded (mirror, disk, dRAID)."""
    return ExpansionStep(
        step=0,
        device=None,
        width=vdev.width,
        leaf_asize=leaf_asize,
        vdev_asize=asize,
        metaslab_shift=shift,
        metaslab_count=asize >> shift,
        metaslab_bytes=metaslab_bytes,
        deflate_ratio=ratio,
        width_deflate_ratio=ratio,
        block_asize=_block_asize(vdev, ashift),
        dspace_bytes=deflated(metaslab_bytes, ratio),
        embedded_log_bytes=elog,
    )


def _block_asize(vdev: Vdev, ashift: int) -> int:
    """Allocated bytes of a 128 KiB block written now (new blocks use the current width)."""
    if vdev.kind == "raidz":
        return raidz_asize(SPA_OLD_MAXBLOCKSIZE, ashift, vdev.width, vdev.parity)
    return SPA_OLD_MAXBLOCKSIZE  # only raidz widths change; the scale is 1 for the rest


def raidz_expansion_steps(
    vdev: Vdev, leaf_asizes: Sequence[int], ashift: int, version: ZfsVersion
) -> tuple[ExpansionStep, ...]:
    """The space of raidz ``vdev`` as created and after each of its attaches, in order.

    ``leaf_asizes`` are the allocatable bytes of ``vdev.devices`` (creation devices first,
    then the attached ones in attach order; :func:`zsim.zfs.space.leaf_asize`). The metaslab
    size is chosen once, at creation (``vdev_metaslab_set_size()``), and kept; the embedded-log
    metaslab appears when the vdev first has more than 64 metaslabs, at creation or when an
    expansion adds them (``vdev_metaslab_init()`` takes the emptiest *new* metaslab).
    Raises :class:`ZsimError` for an expansion OpenZFS refuses: before 2.3, an attached
    device too small (``attach_min_leaf_asize``), or a width the boot area cannot stage.
    """
    if len(leaf_asizes) != vdev.width:
        raise ValueError(f"{len(leaf_asizes)} leaf sizes for a {vdev.width}-wide vdev")
    created = vdev.as_created()
    if vdev.attached and not version.at_least(*EXPANSION_RELEASE):
        raise ZsimError(
            f"RAIDZ expansion ({vdev.compact()}) needs OpenZFS 2.3 or later, not {version}; "
            f"set the release to 2.3 or later, or write a vdev created at its full width"
        )
    ratio = deflate_ratio(created, ashift)  # txg 0 → vd_original_width, forever
    smallest = min(leaf_asizes[: created.width])
    asize = raidz_vdev_asize(smallest, created.width)
    shift = metaslab_shift(asize, version)
    steps = [_step(0, None, created, smallest, asize, shift, ratio, ashift, version)]
    for k, device in enumerate(vdev.attached_devices, start=1):
        children = created.width + k - 1
        metaslab_bytes = steps[-1].metaslab_bytes
        new_leaf = leaf_asizes[children]
        needed = attach_min_leaf_asize(metaslab_bytes, children)
        if new_leaf < needed:
            raise ZsimError(
                f"{device} ({new_leaf} B allocatable) is too small to attach to "
                f"{vdev.type_word()} of {children} disks: zpool attach needs at least "
                f"{needed} B per device (the vdev's metaslab space / {children}); give it a "
                f"disk at least as large as the others"
            )
        if not attach_fits_boot_area(children + 1, ashift):
            raise ZsimError(
                f"attaching {device} would make {vdev.type_word()} {children + 1} wide, more "
                f"than OpenZFS can expand to at ashift {ashift} "
                f"({VDEV_BOOT_SIZE >> ashift} children: vdev_raidz_attach_check); "
                f"attach fewer disks or add a vdev"
            )
        smallest = min(smallest, new_leaf)
        grown = Vdev("raidz", vdev.devices[: children + 1], parity=vdev.parity, vclass=vdev.vclass)
        asize = raidz_vdev_asize(smallest, children + 1)
        steps.append(_step(k, device, grown, smallest, asize, shift, ratio, ashift, version))
    return tuple(steps)


def _step(
    k: int,
    device: str | None,
    at_width: Vdev,
    smallest: int,
    asize: int,
    shift: int,
    ratio: int,
    ashift: int,
    version: ZfsVersion,
) -> ExpansionStep:
    count = asize >> shift  # vdev_metaslab_init(): newc = vdev_asize >> vdev_ms_shift
    if count == 0:
        raise ZsimError(f"{at_width.compact()} is too small to hold one metaslab; use larger disks")
    metaslab_bytes = count << shift
    elog = deflated(1 << shift, ratio) if has_embedded_log(count, at_width.vclass, version) else 0
    return ExpansionStep(
        step=k,
        device=device,
        width=at_width.width,
        leaf_asize=smallest,
        vdev_asize=asize,
        metaslab_shift=shift,
        metaslab_count=count,
        metaslab_bytes=metaslab_bytes,
        deflate_ratio=ratio,
        width_deflate_ratio=deflate_ratio(at_width, ashift),
        block_asize=_block_asize(at_width, ashift),
        dspace_bytes=deflated(metaslab_bytes, ratio),
        embedded_log_bytes=elog,
    )


def rewrite_scaled(reported: int, original_block_asize: int, block_asize: int) -> int:
    """Reported (``zfs list``) bytes → bytes of data they hold at another width.

    A 128 KiB block is charged ``(asize >> 9) × ratio`` (``dva_get_dsize_sync()``), with the
    ratio fixed at the original width; so the number of blocks a charge pays for scales with
    ``original asize / asize``. On a vdev never expanded this is the identity.
    """
    return reported * original_block_asize // block_asize


@dataclass(frozen=True)
class VdevSpace:
    """A top-level vdev's steps, for :func:`pool_expansion_steps` (index in the layout)."""

    index: int
    vclass: str
    type_word: str
    steps: tuple[ExpansionStep, ...]


@dataclass(frozen=True)
class PoolStep:
    """The pool after ``step`` attaches (0: as created). Bytes.

    ``usable_bytes`` is ``zfs list`` USED+AVAIL; ``usable_new_data_bytes`` the data that
    really fits when, before each attach, the pool was ``fill`` full (``zfs list`` USED over
    USED+AVAIL) of 128 KiB records that keep the width they were born at;
    ``usable_after_rewrite_bytes`` the data that fits once every block is rewritten at the
    current widths. Both are expressed like ``zfs list`` expresses a vdev never expanded.
    The per-vdev tuples follow the order of the vdevs given (0 outside the normal class).
    """

    step: int
    vdev_index: int | None
    device: str | None
    command: str | None
    zpool_size_bytes: int
    slop_bytes: int
    usable_bytes: int
    usable_new_data_bytes: int
    usable_after_rewrite_bytes: int
    vdev_usable_bytes: tuple[int, ...]
    vdev_new_data_bytes: tuple[int, ...]
    vdev_after_rewrite_bytes: tuple[int, ...]


def pool_expansion_steps(
    vdevs: Sequence[VdevSpace], version: ZfsVersion, fill: float = 0.0, refill: bool = True
) -> tuple[PoolStep, ...]:
    """The pool's four figures as created and after every attach, in attach order.

    Attaches run one at a time pool-wide (``spa_vdev_attach()`` refuses a second while one
    runs), in layout order: every attach of vdev 0, then of vdev 1, …. ``vdevs`` lists every
    top-level vdev that has space (cache and spare devices left out). ``fill``: the pool was
    that full before each attach (``refill``) or before the first only, later attaches moving
    the same data (not ``refill``). The slop is the pool's
    (``spa_get_slop_space()`` on the normal class's reported dspace), shared among normal
    vdevs in proportion to their space (:func:`zsim.zfs.space.slop_shares`).
    """
    if not 0 <= fill < 1:
        raise ZsimError(f"fill at attach {fill!r} must be ≥ 0 and < 1 (0.8 = 80 % full)")
    share = Fraction(fill)
    at = [0] * len(vdevs)
    order = [(i, k) for i, v in enumerate(vdevs) for k in range(1, len(v.steps))]
    # charged[i]: (deflated bytes charged, block asize they were written at) of old data
    charged: list[list[tuple[int, int]]] = [[] for _ in vdevs]
    out: list[PoolStep] = []
    previous: tuple[int, ...] = ()
    for n in range(len(order) + 1):
        if n:
            i, k = order[n - 1]
            for j, v in enumerate(vdevs):
                if v.vclass != "normal" or not fill:
                    continue
                have = sum(c for c, _ in charged[j])
                target = int(share * (previous[j] if refill else out[0].vdev_usable_bytes[j]))
                if target > have:
                    charged[j].append((target - have, v.steps[at[j]].block_asize))
            at[i] = k
        out.append(_pool_step(vdevs, at, charged, version, n, order[n - 1] if n else None))
        previous = out[-1].vdev_usable_bytes
    return tuple(out)


def _pool_step(
    vdevs: Sequence[VdevSpace],
    at: list[int],
    charged: list[list[tuple[int, int]]],
    version: ZfsVersion,
    n: int,
    attach: tuple[int, int] | None,
) -> PoolStep:
    now = [v.steps[at[j]] for j, v in enumerate(vdevs)]
    normal = [j for j, v in enumerate(vdevs) if v.vclass == "normal"]
    rds = [now[j].dspace_bytes - now[j].embedded_log_bytes for j in normal]
    rd = sum(rds)
    elog = sum(
        now[j].embedded_log_bytes for j, v in enumerate(vdevs) if v.vclass in ("normal", "special")
    )
    slop = slop_space(rd, elog, version)
    usable = [0] * len(vdevs)
    after = [0] * len(vdevs)
    real = [0] * len(vdevs)
    for j, r, s in zip(normal, rds, slop_shares(rds, slop), strict=True):
        usable[j] = use = max(0, r - s)
        first, cur = vdevs[j].steps[0].block_asize, now[j].block_asize
        old = charged[j]
        held = sum(rewrite_scaled(c, first, a) for c, a in old)
        free = max(0, use - sum(c for c, _ in old))
        real[j] = held + rewrite_scaled(free, first, cur)
        after[j] = rewrite_scaled(use, first, cur)
    device = command = None
    index = None
    if attach is not None:
        index = vdevs[attach[0]].index
        device = vdevs[attach[0]].steps[attach[1]].device
        command = f"zpool attach {POOL_NAME} {vdevs[attach[0]].type_word}-{index} {device}"
    return PoolStep(
        step=n,
        vdev_index=index,
        device=device,
        command=command,
        zpool_size_bytes=sum(
            s.metaslab_bytes for s, v in zip(now, vdevs, strict=True) if v.vclass in SIZED_CLASSES
        ),
        slop_bytes=slop,
        usable_bytes=max(0, rd - slop),
        usable_new_data_bytes=sum(real),
        usable_after_rewrite_bytes=sum(after),
        vdev_usable_bytes=tuple(usable),
        vdev_new_data_bytes=tuple(real),
        vdev_after_rewrite_bytes=tuple(after),
    )


def allocated_before_attach(
    steps: Sequence[ExpansionStep], fill: float, ashift: int, refill: bool = True
) -> list[int]:
    """Bytes allocated on a vdev when each of its attaches starts, which that attach's reflow
    copies, in whole sectors. ``fill`` is the engines' reading of ``pool.fill`` (a fraction of
    the metaslab space): with ``refill`` the vdev was that full before each attach, so before
    attach ``k`` it held ``fill`` × the metaslab space of step ``k − 1``; without, it was
    that full before its first attach and nothing was written since (``zpool attach`` one
    after another: every reflow copies the same data)."""
    if not 0 <= fill < 1:
        raise ZsimError(f"fill at attach {fill!r} must be ≥ 0 and < 1 (0.8 = 80 % full)")
    return [
        int(fill * (s if refill else steps[0]).metaslab_bytes) >> ashift << ashift
        for s in steps[:-1]
    ]


def born_regions(
    steps: Sequence[ExpansionStep], fill: float, ashift: int, refill: bool = True
) -> tuple[tuple[int, int], ...]:
    """Where a vdev's blocks born before its attaches lie: ``((end, width), ...)``, vdev byte
    offsets from 0, ascending. A block below ``end`` (and above the previous end) keeps the
    logical ``width`` it was written at (``vdev_raidz_get_logical_width()`` of its birth
    txg); everything above the last ``end`` is at the current width.

    The vdev filled from the start (metaslabs in offset order, as zsim lays files out) to
    :func:`allocated_before_attach` before each attach; the part above the previous attach's
    line was written at the width between the two. The reflow moves no block to another vdev
    offset (``raidz_reflow_impl()`` copies vdev sector ``b`` of the old geometry to sector
    ``b`` of the new), so the regions stay where they were written. Empty for a vdev never
    expanded or a ``fill`` of 0: every block at the current width.
    """
    out: list[tuple[int, int]] = []
    end = 0
    lines = allocated_before_attach(steps, fill, ashift, refill)
    for line, before in zip(lines, steps, strict=False):
        if line > end:
            out.append((line, before.width))
            end = line
    return tuple(out)
