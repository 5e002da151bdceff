"""DRAM traffic of ZFS's data passes, bytes moved per byte of data (the shared memory bus).

Each core's per-byte rates in :mod:`zsim.machine.costs` already include the time one core waits on
memory; what they cannot show is that all cores and every device's DMA share one memory
system. On fast NVMe pools that shared bandwidth runs out first: openzfs/zfs issue #8381
reports memory bandwidth exhausted by data copies on a 4 × PM1725a pool, and Direct I/O
(PR #10018) was written because "the extra overhead of memcpy's issued to the ARC" held
NVMe pools back (``../shared/notes/zfs-internals.md`` §10).

Passes per byte (inference from the code paths in the notes, §10 "Per-byte CPU work"):

* a copy between user pages and the ARC reads the source and writes the destination: 2;
* compression reads its input and writes its output (LZ4 gives up once the output would
  pass 7/8 of the input, so an incompressible record still writes most of a buffer);
* a checksum reads the block once; Direct I/O's write verify reads it once more;
* raidz parity reads the data columns and writes the parity columns;
* decompression reads the compressed block and writes the logical one;
* a device's DMA moves each byte once (into memory for reads, out of it for writes).

The user's own buffer is taken as cache-resident (fio and dd reuse one buffer per job), so
the copy's source read is counted because the ARC side is not, and vice versa.
"""

from __future__ import annotations

#: estimate: sustained memory bandwidth of the default machine (8 cores, one socket), bytes/s.
#: Four channels of DDR4-3200 give 4 × 25.6 = 102.4 GB/s of peak (JEDEC: 3200 MT/s × 8 B per
#: channel); STREAM-style copy kernels sustain roughly 80 % of the DDR peak on current x86
#: servers, so 80 GB/s. A scenario states its own with ``hardware.memory_bandwidth``.
DEFAULT_MEMORY_BANDWIDTH = 80e9

COPY_PASSES = 2.0
CHECKSUM_PASSES = 1.0
DMA_PASSES = 1.0


def copy_bytes(nbytes: int) -> float:
    """Bytes of memory traffic to copy ``nbytes`` between user pages and the ARC."""
    return COPY_PASSES * nbytes


def write_record_bytes(
    lsize: int, psize: int, *, compressing: bool, checksumming: bool, parity_ratio: float
) -> float:
    """Memory traffic of one record's write pipeline (compress, checksum, parity), bytes.

    ``parity_ratio``: parity bytes per data byte (P/D for raidz; 0 for mirrors and stripes).
    """
    traffic = 0.0
    if compressing:
        traffic += lsize + min(lsize, psize)
    if checksumming:
        traffic += CHECKSUM_PASSES * psize
    if parity_ratio > 0:
        traffic += psize * (1.0 + parity_ratio)
    return traffic


def read_record_bytes(lsize: int, psize: int, *, checksumming: bool, compressed: bool) -> float:
    """Memory traffic to verify (and decompress) one record read from disk, bytes."""
    traffic = CHECKSUM_PASSES * psize if checksumming else 0.0
    if compressed:
        traffic += psize + lsize
    return traffic


def dma_bytes(nbytes: int) -> float:
    """Memory traffic of a device transfer of ``nbytes``."""
    return DMA_PASSES * nbytes
