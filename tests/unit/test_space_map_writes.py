"""A txg's space-map appends by release (zsim.des.txg_meta.space_map_writes)."""

from __future__ import annotations

from dataclasses import dataclass

from zsim.des.txg_meta import MOS_COPIES, SPACE_MAP_WORD_BYTES, space_map_writes
from zsim.zfs.version import parse_zfs_version

SHIFT = 30  # 1 GiB metaslabs


@dataclass
class _Top:
    cursor: int = 0

    def metaslab(self, offset: int) -> int:
        return offset >> SHIFT


def test_before_2_0_every_metaslab_appends_its_own_single_word_entries():
    tops = [_Top(cursor=5 << SHIFT)]
    # 600 frees in metaslab 0, 1 in metaslab 3; the allocations run in metaslab 5
    freed = [(0, i * 4096) for i in range(600)] + [(0, 3 << SHIFT)]
    out = space_map_writes(freed, tops, 12, parse_zfs_version("0.8"))
    sizes = sorted(psize for psize, _ in out)
    # metaslab 0: 600 × 8 B = 4800 B → two 4K sectors; metaslabs 3 and 5: one sector each
    assert sizes == sorted([8192] * MOS_COPIES + [4096] * 2 * MOS_COPIES)
    assert sorted(copy for _, copy in out) == sorted(list(range(MOS_COPIES)) * 3)


def test_from_2_0_one_log_space_map_append_in_two_word_entries():
    tops = [_Top(cursor=5 << SHIFT), _Top(cursor=0)]
    freed = [(0, i * 4096) for i in range(600)] + [(1, 7 << SHIFT)]
    out = space_map_writes(freed, tops, 12, parse_zfs_version("2.2"))
    entries = 600 + 1 + 2  # the frees and each vdev's allocation run
    size = -(-entries * 2 * SPACE_MAP_WORD_BYTES // 4096) * 4096
    assert out == [(size, k) for k in range(MOS_COPIES)]


def test_a_quiet_txg_still_logs_its_allocation_runs():
    out = space_map_writes([], [_Top()], 12, parse_zfs_version("2.2"))
    assert out == [(4096, k) for k in range(MOS_COPIES)]
