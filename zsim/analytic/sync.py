"""Sync writes in the analytic engine: O_SYNC calls (fio ``sync=1``) and ``sync=always``
committed through the ZFS Intent Log, on a SLOG or on the pool's own vdevs.

The same mechanisms as the discrete-event engine's :mod:`zsim.des.zil` (OpenZFS
``module/zfs/zil.c``, ``zfs_log.c``), as formulas:

* **A job's cycle.** Each of the ``numjobs`` jobs makes one call at a time (buffered I/O):
  the call's CPU ``Z`` (syscall, copy into the ARC buffer; :mod:`zsim.machine.costs`), then
  ``zil_commit()``, which returns once its log block (lwb) and every earlier one are on
  stable storage. Little's law over the closed loop: X = N / (Z + W + L), with ``W`` the
  commit's wait for its lwb to be issued and ``L`` the lwb's time from issue to stable.
* **Commit batching** (``zil_commit_waiter_timeout()``): a commit that finds no lwb open
  opens one and issues it after ``zfs_commit_timeout_pct`` (5 %; 10 % from 2.2.4) of the last
  lwb's latency, W = pct · L — at once when no other commit is waiting (2.2+, the
  single-threaded case; probability :func:`lone_probability`). Commits released together
  (one lwb's waiters) come back together after their calls' CPU and share the next lwb:
  the jobs move in chains. Before 2.2 chains only merge (an open lwb takes every commit that
  comes), so all N share each lwb; from 2.2 a chain whose commits find nobody waiting sends
  its first alone, which keeps two chains alternating: N/2 commits per lwb
  (:func:`commits_per_lwb`). An lwb holds at most ``zil_maxblocksize`` (128 KiB with its
  184 B ``zil_chain_t``); one that fills is issued at once (:func:`lwb_plan`).
* **Log records** (``zfs_log_write()``; ``zil_write_state()`` from 2.4): ``WR_COPIED``
  (192 B ``lr_write_t`` plus the data) on a SLOG or below ``zfs_immediate_write_sz``
  (32 KiB); else ``WR_INDIRECT``: ``dmu_sync()`` writes the record to its final place when
  the commit places it (at sync-write priority) and the log holds its block pointer —
  the DES's own rule, :func:`zsim.des.zil.is_indirect`.
* **The log write** (``zil_lwb_write_issue()``, ``zil_lwb_flush_vdevs_done()``): the lwb's
  checksum on a CPU, then its write — to a log vdev (in turn) with a cache flush (FUA) on
  each child, or without a SLOG to a data vdev (in turn) followed by a cache flush of every
  leaf of each data vdev the lwb and its indirect records touched. A flash leaf is
  ``parallelism`` units; each I/O holds one for the drive model's own service time
  (:func:`zsim.hardware.flash.service_time`, which slows with the units busy: bandwidth
  and IOPS are shared) plus the flush time it carries (``flush_latency``: 0 with
  power-loss protection, 1 ms without), as ``Device._start`` does. Units busy come from
  every stream the leaf serves — log writes, flushes, indirect records and the txg's
  aggregated write-back — by Little's law (:func:`leaf_state`); the wait for a unit is
  M/M/c's (Erlang C). Bus stages the devices can fill add their transfer time.
* **The txg write-back** of the same data (and their indirect blocks) still runs: the
  buffered-write bounds of :mod:`zsim.analytic.writes` (the vdevs, cores, memory bus, bus)
  cap the rate; where they bind, the write throttle would delay the sync writers, which
  this engine declines (:class:`~zsim.analytic.validity.OutOfRange`).

Validity (:mod:`zsim.analytic.sync_range`): flash devices on the log path (the log vdevs,
or the data vdevs without a SLOG); an HDD's mechanics under a flush (destaging its whole
write cache, a rotation per log block) are DES-only. HDD data vdevs behind a flash SLOG
are in range: they only see the txg's write-back. ``fsync=N`` is DES-only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import simpy

from zsim.analytic import devices
from zsim.analytic.demands import ASYNC_WRITE_MAX
from zsim.analytic.validity import OutOfRange
from zsim.analytic.writes import WriteModel, run_leaf_bytes
from zsim.analytic.zil_parts import (
    LeafLoad,
    LeafState,
    LwbPlan,
    burst_stall,
    busiest_vdev_records,
    commits_per_lwb,
    flash_hold,
    itx_log_bytes,
    leaf_state,
    lone_probability,
    lwb_plan,
    mixture_percentiles,
    rotor_aliquot,
)
from zsim.des.vdev import TopVdev, aggregation_limit
from zsim.hardware import flash
from zsim.hardware.catalog import Profile
from zsim.layout.alloc import support_vdev_space
from zsim.layout.tree import ZfsLayout
from zsim.machine.links import bus_stages
from zsim.result import DirectionStats
from zsim.zfs.indirect import indirect_block
from zsim.zfs.txg import async_write_max_active, txg_tunables
from zsim.zfs.zil import commit_timeout_pct, is_indirect

#: the fixed point X = N / (Z + W + L(X)) is solved by damped iteration to this change
TOLERANCE = 1e-4
MAX_ITERATIONS = 80  # with halving steps, x has settled within the jumps by then
#: without a SLOG, the largest share of time the log devices may spend in a txg's write-back
#: burst: the model takes each commit to meet a burst or none, not a backlog of them
MAX_TXG_SHARE = 0.5
#: the busiest a log-path leaf may be: near saturation its queue is no longer the few
#: commit chains' work this engine bounds it by
MAX_LOG_BUSY = 0.95


@dataclass(frozen=True)
class SyncSolution:
    """The solved sync-write job: calls/s and the parts of a call's time, s."""

    rate: float
    think: float  # a job's CPU between two commits (its calls')
    call_cpu: float  # one call's own CPU
    burst: float  # a txg's burst of taskq CPU work, s (lwb checksums queue behind it)
    txg_period: float  # s between txg syncs
    wait: float  # mean wait of a commit for its lwb's issue (the batching timeout)
    lwb_time: float  # lwb issue → stable (checksum, bus, unit wait, write, flushes), mean
    lwb_quiet: float  # the same outside a txg's write-back burst on the log devices
    lwb_burst: float  # the same during one
    write_back_share: float  # share of time commits meet a write-back burst on the log devices
    crowded: bool  # such a burst leaves a single unit free: no percentiles
    commits_per_lwb: float
    lwb_bytes: int
    indirect: bool
    util: dict[str, float]
    bounds: dict[str, float]


