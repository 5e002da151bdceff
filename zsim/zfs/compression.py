"""How big a compressed record is on disk (its psize).

Source: OpenZFS ``zio_compress_data()`` / ``zio_write_compress()`` (``module/zfs/zio.c``,
``zio_compress.c``): a record is kept compressed only if that saves at least 1/8 of its size
(``d_len = s_len - (s_len >> 3)``), and the compressed size is rounded up to whole sectors
(``zio_roundup_alloc_size()``; a rounded size that reaches ``lsize`` is stored
uncompressed). The compression ratio itself is an input (it depends on the data), not a model.

Records of sparse files (:func:`sparse_record_psize`): a record whose written part is data and
whose rest is the zeros of a hole. ``zio_compress_data()`` first scans the buffer with
``zio_compress_zeroed_cb()``: an all-zero record returns psize 0 and ``zio_write_compress()``
writes nothing (the block pointer stays a hole). Otherwise the compressor encodes the runs of
zeros in a few bytes each (per-compressor mechanics below) and the data at its ratio. With
compression off nothing looks at the contents: zeros are written in full.
"""

from __future__ import annotations

import math

from zsim.errors import ZsimError
from zsim.units import KiB

# ---- what each compressor makes of a run of zeros and of a run of data
#: Output bytes per input byte of a long run of zeros.
#:
#: * ``lz4``: OpenZFS ``module/zfs/lz4_zfs.c`` (LZ4 r85), ``LZ4_compressCtx()``: a run of
#:   zeros is one match at offset 1 whose length beyond ``ML_MASK`` (15) is written as one
#:   byte per 255 (``for (; len > 509; len -= 510) { *op++ = 255; *op++ = 255; }``).
#: * ``zle``: ``module/zfs/zle.c`` ``zle_compress()`` at ``n = 64`` (``zio_compress_table``):
#:   one length byte stands for up to ``256 - n`` = 192 zeros.
#: * ``gzip``: zlib deflate (``module/zfs/gzip.c``); RFC 1951 §3.2.5: the longest match is
#:   258 bytes (length code 285, no extra bits) and a zero run repeats it at distance 1
#:   (distance code 0, no extra bits). In a block made mostly of that one pair the dynamic
#:   Huffman codes (§3.2.7) give each symbol one or two bits: ~3 bits per 258 bytes.
#: * ``zstd``: RFC 8878 §3.1.1.2: blocks hold at most 128 KiB (``Block_Maximum_Size``) and a
#:   block of one repeated byte is an ``RLE_Block``, a 3-byte header and the byte: 4 bytes
#:   per 128 KiB of zeros.
ZERO_RUN_BYTES_PER_BYTE: dict[str, float] = {
    "lz4": 1 / 255,
    "zle": 1 / (256 - 64),
    "gzip": 3 / 8 / 258,
    "zstd": 4 / (128 * KiB),
}
#: Extra output bytes per input byte of incompressible data (ratio 1) kept as literals.
#: ``lz4``: the literal run's length beyond ``RUN_MASK`` (15) costs one byte per 255
#: (``LZ4_compressCtx()``); ``zle``: one length byte per 64 literals (``zle_compress()``);
#: deflate and zstd store incompressible data as stored/raw blocks, with a few header bytes
#: per 64 KiB / 128 KiB block (RFC 1951 §3.2.4, RFC 8878 §3.1.1.2): taken as 0.
LITERAL_BYTES_PER_BYTE: dict[str, float] = {"lz4": 1 / 255, "zle": 1 / 64, "gzip": 0.0, "zstd": 0.0}
#: Output bytes of each switch between a zero run and a data run: ``lz4`` a token (1), the
#: match offset (2) and the last length byte (1); ``zle`` the length byte; ``gzip`` a few
#: Huffman symbols (~1 byte); ``zstd`` one sequence (literal length, match length, offset
#: codes: ~3 bytes, RFC 8878 §3.1.1.3.2).
RUN_SWITCH_BYTES: dict[str, int] = {"lz4": 4, "zle": 1, "gzip": 1, "zstd": 3}
#: Fixed bytes per compressed record: ``lz4`` the 4-byte big-endian length that
#: ``zfs_lz4_compress_buf()``
#: puts first; ``gzip`` zlib's 2-byte header and 4-byte Adler-32 (RFC 1950); ``zstd`` ZFS's
#: ``zfs_zstdhdr_t`` (8 bytes: compressed size, version and level; ``zfs_zstd.c``) and the
#: zstd frame header (≤ 14 bytes, RFC 8878 §3.1.1); ``zle`` none.
HEADER_BYTES: dict[str, int] = {"lz4": 4, "zle": 0, "gzip": 6, "zstd": 22}


