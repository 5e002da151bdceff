"""Compressed ARC: a caller's hit on a record stored compressed, outside the dbuf cache, is
decompressed into a new buffer on the caller's core (``arc_buf_fill()``, module/zfs/arc.c);
the dbuf cache (``dbuf_cache_target_bytes()``, module/zfs/dbuf.c) holds records uncompressed."""

from __future__ import annotations

import pytest

from zsim.scenario import scenario_from_dict
from zsim.simulate import simulate
from zsim.units import GiB, MiB
from zsim.zfs.arc import arc_max_bytes, dbuf_cache_bytes, dbuf_share_of_hits
from zsim.zfs.version import parse_zfs_version


def test_dbuf_cache_size_by_release():
    ram = 64 * GiB
    v22, v07 = parse_zfs_version("2.2"), parse_zfs_version("0.7")
    assert dbuf_cache_bytes(ram, v22) == arc_max_bytes(ram, v22) >> 5
    # 0.7: dbuf_cache_max_bytes = 100 MiB, capped at arc_max >> 5
    assert dbuf_cache_bytes(ram, v07) == 100 * MiB
    assert dbuf_cache_bytes(GiB, v07) == arc_max_bytes(GiB, v07) >> 5
    # of the ARC's hits, the share the dbuf cache serves: D/min(C, N)
    dbuf = dbuf_cache_bytes(ram, v22) // MiB
    assert dbuf_share_of_hits(dbuf, 32 * dbuf, 10**9) == 1 / 32
    assert dbuf_share_of_hits(dbuf, 32 * dbuf, 10) == 1.0
    assert dbuf_share_of_hits(dbuf, 0, 10**9) == 0.0


def _sparse_randwrite(compression: str):
    """4 KiB random writes into the 1 MiB records of sparse files that the ARC holds whole:
    each record holds a few KiB of data and the hole's zeros."""
    sc = scenario_from_dict(
        {
            "hardware": {
                "disk": "seagate-ironwolf-12tb",
                "ram": "64GiB",
                "cpu_cores": 4,
                "cpu_ghz": 2.0,
                "zfs_version": "2.2",
            },
            "pool": {
                "layout": "raidz2 5",
                "recordsize": "1M",
                "compression": compression,
                "compress_ratio": 1.0,
                "fill": 0.01,
            },
            "workload": {
                "tool": "fio",
                "rw": "randwrite",
                "bs": "4K",
                "numjobs": 4,
                "iodepth": 1,
                "size": "2GiB",
            },
        }
    )
    return simulate(sc, seed=1, target_ci=0.05, max_sim_seconds=5, max_wall_seconds=600)


def test_partial_writes_into_compressed_records_expand_them_in_the_caller():
    """With lz4 a mostly-zero record is stored compressed, so a 4 KiB write into it (after it
    left the dbuf cache) first decompresses the whole 1 MiB: the writers' own cores bound
    the rate. With compression off the record is stored as is and nothing is expanded."""
    lz4 = _sparse_randwrite("lz4")
    assert lz4.details["arc_hit_expands"] > 0
    assert lz4.limit == "cpu"
    # the expand (1 MiB at 3 GB/s per 3 GHz, on a 2 GHz core) dominates a call's time
    assert lz4.write.latency_p50 > 0.4e-3
    off = _sparse_randwrite("off")
    assert off.details["arc_hit_expands"] == 0


def _randread(ratio: float, engine: str):
    sc = scenario_from_dict(
        {
            "hardware": {"disk": "samsung-870-evo-500gb", "ram": "64GiB", "cpu_cores": 2},
            "pool": {
                "layout": "4x mirror 2",
                "recordsize": "128K",
                "compression": "lz4",
                "compress_ratio": ratio,
                "fill": 0.01,
            },
            "workload": {
                "tool": "fio",
                "rw": "randread",
                "bs": "4K",
                "numjobs": 4,
                "iodepth": 1,
                "size": "2GiB",
            },
        }
    )
    return simulate(sc, engine=engine, seed=1, target_ci=0.05, max_sim_seconds=3)


@pytest.mark.parametrize("engine", ["des", "analytic"])
def test_small_reads_of_large_compressed_records_cost_a_decompression(engine):
    """8 GiB of 128 KiB records all in the ARC, 1/32 of the ARC in the dbuf cache: a 4 KiB
    read of compressible data decompresses its whole record on most calls; incompressible
    records are stored as is and their reads cost only the call and the copy."""
    packed = _randread(2.0, engine)
    plain = _randread(1.0, engine)
    assert packed.read.iops < 0.5 * plain.read.iops
