"""The scenario dataclasses: :class:`Hardware`, :class:`Pool`, :class:`Workload`, the optional
:class:`ResilverSpec` and :class:`DurabilitySpec` tables, and :class:`Scenario`, which holds them.

Every dataclass is frozen and checks itself in ``__post_init__`` (:mod:`zsim.scenario.checks`);
quantities are in SI base units.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from zsim.capacity import CapacityReport, capacity
from zsim.errors import ZsimError
from zsim.hardware.catalog import DEVICE_KINDS, Profile
from zsim.layout.grammar import parse_layout
from zsim.layout.tree import Layout, VdevClass
from zsim.scenario.checks import (
    POOL_ENUMS,
    both_fill_and_allocated,
    check_block,
    check_compression,
    check_dd,
    check_enum,
    check_failed,
    check_features,
    check_fill_at_attach,
    check_fio,
    check_foreign_defaults,
    check_profile,
    check_ram,
    check_real,
    check_required,
    check_size,
    check_trace,
    check_whole,
    layout_of,
)
from zsim.scenario.keys import (
    FAILURE_DISTRIBUTIONS,
    PROFILE_KEYS,
    RESILVER_METHODS,
    RW_ALIASES,
    SPARE_KINDS,
    TOOLS,
    WRITTEN_PATTERNS,
    ScenarioError,
    bad_value,
    scenario_toml_value,
    show_value,
)
from zsim.scenario.toml_write import changed_items, hardware_items, pool_items, workload_items
from zsim.toml_text import toml_key
from zsim.units import GiB, KiB, parse_ashift
from zsim.zfs.expansion import ExpansionStep, born_regions
from zsim.zfs.version import CURRENT, ZfsVersion, parse_zfs_version

# ---------------------------------------------------------------- the dataclasses


@dataclass(frozen=True)
class Hardware:
    """The machine: devices, HBA, memory, CPU and the OpenZFS release.

    Attributes (unit; default):
        disk: profile of the pool's data disks (required; TOML: a catalog name, a path to a
            profile TOML, relative to the scenario file, or an inline table).
        disk_spec: what ``disk`` was given as: the catalog name, the resolved path, or
            ``"inline"`` (required).
        log_device: profile for ``log`` vdevs (default ``None``: the disk profile is used).
        cache_device: profile for ``cache`` vdevs (default ``None``: the disk profile).
        special_device: profile for ``special`` and ``dedup`` vdevs (default ``None``: the disk).
        hba: host bus adapter profile, kind ``"hba"`` (default ``None``: no HBA limit modelled).
        ram: memory, bytes (default 64 GiB; TOML ``"64GiB"``).
        cpu_cores: CPU cores (default 8).
        cpu_ghz: nominal clock, GHz (default 3.0).
        cpu_io_cost_scale: multiplier, above 0, of every per-call, per-record and per-I/O CPU
            cost (:func:`zsim.machine.costs.cpu_costs` ``io_scale``), calibrated for a host whose
            kernel or CPU differs from the model's reference (default 1.0: the sourced costs).
        cpu_byte_cost_scale: multiplier, above 0, of every per-byte CPU cost (copies,
            checksums, parity, compression; ``cpu_costs`` ``byte_scale``), calibrated likewise,
            e.g. for slower memory (default 1.0).
        zfs_version: OpenZFS release as given, e.g. ``"2.2"`` or ``"master"`` (default
            :data:`zsim.zfs.version.CURRENT`); checked with :func:`parse_zfs_version`.
        expander_bw: bytes/s shared by all disks behind one expander/backplane (default
            ``None``: no shared limit; TOML ``"2.4GB/s"``).
        disks_per_link: devices sharing one HBA lane (default 1, direct attach; 4 for a SATA
            port multiplier or an expander fan-out).
        memory_bandwidth: sustained host memory bandwidth shared by the cores' data passes
            and the devices' DMA, bytes/s (default ``None``:
            :data:`zsim.machine.memory.DEFAULT_MEMORY_BANDWIDTH`, 80 GB/s; TOML ``"136GB/s"``).
        log_device_spec, cache_device_spec, special_device_spec, hba_spec: what those
            profiles were given as, like ``disk_spec`` (default ``None``: not given).
    """

    disk: Profile
    disk_spec: str
    log_device: Profile | None = None
    cache_device: Profile | None = None
    special_device: Profile | None = None
    hba: Profile | None = None
    ram: int = 64 * GiB
    cpu_cores: int = 8
    cpu_ghz: float = 3.0
    zfs_version: str = CURRENT
    expander_bw: float | None = None
    disks_per_link: int = 1
    memory_bandwidth: float | None = None
    log_device_spec: str | None = None
    cache_device_spec: str | None = None
    special_device_spec: str | None = None
    hba_spec: str | None = None
    cpu_io_cost_scale: float = 1.0
    cpu_byte_cost_scale: float = 1.0

    def __post_init__(self) -> None:
        check_profile("disk", self.disk, DEVICE_KINDS)
        for key in ("log_device", "cache_device", "special_device"):
            if getattr(self, key) is not None:
                check_profile(key, getattr(self, key), DEVICE_KINDS)
        if self.hba is not None:
            check_profile("hba", self.hba, ("hba",))
        check_ram(self.ram)
        check_whole("hardware", "cpu_cores", self.cpu_cores, 1)
        check_real("hardware", "cpu_ghz", self.cpu_ghz, math.ulp(0))
        check_real("hardware", "cpu_io_cost_scale", self.cpu_io_cost_scale, math.ulp(0))
        check_real("hardware", "cpu_byte_cost_scale", self.cpu_byte_cost_scale, math.ulp(0))
        if not isinstance(self.zfs_version, str):
            raise bad_value("hardware", "zfs_version", self.zfs_version)
        try:
            parse_zfs_version(self.zfs_version)
        except ZsimError as err:
            raise ScenarioError(
                f"hardware.zfs_version = {show_value(self.zfs_version)}: {err}"
            ) from None
        if self.expander_bw is not None:
            check_real("hardware", "expander_bw", self.expander_bw, math.ulp(0))
        check_whole("hardware", "disks_per_link", self.disks_per_link, 1)
        if self.memory_bandwidth is not None:
            check_real("hardware", "memory_bandwidth", self.memory_bandwidth, math.ulp(0))

    @property
    def zfs(self) -> ZfsVersion:
        """The OpenZFS release as a comparable :class:`ZfsVersion`."""
        return parse_zfs_version(self.zfs_version)

    def device_for(self, vclass: VdevClass) -> Profile:
        """The profile of the devices in a vdev of class ``vclass``.

        ``log`` → ``log_device``, ``cache`` → ``cache_device``, ``special``/``dedup`` →
        ``special_device``; each falls back to ``disk`` when not given (as do ``normal`` and
        ``spare``).
        """
        chosen = {
            "log": self.log_device,
            "cache": self.cache_device,
            "special": self.special_device,
            "dedup": self.special_device,
        }.get(vclass)
        return chosen or self.disk


@dataclass(frozen=True)
class Pool:
    """The pool: its layout and the ZFS properties that matter for speed and space.

    Attributes (unit; default):
        layout: layout text, ``DESIGN.md`` §3 (required), e.g. ``"raidz2 8"``; checked with
            :func:`parse_layout`, kept as written.
        ashift: log2 of the allocation sector, 9…16 (default 12).
        recordsize: bytes, a power of two 512 B … 16 MiB (default 128 KiB).
        compression: off | lz4 | zstd | gzip | zle (default ``"off"``).
        compress_ratio: assumed logical ÷ physical size, ≥ 1 (default 1.0; must be 1.0
            when compression is off).
        checksum: fletcher4 | sha256 | sha512 | blake3 | skein | edonr | off
            (default ``"fletcher4"``).
        dedup: off | on (default ``"off"``).
        atime: on | off (default ``"on"``).
        xattr: sa | dir | on | off (default ``"sa"``).
        sync: standard | always | disabled (default ``"standard"``).
        logbias: latency | throughput (default ``"latency"``).
        primarycache: all | metadata | none (default ``"all"``).
        redundant_metadata: all | most | some | none, extra copies of metadata (default
            ``"all"``: indirect blocks are written twice; ``most`` and below write level-1
            indirect blocks once).
        direct: standard | always | disabled, the ``direct`` property of OpenZFS ≥ 2.3
            (default ``"standard"``).
        special_small_blocks: bytes; blocks up to this size go to special vdevs; 0 or a
            power of two 512 B … 16 MiB (default 0).
        cache_fill: fraction 0…1 of the ``cache`` (L2ARC) devices holding the workload's
            records when the run starts (default 1.0: warm, the steady state reached after
            the cache's size ÷ ``l2arc_write_max`` (8 MiB/s) of feeding).
        fill: fraction 0…1 of usable space allocated (default 0.5); ignored when
            ``allocated`` is given.
        allocated: bytes allocated, instead of ``fill`` (default ``None``); giving both is
            an error.
        fill_at_attach: for a layout with an expanded raidz vdev (``raidz2 6+2``), how full
            (a fraction 0…<1 of its allocatable space) each such vdev was before each of its
            attaches (default 0: expanded while empty, every block at the full width). The
            blocks written before an attach keep the width they were born at, and reads of
            them follow OpenZFS's expanded map (:func:`zsim.zfs.expansion.born_regions`);
            the same reading as ``zsim capacity --fill-at-attach``.
        written_between_attaches: with ``fill_at_attach``, whether the pool was that full
            before *each* attach (default ``True``: data written between the attaches) or
            before the first only, the later attaches moving the same data (``False``, as
            ``zsim grow --attach N`` does).
        partitioning: linux | none, see :mod:`zsim.capacity` (default ``"linux"``).
        failed: leaf devices that are missing (FAULTED or removed), by the names the layout
            gives them (``"raidz2 8"`` names sda…sdh), as a tuple (default ``()``: healthy;
            TOML ``failed = ["sdc"]``, ``--set pool.failed=sdc,sdd``). The pool runs
            degraded: reads go to another mirror child or rebuild from parity (raidz/dRAID
            read all surviving columns of a block whose data is on a missing disk), writes
            skip the missing disk. Each data vdev may lose at most what it survives (mirror
            n−1, raidz/dRAID parity); a single-disk vdev none. ZFS layouts (data vdevs
            only), md arrays (RAID1 n−1, RAID10 1, RAID5 1, RAID6 2) and btrfs RAID1/RAID10
            (1 device, a filesystem mounted ``-o degraded``).
    """

    layout: str
    ashift: int = 12
    recordsize: int = 128 * KiB
    compression: str = "off"
    compress_ratio: float = 1.0
    checksum: str = "fletcher4"
    dedup: str = "off"
    atime: str = "on"
    xattr: str = "sa"
    sync: str = "standard"
    logbias: str = "latency"
    primarycache: str = "all"
    redundant_metadata: str = "all"
    direct: str = "standard"
    special_small_blocks: int = 0
    cache_fill: float = 1.0
    fill: float = 0.5
    allocated: int | None = None
    fill_at_attach: float = 0.0
    written_between_attaches: bool = True
    partitioning: str = "linux"
    failed: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        layout_of(self.layout)
        if isinstance(self.ashift, bool) or not isinstance(self.ashift, int):
            raise bad_value("pool", "ashift", self.ashift)
        try:
            parse_ashift(self.ashift)
        except ZsimError:
            raise bad_value("pool", "ashift", self.ashift) from None
        check_block("pool", "recordsize", self.recordsize)
        for key, options in POOL_ENUMS.items():
            check_enum("pool", key, getattr(self, key), options)
        check_compression(self.compression, self.compress_ratio)
        check_block("pool", "special_small_blocks", self.special_small_blocks, zero_ok=True)
        check_real("pool", "cache_fill", self.cache_fill, 0.0, 1.0)
        check_real("pool", "fill", self.fill, 0.0, 1.0)
        if self.allocated is not None:
            check_size("pool", "allocated", self.allocated)
            if self.fill != Pool.fill:
                raise both_fill_and_allocated()
        check_real("pool", "fill_at_attach", self.fill_at_attach, 0.0, 1.0)
        if not isinstance(self.written_between_attaches, bool):
            raise bad_value("pool", "written_between_attaches", self.written_between_attaches)
        if self.fill_at_attach:
            check_fill_at_attach(self)
        check_failed(self)


@dataclass(frozen=True)
class Workload:
    """What the clients do: a fio job, a dd run or a trace replay.

    Attributes (unit; default):
        tool: fio | dd | trace (default ``"fio"``).

        fio (``rw`` and ``bs`` are required: a workload's shape has no default):
        rw: read | write | randread | randwrite | randrw | readwrite (``"rw"`` is read as
            ``"readwrite"``, as fio does) (default ``None``).
        bs: block size, bytes, above 0 (default ``None``; dd needs it too).
        rwmixread: percent of reads for randrw/readwrite, 0…100 (default 50, fio's).
        numjobs: jobs (processes), ≥ 1 (default 1).
        iodepth: I/Os in flight per job, ≥ 1 (default 1).
        sync: O_SYNC writes, fio ``--sync=1`` (default ``False``).
        fsync: fsync after every N writes, 0 = never (default 0).
        direct: O_DIRECT (default ``False``).
        size: bytes per job, one file per job, above 0 (default 4 GiB).
        ioengine: libaio | psync | sync | io_uring | posixaio (default ``"libaio"``).
        overwrite: fio's ``overwrite``: the job's files exist, fully written, before the run
            (default ``False``, fio's: a job that only writes starts on sparse files, which
            fio creates without writing data, so the first write to a record reads nothing;
            a job that reads lays its files out first whatever this says). Set it for files
            left by an earlier run, as in "rewrite" benchmarks.
        offset: where each job's region starts on its device, bytes, as fio's ``offset``
            (default 0). Raw layouts only (``raw N``: fio on bare devices, as calibration
            runs measure zones); a file in a pool or a file system has no LBA offset.

        dd (``direction`` and ``bs`` are required):
        direction: write | read (default ``None``).
        bytes: bytes per stream, above 0 (default 10 GiB).
        streams: concurrent dd processes, ≥ 1 (default 1).
        source: zero | urandom | file, what a write reads from; /dev/urandom costs CPU per
            byte (default ``"zero"``).

        trace replay (``file`` is required):
        file: path of the trace, relative to the scenario file in TOML (default ``None``).
        format: disksim-validate, queue depth 1 with a think time per line
            (default ``"disksim-validate"``).

    Keys of another tool must keep their defaults (``numjobs`` means nothing to dd).
    """

    tool: str = "fio"
    rw: str | None = None
    bs: int | None = None
    rwmixread: int = 50
    numjobs: int = 1
    iodepth: int = 1
    sync: bool = False
    fsync: int = 0
    direct: bool = False
    size: int = 4 * GiB
    ioengine: str = "libaio"
    overwrite: bool = False
    offset: int = 0
    direction: str | None = None
    bytes: int = 10 * GiB
    streams: int = 1
    source: str = "zero"
    file: str | None = None
    format: str = "disksim-validate"

    def __post_init__(self) -> None:
        check_enum("workload", "tool", self.tool, TOOLS)
        if self.rw in RW_ALIASES:
            object.__setattr__(self, "rw", RW_ALIASES[self.rw])
        check_foreign_defaults(self)
        check_required(self)
        {"fio": check_fio, "dd": check_dd, "trace": check_trace}[self.tool](self)


@dataclass(frozen=True)
class ResilverSpec:
    """The optional ``[resilver]`` table: which disk fails and how the data was written.

    Attributes (unit; default):
        disk: the leaf that fails, a device name from ``pool.layout`` (default ``""``: the
            first leaf of the first data vdev, or the md array's first member).
        written: sequential | random — how the data was written: large files streamed
            (blocks contiguous on disk) or small random overwrites (blocks scattered, the
            scan's extents short) (default ``"sequential"``).
        block_size: bytes; the size of the blocks the data is in, when not
            ``pool.recordsize`` (a zvol's volblocksize, e.g. 16 KiB); 0 = recordsize
            (default 0).
        method: auto | healing | sequential — ``healing`` walks the block tree and verifies
            checksums (the only way on raidz); ``sequential`` is ``zpool replace -s`` on
            mirrors and the rebuild to a dRAID distributed spare, followed by a scrub;
            ``auto`` picks sequential for a dRAID distributed spare, else healing.
        spare: auto | new | distributed — the replacement: a new disk in the failed disk's
            slot, or a dRAID distributed spare (``auto``: distributed when the dRAID vdev
            has spares).
        under_load: run the scenario's workload during the resilver too, and report both
            slowed down (default false).
        md_speed_limit_min / md_speed_limit_max: bytes/s, md's
            ``/proc/sys/dev/raid/speed_limit_min|max`` (defaults 1000 KiB/s and
            200000 KiB/s, ``md.4``).
    """

    disk: str = ""
    written: str = "sequential"
    block_size: int = 0
    method: str = "auto"
    spare: str = "auto"
    under_load: bool = False
    md_speed_limit_min: float = 1000 * KiB
    md_speed_limit_max: float = 200000 * KiB

    def __post_init__(self) -> None:
        if not isinstance(self.disk, str):
            raise bad_value("resilver", "disk", self.disk)
        check_enum("resilver", "written", self.written, WRITTEN_PATTERNS)
        check_enum("resilver", "method", self.method, RESILVER_METHODS)
        check_enum("resilver", "spare", self.spare, SPARE_KINDS)
        check_block("resilver", "block_size", self.block_size, zero_ok=True)
        if not isinstance(self.under_load, bool):
            raise bad_value("resilver", "under_load", self.under_load)
        for key in ("md_speed_limit_min", "md_speed_limit_max"):
            check_real("resilver", key, getattr(self, key), 1e-9)
        if self.md_speed_limit_min > self.md_speed_limit_max:
            raise ScenarioError(
                f"resilver.md_speed_limit_min ({self.md_speed_limit_min:.0f} B/s) is above "
                f"md_speed_limit_max ({self.md_speed_limit_max:.0f} B/s); md needs min ≤ max"
            )


YEAR = 365.25 * 86400.0


@dataclass(frozen=True)
class DurabilitySpec:
    """The optional ``[durability]`` table: how disks fail, for the loss probability.

    Attributes (unit; default):
        afr: annualized failure rate, a fraction (default ``None``: the disk profile's
            ``afr``, else 1 − exp(−8766 h / ``mtbf_hours``) from its datasheet MTBF; field
            rates are usually higher — Schroeder & Gibson, FAST 2007).
        distribution: exponential | weibull time to failure (default ``"exponential"``).
        weibull_shape: the Weibull shape β (default 1.12, Elerath & Pecht's field fit).
        ure_per_bit: unrecoverable read errors per bit read (default 1e-15, the NAS and
            enterprise datasheet class; desktop drives state 1e-14).
        mission: seconds of service to assess (default 5 years of 365.25 days).
        replace_after: seconds from a failure to the start of its rebuild — finding the
            failure and putting a disk in (default 24 h; a dRAID distributed spare and a hot
            spare start at once: set 0).
        busy_fraction: share of the time the pool runs its workload; that share of
            rebuilds runs under load (default 0: rebuilds run on an idle pool).
        trials: Monte Carlo trials (default 20000).
    """

    afr: float | None = None
    distribution: str = "exponential"
    weibull_shape: float = 1.12
    ure_per_bit: float = 1e-15
    mission: float = 5 * YEAR
    replace_after: float = 24 * 3600.0
    busy_fraction: float = 0.0
    trials: int = 20000

    def __post_init__(self) -> None:
        if self.afr is not None:
            check_real("durability", "afr", self.afr, 1e-12, 1.0 - 1e-12)
        check_enum("durability", "distribution", self.distribution, FAILURE_DISTRIBUTIONS)
        check_real("durability", "weibull_shape", self.weibull_shape, 1e-6, 100.0)
        check_real("durability", "ure_per_bit", self.ure_per_bit, 0.0, 1.0)
        check_real("durability", "mission", self.mission, 1.0)
        check_real("durability", "replace_after", self.replace_after, 0.0)
        check_real("durability", "busy_fraction", self.busy_fraction, 0.0, 1.0)
        check_whole("durability", "trials", self.trials, 100, 10_000_000)


@dataclass(frozen=True)
class Scenario:
    """One simulation's input: hardware, pool and workload, plus an optional ``name``.

    Build it with :func:`load_scenario` or :func:`scenario_from_dict`, or in code.
    """

    hardware: Hardware
    pool: Pool
    workload: Workload
    name: str = ""
    resilver: ResilverSpec = ResilverSpec()
    durability: DurabilitySpec = DurabilitySpec()

    def __post_init__(self) -> None:
        for key, kind in (
            ("hardware", Hardware),
            ("pool", Pool),
            ("workload", Workload),
            ("resilver", ResilverSpec),
            ("durability", DurabilitySpec),
        ):
            if not isinstance(getattr(self, key), kind):
                raise ScenarioError(f"Scenario.{key} must be a {kind.__name__}")
        if not isinstance(self.name, str):
            raise ScenarioError(f'name = {show_value(self.name)}: expected text, e.g. "ars raidz2"')
        check_features(self.hardware, self.pool)
        if self.workload.offset and self.layout_tree().system != "raw":
            raise ScenarioError(
                f"workload.offset = {self.workload.offset} applies to raw layouts (fio on bare "
                f"devices, 'raw N'); {self.pool.layout!r} keeps files in a file system: remove it"
            )

    def layout_tree(self) -> Layout:
        """The parsed vdev tree of ``pool.layout``."""
        return parse_layout(self.pool.layout)

    def pool_capacity(self) -> CapacityReport:
        """:func:`zsim.capacity` of the pool on its disks: the disk profile's size and logical
        sector, ``pool.ashift``, ``pool.partitioning`` and ``hardware.zfs_version``."""
        return capacity(
            self.layout_tree(),
            self.hardware.disk.size_bytes,
            ashift=self.pool.ashift,
            zfs_version=parse_zfs_version(self.hardware.zfs_version),
            partitioning=self.pool.partitioning,  # type: ignore[arg-type]
            logical_sector=self.hardware.disk.logical_sector_bytes,
            fill_at_attach=self.pool.fill_at_attach,
            written_between_attaches=self.pool.written_between_attaches,
        )

    def born_regions(self, steps: Sequence[ExpansionStep]) -> tuple[tuple[int, int], ...]:
        """Where a data vdev's blocks of older widths lie (:func:`zsim.zfs.expansion.
        born_regions`), from its expansion ``steps`` and ``pool.fill_at_attach`` /
        ``written_between_attaches``; empty for a vdev never expanded."""
        pool = self.pool
        return born_regions(steps, pool.fill_at_attach, pool.ashift, pool.written_between_attaches)

    def to_dict(self) -> dict[str, Any]:
        """The resolved scenario as plain JSON-able data (profiles in full, SI base units)."""
        hardware = {f.name: getattr(self.hardware, f.name) for f in fields(Hardware)}
        for key in PROFILE_KEYS:
            profile = hardware[key]
            hardware[key] = profile.to_dict() if profile is not None else None
        return {
            "name": self.name,
            "hardware": hardware,
            "pool": asdict(self.pool),
            "workload": asdict(self.workload),
            "resilver": asdict(self.resilver),
            "durability": asdict(self.durability),
        }

    def to_toml(self) -> str:
        """TOML text that :func:`load_scenario` reads back to an equal scenario."""
        lines = ["# zsim scenario, written by Scenario.to_toml() (DESIGN.md §4)"]
        if self.name:
            lines.append(f"name = {scenario_toml_value(self.name)}")
        for table, items in (
            ("hardware", hardware_items(self.hardware)),
            ("pool", pool_items(self.pool)),
            ("workload", workload_items(self.workload)),
            ("resilver", changed_items(self.resilver, ResilverSpec())),
            ("durability", changed_items(self.durability, DurabilitySpec())),
        ):
            if not items and table in ("resilver", "durability"):
                continue
            lines += ["", f"[{table}]"]
            lines += [f"{toml_key(k)} = {scenario_toml_value(v)}" for k, v in items.items()]
        return "\n".join(lines) + "\n"
