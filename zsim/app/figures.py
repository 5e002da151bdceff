"""The app's figures for one workload, and what each one assumes — without Streamlit.

A sidebar change must answer in seconds, so the pages never start the discrete-event engine
on their own: :func:`fast_figure` asks the analytic engine, and where it declines
(:class:`zsim.analytic.validity.OutOfRange`) gives the planners' rule of thumb
(:mod:`zsim.baseline`), labelled as such, with the analytic engine's reason. A DES result the
planner asked for (its button) replaces either when given.

Every figure says what it assumes (:func:`assumptions`): jobs × queue depth, the working set
against the ARC, the ARC's hit share, the read/write split, which engine answered and what
its ``limit`` means in words (:func:`limit_words`), the busiest resource named as a class
(:func:`busiest`: "all 8 disks ~97 % busy", not ``disk:sda``). No cell is ``None``: a value
that does not exist is a short reason (:data:`NOT_MODELLED`, …).

Units: SI base units in, text out (MB = 10^6 bytes, GiB = 2^30 bytes, ms).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zsim.analytic.validity import OutOfRange, direct_io
from zsim.scenario.accuracy import accuracy_text
from zsim.units import MB, format_binary_size
from zsim.zfs.arc import arc_data_bytes
from zsim.zfs.version import parse_zfs_version

#: the engines as the pages name them
ENGINE_LABELS = {
    "analytic": "analytic engine",
    "des": "discrete-event simulation",
    "baseline": "rule of thumb (not zsim's model)",
}

#: what each DES/analytic ``limit`` word means (zsim.des.engine.Engine._limit: a resource
#: ≥ 85 % busy, else the write throttle, the intent log, the clients' CPU, else the clients)
LIMIT_WORDS: dict[str, str] = {
    "client": "the jobs' own queue depth (too few I/Os in flight to load the pool), not a disk",
    "txg": "the write throttle: writers wait for the txg sync on the disks",
    "zil": "the intent log: sync writes wait for their log commits",
    "cpu": "the CPU cores (per-call work, checksums, compression, parity)",
    "memory": "the memory bus (ZFS's copies and checksums of the data)",
    "hba": "the HBA's PCIe uplink or its I/O rate",
    "expander": "the SAS expander's bandwidth",
}

#: the pages' words for a value that does not exist (never "None", "nan" or "error")
NOT_MODELLED = "not modelled"


def short_reason(text: str, limit: int = 90) -> str:
    """The analytic engine's reason for declining, short enough for a table cell: without the
    exception's "outside … range:" prefix and "; use --engine des" suffix, the clause before
    " — ", parentheses dropped when still long, and cut at a word with "…"."""
    t = text.strip()
    t = re.sub(r"^outside the analytic engine's validity range:\s*", "", t)
    t = re.sub(r";\s*use --engine des\.?$", "", t)
    t = t.split(" — ")[0].strip()
    if len(t) > limit:
        t = re.sub(r"\s*\([^)]*\)", "", t)
    if len(t) > limit:
        t = t[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return t


def fast_answer(sc: Any, simulate: Callable[..., Any]) -> tuple[Any, str | None]:
    """The analytic engine's :class:`zsim.SimResult` for ``sc`` and ``None``, or — where it
    declines — the rule of thumb's and the analytic engine's reason. Never the DES.

    ``simulate(sc, engine=...)`` is :func:`zsim.simulate` (tests pass a stand-in). Other
    errors (bad input) propagate: the page shows them."""
    try:
        return simulate(sc, engine="analytic"), None
    except OutOfRange as err:
        return simulate(sc, engine="baseline"), str(err)


# ---------------------------------------------------------------- the busiest resource


def _group(name: str) -> str:
    """A utilization key's class: ``disk:sda`` → ``disk``, ``link:sdb`` → ``link``."""
    return name.split(":", 1)[0]


