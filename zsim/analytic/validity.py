"""The analytic engine's validity range: which scenarios it answers, and why it declines the
others (``docs/analytic.md``). :func:`zsim.analytic.engine.simulate_analytic` raises
:class:`OutOfRange` for a scenario :func:`validity` declines; it never answers a case it
cannot model.
"""

from __future__ import annotations

from zsim.errors import ZsimError
from zsim.layout.tree import ZfsLayout
from zsim.scenario import Scenario
from zsim.zfs.txg import txg_tunables
from zsim.zfs.version import parse_zfs_version

#: random writes over files this many times zfs_dirty_data_max rarely hit a record still
#: dirty in the open txg (at most ~1/this of calls do), so each call writes its records
COALESCE_FREE_MULTIPLE = 20


class OutOfRange(ZsimError):
    """The scenario is outside the analytic engine's validity range."""


def validity(sc: Scenario) -> str | None:
    """Why the analytic engine cannot answer ``sc``, or ``None`` when it can."""
    layout = sc.layout_tree()
    pool, w = sc.pool, sc.workload
    if not isinstance(layout, ZfsLayout):
        return f"{pool.layout!r} is not a ZFS pool (md RAID, btrfs, zpool-on and raw are DES-only)"
    if any(layout.of_class(c) for c in ("log", "special", "dedup", "cache")):
        return "support vdevs (log, special, dedup, cache) are modelled by the DES only"
    if pool.failed:
        return "degraded pools (pool.failed) are modelled by the DES only"
    if w.tool != "fio":
        return f"workload tool {w.tool!r}: the analytic engine models fio jobs"
    assert w.rw is not None and w.bs is not None, "the scenario's checks require a fio rw and bs"
    if w.rw in ("randrw", "rw", "readwrite"):
        return (
            f"fio rw={w.rw!r}: mixed jobs — reads queued behind the txg's bursts of writes on "
            f"the same disks, and the write throttle's delays to the same callers — are "
            f"modelled by the DES only"
        )
    if w.rw not in ("randread", "write", "randwrite"):
        return (
            f"fio rw={w.rw!r}: sequential reads (zfetch's prefetch against the vdev queue's "
            f"LBA-ordered aggregation of several streams) are modelled by the DES only"
        )
    if any(v.kind == "draid" for v in layout.data_vdevs):
        return (
            "dRAID (its redundancy groups rotating over the children) is modelled by the DES only"
        )
    if direct_io(sc) and w.rw != "randread":
        return "O_DIRECT writes (issued from the caller, verified) are modelled by the DES only"
    if direct_io(sc) and w.bs > pool.recordsize:
        return "O_DIRECT reads of several records per call are modelled by the DES only"
    if w.sync or w.fsync or pool.sync == "always":
        return "sync writes (O_SYNC, fsync, sync=always) and the ZIL are modelled by the DES only"
    if pool.dedup == "on":
        return "dedup is modelled by the DES only"
    rs = pool.recordsize
    if w.bs % rs and rs % w.bs:
        return f"bs {w.bs} B neither divides nor is a multiple of recordsize {rs} B"
    if w.rw != "randread" and w.bs % rs:
        return (
            f"bs {w.bs} B below recordsize {rs} B: partial-record writes (read-modify-write, "
            f"sparse files filling up) are modelled by the DES only"
        )
    if w.rw == "randwrite":
        dirty_max = txg_tunables(sc.hardware.ram, parse_zfs_version(sc.hardware.zfs_version))
        files = w.numjobs * w.size
        if files < COALESCE_FREE_MULTIPLE * dirty_max.dirty_max:
            return (
                f"random writes over {files} B of files, under {COALESCE_FREE_MULTIPLE} × "
                f"zfs_dirty_data_max: rewrites of a record still dirty in the open txg "
                f"coalesce, which the DES models and this engine does not"
            )
    if w.rw == "randread" and w.bs > rs and not direct_io(sc):
        return "buffered reads of several records per call are modelled by the DES only"
    return None


def direct_io(sc: Scenario) -> bool:
    w, pool = sc.workload, sc.pool
    version = parse_zfs_version(sc.hardware.zfs_version)
    return (
        (w.tool == "fio" and w.direct and pool.direct != "disabled") or pool.direct == "always"
    ) and version.at_least(2, 3)
