"""CPU cost of the work ZFS and the client do, per call and per byte (seconds on one core).

Figures are single-core kernel throughputs posted in OpenZFS threads and project READMEs
(``../shared/notes/zfs-internals.md`` §10), taken at a ~3 GHz core and scaled by clock:

* fletcher4 10 GB/s — between the SSE2 (9.1 GB/s, openzfs/zfs#11788) and AVX2 (22 GB/s,
  PR #9517) benchmarks, since the kernel's choice depends on the CPU;
* sha256 0.7 GB/s (AVX2, PR #13741); blake3 2.5 GB/s and skein/edonr/sha512 1 GB/s are
  estimates between sha256 and fletcher4;
* raidz parity generation P / PQ / PQR: 4.8 / 3.3 / 1.5 GB/s of data (AVX2, PR #4860);
* memory copy 8 GB/s per core (between the 5–10 GB/s per core of DDR4 servers);
* lz4 compress 0.6 GB/s, decompress 2 GB/s (lz4 README figures scaled to a current core);
  zstd (level 3) compress 0.35 GB/s, decompress 1 GB/s; gzip compress 0.05 GB/s;
* a read()/write() system call through the VFS into the ZPL: 4 µs; a ZIO through the
  pipeline: 8 µs — estimates from the per-call ceilings seen with 4 KiB dd on ZFS
  (~150–250 k calls/s per core), to be replaced by calibration;
* reading /dev/urandom: 0.4 GB/s per core (Linux ChaCha20 CRNG);
  /dev/zero costs a page clear: 10 GB/s.
"""

from __future__ import annotations

from dataclasses import dataclass

REFERENCE_GHZ = 3.0
_CHECKSUM_RATE = {
    "fletcher4": 10e9,
    "sha256": 0.7e9,
    "sha512": 1.0e9,
    "blake3": 2.5e9,
    "skein": 1.0e9,
    "edonr": 1.0e9,
    "off": float("inf"),
}
_PARITY_RATE = {0: float("inf"), 1: 4.8e9, 2: 3.3e9, 3: 1.5e9}
_COMPRESS_RATE = {"off": float("inf"), "lz4": 0.6e9, "zle": 3e9, "zstd": 0.35e9, "gzip": 0.05e9}
_DECOMPRESS_RATE = {"off": float("inf"), "lz4": 2e9, "zle": 5e9, "zstd": 1e9, "gzip": 0.3e9}
_SOURCE_RATE = {"zero": 10e9, "urandom": 0.4e9, "file": 8e9}


@dataclass(frozen=True)
class CpuCosts:
    """Seconds of one core per call or per byte for one scenario."""

    syscall: float
    zio: float
    copy_per_byte: float
    checksum_per_byte: float
    parity_per_byte: float
    compress_per_byte: float
    decompress_per_byte: float
    source_per_byte: float


def cpu_costs(
    ghz: float, checksum: str, parity: int, compression: str, source: str = "zero"
) -> CpuCosts:
    scale = REFERENCE_GHZ / ghz
    return CpuCosts(
        syscall=4e-6 * scale,
        zio=8e-6 * scale,
        copy_per_byte=scale / 8e9,
        checksum_per_byte=scale / _CHECKSUM_RATE[checksum],
        parity_per_byte=scale / _PARITY_RATE[min(parity, 3)],
        compress_per_byte=scale / _COMPRESS_RATE[compression],
        decompress_per_byte=scale / _DECOMPRESS_RATE[compression],
        source_per_byte=scale / _SOURCE_RATE[source],
    )
