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
              media work is kept as *destage debt* and paid in idle time (up to the next
              arrival) or, a track at least, when the cache is full (only the room a write
              needs), so sustained writes cost what the media can do
queueing      shortest-access-time-first among queued commands (:func:`choose_next`), as
              NCQ/TCQ drives do
512e          a write that does not cover whole physical sectors costs one extra revolution
              (read-modify-write of the partial sector)

Not modelled: track/cylinder skew and sparing (the layout is a continuous spiral, which is a
perfectly skewed layout), more than one cache segment, reads served from dirty write data,
SMR, thermal recalibration. DiskSim's validation shows datasheet figures give "much larger
discrepancies" than measured ones; :func:`hdd_params` takes overrides for calibrated values.

The model, module by module: :mod:`~zsim.hardware.hdd.seek` (the seek curve),
:mod:`~zsim.hardware.hdd.drive` (constants from a profile, zoned geometry, rotation, per-drive
state, closed-form means), :mod:`~zsim.hardware.hdd.access` (serving requests: cache,
read-ahead, destage, queue choice), :mod:`~zsim.hardware.hdd.geometry` and
:mod:`~zsim.hardware.hdd.exact` (an optional exact DiskSim layout and its service path). The
names below are the model's API, used as ``from zsim.hardware import hdd; hdd.service(...)``.
"""

from zsim.hardware.hdd.access import choose_next, service
from zsim.hardware.hdd.drive import (
    DEFAULT_BUFFER_RATE,
    DEFAULT_CACHE,
    DEFAULT_DESTAGE_WINDOW,
    DEFAULT_OVERHEAD,
    DEFAULT_READAHEAD,
    DEFAULT_REORDER_DEPTH,
    INNER_RATE_RATIO,
    MAX_SEEK_RATIO,
    MIN_SEEK_RATIO,
    HddParams,
    HddState,
    expected_random_service,
    hdd_params,
    lba_seek_mean,
    media_rate,
    radial_position,
    rotational_wait,
    track_bytes,
)
from zsim.hardware.hdd.geometry import ExactGeometry, GeoZone, geo_locate, geo_seek
from zsim.hardware.hdd.seek import (
    DEFAULT_CYLINDERS,
    SeekCurve,
    fit_seek_curve,
    seek_mean,
    seek_time,
)

__all__ = [
    "DEFAULT_BUFFER_RATE",
    "DEFAULT_CACHE",
    "DEFAULT_CYLINDERS",
    "DEFAULT_DESTAGE_WINDOW",
    "DEFAULT_OVERHEAD",
    "DEFAULT_READAHEAD",
    "DEFAULT_REORDER_DEPTH",
    "INNER_RATE_RATIO",
    "MAX_SEEK_RATIO",
    "MIN_SEEK_RATIO",
    "ExactGeometry",
    "GeoZone",
    "HddParams",
    "HddState",
    "SeekCurve",
    "choose_next",
    "expected_random_service",
    "fit_seek_curve",
    "geo_locate",
    "geo_seek",
    "hdd_params",
    "lba_seek_mean",
    "media_rate",
    "radial_position",
    "rotational_wait",
    "seek_mean",
    "seek_time",
    "service",
    "track_bytes",
]
