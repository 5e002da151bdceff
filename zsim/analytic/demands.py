"""What the analytic engine knows of a scenario's pool before it solves anything: the data
vdevs (the DES's own :class:`~zsim.des.vdev.TopVdev` maps), record sizes, the clients, CPU
costs, the ARC's hit probability, where the files sit, and the bus stages' rates. The reads
(:mod:`zsim.analytic.reads`) and writes (:mod:`zsim.analytic.writes`) models build on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import simpy

from zsim.analytic.validity import direct_io
from zsim.des.vdev import ASYNC_WRITE, CLASS_LIMITS, SYNC_READ, LeafQueue, TopVdev
from zsim.hardware.catalog import Profile
from zsim.layout.alloc import psize_to_asize, support_vdev_space
from zsim.layout.tree import ZfsLayout
from zsim.machine import memory
from zsim.machine.costs import cpu_costs, zio_taskq_threads
from zsim.machine.links import bus_stages
from zsim.scenario import Pool, Scenario
from zsim.zfs.arc import arc_data_bytes, dbuf_cache_bytes, dbuf_share_of_hits, l2arc_split
from zsim.zfs.compression import compressed_psize
from zsim.zfs.version import parse_zfs_version

#: vdev_queue's sync-read ceiling per leaf (zfs_vdev_sync_read_max_active)
SYNC_READ_MAX = CLASS_LIMITS[SYNC_READ][1]
#: zfs_vdev_async_write_max_active: leaves run at it once the write path is the bottleneck
ASYNC_WRITE_MAX = CLASS_LIMITS[ASYNC_WRITE][1]


@dataclass
class AnalyticVdev:
    """One data vdev as the analytic engine sees it."""

    top: TopVdev
    space: int
    asize: int
    weight: float
    lo: float = 0.0  # region of its leaves the working files occupy (fractions)
    hi: float = 1.0
    #: the width the files' records were born at and their allocated bytes (an expanded
    #: raidz's files laid out before an attach: TopVdev.born); writes are at the current one
    read_width: int = 0
    read_asize: int = 0

    def leaf_fan(self, psize: int) -> float:
        """Bytes the vdev's leaves write per byte it allocates, from a record's column map
        (``psize`` physical bytes, :attr:`asize` allocated): each child of a mirror writes
        every allocated byte (a block's ditto copy included), raidz and dRAID spread theirs,
        parity included, over the children once."""
        return sum(io[2] for io in self.top.leaf_ios(0, psize, True)) / self.asize


class PoolModel:
    """The scenario's pool, clients and machine as the read and write models use them."""

    def __init__(self, sc: Scenario, seed: int = 1):
        self.sc, self.seed = sc, seed
        hw, pool, w = sc.hardware, sc.pool, sc.workload
        self.version = parse_zfs_version(hw.zfs_version)
        self.disk: Profile = hw.disk
        self.rotating = self.disk.kind == "hdd"
        layout = sc.layout_tree()
        assert isinstance(layout, ZfsLayout), "validity() admits ZFS pools only"
        assert w.rw is not None and w.bs is not None, "validity() admits fio jobs, which have them"
        self.rs, self.bs = pool.recordsize, w.bs
        ratio = pool.compress_ratio if pool.compression != "off" else 1.0
        self.psize = compressed_psize(self.rs, ratio, pool.ashift)
        cap = sc.pool_capacity()
        data_caps = [v for v in cap.vdevs if v.vclass == "normal"]
        vdevs = []
        for vdev, vcap in zip(layout.data_vdevs, data_caps, strict=True):
            # the analytic engine never queues I/O: the vdev's map needs no leaf queues
            no_leaves = cast(list[LeafQueue], [None] * len(vdev.devices))
            born = sc.born_regions(vcap.steps)
            space = vcap.metaslab_bytes
            # the leaves pool.failed names are missing: the shared map sends them nothing
            # and a raidz read whose data they held reads every surviving column
            failed = {i for i, name in enumerate(vdev.devices) if name in pool.failed}
            top = TopVdev(
                vdev, no_leaves, pool.ashift, space, self.rotating, failed=failed, born=born
            )
            asize = psize_to_asize(vdev, self.psize, pool.ashift)
            vdevs.append(
                AnalyticVdev(top, space, asize, 0.0, read_width=vdev.width, read_asize=asize)
            )
        total_space = sum(v.space for v in vdevs)
        for v in vdevs:
            v.weight = v.space / total_space
        self.vdevs = vdevs
        self.direct = direct_io(sc)
        slots = 1 if w.ioengine in ("psync", "sync") else w.iodepth
        self.slots = slots
        self.njobs = w.numjobs
        self.clients = self.njobs * (slots if self.direct else 1)
        self.reads = w.rw == "randread"
        self.random = w.rw.startswith("rand")
        self.file_records = max(1, -(-w.size // self.rs))
        self.total_records = self.njobs * self.file_records
        self.costs = cpu_costs(
            hw.cpu_ghz,
            pool.checksum,
            max(v.parity for v in layout.data_vdevs),
            pool.compression,
            "zero",
            compress_ratio=pool.compress_ratio,
            dedup=False,
            atime=pool.atime == "on",
            io_scale=hw.cpu_io_cost_scale,
            byte_scale=hw.cpu_byte_cost_scale,
        )
        self.cores = hw.cpu_cores
        self._shares: dict[int, np.ndarray] = {}
        self.taskq = zio_taskq_threads(hw.cpu_cores)
        self.mem_bw = hw.memory_bandwidth or memory.DEFAULT_MEMORY_BANDWIDTH
        arc_records = arc_data_bytes(hw.ram, self.version, ratio) // self.rs
        cached = pool.primarycache == "all" and not self.direct
        # cache (L2ARC) devices, each its own vdev: a miss finds its block there with the
        # share of the missed records they hold, whose headers the ARC pays for
        # (zsim.zfs.arc.l2arc_split, as ZfsModel.warm_arc)
        self.cache_disk: Profile = hw.cache_device or hw.disk
        self.cache_names = [d for v in layout.of_class("cache") for d in v.devices]
        self.l2_hit = 0.0
        if self.cache_names and cached and self.random:
            space = support_vdev_space(self.cache_disk.size_bytes)
            l2_records = len(self.cache_names) * space // self.psize
            arc_records, self.l2_hit = l2arc_split(
                arc_records, self.total_records, l2_records, pool.cache_fill, self.rs
            )
        self.hit = min(1.0, arc_records / self.total_records) if cached else 0.0
        # P(a read hit needs its record decompressed into a new buffer): an ARC hit outside
        # the dbuf cache, which holds D of the ARC's records (ZfsModel.warm_arc, _expand)
        dbuf_records = dbuf_cache_bytes(hw.ram, self.version) // self.rs
        dbuf = dbuf_share_of_hits(dbuf_records, arc_records, self.total_records)
        self.hit_expand = self.hit * (1.0 - dbuf)
        self._place_files(pool)
        names = [d for v in layout.data_vdevs for d in v.devices]
        self.paths = bus_stages(simpy.Environment(), sc.hardware, names, self.disk)
        # special vdevs (on their own profile, as the DES builds them) take the metadata:
        # spa_preferred_class() sends indirect blocks to the special class (validity()
        # admits pools whose data blocks stay on the data vdevs)
        self.special_disk: Profile = hw.special_device or hw.disk
        specials = layout.of_class("special")
        special_space = support_vdev_space(self.special_disk.size_bytes)
        self.special_tops = [
            TopVdev(
                v,
                cast(list[LeafQueue], [None] * len(v.devices)),
                pool.ashift,
                special_space,
                self.special_disk.kind == "hdd",
            )
            for v in specials
        ]
        # the cache devices' own links (not behind the HBA, as the DES builds them)
        self.cache_paths = bus_stages(
            simpy.Environment(), sc.hardware, self.cache_names, self.cache_disk, behind_hba=False
        )

    # ---- where the files sit (as ZfsModel.place_files: just below the fill line)
    def _place_files(self, pool: Pool) -> None:
        fill = pool.fill
        if pool.allocated is not None:
            fill = pool.allocated / sum(v.space for v in self.vdevs)
        fill = min(0.95, max(0.0, fill))
        sector = 1 << pool.ashift
        for v in self.vdevs:
            share = self.total_records * v.weight * v.asize
            start = max(0.0, v.space * fill - share)
            if v.top.born:  # files laid out before an attach: their birth width's records
                v.read_width = v.top.width_at(int(start) // sector * sector)
                v.read_asize = v.top.asize_at(v.read_width, self.psize)
                share = self.total_records * v.weight * v.read_asize
                start = max(0.0, v.space * fill - share)
            v.lo = start / v.space
            v.hi = min(1.0, (start + max(share, 1)) / v.space)

    # ---- the bus: links, expander, HBA (the DES's own stages, rates only)
    def _bus_bound(
        self, leaf_load: dict[str, tuple[float, float]], paths: dict[str, Any] | None = None
    ) -> tuple[float, str]:
        """Calls/s the bus stages allow, and the busiest stage's name. ``leaf_load``: per
        device, (bytes, I/Os) per call; ``paths``: the devices' paths (default the data
        disks')."""
        stages: dict[int, Any] = {}
        load: dict[int, list[float]] = {}
        for name, path in (self.paths if paths is None else paths).items():
            nbytes, ios = leaf_load.get(name, (0.0, 0.0))
            for stage in path.stages:
                stages[id(stage)] = stage
                acc = load.setdefault(id(stage), [0.0, 0.0])
                acc[0] += nbytes
                acc[1] += ios
        best, name = math.inf, ""
        for key, (nbytes, ios) in load.items():
            st = stages[key]
            seconds = nbytes / st.rate + ios * st.per_io
            if seconds > 0 and 1.0 / seconds < best:
                best, name = 1.0 / seconds, st.name
        return best, name
