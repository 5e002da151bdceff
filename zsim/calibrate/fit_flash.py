"""The flash (SSD/NVMe) fit: latencies, small-block IOPS and large-block rate ceilings per
direction, the flush latency, and the write-cache cliff of the long sequential write (see
:mod:`zsim.calibrate.fit` for what each parameter is fitted from).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

from zsim.calibrate.fit_solve import FitProblem, as_profile_table, measured_iops
from zsim.calibrate.forward import flash_iops, host_time, link_rate, outstanding
from zsim.calibrate.measurement import Measurement
from zsim.errors import ZsimError
from zsim.hardware import flash
from zsim.hardware.catalog import Profile, parse_profile

CLIFF_RATIO = 0.8
"""A long-write segment slower than this fraction of the first segment's rate marks the
write-cache cliff (run-to-run noise of a sequential write is a few %)."""


def _qd1_latency(ms: Iterable[Measurement], rw: str, ghz: float) -> float | None:
    """Mean device time of the smallest-block QD1 run of ``rw``, s (fio's mean latency
    when given, else 1/IOPS), minus the host's call time."""
    cands = [m for m in ms if m.rw == rw and outstanding(m) == 1]
    if not cands:
        return None
    m = min(cands, key=lambda m: m.bs)
    d = m.direction()
    lat = d.lat_mean_s if d.lat_mean_s else 1.0 / d.iops
    return max(lat - host_time(ghz), 1e-6)


def flash_problem(
    ms: list[Measurement], base: dict[str, Any], ghz: float
) -> tuple[FitProblem, list[Measurement]]:
    reads = [m for m in ms if m.rw in ("read", "randread")]
    writes = [m for m in ms if m.rw in ("write", "randwrite") and not m.sync]
    syncs = [m for m in ms if m.rw in ("write", "randwrite") and m.sync]
    used = reads + writes + syncs
    if not reads:
        raise ZsimError("no read measurements to fit a flash device from; run the whole plan")

    def ceiling(group: list[Measurement], small: bool) -> float | None:
        pick = [m for m in group if (m.bs <= 8192) == small]
        if not pick:
            return None
        return max((measured_iops(m) if small else measured_iops(m) * m.bs) for m in pick)

    initial: dict[str, float] = {}
    units: dict[str, str] = {}
    for side, group in (("read", reads), ("write", writes)):
        if not group:
            continue
        lat = _qd1_latency(group, "randread" if side == "read" else "randwrite", ghz)
        lat = lat or _qd1_latency(group, side, ghz) or 1e-4
        iops = ceiling(group, True) or (ceiling(group, False) or 1e8) / 4096
        bw = ceiling(group, False) or iops * 4096
        initial |= {f"{side}_latency": lat, f"{side}_iops": iops, f"{side}_bw": bw}
        units |= {f"{side}_latency": "s", f"{side}_iops": "IOPS", f"{side}_bw": "B/s"}
    if syncs and writes:
        qd1 = min(syncs, key=lambda m: m.bs)
        lat = 1.0 / measured_iops(qd1) - initial["write_latency"] - host_time(ghz)
        initial["flush_latency"] = max(lat, 1e-6)
        units["flush_latency"] = "s"

    def predict(values: dict[str, float], smooth: bool = False) -> list[float | None]:
        prof = flash_profile(base, values)
        params = flash.flash_params(prof)
        link = link_rate(prof)
        return [flash_iops(params, m, link, ghz, smooth=smooth) for m in used]

    def smooth(values: dict[str, float]) -> list[float | None]:
        return predict(values, smooth=True)

    return FitProblem(initial, units, predict, used, smooth=smooth), used


def flash_profile(base: dict[str, Any], values: dict[str, float]) -> Profile:
    data = dict(base)
    for key in ("read_latency", "write_latency", "flush_latency"):
        if key in values:
            data[key] = values[key]
    for key in ("read_bw", "write_bw"):
        if key in values:
            data[key] = values[key]
    for key in ("read_iops", "write_iops"):
        if key in values:
            data[key] = max(1, round(values[key]))
    if "write_bw" not in data:  # a read-only fit: the profile still needs a write rate
        data["write_bw"] = data["read_bw"]
    if "steady_write_bw" in data:
        data["steady_write_bw"] = min(data["steady_write_bw"], data["write_bw"])
    return parse_profile(as_profile_table(data))


def long_write_cliff(segments: list[Measurement]) -> tuple[float, int] | None:
    """(steady_write_bw, write_cache bytes) from the long write's segments, or None.

    The cliff is the first segment from which the median rate of the rest stays below
    :data:`CLIFF_RATIO` of the median before it, with at least two segments on each side: one
    slow segment amid fast ones is noise (a shared host's hiccup), not a cache running out.
    """
    segments = sorted(segments, key=lambda m: (m.offset_fraction or 0.0, m.offset))
    rates = [m.direction().bytes_per_s for m in segments]
    cliff = next(
        (
            i
            for i in range(2, len(rates) - 1)
            if statistics.median(rates[i:]) < CLIFF_RATIO * statistics.median(rates[:i])
        ),
        None,
    )
    if cliff is None:
        return None
    fast = statistics.median(rates[:cliff])
    steady = statistics.median(rates[cliff:])
    before = sum(m.direction().io_bytes for m in segments[:cliff])
    # within the first slow segment the drive wrote c bytes fast and the rest slowly: its
    # mean rate r satisfies n / r = c / fast + (n − c) / steady
    n = segments[cliff].direction().io_bytes
    r = rates[cliff]
    c = (n / r - n / steady) / (1.0 / fast - 1.0 / steady)
    before += int(min(max(c, 0.0), n))
    return steady, before
