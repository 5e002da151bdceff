"""Which sync-write jobs the analytic engine's ZIL model (:mod:`zsim.analytic.sync`)
answers: :func:`sync_writes` says whether a job commits through the ZIL at all (as the DES
decides), :func:`sync_validity` why the model declines one (``docs/analytic.md``). Kept
apart from the model so :mod:`zsim.analytic.validity` can ask without an import cycle.
"""

from __future__ import annotations

from zsim.layout.tree import ZfsLayout
from zsim.scenario import Scenario
from zsim.zfs.version import parse_zfs_version
from zsim.zfs.zil import IMMEDIATE_WRITE_SZ, is_indirect


def sync_writes(sc: Scenario) -> bool:
    """Does ``sc``'s job commit its writes through the ZIL (as :class:`zsim.des.engine.Engine`
    decides: O_SYNC, fsync=N or ``sync=always``, unless ``sync=disabled``)?"""
    w, pool = sc.workload, sc.pool
    if pool.sync == "disabled" or w.tool != "fio" or w.rw in ("read", "randread"):
        return False
    return bool(w.sync or w.fsync or pool.sync == "always")


def hdd_log_path(sc: Scenario) -> bool:
    """Do ``sc``'s commits go to HDD data vdevs (no log vdev), the log tables' case
    (:mod:`zsim.analytic.sync_hdd`)?"""
    layout = sc.layout_tree()
    return (
        isinstance(layout, ZfsLayout)
        and not layout.of_class("log")
        and sc.hardware.disk.kind == "hdd"
    )


def sync_validity(sc: Scenario, direct: bool) -> str | None:
    """Why the sync-write model cannot answer ``sc`` (a sync-write job, with O_DIRECT in
    effect or not: :func:`zsim.analytic.validity.direct_io`), or ``None``."""
    w, hw = sc.workload, sc.hardware
    layout = sc.layout_tree()
    assert isinstance(layout, ZfsLayout), "validity() admits ZFS pools only"
    if w.rw not in ("write", "randwrite"):
        return f"sync writes with fio rw={w.rw!r} are modelled by the DES only"
    logs = layout.of_class("log")
    log_disk = (hw.log_device or hw.disk) if logs else hw.disk
    if log_disk.kind == "hdd" and logs:
        return (
            "sync writes to an HDD log vdev are modelled by the DES only (a flash log vdev, "
            "or the HDD data vdevs without one, are in range)"
        )
    if log_disk.kind == "hdd":
        reason = _hdd_pool_reason(sc, direct)
        if reason is not None:
            return f"sync writes to HDD data vdevs without a log vdev: {reason}"
    if logs and sc.pool.logbias == "throughput":
        return (
            "logbias=throughput with a log vdev (records written to the data vdevs at each "
            "commit, the log vdev holding only pointers) is modelled by the DES only"
        )
    if any(v.kind == "draid" for v in layout.data_vdevs) and log_disk.kind != "hdd":
        return "sync writes on dRAID are modelled by the DES only"
    if any(layout.of_class(c) for c in ("special", "dedup", "cache")):
        return "special, dedup and cache vdevs are modelled by the DES only"
    return None


def _hdd_pool_reason(sc: Scenario, direct: bool) -> str | None:
    """Why the log-table model (:mod:`zsim.analytic.sync_hdd`) cannot answer ``sc``, sync
    writes to HDD data vdevs without a SLOG, or ``None``. Its tables run whole-record
    O_SYNC calls whose log records hold their data (``WR_COPIED``)."""
    w, pool = sc.workload, sc.pool
    version = parse_zfs_version(sc.hardware.zfs_version)
    assert w.bs is not None, "a sync-write job is an fio job, which has a block size"
    if w.fsync and not (w.sync or pool.sync == "always"):
        return "fio fsync=N (commits every N buffered writes) is modelled by the DES only"
    if w.bs % pool.recordsize:
        return (
            f"writes of {w.bs // 1024} KiB into {pool.recordsize // 1024} KiB records "
            f"(partial records) are modelled by the DES only"
        )
    if is_indirect(pool.recordsize, pool.recordsize, has_slog=False, logbias=pool.logbias,
                   direct=direct, commit_now=True, version=version):  # fmt: skip
        return (
            f"log records that point at blocks written at once (WR_INDIRECT: records of "
            f"{IMMEDIATE_WRITE_SZ // 1024} KiB and more, logbias=throughput or O_DIRECT) "
            f"are modelled by the DES only"
        )
    return None
