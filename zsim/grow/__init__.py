"""Growing a pool: RAIDZ expansion (``zpool attach``) and added vdevs (``zpool add``).

``zsim.grow(sc, attach=N)`` / ``zsim.grow(sc, add_vdev=LAYOUT)`` is :func:`grow`, a plain
function of this package (``zsim`` binds the name to it, DESIGN.md §5, as it does for
``zsim.resilver``): it calls :func:`zsim.grow.run.simulate_grow`, imported on the first call.
Modules, imported by name: :mod:`~zsim.grow.plan` (the grown layout, checked),
:mod:`~zsim.grow.reflow_map` (the expansion's copy geometry, pure),
:mod:`~zsim.grow.reflow` (the reflow on the discrete-event engine),
:mod:`~zsim.grow.alloc_bias` (how the allocator spreads new writes over unequally full
vdevs), :mod:`~zsim.grow.run` (the whole answer), :mod:`~zsim.grow.result` (its JSON and
text). ``docs/grow.md`` explains the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zsim.grow.result import GrowResult
    from zsim.scenario import Scenario


def grow(
    sc: Scenario,
    *,
    attach: int | None = None,
    add_vdev: str | None = None,
    vdev: int = 0,
    new_disk_size: int | str | None = None,
    reflow: bool = True,
    under_load: bool = False,
    seed: int = 1,
    des: bool = False,
) -> GrowResult:
    """Grow ``sc``'s pool by ``attach`` disks on data vdev ``vdev`` (RAIDZ expansion) or by
    the vdev(s) ``add_vdev`` (``zpool add``): :func:`zsim.grow.run.simulate_grow`
    (``des=True``: the workload before and after on the discrete-event engine too)."""
    from zsim.grow.run import simulate_grow

    return simulate_grow(
        sc,
        attach=attach,
        add_vdev=add_vdev,
        vdev=vdev,
        new_disk_size=new_disk_size,
        reflow=reflow,
        under_load=under_load,
        seed=seed,
        des=des,
    )
