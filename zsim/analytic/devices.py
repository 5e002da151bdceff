"""Device service tables for the analytic engine, measured on the discrete-event engine's own
device model.

The analytic engine does not carry a second copy of the disk physics. For each device it needs
the I/O rate with ``k`` requests outstanding (``k`` = 1 … a queue limit), for one request size,
direction and access pattern over one region of the device. It gets that by running the DES's
:class:`zsim.machine.resources.Device` (the HDD mechanics of :mod:`zsim.hardware.hdd` with SATF
over the NCQ queue, or the flash model of :mod:`zsim.hardware.flash`) in a closed loop with
``k`` requests outstanding, on its own small SimPy environment, for a fixed number of
completions. Results are cached per (profile, size, direction, pattern, region), so a sweep
over many layouts of the same disk pays for each table once.

A region's start is quantized to 1/64 of the device (:data:`REGION_STEP`) and its width to a
quarter-octave grid, so nearby layouts share a table while a small working set keeps its short
seeks.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import simpy

from zsim.hardware import flash, hdd
from zsim.hardware.catalog import Profile
from zsim.machine.collector import collector_paused
from zsim.machine.resources import Device, DevIO
from zsim.machine.resources import Path as BusPath
from zsim.table_cache import load_or_measure, profile_key, register_kind

REGION_STEP = 1 / 64
#: completions measured per queue depth (after :data:`WARMUP` discarded)
COMPLETIONS = 300
WARMUP = 40
#: cap on the completions spent filling an HDD's write cache before measuring (small random
#: writes through a 256 MiB cache would need 10⁵; the analytic engine issues them rarely)
MAX_WARMUP = 20000


#: queue depths measured; others are interpolated linearly (the rate is smooth in k)
DEPTHS = (1, 2, 3, 4, 6, 8, 10, 12, 16, 24, 32, 48, 64)


@dataclass(frozen=True)
class DeviceTable:
    """A device's closed-loop behaviour for one request shape.

    ``depths``/``rate``: requests/s with that many outstanding; ``service``: per-request
    response times at one outstanding, s (their spread gives fork-join estimates);
    ``responses``: the sorted response times at each depth, s (for percentiles).
    """

    nbytes: int
    is_write: bool
    sequential: bool
    depths: tuple[int, ...]
    rate: tuple[float, ...]
    service: tuple[float, ...]
    responses: tuple[tuple[float, ...], ...] = ()

    def quantile(self, k: float, q: float, fork: int = 1) -> float:
        """The ``q`` quantile of a request's response at ``k`` outstanding, s; with
        ``fork`` > 1 of the slowest of that many independent requests (a raidz read's
        columns): F_max⁻¹(q) = F⁻¹(q^(1/fork)). Interpolated between measured depths."""
        q = min(1.0, max(0.0, q)) ** (1.0 / max(1, fork))
        values = [float(np.quantile(r, q)) for r in self.responses]
        return float(np.interp(max(1.0, k), self.depths, values))

    def at(self, k: float) -> float:
        """Requests/s with ``k`` outstanding (interpolated; the last entry beyond the table)."""
        if k <= 0:
            return 0.0
        return float(np.interp(k, self.depths, self.rate))

    def sample(self, k: float, rng: np.random.Generator, n: int, fork: int = 1) -> np.ndarray:
        """``n`` response times at the measured depth nearest ``k`` (the slowest of ``fork``
        independent ones each), s."""
        i = int(np.argmin([abs(d - k) for d in self.depths]))
        pool = self._arrays[i]
        picks = rng.integers(0, len(pool), size=(max(1, fork), n))
        return pool[picks].max(axis=0)

    def sample_at(self, depth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One response time per entry of ``depth`` (requests outstanding at the device when
        it is issued, itself included), each drawn at the measured depth nearest it, s."""
        grid = np.asarray(self.depths)
        nearest = np.abs(np.asarray(depth)[..., None] - grid).argmin(axis=-1)
        out = np.empty(nearest.shape)
        for i in np.unique(nearest):
            where = nearest == i
            pool = self._arrays[int(i)]
            out[where] = pool[rng.integers(0, len(pool), size=int(where.sum()))]
        return out

    @functools.cached_property
    def _arrays(self) -> list[np.ndarray]:
        return [np.asarray(r) for r in self.responses]

    @functools.cached_property
    def mean_service(self) -> float:
        return float(np.mean(self.service))

    def expected_max(self, n: int) -> float:
        """E[max of ``n`` independent QD1 response times], s (fork-join of ``n`` leaves)."""
        s = np.sort(np.asarray(self.service))
        if n <= 1:
            return float(s.mean())
        m = len(s)
        # the empirical CDF's max-of-n: P(max ≤ s_i) = (i/m)^n
        cdf = (np.arange(1, m + 1) / m) ** n
        pmf = np.diff(np.concatenate(([0.0], cdf)))
        return float((pmf * s).sum())


def quantize_fraction(fraction: float) -> float:
    """A place on a device or vdev to :data:`REGION_STEP` of its space (tables of nearby
    places are shared)."""
    return min(1.0, max(0.0, round(fraction / REGION_STEP) * REGION_STEP))


def _region(lo: float, hi: float) -> tuple[float, float]:
    """[``lo``, ``hi``) on the tables' grid: its width a quarter-octave, its start a step."""
    width = _quantize_width(hi - lo)
    lo_q = min(quantize_fraction(lo), 1.0 - width)
    return lo_q, lo_q + width


def _quantize_width(width: float) -> float:
    """A region's width on a quarter-octave grid (≤ 19 % apart), at least 1/8192 of the
    device: seek distances scale with it, so small working sets keep their short seeks."""
    width = min(1.0, max(width, 1 / 8192))
    return min(1.0, 2.0 ** (round(4 * math.log2(width)) / 4))


