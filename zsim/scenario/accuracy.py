"""How sure an answer is: the class of a prediction and the band of errors measured on it.

It lives with the scenario (a class is a function of the scenario alone) so that
:func:`zsim.simulate` can attach the band to every result; :mod:`zsim.validation.accuracy`
re-exports it beside the report that writes the residuals.

Every validation point (:mod:`zsim.validation.report`) is *classed* by the scenario it was
predicted from, with :func:`prediction_class`: device kind (HDD, SSD, NVMe) × layout kind
(mirror, raidz, dRAID, stripe/raw, md RAID, btrfs, ZFS on md; "degraded" when a device is
missing) × workload kind (streaming write, streaming read, random write, random read, mixed,
sync write, trace replay), e.g. ``"HDD raidz streaming write"``. ``zsim validate --all``
writes each class's signed relative errors, (zsim − measured) ÷ measured, to the shipped
residuals file ``accuracy.toml`` (``calibration/reference``, ``zsim/reference`` in the wheel).

:func:`accuracy_for` gives a new scenario the band of its class: the 10th and 90th
percentiles of those errors (linear interpolation between order statistics, numpy's
default), so about 8 in 10 validation points of the class fell inside it. With fewer than
:data:`MIN_POINTS` points the band is not given (``rel_error_p10``/``p90`` None): a band from
one or two points would be invented, not measured.
"""

from __future__ import annotations

import functools
import importlib.resources
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import numpy as np

from zsim.layout.grammar import parse_layout
from zsim.layout.tree import BtrfsArray, MdArray, RawDevices, ZfsLayout, ZpoolOnBlock
from zsim.scenario.schema import Scenario

ACCURACY_FILE = "accuracy.toml"
"""The residuals file's name under :func:`zsim.validation.common.reference_root`."""
ACCURACY_ENV = "ZSIM_ACCURACY_FILE"
"""An environment variable naming another residuals file (tests, or a user's own)."""


def reference_root() -> Traversable:
    """``calibration/reference`` of the checkout, or ``zsim/reference`` inside the wheel
    (:func:`zsim.validation.common.reference_root` is this function)."""
    packaged = importlib.resources.files("zsim").joinpath("reference")
    if packaged.is_dir():
        return packaged
    # zsim/scenario/accuracy.py: parents[2] is the checkout's root
    return Path(__file__).resolve().parents[2] / "calibration" / "reference"


MIN_POINTS = 5
"""A class needs this many validation points before it gets a band."""

DEVICE_KINDS = {"hdd": "HDD", "ssd": "SSD", "nvme": "NVMe"}
LAYOUT_KINDS = ("mirror", "raidz", "dRAID", "stripe/raw", "md RAID", "btrfs", "ZFS on md")
WORKLOAD_KINDS = (
    "streaming write",
    "streaming read",
    "random write",
    "random read",
    "mixed",
    "sync write",
    "trace replay",
)
_VDEV_KINDS = {"mirror": "mirror", "raidz": "raidz", "draid": "dRAID", "disk": "stripe/raw"}


def device_kind(sc: Scenario) -> str:
    """HDD, SSD or NVMe: the kind of the pool's disks."""
    return DEVICE_KINDS.get(sc.hardware.disk.kind, sc.hardware.disk.kind)


def layout_kind(sc: Scenario) -> str:
    """mirror, raidz, dRAID, stripe/raw (single-disk vdevs or bare devices), md RAID,
    btrfs or ZFS on md; a ZFS pool whose data vdevs mix kinds takes its first vdev's kind.
    " degraded" is added when ``pool.failed`` names a missing device."""
    layout = parse_layout(sc.pool.layout)
    kind: str
    if isinstance(layout, ZfsLayout):
        data = layout.data_vdevs
        kind = _VDEV_KINDS[data[0].kind] if data else "stripe/raw"
    elif isinstance(layout, MdArray):
        kind = "md RAID"
    elif isinstance(layout, BtrfsArray):
        kind = "btrfs"
    elif isinstance(layout, ZpoolOnBlock):
        kind = "ZFS on md"
    else:
        assert isinstance(layout, RawDevices)
        kind = "stripe/raw"
    return f"{kind} degraded" if sc.pool.failed else kind


def workload_kind(sc: Scenario) -> str:
    """streaming write/read (fio ``write``/``read``, dd), random write/read (fio
    ``randwrite``/``randread``), mixed (``randrw``/``readwrite``), sync write (a write-only
    job with O_SYNC or fsync, or ``sync=always``; not with ``sync=disabled``), trace replay."""
    w = sc.workload
    if w.tool == "trace":
        return "trace replay"
    if w.tool == "dd":
        return f"streaming {w.direction}"
    rw = w.rw or ""
    if rw in ("randrw", "readwrite"):
        return "mixed"
    writes = rw in ("write", "randwrite")
    synced = (w.sync or w.fsync > 0 or sc.pool.sync == "always") and sc.pool.sync != "disabled"
    if writes and synced:
        return "sync write"
    pattern = "random" if rw.startswith("rand") else "streaming"
    return f"{pattern} {'write' if writes else 'read'}"


