"""Pool layouts: the grammar, the vdev tree, and the block → column maps of each RAID kind."""

from zsim.layout.grammar import parse_layout, to_compact, to_zpool
from zsim.layout.tree import (
    BtrfsArray,
    Layout,
    MdArray,
    RawDevices,
    Vdev,
    ZfsLayout,
    ZpoolOnBlock,
)

__all__ = [
    "BtrfsArray",
    "Layout",
    "MdArray",
    "RawDevices",
    "Vdev",
    "ZfsLayout",
    "ZpoolOnBlock",
    "parse_layout",
    "to_compact",
    "to_zpool",
]
