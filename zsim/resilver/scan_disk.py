"""A disk under a sorted scan: I/Os issued in ascending offset order, a gap apart.

The sorted scan (``dsl_scan.c``, 0.8+) of randomly written data issues a thinned sample of
the blocks in offset order, and ``vdev_queue`` hands them to the disk in LBA order: each read
lies a short, fairly regular distance past the previous one (a few MB on a big pool). The
analytic engine's device tables (:mod:`zsim.analytic.devices`) cover a stream and uniform
random offsets over a region of at least 1/8192 of the disk — seeks hundreds of times longer.
This runs the discrete-event engine's own device (:class:`zsim.machine.resources.Device`:
HDD mechanics with SATF over the NCQ queue, or the flash model) in a closed loop with ``k``
reads outstanding at ascending offsets spaced by gaps drawn geometrically around ``gap`` (the
spacing of a Bernoulli-thinned sample, :meth:`zsim.resilver.zfs_scan.ZfsScan._units`), and
caches the rate per (profile, size, gap, region, depth, direction): in memory, and in files
beside the analytic device tables (:mod:`zsim.table_cache`), named by a hash of the key and
of the device model's source, so processes share them.
"""

from __future__ import annotations

import math

import numpy as np
import simpy

from zsim.analytic.devices import device_table
from zsim.hardware import flash, hdd
from zsim.hardware.catalog import Profile
from zsim.machine.collector import collector_paused
from zsim.machine.resources import Device, DevIO
from zsim.machine.resources import Path as BusPath
from zsim.table_cache import load_or_measure, profile_key, register_kind

#: completions measured (after :data:`WARMUP`), as the analytic device tables
COMPLETIONS = 300
WARMUP = 40
SECTOR = 4096

#: cap on the writes spent filling an HDD's write cache before measuring
MAX_WARMUP = 20000

_CACHE: dict[tuple[str, int, int, float, int, bool], float] = {}


def quantize_gap(gap: float, per_octave: int = 8) -> int:
    """A gap (bytes) on a grid of ``per_octave`` steps per octave of 4 KiB sectors (0 stays
    0)."""
    if gap < SECTOR:
        return 0
    sectors = 2.0 ** (round(per_octave * math.log2(gap / SECTOR)) / per_octave)
    return round(sectors) * SECTOR


def ascending_rate(
    profile: Profile, nbytes: int, gap: float, lo: float, k: int, is_write: bool = False
) -> float:
    """Requests/s of ``nbytes`` reads (writes) at ascending offsets from ``lo`` (fraction of
    the disk), mean ``gap`` bytes between the end of one and the start of the next, ``k``
    outstanding. Writes are measured once an HDD's write cache has filled (a resilver
    writes the new disk for hours). Cached; ``lo`` is quantized to 1/64 of the disk and
    ``gap`` to an eighth octave."""
    lo_q = min(63 / 64, math.floor(lo * 64) / 64)
    gap_q = quantize_gap(gap)
    if is_write:
        # a write loop fills the drive's cache first (thousands of writes): share it over
        # a quarter of the disk and a half-octave of gaps, as the rate varies little there
        lo_q = (math.floor(min(lo, 0.999) * 4) + 0.5) / 4
        gap_q = quantize_gap(gap, 2)
    key = (profile_key(profile), int(nbytes), gap_q, lo_q, int(k), bool(is_write))
    rate = _CACHE.get(key)
    if rate is None:
        rate = _CACHE[key] = load_or_measure(
            "scan",
            key,
            lambda: _closed_loop(profile, int(nbytes), gap_q, lo_q, max(1, int(k)), is_write),
            lambda d: float(d["rate"]),
            lambda r: {"rate": r},
        )
    return rate


register_kind("scan", ("hardware/hdd", "hardware/flash", "machine/resources", "resilver/scan_disk"))


