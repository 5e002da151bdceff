"""Which sync-write jobs the analytic engine's ZIL model (:mod:`zsim.analytic.sync`)
answers: :func:`sync_writes` says whether a job commits through the ZIL at all (as the DES
decides), :func:`sync_validity` why the model declines one (``docs/analytic.md``). Kept
apart from the model so :mod:`zsim.analytic.validity` can ask without an import cycle.
"""

from __future__ import annotations

from zsim.layout.tree import ZfsLayout
from zsim.scenario import Scenario


def sync_writes(sc: Scenario) -> bool:
    """Does ``sc``'s job commit its writes through the ZIL (as :class:`zsim.des.engine.Engine`
    decides: O_SYNC, fsync=N or ``sync=always``, unless ``sync=disabled``)?"""
    w, pool = sc.workload, sc.pool
    if pool.sync == "disabled" or w.tool != "fio" or w.rw in ("read", "randread"):
        return False
    return bool(w.sync or w.fsync or pool.sync == "always")


def sync_validity(sc: Scenario) -> str | None:
    """Why the sync-write model cannot answer ``sc`` (a sync-write job), or ``None``."""
    w, hw = sc.workload, sc.hardware
    layout = sc.layout_tree()
    assert isinstance(layout, ZfsLayout), "validity() admits ZFS pools only"
    if w.rw not in ("write", "randwrite"):
        return f"sync writes with fio rw={w.rw!r} are modelled by the DES only"
    logs = layout.of_class("log")
    log_disk = (hw.log_device or hw.disk) if logs else hw.disk
    if log_disk.kind == "hdd":
        where = "an HDD log vdev" if logs else "HDD data vdevs without a log vdev"
        return (
            f"sync writes to {where}: each log block queues behind the txg's write-back "
            f"on the same heads and waits for the drive's flush (a volatile write cache "
            f"destages whole first), which the DES models and this engine does not (a "
            f"flash log vdev is in range)"
        )
    if logs and sc.pool.logbias == "throughput":
        return (
            "logbias=throughput with a log vdev (records written to the data vdevs at each "
            "commit, the log vdev holding only pointers) is modelled by the DES only"
        )
    if any(v.kind == "draid" for v in layout.data_vdevs):
        return "sync writes on dRAID are modelled by the DES only"
    if any(layout.of_class(c) for c in ("special", "dedup", "cache")):
        return "special, dedup and cache vdevs are modelled by the DES only"
    return None
