"""What a raw-device measurement should have given, in closed form, from a device profile.

The fit (:mod:`zsim.calibrate.fit`) evaluates these thousands of times, so they are pure
functions of the same sub-models the discrete-event engine runs (:mod:`zsim.hardware.hdd`,
:mod:`zsim.hardware.flash`), not a second copy of the physics: the DES's raw-device path
(``raw N`` in :mod:`zsim.des.linux.blockfs`) adds only the host's per-call CPU time
(:data:`zsim.machine.costs.SYSCALL_S`), the link transfer and the block layer's 32-command queue,
and those are added here too. An HDD's queued random reads, whose gain comes from
shortest-access-time-first scheduling, have no closed form: :func:`hdd_queued_read_iops`
runs the DES's own device in a closed loop for them (:mod:`zsim.analytic.devices`). Shapes
through an HDD's write-back cache and mixed read/write runs return ``None``: the fit leaves
them out, and validation predicts them with the discrete-event engine.

Every function returns I/Os per second; bytes/s is that × block size.
"""

from __future__ import annotations

import math

import numpy as np

from zsim.calibrate.measurement import Measurement
from zsim.des.linux.mdraid_map import BlockParams
from zsim.hardware import flash, hdd
from zsim.hardware.catalog import Profile
from zsim.machine.costs import REFERENCE_GHZ, SYSCALL_S
from zsim.machine.links import (
    SATA_LINE_RATE,
    device_peak_rates,
    line_payload_rate,
    pcie_bytes_per_s,
)

_QUEUE_DEPTH = BlockParams().queue_depth
_GRID = (np.arange(48) + 0.5) / 48  # midpoints for the mean seek over a region


def outstanding(m: Measurement) -> int:
    """Commands a run keeps in flight: numjobs × iodepth for asynchronous engines, numjobs
    for synchronous ones (fio's psync/sync ignore iodepth), at most the drive's queue."""
    per_job = m.iodepth if m.ioengine not in ("psync", "sync", "pvsync", "pvsync2") else 1
    return max(1, min(m.numjobs * per_job, _QUEUE_DEPTH))


def host_time(ghz: float = REFERENCE_GHZ) -> float:
    """Host CPU time per call that the engine charges (s), at ``ghz``."""
    return SYSCALL_S * REFERENCE_GHZ / ghz


def link_rate(profile: Profile) -> float:
    """Payload bytes/s of the device's host link as the engine builds it, or ``inf`` when
    the engine leaves the link passive (the device's peak cannot reach it, so the link adds
    no time: :func:`zsim.machine.links.mark_passive`)."""
    if profile.kind in ("hdd", "ssd"):
        rate = line_payload_rate(profile.link_rate or SATA_LINE_RATE)
    else:
        rate = pcie_bytes_per_s(profile.pcie_gen or 3, profile.pcie_lanes or 4)
    peak_bw, _ = device_peak_rates(profile)
    return math.inf if peak_bw < rate else rate


def region(m: Measurement, device_bytes: int) -> tuple[float, float]:
    """The run's region as LBA fractions (start, width) of a ``device_bytes`` device."""
    start = m.offset if m.offset_fraction is None else m.offset_fraction * device_bytes
    size = m.size if m.size else device_bytes - start
    start_f = min(max(start / device_bytes, 0.0), 1.0)
    width = min(max(size / device_bytes, 1e-9), 1.0 - start_f) if start_f < 1.0 else 1e-9
    return start_f, width


# ---------------------------------------------------------------- HDD


def hdd_region_seek(params: hdd.HddParams, start: float, width: float, is_write: bool) -> float:
    """Mean seek between two uniformly random LBAs of the region [start, start+width), s.

    The LBAs map to radial positions by :func:`zsim.hardware.hdd.radial_position` (zoned
    recording puts more bytes on outer tracks), then the fitted seek curve; a 48 × 48 grid of
    midpoints integrates it (0.1 % of the closed form over the whole disk)."""
    x = hdd.radial_position(params, start + width * _GRID)
    d = np.abs(x[:, None] - x[None, :])
    curve = params.seek_write if is_write else params.seek_read
    return float(hdd.seek_time(curve, d).mean())


