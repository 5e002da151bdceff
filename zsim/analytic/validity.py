"""The analytic engine's validity range: which scenarios it answers, and why it declines the
others (``docs/analytic.md``). :func:`zsim.analytic.engine.simulate_analytic` raises
:class:`OutOfRange` for a scenario :func:`validity` declines; it never answers a case it
cannot model.
"""

from __future__ import annotations

from zsim.analytic.stream_sample import (
    IN_FLIGHT_SETS,
    MAX_DRAID_RECORDS,
    MAX_STREAM_RECORDS,
    MEASURED_RECORDS,
    MIN_DRAID_DISK_BYTES,
    MIN_DRAID_GROUPS,
    draid_records,
    stream_records,
    stream_warmup,
)
from zsim.analytic.sync_range import sync_validity, sync_writes
from zsim.errors import ZsimError
from zsim.layout.tree import Vdev, ZfsLayout
from zsim.scenario import Scenario
from zsim.zfs.arc import arc_data_bytes, zfetch_max_distance
from zsim.zfs.compression import compressed_psize
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
    sync = sync_writes(sc)  # commits through the ZIL (zsim.analytic.sync)
    if layout.of_class("dedup") or (layout.of_class("log") and not sync):
        return "support vdevs (log without sync writes, dedup) are modelled by the DES only"
    if layout.of_class("special"):
        reason = _special_reason(sc)
        if reason is not None:
            return reason
    if layout.of_class("cache") and (w.rw not in ("randread", "randwrite", "write") or sync):
        return (
            f"cache (L2ARC) devices with fio rw={w.rw!r}{' and sync writes' if sync else ''}: "
            f"the analytic engine answers random reads (hits on the cache devices) and "
            f"buffered writes there; the rest is modelled by the DES only"
        )
    if w.tool != "fio":
        return f"workload tool {w.tool!r}: the analytic engine models fio jobs"
    if pool.failed:
        reason = _degraded_reason(sc, layout)
        if reason is not None:
            return reason
    assert w.rw is not None and w.bs is not None, "the scenario's checks require a fio rw and bs"
    if w.rw in ("rw", "readwrite"):
        return (
            f"fio rw={w.rw!r}: sequential mixed jobs (zfetch's prefetch between the writes) "
            f"are modelled by the DES only"
        )
    if w.rw == "randrw":
        reason = _mixed_reason(sc)
        if reason is not None:
            return reason
    if w.rw not in ("randread", "read", "write", "randwrite", "randrw"):
        return f"fio rw={w.rw!r} is modelled by the DES only"
    if w.rw == "read":
        reason = _sequential_read_reason(sc)
        if reason is not None:
            return reason
    if direct_io(sc) and w.rw != "randread":
        return "O_DIRECT writes (issued from the caller, verified) are modelled by the DES only"
    if direct_io(sc) and w.bs > pool.recordsize:
        return "O_DIRECT reads of several records per call are modelled by the DES only"
    if sync:
        reason = sync_validity(sc, direct_io(sc))
        if reason is not None:
            return reason
    if pool.dedup == "on":
        return "dedup is modelled by the DES only"
    rs = pool.recordsize
    if w.bs % rs and rs % w.bs:
        return f"bs {w.bs} B neither divides nor is a multiple of recordsize {rs} B"
    if w.rw not in ("randread", "read") and w.bs % rs:
        reason = _partial_write_reason(sc, layout)
        if reason is not None:
            return reason
    if w.rw in ("randwrite", "randrw") and not sync:
        # (sync writes: coalescing spares only the txg's write-back, whose bound the ZIL
        # model checks, not the commits)
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


def _special_reason(sc: Scenario) -> str | None:
    """Why a pool with special vdevs is outside the range: the engine answers random and
    sequential reads and buffered writes whose data blocks stay on the data vdevs (the
    special vdevs take the indirect blocks, spa_preferred_class())."""
    pool, w = sc.pool, sc.workload
    ratio = pool.compress_ratio if pool.compression != "off" else 1.0
    if compressed_psize(pool.recordsize, ratio, pool.ashift) <= pool.special_small_blocks:
        return (
            f"data blocks on the special vdevs (records of {pool.recordsize} B stored at most "
            f"special_small_blocks = {pool.special_small_blocks} B) are modelled by the DES only"
        )
    if w.rw not in ("randread", "read", "randwrite", "write") or sync_writes(sc):
        what = "sync writes" if sync_writes(sc) else f"fio rw={w.rw!r}"
        return (
            f"{what} with special vdevs are modelled by the DES only; the analytic engine "
            f"answers reads and buffered writes there"
        )
    return None


