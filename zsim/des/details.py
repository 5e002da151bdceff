"""The engine's result details of the L2ARC and the intent log: what each did during a run."""

from __future__ import annotations

from typing import Any

from zsim.des.zfs_model import ZfsModel
from zsim.des.zil import Zil
from zsim.zfs.arc import L2ARC_WRITE_MAX


def l2arc_details(zfs: ZfsModel) -> dict[str, Any]:
    """Hits, hit probability, feed and size of the cache devices; empty without them."""
    if not zfs.cache_tops:
        return {}
    cache_bytes = sum(t.space for t in zfs.cache_tops)
    return {
        "l2arc_hits": zfs.l2_hits,
        "l2arc_hit_probability": zfs.l2_hit,
        "l2arc_feed_bytes": zfs.l2_feed_bytes,
        "l2arc_bytes": cache_bytes,
        # time the feed needs to fill the cache devices from cold, s
        "l2arc_warm_seconds": cache_bytes / L2ARC_WRITE_MAX,
    }


def zil_details(zil: Zil | None) -> dict[str, Any]:
    """Commits, their mean time, log blocks and bytes, indirect writes; empty without a ZIL."""
    if zil is None:
        return {}
    return {
        "zil_commits": zil.commits,
        "zil_commit_mean_s": zil.commit_time / zil.commits if zil.commits else None,
        "zil_lwbs": zil.lwbs_written,
        "zil_log_bytes": zil.log_bytes,
        "zil_indirect_writes": zil.indirect_writes,
        "slog": bool(zil.log_tops),
    }
