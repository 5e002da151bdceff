"""Run a scenario on the discrete-event engine that models its layout: ZFS pools on
:class:`zsim.des.engine.Engine`, md RAID, btrfs and raw devices on
:class:`zsim.des.linux.blockfs.BlockFsEngine`."""

from __future__ import annotations

from zsim.des.engine import Engine
from zsim.des.linux.blockfs import simulate_blockfs
from zsim.layout.tree import BtrfsArray, MdArray, RawDevices
from zsim.machine.run_control import RunControl
from zsim.result import SimResult
from zsim.scenario import Scenario


def simulate_des(sc: Scenario, seed: int = 1, control: RunControl | None = None) -> SimResult:
    """Run the discrete-event engine on a scenario (see :func:`zsim.simulate`): ZFS pools
    on :class:`~zsim.des.engine.Engine`, md RAID with an ext4-like file system, btrfs and
    raw devices in :mod:`zsim.des.linux.blockfs`."""
    if isinstance(sc.layout_tree(), MdArray | BtrfsArray | RawDevices):
        return simulate_blockfs(sc, seed, control)
    return Engine(sc, seed, control or RunControl()).run()