def _degraded_reason(sc: Scenario, layout: ZfsLayout) -> str | None:
    """Why a degraded pool's job is outside the range: the engine answers random reads,
    ``randrw`` and buffered whole-record writes on mirror and raidz vdevs with leaves
    missing (the shared column map sends them nothing, and a raidz read whose data they
    held reads every surviving column and rebuilds from parity)."""
    w = sc.workload
    if any(v.kind == "draid" for v in layout.data_vdevs):
        return "degraded dRAID (reads rebuilt across its groups) is modelled by the DES only"
    if w.rw not in ("randread", "randwrite", "write", "randrw") or sync_writes(sc):
        what = "sync writes" if sync_writes(sc) else f"fio rw={w.rw!r}"
        return (
            f"{what} on a degraded pool (pool.failed) is modelled by the DES only; the "
            f"analytic engine answers random reads, randrw and buffered writes there"
        )
    return None


def _partial_write_reason(sc: Scenario, layout: ZfsLayout) -> str | None:
    """Why writes of part of a record are outside the range: the engine answers random
    buffered read-modify-writes on laid-out files (fio ``randrw``, or ``randwrite`` with
    ``overwrite``; :mod:`zsim.analytic.mixed`), each call inside one record, and sequential
    buffered writes into new files, whose calls fill each record in turn without reading it
    (:class:`~zsim.analytic.writes.WriteModel`: ``bs``/``recordsize`` records per call)."""
    pool, w = sc.pool, sc.workload
    assert w.bs is not None, "checked by validity()"
    what = f"bs {w.bs} B below recordsize {pool.recordsize} B"
    if w.rw == "write" and w.overwrite:
        return (
            f"{what}: sequential partial-record writes over laid-out files (the first call "
            f"into each record reads it) are modelled by the DES only"
        )
    if w.rw == "randwrite" and not w.overwrite:
        return (
            f"{what}: partial-record writes into fio's sparse files (a hole reads nothing, a "
            f"record's stored size grows as it fills) are modelled by the DES only; with "
            f"overwrite=1 (laid-out files, read-modify-write) the analytic engine answers"
        )
    if sync_writes(sc) or direct_io(sc):
        return f"{what}: partial-record writes with O_SYNC or O_DIRECT are modelled by the DES only"
    if pool.failed or any(layout.of_class(c) for c in ("special", "cache")):
        return (
            f"{what}: partial-record writes on a degraded pool or with special or cache "
            f"vdevs are modelled by the DES only"
        )
    return None


def direct_io(sc: Scenario) -> bool:
    w, pool = sc.workload, sc.pool
    version = parse_zfs_version(sc.hardware.zfs_version)
    return (
        (w.tool == "fio" and w.direct and pool.direct != "disabled") or pool.direct == "always"
    ) and version.at_least(2, 3)


def _shape(v: Vdev) -> tuple[str, int, int, int, int]:
    return (v.kind, len(v.devices), v.parity, v.ndata, v.nspares)


