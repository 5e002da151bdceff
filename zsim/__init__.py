"""zsim: performance and capacity simulator for ZFS pools and conventional RAID.

The public API (see ``DESIGN.md`` §5 and ``README.md``)::

    import zsim
    zsim.capacity("raidz2 8", disk_size=12_000_138_625_024, ashift=12).to_dict()
    zsim.parse_layout("2x raidz2 6 log mirror 2")
    zsim.load_profile("seagate-ironwolf-12tb")
    sc = zsim.load_scenario("examples/scenarios/ars-raidz2-8-1m-randwrite.toml")
    zsim.simulate(sc, engine="des", seed=1).to_dict()
    zsim.sweep(24, "seagate-ironwolf-12tb", engine="baseline").rows     # docs/sweep.md
    zsim.recommend(24, "seagate-ironwolf-12tb", min_usable="100TB", min_fault_tolerance=2)
    zsim.resilver(sc).to_dict()                                          # docs/resilver.md
    zsim.grow(sc, attach=1).to_dict()                                    # docs/grow.md
"""

from __future__ import annotations

# ``zsim.resilver``, ``zsim.grow`` and ``zsim.sweep`` are plain functions named like the
# packages that hold them (DESIGN.md §5). The import system binds a package as its parent's
# attribute once, on its first import: ``from zsim.resilver import resilver`` and ``from
# zsim.sweep.table import sweep`` import the package (binding it), then rebind the name to the
# function, and no later import of the packages' modules binds it again. Those modules are
# imported by name (``from zsim.sweep import table``), not reached through
# ``zsim.sweep.table``.
from zsim.capacity import CapacityReport, capacity, md_capacity
from zsim.errors import CatalogError, LayoutError, UnitError, ZsimError
from zsim.grow import grow
from zsim.hardware.catalog import list_profiles, load_profile
from zsim.layout.grammar import parse_layout
from zsim.resilver import resilver
from zsim.result import SimResult
from zsim.scenario import Scenario, ScenarioError, load_scenario, scenario_from_dict
from zsim.simulate import simulate
from zsim.sweep.recommend import recommend
from zsim.sweep.table import sweep
from zsim.version import __version__

__all__ = [
    "CapacityReport",
    "CatalogError",
    "LayoutError",
    "Scenario",
    "ScenarioError",
    "SimResult",
    "UnitError",
    "ZsimError",
    "__version__",
    "capacity",
    "grow",
    "list_profiles",
    "load_profile",
    "load_scenario",
    "md_capacity",
    "parse_layout",
    "recommend",
    "resilver",
    "scenario_from_dict",
    "simulate",
    "sweep",
]
