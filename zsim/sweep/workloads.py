"""Named workloads for sweeps: presets, and user workloads from a TOML file.

A workload is a dict in the scenario TOML's ``[workload]`` form (``DESIGN.md`` §4: ``tool``,
``rw``, ``bs``, ``numjobs``, ``iodepth``, ...), plus the ``recordsize`` of the dataset a
planner would create for it. A sweep uses that recordsize for the workload's scenarios unless
the command line gives one (``--recordsize`` or ``--set pool.recordsize=...``), which then
applies to every workload.

Presets (working sets are twice the default 64 GiB of RAM, so reads reach the disks as in a
pool that holds more data than memory):

=================  =========================================================================
``vm-16k``         virtual machine disks: fio randrw 70 % reads, 16 KiB, 4 jobs × iodepth 16
                   (64 I/Os in flight from a few busy guests), recordsize 16K. 16 KiB is
                   OpenZFS's default ``volblocksize`` since 2.2 (it was 8 KiB); 70/30 is the
                   read/write mix storage vendors and reviewers use for virtualised and OLTP
                   load.
``db-8k-sync``     a database's synchronous page writes: fio randwrite 8 KiB with O_SYNC
                   (``sync = true``), 4 jobs × iodepth 1 (psync), recordsize 8K — PostgreSQL's
                   page (``BLCKSZ``) is 8 KiB, and each commit waits for the ZIL.
``media-1m-read``  streaming large files (video, media serving, restores): fio sequential read
                   1 MiB, 4 jobs × iodepth 4, recordsize 1M.
``backup-1m-write``  backup targets and ingest: fio sequential write 1 MiB, 4 jobs ×
                   iodepth 8, recordsize 1M.
``4k-randread``    the classic small-block read test: fio randread 4 KiB, 8 jobs × iodepth 8,
                   recordsize 4K — the shape of Ars Technica's "ZFS versus RAID" mirror
                   test that ``zsim validate`` uses
                   (``examples/scenarios/ars-mirrors-4k-randread.toml``).
``4k-randwrite``   the same shape, writing.
=================  =========================================================================

User workloads come from a TOML file of ``[workload.NAME]`` tables, each in the
``[workload]`` form, with two optional extra keys: ``recordsize`` (as above) and
``description``::

    [workload.vm-32k]
    description = "VMs on 32K zvols"
    recordsize = "32K"
    tool = "fio"
    rw = "randrw"
    rwmixread = 60
    bs = "32K"
    numjobs = 4
    iodepth = 32

A name in the file replaces a preset of the same name.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zsim.errors import ZsimError
from zsim.files import TOML_LIMIT, read_bytes
from zsim.scenario import scenario_from_dict
from zsim.units import KiB, parse_size

#: What a workload name may contain (it becomes part of the table's column names).
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class WorkloadSpec:
    """One named workload of a sweep.

    Attributes:
        name: the name used on the command line and in column names (``vm-16k``).
        workload: the ``[workload]`` table (TOML types: sizes as text such as ``"16K"``).
        recordsize: the dataset recordsize a planner would pick for it, as text (``"16K"``),
            or ``None`` to use the sweep's base recordsize (128 KiB unless given).
        description: what it stands for and where its shape comes from.
        source: ``"preset"`` or the path of the workloads file.
    """

    name: str
    workload: Mapping[str, Any]
    recordsize: str | None = None
    description: str = ""
    source: str = "preset"
    _bs: int = field(default=0, repr=False, compare=False)

    @property
    def block_size(self) -> int:
        """The workload's block size, bytes (``bs``)."""
        return self._bs or parse_size(self.workload["bs"])

    @property
    def streaming(self) -> bool:
        """True when bandwidth, not IOPS, is the figure that matters (bs ≥ 128 KiB)."""
        return self.block_size >= 128 * KiB

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "workload": dict(self.workload),
            "recordsize": self.recordsize,
            "description": self.description,
            "source": self.source,
        }


def _preset(name: str, recordsize: str, description: str, **workload: Any) -> WorkloadSpec:
    return WorkloadSpec(name, {"tool": "fio", **workload}, recordsize, description)


PRESETS: dict[str, WorkloadSpec] = {
    w.name: w
    for w in (
        _preset(
            "vm-16k",
            "16K",
            "virtual machines: 16K random, 70% reads, 4 jobs x iodepth 16 (OpenZFS 2.2+ "
            "default volblocksize 16K; the usual 70/30 virtualisation mix)",
            rw="randrw",
            rwmixread=70,
            bs="16K",
            numjobs=4,
            iodepth=16,
            size="32GiB",
        ),
        _preset(
            "db-8k-sync",
            "8K",
            "database commits: 8K random O_SYNC writes, 4 jobs x iodepth 1 (PostgreSQL's 8 KiB "
            "page; every write waits for the ZIL)",
            rw="randwrite",
            bs="8K",
            numjobs=4,
            iodepth=1,
            ioengine="psync",
            sync=True,
            size="8GiB",
        ),
        _preset(
            "media-1m-read",
            "1M",
            "streaming reads of large files: 1M sequential read, 4 jobs x iodepth 4",
            rw="read",
            bs="1M",
            numjobs=4,
            iodepth=4,
            size="32GiB",
        ),
        _preset(
            "backup-1m-write",
            "1M",
            "backup ingest: 1M sequential write, 4 jobs x iodepth 8",
            rw="write",
            bs="1M",
            numjobs=4,
            iodepth=8,
            size="32GiB",
        ),
        _preset(
            "4k-randread",
            "4K",
            "small random reads: 4K, 8 jobs x iodepth 8 (the Ars Technica mirror test's shape)",
            rw="randread",
            bs="4K",
            numjobs=8,
            iodepth=8,
            size="16GiB",
        ),
        _preset(
            "4k-randwrite",
            "4K",
            "small random writes: 4K, 8 jobs x iodepth 8",
            rw="randwrite",
            bs="4K",
            numjobs=8,
            iodepth=8,
            size="16GiB",
        ),
    )
}

