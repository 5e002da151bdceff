"""One drive model: its constants from a catalog profile (:class:`HddParams`,
:func:`hdd_params`), the zoned media rate, the radius of an LBA and the rotational wait, the
mutable per-drive state (:class:`HddState`), and the closed-form mean service of a random
request that the theory checks use.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field, fields
from typing import overload

import numpy as np

from zsim.errors import ZsimError
from zsim.hardware.catalog import Profile
from zsim.hardware.hdd.geometry import ExactGeometry
from zsim.hardware.hdd.seek import (
    DEFAULT_CYLINDERS,
    SeekCurve,
    fit_seek_curve,
    seek_mean,
    seek_time,
    shift_curve,
)
from zsim.units import MiB

DEFAULT_OVERHEAD = 0.1e-3
"""Per-command controller overhead, s. DiskSim's DIXtrac-extracted Quantum Atlas 10K (1999)
spends 0.184-0.189 ms per cache-hit command (``westerndigitalcorporation/DiskSim:
EXPERIMENTAL/Linux_WCE_Generic/valid/atlas10k.diskspecs``, "Read hit over. after read =
0.184"); the embedded controllers of current SATA/SAS drives are more than twice as fast, so
0.1 ms is an estimate to replace with a measured cache-hit latency (fio, 4 KiB re-reads)."""

DEFAULT_READAHEAD = 2 * MiB
"""Read-ahead per stream, bytes: about one outer track of a current 3.5" 7200 rpm drive
(210 MB/s × 8.33 ms ≈ 1.75 MB). DiskSim's Atlas 10K spec reads ahead up to 354 blocks, about
one track of that drive ("Maximum read-ahead (blks) = 354"); drives split their buffer into
segments, so one stream gets a few MiB, not the whole cache. Capped at the cache size."""

DEFAULT_BUFFER_RATE = 600e6
"""Rate at which the drive's interface moves data to or from its buffer, bytes/s: the SATA
6 Gb/s payload rate (8b/10b coding: 6e9 × 8/10 / 8 = 600 MB/s). A profile's ``link_rate``
(line rate, bytes/s) × 0.8 is used when given. Contention on the host link or HBA is the
engine's business, not this model's."""

DEFAULT_DESTAGE_WINDOW = 32
"""How many of the oldest dirty extents the drive sorts by access time when destaging: the
NCQ queue depth, on the assumption that firmware schedules its write-back like queued
commands. Calibrate from sustained random-write IOPS with the write cache on."""

DEFAULT_REORDER_DEPTH = 32
"""Queued commands the drive chooses the next one among (shortest access time first): the
SATA NCQ / SAS TCQ tag count (32). Firmware that ages requests, or schedules by seek distance
without the rotational position, gains less from a deep queue than full SATF over 32; a
smaller effective window reproduces that gain, so ``zsim calibrate fit`` fits it from a
queued random-read sweep (profile key ``queue_reorder_depth``)."""

DEFAULT_CACHE = 64 * MiB
"""Drive cache when the profile gives none: the common buffer of 2010s 7200 rpm drives."""

INNER_RATE_RATIO = 0.5
"""Inner/outer media rate when the profile has no ``min_sustained``. Constant linear density
makes the rate ∝ radius, and the data band of a 3.5" platter spans roughly 0.45-0.5 of the
outer radius; published pairs give 0.47-0.48 (Constellation ES.3 83-175 MB/s, Deskstar 7K500
31.0/64.8 MB/s, quoted in ``models/seagate-ironwolf-12tb.toml``). 0.5 is the round figure."""

_SEEK_BY_RPM: tuple[tuple[float, float, float], ...] = (
    # (rpm below which the row applies, average read seek s, average write seek s)
    (6500.0, 12.0e-3, 13.0e-3),  # 5400/5900 rpm class: Hitachi 5K320 average read 12 ms
    (8500.0, 8.5e-3, 9.5e-3),  # 7200 rpm class: Hitachi Deskstar 7K1000.C 8.5 / 9.5 ms
    (12500.0, 4.2e-3, 4.8e-3),  # 10k rpm: estimate between the 7200 and 15k classes
    (math.inf, 3.4e-3, 3.9e-3),  # 15k rpm: Seagate Cheetah 15K-class 3.4 / 3.9 ms
)
"""Datasheet-style average seeks when a profile gives none (estimates; the 7200 rpm row is the
figure the catalog already uses for drives whose makers publish no seek times)."""

MIN_SEEK_RATIO = 0.1
"""Track-to-track seek / average seek when missing (0.5 ms / 8.5 ms ≈ 0.06 in the catalog,
0.23-1.0 ms on published specs; 0.1 × average sits in that range)."""

MAX_SEEK_RATIO = 2.0
"""Full-stroke / average seek when missing: 1.7-2× on published specs (Hitachi 5K320
20 / 12 ms), and 2× is what the catalog's estimates use."""


_sqrt = math.sqrt
_floor = math.floor


@dataclass(frozen=True)
class HddParams:
    """One drive model's constants. Build from a profile with :func:`hdd_params`.

    ``capacity`` bytes; ``rpm``; ``outer_rate``/``inner_rate`` media rates at LBA 0 and at the
    end, bytes/s; ``seek_read``/``seek_write`` fitted curves; ``sector`` physical sector,
    bytes; ``overhead`` per command, s; ``write_cache`` write-back on (WCE); ``cache_bytes``
    dirty data the drive may hold; ``persistent_cache`` the cache survives power loss (Toshiba's
    Persistent Write Cache, or a capacitor), so a flush or FUA write completes from the cache;
    ``readahead`` bytes per stream; ``buffer_rate`` interface ↔ buffer rate, bytes/s;
    ``destage_window`` dirty extents sorted per destage; ``reorder_depth`` queued commands
    the scheduler chooses among (:data:`DEFAULT_REORDER_DEPTH`); ``notes`` the fallbacks
    :func:`hdd_params` used. Derived constants follow (not init arguments).
    """

    capacity: int
    rpm: float
    outer_rate: float
    inner_rate: float
    seek_read: SeekCurve
    seek_write: SeekCurve
    sector: int = 4096
    overhead: float = DEFAULT_OVERHEAD
    write_cache: bool = True
    persistent_cache: bool = False
    cache_bytes: int = DEFAULT_CACHE
    readahead: int = DEFAULT_READAHEAD
    buffer_rate: float = DEFAULT_BUFFER_RATE
    destage_window: int = DEFAULT_DESTAGE_WINDOW
    reorder_depth: int = DEFAULT_REORDER_DEPTH
    notes: tuple[str, ...] = ()
    geometry: ExactGeometry | None = None  # optional measured layout: see geo_service
    period: float = field(init=False, repr=False)  # one revolution, s
    rho: float = field(init=False, repr=False)  # inner/outer radius = inner/outer rate
    tracks: float = field(init=False, repr=False)  # tracks on all surfaces (spiral turns)
    mean_rate: float = field(init=False, repr=False)  # harmonic mean over uniform LBAs

    def __post_init__(self) -> None:
        if self.capacity <= 0 or self.rpm <= 0:
            raise ZsimError("a disk needs a capacity and an rpm above 0")
        if not 0 < self.inner_rate <= self.outer_rate:
            raise ZsimError(
                f"media rates must satisfy 0 < inner ({self.inner_rate:.4g} B/s) ≤ outer "
                f"({self.outer_rate:.4g} B/s); swap or fix min_sustained/max_sustained"
            )
        if self.sector <= 0 or self.buffer_rate <= 0 or self.overhead < 0:
            raise ZsimError("sector and buffer rate must be above 0 and overhead not negative")
        if self.cache_bytes < 0 or self.readahead < 0 or self.destage_window < 1:
            raise ZsimError("cache and read-ahead must not be negative, destage window ≥ 1")
        if self.reorder_depth < 1:
            raise ZsimError(
                f"queue_reorder_depth {self.reorder_depth} must be at least 1 (1: first come, "
                "first served; NCQ drives: up to 32)"
            )
        period = 60.0 / self.rpm
        rho = self.inner_rate / self.outer_rate
        mean_track = period * self.outer_rate * (1.0 + rho) / 2.0
        object.__setattr__(self, "period", period)
        object.__setattr__(self, "rho", rho)
        object.__setattr__(self, "tracks", self.capacity / mean_track)
        # E[n / rate(f)] over f ~ U(0,1) = n / (outer (1+ρ)/2): see expected_random_service
        object.__setattr__(self, "mean_rate", self.outer_rate * (1.0 + rho) / 2.0)


def _class_seeks(rpm: float) -> tuple[float, float]:
    for limit, read, write in _SEEK_BY_RPM:
        if rpm < limit:
            return read, write
    raise AssertionError("unreachable")  # pragma: no cover


def hdd_params(
    profile: Profile, *, cylinders: int = DEFAULT_CYLINDERS, **overrides: object
) -> HddParams:
    """Model constants for a catalog or inline HDD profile; ``overrides`` replace any field.

    Fallbacks for missing figures (each recorded in ``notes``):

    * ``min_sustained`` → 0.5 × ``max_sustained`` (:data:`INNER_RATE_RATIO`);
    * average seeks → the rpm class (:data:`_SEEK_BY_RPM`, 8.5 ms read / 9.5 ms write at
      7200 rpm); a single ``avg_seek`` applies to reads and writes; with only one of
      ``avg_seek_read``/``avg_seek_write`` the other keeps the class's write-settle gap;
    * ``min_seek`` → 0.1 × average read, ``max_seek`` → 2 × average read;
    * ``cache`` → 64 MiB; read-ahead min(cache, 2 MiB); buffer rate from ``link_rate`` × 0.8
      or 600 MB/s.

    The write curve is the read curve plus the write settle (average write − average read).
    """
    if profile.kind != "hdd":
        raise ZsimError(f"profile {profile.name!r} is a {profile.kind}, not an hdd")
    if profile.rpm is None or profile.max_sustained is None:
        raise ZsimError(f"profile {profile.name!r} needs rpm and max_sustained")
    allowed = {f.name for f in fields(HddParams) if f.init}
    unknown = set(overrides) - allowed
    if unknown:
        raise ZsimError(f"unknown HDD parameters {sorted(unknown)}; use one of {sorted(allowed)}")
    notes: list[str] = []
    outer = profile.max_sustained
    inner = profile.min_sustained
    if inner is None:
        inner = INNER_RATE_RATIO * outer
        notes.append(f"min_sustained missing: {INNER_RATE_RATIO} × max_sustained")
    class_read, class_write = _class_seeks(profile.rpm)
    settle = class_write - class_read
    read_given = profile.avg_seek_read or profile.avg_seek
    write_given = profile.avg_seek_write or profile.avg_seek
    if read_given is not None:
        read = read_given
        if write_given is not None:
            write = write_given
        else:
            write = read + settle
            notes.append("avg_seek_write missing: read figure plus the class write settle")
    elif write_given is not None:
        write = write_given
        read = max(write - settle, 0.0)
        notes.append("avg_seek_read missing: write figure minus the class write settle")
    else:
        read, write = class_read, class_write
        notes.append(f"avg seek missing: {profile.rpm} rpm class {read * 1e3:g}/{write * 1e3:g} ms")
    min_seek = profile.min_seek
    if min_seek is None:
        min_seek = MIN_SEEK_RATIO * read
        notes.append(f"min_seek missing: {MIN_SEEK_RATIO} × average read seek")
    max_seek = profile.max_seek
    if max_seek is None:
        max_seek = MAX_SEEK_RATIO * read
        notes.append(f"max_seek missing: {MAX_SEEK_RATIO} × average read seek")
    seek_read = fit_seek_curve(min_seek, read, max_seek, cylinders)
    cache = profile.cache
    if cache is None:
        cache = DEFAULT_CACHE
        notes.append("cache missing: 64 MiB")
    buffer_rate = DEFAULT_BUFFER_RATE if profile.link_rate is None else 0.8 * profile.link_rate
    values: dict[str, object] = {
        "capacity": profile.size_bytes,
        "rpm": float(profile.rpm),
        "outer_rate": float(outer),
        "inner_rate": float(inner),
        "seek_read": seek_read,
        "seek_write": shift_curve(seek_read, write - read),
        "sector": profile.physical_sector_bytes,
        "cache_bytes": cache,
        "readahead": min(cache, DEFAULT_READAHEAD),
        "buffer_rate": buffer_rate,
        "notes": tuple(notes),
    }
    if profile.write_back is not None:  # the profile says whether write-back is on
        values["write_cache"] = profile.write_back
    if profile.power_loss_protection:
        values["persistent_cache"] = True
    if profile.command_overhead is not None:  # measured (zsim calibrate fit)
        values["overhead"] = profile.command_overhead
    if profile.queue_reorder_depth is not None:  # measured (zsim calibrate fit)
        values["reorder_depth"] = profile.queue_reorder_depth
    if "cache_bytes" in overrides and "readahead" not in overrides:
        values["readahead"] = min(int(overrides["cache_bytes"]), DEFAULT_READAHEAD)  # type: ignore[call-overload]
    values.update(overrides)
    return HddParams(**values)  # type: ignore[arg-type]


# ---------------------------------------------------------------- geometry


def media_rate(params: HddParams, lba_fraction: float) -> float:
    """Media transfer rate at LBA fraction f ∈ [0, 1), bytes/s.

    Constant linear density: rate ∝ radius r. Bytes fill the area from the outside in, so
    f = (Ro² − r²)/(Ro² − Ri²) and r/Ro = √(1 − f(1 − ρ²)), ρ = Ri/Ro = inner/outer rate.
    """
    return params.outer_rate * _sqrt(1.0 - lba_fraction * (1.0 - params.rho * params.rho))


@overload
def radial_position(params: HddParams, lba_fraction: float) -> float: ...
@overload
def radial_position(params: HddParams, lba_fraction: np.ndarray) -> np.ndarray: ...
def radial_position(params: HddParams, lba_fraction: float | np.ndarray) -> float | np.ndarray:
    """Cylinder fraction of LBA fraction f: 0 outermost, 1 innermost (the seek coordinate).

    x = (Ro − r)/(Ro − Ri) = (1 − s)/(1 − ρ) with s = r/Ro, written f(1 + ρ)/(1 + s) so that
    an unzoned disk (ρ = 1) gives x = f. A NumPy array of fractions gives an array.
    """
    rho = params.rho
    k = 1.0 - lba_fraction * (1.0 - rho * rho)
    s = np.sqrt(k) if isinstance(k, np.ndarray) else _sqrt(k)
    return lba_fraction * (1.0 + rho) / (1.0 + s)


def track_bytes(params: HddParams, lba_fraction: float) -> float:
    """Bytes on the track at LBA fraction f: media rate × rotation period."""
    return media_rate(params, lba_fraction) * params.period


def rotational_wait(
    params: HddParams, head_time: float, lba_fraction: float, byte_offset: int
) -> float:
    """Wait from ``head_time`` (seek done) until the sector at ``byte_offset`` is under the head, s.

    ``lba_fraction`` (= byte_offset / capacity) locates the track; the layout is a spiral of
    ``tracks`` turns, track k holding the bytes between cylinder fractions k/tracks and
    (k + 1)/tracks. The sector's angle is (byte offset within its track) / (track bytes); the
    platter's angle at time t is (t / period) mod 1, both measured from the same index.
    """
    rho = params.rho
    k2 = 1.0 - rho * rho
    s = _sqrt(1.0 - lba_fraction * k2)
    u = params.tracks * lba_fraction * (1.0 + rho) / (1.0 + s)
    xk = _floor(u) / params.tracks  # start of the track, as a cylinder fraction
    start = params.capacity * xk * (2.0 - xk * (1.0 - rho)) / (1.0 + rho)  # inverse of x(f)
    angle = (byte_offset - start) / (params.outer_rate * s * params.period)
    platter = head_time / params.period
    wait = (angle - platter) % 1.0
    if wait > 1.0 - 1e-9:  # the sector is just arriving, not one turn away
        wait = 0.0
    return wait * params.period


# ---------------------------------------------------------------- state


@dataclass(slots=True)
class HddState:
    """The mutable state of one drive (one per drive; the model functions update it).

    ``radial`` head position (cylinder fraction) after its committed work; ``head_free`` when
    that work ends; ``head_offset`` the byte after the last media transfer (sequential
    detection); ``free_at`` when the last request completed to the host. The read-ahead
    window ``[ra_start, ra_end)`` holds bytes the drive has read or is reading: byte b >
    ``ra_anchor`` arrives at ``ra_anchor_time + (b − ra_anchor)/ra_rate``; ``ra_live`` while
    the head is still streaming it. ``dirty`` holds write-back extents (offset, bytes) not yet
    on the media, ``dirty_bytes`` their total.
    """

    radial: float = 0.0
    head_free: float = 0.0
    head_offset: int = -1
    free_at: float = 0.0
    ra_start: int = 0
    ra_end: int = 0
    ra_anchor: int = 0
    ra_anchor_time: float = 0.0
    ra_rate: float = 1.0
    ra_live: bool = False
    dirty: deque[tuple[int, int, float]] = field(default_factory=deque)
    dirty_bytes: int = 0
    geo: object = None  # state of the exact-geometry path (HddParams.geometry)
    #: offset → (cylinder fraction, rotational phase) of the commands and extents waiting
    #: (``zsim.hardware.hdd.access``: computed once per offset, not once per decision)
    placed: dict[int, tuple[float, float]] = field(default_factory=dict)


# ---------------------------------------------------------------- theory


def lba_seek_mean(params: HddParams, is_write: bool) -> float:
    """Mean seek between two uniformly random LBAs (not cylinders), s; theory checks only.

    Uniform bytes put more heads on the outer cylinders: cylinder x has density
    p(x) = (1 − κx)/(1 − κ/2), κ = 1 − ρ. The distance density is then
    g(d) = 2/Z² · [B·L − κ(1 + B)L²/2 + κ²L³/3] with L = 1 − d, B = 1 − κd, Z = 1 − κ/2
    (2(1 − d) when κ = 0), and the mean is ∫ g·t, integrated numerically (scipy ``quad``).
    About 1.4 % below :func:`seek_mean` on a drive zoned 0.48 (IronWolf 12TB: 8.38 vs
    8.50 ms).
    """
    from scipy.integrate import quad  # theory only

    curve = params.seek_write if is_write else params.seek_read
    k = 1.0 - params.rho
    z2 = (1.0 - k / 2.0) ** 2

    def integrand(d: float) -> float:
        length, b = 1.0 - d, 1.0 - k * d
        g = 2.0 / z2 * (b * length - k * (1.0 + b) * length**2 / 2.0 + k * k * length**3 / 3.0)
        return g * seek_time(curve, d)

    points = [curve.x0] if 0.0 < curve.x0 < 1.0 else None
    value, _ = quad(integrand, 0.0, 1.0, points=points, limit=200, epsabs=1e-12)
    return float(value)


def expected_random_service(
    params: HddParams, nbytes: int, is_write: bool, *, lba_weighted: bool = False
) -> float:
    """Mean media service of a request at a uniformly random LBA (queue depth 1), s.

    overhead + mean seek (the curve's mean over the 2(1 − x) distance density, i.e. the
    datasheet average) + half a revolution + nbytes / mean rate. The mean rate is the
    harmonic mean over uniform LBAs, E[1/rate] = 2 / (outer (1 + ρ)) (∫0^1 df/√(1 − f(1 − ρ²))
    = 2/(1 + ρ)), so the transfer term is exact. For writes this is the cost of a write to
    the media (write cache off, or the destage cost with it on), plus a revolution when
    ``nbytes`` is not a multiple of the physical sector. ``lba_weighted`` takes the mean seek
    over uniformly random LBAs instead (:func:`lba_seek_mean`), what :func:`service` sees.
    """
    p = params
    if lba_weighted:
        seek = lba_seek_mean(p, is_write)
    else:
        seek = seek_mean(p.seek_write if is_write else p.seek_read)
    xfer = nbytes / p.mean_rate
    if is_write and nbytes % p.sector:
        xfer += p.period
    return p.overhead + seek + p.period / 2.0 + xfer
