"""CPU cost of the work ZFS and the client do, per call, per I/O and per byte (seconds of one core).

Every figure is a single-core rate at the reference clock :data:`REFERENCE_GHZ` (3 GHz) and is
scaled by the scenario's ``cpu_ghz``. Each constant below names its source beside it, or says
"estimate:" with the reasoning. Sources (see also ``../shared/notes/zfs-internals.md`` §10):

* OpenZFS's own kernel benchmarks, which run when the module loads and pick the fastest
  implementation for the CPU: ``/proc/spl/kstat/zfs/fletcher_4_bench``,
  ``vdev_raidz_bench`` and ``chksum_bench`` output posted in openzfs/zfs threads
  (PR #9517, issue #11788, PR #4860, PR #12918, PR #13741, PR #13695);
* the LZ4 README's single-thread lzbench table (Silesia corpus; v1.9.0 on a Core i7-9700K at
  4.9 GHz, and r101 on a Core i5-3340M at 2.7 GHz), which also lists ``memcpy`` on that core;
* issue threads on how LZ4/zstd behave on incompressible data.

A rate measured on another clock is scaled to 3 GHz by clock ratio (``× 3 / GHz``), which
assumes the kernel is bound by the core, not by memory; that is stated beside each figure.

Where each cost belongs (``zsim.des.engine`` and ``zsim.des.zfs_model``; ``zsim.des.zil`` for
the intent log; the DRAM traffic each pass moves is in :mod:`zsim.machine.memory`):

* client call: ``syscall`` + bytes × ``copy_per_byte`` (the copy between user pages and the
  ARC/dbuf; O_DIRECT on 2.3+ skips it for whole, aligned records), + ``source_per_byte`` for
  dd's input, + ``atime_update`` per read when ``atime=on``, + bytes ×
  ``cache_pages_per_byte`` for the ARC buffer a buffered write fills;
* each record written at txg sync: ``zio`` + lsize × ``compress_per_byte`` + psize ×
  (``checksum_per_byte`` + ``parity_per_byte``) + ``dedup_per_write`` with ``dedup=on``,
  + ``leaf_io`` per child I/O; a direct write adds psize × ``direct_verify_per_byte``;
* each record read from disk: ``zio`` + psize × ``checksum_per_byte`` + lsize ×
  ``decompress_per_byte`` when it is stored compressed (psize < lsize) + ``leaf_io`` per
  child I/O, + lsize × ``cache_pages_per_byte`` when the record is kept in the ARC;
* each ARC hit on a record stored compressed that the dbuf cache does not hold (a read, or
  the read of a read-modify-write), in the caller: lsize × (``decompress_per_byte`` +
  ``cache_pages_per_byte``) (:meth:`CpuCosts.arc_hit_expand`).

Pool keys with no CPU constant of their own: ``recordsize`` and ``ashift`` act through the
per-record and per-I/O costs (fewer, larger records and leaf I/Os); ``logbias`` and ``sync``
through the ZIL's block writes (checksummed with ``checksum_per_byte``); ``primarycache``
through ARC hits and misses; ``xattr`` costs nothing for fio/dd data I/O (no extended
attribute is read or written; ``xattr=sa`` versus ``dir`` matters only for workloads that
set xattrs, e.g. SMB with ACLs, which zsim does not model).
"""

from __future__ import annotations

from dataclasses import dataclass

from zsim.units import GB

REFERENCE_GHZ = 3.0

