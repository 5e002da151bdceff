"""How big a compressed record is on disk (its psize).

Source: OpenZFS ``zio_compress_data()`` / ``zio_write_compress()`` (``module/zfs/zio.c``,
``zio_compress.c``): a record is kept compressed only if that saves at least 1/8 of its size
(``d_len = s_len - (s_len >> 3)``), and the compressed size is rounded up to whole sectors.
The compression ratio itself is an input (it depends on the data), not a model.
"""

from __future__ import annotations

import math

from zsim.errors import ZsimError


def compressed_psize(lsize: int, compress_ratio: float, ashift: int) -> int:
    """Physical bytes of a record of ``lsize`` logical bytes at ``compress_ratio`` (≥ 1)."""
    if compress_ratio < 1:
        raise ZsimError(
            f"compress_ratio {compress_ratio} is below 1; it is logical ÷ physical size, "
            f"1.0 for incompressible data"
        )
    sector = 1 << ashift
    if compress_ratio == 1:
        return -(-lsize // sector) * sector
    target = math.ceil(lsize / compress_ratio)
    if target > lsize - (lsize >> 3):
        return -(-lsize // sector) * sector
    return max(sector, -(-target // sector) * sector)
