"""The SSD/NVMe black-box model: QD1 latency, saturation, QD curve, write cliff, fallbacks."""

from __future__ import annotations

import dataclasses
import heapq

import pytest

from zsim.errors import ZsimError
from zsim.hardware.catalog import list_profiles, load_profile, parse_profile
from zsim.hardware.flash import (
    flash_params,
    saturated_throughput,
    service_time,
    written_after_idle,
)

FLASH = [n for n in list_profiles() if load_profile(n).kind in ("ssd", "nvme")]
KiB, MiB = 1 << 10, 1 << 20


def _run(p, requests, is_write, written=0):
    """A P-server FIFO queue with every request waiting at t = 0; returns (end, written)."""
    free = [0.0] * p.parallelism
    end = 0.0
    for nbytes in requests:
        start = heapq.heappop(free)
        done = start + service_time(p, nbytes, is_write, written)
        if is_write:
            written += nbytes
        heapq.heappush(free, done)
        end = max(end, done)
    return end, written


@pytest.mark.parametrize("name", FLASH)
def test_qd1_4k_takes_the_datasheet_latency(name):
    p = flash_params(load_profile(name))
    assert service_time(p, 4096, False, 0, busy=1) == pytest.approx(p.read_latency)
    if p.write_latency >= 1 / p.write_iops:  # the X25-M's 85 µs is below 1 / 8600 IOPS
        assert service_time(p, 4096, True, 0, busy=1) == pytest.approx(p.write_latency)


def test_qd1_on_a_drive_whose_units_match_littles_law_exactly():
    p = flash_params(load_profile("samsung-pm9a3-3.84tb"))  # 1 M IOPS × 80 µs = 80 units
    assert p.parallelism == 80
    assert service_time(p, 4096, False, 0) == pytest.approx(80e-6)  # busy=None: all units


@pytest.mark.parametrize("name", FLASH)
@pytest.mark.parametrize("size", [4 * KiB, 16 * KiB, 128 * KiB, MiB])
@pytest.mark.parametrize("is_write", [False, True])
def test_all_units_busy_give_min_of_bandwidth_and_iops(name, size, is_write):
    p = flash_params(load_profile(name))
    bw, iops = (p.write_bw, p.write_iops) if is_write else (p.read_bw, p.read_iops)
    expect = min(bw, iops * size)
    assert saturated_throughput(p, size, is_write) == pytest.approx(expect, rel=0.05)
    # the same from a queue of 20 × P requests through P units
    n = 20 * p.parallelism
    end, _ = _run(p, [size] * n, is_write)
    assert n * size / end == pytest.approx(expect, rel=0.05)


@pytest.mark.parametrize("name", FLASH)
def test_iops_grow_with_busy_units_up_to_the_ceiling(name):
    p = flash_params(load_profile(name))
    for k in range(1, p.parallelism + 1):
        iops = k / service_time(p, 4096, False, 0, busy=k)
        assert iops == pytest.approx(min(k / p.read_latency, p.read_iops), rel=1e-9)


def test_a_lone_large_read_uses_the_whole_bandwidth():
    p = flash_params(load_profile("samsung-pm9a3-3.84tb"))
    alone = service_time(p, 128 * KiB, False, 0, busy=1)
    assert alone == pytest.approx(80e-6 + (128 - 4) * KiB / 6.9e9)
    assert service_time(p, 128 * KiB, False, 0) == pytest.approx(80 * 128 * KiB / 6.9e9)


def test_write_cliff_drops_to_the_steady_rate():
    # 870 EVO: 530 MB/s into a 22 GB SLC cache, 350 MB/s after; a 64 MiB cache keeps it short
    p = dataclasses.replace(
        flash_params(load_profile("samsung-870-evo-500gb")), write_cache=64 * MiB
    )
    n = 48
    end, written = _run(p, [MiB] * n, True)
    assert written == 48 * MiB
    assert n * MiB / end == pytest.approx(530e6, rel=0.05)
    # continue well past the cliff
    free_end, _ = _run(p, [MiB] * 256, True, written=200 * MiB)
    assert 256 * MiB / free_end == pytest.approx(350e6, rel=0.05)
    # 4 KiB writes past the cliff lose IOPS in the same proportion
    before = 1 / service_time(p, 4096, True, 0) * p.parallelism
    after = 1 / service_time(p, 4096, True, 10**12) * p.parallelism
    assert after / before == pytest.approx(350 / 530, rel=0.01)


def test_a_command_across_the_cliff_mixes_the_rates():
    p = dataclasses.replace(
        flash_params(load_profile("samsung-870-evo-500gb")), write_cache=64 * MiB
    )
    fast = service_time(p, MiB, True, 0)
    slow = service_time(p, MiB, True, 10**12)
    middle = service_time(p, MiB, True, 64 * MiB - MiB // 2)
    assert fast < middle < slow


def test_no_cliff_without_a_write_cache():
    p = flash_params(load_profile("samsung-pm9a3-3.84tb"))
    assert p.write_cache is None
    assert service_time(p, MiB, True, 10**13) == service_time(p, MiB, True, 0)


def test_idle_time_empties_the_write_cache():
    p = dataclasses.replace(
        flash_params(load_profile("samsung-870-evo-500gb")), write_cache=64 * MiB
    )
    assert written_after_idle(p, 100 * MiB, 0.1) == 100 * MiB - int(0.1 * 350e6)
    assert written_after_idle(p, 100 * MiB, 10.0) == 0


# ---------------------------------------------------------------- parameters


def test_nvme_fallbacks():
    prof = parse_profile(
        {"kind": "nvme", "capacity": "1TB", "read_bw": "3GB/s", "write_bw": "2GB/s"}
    )
    p = flash_params(prof)
    assert (p.read_latency, p.write_latency) == (80e-6, 20e-6)
    assert p.read_iops == pytest.approx(3e9 / 4096)  # 732 k, under the 1 M cap
    assert p.write_iops == pytest.approx(2e9 / 4096)
    assert p.parallelism == 59  # ⌈732 k × 80 µs⌉ = ⌈58.6⌉
    assert p.steady_write_bw == 2e9 and p.write_cache is None
    assert len(p.notes) == 6  # the five figures and power_loss_protection


def test_sata_fallbacks_cap_iops():
    prof = parse_profile(
        {
            "kind": "ssd",
            "capacity": "1TB",
            "interface": "sata",
            "read_bw": "550MB/s",
            "write_bw": "520MB/s",
            "write_cache": "0B",
        }
    )
    p = flash_params(prof)
    assert (p.read_latency, p.write_latency) == (100e-6, 40e-6)
    assert p.read_iops == 100_000  # 550 MB/s / 4 KiB = 134 k, capped
    assert p.parallelism == 10
    assert p.write_cache is None


def test_overrides_and_refusals():
    prof = load_profile("samsung-pm9a3-3.84tb")
    p = flash_params(prof, read_latency=100e-6)
    assert p.parallelism == 100  # recomputed from the new latency
    assert flash_params(prof, parallelism=7).parallelism == 7
    with pytest.raises(ZsimError, match="not an ssd"):
        flash_params(load_profile("seagate-ironwolf-12tb"))
    with pytest.raises(ZsimError, match="unknown SSD parameters"):
        flash_params(prof, latency=1e-6)
    with pytest.raises(ZsimError, match="steady_write_bw"):
        flash_params(prof, steady_write_bw=5e9)
