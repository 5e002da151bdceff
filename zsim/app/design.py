"""What the app's pages compute, without Streamlit: the planner's design and the library calls.

:class:`Design` holds every input of the "Design a pool" page (disks, how many, HBA, RAM, CPU,
layout, dataset properties, price, workloads) and turns itself into the same
:class:`zsim.Scenario` objects ``zsim simulate`` reads — :meth:`Design.scenario_dict` is the
TOML the page offers for download. The functions below call the public API (capacity,
simulate, resilver, sweep) and return plain rows, so the AppTest and unit tests can compare
what a page shows with what the library computes for the same scenario.

Units are SI base units (bytes, seconds, bytes/s) everywhere; the pages format them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import tempfile
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zsim.capacity import capacity
from zsim.errors import ZsimError
from zsim.files import atomic_write_text
from zsim.layout.grammar import EXAMPLES, parse_layout, vdev_group_text
from zsim.layout.tree import ZfsLayout
from zsim.scenario import scenario_from_dict
from zsim.simulate import simulate
from zsim.sweep.table import sweep
from zsim.sweep.workloads import resolve_workloads
from zsim.toml_text import toml_key, toml_value
from zsim.units import TB, GiB, KiB, TiB, parse_size

#: The page's workload presets: the sweep's named workloads (``zsim/sweep/workloads.py``,
#: where each shape's source is given), under the names a planner recognises.
PRESET_LABELS: dict[str, str] = {
    "vm-16k": "VM store (16K random, 70 % reads)",
    "db-8k-sync": "Database (8K sync writes)",
    "media-1m-read": "Media streaming (1M sequential reads)",
    "backup-1m-write": "Backup target (1M sequential writes)",
    "4k-randread": "4K random reads",
    "4k-randwrite": "4K random writes",
}
CUSTOM = "custom"
DEFAULT_WORKLOADS = ("vm-16k", "db-8k-sync", "media-1m-read", "backup-1m-write")
RECORDSIZES = ("auto", "4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M", "2M", "4M")
COMPRESSION = ("off", "lz4", "zstd")
SYNC = ("standard", "always", "disabled")
FIO_RW = ("randread", "randwrite", "randrw", "read", "write")

#: The DES run the Design page's button starts: 5 % CI, capped in *simulated* seconds so the
#: same design always gives the same figures (a wall cap would make them depend on the
#: machine's speed). The pages never start it on their own.
DES_TARGET_CI = 0.05
DES_MAX_SIM_SECONDS = 120.0
DES_MAX_WALL_SECONDS = 600.0


@dataclass(frozen=True)
class CustomWorkload:
    """The page's fio-like custom workload (``[workload]`` keys, sizes as bytes)."""

    rw: str = "randrw"
    bs: int = 64 * KiB
    numjobs: int = 4
    iodepth: int = 8
    rwmixread: int = 70
    sync: bool = False
    size: int = 128 * GiB

    def workload_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "tool": "fio",
            "rw": self.rw,
            "bs": self.bs,
            "numjobs": self.numjobs,
            "iodepth": self.iodepth,
            "sync": self.sync,
            "size": self.size,
        }
        if self.rw == "randrw":
            out["rwmixread"] = self.rwmixread
        return out