def busiest(util: Mapping[str, float], near: float = 0.05) -> str:
    """The busiest class of resource in words: ``"all 8 disks ~97 % busy"``, ``"2 of 24
    disks ~88 % busy"``, ``"CPU ~100 % busy"``. Members of a class within ``near`` of its
    busiest count as equally busy. ``"no utilization reported"`` for an empty map (the rule
    of thumb reports none)."""
    if not util:
        return "no utilization reported (the rule of thumb models no queues)"
    groups: dict[str, list[float]] = {}
    for name, value in util.items():
        groups.setdefault(_group(name), []).append(float(value))
    kind, values = max(groups.items(), key=lambda kv: max(kv[1]))
    top = max(values)
    pct = f"~{round(100 * top)} % busy"
    n, total = sum(1 for v in values if v >= top - near), len(values)
    noun = {"disk": "disk", "link": "disk link"}.get(kind)
    if noun is None:
        return f"{ {'cpu': 'CPU', 'memory': 'memory bus', 'hba': 'HBA'}.get(kind, kind) } {pct}"
    plural = f"{noun}s" if total != 1 else noun
    if n == total:
        return f"all {total} {plural} {pct}" if total > 1 else f"the {noun} {pct}"
    return f"{n} of {total} {plural} {pct}"


def limit_words(limit: str, util: Mapping[str, float], engine: str) -> str:
    """What ``limit`` means, in words. A device limit names its class with
    :func:`busiest`; the rule of thumb's "limit" is its own formula."""
    if engine == "baseline":
        return "rule of thumb: " + re.sub(r"^rule[- ]of[- ]thumb:\s*", "", limit)
    if ":" in limit or limit not in LIMIT_WORDS:
        return busiest(util)
    words = LIMIT_WORDS[limit]
    if limit in ("cpu", "memory", "hba", "expander") and util:
        return f"{words} — {busiest(util)}"
    return words


#: the resilver's own ``limit`` words (zsim.resilver.run: a resource ≥ 85 % busy, else these)
RESILVER_LIMIT_WORDS: dict[str, str] = {
    "scan": "the scan's own pacing (no resource ≥ 85 % busy)",
    "foreground": "the workload running beside it",
    "no-redundancy": "no rebuild: the disk's data is lost (no redundancy)",
    "nothing-allocated": "nothing to rebuild: no data on the disk",
}


#: the same, in a metric's few words
RESILVER_LIMIT_SHORT: dict[str, str] = {
    "scan": "scan pacing",
    "foreground": "the workload",
    "no-redundancy": "no redundancy",
    "nothing-allocated": "no data",
}


def resilver_limit_short(limit: str, disk: str) -> str:
    """:func:`resilver_limit_words` in a metric's few words: "the new disk", "surviving
    disks", "CPU", "scan pacing"."""
    if limit in RESILVER_LIMIT_SHORT:
        return RESILVER_LIMIT_SHORT[limit]
    if limit.startswith("disk:"):
        return "the new disk" if limit == f"disk:{disk}" else "surviving disks"
    return {"cpu": "CPU", "memory": "memory bus", "hba": "HBA"}.get(limit, limit.split(":")[0])


def resilver_limit_words(limit: str, util: Mapping[str, float], disk: str) -> str:
    """What bounds a resilver, in words: the busiest class of resource
    (:func:`busiest`) and whether the busiest disk is the one being rebuilt (``disk``: written)
    or a surviving one (read); or the resilver's own words (:data:`RESILVER_LIMIT_WORDS`)."""
    if limit in RESILVER_LIMIT_WORDS:
        return RESILVER_LIMIT_WORDS[limit]
    if limit.startswith("disk:"):
        side = "the new disk, written" if limit == f"disk:{disk}" else "surviving disks, read"
        return f"{busiest(util)} ({side})" if util else side
    return limit_words(limit, util, "des")


# ---------------------------------------------------------------- assumptions


