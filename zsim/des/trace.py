"""Trace replay on one device, and the demerit figure that compares access-time distributions.

Format ``disksim-validate`` (DiskSim 4.0 ``valid/`` traces): one request per line,
``<R|W> <tag> <lbn> <sectors> <service_us> <idle_us>`` — read or write, a tag (ignored),
the first 512-byte block, the size in blocks, the access time measured on the real drive and
the idle time before the next request. Replay rule (DiskSim ``iotrace_validate_get_ioreq_event``):
closed loop at queue depth 1, the next request issued ``idle_us`` after the previous one
completes.

Demerit (Ruemmler & Wilkes, "An introduction to disk drive modeling", IEEE Computer 1994):
the root-mean-square horizontal distance between the measured and simulated access-time
CDFs, here from the samples' quantiles at p = 0.0001 … 1.0 (DiskSim's ``rms`` walks the
same points).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import simpy

from zsim.errors import ZsimError
from zsim.files import TEXT_LIMIT, read_text
from zsim.hardware import hdd
from zsim.hardware.catalog import Profile
from zsim.machine.collector import collector_paused
from zsim.machine.resources import Device, DevIO
from zsim.machine.resources import Path as BusPath

SECTOR = 512


@dataclass(frozen=True)
class Trace:
    """A parsed trace: arrays of one entry per request."""

    is_write: np.ndarray  # bool
    offset: np.ndarray  # bytes
    nbytes: np.ndarray  # bytes
    measured: np.ndarray  # s, access time measured on the real drive
    idle: np.ndarray  # s, wait after completion before the next request


def parse_validate_trace(text: str, source: str = "trace") -> Trace:
    """Parse a ``disksim-validate`` trace; a malformed line is an error naming it."""
    kinds, offsets, sizes, measured, idle = [], [], [], [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 6 or parts[0] not in ("R", "W"):
            raise ZsimError(
                f"{source}:{number}: expected '<R|W> <tag> <lbn> <sectors> <service_us> "
                f"<idle_us>' (a line of {len(parts)} fields); fix that line"
            )
        try:
            lbn, sectors = int(parts[2]), int(parts[3])
            service, wait = float(parts[4]), float(parts[5])
        except ValueError:
            raise ZsimError(
                f"{source}:{number}: numbers expected in the last four fields; fix that line"
            ) from None
        if lbn < 0 or sectors <= 0 or service < 0 or wait < 0:
            raise ZsimError(f"{source}:{number}: negative or empty request; fix that line")
        kinds.append(parts[0] == "W")
        offsets.append(lbn * SECTOR)
        sizes.append(sectors * SECTOR)
        measured.append(service * 1e-6)
        idle.append(wait * 1e-6)
    if not kinds:
        raise ZsimError(f"{source} holds no requests")
    return Trace(
        np.array(kinds),
        np.array(offsets, dtype=np.int64),
        np.array(sizes, dtype=np.int64),
        np.array(measured),
        np.array(idle),
    )


def load_trace(path: str | Path) -> Trace:
    p = Path(path)
    if not p.is_file():
        raise ZsimError(f"trace file {str(p)!r} does not exist")
    return parse_validate_trace(read_text(p, limit=TEXT_LIMIT, what="trace file"), str(p))


def replay(trace: Trace, disk: Profile, seed: int = 1, **hdd_overrides: Any) -> np.ndarray:
    """Simulated access time of every request (s), replayed at queue depth 1 on one HDD."""
    if disk.kind != "hdd":
        raise ZsimError("trace replay models one HDD; give a disk of kind 'hdd'")
    if int(trace.offset.max() + trace.nbytes.max()) > disk.size_bytes:
        raise ZsimError("the trace addresses blocks beyond the disk's capacity; check the disk")
    env = simpy.Environment()
    params = hdd.hdd_params(disk, **hdd_overrides)
    rng = np.random.default_rng(seed)
    device = Device(env, "sda", params, True, BusPath([]), float(rng.uniform(0, params.period)))
    simulated = np.zeros(len(trace.offset))
    n = len(simulated)

    def issue(i: int) -> None:
        start = env.now

        def done() -> None:
            simulated[i] = env.now - start
            if i + 1 < n:
                env.timeout(float(trace.idle[i])).callbacks.append(lambda _e: issue(i + 1))

        device.submit(
            DevIO(
                offset=int(trace.offset[i]),
                nbytes=int(trace.nbytes[i]),
                is_write=bool(trace.is_write[i]),
                done=done,
            )
        )

    issue(0)
    with collector_paused():
        env.run()
    return simulated


def demerit(measured: np.ndarray, simulated: np.ndarray) -> float:
    """RMS horizontal distance between the two samples' CDFs (same unit as the samples)."""
    p = np.arange(1, 10_001) / 10_000
    qm = np.quantile(measured, p)
    qs = np.quantile(simulated, p)
    return float(np.sqrt(np.mean((qm - qs) ** 2)))