@dataclass(frozen=True)
class Design:
    """One pool design: the "Design a pool" page's inputs.

    ``disk`` is a catalog name, or ``"custom"`` with ``custom_disk`` holding the inline
    ``hardware.disk`` table (``DESIGN.md`` §4). ``layout`` is the compact or ``zpool
    create`` grammar (``DESIGN.md`` §3) and must use ``disks`` devices (log, cache and
    special devices come on top, of ``support_device``). ``recordsize`` ``"auto"`` gives each
    preset workload the recordsize a planner would pick for it (as ``zsim sweep`` does) and
    128K to the custom one. ``price_usd`` is per disk, ``None`` when not known (costs are
    then not shown — never guessed).
    """

    disk: str = "seagate-ironwolf-12tb"
    disks: int = 8
    layout: str = "raidz2 8"
    hba: str = ""
    support_device: str = "intel-optane-p4800x-375gb"
    ram: str = "64GiB"
    cpu_cores: int = 8
    zfs_version: str = ""
    recordsize: str = "auto"
    ashift: int = 12
    compression: str = "off"
    compress_ratio: float = 1.0
    sync: str = "standard"
    fill: float = 0.5
    price_usd: float | None = None
    workloads: tuple[str, ...] = DEFAULT_WORKLOADS
    custom: CustomWorkload = field(default_factory=CustomWorkload)
    custom_disk: tuple[tuple[str, Any], ...] = ()

    # ---------------------------------------------------------------- scenarios

    def hardware_dict(self) -> dict[str, Any]:
        hw: dict[str, Any] = {
            "disk": dict(self.custom_disk) if self.disk == CUSTOM else self.disk,
            "ram": self.ram,
            "cpu_cores": self.cpu_cores,
        }
        if self.hba:
            hw["hba"] = self.hba
        if self.zfs_version:
            hw["zfs_version"] = self.zfs_version
        tree_classes = self._support_classes()
        for vclass, key in (
            ("log", "log_device"),
            ("cache", "cache_device"),
            ("special", "special_device"),
        ):
            if vclass in tree_classes:
                hw[key] = self.support_device
        return hw

    def _support_classes(self) -> set[str]:
        tree = parse_layout(self.layout)
        return {v.vclass for v in getattr(tree, "vdevs", ())}

    def workload_recordsize(self, name: str) -> str:
        """The recordsize the workload ``name`` runs on (text such as ``"16K"``)."""
        if self.recordsize != "auto":
            return self.recordsize
        if name == CUSTOM:
            return "128K"
        return preset(name).recordsize or "128K"

    def workload_dict(self, name: str) -> dict[str, Any]:
        if name == CUSTOM:
            return self.custom.workload_dict()
        return dict(preset(name).workload)

    def scenario_dict(self, workload: str) -> dict[str, Any]:
        """The scenario TOML (as a dict) for one of the design's workloads."""
        pool: dict[str, Any] = {
            "layout": self.layout,
            "ashift": self.ashift,
            "recordsize": self.workload_recordsize(workload),
            "compression": self.compression,
            "sync": self.sync,
            "fill": self.fill,
        }
        if self.compression != "off":
            pool["compress_ratio"] = self.compress_ratio
        label = PRESET_LABELS.get(workload, "custom workload")
        return {
            "name": f"{self.layout} of {self.disk_label()}: {label}",
            "hardware": self.hardware_dict(),
            "pool": pool,
            "workload": self.workload_dict(workload),
        }

    def scenario(self, workload: str) -> Any:
        """The :class:`zsim.Scenario` of one workload (raises :class:`ZsimError`)."""
        return scenario_from_dict(self.scenario_dict(workload), source="the app's design")

    def scenario_toml(self, workload: str) -> str:
        """The file ``zsim simulate`` runs for this workload (canonical: the cache key)."""
        return self.scenario(workload).to_toml()

    def resilver_scenario(self) -> Any:
        """The scenario the resilver runs on: the first workload's (it only matters with
        ``resilver.under_load``), with the design's recordsize, or OpenZFS's default 128K
        when the recordsize is "auto" (the records on the pool are then the planner's
        choice per dataset; 128K is what a pool holds unless told otherwise)."""
        d = self.scenario_dict(self.workloads[0] if self.workloads else CUSTOM)
        d["pool"]["recordsize"] = "128K" if self.recordsize == "auto" else self.recordsize
        return scenario_from_dict(d, source="the app's design")

    def disk_label(self) -> str:
        return "a custom disk" if self.disk == CUSTOM else self.disk

    def check(self) -> None:
        """Raise :class:`ZsimError` naming the fix when the design cannot be built."""
        if self.disks < 1:
            raise ZsimError(f"the number of disks must be at least 1, not {self.disks}")
        tree = parse_layout(self.layout)
        check_layout_words(self.layout, tree)
        used = data_device_count(tree)
        if used != self.disks:
            raise ZsimError(
                f"the layout {self.layout!r} uses {used} disks but {self.disks} were chosen; "
                f"set the number of disks to {used} or change the layout"
            )
        if not self.workloads:
            raise ZsimError("no workload chosen; pick at least one workload")
        for name in self.workloads:
            self.scenario(name)  # validates every key, as `zsim simulate` would

    def disk_bytes(self) -> int:
        return int(
            self.scenario(self.workloads[0] if self.workloads else CUSTOM).hardware.disk.capacity
        )

    def replace(self, **changes: Any) -> Design:
        return dataclasses.replace(self, **changes)