def prediction_class(sc: Scenario) -> str:
    """The validation class of a prediction on ``sc``, e.g. ``"HDD raidz streaming write"``."""
    return f"{device_kind(sc)} {layout_kind(sc)} {workload_kind(sc)}"


def resilver_class(sc: Scenario) -> str:
    """The class of a resilver-time prediction on ``sc``, e.g. ``"HDD dRAID resilver"``."""
    return f"{device_kind(sc)} {layout_kind(sc)} resilver"


def band(errors: Iterable[float]) -> tuple[float, float] | None:
    """(p10, p90) of signed relative errors; None with fewer than :data:`MIN_POINTS`."""
    values = np.asarray(list(errors), dtype=float)
    if len(values) < MIN_POINTS:
        return None
    p10, p90 = np.percentile(values, [10, 90])
    return float(p10), float(p90)


@dataclass(frozen=True)
class Accuracy:
    """The band of one prediction: its class, how many validation points the class has and,
    with at least :data:`MIN_POINTS` of them, the 10th and 90th percentiles of their signed
    relative errors (None otherwise). ``engine``: whose errors they are ("des": zsim's
    engine; "baseline": the rule of thumb)."""

    klass: str
    points: int
    rel_error_p10: float | None
    rel_error_p90: float | None
    engine: str = "des"

    @property
    def has_band(self) -> bool:
        return self.rel_error_p10 is not None and self.rel_error_p90 is not None

    def to_dict(self) -> dict[str, Any]:
        """``{class, points, rel_error_p10, rel_error_p90, engine}`` (DESIGN.md §5)."""
        return {
            "class": self.klass,
            "points": self.points,
            "rel_error_p10": self.rel_error_p10,
            "rel_error_p90": self.rel_error_p90,
            "engine": self.engine,
        }

    def text(self) -> str:
        """As :func:`accuracy_text`."""
        return accuracy_text(self.to_dict())


def accuracy_text(a: Mapping[str, Any]) -> str:
    """An accuracy dict (:meth:`Accuracy.to_dict`, the JSON's ``accuracy``) as text:
    ``−20…+15 % (p10…p90 of zsim's error on 31 validation points of HDD raidz streaming
    read)``, or ``no band: 3 validation points of HDD raidz streaming read``."""
    if a["rel_error_p10"] is None or a["rel_error_p90"] is None:
        return f"no band: {a['points']} validation points of {a['class']}"
    whose = "the rule of thumb's" if a.get("engine") == "baseline" else "zsim's"
    lo, hi = (_pct(a[k]) for k in ("rel_error_p10", "rel_error_p90"))
    on = f"{a['points']} validation points of {a['class']}"
    return f"{lo}…{hi} % (p10…p90 of {whose} error on {on})"


def _pct(x: float) -> str:
    """A signed whole percent with a true minus sign: ``−20``, ``+15``, ``0``."""
    n = round(100 * x)
    return "0" if n == 0 else f"{'+' if n > 0 else '−'}{abs(n)}"


def residuals_path() -> Traversable:
    """The residuals file read by :func:`accuracy_for`: ``$ZSIM_ACCURACY_FILE`` when set,
    else ``accuracy.toml`` of the bundled reference data."""
    given = os.environ.get(ACCURACY_ENV)
    return Path(given) if given else reference_root().joinpath(ACCURACY_FILE)


@functools.lru_cache(maxsize=8)
def _load(text: str) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in tomllib.loads(text).get("class", [])}


def load_residuals(path: Traversable | None = None) -> dict[str, dict[str, Any]] | None:
    """The residuals file's classes by name; None when there is no such file."""
    source = residuals_path() if path is None else path
    if not source.is_file():
        return None
    return _load(source.read_text(encoding="utf-8"))


def accuracy_of_class(
    klass: str, classes: Mapping[str, Mapping[str, Any]] | None, engine: str = "des"
) -> Accuracy:
    """The :class:`Accuracy` of ``klass`` from the residuals file's classes (None or a class
    it lacks: 0 points, no band). ``engine`` "baseline" reads the rule of thumb's errors."""
    entry = (classes or {}).get(klass)
    if entry is None:
        return Accuracy(klass, 0, None, None, engine)
    key = "baseline_error" if engine == "baseline" else "error"
    errors = [float(r[key]) for r in entry.get("residuals", []) if key in r]
    found = band(errors)
    if found is None:
        return Accuracy(klass, len(errors), None, None, engine)
    return Accuracy(klass, len(errors), found[0], found[1], engine)


def accuracy_for(
    sc: Scenario, engine: str = "des", path: Traversable | None = None
) -> Accuracy | None:
    """The band of a prediction on ``sc`` by ``engine`` (the analytic engine, which follows
    the DES, takes the DES band; the rule of thumb its own errors). None only when the
    scenario has no class (a device kind zsim does not know)."""
    if sc.hardware.disk.kind not in DEVICE_KINDS:
        return None
    whose = "baseline" if engine == "baseline" else "des"
    return accuracy_of_class(prediction_class(sc), load_residuals(path), whose)
