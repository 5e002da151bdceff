"""Physical size of records of sparse files (zsim.zfs.compression.sparse_record_psize) and
the DES write path that uses it."""

from __future__ import annotations

import pytest

from zsim.des.engine import Engine
from zsim.des.vdev import LeafQueue, Zio
from zsim.machine.run_control import RunControl
from zsim.scenario import scenario_from_dict
from zsim.units import KiB, MiB
from zsim.zfs.compression import (
    ZERO_RUN_BYTES_PER_BYTE,
    compressed_psize,
    sparse_record_psize,
)


def test_an_all_zero_record_is_a_hole():
    for compression in ZERO_RUN_BYTES_PER_BYTE:
        assert sparse_record_psize(MiB, 0, 1.0, 12, compression) == 0


def test_one_4k_block_of_random_data_in_a_1m_lz4_record():
    # 4 KiB of literals + the 1020 KiB zero run at one byte per 255 (~4 KiB) + headers:
    # a little over 8 KiB, so three 4 KiB sectors
    expected = 4 + 4 * KiB + (4 * KiB) / 255 + (MiB - 4 * KiB) / 255 + 8
    assert 8 * KiB < expected < 12 * KiB
    assert sparse_record_psize(MiB, 4 * KiB, 1.0, 12, "lz4") == 12 * KiB
    # on 512-byte sectors the rounding is finer
    assert sparse_record_psize(MiB, 4 * KiB, 1.0, 9, "lz4") == -(-int(expected) // 512) * 512


def test_zstd_and_gzip_store_zeros_in_less_than_lz4():
    lz4 = sparse_record_psize(MiB, 4 * KiB, 1.0, 12, "lz4")
    assert sparse_record_psize(MiB, 4 * KiB, 1.0, 12, "zstd") == 8 * KiB
    assert sparse_record_psize(MiB, 4 * KiB, 1.0, 12, "gzip") == 8 * KiB
    assert sparse_record_psize(MiB, 4 * KiB, 1.0, 12, "zle") == 12 * KiB
    assert lz4 == 12 * KiB


def test_compression_off_writes_the_zeros():
    assert sparse_record_psize(MiB, 4 * KiB, 1.0, 12, "off") == MiB
    assert sparse_record_psize(MiB, 0, 1.0, 12, "off") == MiB


def test_psize_grows_with_the_written_part_and_a_whole_record_is_ordinary():
    sizes = [sparse_record_psize(MiB, n * 4 * KiB, 1.0, 12, "lz4", n) for n in range(1, 257)]
    assert sizes == sorted(sizes)
    assert sizes[-1] == compressed_psize(MiB, 1.0, 12) == MiB
    # the 1/8 rule: a record nearly full of random data is stored uncompressed
    assert sparse_record_psize(MiB, MiB - 64 * KiB, 1.0, 12, "lz4", 16) == MiB
    # compressible data compresses at its ratio
    assert sparse_record_psize(MiB, 512 * KiB, 2.0, 12, "lz4") < 300 * KiB


def test_compressed_psize_unchanged():
    assert compressed_psize(MiB, 1.0, 12) == MiB
    assert compressed_psize(MiB, 1.3, 12) == 806912
    assert compressed_psize(4 * KiB, 1.5, 12) == 4 * KiB
    assert compressed_psize(12 * KiB, 1.5, 12) == 8 * KiB


def _device_write_bytes_per_call(overwrite: bool, monkeypatch) -> float:
    sc = scenario_from_dict(
        {
            "hardware": {"disk": "seagate-ironwolf-12tb", "ram": "16GiB", "zfs_version": "2.2"},
            "pool": {"layout": "raidz2 5", "recordsize": "1M", "compression": "lz4"},
            "workload": {
                "tool": "fio",
                "rw": "randwrite",
                "bs": "4K",
                "numjobs": 2,
                "iodepth": 8,
                "ioengine": "libaio",
                "size": "4GiB",
                "overwrite": overwrite,
            },
        }
    )
    written = [0]
    add = LeafQueue.add

    def counting_add(self: LeafQueue, zio: Zio) -> None:
        if zio.is_write:
            written[0] += zio.nbytes
        add(self, zio)

    monkeypatch.setattr(LeafQueue, "add", counting_add)
    engine = Engine(sc, 1, RunControl(target_ci=1e-9, max_sim_seconds=3, max_wall_seconds=120))
    engine.run()
    monkeypatch.setattr(LeafQueue, "add", add)
    return written[0] / len(engine.stats.times)


def test_sparse_4k_random_writes_write_far_fewer_device_bytes(monkeypatch):
    """Into a sparse file each dirtied 1 MiB record is mostly the hole's zeros, which lz4
    stores as ~1/255 of their size: a few sectors per record instead of a whole one."""
    sparse = _device_write_bytes_per_call(False, monkeypatch)
    laid_out = _device_write_bytes_per_call(True, monkeypatch)
    assert sparse < laid_out / 5, (sparse, laid_out)


def test_unknown_compression_is_refused():
    from zsim.errors import ZsimError

    with pytest.raises(ZsimError):
        sparse_record_psize(MiB, 4 * KiB, 1.0, 12, "lzjb")