def _sequential_read_reason(sc: Scenario) -> str | None:
    """Why the sequential-read model (:mod:`zsim.analytic.seqread`) cannot answer ``sc``."""
    pool, w = sc.pool, sc.workload
    layout = sc.layout_tree()
    ratio = pool.compress_ratio if pool.compression != "off" else 1.0
    sampled = MEASURED_RECORDS  # what a stream table measures at least (dRAID: more)
    if isinstance(layout, ZfsLayout) and any(v.kind == "draid" for v in layout.data_vdevs):
        vdevs = layout.data_vdevs
        if any(_shape(v) != _shape(vdevs[0]) for v in vdevs):
            return (
                "dRAID sequential reads on a pool of unlike vdevs (the records' shares of "
                "each vdev, and so the sample a stream table needs, differ) are modelled by "
                "the DES only"
            )
        psize = compressed_psize(pool.recordsize, ratio, pool.ashift)
        ndata = vdevs[0].ndata
        if psize // ndata < MIN_DRAID_DISK_BYTES:
            return (
                f"dRAID sequential reads of {psize // ndata} B of a record per data disk "
                f"(under {MIN_DRAID_DISK_BYTES // 1024} KiB: {psize} B stored records over "
                f"{ndata} data disks) are modelled by the DES only: there the two engines "
                f"were seen to differ by −20 … +51 % and the DES to move along the file "
                f"(larger records or fewer data disks per group are in range)"
            )
        needed = sampled = draid_records(psize, pool.ashift, vdevs, w.numjobs)
        if needed > MAX_DRAID_RECORDS:
            return (
                f"dRAID sequential reads of {pool.recordsize} B records: a stream reads one "
                f"group's D+P children for each (D+P) × 16 MiB of the vdev, so the busiest "
                f"disk, and the rate with it, changes along the file; for each of the "
                f"{w.numjobs} streams to cross {MIN_DRAID_GROUPS} groups of each of the "
                f"{len(vdevs)} vdevs a stream table would measure {needed} records in all "
                f"(at most {MAX_DRAID_RECORDS}); modelled by the DES only (fewer jobs, fewer "
                f"vdevs or larger records are in range)"
            )
    if direct_io(sc):
        return (
            "O_DIRECT sequential reads (prefetched records not kept in the ARC, so a demand "
            "read after its prefetch reads the disks again) are modelled by the DES only"
        )
    if pool.primarycache != "all":
        return (
            f"sequential reads with primarycache={pool.primarycache} (prefetched records not "
            f"kept in the ARC, read again on demand) are modelled by the DES only"
        )
    version = parse_zfs_version(sc.hardware.zfs_version)
    arc_records = arc_data_bytes(sc.hardware.ram, version, ratio) // pool.recordsize
    window = max(1, zfetch_max_distance(version) // pool.recordsize)
    if w.numjobs * max(1, -(-w.size // pool.recordsize)) <= arc_records:
        return (
            "sequential reads of files the ARC holds whole: the DES starts with a cold ARC and "
            "reads the first pass from the disks, the later ones from memory, so its answer "
            "depends on how long it runs; modelled by the DES only"
        )
    if arc_records < 2 * w.numjobs * window:
        return (
            "sequential reads whose prefetch windows (zfetch_max_distance per job) fill half "
            "the ARC (prefetched records evicted before they are read) are modelled by the "
            "DES only"
        )
    rotating = sc.hardware.disk.kind == "hdd"
    sample = stream_warmup(w.numjobs, window, rotating)
    sample += stream_records(w.numjobs, window, sampled, rotating)
    if sample > MAX_STREAM_RECORDS:
        return (
            f"sequential reads of {pool.recordsize} B records by {w.numjobs} jobs: zfetch "
            f"keeps {window} records in flight per job, and a stream table must span "
            f"{IN_FLIGHT_SETS} times what the jobs hold in flight to stand for the run "
            f"({sample} records, at most {MAX_STREAM_RECORDS}); modelled by the DES only "
            f"(larger records or fewer jobs are in range)"
        )
    return None


def _mixed_reason(sc: Scenario) -> str | None:
    """Why the mixed random read/write model (:mod:`zsim.analytic.mixed`) cannot answer
    ``sc`` (checked before the rules every write shares)."""
    pool, w = sc.pool, sc.workload
    layout = sc.layout_tree()
    assert isinstance(layout, ZfsLayout) and w.bs is not None, "checked by validity()"
    if w.bs > pool.recordsize:
        return (
            f"fio rw='randrw' with bs {w.bs} B > recordsize {pool.recordsize} B (buffered "
            f"reads and writes of several records per call) is modelled by the DES only"
        )
    if sync_writes(sc):
        return (
            "fio rw='randrw' with sync writes (O_SYNC, fsync, sync=always: the ZIL's commits "
            "between the reads) is modelled by the DES only"
        )
    return None