def hdd_iops(
    params: hdd.HddParams, m: Measurement, device_bytes: int, link: float, ghz: float
) -> float | None:
    """Closed-form IOPS of an HDD run, or None when only the engine can say.

    * sequential reads or writes: the media rate at the middle of the region (read-ahead and
      write-back keep the head streaming), capped by the link, or the per-command cost
      (overhead + buffer transfer, + host time at one outstanding) when that is longer —
      small sequential reads measure the per-command overhead this way;
    * one outstanding random read: overhead + mean seek over the region + half a revolution
      + transfer at the region's rate + host time (Ruemmler & Wilkes's components);
    """
    if m.sync or m.fsync:
        return None  # a cache flush per write: the engine's business
    start, width = region(m, device_bytes)
    bs = m.bs
    host = host_time(ghz)
    mid = hdd.media_rate(params, min(start + width / 2, 1.0))
    if m.rw in ("read", "write"):
        # the head streams at the media rate (read-ahead, write-back) while commands cost
        # the drive its overhead and the buffer transfer each; with one outstanding the
        # host's call time is in series too
        per_command = params.overhead + bs / min(params.buffer_rate, link)
        if outstanding(m) == 1:
            per_command += host
        return 1.0 / max(bs / min(mid, link), per_command)
    if m.rw != "randread" or outstanding(m) != 1:
        return None
    seek = hdd_region_seek(params, start, width, False)
    service = params.overhead + seek + params.period / 2 + bs / mid
    return 1.0 / (host + service + bs / link)


def queued_random_read(m: Measurement) -> bool:
    """A random read run with more than one command outstanding (an HDD's queueing gain)."""
    return m.rw == "randread" and not (m.sync or m.fsync) and outstanding(m) > 1


def hdd_queued_read_iops(profile: Profile, m: Measurement, device_bytes: int) -> float | None:
    """IOPS of a queued random read run on an HDD, or None for other runs.

    The DES's :class:`zsim.machine.resources.Device` (the same HDD mechanics, SATF over the
    profile's ``queue_reorder_depth``) in a closed loop with the run's commands outstanding
    over its region (:func:`zsim.analytic.devices.device_table`, seeded and cached), capped
    by the link. The host's per-call time overlaps the other outstanding commands, so it adds
    nothing while the drive is the bottleneck.
    """
    if profile.kind != "hdd" or not queued_random_read(m):
        return None
    # imported when used: it loads SimPy, which the closed forms above do not need
    from zsim.analytic.devices import device_table

    start, width = region(m, device_bytes)
    q = outstanding(m)
    table = device_table(profile, m.bs, False, False, start, start + width, _QUEUE_DEPTH)
    return min(table.at(q), link_rate(profile) / m.bs)


# ---------------------------------------------------------------- flash


def flash_iops(
    params: flash.FlashParams,
    m: Measurement,
    link: float,
    ghz: float,
    written_before: int = 0,
    smooth: bool = False,
) -> float | None:
    """Closed-form IOPS of an SSD/NVMe run: ``k = min(outstanding, parallelism)`` units busy,
    each taking :func:`zsim.hardware.flash.service_time` with ``busy = k``; every command
    also pays the host's call time and its link transfer, which do not hold a unit, so
    IOPS = min(q / (host + link + t), k / t, link rate / bs). ``written_before``: bytes the
    drive took since its write cache was last empty (the long-write segments). A sync write
    adds the flush.
    Mixed read/write runs return None. ``smooth``: the real-valued parallelism
    (read IOPS × latency) instead of its ceiling, for the fit's first, global stage."""
    if m.rw not in ("read", "write", "randread", "randwrite"):
        return None
    is_write = m.rw in ("write", "randwrite")
    q = outstanding(m)
    units: float = params.parallelism
    if smooth:  # Little's law without the ceiling: no jumps for the optimizer to stop at
        units = max(1.0, params.read_iops * params.read_latency)
    k = min(q, units)
    written = written_before if is_write else 0
    t = flash.service_time(params, m.bs, is_write, written, busy=k)  # type: ignore[arg-type]
    if is_write and m.sync:
        t += params.flush_latency
    host = host_time(ghz) + m.bs / link
    return min(q / (host + t), k / t, link / m.bs)


def predict_iops(
    profile: Profile, m: Measurement, device_bytes: int, *, ghz: float = REFERENCE_GHZ
) -> float | None:
    """Closed-form IOPS of raw-device run ``m`` on a device described by ``profile``."""
    link = link_rate(profile)
    if profile.kind == "hdd":
        if queued_random_read(m):
            return hdd_queued_read_iops(profile, m, device_bytes)
        return hdd_iops(hdd.hdd_params(profile), m, device_bytes, link, ghz)
    return flash_iops(flash.flash_params(profile), m, link, ghz)


def finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value) and value > 0
