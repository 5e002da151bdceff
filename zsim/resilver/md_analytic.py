"""md RAID recovery solved with formulas (``zsim.resilver(sc, engine="analytic")`` on md).

The same recovery as :mod:`zsim.resilver.md_rebuild` (``md.4``, ``raid1.c``, ``raid5.c``):
the whole member in LBA order, RAID1/10 copying from one mirror in ``RESYNC_BLOCK_SIZE``
(64 KiB) requests ``RESYNC_DEPTH`` (32) deep, RAID5/6 reading every other member through the
stripe cache (1 MiB per device in flight) and writing the missing one; capped at
``speed_limit_max``. At each of the same window positions, the members read a stream of
``unit``-byte requests at that depth: their rate comes from the analytic device tables
(:func:`zsim.analytic.devices.device_table`, the DES's device in a closed loop) at the
position's zone. The new member writes the same stream at its table's sequential write rate
(measured past the drive's write cache, which a recovery of hours fills). The slowest of
those (and ``speed_limit_max``) is the window's rate; the windows integrate to the time as
the DES's do.

HDD arrays are declined: the DES's md windows (256 MiB) are as long as a drive's write
cache, and their rates scatter (91-205 MB/s on one 16 TB array, 27-34 % slower than this
model's) with what the cache held when each window began.
"""

from __future__ import annotations

from typing import Any

from zsim.analytic.devices import device_table
from zsim.analytic.validity import OutOfRange
from zsim.resilver.md_rebuild import (
    RESYNC_BLOCK,
    RESYNC_DEPTH,
    STRIPE_CACHE_PER_DEVICE,
    WINDOWS,
)
from zsim.resilver.result import ResilverResult
from zsim.resilver.scan_disk import read_rate, region_start
from zsim.resilver.target import ResilverTarget
from zsim.scenario import Scenario
from zsim.units import MB, TB, KiB

BUSY = 0.85  # as md_rebuild: a device this busy names the limit


def analytic_md(sc: Scenario, target: ResilverTarget, seed: int) -> ResilverResult:
    """md recovery of ``target`` (see the module text); the same :class:`ResilverResult` as
    :func:`zsim.resilver.md_rebuild.simulate_md_rebuild`, ``engine`` = ``"analytic"``."""
    spec, md = sc.resilver, target.md
    assert md is not None
    if spec.under_load or sc.durability.busy_fraction > 0:
        raise OutOfRange(
            "md recovery under load is held at speed_limit_min; use engine='des' for it"
        )
    disk = sc.hardware.disk
    if disk.kind == "hdd":
        raise OutOfRange(
            "md recovery on HDDs: the DES's 256 MiB windows depend on the drives' write "
            "caches, which the analytic model does not follow (27-34 % apart) — use "
            "engine='des'"
        )
    names = list(md.devices)
    missing = set(sc.pool.failed) | {target.disk}
    if md.level in (1, 10):
        partner = names.index(target.disk) ^ 1 if md.level == 10 else None
        sources = (
            [names[partner]] if partner is not None else [n for n in names if n not in missing][:1]
        )
        unit, depth = RESYNC_BLOCK, RESYNC_DEPTH
    else:
        sources = [n for n in names if n not in missing]
        unit = min(md.chunk, 64 * KiB)
        depth = max(1, STRIPE_CACHE_PER_DEVICE // unit)
    cap = spec.md_speed_limit_max
    size = target.member_bytes
    share = size / WINDOWS
    t, points = 0.0, [(0.0, 0)]
    util_sum: dict[str, float] = {}
    windows: list[dict[str, Any]] = []
    capped = 0.0
    for k in range(WINDOWS):
        position = (k + 0.5) / WINDOWS
        lo = region_start(position)
        reads = read_rate(disk, unit, True, lo, 1 / 64, depth) * unit
        # md has no txg flushes: the drive's steady state past its cache (device table)
        table = device_table(disk, unit, True, True, lo, lo + 1 / 64, depth)
        writes = table.at(depth) * unit
        measured = min(reads, writes)
        rate = min(measured, cap)
        seconds = share / rate
        if measured > cap:
            capped += seconds
        t += seconds
        points.append((t, round(share * (k + 1))))
        busy = {f"disk:{n}": rate / reads for n in sources}
        busy[f"disk:{target.disk}"] = rate / writes
        for name, value in busy.items():
            util_sum[name] = util_sum.get(name, 0.0) + value * seconds
        windows.append({"position": position, "bytes_per_s": rate, "device_bytes_per_s": measured})
    util = {k: round(v / t, 4) for k, v in util_sum.items()}
    if capped > 0.5 * t:
        limit = "md-speed-limit"
    else:
        name, busiest = max(util.items(), key=lambda kv: kv[1])
        limit = name if busiest >= BUSY else "md-resync-depth"
    return ResilverResult(
        system="md",
        disk=target.disk,
        method="rebuild",
        spare="new",
        seconds=t,
        bytes_resilvered=size,
        bytes_per_s=size / t,
        limit=limit,
        total_seconds=t,
        bytes_read=size * len(sources),
        bytes_examined=size,
        progress=tuple(points),
        utilization=util,
        windows=tuple(windows),
        seed=seed,
        scenario=sc.to_dict(),
        notes=(
            f"md rebuilds the whole {size / TB:.2f} TB member whatever is in use; "
            f"speed_limit_max {cap / MB:.0f} MB/s per device",
        ),
        details={"array": md.compact()},
        engine="analytic",
    )