@dataclass(frozen=True)
class Assumptions:
    """What one figure assumes, as text the pages show (and the report prints)."""

    jobs: str  # "4 jobs × iodepth 8"
    working_set: str  # "512 GiB of files against ~45 GiB of ARC for data (64 GiB RAM)"
    arc_hits: str  # "37 % of reads hit the ARC" / reason
    split: str  # "70 % reads, 30 % writes (by I/O count)"
    engine: str  # which engine answered, and why not the analytic one
    limit: str  # the limit in words
    accuracy: str  # the accuracy band with its class of prediction and points

    def to_dict(self) -> dict[str, str]:
        return {
            "jobs × queue depth": self.jobs,
            "working set vs ARC": self.working_set,
            "ARC hits": self.arc_hits,
            "read/write split": self.split,
            "engine": self.engine,
            "limited by": self.limit,
            "accuracy": self.accuracy,
        }


def assumptions(sc: Any, res: Any, declined: str | None = None) -> Assumptions:
    """The assumptions behind ``res`` (a :class:`zsim.SimResult`) of scenario ``sc``.

    The ARC's size for data is :func:`zsim.zfs.arc.arc_data_bytes` (OpenZFS's default
    ``zfs_arc_max`` of the RAM by release, ``arc_c_max`` in ``module/os/linux/zfs/arc_os.c``,
    times the data share) — what both engines use; the hit share is the engine's own
    (``details["arc_hit_ratio"]``)."""
    w, hw = sc.workload, sc.hardware
    if w.tool == "fio":
        jobs = f"{w.numjobs} jobs × iodepth {w.iodepth}"
        if w.iodepth > 1 and not direct_io(sc):
            jobs += " (buffered: each job's calls go one at a time, as zsim models them)"
        files = w.numjobs * w.size
    elif w.tool == "dd":
        jobs = f"{w.streams} dd stream(s), one call in flight each"
        files = w.streams * w.bytes
    else:
        jobs = "trace replay, queue depth 1"
        files = 0
    version = parse_zfs_version(hw.zfs_version)
    ratio = sc.pool.compress_ratio if sc.pool.compression != "off" else 1.0
    arc = arc_data_bytes(int(hw.ram), version, ratio)
    working = (
        f"{format_binary_size(files)} of files against ~{format_binary_size(arc)} of ARC for "
        f"data ({format_binary_size(int(hw.ram))} RAM)"
        if files
        else "the trace's own blocks"
    )
    hit = (res.details or {}).get("arc_hit_ratio")
    reads = res.read.iops > 0
    if res.engine == "baseline":
        arc_hits = "not counted: the rule of thumb ignores the ARC"
    elif not reads:
        arc_hits = "no reads (writes only)"
    elif hit is None:
        arc_hits = NOT_MODELLED
    else:
        arc_hits = f"{round(100 * hit)} % of reads hit the ARC"
    total = res.read.iops + res.write.iops
    if total > 0:
        r = res.read.iops / total
        split = f"{round(100 * r)} % reads, {round(100 * (1 - r))} % writes (by I/O count)"
    else:
        split = "no I/O completed"
    engine = ENGINE_LABELS.get(res.engine, res.engine)
    if res.engine == "des" and res.ci_rel is not None:
        engine += f" (seed {res.seed}, 95 % CI ±{res.ci_rel:.1%})"
    if declined:
        engine += f"; the analytic engine declines: {short_reason(declined)}"
    return Assumptions(
        jobs=jobs,
        working_set=working,
        arc_hits=arc_hits,
        split=split,
        engine=engine,
        limit=limit_words(res.limit, res.utilization or {}, res.engine),
        accuracy=(
            accuracy_text(res.accuracy)
            if res.accuracy
            else "no band: zsim has no validation data for this device kind"
        ),
    )


# ---------------------------------------------------------------- one workload's row