#: what a disk's name looks like in a ``zpool create`` layout (Linux and FreeBSD device
#: names, /dev paths, by-id names)
DEVICE_NAME = re.compile(
    r"^(/dev/.+|(sd|vd|xvd|hd)[a-z]+|nvme\d+n\d+|(a)?da\d+|(ata|scsi|wwn|nvme|usb)-.+)$"
)


def check_layout_words(text: str, tree: Any) -> None:
    """Refuse a layout of plain single-disk vdevs whose names are not disk names: ``foo``
    parses as ``zpool create tank foo`` (a one-disk stripe of a device named foo), which is
    never what a planner typing in the app means. ``stripe 8`` or disk names (``sda sdb``)
    say it."""
    if not isinstance(tree, ZfsLayout):
        return
    for v in tree.vdevs:
        if v.vclass != "normal" or v.kind != "disk":
            continue
        odd = [d for d in v.devices if not DEVICE_NAME.match(d)]
        if odd and "stripe" not in text.lower().split():
            raise ZsimError(
                f"{odd[0]!r} in the layout {text!r} is neither a vdev type nor a disk name; "
                f"start with stripe, mirror, raidz1-3 or draid1-3, e.g. {EXAMPLES} (single "
                f"disks: 'stripe 8' or their names, 'sda sdb')"
            )


def preset(name: str) -> Any:
    """The sweep's preset workload ``name`` (a :class:`zsim.sweep.workloads.WorkloadSpec`)."""
    return resolve_workloads([name], None)[0]


def data_device_count(tree: Any) -> int:
    """Devices of the pool's data and spare vdevs (what the planner's disk count counts):
    log, cache and special devices are of another kind and come on top."""
    if not isinstance(tree, ZfsLayout):
        return len(tree.devices) if hasattr(tree, "devices") else int(tree.width)
    return sum(len(v.devices) for v in tree.vdevs if v.vclass in ("normal", "spare"))


def picker_layout(kind: str, width: int, disks: int) -> str:
    """The compact layout a planner means by "``kind`` vdevs of ``width`` disks from
    ``disks`` disks": as many vdevs as fit, the rest as hot spares; dRAID as one vdev of
    all the disks with ``width`` = data + parity per redundancy group and one distributed
    spare. Raises :class:`ZsimError` when not even one vdev fits."""
    if kind == "stripe":
        return f"stripe {disks}"
    if kind.startswith("draid"):
        parity = int(kind[-1])
        data = width - parity
        if data < 1 or width + 1 > disks:
            raise ZsimError(
                f"{kind} groups of {width} (data + parity) and one spare need more than "
                f"{disks} disks; use a narrower group or more disks"
            )
        return f"{kind}:{data}d:1s:{disks}c"
    if width > disks:
        raise ZsimError(
            f"a {kind} vdev of {width} disks needs at least {width} disks; you chose {disks}"
        )
    count, rest = divmod(disks, width)
    return vdev_group_text(count, f"{kind} {width}", rest)


# ---------------------------------------------------------------- capacity


BREAKDOWN_PARTS: tuple[tuple[str, str], ...] = (
    ("usable", "usable (zfs list USED+AVAIL)"),
    ("redundancy", "parity / mirror copies"),
    ("padding", "raidz padding (skip sectors)"),
    ("slop", "slop (reserved by ZFS)"),
    ("embedded_log", "embedded log metaslab"),
    ("geometry", "metaslab rounding"),
    ("labels", "labels, boot and partition"),
    ("spares", "hot spares"),
    ("support", "log / cache / special devices"),
)


def capacity_report(design: Design) -> Any:
    """:func:`zsim.capacity` of the design (the same call ``zsim capacity`` makes)."""
    sc = design.scenario(design.workloads[0] if design.workloads else CUSTOM)
    rs = design.recordsize if design.recordsize != "auto" else "128K"
    return capacity(
        design.layout,
        int(sc.hardware.disk.capacity),
        ashift=design.ashift,
        recordsize=parse_size(rs),
        compress_ratio=design.compress_ratio if design.compression != "off" else 1.0,
        zfs_version=sc.hardware.zfs_version,
        class_disk_size=_class_sizes(sc),
    )


