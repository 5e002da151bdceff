"""The hardware catalog: TOML profiles of disks, SSDs and HBAs, validated on load.

Profiles live in the repository's top-level ``models/`` folder, one file each, named by their
catalog name (``seagate-ironwolf-12tb.toml``). The wheel carries the folder as
``zsim/models`` and it is read through :mod:`importlib.resources`; in a source checkout the
top-level folder is read directly.

A scenario may give the same fields inline (``disk = { kind = "hdd", capacity = "5TB", ... }``,
``DESIGN.md`` §4); inline tables and profile files share this one schema. Catalog files must
also name a source for every figure (``[sources]``: ``default`` plus per-key entries;
estimates start with ``estimate:``).
"""

from __future__ import annotations

import difflib
import importlib.resources
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Literal

from zsim.errors import CatalogError, UnitError, ZsimError
from zsim.files import TOML_LIMIT, read_bytes
from zsim.units import parse_count, parse_rate, parse_size, parse_time

SCHEMA_VERSION = 1
Kind = Literal["hdd", "ssd", "nvme", "hba"]
KINDS: tuple[str, ...] = ("hdd", "ssd", "nvme", "hba")
DEVICE_KINDS: tuple[str, ...] = ("hdd", "ssd", "nvme")


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise UnitError(f"{value!r} is not text")
    return value


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UnitError(f"{value!r} is not a whole number")
    if value < 0:
        raise UnitError(f"{value} is negative")
    return value


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UnitError(f"{value!r} is not a number")
    if value < 0:
        raise UnitError(f"{value} is negative")
    return float(value)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise UnitError(f"{value!r} is not true or false")
    return value


def _sector(value: Any) -> int:
    sector = _integer(value)
    if sector not in (512, 4096):
        raise UnitError(f"{sector} is not a sector size zsim models (512 or 4096)")
    return sector


def _interface(value: Any) -> str:
    text = _text(value).lower()
    if text not in ("sata", "sas", "nvme"):
        raise UnitError(f"{value!r} is not one of sata, sas, nvme")
    return text


