"""Resilver, rebuild and scrub time, and the probability of losing data while it runs.

``zsim.resilver(sc)`` is :func:`resilver`, a plain function of this package (``zsim`` binds
the name to it, DESIGN.md §5): it calls :func:`zsim.resilver.run.simulate_resilver`, imported
on the first call. The modules are imported by name (``from zsim.resilver.run import ...``,
``from zsim.resilver import durability``); ``zsim.resilver`` itself is the function, so they
are not reached as its attributes. Modules: :mod:`~zsim.resilver.target` (what must be
rebuilt), :mod:`~zsim.resilver.zfs_scan` (the ZFS scan on the discrete-event engine),
:mod:`~zsim.resilver.md_rebuild` (md recovery), :mod:`~zsim.resilver.run` (windows to time and
the progress curve), :mod:`~zsim.resilver.durability` (loss probabilities, via
:mod:`zsim.reliability`). ``docs/resilver.md`` explains the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zsim.resilver.result import ResilverResult
    from zsim.scenario import Scenario


def resilver(
    sc: Scenario, seed: int = 1, *, durability: bool = True, engine: str = "des"
) -> ResilverResult:
    """Simulate the resilver ``sc`` describes: :func:`zsim.resilver.run.simulate_resilver`
    (imported here, on the first call, so that ``import zsim`` does not load the
    discrete-event engine). ``engine="analytic"`` solves the same scan with formulas
    (:mod:`zsim.resilver.analytic`, milliseconds) and raises
    :class:`zsim.analytic.validity.OutOfRange` where it has no model; ``engine="auto"``
    takes the analytic answer where there is one, else the discrete-event one."""
    from zsim.errors import ZsimError, check_arg
    from zsim.resilver.run import simulate_resilver
    from zsim.scenario.schema import Scenario

    check_arg("resilver", "sc", sc, Scenario, "a Scenario (from load_scenario)")
    check_arg("resilver", "seed", seed, int, "a whole number ≥ 0")
    if seed < 0:
        raise ZsimError(f"resilver: seed {seed} must be 0 or more")
    if engine not in ("des", "analytic", "auto"):
        raise ZsimError(
            f"resilver: engine {engine!r} is not known; use 'des', 'analytic' or 'auto'"
        )
    if engine == "des":
        return simulate_resilver(sc, seed, durability=durability)
    return simulate_resilver(sc, seed, durability=durability, engine=engine)
