"""One measured run, whatever tool produced it, in SI base units.

The parsers (:mod:`zsim.calibrate.fio`, :mod:`zsim.calibrate.dd`) turn tool output into
:class:`Measurement` objects; the fit (:mod:`zsim.calibrate.fit`) and the validation
(:mod:`zsim.validation.profile`) read only these. Bytes, seconds and bytes/s throughout.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from zsim.errors import ZsimError


class ParseError(ZsimError):
    """Tool output that cannot be read: names the file, the line and what was expected."""

    def __init__(self, path: str, line: int | None, problem: str):
        self.path, self.line, self.problem = path, line, problem
        where = f"{path}, line {line}" if line is not None else path
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True)
class DirectionResult:
    """What one direction (read or write) of a run achieved.

    ``bytes_per_s`` and ``iops`` over ``runtime_s``; ``io_bytes`` moved; latencies in s:
    ``lat_mean_s`` is submission + completion (fio's ``lat``), ``clat_p50_s``/``clat_p99_s``
    completion-latency percentiles; ``None`` where the tool did not report them.
    """

    bytes_per_s: float
    iops: float
    io_bytes: int
    runtime_s: float
    lat_mean_s: float | None = None
    clat_p50_s: float | None = None
    clat_p99_s: float | None = None


@dataclass(frozen=True)
class Measurement:
    """One job's (or one dd stream set's) result and the shape of the I/O that produced it.

    ``rw``: fio's read | write | randread | randwrite | randrw | readwrite | trim..., dd's
    read | write. ``bs`` bytes; ``iodepth`` per job (1 for synchronous engines as fio
    reports it); ``numjobs`` jobs (dd: parallel streams) summed into this result (group
    reporting, or one job); ``offset`` bytes from the start of the target, or
    ``offset_fraction`` (0…1) when the job gave a percentage; ``size`` bytes per job when
    known; ``rate_bytes_per_s``/``rate_iops`` fio's rate caps (0 = none). ``error`` fio's
    error code (0 = ran). ``source`` the file and, after ``#``, the job name. ``purpose``,
    ``target_bytes`` (the device's or file's size) and ``rotational`` come from the
    calibration plan when the result was stored by ``zsim calibrate run`` (else empty/None).
    """

    source: str
    name: str
    tool: str
    rw: str
    bs: int
    iodepth: int = 1
    numjobs: int = 1
    ioengine: str = "psync"
    direct: bool = False
    sync: bool = False
    fsync: int = 0
    rwmixread: int = 50
    offset: int = 0
    offset_fraction: float | None = None
    size: int | None = None
    rate_bytes_per_s: float = 0.0
    rate_iops: float = 0.0
    runtime_s: float = 0.0
    error: int = 0
    read: DirectionResult | None = None
    write: DirectionResult | None = None
    started: float | None = None
    tool_version: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    purpose: str = ""
    target_bytes: int | None = None
    rotational: bool | None = None

    @property
    def ok(self) -> bool:
        """True when the run finished without an error and moved data."""
        moved = sum(d.io_bytes for d in (self.read, self.write) if d is not None)
        return self.error == 0 and moved > 0

    def direction(self) -> DirectionResult:
        """The direction that carried the run (the one with more bytes)."""
        dirs = [d for d in (self.read, self.write) if d is not None]
        if not dirs:
            raise ZsimError(f"{self.source}: the run has neither read nor write results")
        return max(dirs, key=lambda d: d.io_bytes)