def device_table(
    profile: Profile,
    nbytes: int,
    is_write: bool,
    sequential: bool,
    lo: float,
    hi: float,
    kmax: int,
) -> DeviceTable:
    """The table for requests of ``nbytes`` over [``lo``, ``hi``) of the device (fractions of
    its capacity), ``k`` = 1 … ``kmax`` outstanding; ``sequential``: one stream. Cached."""
    lo_q, hi_q = _region(lo, hi)
    key = (
        profile_key(profile),
        int(nbytes),
        bool(is_write),
        bool(sequential),
        lo_q,
        hi_q,
        int(kmax),
    )
    table = _CACHE.get(key)
    if table is None:
        table = _table(profile, *key[1:])
        _CACHE[key] = table
    return table


def point_rate(
    profile: Profile,
    nbytes: int,
    is_write: bool,
    sequential: bool,
    lo: float,
    hi: float,
    k: int,
) -> float:
    """Requests/s the device completes with ``k`` outstanding, over the region
    [``lo``, ``hi``) quantized as :func:`device_table` does: one depth's point of a table,
    measured alone where no table is needed (the point is shared with the tables). Cached."""
    lo_q, hi_q = _region(lo, hi)
    return _point(profile, int(nbytes), bool(is_write), bool(sequential), lo_q, hi_q, int(k))[0]


_CACHE: dict[tuple, DeviceTable] = {}
#: (profile key, size, direction, pattern, region, k) → (rate, response times): a point
#: serves every table that measures its depth, whatever the table's kmax
_POINTS: dict[tuple, tuple[float, tuple[float, ...]]] = {}

# the device model's modules, under zsim/ without ``.py``: a change to any of them measures
# the points anew (zsim.table_cache names the entries by their revision)
register_kind("point", ("hardware/hdd", "hardware/flash", "machine/resources", "analytic/devices"))


def _table(
    profile: Profile,
    nbytes: int,
    is_write: bool,
    sequential: bool,
    lo: float,
    hi: float,
    kmax: int,
) -> DeviceTable:
    depths = (*(d for d in DEPTHS if d < kmax), kmax)
    if is_write and profile.kind == "hdd":
        # writes through the drive's cache barely depend on the queue depth: two points
        depths = (1, kmax) if kmax > 1 else (1,)
    rates = []
    service: tuple[float, ...] = ()
    responses = []
    for k in depths:
        rate, times = _point(profile, nbytes, is_write, sequential, lo, hi, k)
        rates.append(rate)
        responses.append(tuple(sorted(times)))
        if k == 1:
            service = times
    # a device cannot get slower with more requests to choose from: keep the table monotone
    for i in range(1, len(rates)):
        rates[i] = max(rates[i], rates[i - 1])
    return DeviceTable(
        nbytes, is_write, sequential, depths, tuple(rates), service, tuple(responses)
    )


def _point(
    profile: Profile,
    nbytes: int,
    is_write: bool,
    sequential: bool,
    lo: float,
    hi: float,
    k: int,
) -> tuple[float, tuple[float, ...]]:
    """One depth's closed loop: from memory, else the disk cache, else measured."""
    key = (profile_key(profile), nbytes, is_write, sequential, lo, hi, k)
    point = _POINTS.get(key)
    if point is not None:
        return point
    point = _POINTS[key] = load_or_measure(
        "point",
        key,
        lambda: _closed_loop(profile, nbytes, is_write, sequential, lo, hi, k),
        lambda d: (float(d["rate"]), tuple(float(t) for t in d["times"])),
        lambda p: {"rate": p[0], "times": list(p[1])},
    )
    return point


def _closed_loop(
    profile: Profile,
    nbytes: int,
    is_write: bool,
    sequential: bool,
    lo: float,
    hi: float,
    k: int,
) -> tuple[float, tuple[float, ...]]:
    rotating = profile.kind == "hdd"
    model = hdd.hdd_params(profile) if rotating else flash.flash_params(profile)
    env = simpy.Environment()
    dev = Device(env, "bench", model, rotating, BusPath([]))
    size = profile.size_bytes
    sector = 4096
    start = int(size * lo) // sector * sector
    span = max(nbytes, int(size * (hi - lo)) // sector * sector - nbytes)
    rng = np.random.default_rng(12345 + k)
    warmup, completions = WARMUP, COMPLETIONS
    if is_write and isinstance(model, hdd.HddParams) and model.write_cache:
        # past the drive's write cache: it fills at the interface rate less the destage
        # rate (full after ~1.5-3 × its size), then alternates between absorbing and
        # destaging with a period of about its size, so measure over several periods
        cached = model.cache_bytes / nbytes
        warmup = min(MAX_WARMUP, max(WARMUP, math.ceil(3 * cached)))
        completions = min(MAX_WARMUP, max(COMPLETIONS, math.ceil(8 * cached)))
    cursor = [start]
    done_times: list[float] = []
    responses: list[float] = []

    def offset() -> int:
        if sequential:
            at = cursor[0]
            cursor[0] = at + nbytes if at + 2 * nbytes <= start + span else start
            return at
        return start + int(rng.integers(0, max(1, span // sector))) * sector

    def submit() -> None:
        issued = env.now

        def finished() -> None:
            done_times.append(env.now)
            responses.append(env.now - issued)
            if len(done_times) < completions + warmup:
                submit()

        dev.submit(DevIO(offset(), nbytes, is_write, finished))

    for _ in range(k):
        submit()
    with collector_paused():
        env.run()
    times = done_times[warmup:]
    elapsed = times[-1] - done_times[warmup - 1]
    rate = len(times) / elapsed if elapsed > 0 else math.inf
    return rate, tuple(responses[warmup:])