# key → (parser, kinds it belongs to, is a figure that needs a source, what it is)
_Parser = Callable[[Any], Any]
_ALL_DEVICES = ("hdd", "ssd", "nvme")
SCHEMA: dict[str, tuple[_Parser, tuple[str, ...], bool, str]] = {
    "vendor": (_text, KINDS, False, "maker"),
    "model": (_text, KINDS, False, "model name"),
    "part_number": (_text, KINDS, False, "vendor part number"),
    "notes": (_text, KINDS, False, "free text"),
    "capacity": (parse_size, _ALL_DEVICES, True, "marketed capacity, bytes ('12TB')"),
    "capacity_bytes": (
        _integer,
        _ALL_DEVICES,
        True,
        "exact capacity in bytes (LBA count × sector)",
    ),
    "logical_sector": (_sector, _ALL_DEVICES, True, "logical sector, bytes (512 or 4096)"),
    "physical_sector": (_sector, _ALL_DEVICES, True, "physical sector, bytes (512 or 4096)"),
    "sector": (_sector, _ALL_DEVICES, True, "sector size, bytes, when logical = physical"),
    "interface": (_interface, _ALL_DEVICES, False, "sata, sas or nvme"),
    "link_rate": (parse_rate, ("hdd", "ssd"), True, "host link line rate ('6Gb/s')"),
    "pcie_gen": (_integer, ("nvme", "hba"), True, "PCIe generation"),
    "pcie_lanes": (_integer, ("nvme", "hba"), True, "PCIe lanes"),
    "rpm": (_integer, ("hdd",), True, "spindle speed, rev/min"),
    "cache": (parse_size, ("hdd",), True, "drive cache, bytes"),
    "write_back": (_flag, ("hdd",), True, "write-back cache enabled (false: write-through)"),
    "max_sustained": (parse_rate, ("hdd",), True, "outer-zone sustained rate, bytes/s"),
    "min_sustained": (parse_rate, ("hdd",), True, "inner-zone sustained rate, bytes/s"),
    "avg_seek": (parse_time, ("hdd",), True, "average seek (read and write), s"),
    "avg_seek_read": (parse_time, ("hdd",), True, "average read seek, s"),
    "avg_seek_write": (parse_time, ("hdd",), True, "average write seek, s"),
    "min_seek": (parse_time, ("hdd",), True, "track-to-track seek, s"),
    "command_overhead": (
        parse_time,
        ("hdd",),
        True,
        "controller time per command, s (a measured cache-hit latency)",
    ),
    "max_seek": (parse_time, ("hdd",), True, "full-stroke seek, s"),
    "queue_reorder_depth": (
        _integer,
        ("hdd",),
        True,
        "queued commands the drive picks the shortest access among (NCQ/TCQ: 32; fitted "
        "from a queue-depth sweep by zsim calibrate fit)",
    ),
    "read_bw": (parse_rate, ("ssd", "nvme"), True, "sequential read, bytes/s"),
    "write_bw": (parse_rate, ("ssd", "nvme"), True, "sequential write, bytes/s"),
    "read_iops": (parse_count, ("ssd", "nvme"), True, "4K random read IOPS"),
    "write_iops": (parse_count, ("ssd", "nvme"), True, "4K random write IOPS"),
    "read_latency": (parse_time, ("ssd", "nvme"), True, "QD1 4K read latency, s"),
    "write_latency": (parse_time, ("ssd", "nvme"), True, "QD1 4K write latency, s"),
    "steady_write_bw": (parse_rate, ("ssd", "nvme"), True, "write rate after the cache, bytes/s"),
    "write_cache": (parse_size, ("ssd", "nvme"), True, "bytes written at full speed first"),
    "flush_latency": (
        parse_time,
        ("ssd", "nvme"),
        True,
        "time a cache flush or FUA write adds, s (measured O_SYNC write minus plain write)",
    ),
    "power_loss_protection": (
        _flag,
        ("hdd", "ssd", "nvme"),
        True,
        "write cache survives power loss (capacitors, or an HDD's persistent write cache)",
    ),
    "endurance_dwpd": (_number, ("ssd", "nvme"), True, "drive writes per day"),
    "chip": (_text, ("hba",), False, "controller chip"),
    "ports": (_integer, ("hba",), True, "device lanes (phys)"),
    "lane_rate": (parse_rate, ("hba",), True, "line rate per lane ('12Gb/s')"),
    "max_iops": (parse_count, ("hba",), True, "controller I/O ceiling"),
    "price_usd": (_number, KINDS, True, "street price, USD"),
    "mtbf_hours": (_integer, _ALL_DEVICES, True, "datasheet MTBF, hours"),
    "afr": (_number, _ALL_DEVICES, True, "annualized failure rate, fraction"),
    "workload_rate": (parse_size, ("hdd",), True, "rated workload, bytes/year"),
}
_REQUIRED = {
    "hdd": ("capacity", "rpm", "max_sustained"),
    "ssd": ("capacity", "read_bw", "write_bw"),
    "nvme": ("capacity", "read_bw", "write_bw"),
    "hba": ("ports", "lane_rate", "pcie_gen", "pcie_lanes"),
}