#: A disk used only to validate workload tables (any valid profile would do).
_CHECK_DISK = {"kind": "hdd", "capacity": "1TB", "rpm": 7200, "max_sustained": "100MB/s"}


def check_workload(spec: WorkloadSpec, where: str) -> WorkloadSpec:
    """Validate ``spec``'s table with the scenario rules; returns it with ``bs`` parsed.

    Raises :class:`~zsim.errors.ZsimError` starting with ``where``.
    """
    if not NAME_PATTERN.match(spec.name):
        raise ZsimError(
            f"{where}: workload name {spec.name!r} may hold only letters, digits, '-' and '_' "
            f"(it names table columns); rename it, e.g. 'vm-32k'"
        )
    pool: dict[str, Any] = {"layout": "stripe 1"}
    if spec.recordsize is not None:
        pool["recordsize"] = spec.recordsize
    sc = scenario_from_dict(
        {"hardware": {"disk": _CHECK_DISK}, "pool": pool, "workload": dict(spec.workload)},
        source=where,
    )
    if sc.workload.tool == "trace":
        raise ZsimError(
            f"{where}: trace replay cannot be swept over layouts (it drives one disk); use "
            f'tool = "fio" or "dd"'
        )
    bs = sc.workload.bs or 0
    return WorkloadSpec(
        spec.name, spec.workload, spec.recordsize, spec.description, spec.source, _bs=bs
    )


def load_workloads_file(path: str | Path) -> dict[str, WorkloadSpec]:
    """Read ``[workload.NAME]`` tables from a TOML file (module docstring), validated."""
    file = Path(path)
    where = str(path)
    if not file.exists():
        raise ZsimError(
            f"workloads file {where!r} does not exist; give a TOML file of [workload.NAME] tables"
        )
    try:
        data = tomllib.loads(read_bytes(file, limit=TOML_LIMIT, what="workloads file").decode())
    except tomllib.TOMLDecodeError as err:
        raise ZsimError(f"{where}: not valid TOML: {err}; fix the syntax there") from None
    except RecursionError:
        raise ZsimError(f"{where}: nested too deeply; flatten its arrays") from None
    except UnicodeDecodeError:
        raise ZsimError(f"{where}: not UTF-8 text; save it as UTF-8 TOML") from None
    extra = [k for k in data if k != "workload"]
    tables = data.get("workload")
    if extra or not isinstance(tables, Mapping) or not tables:
        raise ZsimError(
            f"{where}: a workloads file holds only [workload.NAME] tables (e.g. "
            f"[workload.vm-32k] with tool, rw, bs, ...)"
            + (f"; remove {extra[0]!r}" if extra else "")
        )
    out: dict[str, WorkloadSpec] = {}
    for name, table in tables.items():
        here = f"{where} [workload.{name}]"
        if not isinstance(table, Mapping):
            raise ZsimError(f"{here}: expected a table of workload keys (tool, rw, bs, ...)")
        body = dict(table)
        recordsize = body.pop("recordsize", None)
        description = body.pop("description", "")
        if recordsize is not None and not isinstance(recordsize, str | int):
            raise ZsimError(f'{here}: recordsize = {recordsize!r}: expected a size like "16K"')
        if not isinstance(description, str):
            raise ZsimError(f"{here}: description must be text")
        spec = WorkloadSpec(
            name,
            body,
            None if recordsize is None else str(recordsize),
            description,
            where,
        )
        out[name] = check_workload(spec, here)
    return out


def resolve_workloads(
    names: Iterable[str] | None, workloads_file: str | Path | None = None
) -> list[WorkloadSpec]:
    """The workloads of a sweep, in the order named.

    ``names``: preset or file names; ``None`` (or empty) means every workload of the file
    when one is given, else every preset. Unknown names are errors that list the known ones.
    """
    available: dict[str, WorkloadSpec] = {
        n: check_workload(w, f"preset {n}") for n, w in PRESETS.items()
    }
    from_file = load_workloads_file(workloads_file) if workloads_file is not None else {}
    available.update(from_file)
    chosen = [n.strip() for n in (names or []) if n.strip()]
    if not chosen:
        chosen = list(from_file or PRESETS)
    out: list[WorkloadSpec] = []
    for name in dict.fromkeys(chosen):
        if name not in available:
            hint = difflib.get_close_matches(name, list(available), n=1)
            guess = f"did you mean {hint[0]!r}? " if hint else ""
            raise ZsimError(
                f"unknown workload {name!r}; {guess}choose from {', '.join(available)}, or "
                f"define it in a --workloads-file"
            )
        out.append(available[name])
    return out
