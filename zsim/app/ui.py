"""The app's pure view helpers, shared by every page: formatting, downloads' contents,
scenario TOML round trips and the sidebar's catalog lists.

Nothing here imports Streamlit (an optional extra, ``zsim[app]``): the widgets, the error
guard, the caches and the query-string sync that use it are in
:mod:`zsim.app.pages.widgets`.
"""

from __future__ import annotations

import csv
import io
import json
import math
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

from zsim.hardware.catalog import list_profiles, load_profile
from zsim.scenario import scenario_from_dict
from zsim.units import MB, format_binary_size, format_decimal_size, format_time

# ---------------------------------------------------------------- formatting


def fmt_size(nbytes: float | None) -> str:
    """``68.1 TB (61.94 TiB)``: both systems, always labelled."""
    if nbytes is None:
        return "—"
    return f"{format_decimal_size(nbytes)} ({format_binary_size(nbytes)})"


def fmt_rate(bytes_per_s: float | None) -> str:
    if bytes_per_s is None:
        return "—"
    return f"{bytes_per_s / MB:,.1f} MB/s"


def fmt_iops(iops: float | None) -> str:
    return "—" if iops is None else f"{iops:,.0f}"


def fmt_time(seconds: float | None) -> str:
    return "—" if seconds is None or not math.isfinite(seconds) else format_time(seconds)


def fmt_prob(p: float | None) -> str:
    return "—" if p is None else f"{p:.2e}"


def fmt_usd(x: float | None) -> str:
    return "—" if x is None else f"${x:,.0f}"


# ---------------------------------------------------------------- scenarios as TOML


def to_toml_text(scenario: Mapping[str, Any]) -> str:
    """A scenario dict as TOML text (to be read back by :func:`scenario_from_toml`)."""
    return str(scenario_from_dict(dict(scenario), source="the app's scenario").to_toml())


def scenario_from_toml(text: str) -> Any:
    return scenario_from_dict(tomllib.loads(text), source="the app's scenario")


# ---------------------------------------------------------------- downloads


def to_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    cols: list[str] = []
    for r in rows:
        cols.extend(k for k in r if k not in cols)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
    return buf.getvalue()


def to_json(data: Any) -> str:
    def default(x: Any) -> Any:
        if hasattr(x, "to_dict"):
            return x.to_dict()
        if isinstance(x, tuple | set):
            return list(x)
        return str(x)

    return json.dumps(data, indent=2, default=default, allow_nan=False) + "\n"


# ---------------------------------------------------------------- the design sidebar's lists


def catalog_names() -> tuple[list[str], list[str], list[str]]:
    """Catalog names: data disks (HDD/SSD/NVMe), flash devices (log/cache/special), HBAs."""
    disks, flash, hbas = [], [], []
    for name in list_profiles():
        kind = load_profile(name).kind
        if kind == "hba":
            hbas.append(name)
        else:
            disks.append(name)
            if kind in ("ssd", "nvme"):
                flash.append(name)
    return disks, flash, hbas


#: the custom disk's fields and their defaults (an IronWolf-like 12 TB 7200 rpm drive)
CUSTOM_DISK_DEFAULTS: dict[str, Any] = {
    "kind": "hdd",
    "capacity": "12TB",
    "rpm": 7200,
    "max_sustained": "210MB/s",
    "min_sustained": "100MB/s",
    "avg_seek": "8.5ms",
    "read_bw": "550MB/s",
    "write_bw": "520MB/s",
    "read_iops": 98000,
    "write_iops": 88000,
}
HDD_FIELDS = ("capacity", "rpm", "max_sustained", "min_sustained", "avg_seek")
FLASH_FIELDS = ("capacity", "read_bw", "write_bw", "read_iops", "write_iops")