@dataclass(frozen=True)
class Profile:
    """A validated hardware profile. Figures in SI base units; absent ones are ``None``.

    ``name`` is the catalog name (or ``"inline"``); ``sources`` maps each figure to the
    document it comes from.
    """

    name: str
    kind: Kind
    vendor: str | None = None
    model: str | None = None
    part_number: str | None = None
    notes: str | None = None
    capacity: int | None = None
    capacity_bytes: int | None = None
    logical_sector: int | None = None
    physical_sector: int | None = None
    sector: int | None = None
    interface: str | None = None
    link_rate: float | None = None
    pcie_gen: int | None = None
    pcie_lanes: int | None = None
    rpm: int | None = None
    cache: int | None = None
    write_back: bool | None = None
    max_sustained: float | None = None
    min_sustained: float | None = None
    avg_seek: float | None = None
    avg_seek_read: float | None = None
    avg_seek_write: float | None = None
    min_seek: float | None = None
    max_seek: float | None = None
    command_overhead: float | None = None
    queue_reorder_depth: int | None = None
    read_bw: float | None = None
    write_bw: float | None = None
    read_iops: int | None = None
    write_iops: int | None = None
    read_latency: float | None = None
    write_latency: float | None = None
    steady_write_bw: float | None = None
    write_cache: int | None = None
    flush_latency: float | None = None
    power_loss_protection: bool | None = None
    endurance_dwpd: float | None = None
    chip: str | None = None
    ports: int | None = None
    lane_rate: float | None = None
    max_iops: int | None = None
    price_usd: float | None = None
    mtbf_hours: int | None = None
    afr: float | None = None
    workload_rate: int | None = None
    sources: Mapping[str, str] = field(default_factory=dict)
    calibration: Mapping[str, Any] = field(default_factory=dict)

    @property
    def size_bytes(self) -> int:
        """Exact device size when the profile gives it, else the marketed capacity."""
        size = self.capacity_bytes or self.capacity
        if size is None:
            raise CatalogError(f"profile {self.name!r} ({self.kind}) has no capacity")
        return size

    @property
    def logical_sector_bytes(self) -> int:
        return self.logical_sector or self.sector or 512

    @property
    def physical_sector_bytes(self) -> int:
        return self.physical_sector or self.sector or self.logical_sector or 512

    def source_of(self, key: str) -> str | None:
        """The document a figure comes from (its own entry, else the profile's default)."""
        return self.sources.get(key) or self.sources.get("default")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None and f.name not in ("sources", "calibration"):
                out[f.name] = value
        out["sources"] = dict(self.sources)
        if self.calibration:
            out["calibration"] = dict(self.calibration)
        return out


def parse_profile(
    data: Mapping[str, Any],
    name: str = "inline",
    *,
    require_sources: bool = False,
    where: str | None = None,
) -> Profile:
    """Validate a profile table (a catalog file's contents or an inline scenario table)."""
    where = where or f"profile {name!r}"
    if not isinstance(data, Mapping):
        raise CatalogError(f"{where} must be a table of keys, not {type(data).__name__}")
    kind = data.get("kind")
    if kind not in KINDS:
        raise CatalogError(f"{where}: 'kind' must be one of {', '.join(KINDS)}, not {kind!r}")
    schema = data.get("schema", SCHEMA_VERSION)
    if schema != SCHEMA_VERSION:
        raise CatalogError(f"{where}: schema {schema!r} is not {SCHEMA_VERSION}, which zsim reads")
    values: dict[str, Any] = {}
    for key, raw in data.items():
        if key in ("kind", "schema", "sources", "calibration"):
            continue
        if key not in SCHEMA:
            hint = difflib.get_close_matches(key, SCHEMA, n=1)
            fix = f"did you mean {hint[0]!r}?" if hint else "see docs/glossary.md for the keys"
            raise CatalogError(f"{where}: unknown key {key!r}; {fix}")
        parser, kinds, _, what = SCHEMA[key]
        if kind not in kinds:
            raise CatalogError(
                f"{where}: key {key!r} ({what}) does not apply to a {kind}; remove it"
            )
        try:
            values[key] = parser(raw)
        except UnitError as err:
            raise CatalogError(f"{where}: {key} = {raw!r}: {err} ({what})") from None
    missing = [
        k
        for k in _REQUIRED[kind]
        if k not in values and not (k == "capacity" and "capacity_bytes" in values)
    ]
    if missing:
        raise CatalogError(f"{where}: a {kind} profile needs {', '.join(missing)}")
    sources = data.get("sources", {})
    if not isinstance(sources, Mapping) or not all(isinstance(v, str) for v in sources.values()):
        raise CatalogError(f"{where}: [sources] must map keys to text naming a document")
    unknown_sources = set(sources) - set(SCHEMA) - {"default"}
    if unknown_sources:
        raise CatalogError(f"{where}: [sources] names unknown keys {sorted(unknown_sources)}")
    if require_sources:
        unsourced = [k for k in values if SCHEMA[k][2] and k not in sources]
        if unsourced and "default" not in sources:
            raise CatalogError(
                f"{where}: figures {unsourced} have no source; add [sources] default = "
                f"'<datasheet name>' or one entry per key"
            )
    calibration = data.get("calibration", {})
    if not isinstance(calibration, Mapping):
        raise CatalogError(
            f"{where}: [calibration] must be a table (what 'zsim calibrate fit' wrote)"
        )
    _check_consistency(values, where)
    return Profile(
        name=name, kind=kind, sources=dict(sources), calibration=dict(calibration), **values
    )


