"""Service time of an SSD or NVMe drive as a fitted black box (no flash internals).

The drive is ``parallelism`` identical internal units (dies/planes/channels seen from the
host) that each serve one command at a time: a multi-server queue whose engine is someone
else's. This module gives the time one unit spends on one command. The figures are the ones
fio measures (``../shared/notes/prior-art.md`` §2, "What zsim actually needs for NVMe"): QD1
4 KiB latency, saturated IOPS, sequential bandwidth, the write rate after the write cache
(SLC) fills. Parallelism comes from Little's law, P = ⌈IOPS × latency⌉ (see
:func:`flash_params` for why the ceiling and not the nearest integer).

A unit's time for ``nbytes`` with ``k`` units busy (this one included)::

    t = overhead + max(latency + (nbytes − 4 KiB)⁺ / bw,  k / iops,  k · nbytes / bw)

The latency already carries one 4 KiB transfer, so a lone 4 KiB command takes exactly the
datasheet latency, and a lone large one adds its transfer at the full bandwidth (striping
inside the drive: QD1 128 KiB on a PM9A3 takes 98 µs). The last two terms share the device
among the k busy units: each gets iops/k commands/s and bw/k bytes/s, so P busy units
deliver min(bw, iops × nbytes) (to within 0.5 % at every block size for the catalog drives:
one unit's array access overlaps the others' transfers), and for k = 1…P the 4 KiB rate is
min(k / latency, iops), the curve fio QD sweeps are fitted with. ``busy=None`` means all P
units busy: the per-unit bandwidth bw/P of the saturated drive, conservative for a lone
large command (the PM9A3's 128 KiB then takes 1.5 ms). Writes past ``write_cache`` bytes
(since the cache was last empty) run at ``steady_write_bw``, and the write IOPS ceiling
falls in proportion.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from zsim.errors import ZsimError
from zsim.hardware.catalog import Profile

REF_BYTES = 4096
"""The block size datasheet latency and IOPS figures are given for."""

NVME_LATENCY = (80e-6, 20e-6)
"""QD1 4 KiB (read, write) latency of an NVMe drive without figures, s. TLC NAND reads take
50-90 µs (array read + controller + PCIe); writes complete into the controller's DRAM or SLC
buffer. The catalog's enterprise drives publish 80/20 µs (Samsung PM9A3) and 90/20 µs (WD
SN840)."""

SATA_LATENCY = (100e-6, 40e-6)
"""QD1 4 KiB (read, write) latency of a SATA/SAS SSD without figures, s: the NVMe figures
plus 20 µs for AHCI and the SATA link protocol. The catalog's SATA drives publish 77/28 µs
(Samsung 870 EVO) and 65/85 µs (Intel X25-M, an old drive with no DRAM write buffer)."""

NVME_IOPS_CAP = 1_000_000
"""Ceiling on IOPS derived from bandwidth (bw / 4 KiB) for NVMe: PCIe Gen4 x4 enterprise
drives reach about 1 M random 4 KiB reads (PM9A3 in the catalog)."""

FLUSH_NO_PLP = 1e-3
"""Time a cache flush (or FUA write) holds a drive without power-loss protection, s: it must
persist its volatile DRAM/SLC buffer and mapping updates before it answers. Mark Callaghan,
"SSDs, power loss protection and fsync latency" (smalldatum.blogspot.com, January 2026):
consumer NVMe drives without PLP show fsync latencies of milliseconds while writes are fast;
1 ms is the low end of that range. Drives with PLP treat their cache as non-volatile and
answer a flush at once (0 s; the same post measures µs to tens of µs)."""

SATA_IOPS_CAP = 100_000
"""Same for SATA/SAS: one 32-deep NCQ queue over a 600 MB/s link tops out near 100 k IOPS
(870 EVO 98 k in the catalog). A bw-derived write IOPS is optimistic: real random-write IOPS
are often well below write_bw / 4 KiB."""


@dataclass(frozen=True)
class FlashParams:
    """One SSD/NVMe model's constants. Build from a profile with :func:`flash_params`.

    Latencies (QD1 4 KiB) and ``overhead`` in s; ``read_bw``/``write_bw``/``steady_write_bw``
    in bytes/s; IOPS at 4 KiB; ``parallelism`` internal units; ``write_cache`` bytes written at
    full speed before the write rate drops to ``steady_write_bw`` (None: no cliff);
    ``flush_latency`` s added to a write that must reach stable media (FUA or a cache flush);
    ``notes`` the fallbacks :func:`flash_params` used.
    """

    read_latency: float
    write_latency: float
    read_bw: float
    write_bw: float
    read_iops: float
    write_iops: float
    parallelism: int
    steady_write_bw: float
    write_cache: int | None = None
    overhead: float = 0.0
    flush_latency: float = 0.0
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        rates = (self.read_bw, self.write_bw, self.read_iops, self.write_iops)
        if min(rates) <= 0 or self.steady_write_bw <= 0:
            raise ZsimError("SSD bandwidths and IOPS must be above 0")
        if min(self.read_latency, self.write_latency, self.overhead, self.flush_latency) < 0:
            raise ZsimError("SSD latencies and overhead must not be negative")
        if self.parallelism < 1:
            raise ZsimError(f"an SSD has at least 1 internal unit, not {self.parallelism}")
        if self.steady_write_bw > self.write_bw:
            raise ZsimError(
                "steady_write_bw is above write_bw; the rate after the write cache cannot be "
                "higher than the burst rate"
            )


def flash_params(profile: Profile, **overrides: object) -> FlashParams:
    """Model constants for a catalog or inline SSD/NVMe profile; ``overrides`` replace fields.

    Fallbacks (recorded in ``notes``): latencies :data:`NVME_LATENCY` or :data:`SATA_LATENCY`
    by interface; IOPS bw / 4 KiB capped at :data:`NVME_IOPS_CAP` / :data:`SATA_IOPS_CAP`;
    ``steady_write_bw`` → ``write_bw`` (no published cliff: assume none); ``write_cache``
    0 or missing → no cliff.

    ``parallelism`` = max(1, ⌈read_iops × read_latency⌉) (Little's law). Rounding to the
    nearest integer instead would cap saturated IOPS at P / latency, up to 1/(2P) short of the
    datasheet (12 % on the X25-M, whose P* = 2.3); with the ceiling the k / iops term holds
    saturated IOPS exactly at the figure, each unit then taking P / iops ≥ latency, while a
    lone command (``busy=1``) still takes the latency.
    """
    if profile.kind not in ("ssd", "nvme"):
        raise ZsimError(f"profile {profile.name!r} is a {profile.kind}, not an ssd or nvme")
    if profile.read_bw is None or profile.write_bw is None:
        raise ZsimError(f"profile {profile.name!r} needs read_bw and write_bw")
    allowed = {f.name for f in fields(FlashParams)}
    unknown = set(overrides) - allowed
    if unknown:
        raise ZsimError(f"unknown SSD parameters {sorted(unknown)}; use one of {sorted(allowed)}")
    notes: list[str] = []
    nvme = profile.kind == "nvme" or profile.interface == "nvme"
    lat_read, lat_write = NVME_LATENCY if nvme else SATA_LATENCY
    cap = NVME_IOPS_CAP if nvme else SATA_IOPS_CAP
    kind = "NVMe" if nvme else "SATA"
    read_latency = profile.read_latency
    if read_latency is None:
        read_latency = lat_read
        notes.append(f"read_latency missing: {kind} default {lat_read * 1e6:g} µs")
    write_latency = profile.write_latency
    if write_latency is None:
        write_latency = lat_write
        notes.append(f"write_latency missing: {kind} default {lat_write * 1e6:g} µs")
    read_iops: float | None = profile.read_iops
    if read_iops is None:
        read_iops = min(profile.read_bw / REF_BYTES, cap)
        notes.append(f"read_iops missing: read_bw / 4 KiB, at most {cap}")
    write_iops: float | None = profile.write_iops
    if write_iops is None:
        write_iops = min(profile.write_bw / REF_BYTES, cap)
        notes.append(f"write_iops missing: write_bw / 4 KiB, at most {cap} (optimistic)")
    if profile.power_loss_protection is None and profile.flush_latency is None:
        notes.append(
            f"power_loss_protection missing: none assumed, flush {FLUSH_NO_PLP * 1e3:g} ms"
        )
    steady = profile.steady_write_bw
    if steady is None:
        steady = profile.write_bw
        notes.append("steady_write_bw missing: equal to write_bw (no cliff)")
    values: dict[str, object] = {
        "read_latency": read_latency,
        "write_latency": write_latency,
        "read_bw": profile.read_bw,
        "write_bw": profile.write_bw,
        "read_iops": float(read_iops),
        "write_iops": float(write_iops),
        "parallelism": _units(read_iops, read_latency),
        "steady_write_bw": min(steady, profile.write_bw),
        "write_cache": profile.write_cache or None,
        "flush_latency": _flush_latency(profile),
        "notes": tuple(notes),
    }
    values.update(overrides)
    if "parallelism" not in overrides and ("read_iops" in overrides or "read_latency" in overrides):
        iops, lat = values["read_iops"], values["read_latency"]
        values["parallelism"] = _units(iops, lat)  # type: ignore[arg-type]
    return FlashParams(**values)  # type: ignore[arg-type]


def _flush_latency(profile: Profile) -> float:
    """A measured flush time when the profile has one, else 0 with power-loss protection
    and :data:`FLUSH_NO_PLP` without."""
    if profile.flush_latency is not None:
        return profile.flush_latency
    return 0.0 if profile.power_loss_protection else FLUSH_NO_PLP


def _units(iops: float, latency: float) -> int:
    return max(1, math.ceil(iops * latency - 1e-6))


def service_time(
    params: FlashParams,
    nbytes: int,
    is_write: bool,
    written_so_far: int,
    busy: int | None = None,
) -> float:
    """Time one internal unit spends on one command, s (see the module docstring).

    ``written_so_far``: bytes written since the write cache was last empty (the engine keeps
    the count; :func:`written_after_idle` drains it). ``busy``: units busy including this
    one, 1..parallelism; None means all of them (the conservative, saturated case).
    """
    p = params
    units = p.parallelism
    k = units if busy is None else (1 if busy < 1 else (busy if busy < units else units))
    extra = nbytes - REF_BYTES if nbytes > REF_BYTES else 0
    if not is_write:
        bw = p.read_bw
        return p.overhead + max(p.read_latency + extra / bw, k / p.read_iops, k * nbytes / bw)
    bw, iops = p.write_bw, p.write_iops
    cache = p.write_cache
    if cache is not None and written_so_far + nbytes > cache and nbytes > 0:
        # fraction of this command's bytes past the cliff; mix the two rates by time
        slow = (written_so_far + nbytes - cache) if written_so_far < cache else nbytes
        frac = slow / nbytes
        ratio = p.steady_write_bw / p.write_bw
        bw = 1.0 / ((1.0 - frac) / bw + frac / p.steady_write_bw)
        iops = 1.0 / ((1.0 - frac) / iops + frac / (iops * ratio))
    return p.overhead + max(p.write_latency + extra / bw, k / iops, k * nbytes / bw)


def written_after_idle(params: FlashParams, written_so_far: int, idle: float) -> int:
    """Write-cache fill left after ``idle`` seconds without host writes, bytes.

    The drive empties its SLC cache into the main array during idle time at about the rate it
    writes the main array directly, ``steady_write_bw`` (an assumption; drives differ).
    """
    if params.write_cache is None:
        return written_so_far
    left = written_so_far - idle * params.steady_write_bw
    return int(left) if left > 0 else 0


def saturated_throughput(
    params: FlashParams, nbytes: int, is_write: bool, written_so_far: int = 0
) -> float:
    """Bytes/s with every unit busy on ``nbytes`` commands: P × nbytes / unit time."""
    t = service_time(params, nbytes, is_write, written_so_far)
    return params.parallelism * nbytes / t
