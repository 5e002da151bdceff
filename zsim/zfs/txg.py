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


def throttle_delay(dirty: float, t: TxgTunables) -> float:
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


#: steps of the fill's integration: each step moves the dirty fraction by at most this much,
#: or lasts at most this share of the sync (the throttle's delay curve is smooth on that scale)
FILL_STEP_FRACTION = 2e-3
FILL_STEP_SHARE = 1e-2
FILL_MAX_STEPS = 20000


def throttle_fill(
    records_max: float,
    t: TxgTunables,
    unthrottled: float,
    syncing: float,
    data_seconds: float,
    sync_seconds: float,
) -> float:
    """Records the open txg holds when the txg before it has synced, the writers held back
    by the write throttle all along (a fluid model of what the DES's ``ZfsModel`` does).

    * The writers dirty records at ``unthrottled`` records/s below the throttle's threshold
      and one record per :func:`throttle_delay` above it: ``dmu_tx_delay()`` spaces the
      transactions of all writers by the delay (``dp_last_wakeup``), so the admission rate is
      1 / delay whatever the number of writers (``dmu_tx.c``). None is admitted past
      ``zfs_dirty_data_max`` (``dmu_tx_wait()``).
    * The delay follows the pool's dirty data, the open txg's records and what the syncing
      txg (``syncing`` records) still holds: each record's dirty space is released when its
      write is done (``dbuf_write_done()`` → ``dsl_pool_undirty_space()``, ``dbuf.c``), here
      evenly over the sync's first ``data_seconds``; the indirect blocks and the uberblock
      that take the rest of its ``sync_seconds`` release nothing.

    ``records_max``: ``zfs_dirty_data_max`` in records. Solving ``throttle_fill(…, D, …) = D``
    gives the steady state's txg size when the disks bound the rate; the delay makes it grow
    from 60 % of ``zfs_dirty_data_max`` toward all of it as the rate falls.
    """
    if records_max <= 0 or sync_seconds <= 0:
        return 0.0
    data_seconds = min(max(data_seconds, 0.0), sync_seconds)
    release = syncing / data_seconds if data_seconds > 0 else 0.0
    record_bytes = t.dirty_max / records_max
    now = opened = 0.0
    for i in range(FILL_MAX_STEPS):
        if now >= sync_seconds:
            break
        releasing = now < data_seconds
        freed = release if releasing else 0.0
        dirty = opened + (syncing - release * now if releasing else 0.0)
        if dirty >= records_max:
            rate = min(unthrottled, freed)  # dmu_tx_wait(): only as the sync frees space
        else:
            delay = throttle_delay(dirty * record_bytes, t)
            rate = unthrottled if delay <= 0 else min(unthrottled, 1.0 / delay)
        step = min((data_seconds if releasing else sync_seconds) - now,
                   FILL_STEP_SHARE * sync_seconds)  # fmt: skip
        if rate != freed:
            step = min(step, FILL_STEP_FRACTION * records_max / abs(rate - freed))
        # never more than FILL_MAX_STEPS in all: the sync's end is always reached (a step
        # that must be longer than the dirty data allows stops at the limit)
        step = max(step, (sync_seconds - now) / (FILL_MAX_STEPS - i))
        now += step
        held = syncing - release * now if now < data_seconds else 0.0
        opened = min(opened + rate * step, max(opened, records_max - held))
    return opened