# ---- checksums: bytes/s of one core at 3 GHz
_CHECKSUM_RATE = {
    # kstat fletcher_4_bench runs on a small buffer that stays in cache: AVX2 22.4 GB/s and
    # AVX512 33.8 GB/s on a Xeon Platinum 8170 (PR #9517); SSE2 9.1 GB/s on an older CPU
    # (issue #11788); 33-34 GB/s at 128K-1M on an i3-1005G1 (PR #12918). In the txg sync
    # the record has long left the cache (gigabytes are dirty), and ryao's bound in #11788
    # caps fletcher4 at MIN(one core's memory bandwidth, additions per cycle × clock), so
    # estimate: 10 GB/s, one core streaming from DRAM (the memcpy figure below moves
    # 8.4 GB/s each way at 3 GHz).
    "fletcher4": 10 * GB,
    # chksum_bench, 1 MiB: sha256-shani 1.04 GB/s and sha256-avx2 0.31 GB/s on a Ryzen
    # 5900X VM (PR #13741); SHA-NI 1.23 GB/s on an i3-1005G1 (PR #12918). Xeons before Ice
    # Lake have no SHA-NI (AVX2 only, ~0.3), AMD EPYC and newer Xeons do (~1.0-1.2).
    # estimate: 0.7 GB/s, between the two kernels the module picks from.
    "sha256": 0.7 * GB,
    # chksum_bench, 1 MiB: sha512-avx2 0.495 GB/s, sha512-generic 0.32 (5900X VM, PR
    # #13741); 0.70 GB/s generic on the FreeBSD host of PR #13695. Taken: 0.5 GB/s.
    "sha512": 0.5 * GB,
    # chksum_bench: blake3-avx2 4.7-4.8 GB/s at 64K-256K (PR #13695); the SSE4.1 kernel
    # 2.4 GB/s on the same host. Taken: 4.4 GB/s, the AVX2 figure at 1 MiB in a second
    # posted table (4386 MB/s), below the memory-bound fletcher4 figure.
    "blake3": 4.4 * GB,
    # chksum_bench, 1 MiB: skein-generic 0.62 GB/s (i3-1005G1, PR #12918), 0.47 (5900X VM,
    # PR #13741), 0.34 (PR #13695). Taken: 0.5 GB/s.
    "skein": 0.5 * GB,
    # chksum_bench, 1 MiB: edonr-generic 1.77 GB/s (i3-1005G1, PR #12918), 1.28 (5900X VM,
    # PR #13741), 2.49 (PR #13695). Taken: 1.7 GB/s.
    "edonr": 1.7 * GB,
    "off": float("inf"),
}
#: ``dedup=on`` needs a cryptographic checksum: OpenZFS uses the dataset's when it is one
#: (sha256, sha512, skein, edonr with verify, blake3), else sha256 (``zio_checksum_dedup_select``
#: in module/zfs/zio_checksum.c; zfsprops.7 "dedup": "the default checksum is sha256").
DEDUP_CHECKSUMS = ("sha256", "sha512", "skein", "edonr", "blake3")

# ---- raidz parity generation, bytes of data/s: kstat vdev_raidz_bench, AVX2, gen_p / gen_pq
# / gen_pqr = 4.79 / 3.30 / 1.48 GB/s on a 2016 Xeon (PR #4860); AVX512BW is faster where
# present. The kernel picks the fastest implementation at load.
_PARITY_RATE = {0: float("inf"), 1: 4.8 * GB, 2: 3.3 * GB, 3: 1.5 * GB}

# ---- compression of compressible data (the Silesia corpus), bytes of input/s at 3 GHz:
_COMPRESS_RATE = {
    "off": float("inf"),
    # LZ4 README: v1.9.0 780 MB/s on an i7-9700K at 4.9 GHz (→ 0.48 GB/s at 3 GHz); r101
    # 422 MB/s on an i5-3340M at 2.7 GHz (→ 0.47). OpenZFS still compresses with the old
    # r1xx-era code (module/zfs/lz4_zfs.c; only the decompressor moved to 1.9.3, PR
    # #12805). Taken: 0.47 GB/s.
    "lz4": 0.47 * GB,
    # estimate: zero-length encoding is one pass looking for runs of zeros, about memcpy
    # speed (no published per-core figure found).
    "zle": 3 * GB,
    # ZFS's default zstd level is 3. LZ4 README (v1.9.0 table, i7-9700K at 4.9 GHz):
    # zstd 1.4.0 -1 515 MB/s; its v1.7.3 table (i7-3930K) has zstd -3 at 200/330 of -1.
    # → 515 × 200/330 × 3/4.9 = 0.19 GB/s at 3 GHz. Taken: 0.2 GB/s.
    "zstd": 0.2 * GB,
    # gzip = gzip-6: LZ4 README (v1.9.0 table) zlib 1.2.11 -6 36 MB/s at 4.9 GHz → 0.022.
    "gzip": 0.022 * GB,
}
# ---- compression of incompressible data (compress_ratio 1.0). OpenZFS stores such a
# record uncompressed but still runs the compressor first (zio_compress_data), which stops
# when its output would exceed 7/8 of the input.
_COMPRESS_RATE_INCOMPRESSIBLE = {
    "off": float("inf"),
    # LZ4 skips ahead through data that has no matches: "lz4 skips over most of the file
    # and gives results that are 7-10x faster than when using lz4 against compressible
    # data" (phoronix-test-suite issue #768); "LZ4 is really fast, especially at giving up
    # on incompressible data" (openzfs/zfs PR #13244). Taken: 7 × 0.47 = 3.3 GB/s.
    "lz4": 3.3 * GB,
    "zle": 3 * GB,  # estimate: one scan, as above
    # zstd 1.5.5 on already-compressed 128 KiB blocks, i7-9700 without turbo (3.0 GHz):
    # 2.67 GB/s at level 3 (Cyan4973 in openzfs/zfs issue #12081). OpenZFS 2.2-2.3 bundle
    # zstd 1.4.5; estimate: half that rate for the older library, 1.3 GB/s.
    "zstd": 1.3 * GB,
    # estimate: no incompressible-data figure found for zlib; the compressible rate.
    "gzip": 0.022 * GB,
}
_DECOMPRESS_RATE = {
    "off": float("inf"),
    # LZ4 README v1.9.0: 4970 MB/s at 4.9 GHz → 3.0 GB/s at 3 GHz; OpenZFS's decompressor
    # is LZ4 1.9.3's since PR #12805.
    "lz4": 3.0 * GB,
    "zle": 5 * GB,  # estimate: expanding runs of zeros, above memcpy speed
    # LZ4 README v1.9.0: zstd -1 1380 MB/s at 4.9 GHz; v1.7.3 table: -3 at 810/930 of -1
    # → 1380 × 810/930 × 3/4.9 = 0.74 GB/s. Taken: 0.75 GB/s.
    "zstd": 0.75 * GB,
    # LZ4 README v1.9.0: zlib -6 decompression 445 MB/s at 4.9 GHz → 0.27 GB/s.
    "gzip": 0.27 * GB,
}
#: A record is kept compressed only if that saves ≥ 1/8 (``zio_compress_data``, the rule in
#: :mod:`zsim.zfs.compression`); below this ratio it is stored, and read, uncompressed.
MIN_KEPT_RATIO = 8 / 7

