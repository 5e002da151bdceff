"""Transaction groups and the write throttle: defaults by release and the delay curve.

Sources: ``module/zfs/dsl_pool.c``, ``dmu_tx.c``, ``arc.c:arc_init()``, ``man/man4/zfs.4``
("ZFS TRANSACTION DELAY", "ZFS I/O SCHEDULER").
"""

from __future__ import annotations

from dataclasses import dataclass

from zsim.units import GiB, MiB
from zsim.zfs.version import ZfsVersion


@dataclass(frozen=True)
class TxgTunables:
    """Write-path tunables (defaults of the release). Sizes in bytes, times in seconds."""

    dirty_max: int
    sync_bytes: int  # dirty data in the open txg that starts a sync
    txg_timeout: float = 5.0  # zfs_txg_timeout
    delay_min_fraction: float = 0.60  # zfs_delay_min_dirty_percent
    delay_scale: float = 500e-6  # zfs_delay_scale, 500 000 ns
    delay_max: float = 0.1  # zfs_delay_max_ns, 100 ms
    async_write_min_fraction: float = 0.30  # zfs_vdev_async_write_active_min_dirty_percent
    async_write_max_fraction: float = 0.60  # zfs_vdev_async_write_active_max_dirty_percent


def txg_tunables(ram: int, version: ZfsVersion) -> TxgTunables:
    """``zfs_dirty_data_max`` = min(10 % RAM, min(4 GiB, 25 % RAM)); sync at 20 % of it
    (0.8+) or at 64 MiB (``zfs_dirty_data_sync``, ≤ 0.7)."""
    dirty_max = min(ram // 10, min(4 * GiB, ram // 4))
    sync = dirty_max // 5 if version.at_least(0, 8) else 64 * MiB
    return TxgTunables(dirty_max=dirty_max, sync_bytes=sync)


def throttle_delay(dirty: int, t: TxgTunables) -> float:
    """Seconds one transaction waits (``dmu_tx_delay()``): 0 below 60 % dirty, then
    ``delay_scale · (dirty − min) / (max − dirty)``, capped at 100 ms."""
    low = t.delay_min_fraction * t.dirty_max
    if dirty <= low:
        return 0.0
    if dirty >= t.dirty_max:
        return t.delay_max
    return min(t.delay_max, t.delay_scale * (dirty - low) / (t.dirty_max - dirty))


def open_txg_bytes(write_bytes_per_s: float, t: TxgTunables) -> float:
    """Bytes a txg holds when it closes at ``zfs_dirty_data_sync`` (``sync_bytes``) or after
    ``zfs_txg_timeout``, whichever comes first (``txg_sync_thread()``; the DES's
    ``ZfsModel._admit`` and ``_timer``), the writers dirtying ``write_bytes_per_s``."""
    return min(t.sync_bytes, write_bytes_per_s * t.txg_timeout)


def async_write_max_active(dirty: int, t: TxgTunables, lo: int = 2, hi: int = 10) -> int:
    """Async writes allowed per leaf: 2 below 30 % dirty, 10 above 60 %, linear between
    (``vdev_queue_max_async_writes()``)."""
    low = t.async_write_min_fraction * t.dirty_max
    high = t.async_write_max_fraction * t.dirty_max
    if dirty <= low:
        return lo
    if dirty >= high:
        return hi
    return lo + int((dirty - low) * (hi - lo) / (high - low))