def _closed_loop(
    profile: Profile, nbytes: int, gap: int, lo: float, k: int, is_write: bool
) -> float:
    rotating = profile.kind == "hdd"
    model = hdd.hdd_params(profile) if rotating else flash.flash_params(profile)
    env = simpy.Environment()
    dev = Device(env, "scan", model, rotating, BusPath([]))
    size = profile.size_bytes
    cursor = [int(size * lo) // SECTOR * SECTOR]
    rng = np.random.default_rng(4321 + k)
    p = 1.0 / (1.0 + gap / SECTOR)  # geometric gaps in sectors with mean gap / SECTOR
    done: list[float] = []
    warmup, completions = WARMUP, COMPLETIONS
    if is_write and isinstance(model, hdd.HddParams) and model.write_cache:
        cached = model.cache_bytes / nbytes  # as zsim.analytic.devices: past the cache
        warmup = min(MAX_WARMUP, max(WARMUP, math.ceil(3 * cached)))
        completions = min(MAX_WARMUP, max(COMPLETIONS, math.ceil(8 * cached)))

    def submit() -> None:
        at = cursor[0]
        skip = int(rng.geometric(p)) - 1 if gap else 0
        cursor[0] = min(size - nbytes, at + nbytes + skip * SECTOR)

        def finished() -> None:
            done.append(env.now)
            if len(done) < completions + warmup:
                submit()

        dev.submit(DevIO(at, nbytes, is_write, finished))

    for _ in range(k):
        submit()
    with collector_paused():
        env.run()
    elapsed = done[-1] - done[warmup - 1]
    return completions / elapsed if elapsed > 0 else math.inf


# ---- the device tables for streams and random offsets (zsim.analytic.devices)


def merge_extents(
    extents: list[tuple[int, int, int]], limit: int, gap: int
) -> tuple[int, list[tuple[int, int]]]:
    """``vdev_queue_aggregate()`` over ``(offset, bytes, zios)`` extents (an extent may
    stand for several adjacent zios of equal size): adjacent extents (gaps ≤ ``gap``) form
    runs; within a run, zios of ``c`` bytes merge ``⌊limit / c⌋`` at a time (a zio larger
    than ``limit`` is issued alone). Returns (I/Os, runs as (offset, bytes))."""
    if not extents:
        return 0, []
    extents.sort()
    runs: list[tuple[int, int]] = []
    ios = 0
    start, end, count = extents[0][0], extents[0][0] + extents[0][1], extents[0][2]

    def close() -> int:
        size = end - start
        per = max(1, int(limit // max(1.0, size / count)))
        runs.append((start, size))
        return -(-count // per)

    for off, size, n in extents[1:]:
        if off - end <= gap:
            end = max(end, off + size)
            count += n
        else:
            ios += close()
            start, end, count = off, off + size, n
    ios += close()
    return ios, runs


def read_rate(
    profile: Profile, nbytes: int, sequential: bool, lo: float, width: float, k: int
) -> float:
    """Requests/s of ``nbytes`` reads at ``k`` outstanding over [lo, lo+width) of the disk
    (the DES's device in a closed loop, :func:`device_table`)."""
    hi = min(1.0, lo + width)
    table = device_table(profile, nbytes, False, sequential, lo, hi, max(1, k))
    return table.at(k)


def write_rate(profile: Profile, nbytes: int, lo: float, k: int) -> float:
    """Bytes/s of sequential writes onto a new disk: an HDD with a write cache at the media
    rate where its head is (``hdd.media_rate``; the cache hides nothing over hours of
    writes, txg flushes), else the device table."""
    if profile.kind == "hdd":
        params = hdd.hdd_params(profile)
        if params.write_cache:
            return hdd.media_rate(params, min(lo, 0.999))
    table = device_table(profile, nbytes, True, True, lo, min(1.0, lo + 1 / 64), max(1, k))
    return table.at(k) * nbytes


def quantize_size(nbytes: float, ashift: int) -> int:
    """A request size on an eighth-octave grid of sectors (tables are per size)."""
    sector = 1 << ashift
    sectors = max(1.0, nbytes / sector)
    return round(2.0 ** (round(8 * math.log2(sectors)) / 8)) * sector


def region_start(fraction: float) -> float:
    return min(63 / 64, math.floor(fraction * 64) / 64)


def region_width(width: float) -> float:
    width = min(1.0, max(width, 1 / 8192))
    return min(1.0, 2.0 ** (round(4 * math.log2(width)) / 4))