# ---- the client's input for dd
_SOURCE_RATE = {
    # estimate: /dev/zero costs clearing the user buffer, about memcpy speed or better.
    "zero": 10 * GB,
    # estimate: Linux ChaCha20 CRNG on one core; the tn-bench M50 run (calibration/reference/
    # tnbench-m50.toml) measured one dd from /dev/urandom at 226 MiB/s on a 2.2 GHz Xeon
    # Silver 4114, ≈ 0.33 GB/s at 3 GHz with the copy and syscall included.
    "urandom": 0.4 * GB,
    "file": 8 * GB,  # estimate: reading a cached source file is one more memory copy
}

# ---- memory copies between user pages and the ARC/dbufs, bytes/s at 3 GHz: LZ4 README's
# lzbench table lists memcpy at 13.7 GB/s on one i7-9700K core at 4.9 GHz → 8.4 GB/s at
# 3 GHz. Server cores copy less per clock (higher memory latency); the tn-bench M50 run
# read one 1 MiB-block stream from the ARC at 2.79 GiB/s on a 2.2 GHz Xeon Silver 4114 under
# production load, i.e. ≈ 4 GB/s at 3 GHz for the whole call — the copy is at most that.
# Taken: 8 GB/s (the per-call costs below carry the rest).
COPY_RATE = 8 * GB

# ---- per-call and per-I/O costs at 3 GHz
#: estimate: a read()/write() through the VFS into the ZPL (range lock, dmu_tx for writes,
#: dbuf hold/release). PR #10018's thread shows 4 fio jobs reading 4 KiB from the ARC at
#: 584 k IOPS at 92 % CPU each (CPU model not stated): ≈ 6 µs per call with its copy.
SYSCALL_S = 4e-6
#: estimate: one logical ZIO through the pipeline (zio_create, the stages, the allocation
#: or ARC bookkeeping, completion), from the per-call ceilings with 4 KiB dd on ZFS
#: (~150-250 k calls/s per core).
ZIO_S = 8e-6
#: estimate: one child I/O to a leaf vdev (child zio, vdev_queue insert/aggregate, the
#: bio to the block layer and its completion interrupt). Linux NVMe submission plus
#: completion alone costs ~1-2 µs per I/O; ZFS's queueing and child-zio bookkeeping roughly
#: as much again. Taken: 3 µs.
LEAF_IO_S = 3e-6
#: estimate: dedup=on per record written: ddt_lookup() of the block's checksum in the DDT
#: (an AVL tree in memory, else a ZAP lookup through the ARC) and, in syncing context,
#: ddt_sync() updating the entry's ZAP leaf — a few dbuf holds and a ZAP modify, ~10 µs
#: with the DDT in memory (far more when the DDT must be read from disk, which zsim does
#: not model). The sha256 it forces is charged through ``checksum_per_byte``.
DEDUP_PER_WRITE_S = 10e-6
#: estimate: atime=on: a read that moves the access time dirties the znode
#: (zfs_dirty_inode(): a dmu_tx assign, an SA update, commit) — one small transaction,
#: ~5 µs. With relatime (zfsprops.7), at most once per file per day; zsim's ``atime`` key
#: has no relatime, so ``on`` charges it on every read call.
ATIME_UPDATE_S = 5e-6
#: Buffered data lives in ARC buffers built from kernel pages (Linux ABD scatter lists):
#: every record copied in (a buffered write, a read miss) allocates pages, and once the ARC
#: is full an equal amount is evicted and its pages freed. Direct I/O does neither. The
#: Linux frame allocator takes 94 ns per 4 KiB allocation on one core (LLFree, USENIX ATC
#: 2023, measured on a 2.1 GHz Xeon Gold); estimate: the free about as much, so 188 ns per
#: page at 2.1 GHz → 130 ns at 3 GHz. Larger ABD chunks (``zfs_abd_scatter_max_order``)
#: cost less when memory is not fragmented, and the eviction's per-header work is left out,
#: so this is the floor of the ARC's own cost, charged per byte.
ARC_PAGE_S = 130e-9
_PAGE = 4096