def _ms(seconds: float | None, why: str) -> str:
    return why if seconds is None or seconds <= 0 else f"{seconds * 1e3:,.2f}"


def band_text(res: Any) -> str:
    """The accuracy band of ``res`` (``SimResult.accuracy``) in short: ``"−20…+15 %"`` or
    ``"no band (3 validation points)"``; the long form (with the class of prediction) is
    :func:`zsim.scenario.accuracy.accuracy_text`, in the assumptions."""
    a = res.accuracy
    if not a:
        return "no band (device kind without validation data)"
    if a.get("rel_error_p10") is None or a.get("rel_error_p90") is None:
        return f"no band ({a['points']} validation points)"
    return accuracy_text(a).split(" (")[0]


def figure_row(
    name: str, label: str, sc: Any, res: Any, rule: Any, declined: str | None
) -> dict[str, Any]:
    """One workload's figures as the Design page's table shows them (text where a number
    does not exist; MB = 10^6 bytes; ms), plus the raw values in SI units for downloads.

    ``res`` answers (analytic, DES, or the rule of thumb when the analytic engine declined
    — then ``declined`` is its reason); ``rule`` is the rule of thumb beside it."""
    a = assumptions(sc, res, declined)
    iops = res.read.iops + res.write.iops
    bw = res.read.bytes_per_s + res.write.bytes_per_s
    dirs = [d for d in (res.read, res.write) if d.iops > 0]
    mean = sum(d.latency_mean * d.iops for d in dirs) / iops if iops else None
    p99s = [d.latency_p99 for d in dirs if d.latency_p99]
    if res.engine == "baseline":
        no_lat = "rule of thumb: no latency"
        no_p99 = no_lat
    elif res.engine == "analytic" and res.write.iops > 0:
        no_lat, no_p99 = NOT_MODELLED, "analytic writes: mean only"
    else:
        no_lat = no_p99 = NOT_MODELLED
    rule_bw = rule.read.bytes_per_s + rule.write.bytes_per_s
    rule_iops = rule.read.iops + rule.write.iops
    return {
        "workload": name,
        "label": label,
        "engine": res.engine,
        "engine_text": ENGINE_LABELS.get(res.engine, res.engine),
        "declined": declined,
        "bytes_per_s": bw,
        "read_bytes_per_s": res.read.bytes_per_s,
        "write_bytes_per_s": res.write.bytes_per_s,
        "iops": iops,
        "latency_mean_s": mean,
        "latency_p99_s": max(p99s) if p99s else None,
        "latency_mean_text": _ms(mean, no_lat),
        "latency_p99_text": _ms(max(p99s) if p99s else None, no_p99),
        "limit": res.limit,
        "ci_rel": res.ci_rel,
        "band": band_text(res),
        "accuracy": res.accuracy,
        "rule_bytes_per_s": rule_bw,
        "rule_iops": rule_iops,
        "rule_vs_zsim": rule_iops / iops if iops and res.engine != "baseline" else None,
        "assumptions": a.to_dict(),
    }


def table_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The performance table as shown: every cell a number or a short text, never None."""
    return [
        {
            "workload": r["label"],
            "recordsize": r.get("recordsize", ""),
            "engine": r["engine_text"],
            "MB/s": round(r["bytes_per_s"] / MB, 1),
            "IOPS": round(r["iops"]),
            "limited by": r["assumptions"]["limited by"],
            "accuracy band": r["band"],
            "mean latency (ms)": r["latency_mean_text"],
            "p99 latency (ms)": r["latency_p99_text"],
            "jobs × queue depth": r["assumptions"]["jobs × queue depth"],
            "read/write": r["assumptions"]["read/write split"],
            "ARC hits": r["assumptions"]["ARC hits"],
            "rule of thumb MB/s": round(r["rule_bytes_per_s"] / MB, 1),
            "rule of thumb IOPS": round(r["rule_iops"]),
        }
        for r in rows
    ]