def _class_sizes(sc: Any) -> dict[str, int]:
    hw = sc.hardware
    sizes = {}
    for vclass, prof in (
        ("log", hw.log_device),
        ("cache", hw.cache_device),
        ("special", hw.special_device),
    ):
        if prof is not None:
            sizes[vclass] = int(prof.capacity)
    return sizes


def capacity_breakdown(report: Any) -> list[dict[str, Any]]:
    """Where the raw bytes go: one row per part of :data:`BREAKDOWN_PARTS` (bytes, TB, TiB,
    share of raw). The parts add up to the raw bytes of every device in the pool."""
    parts = dict.fromkeys((p for p, _ in BREAKDOWN_PARTS), 0)
    for v in report.vdevs:
        if v.vclass == "normal":
            parts["redundancy"] += v.redundancy_bytes
            parts["padding"] += v.padding_bytes
            parts["slop"] += v.slop_bytes
            parts["embedded_log"] += v.embedded_log_bytes
            parts["geometry"] += v.geometry_bytes
            parts["labels"] += v.labels_bytes
            parts["usable"] += v.usable_bytes
        elif v.vclass == "spare":
            parts["spares"] += v.raw_bytes
        else:
            parts["support"] += v.raw_bytes
    total = sum(parts.values())
    return [
        {
            "part": label,
            "bytes": parts[key],
            "tb": parts[key] / TB,
            "tib": parts[key] / TiB,
            "share": parts[key] / total if total else 0.0,
        }
        for key, label in BREAKDOWN_PARTS
        if parts[key] > 0
    ]


# ---------------------------------------------------------------- performance


def simulate_des(
    sc: Any, seed: int = 1, progress: Callable[[float, float, float], None] | None = None
) -> Any:
    return simulate(
        sc,
        engine="des",
        seed=seed,
        target_ci=DES_TARGET_CI,
        max_sim_seconds=DES_MAX_SIM_SECONDS,
        max_wall_seconds=DES_MAX_WALL_SECONDS,
        progress=progress,
    )


# ---------------------------------------------------------------- resilver


def resilver_summary(res: Any) -> dict[str, Any]:
    """The figures the pages show from a :class:`zsim.resilver.result.ResilverResult`."""
    d = res.durability or {}
    return {
        "seconds": res.seconds,
        "hours": res.seconds / 3600 if res.seconds is not None else None,
        "bytes_resilvered": res.bytes_resilvered,
        "bytes_per_s": res.bytes_per_s,
        "limit": res.limit,
        "method": res.method,
        "spare": res.spare,
        "lost": res.lost,
        "loss_probability": d.get("loss_probability"),
        "loss_probability_ci95": d.get("loss_probability_ci95"),
        "ure_probability": d.get("ure_probability"),
        "mission_seconds": d.get("mission_seconds"),
        "mttdl_seconds": d.get("mttdl_seconds"),
        "afr": d.get("afr"),
    }


def costs(design: Design, usable_bytes: int) -> dict[str, float | None]:
    """Total disk cost and cost per usable TB (USD), ``None`` without a price."""
    if design.price_usd is None:
        return {"cost_usd": None, "usd_per_usable_tb": None}
    total = design.price_usd * (design.disks)
    return {
        "cost_usd": total,
        "usd_per_usable_tb": total / (usable_bytes / TB) if usable_bytes else None,
    }


# ---------------------------------------------------------------- URL state

#: query-string key → Design field (short keys keep shared links readable)
QUERY_KEYS: dict[str, str] = {
    "disk": "disk",
    "n": "disks",
    "layout": "layout",
    "hba": "hba",
    "support": "support_device",
    "ram": "ram",
    "cpu": "cpu_cores",
    "zfs": "zfs_version",
    "rs": "recordsize",
    "ashift": "ashift",
    "comp": "compression",
    "ratio": "compress_ratio",
    "sync": "sync",
    "fill": "fill",
    "price": "price_usd",
    "wl": "workloads",
}
CUSTOM_QUERY_KEYS: dict[str, str] = {
    "c_rw": "rw",
    "c_bs": "bs",
    "c_jobs": "numjobs",
    "c_qd": "iodepth",
    "c_mix": "rwmixread",
    "c_sync": "sync",
}


