"""A measured fio or dd job as a scenario: the replay of one calibration measurement, on the
bare device or on a pool. Used by the fits, ``zsim validate --profile`` and the app."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from zsim.calibrate.measurement import Measurement
from zsim.hardware.catalog import Profile
from zsim.scenario import IOENGINES, Scenario, scenario_from_dict


def profile_table(profile: Profile) -> dict[str, Any]:
    """A profile as an inline scenario table (SI numbers; no name, sources or metadata)."""
    data = profile.to_dict()
    for key in ("name", "sources", "calibration"):
        data.pop(key, None)
    data["kind"] = profile.kind
    return data


def job_scenario(
    m: Measurement,
    disk: Profile,
    *,
    device_bytes: int | None = None,
    base: Scenario | None = None,
) -> Scenario:
    """The scenario that replays measurement ``m``: its fio (or dd) shape on ``disk``.

    Device-level (``base`` None): layout ``raw 1``, the job's region at its offset.
    Pool-level: ``base``'s hardware and pool (read back from its TOML form, the one that
    round-trips), with ``disk`` as the data disk and the job as the workload."""
    data_base = tomllib.loads(base.to_toml()) if base is not None else {}
    hw = dict(data_base.get("hardware", {}))
    hw["disk"] = profile_table(disk)
    pool = data_base.get("pool")
    size_dev = device_bytes or disk.size_bytes
    if m.tool == "dd" and m.direct:
        # dd with iflag/oflag=direct is one synchronous O_DIRECT stream per process: what fio
        # does with ioengine=psync, direct=1, one job per stream, sequentially
        per_stream = max(m.direction().io_bytes // max(m.numjobs, 1), m.bs)
        work: dict[str, Any] = {
            "tool": "fio",
            "rw": "write" if m.rw == "write" else "read",
            "bs": m.bs,
            "numjobs": m.numjobs,
            "ioengine": "psync",
            "direct": True,
            "size": per_stream // m.bs * m.bs,
        }
    elif m.tool == "dd":
        work = {
            "tool": "dd",
            "direction": "write" if m.rw == "write" else "read",
            "bs": m.bs,
            "streams": m.numjobs,
            "bytes": max(m.direction().io_bytes // max(m.numjobs, 1), m.bs),
        }
    else:
        engine = m.ioengine if m.ioengine in IOENGINES else "libaio"
        work = {
            "tool": "fio",
            "rw": m.rw,
            "bs": m.bs,
            "numjobs": m.numjobs,
            "iodepth": m.iodepth,
            "ioengine": engine,
            "direct": m.direct,
            "sync": m.sync,
            "fsync": m.fsync,
        }
        if m.rw in ("randrw", "readwrite"):
            work["rwmixread"] = m.rwmixread
        if pool is None:
            start = m.offset if m.offset_fraction is None else int(m.offset_fraction * size_dev)
            start = start // 4096 * 4096
            size = m.size or (size_dev - start)
            size = max(min(size, size_dev - start) // m.bs * m.bs, m.bs)
            work["offset"] = start
            work["size"] = size
        elif m.size:
            work["size"] = m.size
    data = {
        "hardware": hw,
        "pool": dict(pool) if pool is not None else {"layout": "raw 1"},
        "workload": work,
    }
    return scenario_from_dict(data, source=f"{m.source}", base_dir=Path.cwd())