def sync_limit(util: dict[str, float], commits_hold: bool, call_cpu: float, threads: int) -> str:
    """The DES's ``limit`` of a sync-write job (``Engine._limit``): the memory bus when ≥ 85 %
    busy, else the busiest resource at ≥ 85 %, else ``zil`` when the commits hold most of
    the write latency (with iodepth > 1 that includes the calls queued behind the one
    committing), else the calls' CPU (``call_cpu`` core-s per s) at 85 % of the
    ``threads`` that can run them, else ``client``."""
    name, busiest = max(util.items(), key=lambda kv: kv[1], default=("", 0.0))
    if util.get("memory", 0.0) >= 0.85:
        return "memory"
    if busiest >= 0.85:
        return name
    if commits_hold:
        return "zil"
    if call_cpu >= 0.85 * threads:
        return "cpu"
    return "client"


class SyncModel(WriteModel):
    """A sync-write job's rate and latency (see the module docstring)."""

    def _sync_setup(self) -> None:
        sc = self.sc
        hw, pool = sc.hardware, sc.pool
        layout = sc.layout_tree()
        assert isinstance(layout, ZfsLayout), "validity() admits ZFS pools only"
        logs = layout.of_class("log")
        self.slog = bool(logs)
        self.log_disk: Profile = (hw.log_device or hw.disk) if logs else hw.disk
        # HDD data vdevs without a SLOG take their commits from log tables
        # (zsim.analytic.sync_hdd); the rest of this model is the flash log path's
        self.hdd_log = self.log_disk.kind == "hdd"
        if not self.hdd_log:
            self.flash = flash.flash_params(self.log_disk)
        if logs:
            # a log vdev's allocatable space, as Engine._support_vdevs gives it
            space = support_vdev_space(self.log_disk.size_bytes)
            self.log_tops = [
                TopVdev(v, [None] * len(v.devices), pool.ashift, space, False)  # type: ignore[list-item]
                for v in logs
            ]
            names = [d for v in logs for d in v.devices]
            env = simpy.Environment()
            self.log_paths = bus_stages(env, hw, names, self.log_disk, behind_hba=False)
        else:
            self.log_tops = [v.top for v in self.vdevs]
            self.log_paths = self.paths
        self.pct = commit_timeout_pct(self.version)
        self.lone_split = self.version.at_least(2, 2)
        self.indirect = is_indirect(
            self.rs,
            self.rs,
            has_slog=self.slog,
            logbias=pool.logbias,
            direct=self.direct,
            commit_now=self.sc.workload.sync or pool.sync == "always",
            version=self.version,
        )
        self.itx_bytes = itx_log_bytes(self.rs, self.indirect)
        self.itxs_per_call = max(1.0, self.bs / self.rs)
        # fio fsync=N (without O_SYNC): N buffered calls, then a commit of the job's own
        # log records (``Engine._log_and_commit``); O_SYNC commits every call
        w = self.sc.workload
        o_sync = w.sync or pool.sync == "always"
        self.per_commit = 1 if o_sync or not w.fsync else int(w.fsync)
        self.itxs_per_commit = self.per_commit * self.itxs_per_call
        self.sector = 1 << pool.ashift

    # ---- what each leaf serves
    def _columns(self, top: TopVdev, nbytes: int) -> tuple[list[tuple[int, int]], float]:
        """(leaf, bytes) a write of ``nbytes`` (rounded to sectors) puts on ``top``'s leaves,
        averaged over where it starts (raidz columns rotate with the offset: a small
        block's land on some of the leaves), and the share of those leaves one write
        touches. Cached per model."""
        cache: dict[tuple[int, int], tuple[list[tuple[int, int]], float]]
        cache = self.__dict__.setdefault("_cols", {})
        key = (id(top), nbytes)
        found = cache.get(key)
        if found is not None:
            return found
        size = -(-nbytes // self.sector) * self.sector
        width = len(top.vdev.devices)
        ios = [(leaf, n) for leaf, _, n in top.leaf_ios(0, size, True) if n]
        if top.vdev.kind in ("raidz", "draid") and ios:
            cols = [(leaf, max(n for _, n in ios)) for leaf in range(width)]
        else:
            cols = ios
        found = cache[key] = (cols, len(ios) / len(cols) if cols else 0.0)
        return found

    def _txg_records(self, x: float) -> tuple[float, float]:
        """(records per txg, s between syncs) at ``x`` calls/s: a txg syncs when its dirty
        records reach ``zfs_dirty_data_sync`` (20 % of ``zfs_dirty_data_max``) or at
        ``zfs_txg_timeout`` (``ZfsModel._admit``, ``_timer``)."""
        txg = txg_tunables(self.sc.hardware.ram, self.version)
        record_rate = x * self.itxs_per_call
        if record_rate <= 0:
            return 1.0, txg.txg_timeout
        period = min(txg.txg_timeout, txg.sync_bytes / (record_rate * self.rs))
        return max(1.0, record_rate * period), period

    def _txg_leaf_bytes(self, x: float) -> list[tuple[float, int]]:
        """Per data vdev: (bytes/s the txg's write-back puts on each of its leaves, the size
        of its aggregated data writes). Records dmu_sync wrote are not written again; their
        indirect blocks are (:meth:`WriteModel._metadata_per_record`, for txgs of the
        records the sync writers dirty between syncs)."""
        return [(data + meta, nbytes) for data, nbytes, meta, _ in self._txg_streams(x)]

    def _txg_streams(self, x: float) -> list[tuple[float, int, float, int]]:
        """Per data vdev, per leaf: (data bytes/s, bytes per aggregated data write, indirect
        block bytes/s, bytes per indirect block write). ``ZfsModel`` writes a txg's records
        in aggregated runs and each indirect block copy alone (``_write_meta``), a level-1
        block being :func:`zsim.zfs.indirect.indirect_block`'s size."""
        meta = self._metadata_per_record(per_txg=self._txg_records(x)[0])
        out = []
        for i, (v, (data, leaves, nbytes, meta_io)) in enumerate(
            zip(self.vdevs, self._vdev_shapes(), strict=True)
        ):
            records = x * self.itxs_per_call * v.weight
            meta_leaf = meta["asize"][i] * v.leaf_fan(self.psize)  # mirrors: on every child
            out.append((records * data / leaves, nbytes, records * meta_leaf / leaves,
                        meta_io))  # fmt: skip
        return out

    def _vdev_shapes(self) -> list[tuple[float, int, int, int]]:
        """Per data vdev, once per model: (bytes a record's txg write puts on its leaves —
        none for records dmu_sync wrote —, leaves, bytes of an aggregated data write, of a
        leaf's write of a level-1 indirect block: its largest column)."""
        found: list[tuple[float, int, int, int]] | None = self.__dict__.get("_shapes")
        if found is not None:
            return found
        agg = aggregation_limit(self.rotating, self.version)
        pool = self.sc.pool
        block = indirect_block(1, self.file_records, pool.ashift, pool.redundant_metadata)[0]
        found = []
        for v in self.vdevs:
            ios = v.top.leaf_ios(0, self.psize, True)
            data = 0.0 if self.indirect else float(sum(io[2] for io in ios))
            meta_io = max(n for _, _, n in v.top.leaf_ios(0, block, True))
            found.append((data, len(v.top.vdev.devices), self._run_bytes(v.top, v.asize, agg),
                          meta_io))  # fmt: skip
        self.__dict__["_shapes"] = found
        return found

    def _run_bytes(self, top: TopVdev, asize: int, agg: int) -> int:
        """:func:`run_leaf_bytes` for a data vdev, computed once per model."""
        cache: dict[tuple[int, int], int] = self.__dict__.setdefault("_runs", {})
        key = (id(top), agg)
        if key not in cache:
            cache[key] = run_leaf_bytes(top, self.psize, asize, agg)
        return cache[key]

    def _chains(self) -> int:
        """Commit chains with a batch in flight at once (:func:`commits_per_lwb`)."""
        return 1 if self.njobs <= 1 or not self.lone_split else 2

    def _leaf_loads(
        self, x: float, batch: float, plan: LwbPlan
    ) -> dict[tuple[int, int], list[LeafLoad]]:
        """Every log-path leaf's streams, keyed (top index, leaf), in a fixed order: full
        lwbs, the last lwb, bare flushes, indirect records, then the txg's write-back.
        Consecutive lwbs go to the tops in turn (``zil_lwb_write_issue``'s rotor); a
        batch's indirect records stay on one data vdev (the allocation rotor's aliquot)."""
        batches = x / self.per_commit / batch  # per s; each writes plan.lwbs lwbs
        tops = self.log_tops
        per_top = batches / len(tops)
        lwbs_here = max(1.0, plan.lwbs / len(tops))  # a batch's lwbs on one top
        empty = LeafLoad(0.0, 0, False)
        loads: dict[tuple[int, int], list[LeafLoad]] = {}
        for t, top in enumerate(tops):
            width = len(top.vdev.devices)
            for leaf in range(width):
                loads[t, leaf] = [empty] * 4
            for kind, count, nbytes in (
                (0, plan.lwbs - 1, plan.full_bytes),
                (1, 1, plan.last_bytes),
            ):
                if count <= 0:
                    continue
                cols, share = self._columns(top, nbytes)
                for leaf, n in cols:
                    rate = per_top * count * share
                    loads[t, leaf][kind] = LeafLoad(rate, n, self.slog, lwbs_here * share)
            if not self.slog:
                # a bare flush of every leaf of each data vdev an lwb touched: its own (in
                # turn) and, WR_INDIRECT, the one its records went to, another vdev with
                # probability 1 − 1/V
                touched = 1.0 + ((1.0 - 1.0 / len(tops)) if self.indirect else 0.0)
                for leaf in range(width):
                    loads[t, leaf][2] = LeafLoad(per_top * plan.lwbs * touched, 0, True)
        if self.indirect and not self.slog:
            # a batch's records, on the vdevs the rotor gives them: the busiest's share
            records = batch * self.itxs_per_commit
            if len(self.vdevs) > 1:
                top = self.vdevs[0].top
                aliquot = rotor_aliquot(
                    self.lone_split, self.version.at_least(2, 4), top.data_disks, top.vdev.width
                )
                records = busiest_vdev_records(records, max(1, aliquot // self.vdevs[0].asize))
            for t, v in enumerate(self.vdevs):
                ios = [n for _, _, n in v.top.leaf_ios(0, self.psize, True) if n]
                width = len(v.top.vdev.devices)
                spread = len(ios) / width if v.top.vdev.kind in ("raidz", "draid") else 1.0
                rate = x * self.itxs_per_call * v.weight * spread
                for leaf in range(width):
                    loads[t, leaf][3] = LeafLoad(rate, max(ios), False, records * spread)
        return loads

    def _write_back(self, x: float) -> list[tuple[float, float, float]]:
        """Per log-path top without a SLOG: (share of time its leaves spend in a txg's
        write-back burst, units the burst holds, the write-back's bytes/s per leaf). A
        sync writes the txg's records and indirect blocks in aggregated writes at
        ``zfs_vdev_async_write_max_active`` per leaf for the dirty data the txg holds
        (:func:`zsim.zfs.txg.async_write_max_active`: 2 below 30 % of
        ``zfs_dirty_data_max``), each held as the drive model gives at that many busy; the
        burst lasts its bytes over that rate."""
        if self.slog:
            return [(0.0, 0.0, 0.0)] * len(self.log_tops)
        txg = txg_tunables(self.sc.hardware.ram, self.version)
        records, _ = self._txg_records(x)
        active = async_write_max_active(int(records * self.rs), txg)
        held = float(min(self.flash.parallelism, active))
        out = []
        for data, nbytes, meta, meta_io in self._txg_streams(x):
            # unit-seconds per s the burst's writes take, over the units it holds
            busy = data / nbytes * flash_hold(self.flash, nbytes, False, held)
            busy += meta / meta_io * flash_hold(self.flash, meta_io, False, held)
            out.append((busy / held if held else 0.0, held, data + meta))
        return out

    def _bus_time(self, nbytes: int) -> float:
        """Transfer time of one log write through the bus stages the devices can fill, s
        (passive stages overlap the device's own time)."""
        worst = 0.0
        for path in self.log_paths.values():
            t = sum(st.per_io + nbytes / st.rate for st in path.stages if not st.passive)
            worst = max(worst, t)
        return worst

    def _lwb_time(
        self, x: float, batch: float, plan: LwbPlan, wait: float, held: list[float]
    ) -> tuple[float, dict[tuple[int, int], LeafState]]:
        """An lwb's time from issue to stable storage, s, and each log-path leaf's state.
        The slowest leaf of the (symmetric) tops sets it: checksum, bus, the wait for a
        unit, the write (with its flush on a SLOG); without a SLOG then the bare flushes,
        and the indirect records (issued ``wait`` s before the lwb) must be written too.
        ``held``: per top, units of each leaf a txg's write-back burst holds (0: none)."""
        c = self.costs
        chains = self._chains()
        # a top's leaves carry the same streams (``_leaf_loads``), and identical tops the
        # same: each distinct one is solved once
        solved: dict[tuple, LeafState] = {}
        states = {}
        loads = self._leaf_loads(x, batch, plan)
        for key in loads:
            first = loads[key[0], 0]
            sig = (tuple(first), held[key[0]])
            if sig not in solved:
                solved[sig] = leaf_state(self.flash, first, chains, held[key[0]])
            states[key] = solved[sig]
        worst = 0.0
        for st in states.values():
            write = max(st.done[1], st.done[0] if plan.lwbs > 1 else 0.0)
            if write <= 0.0:
                continue
            path = write
            if not self.slog:
                if self.indirect:
                    path = max(path, st.done[3] - wait)
                path += st.done[2]
            worst = max(worst, path)
        cpu = c.zio + plan.last_bytes * c.checksum_per_byte
        return cpu + self._bus_time(plan.last_bytes) + worst, states

    def _txg_burst(self, x: float) -> tuple[float, float]:
        """(a txg's taskq CPU burst, s; s between syncs) at ``x`` calls/s. A txg syncs when
        its dirty records reach ``zfs_dirty_data_sync`` (20 % of ``zfs_dirty_data_max``) or
        at ``zfs_txg_timeout``; its CPU work — each record's checksum, compression and
        write (not the records dmu_sync already wrote) and the indirect blocks its records
        dirty (:meth:`WriteModel._metadata_per_record` for a txg of that many records) — is
        served by the taskq threads (80 % of the cores) in parallel."""
        records, period = self._txg_records(x)
        c = self.costs
        parity = any(v.top.vdev.kind in ("raidz", "draid") for v in self.vdevs)
        children = max(len(v.top.leaf_ios(0, self.psize, True)) for v in self.vdevs)
        cpu = self._metadata_per_record(per_txg=records)["cpu"]
        if not self.indirect:
            cpu += c.write_record(self.rs, self.psize, parity) + children * c.leaf_io
        return records * cpu / self.taskq, period

    def _data_disk_util(self, x: float) -> dict[str, float]:
        """Busy share of each data disk behind a SLOG: the txg's write-back bytes over what
        the leaf writes per second in the aggregated sequential writes the DES issues at
        ``zfs_vdev_async_write_max_active`` (as :meth:`WriteModel._write`)."""
        util: dict[str, float] = {}
        for v, (leaf_bytes, nbytes) in zip(self.vdevs, self._txg_leaf_bytes(x), strict=True):
            table = devices.device_table(self.disk, nbytes, True, True, v.lo, v.hi, ASYNC_WRITE_MAX)
            share = leaf_bytes / (nbytes * table.at(ASYNC_WRITE_MAX))
            for name in v.top.vdev.devices:
                util[f"disk:{name}"] = share
        return util

    def _sync_checks(
        self,
        x: float,
        bounds: dict[str, float],
        states: dict[tuple[int, int], LeafState],
        burst: float,
        period: float,
    ) -> dict[str, float]:
        """The busy shares as the DES reports them, after checking the steady state this
        model assumes: the txg's write-back keeps up (the data disks, the cores, memory and
        bus; else the write throttle delays the writers) and, without a SLOG, its traffic is
        a small share of the devices the log writes share (its bursts are taken at their
        mean)."""
        host = {k: v for k, v in bounds.items() if not k.startswith("vdev") and k != "client"}
        util = {k: min(1.0, x / b) for k, b in host.items()}
        write_back = self._write_back(x)
        units = self.flash.parallelism
        for (t, leaf), st in states.items():
            share, held, leaf_bytes = write_back[t]
            busy = st.util + max(share * held / units, leaf_bytes / self.flash.write_bw)
            util[f"disk:{self.log_tops[t].vdev.devices[leaf]}"] = min(1.0, busy)
        if self.slog:
            util.update(self._data_disk_util(x))
        txg_share = max(share for share, _, _ in write_back)
        reason = None
        name, busiest = max(util.items(), key=lambda kv: kv[1])
        log_busy = max(util[f"disk:{self.log_tops[t].vdev.devices[leaf]}"] for t, leaf in states)
        if busiest >= 1.0 - 1e-9 or any(x >= b for b in host.values()):
            reason = f"the txg write-back cannot keep up with the sync writes ({name})"
        elif log_busy >= MAX_LOG_BUSY:
            reason = (
                f"the log devices would be {log_busy:.0%} busy (over {MAX_LOG_BUSY:.0%}): "
                f"their queue, which this engine bounds by the commit chains' work, then sets "
                f"the rate"
            )
        elif burst >= period:
            reason = "the taskq threads cannot finish one txg's CPU work before the next"
        elif txg_share > MAX_TXG_SHARE:
            reason = (
                f"the txg write-back keeps the log devices in its bursts {txg_share:.0%} of "
                f"the time (over {MAX_TXG_SHARE:.0%}): the bursts' backlog, which this "
                f"engine does not queue, then delays the log writes"
            )
        if reason is not None:
            raise OutOfRange(
                f"outside the analytic engine's validity range: {reason} (modelled by the "
                f"DES only); use --engine des"
            )
        return util

    def call_cpu(self) -> float:
        """One call's CPU, s: the syscall and the copy into the ARC buffer."""
        c = self.costs
        return c.syscall + self.bs * (c.copy_per_byte + c.cache_pages_per_byte)

    # ---- the solution
    def _sync(self) -> SyncSolution:
        c = self.costs
        n = self.njobs
        call_cpu = self.call_cpu()
        think = self.per_commit * call_cpu  # a job's CPU between its commits
        per = self.per_commit
        # the txg write-back's bounds (the clients' own is this model's)
        _, txg_bounds = self._write_bounds(None)
        txg_bounds.pop("client", None)
        batch = commits_per_lwb(n, self.lone_split)
        plan = lwb_plan(batch * self.itxs_per_commit, self.itx_bytes)
        x = n * per / (think + 1e-3)
        wait = lwb_time = lwb_burst = burst = period = share_in = 0.0
        states: dict[tuple[int, int], LeafState] = {}
        step, last_step = 0.5, 0.0
        for _ in range(MAX_ITERATIONS):
            write_back = self._write_back(x)
            quiet, states = self._lwb_time(x, batch, plan, wait, [0.0] * len(write_back))
            share = max(f for f, _, _ in write_back)
            held = [h for _, h, _ in write_back]
            lwb_burst = self._lwb_time(x, batch, plan, wait, held)[0] if share else quiet
            burst, period = self._txg_burst(x)
            # the write-back's I/O leaves as the taskqs finish its blocks' CPU, so its
            # first `burst` s overlap the CPU burst, when the lwbs wait in that same queue
            # and meet none of it: the commits see only what outlasts the CPU burst
            share_in = min(1.0, max(0.0, share * period - burst) / period)
            # the time's share in a write-back burst, as a share of the commits
            calls_q, calls_b = (1 - share_in) / quiet, share_in / lwb_burst
            lwb_time = (calls_q * quiet + calls_b * lwb_burst) / (calls_q + calls_b)
            lone = lone_probability(n, think, wait + lwb_time, self.lone_split)
            wait = (1.0 - lone) * self.pct / 100 * lwb_time
            cycle = think + wait + lwb_time
            stall = burst_stall(burst, cycle)
            if burst > cycle:
                # the lwbs caught in the burst finish with its latency, which the next
                # commit timeout is a share of (``zil_commit_waiter_timeout``): one
                # inflated timeout per job after each burst
                stall += (1.0 - lone) * self.pct / 100 * burst
            rate = (1 - share_in) / (think + wait + quiet) + share_in / (think + wait + lwb_burst)
            new_x = n * per * rate * max(0.0, 1.0 - stall / period)
            # damped steps, halved whenever the step turns back: the map has small jumps
            # (whole I/Os in a batch, whole units held), across which it settles between
            change = step * abs(new_x - x) / x
            if (new_x - x) * last_step < 0:
                step = max(0.01, step / 2)
            last_step = new_x - x
            x += step * (new_x - x)
            if change < TOLERANCE:
                break
        most = max((h for f, h, _ in self._write_back(x) if f > 0), default=0.0)
        # a write-back burst that leaves one unit of the log devices free: a commit's time
        # then depends on how the burst's short writes and the log's interleave
        crowded = share_in > 0 and self.flash.parallelism - int(most) <= 1
        util = self._sync_checks(x, txg_bounds, states, burst, period)
        lwb_cpu = (c.zio + plan.last_bytes * c.checksum_per_byte) * plan.lwbs / batch
        cpu = x * (call_cpu + lwb_cpu / per)
        util["cpu"] = max(util.get("cpu", 0.0), min(1.0, cpu / self.cores))
        return SyncSolution(
            rate=x,
            think=think,
            call_cpu=call_cpu,
            burst=burst,
            txg_period=period,
            wait=wait,
            lwb_time=lwb_time,
            lwb_quiet=quiet,
            lwb_burst=lwb_burst,
            write_back_share=share_in,
            crowded=crowded,
            commits_per_lwb=batch,
            lwb_bytes=plan.last_bytes,
            indirect=self.indirect,
            util=util,
            bounds=txg_bounds,
        )

    def solve_sync(self) -> tuple[DirectionStats, str, dict[str, float], dict]:
        """The job's write direction, ``limit``, utilisations and details."""
        self._sync_setup()
        assert not self.hdd_log, "HDD data vdevs without a SLOG: zsim.analytic.sync_hdd"
        s = self._sync()
        per = self.per_commit
        cycle = self.njobs * per / s.rate  # a job's time between commits (stalls included)
        # a commit's mean time: all of the cycle but the calls' CPU (an lwb's wait behind
        # a txg's CPU burst included)
        commit = cycle - s.think
        # fio's latencies (Little's law over the calls it counts): with fsync=N a call is
        # done before the commit (``Engine._log_and_commit``), so the commit's time counts
        # only for the calls queued behind it (iodepth > 1)
        mean = (self.slots * cycle - (commit if per > 1 else 0.0)) / per
        p50: float | None = None
        p99: float | None = None
        if self.slots == 1 and per == 1 and not s.crowded:
            p50, p99 = self._sync_percentiles(s)
        elif per > 1 and self.slots == 1 and self.njobs <= self.cores - self.taskq:
            # fsync=N: a call is its own CPU, on a core the taskq threads always leave
            p50 = p99 = s.call_cpu
        write = DirectionStats(
            bytes_per_s=s.rate * self.bs,
            iops=s.rate,
            latency_mean=mean,
            latency_p50=p50,
            latency_p99=p99,
        )
        details = {
            "clients": self.clients,
            "validity": "in range",
            "zil_commits_per_lwb": s.commits_per_lwb,
            "zil_lwb_bytes": s.lwb_bytes,
            "zil_indirect": s.indirect,
            "zil_commit_mean_s": commit,
            "zil_lwb_latency_s": s.lwb_time,
            "slog": self.slog,
            "call_cycle_s": cycle,
            **{f"bound_{k}_calls_per_s": v for k, v in s.bounds.items()},
        }
        limit = sync_limit(s.util, commit > 0.5 * per * mean, s.call_cpu * s.rate,
                           min(self.clients, self.cores))  # fmt: skip
        return write, limit, s.util, details

    def _sync_percentiles(self, s: SyncSolution) -> tuple[float, float]:
        """p50 and p99 of a call's latency (one call per job at a time), from the mixture of
        what a call meets: its CPU; the wait for its lwb's issue (none for a lone commit,
        else the timeout); the lwb's time outside or inside a txg's write-back burst (the
        drive model's service is deterministic at a given load), in proportion to the
        calls made in each; and, for the one call per job a txg's CPU burst catches, the
        rest of that burst (:func:`burst_stall`'s wait, spread evenly)."""
        lone = lone_probability(self.njobs, s.think, s.wait + s.lwb_time, self.lone_split)
        timeout = self.pct / 100 * s.lwb_time
        share = min(1.0, s.write_back_share)
        values: list[float] = []
        weights: list[float] = []
        for lwb, time_share in ((s.lwb_quiet, 1.0 - share), (s.lwb_burst, share)):
            cycle = s.think + s.wait + lwb
            for extra, p in ((0.0, lone), (timeout, 1.0 - lone)):
                values.append(s.think + extra + lwb)
                weights.append(time_share / cycle * p)
        total = sum(weights)
        weights = [w / total for w in weights]
        cycle = s.think + s.wait + s.lwb_time
        if s.burst > 0 and s.rate > 0:
            # each job's call caught by a txg's CPU burst waits for the rest of it
            caught = min(1.0, self.njobs / (s.rate * s.txg_period)) * min(1.0, s.burst / cycle)
            low = max(0.0, s.burst - cycle)
            points = np.linspace(low, s.burst, 16)
            weights = [w * (1.0 - caught) for w in weights]
            values.extend(cycle + float(d) for d in points)
            weights.extend([caught / len(points)] * len(points))
        return mixture_percentiles(values, weights)
