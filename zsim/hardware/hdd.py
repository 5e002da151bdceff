"""Service time of one hard disk, request by request, after Ruemmler & Wilkes (1994).

A pure model: no SimPy, no numpy on the per-request path. The discrete-event engine owns
time and queues; it calls :func:`choose_next` to pick among the commands waiting at a drive
and :func:`service` to learn how long the chosen one takes. Every call is O(1) except queue
selection, which is O(queue length). SI units: bytes, seconds, bytes/s.

Components, in the order R&W add them (``../shared/notes/prior-art.md`` §1):

controller    a fixed per-command ``overhead``
seek          two-piece curve, √distance for short seeks and linear for long ones, fitted
              to the datasheet's minimum / average / maximum seek (:func:`fit_seek_curve`);
              settle and head switches are folded into the curve; writes add the datasheet's
              extra write settle (average write − average read seek)
rotation      from the platter's actual angle, not "half a rotation" (:func:`rotational_wait`)
zoning        constant linear density: media rate ∝ radius, bytes spread over the area
              (:func:`media_rate`, :func:`radial_position`)
cache         one read-ahead stream (the window after the last read, filled at media rate
              while the head is free) and write-back ("immediate report") writes whose
              media work is kept as *destage debt* and paid in idle time or when the cache
              is full, so sustained random writes cost what the media can do
queueing      shortest-access-time-first among queued commands (:func:`choose_next`), as
              NCQ/TCQ drives do
512e          a write that does not cover whole physical sectors costs one extra revolution
              (read-modify-write of the partial sector)

Not modelled: track/cylinder skew and sparing (the layout is a continuous spiral, which is a
perfectly skewed layout), more than one cache segment, reads served from dirty write data,
SMR, thermal recalibration. DiskSim's validation shows datasheet figures give "much larger
discrepancies" than measured ones; :func:`hdd_params` takes overrides for calibrated values.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field, fields
from typing import overload

import numpy as np

from zsim.errors import ZsimError
from zsim.hardware.catalog import Profile

KiB, MiB = 1 << 10, 1 << 20

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

DEFAULT_CYLINDERS = 500_000
"""Cylinders (tracks per surface), used only to place the minimum seek at distance 1/ncyl. A
12 TB drive with 16 heads and ~1.3 MB average tracks has 12e12 / 1.3e6 / 16 ≈ 580 k; the fit
is insensitive to it (1/√ncyl changes by 0.0004 between 400 k and 600 k)."""

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

_EPS = 1e-12
_sqrt = math.sqrt
_floor = math.floor


# ---------------------------------------------------------------- seek curve


@dataclass(frozen=True)
class SeekCurve:
    """Seek time against distance x (fraction of the full stroke), seconds.

    ``t(x) = a + b·√x`` for 1/(2·ncyl) ≤ x < x0, ``c + e·x`` for x ≥ x0, 0 on the same
    cylinder. The two pieces meet at x0 with equal value and slope (the arm reaches its
    coasting speed there): Ruemmler & Wilkes (1994), "speedup/coast/slowdown/settle".
    """

    a: float
    b: float
    c: float
    e: float
    x0: float
    cylinders: int


@overload
def seek_time(curve: SeekCurve, distance_fraction: float) -> float: ...
@overload
def seek_time(curve: SeekCurve, distance_fraction: np.ndarray) -> np.ndarray: ...
def seek_time(curve: SeekCurve, distance_fraction: float | np.ndarray) -> float | np.ndarray:
    """Seek over ``distance_fraction`` of the stroke (0 = same cylinder, 1 = full stroke), s.
    A NumPy array of distances gives the array of seeks, element by element."""
    x = distance_fraction
    if isinstance(x, np.ndarray):
        return np.where(
            x * curve.cylinders < 0.5,
            0.0,
            np.where(x < curve.x0, curve.a + curve.b * np.sqrt(x), curve.c + curve.e * x),
        )
    if x * curve.cylinders < 0.5:
        return 0.0
    if x < curve.x0:
        return curve.a + curve.b * _sqrt(x)
    return curve.c + curve.e * x


def _curve_for(x0: float, min_seek: float, max_seek: float, cylinders: int) -> SeekCurve:
    # t(1/ncyl) = min, t(1) = max, tangent join at x0: c = a + b√x0/2, e = b/(2√x0).
    r = _sqrt(x0)
    h = (r + 1.0 / r) / 2.0
    s = 1.0 / _sqrt(cylinders)
    b = (max_seek - min_seek) / (h - s)
    a = min_seek - b * s
    return SeekCurve(a=a, b=b, c=a + b * r / 2.0, e=b / (2.0 * r), x0=x0, cylinders=cylinders)


def seek_mean(curve: SeekCurve) -> float:
    """Mean seek between two independent uniformly random cylinders, s.

    The distance of two uniform points on [0, 1] has density 2(1 − x); integrated in closed
    form over each piece (the zero-distance point has no weight).
    """
    x0, r = curve.x0, _sqrt(curve.x0)
    p_sqrt = 2.0 * x0 - x0 * x0  # ∫0^x0 2(1−x) dx
    m_sqrt = (4.0 / 3.0) * x0 * r - 0.8 * x0 * x0 * r  # ∫0^x0 √x·2(1−x) dx
    p_lin = (1.0 - x0) ** 2  # ∫x0^1 2(1−x) dx
    m_lin = 1.0 / 3.0 - x0 * x0 + 2.0 * x0**3 / 3.0  # ∫x0^1 x·2(1−x) dx
    return curve.a * p_sqrt + curve.b * m_sqrt + curve.c * p_lin + curve.e * m_lin


def fit_seek_curve(
    min_seek: float, avg_seek: float, max_seek: float, ncyl: int = DEFAULT_CYLINDERS
) -> SeekCurve:
    """Fit the two-piece seek curve to datasheet minimum, average and maximum seeks (s).

    Conditions: ``t(1/ncyl) = min_seek``, ``t(1) = max_seek``, value and slope continuous at
    x0, and the mean over random seeks (distance density 2(1 − x)) equal to ``avg_seek``. For
    a given x0 the first four are linear in (a, b, c, e); x0 is then found by a bracketing
    root search on the mean (fit time only). The mean runs from about min + (max − min)/3
    (x0 → 0, a straight line) to min + 8/15·(max − min) (x0 = 1, pure √): an average outside
    that range cannot come from a concave curve and is refused.
    """
    from scipy.optimize import brentq  # fit time only

    if ncyl < 2:
        raise ZsimError(f"a disk needs at least 2 cylinders, not {ncyl}")
    if not 0.0 <= min_seek <= avg_seek <= max_seek:
        raise ZsimError(
            f"seek times must grow min ≤ average ≤ max, got {min_seek * 1e3:.3g} / "
            f"{avg_seek * 1e3:.3g} / {max_seek * 1e3:.3g} ms; check the profile's seek figures"
        )
    if max_seek - min_seek < 1e-9:
        return SeekCurve(a=min_seek, b=0.0, c=min_seek, e=0.0, x0=1.0, cylinders=ncyl)
    lo = 1.0 / ncyl

    def gap(x0: float) -> float:
        return seek_mean(_curve_for(x0, min_seek, max_seek, ncyl)) - avg_seek

    g_lo, g_hi = gap(lo), gap(1.0)
    if g_lo > 0.0 or g_hi < 0.0:
        low, high = avg_seek - g_lo, avg_seek - g_hi
        raise ZsimError(
            f"an average seek of {avg_seek * 1e3:.3g} ms does not fit min {min_seek * 1e3:.3g} /"
            f" max {max_seek * 1e3:.3g} ms: a seek curve through those ends averages between "
            f"{low * 1e3:.3g} and {high * 1e3:.3g} ms; check the seek figures"
        )
    if g_hi == 0.0:
        return _curve_for(1.0, min_seek, max_seek, ncyl)
    x0 = brentq(gap, lo, 1.0, xtol=1e-14, rtol=1e-12)
    return _curve_for(float(x0), min_seek, max_seek, ncyl)


def _shifted(curve: SeekCurve, delta: float) -> SeekCurve:
    return SeekCurve(curve.a + delta, curve.b, curve.c + delta, curve.e, curve.x0, curve.cylinders)


# ---------------------------------------------------------------- parameters


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
    geometry: ExactGeometry | None = None  # optional measured layout: see _geo_service
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
        "seek_write": _shifted(seek_read, write - read),
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


def _avail(st: HddState, b: int) -> float:
    """Time byte b of the read-ahead window is in the buffer (0.0: already there)."""
    if b <= st.ra_anchor:
        return 0.0
    return st.ra_anchor_time + (b - st.ra_anchor) / st.ra_rate


class _Head:
    """Where the head is for a command decoded at ``t_ready`` (computed once per decision).

    ``t_seq``: by when the command is known for a seamless sequential continuation; a
    command already waiting when the previous request ended (``now`` ≤ ``free_at``: queued)
    is known at once, others after the overhead. ``t0``: when positioning can start (the
    head finishes committed work first). ``radial``: the head's cylinder fraction at ``t0``
    (a live read-ahead stream is cut there). ``end_t``: when a live stream ends (−1 if none).
    """

    __slots__ = ("end_t", "radial", "t0", "t_seq")

    def __init__(self, p: HddParams, st: HddState, now: float, t_ready: float) -> None:
        self.t_seq = now if now <= st.free_at + _EPS else t_ready
        self.t0 = t_ready if t_ready > st.head_free else st.head_free
        self.radial = st.radial
        self.end_t = -1.0
        if st.ra_live:
            self.end_t = _avail(st, st.ra_end)
            if self.t0 < self.end_t:  # the stream is cut where it is at t0
                cut = st.ra_anchor + int((self.t0 - st.ra_anchor_time) * st.ra_rate)
                self.radial = radial_position(p, max(cut, st.ra_start) / p.capacity)


def _access(
    p: HddParams, st: HddState, head: _Head, offset: int, is_write: bool
) -> tuple[float, float, float]:
    """(seek, rotation, transfer start) of a media access at ``offset``; state unchanged.

    Sequential continuations (the head reaches ``offset`` on its own before the command is
    late) cost nothing; otherwise :func:`seek_time` and :func:`rotational_wait`, inlined
    here to share one square root (this runs once per queued command per decision).
    """
    if st.ra_live:
        if offset == st.ra_end and head.t_seq <= head.end_t:
            return 0.0, 0.0, head.end_t
    elif offset == st.head_offset and head.t_seq <= st.head_free + _EPS:
        return 0.0, 0.0, st.head_free
    rho = p.rho
    f = offset / p.capacity
    s = _sqrt(1.0 - f * (1.0 - rho * rho))
    x = f * (1.0 + rho) / (1.0 + s)
    d = x - head.radial if x > head.radial else head.radial - x
    curve = p.seek_write if is_write else p.seek_read
    if d * curve.cylinders < 0.5:
        seek = 0.0
    elif d < curve.x0:
        seek = curve.a + curve.b * _sqrt(d)
    else:
        seek = curve.c + curve.e * d
    period = p.period
    t = head.t0 + seek
    xk = _floor(p.tracks * x) / p.tracks
    track_start = p.capacity * xk * (2.0 - xk * (1.0 - rho)) / (1.0 + rho)
    wait = ((offset - track_start) / (p.outer_rate * s * period) - t / period) % 1.0
    if wait > 1.0 - 1e-9:
        wait = 0.0
    rot = wait * period
    return seek, rot, t + rot


def _media_op(
    p: HddParams,
    st: HddState,
    now: float,
    t_ready: float,
    offset: int,
    nbytes: int,
    is_write: bool,
) -> tuple[float, float, float, float]:
    """Do a media transfer; returns (done, seek, rotation, transfer) and commits the head."""
    head = _Head(p, st, now, t_ready)
    seek, rot, start = _access(p, st, head, offset, is_write)
    xfer = nbytes / media_rate(p, offset / p.capacity)
    if is_write and (offset % p.sector or (offset + nbytes) % p.sector):
        xfer += p.period  # read-modify-write of a partial physical sector
    if st.ra_live:
        continued = offset == st.ra_end and start == head.end_t
        if not continued and head.t0 < head.end_t:
            cut = st.ra_anchor + int((head.t0 - st.ra_anchor_time) * st.ra_rate)
            st.ra_end = min(st.ra_end, max(cut, st.ra_start))
        st.ra_live = False
    done = start + xfer
    end = offset + nbytes
    st.head_free = done
    st.head_offset = end
    st.radial = radial_position(p, min(end, p.capacity - 1) / p.capacity)
    return done, seek, rot, xfer


def _drop_overlap(st: HddState, offset: int, nbytes: int) -> None:
    """Forget the read-ahead window if a write touches it."""
    if offset < st.ra_end and offset + nbytes > st.ra_start:
        st.ra_start = st.ra_end = st.ra_anchor = 0
        st.ra_live = False


def _destage_one(
    p: HddParams, st: HddState, now: float, t_ready: float, causal: bool = False
) -> float:
    """Write the dirty extent with the shortest access (of the oldest few) to the media."""
    dirty = st.dirty
    head = _Head(p, st, now, t_ready)
    best, best_start = 0, math.inf
    for i in range(min(p.destage_window, len(dirty))):
        start = _access(p, st, head, dirty[i][0], True)[2]
        if start < best_start:
            best, best_start = i, start
    off, n, ready = dirty[best]
    del dirty[best]
    st.dirty_bytes -= n
    # ``causal``: data handed over at ``ready`` cannot reach the media earlier. A flush needs
    # that; idle-time destage does not ask it, which lets a slowly arriving sequential
    # stream go down as one continuous pass, as drives that hold and coalesce it do.
    if causal and ready > now:
        now, t_ready = ready, max(t_ready, ready)
    return _media_op(p, st, now, t_ready, off, n, True)[0]


def _destage_idle(p: HddParams, st: HddState, now: float, causal: bool = False) -> None:
    """Pay destage debt in the idle time before ``now``; the last write may run past it."""
    t = st.head_free
    if st.ra_live:
        t = max(t, _avail(st, st.ra_end))  # let read-ahead finish first
    while st.dirty and t < now:
        t = _destage_one(p, st, t, t, causal)


def _add_dirty(st: HddState, offset: int, nbytes: int, ready: float) -> None:
    """Hold a cached write of ``nbytes`` at ``offset``, in the cache from time ``ready``."""
    dirty = st.dirty
    if dirty:
        last_off, last_n, _ = dirty[-1]
        if last_off + last_n == offset:
            dirty[-1] = (last_off, last_n + nbytes, ready)
            st.dirty_bytes += nbytes
            return
    dirty.append((offset, nbytes, ready))
    st.dirty_bytes += nbytes


# ---------------------------------------------------------------- requests


def service(
    params: HddParams,
    state: HddState,
    now: float,
    offset_bytes: int,
    nbytes: int,
    is_write: bool,
    needs_flush: bool = False,
) -> tuple[float, dict[str, float]]:
    """Serve one request arriving at the drive at ``now``; returns (seconds to completion, parts).

    ``parts`` splits the time into overhead, destage (head busy with write-back first), seek,
    rotation, transfer (media, or interface for cache hits) and wait (the rest: waiting for
    read-ahead data, the head or the interface); they sum to the total. Rules:

    * the drive serves one command at a time: a call before the previous completion waits;
    * idle time since the head was last busy pays destage debt first (non-preemptive);
    * a read inside the read-ahead window completes when its data is in the buffer and has
      crossed the interface; a read running past the window continues the stream from its
      end; anything else seeks, waits for rotation and transfers at the local media rate;
      after a read the drive reads ahead ``readahead`` bytes while its head is otherwise free;
    * a write with the write cache on (and no flush) completes after overhead + interface
      transfer; its media work becomes destage debt, paid whenever the head is idle and,
      once ``cache_bytes`` are dirty, before the write is accepted, so sustained writes run
      at the destage rate (destages are sorted like queued commands, ``destage_window``);
    * ``needs_flush`` (FUA write or a cache flush after it, as ZFS issues for the ZIL and txg
      commits): all dirty data, then this write, reach the media before completion;
      ``nbytes = 0`` is a bare flush. With ``persistent_cache`` the cache already counts as
      stable: the write is cached like any other and a bare flush costs the overhead only.
    """
    p, st = params, state
    if p.geometry is not None:
        return _geo_service(p, st, now, offset_bytes, nbytes, is_write)
    start = now if now >= st.free_at else st.free_at
    if st.dirty:
        _destage_idle(p, st, start, causal=needs_flush)
    head_before = st.head_free
    t_ready = start + p.overhead
    seek = rot = xfer = 0.0
    n, o = nbytes, offset_bytes
    if not is_write:
        if n > 0 and st.ra_start <= o < st.ra_end:
            end = o + n
            if end <= st.ra_end:  # whole hit: wait for the data if the stream is still on it
                done = _avail(st, end)
                xfer = n / p.buffer_rate
                if st.ra_live:
                    _extend_stream(p, st, start, t_ready, end)
                else:
                    st.ra_start = end
                complete = max(done, t_ready + xfer)
                return _finish(st, now, complete, p.overhead, 0.0, 0.0, 0.0, xfer, start)
            done, seek, rot, xfer = _media_op(
                p, st, start, t_ready, st.ra_end, end - st.ra_end, False
            )
        else:
            done, seek, rot, xfer = _media_op(p, st, start, t_ready, o, n, False)
        _start_stream(p, st, o + n, done)
        complete = max(done, t_ready + n / p.buffer_rate)
        destage = max(0.0, min(head_before, complete) - t_ready)
        return _finish(st, now, complete, p.overhead, destage, seek, rot, xfer, start)

    if needs_flush and p.write_cache and p.persistent_cache:
        needs_flush = False  # the cache is non-volatile: a flush has nothing to wait for
        if n == 0:
            complete = t_ready
            return _finish(st, now, complete, p.overhead, 0.0, 0.0, 0.0, 0.0, start)
    if p.write_cache and not needs_flush and n <= p.cache_bytes:
        t_room = t_ready
        while st.dirty_bytes + n > p.cache_bytes:
            t_room = _destage_one(p, st, start, t_ready)
        _drop_overlap(st, o, n)
        xfer = n / p.buffer_rate
        complete = max(t_ready, t_room) + xfer
        _add_dirty(st, o, n, complete)
        destage = max(0.0, t_room - t_ready)
        return _finish(st, now, complete, p.overhead, destage, 0.0, 0.0, xfer, start)

    if needs_flush:
        while st.dirty:
            _destage_one(p, st, start, t_ready, causal=True)
    flushed = st.head_free
    done = max(t_ready, flushed)
    if n > 0:
        _drop_overlap(st, o, n)
        done, seek, rot, xfer = _media_op(p, st, start, t_ready, o, n, True)
    complete = max(done, t_ready + n / p.buffer_rate)
    destage = max(0.0, min(max(head_before, flushed), complete) - t_ready)
    return _finish(st, now, complete, p.overhead, destage, seek, rot, xfer, start)


def _finish(
    st: HddState,
    now: float,
    complete: float,
    overhead: float,
    destage: float,
    seek: float,
    rot: float,
    xfer: float,
    start: float,
) -> tuple[float, dict[str, float]]:
    st.free_at = complete
    total = complete - now
    parts = {
        "overhead": overhead,
        "destage": destage,
        "seek": seek,
        "rotation": rot,
        "transfer": xfer,
        "wait": 0.0,
    }
    parts["wait"] = max(0.0, total - overhead - destage - seek - rot - xfer)
    return total, parts


def _start_stream(p: HddParams, st: HddState, at: int, when: float) -> None:
    """After a media read ending at byte ``at`` at time ``when``: read ahead from there."""
    end = min(at + p.readahead, p.capacity)
    st.ra_start = at
    st.ra_anchor = at
    st.ra_anchor_time = when
    st.ra_rate = media_rate(p, min(at, p.capacity - 1) / p.capacity)
    st.ra_end = max(end, at)
    st.ra_live = end > at
    if st.ra_live:
        st.radial = radial_position(p, (end - 1) / p.capacity)


def _extend_stream(p: HddParams, st: HddState, now: float, t_ready: float, at: int) -> None:
    """A hit consumed the window up to ``at``: keep reading ahead ``readahead`` past it."""
    end = min(at + p.readahead, p.capacity)
    old_end = st.ra_end
    st.ra_start = at
    if end <= old_end:
        return
    t_seq = now if now <= st.free_at + _EPS else t_ready
    old_end_t = _avail(st, old_end)
    if t_seq <= old_end_t:  # still streaming: carry on, re-anchored at the local rate
        if at > st.ra_anchor:
            st.ra_anchor_time = _avail(st, at)
            st.ra_anchor = at
            st.ra_rate = media_rate(p, min(at, p.capacity - 1) / p.capacity)
    else:  # the stream had stopped at old_end: resume there after the rotation
        t0 = max(t_ready, st.head_free)
        rot = rotational_wait(p, t0, old_end / p.capacity, old_end)
        st.ra_anchor = old_end
        st.ra_anchor_time = t0 + rot
        st.ra_rate = media_rate(p, min(old_end, p.capacity - 1) / p.capacity)
    st.ra_end = end
    st.radial = radial_position(p, (end - 1) / p.capacity)


def choose_next(
    params: HddParams, state: HddState, now: float, pending: list[tuple[int, int, bool]]
) -> int:
    """Index of the pending (offset, nbytes, is_write) with the shortest access time.

    Shortest-access-time-first, as NCQ/TCQ drives schedule: seek + rotation from the head's
    position at ``now`` (+ overhead); cache-absorbed writes and read-ahead hits cost their
    wait for data only. Ties go to the oldest (lowest index). O(len(pending)).
    """
    if len(pending) <= 1 or params.geometry is not None:  # exact geometry: first come first
        return 0
    p, st = params, state
    t_ready = (now if now >= st.free_at else st.free_at) + p.overhead
    room = p.cache_bytes - st.dirty_bytes
    head = _Head(p, st, now, t_ready)
    best, best_cost = 0, math.inf
    for i, (o, n, w) in enumerate(pending):
        if w and p.write_cache and n <= room:
            cost = 0.0
        elif not w and st.ra_start <= o and o + n <= st.ra_end:
            cost = max(0.0, _avail(st, o + n) - t_ready)
        else:
            target = st.ra_end if (not w and st.ra_start <= o < st.ra_end) else o
            cost = _access(p, st, head, target, w)[2] - t_ready
        if cost < best_cost:
            best, best_cost = i, cost
    return best


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


# ---------------------------------------------------------------- exact geometry (optional)


@dataclass(frozen=True)
class GeoZone:
    """One zone of an exact layout: LBNs [first_lbn, first_lbn + lbns) on cylinders from
    ``first_cyl``; ``per_cyl`` LBNs per cylinder, ``track_lbns`` per track, ``bpt`` physical
    sectors per track; ``dead`` empty sectors at the zone front; skews and the first block's
    offset in sectors."""

    first_lbn: int
    lbns: int
    first_cyl: int
    bpt: int
    track_lbns: int
    per_cyl: int
    dead: int
    track_skew: int
    cyl_skew: int
    offset: int


@dataclass(frozen=True)
class ExactGeometry:
    """A drive's measured layout and timing (DiskSim-style); see :func:`service`.

    Blocks of ``block`` bytes; times in s. ``seek_dist``/``seek_s``: tabulated seek curve
    (cylinders → s, linear between points); overheads as (after a read, after a write);
    ``bus_*_block`` host transfer per block; cache ``segments`` × ``segment_blocks``,
    ``max_readahead`` blocks (``readahead_over`` 1: beyond the request); ``fast_write``
    0 write-through, 1 write-back for sequential writes, 2 for all writes (at queue depth 1
    both report every write after its host transfer: level 1 only limits appending to dirty
    segments while commands are queued). A read miss moves data to the host once
    ``read_watermark`` × its blocks are buffered, after a ``reselect`` overhead.
    """

    surfaces: int
    zones: tuple[GeoZone, ...]
    seek_dist: tuple[int, ...]
    seek_s: tuple[float, ...]
    head_switch: float
    write_settle: float
    read_hit: tuple[float, float]
    read_miss: tuple[float, float]
    write_hit: tuple[float, float]
    write_miss: tuple[float, float]
    read_completion: float
    write_completion: float
    bus_read_block: float
    bus_write_block: float
    segments: int
    segment_blocks: int
    fast_write: int
    max_readahead: int
    readahead_over: int = 1
    read_watermark: float = 0.0
    reselect: float = 0.0
    block: int = 512
    zone_starts: tuple[int, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.zones or len(self.seek_dist) != len(self.seek_s) or not self.seek_dist:
            raise ZsimError("an exact geometry needs zones and a seek table")
        object.__setattr__(self, "zone_starts", tuple(z.first_lbn for z in self.zones))


class _GeoState:
    """Mutable state of the exact-geometry path (kept in ``HddState.geo``)."""

    __slots__ = ("cyl", "head", "head_free", "last_write", "segs", "stream")

    def __init__(self) -> None:
        self.cyl = 0
        self.head = 0
        self.head_free = 0.0
        self.last_write = False
        self.segs: list[list[int]] = []  # cached [start, end) blocks, most recent last
        # live read-ahead: (start lbn, planned end, chunks (lbn0, k, t0, st, cyl, head))
        self.stream: tuple[int, int, list[tuple[int, int, float, float, int, int]]] | None = None


def geo_locate(g: ExactGeometry, lbn: int) -> tuple[int, int, float, int, int]:
    """(cylinder, head, angle of the block as a fraction of a turn, blocks left on the track
    from it, physical sectors per track) of block ``lbn``."""
    import bisect

    i = bisect.bisect_right(g.zone_starts, lbn) - 1
    z = g.zones[max(i, 0)]
    off = lbn - z.first_lbn + z.dead
    c_rel, r = divmod(off, z.per_cyl)
    head, s = divmod(r, z.track_lbns)
    if head >= g.surfaces:
        head = g.surfaces - 1
        s = r - head * z.track_lbns
    left = min(z.track_lbns - s, z.per_cyl - r, z.first_lbn + z.lbns - lbn)
    skew = z.offset + c_rel * z.cyl_skew + (c_rel * (g.surfaces - 1) + head) * z.track_skew
    return z.first_cyl + c_rel, head, ((skew + s) % z.bpt) / z.bpt, max(left, 1), z.bpt


def geo_seek(g: ExactGeometry, distance: int) -> float:
    """Seek over ``distance`` cylinders, s (0 for 0; linear between the table's points)."""
    import bisect

    if distance <= 0:
        return 0.0
    d, t = g.seek_dist, g.seek_s
    i = bisect.bisect_left(d, distance)
    if i < len(d) and d[i] == distance:
        return t[i]
    if i == 0:
        return t[0] * distance / d[0]
    if i >= len(d):
        i = len(d) - 1
    return t[i - 1] + (t[i] - t[i - 1]) * (distance - d[i - 1]) / (d[i] - d[i - 1])


def _geo_media(
    p: HddParams, gs: _GeoState, t: float, lbn: int, n: int, is_write: bool, cyl: int, hd: int
) -> tuple[list[tuple[int, int, float, float, int, int]], float, float, float]:
    """Media access of blocks [lbn, lbn + n) from the head at (cyl, hd), free at ``t``.

    Returns (chunks (lbn0, k, start, sector time, cyl, head), end time, first seek, first
    rotation). Track crossings pay a head switch or a seek plus the rotation to the next
    track's first block (which the skews place just after a switch).
    """
    g = p.geometry
    assert g is not None
    period = p.period
    chunks = []
    seek0 = rot0 = -1.0
    while n > 0:
        c, h, angle, left, bpt = geo_locate(g, lbn)
        k = left if left < n else n
        if c != cyl:
            move = geo_seek(g, abs(c - cyl))
        elif h != hd:
            move = g.head_switch
        else:
            move = 0.0
        if is_write and move > 0.0:
            move = max(0.0, move + g.write_settle)
        t += move
        wait = (angle - t / period) % 1.0
        if wait > 1.0 - 1e-9:
            wait = 0.0
        wait *= period
        if seek0 < 0.0:
            seek0, rot0 = move, wait
        t += wait
        st = period / bpt
        chunks.append((lbn, k, t, st, c, h))
        t += k * st
        lbn += k
        n -= k
        cyl, hd = c, h
    return chunks, t, max(seek0, 0.0), max(rot0, 0.0)


def _chunk_avail(chunks: list[tuple[int, int, float, float, int, int]], lbn: int) -> float:
    """When block ``lbn`` of a streamed run is in the buffer (its sector has passed)."""
    for c0, k, t0, st, _c, _h in chunks:
        if c0 <= lbn < c0 + k:
            return t0 + (lbn - c0 + 1) * st
    return math.inf


def _stop_stream(gs: _GeoState, when: float, limit: int) -> None:
    """Stop read-ahead at ``when``: keep what is read, leave the head on that track."""
    if gs.stream is None:
        return
    start, _end, chunks = gs.stream
    read_to = start
    for c0, k, t0, st, c, h in chunks:
        if when <= t0:
            break
        gs.cyl, gs.head = c, h
        done = min(k, int((when - t0) / st))
        read_to = c0 + done
        if done < k:
            break
    gs.stream = None
    if read_to > start:
        _add_seg(gs, start, read_to, limit)


def _add_seg(gs: _GeoState, start: int, end: int, limit: int) -> None:
    gs.segs = [s for s in gs.segs if s[1] <= start or s[0] >= end]
    gs.segs.append([start, end])
    del gs.segs[:-limit]


def _geo_bus(done: float, chunks: list, b: float) -> float:
    """When a host transfer at ``b`` s/block that follows the media chunks ends."""
    for _c0, k, t0, st, _c, _h in chunks:
        done = max(done + k * b, t0 + st + k * b, t0 + k * st + b)
    return done


def _geo_service(
    p: HddParams, state: HddState, now: float, offset: int, nbytes: int, is_write: bool
) -> tuple[float, dict[str, float]]:
    g = p.geometry
    assert g is not None
    if state.geo is None:
        state.geo = _GeoState()
    gs = state.geo
    assert isinstance(gs, _GeoState)
    start = now if now >= state.free_at else state.free_at
    lbn = offset // g.block
    n = max(1, -(-(offset + nbytes) // g.block) - lbn)
    end = lbn + n
    after_w = 1 if gs.last_write else 0
    nseg = max(1, g.segments)
    seek = rot = 0.0
    if not is_write:
        stream = gs.stream
        live = stream is not None and stream[0] <= lbn <= stream[1]
        if live and stream is not None and _chunk_avail(stream[2], stream[2][-1][0]) < start:
            _stop_stream(gs, start, nseg)  # the read-ahead has finished: an ordinary segment
            live = False
        cached = not live and any(s0 <= lbn and end <= s1 for s0, s1 in gs.segs)
        hit = live or cached
        overhead = (g.read_hit if hit else g.read_miss)[after_w]
        t_cmd = start + overhead
        if cached:
            done = t_cmd + n * g.bus_read_block
            xfer = done - t_cmd
        else:
            ra = g.max_readahead if g.readahead_over else max(0, g.max_readahead - n)
            ra = max(0, min(ra, g.segment_blocks - n))
            if live and stream is not None:
                s0, s_end, chunks = stream
                if end + ra > s_end:  # carry the stream on past its planned end
                    last = chunks[-1]
                    more, _t, _s, _r = _geo_media(
                        p,
                        gs,
                        last[2] + last[1] * last[3],
                        s_end,
                        end + ra - s_end,
                        False,
                        last[4],
                        last[5],
                    )
                    chunks = chunks + more
                    s_end = end + ra
                gs.stream = (s0, s_end, chunks)
            else:
                _stop_stream(gs, t_cmd, nseg)
                t0 = max(t_cmd, gs.head_free)
                chunks, _t, seek, rot = _geo_media(p, gs, t0, lbn, n + ra, False, gs.cyl, gs.head)
                gs.stream = (lbn, lbn + n + ra, chunks)
            mine = []
            for c0, k, t0, st, c, h in gs.stream[2]:
                a, b = max(c0, lbn), min(c0 + k, end)
                if a < b:
                    mine.append((a, b - a, t0 + (a - c0) * st, st, c, h))
            media_end = mine[-1][2] + mine[-1][1] * mine[-1][3]
            gs.head_free = max(gs.head_free, media_end)
            bus0 = t_cmd
            if g.read_watermark > 0.0:
                need = min(n, max(1, math.ceil(g.read_watermark * n)))
                bus0 = max(bus0, _chunk_avail(mine, lbn + need - 1))
            if media_end > t_cmd + 1e-12:  # disconnected while the media worked
                bus0 += g.reselect
            done = max(t_cmd, media_end, _geo_bus(bus0, mine, g.bus_read_block))
            xfer = sum(k * st for _a, k, _t0, st, _c, _h in mine)
        complete = done + g.read_completion
    else:
        fast = g.fast_write > 0
        overhead = (g.write_hit if fast else g.write_miss)[after_w]
        t_cmd = start + overhead
        _stop_stream(gs, t_cmd, nseg)
        gs.segs = [s for s in gs.segs if s[1] <= lbn or s[0] >= end]
        bw = g.bus_write_block
        data_in = t_cmd + n * bw
        t0 = max(t_cmd, gs.head_free)
        chunks, media_end, seek, rot = _geo_media(p, gs, t0, lbn, n, True, gs.cyl, gs.head)
        first = chunks[0]
        # every block must be in the buffer before its sector passes: start later if not
        late = max(0.0, t_cmd + bw + (n - 1) * max(0.0, bw - first[3]) - first[2])
        if late > 0.0:
            chunks, media_end, seek, rot = _geo_media(
                p, gs, t0 + late, lbn, n, True, gs.cyl, gs.head
            )
        last = chunks[-1]
        gs.cyl, gs.head = last[4], last[5]
        gs.head_free = media_end
        if n <= g.segment_blocks:
            _add_seg(gs, lbn, end, nseg)
        xfer = n * bw
        complete = (data_in if fast else max(media_end, data_in)) + g.write_completion
    gs.last_write = is_write
    state.free_at = complete
    total = complete - now
    parts = {
        "overhead": overhead,
        "destage": 0.0,
        "seek": seek,
        "rotation": rot,
        "transfer": xfer,
        "wait": 0.0,
    }
    parts["wait"] = max(0.0, total - overhead - seek - rot - xfer)
    return total, parts
