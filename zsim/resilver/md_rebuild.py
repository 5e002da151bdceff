"""Linux md RAID recovery onto a new member: the whole device, in LBA order.

Sources (``md.4``, ``Documentation/admin-guide/md.rst``, ``drivers/md/md.c``, ``raid1.c``,
``raid5.c``; ``shared/notes/zfs-internals.md`` §9):

* md recovers the **whole member** in LBA order whatever the file system uses, so the time
  does not depend on fill (the write-intent bitmap only shortens a re-add of the same disk);
* the rate is held between ``speed_limit_min`` (1000 KiB/s) and ``speed_limit_max``
  (200000 KiB/s) per device. While the array has other I/O md sleeps whenever it is above
  the minimum (``is_mddev_idle()``), so under a steady foreground load recovery runs at
  about ``speed_limit_min``;
* RAID1/10 recovery copies from one in-sync mirror in ``RESYNC_BLOCK_SIZE`` (64 KiB)
  requests, up to ``RESYNC_DEPTH`` (32) at once; RAID5/6 rebuild every stripe through the
  stripe cache (``stripe_cache_size`` 256 pages of 4 KiB per device: 1 MiB per device in
  flight), reading every other member and writing the missing one.

Each window issues that I/O on the scenario's own devices (the discrete-event device models
and bus) at one position of the member, and the measured rate is capped at
``speed_limit_max``; the windows' rates integrate to the time.
"""

from __future__ import annotations

from typing import Any

import simpy

from zsim.hardware import flash, hdd
from zsim.machine.collector import collector_paused
from zsim.machine.links import bus_stages
from zsim.machine.resources import Device, DevIO
from zsim.resilver.result import ResilverResult
from zsim.resilver.target import ResilverTarget
from zsim.scenario import Scenario
from zsim.units import MB, TB, KiB, MiB

RESYNC_BLOCK = 64 * KiB  # raid1.c RESYNC_BLOCK_SIZE
RESYNC_DEPTH = 32  # raid1.c RESYNC_DEPTH
STRIPE_CACHE_PER_DEVICE = 256 * 4 * KiB  # raid5.c NR_STRIPES default 256, one page each
WINDOWS = 8
WINDOW_BYTES = 256 * MiB  # per window, of the member being rebuilt


def _window(
    sc: Scenario, target: ResilverTarget, position: float, seed: int
) -> tuple[float, dict[str, float]]:
    """Measured recovery rate (bytes/s of the new member) at ``position`` (0…1) and the
    devices' busy fractions."""
    md = target.md
    assert md is not None
    env = simpy.Environment()
    disk = sc.hardware.disk
    rotating = disk.kind == "hdd"
    model = hdd.hdd_params(disk) if rotating else flash.flash_params(disk)
    names = list(md.devices)
    paths = bus_stages(env, sc.hardware, names, disk)
    devices = {n: Device(env, n, model, rotating, paths[n], 0.0) for n in names}
    new = devices[target.disk]
    missing = set(sc.pool.failed) | {target.disk}
    if md.level in (1, 10):
        index = names.index(target.disk)
        partner = index ^ 1 if md.level == 10 else None
        sources = (
            [names[partner]] if partner is not None else [n for n in names if n not in missing][:1]
        )
        unit, depth = RESYNC_BLOCK, RESYNC_DEPTH
    else:
        sources = [n for n in names if n not in missing]
        unit = min(md.chunk, 64 * KiB)
        depth = max(1, STRIPE_CACHE_PER_DEVICE // unit)
    start = int(position * target.member_bytes) // unit * unit
    end = min(target.member_bytes, start + WINDOW_BYTES)
    state: dict[str, Any] = {"next": start, "inflight": 0, "done": 0, "t0": None, "b0": 0}
    finished = env.event()
    ramp = WINDOW_BYTES // 8

    def issue() -> None:
        while state["inflight"] < depth and state["next"] < end:
            offset = state["next"]
            state["next"] += unit
            state["inflight"] += 1
            left = [len(sources)]

            def read_done(offset: int = offset, left: list[int] = left) -> None:
                left[0] -= 1
                if left[0] == 0:
                    new.submit(DevIO(offset, unit, True, written))

            for name in sources:
                devices[name].submit(DevIO(offset, unit, False, read_done))

    def written() -> None:
        state["inflight"] -= 1
        state["done"] += unit
        if state["t0"] is None and state["done"] >= ramp:
            state["t0"], state["b0"] = env.now, state["done"]
            state["areas"] = {n: d.busy.area + d.busy.active * (env.now - d.busy.since)
                              for n, d in devices.items()}  # fmt: skip
        if state["next"] >= end and state["inflight"] == 0:
            finished.succeed()
        else:
            issue()

    issue()
    with collector_paused():
        env.run(until=finished)
    span = env.now - state["t0"]
    rate = (state["done"] - state["b0"]) / span
    util = {
        f"disk:{n}": (d.busy.area + d.busy.active * (env.now - d.busy.since) - state["areas"][n])
        / span
        for n, d in devices.items()
    }
    return rate, util


def simulate_md_rebuild(sc: Scenario, target: ResilverTarget, seed: int) -> ResilverResult:
    spec = sc.resilver
    cap = spec.md_speed_limit_max
    size = target.member_bytes
    share = size / WINDOWS
    t, points = 0.0, [(0.0, 0)]
    util_sum: dict[str, float] = {}
    windows: list[dict[str, Any]] = []
    capped_time = 0.0
    for k in range(WINDOWS):
        position = (k + 0.5) / WINDOWS
        measured, util = _window(sc, target, position, seed)
        rate = min(measured, cap)
        seconds = share / rate
        if measured > cap:
            capped_time += seconds
        t += seconds
        points.append((t, round(share * (k + 1))))
        for name, value in util.items():
            util_sum[name] = util_sum.get(name, 0.0) + value * seconds * (rate / measured)
        windows.append({"position": position, "bytes_per_s": rate, "device_bytes_per_s": measured})
    util = {k: round(v / t, 4) for k, v in util_sum.items()}
    if capped_time > 0.5 * t:
        limit = "md-speed-limit"
    else:
        name, busiest = max(util.items(), key=lambda kv: kv[1])
        limit = name if busiest >= 0.85 else "md-resync-depth"
    md = target.md
    assert md is not None
    sources = 1 if md.level in (1, 10) else len([d for d in md.devices if d != target.disk])
    notes = [
        f"md rebuilds the whole {size / TB:.2f} TB member whatever is in use; "
        f"speed_limit_max {cap / MB:.0f} MB/s per device"
    ]
    under_load = None
    if spec.under_load or sc.durability.busy_fraction > 0:
        floor = spec.md_speed_limit_min
        loaded = size / floor
        under_load = {
            "seconds": loaded,
            "bytes_per_s": floor,
            "limit": "md-speed-limit-min",
            "progress": [
                {"seconds": loaded * i / 4, "bytes": round(size * i / 4)} for i in range(5)
            ],
            "note": (
                "md throttles recovery to speed_limit_min while the array has other I/O "
                "(is_mddev_idle); the foreground workload keeps its rate — the recovery's "
                f"{floor / MB:.2f} MB/s per device is not simulated against it"
            ),
        }
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
        bytes_read=size * sources,
        bytes_examined=size,
        progress=tuple(points),
        utilization=util,
        windows=tuple(windows),
        under_load=under_load,
        seed=seed,
        scenario=sc.to_dict(),
        notes=tuple(notes),
        details={"array": target.md.compact() if target.md else ""},
    )