@dataclass(frozen=True)
class CpuCosts:
    """Seconds of one core per call, per I/O or per byte for one scenario."""

    syscall: float
    zio: float
    copy_per_byte: float
    checksum_per_byte: float
    parity_per_byte: float
    compress_per_byte: float
    decompress_per_byte: float
    source_per_byte: float
    #: one child I/O to a leaf vdev (the logical ``zio`` is charged once per record)
    leaf_io: float = 0.0
    #: dedup=on: DDT lookup and entry update per record written (0 with dedup off)
    dedup_per_write: float = 0.0
    #: atime=on: the znode update per read call (0 with atime off)
    atime_update: float = 0.0
    #: O_DIRECT writes on Linux re-checksum the data before commit
    #: (``zfs_vdev_direct_write_verify`` = 1, zfs.4); per byte of psize
    direct_verify_per_byte: float = 0.0
    #: the name of the checksum actually computed (sha256 when dedup forces it)
    checksum: str = "fletcher4"
    #: allocating an ARC buffer's pages and, once the ARC is full, freeing an evicted one;
    #: per byte that enters the ARC (buffered writes, read misses kept in the ARC)
    cache_pages_per_byte: float = 0.0

    def call(self, nbytes: int, is_read: bool, direct: bool, from_dd: bool = False) -> float:
        """CPU seconds of one ``read()``/``write()`` of ``nbytes``: the call, and the copy
        between the user's pages and the ARC — or, with Direct I/O (2.3+) of whole records,
        no copy and, for a write, one more checksum of the pages (``direct_write_verify``).
        A buffered write also fills the dirty record's ARC buffer (a read miss pays that at
        the insert); a read updates atime; dd's writes first fill its buffer from the
        source."""
        if direct:
            work = self.syscall + (0.0 if is_read else nbytes * self.direct_verify_per_byte)
        else:
            work = self.syscall + nbytes * self.copy_per_byte
            if not is_read:
                work += nbytes * self.cache_pages_per_byte
        if is_read:
            work += self.atime_update
        if not is_read and from_dd:
            work += nbytes * self.source_per_byte
        return work

    def write_record(self, lsize: int, psize: int, parity: bool = True) -> float:
        """CPU seconds of one record's write pipeline in the txg sync, child I/Os apart."""
        return (
            self.zio
            + lsize * self.compress_per_byte
            + psize * (self.checksum_per_byte + (self.parity_per_byte if parity else 0.0))
            + self.dedup_per_write
        )

    def read_record(self, lsize: int, psize: int) -> float:
        """CPU seconds to verify and decompress one record a caller read from disk, child
        I/Os apart: :meth:`verify_record`, and :meth:`expand` when it is stored compressed
        (``arc_read_done()`` fills the caller's buffer)."""
        return self.verify_record(psize) + self.expand(lsize, psize)

    def verify_record(self, psize: int) -> float:
        """CPU seconds to verify one record read from disk and keep it in the ARC as stored
        (a prefetch: no caller's buffer, so nothing is decompressed until a caller hits
        it, :meth:`arc_hit_expand`), child I/Os apart."""
        return self.zio + psize * self.checksum_per_byte

    def expand(self, lsize: int, psize: int) -> float:
        """CPU seconds to decompress a record stored compressed (``psize`` < ``lsize``) into
        a buffer of ``lsize`` bytes; nothing for one stored as is. Per *logical* byte: the
        lzbench rates behind ``decompress_per_byte`` are output bytes per second."""
        return lsize * self.decompress_per_byte if psize < lsize else 0.0

    def arc_hit_expand(self, lsize: int, psize: int) -> float:
        """CPU seconds a caller spends on a record the ARC holds compressed but the dbuf
        cache does not: ``arc_buf_fill()`` allocates an ``lsize`` buffer and decompresses
        into it (``module/zfs/arc.c``); nothing when the record is stored as is (the
        buffer shares the ARC's copy)."""
        if psize >= lsize:
            return 0.0
        return self.expand(lsize, psize) + lsize * self.cache_pages_per_byte


