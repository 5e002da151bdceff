"""Read measurement files of any supported kind into :class:`Measurement` objects.

Accepted inputs (each may be given as a file, or a folder that is searched for them):

* results stored by ``zsim calibrate run`` (``results/<step>.json`` with ``"zsim_result"``):
  the fio JSON or dd text inside, plus the plan's facts (purpose, device size, rotational);
* fio output: ``--output-format=json`` or ``json+``, alone or inside fio's text
  (``json,normal``), fio 2.x and 3.x (:mod:`zsim.calibrate.fio`);
* dd's summary (GNU or BSD, :mod:`zsim.calibrate.dd`): the direction and block size come
  from the file name (``...read...``/``...write...``) and the record count;
* ``zpool status`` scan lines, ``zpool iostat -v`` and ``arcstat`` logs are recognised and
  kept aside (:class:`Loaded`): they describe pools, not fio jobs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from zsim.calibrate import dd, fio, zpool
from zsim.calibrate.measurement import Measurement, ParseError
from zsim.errors import ZsimError
from zsim.files import read_bytes
from zsim.units import MiB, parse_fio_size

SUFFIXES = (".json", ".log", ".txt", ".out")
MAX_BYTES = 64 << 20
"""Largest measurement file read (bytes): fio's json+ of a long run is a few MB; anything
far larger is not a measurement summary."""


@dataclass
class Loaded:
    """Everything read: fio/dd measurements, and pool-level logs by file."""

    measurements: list[Measurement] = field(default_factory=list)
    scans: dict[str, Any] = field(default_factory=dict)
    iostat: dict[str, Any] = field(default_factory=dict)
    arcstat: dict[str, Any] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)


def _files(paths: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            results = p / "results"
            base = results if (p / "plan.toml").is_file() and results.is_dir() else p
            found = sorted(f for f in base.rglob("*") if f.is_file() and f.suffix in SUFFIXES)
            if not found:
                raise ZsimError(f"{p}: no measurement files (.json, .log, .txt) in this folder")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise ZsimError(f"{raw}: no such file or folder; give fio/dd result files")
    return out


def load_results(paths: Iterable[str | Path]) -> Loaded:
    """Read every file (folders searched); a file of no known kind is an error naming it."""
    loaded = Loaded()
    for path in _files(paths):
        text = read_bytes(path, limit=MAX_BYTES, what="result file").decode(
            "utf-8", errors="replace"
        )
        loaded.files.append(str(path))
        _load_one(path, text, loaded)
    return loaded


def _load_one(path: Path, text: str, loaded: Loaded) -> None:
    source = str(path)
    head = text.lstrip()[:4096]
    if head.startswith("{") and '"zsim_result"' in head:
        loaded.measurements.extend(_wrapped(path, text))
    elif '"fio version"' in text or '"fio_version"' in text:
        loaded.measurements.extend(fio.parse_fio_text(text, source))
    elif re.search(r"\bbytes\b.*\b(copied|transferred)\b", text):
        result = dd.parse_dd_text(text, source)
        loaded.measurements.append(_dd_from_name(path, result))
    elif re.search(r"^\s*scan:", text, re.M) or "resilvered" in text or "scrub repaired" in text:
        loaded.scans[source] = zpool.parse_scan(text, source)
    elif re.search(r"capacity\s+operations\s+bandwidth", text):
        loaded.iostat[source] = zpool.parse_zpool_iostat(text, source)
    elif re.search(r"^\s*time\s+.*\bhits\b", text, re.M) or "arcsz" in text:
        loaded.arcstat[source] = zpool.parse_arcstat(text, source)
    else:
        raise ParseError(
            source,
            1,
            "not a result zsim reads: expected fio JSON (--output-format=json), dd's summary, "
            "zpool status/iostat or arcstat output, or a 'zsim calibrate run' result",
        )


def _dd_from_name(path: Path, result: Any) -> Measurement:
    name = path.stem.lower()
    if "read" in name:
        direction = "read"
    elif "write" in name:
        direction = "write"
    else:
        raise ZsimError(
            f"{path}: a dd summary does not say whether it read or wrote; name the file "
            f"...read... or ...write..., or store it with 'zsim calibrate run'"
        )
    records = result.records_out_full or result.records_in_full
    bs = result.bytes // records if records else MiB
    return dd.dd_measurement(result, direction=direction, bs=bs, source=str(path), name=path.stem)


def _wrapped(path: Path, text: str) -> list[Measurement]:
    """A ``zsim calibrate run`` result: the tool output plus the plan's facts."""
    source = str(path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise ParseError(source, err.lineno, f"truncated or invalid JSON ({err.msg})") from None
    if not isinstance(doc, dict):
        raise ParseError(source, 1, "expected a JSON object written by 'zsim calibrate run'")
    if doc.get("returncode", 0) != 0:
        return []  # a failed step: nothing was measured (run stores it so it can resume)
    plan = doc.get("plan") or {}
    purpose = str(doc.get("purpose") or "")
    facts: dict[str, Any] = {"purpose": purpose}
    if isinstance(plan.get("device_size"), int) and plan.get("target_type") == "block":
        facts["target_bytes"] = plan["device_size"]
    elif isinstance(plan.get("size"), int):
        facts["target_bytes"] = plan["size"]
    if isinstance(plan.get("rotational"), bool):
        facts["rotational"] = plan["rotational"]
    if "fio_output" in doc:
        ms = fio.parse_fio_text(json.dumps(doc["fio_output"]), source)
    elif "fio_text" in doc:
        ms = fio.parse_fio_text(str(doc["fio_text"]), source)
    elif "dd_text" in doc:
        result = dd.parse_dd_text(str(doc["dd_text"]), source)
        argv = [str(a) for a in doc.get("command") or []]
        bs = next((a[3:] for a in argv if a.startswith("bs=")), "1M")
        direction = "read" if purpose == "dd-read" else "write"
        measurement = dd.dd_measurement(
            result,
            direction=direction,
            bs=parse_fio_size(bs),
            source=source,
            name=str(doc.get("step") or path.stem),
        )
        flags = {a.split("=", 1)[1] for a in argv if a.startswith(("iflag=", "oflag="))}
        ms = [replace(measurement, direct=any("direct" in f.split(",") for f in flags))]
    else:
        raise ParseError(source, 1, "a zsim result without fio_output, fio_text or dd_text")
    return [replace(m, **facts) for m in ms]
