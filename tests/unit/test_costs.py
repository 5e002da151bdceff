"""CPU cost figures (zsim/machine/costs.py): units, clock scaling, what each pool key changes."""

from __future__ import annotations

import math

import pytest

from zsim.machine.costs import (
    REFERENCE_GHZ,
    CpuCosts,
    cpu_costs,
    effective_checksum,
)
from zsim.scenario import CHECKSUMS, COMPRESSIONS, DD_SOURCES


def test_the_positional_api_is_unchanged():
    c = cpu_costs(3.0, "fletcher4", 1, "lz4")
    assert isinstance(c, CpuCosts)
    assert cpu_costs(3.0, "fletcher4", 1, "lz4", "zero") == c
    # the eight original fields, in order, can still build one
    CpuCosts(1e-6, 1e-6, 1e-10, 1e-10, 1e-10, 1e-10, 1e-10, 1e-10)


@pytest.mark.parametrize("checksum", CHECKSUMS)
@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("source", DD_SOURCES)
def test_every_scenario_value_has_a_figure(checksum, compression, source):
    for parity in (0, 1, 2, 3, 4):
        c = cpu_costs(2.5, checksum, parity, compression, source, compress_ratio=1.0)
        for value in vars(c).values():
            if isinstance(value, float):
                assert value >= 0 and math.isfinite(value)


def test_costs_scale_inversely_with_the_clock():
    fast = cpu_costs(2 * REFERENCE_GHZ, "sha256", 2, "zstd", dedup=True, atime=True)
    ref = cpu_costs(REFERENCE_GHZ, "sha256", 2, "zstd", dedup=True, atime=True)
    for name, value in vars(ref).items():
        if isinstance(value, float):
            assert getattr(fast, name) == pytest.approx(value / 2), name


def test_per_byte_rates_at_the_reference_clock():
    c = cpu_costs(REFERENCE_GHZ, "fletcher4", 1, "lz4")
    assert 1 / c.checksum_per_byte == pytest.approx(10e9)
    assert 1 / c.parity_per_byte == pytest.approx(4.8e9)
    assert 1 / c.copy_per_byte == pytest.approx(8e9)
    assert 1 / c.compress_per_byte == pytest.approx(0.47e9)
    assert 1 / c.decompress_per_byte == pytest.approx(3.0e9)


def test_off_costs_nothing():
    c = cpu_costs(3.0, "off", 0, "off")
    assert c.checksum_per_byte == c.parity_per_byte == 0
    assert c.compress_per_byte == c.decompress_per_byte == 0
    assert c.dedup_per_write == c.atime_update == 0


def test_cryptographic_checksums_cost_more_than_fletcher4():
    f4 = cpu_costs(3.0, "fletcher4", 1, "off").checksum_per_byte
    for name in ("sha256", "sha512", "skein", "edonr", "blake3"):
        assert cpu_costs(3.0, name, 1, "off").checksum_per_byte > f4, name


def test_more_parity_costs_more():
    costs = [cpu_costs(3.0, "fletcher4", p, "off").parity_per_byte for p in (0, 1, 2, 3)]
    assert costs == sorted(costs)
    assert costs[0] == 0


def test_incompressible_data_compresses_faster_and_is_read_without_decompression():
    compressible = cpu_costs(3.0, "fletcher4", 1, "lz4", compress_ratio=2.0)
    incompressible = cpu_costs(3.0, "fletcher4", 1, "lz4", compress_ratio=1.0)
    default = cpu_costs(3.0, "fletcher4", 1, "lz4")
    assert compressible == default
    assert 0 < incompressible.compress_per_byte < compressible.compress_per_byte
    # a record stored as is (psize = lsize: a ratio under 8/7 saves less than 1/8) is read,
    # and hit in the ARC, without decompression
    rs = 128 * 1024
    assert incompressible.expand(rs, rs) == 0
    assert incompressible.arc_hit_expand(rs, rs) == 0
    assert incompressible.read_record(rs, rs) == incompressible.zio + rs * (
        incompressible.checksum_per_byte
    )


def test_decompression_is_charged_per_logical_byte():
    """lzbench's decompression speeds are output bytes/s: a record stored at a quarter of its
    size costs its whole logical size to expand, and so does a mostly-zero sparse record,
    whatever the data's own ratio (the record is stored compressed all the same)."""
    rs = 1 << 20
    c = cpu_costs(3.0, "fletcher4", 1, "lz4", compress_ratio=1.0)
    assert c.expand(rs, rs // 4) == pytest.approx(rs / 3.0e9)
    assert c.expand(rs, 8192) == c.expand(rs, rs // 4)
    assert c.arc_hit_expand(rs, 8192) == pytest.approx(
        c.expand(rs, 8192) + rs * c.cache_pages_per_byte
    )
    assert c.read_record(rs, rs // 4) == pytest.approx(
        c.zio + rs // 4 * c.checksum_per_byte + rs / 3.0e9
    )


def test_dedup_forces_a_cryptographic_checksum_and_adds_ddt_work():
    assert effective_checksum("fletcher4", dedup=True) == "sha256"
    assert effective_checksum("off", dedup=True) == "sha256"
    assert effective_checksum("blake3", dedup=True) == "blake3"
    assert effective_checksum("fletcher4", dedup=False) == "fletcher4"
    plain = cpu_costs(3.0, "fletcher4", 1, "off")
    dedup = cpu_costs(3.0, "fletcher4", 1, "off", dedup=True)
    assert dedup.checksum == "sha256"
    assert dedup.checksum_per_byte == cpu_costs(3.0, "sha256", 1, "off").checksum_per_byte
    assert dedup.dedup_per_write > 0 == plain.dedup_per_write
    assert dedup.write_record(1 << 20, 1 << 20) > plain.write_record(1 << 20, 1 << 20)


def test_atime_adds_an_update_per_read():
    assert cpu_costs(3.0, "fletcher4", 1, "off", atime=True).atime_update > 0
    assert cpu_costs(3.0, "fletcher4", 1, "off").atime_update == 0


def test_direct_write_verify_is_one_more_checksum_pass():
    c = cpu_costs(3.0, "sha256", 1, "off")
    assert c.direct_verify_per_byte == c.checksum_per_byte


def test_record_helpers_add_up():
    c = cpu_costs(3.0, "fletcher4", 1, "lz4", compress_ratio=1.0)
    lsize = psize = 1 << 20
    expected = (
        c.zio + lsize * c.compress_per_byte + psize * (c.checksum_per_byte + c.parity_per_byte)
    )
    assert c.write_record(lsize, psize) == pytest.approx(expected)
    assert c.write_record(lsize, psize, parity=False) < expected
    assert c.read_record(lsize, psize) == pytest.approx(c.zio + psize * c.checksum_per_byte)


def test_larger_records_cost_less_per_byte_once_child_ios_count():
    """raidz1 16: a 128K record and a 1M record each issue 16 child I/Os."""
    c = cpu_costs(3.0, "fletcher4", 1, "off")

    def per_byte(rs: int) -> float:
        return (c.write_record(rs, rs) + 16 * c.leaf_io) / rs

    assert per_byte(128 << 10) > 1.3 * per_byte(1 << 20)