def design_to_query(design: Design) -> dict[str, str]:
    """The design as query-string parameters; only what differs from the default."""
    default = Design()
    out: dict[str, str] = {}
    for key, name in QUERY_KEYS.items():
        value = getattr(design, name)
        if value != getattr(default, name):
            out[key] = ",".join(value) if isinstance(value, tuple) else str(value)
    for key, name in CUSTOM_QUERY_KEYS.items():
        value = getattr(design.custom, name)
        if value != getattr(default.custom, name):
            out[key] = str(value)
    for k, v in design.custom_disk:
        out[f"d_{k}"] = str(v)
    return out


def design_from_query(params: Mapping[str, str]) -> tuple[Design, list[str]]:
    """A design from query-string parameters, and a message per parameter that could not
    be used (a shared link with a typo must still open, with the defaults and a warning)."""
    default = Design()
    changes: dict[str, Any] = {}
    problems: list[str] = []
    for key, name in QUERY_KEYS.items():
        if key not in params:
            continue
        text = str(params[key])
        try:
            changes[name] = _convert(name, text, getattr(default, name))
        except (ValueError, ZsimError) as err:
            problems.append(f"ignored ?{key}={text}: {err}")
    custom: dict[str, Any] = {}
    for key, name in CUSTOM_QUERY_KEYS.items():
        if key in params:
            text = str(params[key])
            try:
                custom[name] = _convert(name, text, getattr(default.custom, name))
            except (ValueError, ZsimError) as err:
                problems.append(f"ignored ?{key}={text}: {err}")
    if custom:
        changes["custom"] = dataclasses.replace(default.custom, **custom)
    disk_keys = sorted(k for k in params if k.startswith("d_"))
    if disk_keys:
        changes["custom_disk"] = tuple((k[2:], _toml_value(str(params[k]))) for k in disk_keys)
    return dataclasses.replace(default, **changes), problems


def _convert(name: str, text: str, default: Any) -> Any:
    if name == "workloads":
        names = tuple(w for w in text.split(",") if w)
        known = (*PRESET_LABELS, CUSTOM)
        bad = [w for w in names if w not in known]
        if bad:
            raise ZsimError(f"unknown workload {bad[0]!r}; use {', '.join(known)}")
        return names
    if name == "price_usd":
        return None if text in ("", "None") else float(text)
    if isinstance(default, bool):
        if text not in ("True", "False"):
            raise ZsimError("use True or False")
        return text == "True"
    if name == "bs":
        return parse_size(text)
    try:
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float):
            return float(text)
    except ValueError:
        kind = "a whole number" if isinstance(default, int) else "a number"
        raise ZsimError(f"{text!r} is not {kind}") from None
    return text


def _toml_value(text: str) -> Any:
    """A custom-disk value from the query string: a number when it reads as one."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def disk_spec_for_sweep(design: Design) -> str:
    """A disk name ``zsim.sweep`` takes: the catalog name, or for a custom disk a profile
    file written (atomically) under the temporary folder, named by its content's hash."""
    if design.disk != CUSTOM:
        return design.disk
    text = "".join(f"{toml_key(k)} = {toml_value(v)}\n" for k, v in design.custom_disk)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = Path(tempfile.gettempdir()) / "zsim-app" / f"custom-disk-{digest}.toml"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
    return str(path)


def sweep_rows(
    design: Design, workloads: Sequence[str], engine: str = "analytic", resilver: bool = False
) -> Any:
    """Every sensible layout of the design's disks (``zsim.sweep``, in this process)."""
    disk = disk_spec_for_sweep(design)
    prices = {disk: design.price_usd} if design.price_usd is not None else None
    overrides = [
        f"pool.ashift={design.ashift}",
        f"hardware.ram={design.ram}",
        f"hardware.cpu_cores={design.cpu_cores}",
    ]
    if design.hba:
        overrides.append(f"hardware.hba={design.hba}")
    return sweep(
        design.disks,
        disk,
        list(workloads),
        engine=engine,
        prices=prices,
        overrides=overrides,
        recordsize=None if design.recordsize == "auto" else design.recordsize,
        workers=1,
        progress=False,
        resilver=resilver,
    )