def _check_consistency(values: Mapping[str, Any], where: str) -> None:
    low, high = values.get("min_sustained"), values.get("max_sustained")
    if low is not None and high is not None and low > high:
        raise CatalogError(f"{where}: min_sustained is above max_sustained; swap them")
    least, mean, most = (values.get(k) for k in ("min_seek", "avg_seek_read", "max_seek"))
    if least is not None and mean is not None and most is not None and not least <= mean <= most:
        raise CatalogError(f"{where}: seeks must grow min_seek ≤ avg_seek_read ≤ max_seek")
    for key in ("capacity", "rpm", "max_sustained", "read_bw", "write_bw", "ports", "lane_rate"):
        if values.get(key) == 0:
            raise CatalogError(f"{where}: {key} must be more than 0")


# ---------------------------------------------------------------- the catalog on disk


def catalog_root() -> Traversable:
    """The folder of catalog profiles: ``zsim/models`` in a wheel, ``models/`` in a checkout."""
    packaged = importlib.resources.files("zsim").joinpath("models")
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "models"
    if checkout.is_dir():
        return checkout
    raise CatalogError(
        "the hardware catalog is missing (no zsim/models in the install, no models/ beside the "
        "package); reinstall zsim"
    )


def _catalog_files() -> Iterator[Traversable]:
    for entry in sorted(catalog_root().iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            yield entry


def list_profiles(kind: str | None = None) -> list[str]:
    """Catalog names, sorted; only those of ``kind`` when given."""
    names = []
    for entry in _catalog_files():
        name = entry.name.removesuffix(".toml")
        if kind is None or load_profile(name).kind == kind:
            names.append(name)
    return names


def _read_toml(text: str, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise CatalogError(f"{where} is not valid TOML: {err}") from None
    except RecursionError:
        raise CatalogError(f"{where} is nested too deeply; flatten its arrays") from None


def _entry_is_file(entry: Traversable) -> bool:
    try:
        return entry.is_file()
    except (OSError, ValueError):
        return False


def load_profile(spec: str | Path | Mapping[str, Any]) -> Profile:
    """Load a profile by catalog name, by path to a TOML file, or from an inline table."""
    if isinstance(spec, Mapping):
        return parse_profile(spec)
    if not isinstance(spec, (str, Path)):
        raise CatalogError(
            f"load_profile: spec must be a catalog name, a path or a table, not "
            f"{type(spec).__name__}; give e.g. 'seagate-ironwolf-12tb'"
        )
    text = str(spec)
    if "\0" in text or len(text) > 4096:
        raise CatalogError(
            f"profile {text[:40]!r}… is not a catalog name or a path (too long or a NUL byte); "
            "run 'zsim models' to list the names"
        )
    if text.endswith(".toml") or "/" in text or isinstance(spec, Path):
        path = Path(text)
        if not path.exists():
            raise CatalogError(f"profile file {text!r} does not exist; give a path to a TOML file")
        try:
            raw = read_bytes(path, limit=TOML_LIMIT, what="profile file")
        except ZsimError as err:
            raise CatalogError(str(err)) from None
        try:
            decoded = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise CatalogError(
                f"profile file {text!r} is not UTF-8 text; give a TOML profile"
            ) from None
        data = _read_toml(decoded, str(path))
        return parse_profile(data, path.stem, where=str(path))
    entry = catalog_root().joinpath(f"{text}.toml")
    if len(text) > 200 or not _entry_is_file(entry):
        names = [e.name.removesuffix(".toml") for e in _catalog_files()]
        hint = difflib.get_close_matches(text, names, n=1)
        fix = f"did you mean {hint[0]!r}?" if hint else "run 'zsim models' to list them"
        raise CatalogError(f"no hardware profile named {text!r} in the catalog; {fix}")
    data = _read_toml(entry.read_text(encoding="utf-8"), f"models/{entry.name}")
    return parse_profile(data, text, require_sources=True, where=f"models/{entry.name}")