def effective_checksum(checksum: str, dedup: bool) -> str:
    """The checksum ZFS computes: with dedup on, a non-cryptographic one becomes sha256."""
    if dedup and checksum not in DEDUP_CHECKSUMS:
        return "sha256"
    return checksum


def cpu_costs(
    ghz: float,
    checksum: str,
    parity: int,
    compression: str,
    source: str = "zero",
    *,
    compress_ratio: float | None = None,
    dedup: bool = False,
    atime: bool = False,
    io_scale: float = 1.0,
    byte_scale: float = 1.0,
) -> CpuCosts:
    """Costs on a ``ghz`` core for a pool's checksum, raidz parity level and compression.

    ``compress_ratio``: the data's logical ÷ physical size; ``None`` (the default) means
    compressible data (the Silesia-corpus rates); below :data:`MIN_KEPT_RATIO` the record
    is stored uncompressed, so compression runs at its incompressible-data rate (a record
    decompresses only when stored compressed: :meth:`CpuCosts.expand`). ``dedup`` forces a
    cryptographic checksum and adds the DDT work; ``atime`` adds an inode update per read
    call.

    ``io_scale`` multiplies every per-call, per-record and per-I/O term (``syscall``,
    ``zio``, ``leaf_io``, ``dedup_per_write``, ``atime_update``) and ``byte_scale`` every
    per-byte term (copy, checksum, parity, compression, decompression, dd's source, the
    direct-write verify and the ARC pages). They are calibrated multipliers for a host whose
    kernel, CPU or memory differs from the model's reference (the scenario keys
    ``hardware.cpu_io_cost_scale`` and ``cpu_byte_cost_scale``, fitted by
    :mod:`zsim.calibrate.host_fit`); 1.0, the default, keeps the sourced figures above.
    """
    clock = REFERENCE_GHZ / ghz
    per_io = clock * io_scale
    scale = clock * byte_scale  # per byte
    summed = effective_checksum(checksum, dedup)
    incompressible = compress_ratio is not None and compress_ratio < MIN_KEPT_RATIO
    compress_rate = (_COMPRESS_RATE_INCOMPRESSIBLE if incompressible else _COMPRESS_RATE)[
        compression
    ]
    # the algorithm's rate: whether a record is stored compressed (and so decompressed) is
    # the caller's question, asked with its psize (CpuCosts.expand)
    decompress_rate = _DECOMPRESS_RATE[compression]
    checksum_per_byte = scale / _CHECKSUM_RATE[summed]
    return CpuCosts(
        syscall=SYSCALL_S * per_io,
        zio=ZIO_S * per_io,
        copy_per_byte=scale / COPY_RATE,
        checksum_per_byte=checksum_per_byte,
        parity_per_byte=scale / _PARITY_RATE[min(parity, 3)],
        compress_per_byte=scale / compress_rate,
        decompress_per_byte=scale / decompress_rate,
        source_per_byte=scale / _SOURCE_RATE[source],
        leaf_io=LEAF_IO_S * per_io,
        dedup_per_write=DEDUP_PER_WRITE_S * per_io if dedup else 0.0,
        atime_update=ATIME_UPDATE_S * per_io if atime else 0.0,
        direct_verify_per_byte=checksum_per_byte,
        checksum=summed,
        cache_pages_per_byte=ARC_PAGE_S * scale / _PAGE,
    )


ZIO_TASKQ_BATCH_PCT = 80
"""``zio_taskq_batch_pct``: the zio write-issue and interrupt taskqs get this share of the
CPUs as threads (module/zfs/spa.c, zfs.4)."""


def zio_taskq_threads(cores: int) -> int:
    """Worker threads of ZFS's batch taskqs on ``cores`` CPUs (at least one): the CPU pool's
    cap on background work (:class:`zsim.machine.resources.CpuPool`)."""
    return max(1, cores * ZIO_TASKQ_BATCH_PCT // 100)