def _check_ratio(compress_ratio: float) -> None:
    if compress_ratio < 1:
        raise ZsimError(
            f"compress_ratio {compress_ratio} is below 1; it is logical ÷ physical size, "
            f"1.0 for incompressible data"
        )


def _kept(lsize: int, csize: float, ashift: int) -> int:
    """ZFS's rules on a compressed size: kept only if at most 7/8 of ``lsize``
    (``zio_compress_data()``), rounded up to whole sectors, and stored uncompressed (whole
    sectors of ``lsize``) when the rounded size is not smaller (``zio_write_compress()``)."""
    sector = 1 << ashift
    full = -(-lsize // sector) * sector
    target = math.ceil(csize)
    if target > lsize - (lsize >> 3):
        return full
    rounded = max(sector, -(-target // sector) * sector)
    return full if rounded >= lsize else rounded


def compressed_psize(lsize: int, compress_ratio: float, ashift: int) -> int:
    """Physical bytes of a record of ``lsize`` logical bytes at ``compress_ratio`` (≥ 1)."""
    _check_ratio(compress_ratio)
    if compress_ratio == 1:
        sector = 1 << ashift
        return -(-lsize // sector) * sector
    return _kept(lsize, lsize / compress_ratio, ashift)


def sparse_record_psize(
    lsize: int,
    written: int,
    compress_ratio: float,
    ashift: int,
    compression: str,
    extents: int = 1,
) -> int:
    """Physical bytes of a record of a sparse file: ``written`` bytes of data that compress
    at ``compress_ratio`` in ``extents`` separate pieces, the rest of the ``lsize`` record
    zeros (the hole it was).

    ``compression = "off"``: the whole record, zeros included (nothing inspects the data).
    Otherwise a record with no data is a hole (0: ``zio_compress_zeroed_cb()``), and the
    compressed size is the compressor's header, the data at its ratio (with literal-length
    bytes when incompressible), each zero byte at :data:`ZERO_RUN_BYTES_PER_BYTE` and each
    switch between data and zeros at :data:`RUN_SWITCH_BYTES`; then ZFS's 1/8 and sector
    rules (:func:`compressed_psize`). A fully written record is an ordinary one."""
    _check_ratio(compress_ratio)
    written = max(0, min(written, lsize))
    if compression == "off" or written >= lsize:
        return compressed_psize(lsize, compress_ratio if compression != "off" else 1.0, ashift)
    if written == 0:
        return 0
    if compression not in ZERO_RUN_BYTES_PER_BYTE:
        raise ZsimError(f"unknown compression {compression!r}")
    zeros = lsize - written
    extents = max(1, min(extents, written))
    data = written / compress_ratio
    if compress_ratio == 1:
        data += written * LITERAL_BYTES_PER_BYTE[compression]
    csize = (
        HEADER_BYTES[compression]
        + data
        + zeros * ZERO_RUN_BYTES_PER_BYTE[compression]
        + 2 * extents * RUN_SWITCH_BYTES[compression]
    )
    return _kept(lsize, csize, ashift)
