"""How a flash leaf serves record reads while a txg's writes hold some of its units.

The DES's flash device (:mod:`zsim.hardware.flash`, ``Device._start``) is ``parallelism``
units serving one command each; a command's unit time grows with the units busy at its
start, whatever their direction (the k / iops and k · nbytes / bw terms share the drive's
IOPS and bandwidth). The txg's aggregated writes reach a leaf at most
``zfs_vdev_async_write_max_active`` at a time (``vdev_queue_max_async_writes()``,
:func:`zsim.zfs.txg.async_write_max_active`: 2 below 30 % of ``zfs_dirty_data_max``), while
the sync reads have their own class limit (``vdev_queue_class_to_issue()``: each class is
issued up to its own ``max_active``). So during a write burst the reads keep the other units,
each slowed by the writes sharing the drive, instead of losing the burst's time as a disk's
head does (:func:`zsim.analytic.mixed_parts.leaf_write_share`). Pure functions over the device
tables of :mod:`zsim.analytic.devices`.
"""

from __future__ import annotations

from dataclasses import replace

from zsim.analytic.devices import DeviceTable
from zsim.hardware.flash import FlashParams, service_time


def held_units(params: FlashParams, active: int, writes_per_txg: float) -> int:
    """Units of a flash leaf a txg's write burst holds: the async-write class limit
    ``active``, no more than the writes the leaf gets per txg, and no more than the drive's
    units."""
    queued = max(1, int(writes_per_txg))
    return max(1, min(params.parallelism, active, queued))


def shared_read_table(
    table: DeviceTable, params: FlashParams, held: int, share: float
) -> DeviceTable:
    """``table`` (record reads of ``table.nbytes`` on a flash leaf, requests/s by
    outstanding reads) for a leaf whose units ``held`` are writing a ``share`` (0…1) of the
    time. In a burst, k reads use at most the P − ``held`` free units, each taking
    ``service_time`` at k + ``held`` busy instead of k; the rate at each depth is the
    time-weighted mean of the two states (each lasts many reads), and the QD1 service times
    (the fork-join straggle) stretch by the mean of the two. ``held`` must leave a unit free."""
    free = params.parallelism - held
    if free < 1:
        raise ValueError(f"{held} units held leave none of {params.parallelism} for reads")
    share = min(1.0, max(0.0, share))
    if share <= 0.0:
        return table
    n = table.nbytes

    def slowdown(k: int) -> float:
        return service_time(params, n, False, 0, busy=k) / service_time(
            params, n, False, 0, busy=k + held
        )

    rates = []
    for depth, rate in zip(table.depths, table.rate, strict=True):
        k = min(depth, free)
        rates.append((1.0 - share) * rate + share * table.at(k) * slowdown(k))
    stretch = (1.0 - share) + share / slowdown(1)
    return replace(table, rate=tuple(rates), service=tuple(s * stretch for s in table.service))
