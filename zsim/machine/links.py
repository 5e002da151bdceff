"""Links between host memory and the devices: line encodings, PCIe rates, the HBA's command
ceiling, and the chain of bus stages each device's transfers cross.

The rules are shared by every engine: the discrete-event engines build their
:class:`~zsim.machine.resources.BandwidthStage` chains with :func:`bus_stages`, the analytic
engine reads the same stages' rates, and calibration's closed forms use
:func:`line_payload_rate`, :func:`pcie_bytes_per_s` and :func:`device_peak_rates`.
"""

from __future__ import annotations

import simpy

from zsim.hardware.catalog import Profile
from zsim.machine.resources import BandwidthStage, MemoryBus, Path
from zsim.scenario import Hardware

SATA_LINE_RATE = 750e6
"""SATA 6 Gb/s line rate, bytes/s (raw bits ÷ 8), assumed when a profile gives no link rate."""

PCIE_GTS = {1: 2.5e9, 2: 5e9, 3: 8e9, 4: 16e9, 5: 32e9}
"""PCIe transfer rate per lane by generation, transfers/s."""

# Controller I/O ceiling by SAS generation when the profile gives no max_iops: Broadcom's
# briefs quote ~1 M IOPS for SAS3 (SAS3008) and several hundred thousand for SAS2 (SAS2008,
# commonly measured at ~450 k); an estimate to be replaced by a profile figure.
HBA_DEFAULT_IOPS = {2: 450_000, 3: 1_000_000}


def line_payload_rate(rate_line: float) -> float:
    """Payload bytes/s of a serial link from its line rate (bytes/s of raw bits ÷ 8):
    SATA and SAS-1/2/3 use 8b/10b (80 %); SAS-4 (22.5 Gb/s) 128b/150b."""
    return rate_line * (128 / 150 if rate_line > 2e9 else 0.8)


def pcie_bytes_per_s(gen: int, lanes: int) -> float:
    """Usable PCIe bandwidth: GT/s × lanes × encoding (8b/10b to gen 2, 128b/130b after)
    × 0.91 for TLP headers (24 B per 256 B payload)."""
    gts = PCIE_GTS.get(gen, 8e9)
    encoding = 0.8 if gen <= 2 else 128 / 130
    return gts * lanes * encoding / 8 * (256 / 280)


def bus_stages(
    env: simpy.Environment,
    hw: Hardware,
    names: list[str],
    disk: Profile,
    behind_hba: bool = True,
    memory: MemoryBus | None = None,
) -> dict[str, Path]:
    """Each device's path to memory: its own link, then the shared expander and HBA when
    ``behind_hba`` (log devices are modelled on their own ports: onboard SATA or NVMe).
    ``memory``: the host's memory bus, which every transfer's DMA loads (``None``: not
    modelled, as for the analytic engine's rates)."""
    stages: dict[str, list[BandwidthStage]] = {n: [] for n in names}
    link_line = disk.link_rate
    if disk.kind in ("hdd", "ssd"):
        if link_line is None:
            link_line = SATA_LINE_RATE
        if hw.hba is not None and hw.hba.lane_rate:
            link_line = min(link_line, hw.hba.lane_rate)
        per_link = max(1, hw.disks_per_link)
        for start in range(0, len(names), per_link):
            lane = BandwidthStage(env, f"link:{names[start]}", line_payload_rate(link_line))
            for n in names[start : start + per_link]:
                stages[n].append(lane)
    else:  # NVMe: each drive has its own PCIe link
        gen, lanes = disk.pcie_gen or 3, disk.pcie_lanes or 4
        for n in names:
            stages[n].append(BandwidthStage(env, f"link:{n}", pcie_bytes_per_s(gen, lanes)))
    if hw.expander_bw and behind_hba:
        expander = BandwidthStage(env, "expander", hw.expander_bw)
        for n in names:
            stages[n].append(expander)
    # tri-mode HBAs carry NVMe traffic through their own uplink too
    if hw.hba is not None and behind_hba:
        hba_gen, hba_lanes = hw.hba.pcie_gen, hw.hba.pcie_lanes
        assert hba_gen is not None and hba_lanes is not None, "the catalog requires them of an HBA"
        iops = hw.hba.max_iops or HBA_DEFAULT_IOPS[3 if (hw.hba.lane_rate or 0) >= 1.5e9 else 2]
        hba = BandwidthStage(env, "hba", pcie_bytes_per_s(hba_gen, hba_lanes), per_io=1.0 / iops)
        for n in names:
            stages[n].append(hba)
    mark_passive(stages, disk)
    return {n: Path(stages[n], memory) for n in names}


def device_peak_rates(disk: Profile) -> tuple[float, float]:
    """A device's peak bytes/s and I/Os per second over its link (media or datasheet)."""
    if disk.kind == "hdd":
        # read-ahead and write-cache hits move at interface speed but are bounded by the
        # command rate; sustained, an HDD moves at most its outer-zone rate
        return float(disk.max_sustained or 0.0), 10_000.0
    bw = max(disk.read_bw or 0.0, disk.write_bw or 0.0)
    iops = float(max(disk.read_iops or 0, disk.write_iops or 0) or bw / 4096)
    return bw, iops


def mark_passive(stages: dict[str, list[BandwidthStage]], disk: Profile) -> None:
    """Make passive every stage the devices behind it can never fill (their peak bytes/s and
    commands/s, from :func:`device_peak_rates`, add up to less than the stage carries)."""
    peak_bw, peak_iops = device_peak_rates(disk)
    users: dict[int, tuple[BandwidthStage, int]] = {}
    for chain in stages.values():
        for stage in chain:
            users[id(stage)] = (stage, users.get(id(stage), (stage, 0))[1] + 1)
    for stage, count in users.values():
        if count * peak_bw < stage.rate and count * peak_iops * stage.per_io < 1.0:
            stage.make_passive()
