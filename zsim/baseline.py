"""The planners' rule of thumb for pool speed, kept as a baseline to show how far off it is.

zsim's engines model disks, queues, record geometry and the ARC. Planners today mostly use a
much simpler rule: every vdev is worth a fixed number of "disks" of IOPS and of streaming
rate, and vdevs add up. This module computes exactly that rule and nothing more, so that
reports can print it beside the simulated and the measured figures.

Source
------
The iXsystems (now TrueNAS) blog series "Six Metrics for Measuring ZFS Pool Performance",
usually credited to Chris Moore of iXsystems (the copies read for this module carry no byline):

* "Six Metrics for Measuring ZFS Pool Performance Part 1", 24 September 2018,
  https://www.truenas.com/blog/zfs-pool-performance-1/ (first published at
  https://www.ixsystems.com/blog/zfs-pool-performance-1/) — striped and mirrored vdevs;
* "Six Metrics for Measuring ZFS Pool Performance Part 2", 2 October 2018,
  https://www.truenas.com/blog/zfs-pool-performance-2/ — RAIDZ vdevs and example pools.

Its example drive "does 100MB/s streaming reads and writes and can do 250 read and write
IOPS"; one IOPS figure and one streaming figure per drive, whatever the block size.

The rules (per vdev, in multiples of one disk; pool data is striped over the vdevs, so the
figures of the data vdevs add up):

================  ===========  ===========  ==============  ===============
vdev              read IOPS    write IOPS   streaming read  streaming write
================  ===========  ===========  ==============  ===============
single disk       1            1            1               1
N-way mirror      N            1            N               1
RAIDZp, N wide    1            1            N − p           N − p
================  ===========  ===========  ==============  ===============

Part 1 states the stripe and mirror lines ("N-way mirror: Read IOPS: N * Read IOPS of a
single drive; Write IOPS: Write IOPS of a single drive; ..."); Part 2 the RAIDZ line, with p the
parity level and N the vdev width, N − p the data disks. (Part 1's worked "6x 2-way mirror"
example prints 3000 MB/s streaming read where its own rule gives 6 × 2 × 100 = 1200 MB/s; zsim
follows the rule.) Log, cache, special, dedup and spare vdevs are not counted: the rule is
about data vdevs.

zsim's extensions (the article has no line for these; each is documented where it is made):

* **dRAID** — the article predates dRAID (OpenZFS 2.1, 2021) and gives it no rule. zsim treats
  a ``draidP:Dd:Ss:Cc`` vdev as ``(C − S) / (D + P)`` RAIDZ-like redundancy groups of width
  ``D + P``: each group is worth one disk of IOPS and ``D`` disks of streaming rate. The
  group count is the average number of groups across the ``C − S`` non-spare disks and may
  be fractional (``draid2:8d:2s:24c`` → 2.2 groups → 2.2 disks of IOPS, 17.6 of streaming);
  it is not :attr:`~zsim.layout.tree.Vdev.draid_ngroups`, the groups per slice.
* **Linux md** — the same spirit with the usual RAID write penalties (RAID-1 2 per mirror
  pair, RAID-5 4, RAID-6 6: the "Getting The Hang Of IOPS" table quoted at
  https://serverfault.com/questions/531319): RAID0 n disks for everything; RAID1 (n copies)
  n read / 1 write; RAID10 (near=2) n read / n/2 write for IOPS and streaming; RAID5 and
  RAID6 read ``n − p`` streaming and ``n`` IOPS, write ``n − p`` streaming (full stripes) and
  ``n/4`` (RAID5) or ``n/6`` (RAID6) IOPS — the read-modify-write of a small write costs 4
  (RAID5: read data and parity, write both) or 6 (RAID6) disk operations.
* **btrfs raid1/raid10** (two copies of every block) like md RAID10: n read / n/2 write;
  **zpool on an md array** is a one-vdev pool on one block device, so it gets the md array's
  figures; **raw N** is N independent disks, like a stripe of N.

Disk figures come from a :class:`~zsim.hardware.catalog.Profile`:

* HDD: streaming read and write = ``max_sustained`` (the outer-zone rate a datasheet quotes,
  which is what the rule's "streaming speed of a single drive" is in practice); random IOPS,
  reads and writes alike = ``1 / (avg_seek_read + half a rotation)`` with half a rotation =
  ``30 / rpm`` s — the average rotational latency — and no transfer time, as the rule keeps one
  IOPS figure per drive. ``avg_seek`` stands in when ``avg_seek_read`` is absent. A 7200 rpm
  disk with an 8.5 ms seek: 1 / (8.5 ms + 4.17 ms) = 78.9 IOPS.
* SSD / NVMe: ``read_bw`` / ``write_bw`` and ``read_iops`` / ``write_iops``.

How ``rw`` (fio's names) maps the rule to one workload of block size ``bs``:

* ``read`` / ``write`` — streaming: bandwidth = the rule's streaming rate, IOPS = bandwidth / bs.
* ``randread`` / ``randwrite`` — IOPS-bound: IOPS = min(rule IOPS, streaming rate / bs), so a
  large block cannot move more bytes than the streaming rate; bandwidth = IOPS × bs.
* ``randrw`` / ``readwrite`` — a 50/50 mix. With ``R`` and ``W`` the rates of the pure read and
  pure write workloads (IOPS as above for ``randrw``, streaming bandwidth for ``readwrite``),
  the pool time-shares between them: half the operations at ``R`` and half at ``W`` give a
  combined rate ``T = 2RW / (R + W)`` (the harmonic mean), reported as ``T/2`` read and
  ``T/2`` write. This is the usual ``n·I / (READ% + F·WRITE%)`` sizing formula at 50/50.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

from zsim.errors import CatalogError, ZsimError
from zsim.hardware.catalog import Profile
from zsim.layout.grammar import parse_layout
from zsim.layout.tree import (
    BtrfsArray,
    Layout,
    MdArray,
    RawDevices,
    Vdev,
    ZfsLayout,
    ZpoolOnBlock,
)
from zsim.units import MB

RW_MODES: tuple[str, ...] = ("read", "write", "randread", "randwrite", "randrw", "readwrite")
SOURCE = (
    'iXsystems, "Six Metrics for Measuring ZFS Pool Performance" Parts 1 and 2 (2018), '
    "https://www.truenas.com/blog/zfs-pool-performance-1/ and "
    "https://www.truenas.com/blog/zfs-pool-performance-2/"
)


@dataclass(frozen=True)
class BaselineEstimate:
    """What the rule of thumb predicts for one workload. Rates in bytes/s and operations/s."""

    read_bytes_per_s: float
    write_bytes_per_s: float
    read_iops: float
    write_iops: float
    limit: str  # the rule term that decides, e.g. "rule-of-thumb: 2 vdevs x 1 disk read IOPS"
    explanation: str  # the arithmetic, line by line


@dataclass(frozen=True)
class DiskRates:
    """One disk's figures as the rule uses them. IOPS are ``None`` when the profile lacks them."""

    read_bw: float
    write_bw: float
    read_iops: float | None
    write_iops: float | None
    note: str


@dataclass(frozen=True)
class RuleShare:
    """``count`` identical vdevs (or one array), each worth these multiples of one disk."""

    label: str  # "raidz2 8", "mirror 2", "md-raid6 8 chunk=512K"
    count: int
    is_vdev: bool  # ZFS vdevs print as "2 vdevs x ...", arrays by their label
    read_iops: float
    write_iops: float
    read_stream: float
    write_stream: float
    rule: str


def disk_rates(disk: Profile) -> DiskRates:
    """One disk's streaming rates and random IOPS for the rule (see the module notes)."""
    if disk.kind == "hdd":
        if disk.max_sustained is None or disk.rpm is None:
            raise CatalogError(f"profile {disk.name!r} needs max_sustained and rpm")
        seek = disk.avg_seek_read if disk.avg_seek_read is not None else disk.avg_seek
        half_turn = 30.0 / disk.rpm
        iops = None if seek is None else 1.0 / (seek + half_turn)
        note = f"streaming {_rate(disk.max_sustained)} read and write (max_sustained); " + (
            f"{iops:.1f} IOPS read and write = 1 / ({seek * 1e3:g} ms seek + "
            f"{half_turn * 1e3:.2f} ms half rotation at {disk.rpm} rpm)"
            if iops is not None and seek is not None
            else "no avg_seek_read or avg_seek in the profile, so no IOPS figure"
        )
        return DiskRates(disk.max_sustained, disk.max_sustained, iops, iops, note)
    if disk.kind in ("ssd", "nvme"):
        if disk.read_bw is None or disk.write_bw is None:
            raise CatalogError(f"profile {disk.name!r} needs read_bw and write_bw")
        r_iops = None if disk.read_iops is None else float(disk.read_iops)
        w_iops = None if disk.write_iops is None else float(disk.write_iops)
        note = (
            f"streaming {_rate(disk.read_bw)} read, {_rate(disk.write_bw)} write (read_bw, "
            f"write_bw); {_num(r_iops)} read IOPS, {_num(w_iops)} write IOPS "
            f"(read_iops, write_iops)"
        )
        return DiskRates(disk.read_bw, disk.write_bw, r_iops, w_iops, note)
    raise CatalogError(
        f"profile {disk.name!r} is a {disk.kind}, not a disk; give an hdd, ssd or nvme profile"
    )


def _vdev_share(vdev: Vdev, count: int) -> RuleShare:
    label = vdev.compact() if vdev.kind != "disk" else "disk"
    if vdev.kind == "disk":
        return RuleShare(label, count, True, 1, 1, 1, 1, "single disk: one disk of everything")
    if vdev.kind == "mirror":
        n = vdev.width
        return RuleShare(
            label, count, True, n, 1, n, 1, f"{n}-way mirror: N read, 1 write (IOPS and streaming)"
        )
    if vdev.kind == "raidz":
        data = vdev.width - vdev.parity
        return RuleShare(
            label,
            count,
            True,
            1,
            1,
            data,
            data,
            f"raidz{vdev.parity} of {vdev.width}: 1 disk of IOPS, N − p = {data} disks streaming",
        )
    if vdev.kind == "draid":
        group = vdev.ndata + vdev.parity
        groups = (vdev.width - vdev.nspares) / group
        return RuleShare(
            label,
            count,
            True,
            groups,
            groups,
            groups * vdev.ndata,
            groups * vdev.ndata,
            f"dRAID (no rule in the article; zsim's extension): (C − S)/(D + P) = "
            f"({vdev.width} − {vdev.nspares})/{group} = {groups:.3g} raidz-like groups, each "
            f"1 disk of IOPS and D = {vdev.ndata} disks streaming",
        )
    raise ZsimError(f"vdev kind {vdev.kind!r} has no rule of thumb")


def _md_share(array: MdArray) -> RuleShare:
    n, label = array.width, array.compact()
    level = array.level
    if level == 0:
        return RuleShare(label, 1, False, n, n, n, n, f"RAID0 of {n}: n disks of everything")
    if level == 1:
        return RuleShare(label, 1, False, n, 1, n, 1, f"RAID1 of {n}: n read, 1 write")
    if level == 10:
        half = n / 2
        return RuleShare(
            label, 1, False, n, half, n, half, f"RAID10 of {n}: n read, n/2 write (2 copies)"
        )
    parity = 1 if level == 5 else 2
    penalty = 4 if level == 5 else 6
    data = n - parity
    return RuleShare(
        label,
        1,
        False,
        n,
        n / penalty,
        data,
        data,
        f"RAID{level} of {n}: n read IOPS, n/{penalty} write IOPS (read-modify-write "
        f"penalty {penalty}), n − {parity} = {data} disks streaming",
    )


def rule_shares(layout: Layout | str) -> tuple[RuleShare, ...]:
    """The rule's worth of each group of identical data vdevs (or of the array), in disks."""
    if isinstance(layout, str):
        layout = parse_layout(layout)
    if isinstance(layout, ZfsLayout):
        groups: dict[tuple[object, ...], tuple[Vdev, int]] = {}
        for vdev in layout.data_vdevs:
            first, count = groups.get(vdev.shape(), (vdev, 0))
            groups[vdev.shape()] = (first, count + 1)
        return tuple(_vdev_share(vdev, count) for vdev, count in groups.values())
    if isinstance(layout, MdArray):
        return (_md_share(layout),)
    if isinstance(layout, ZpoolOnBlock):
        share = _md_share(layout.block)
        return (
            RuleShare(
                layout.compact(),
                1,
                False,
                share.read_iops,
                share.write_iops,
                share.read_stream,
                share.write_stream,
                f"one-vdev pool on one block device: the array's figures; {share.rule}",
            ),
        )
    if isinstance(layout, BtrfsArray):
        n = layout.width
        return (
            RuleShare(
                layout.compact(),
                1,
                False,
                n,
                n / 2,
                n,
                n / 2,
                f"btrfs-{layout.profile} of {n}: n read, n/2 write (2 copies of every block)",
            ),
        )
    if isinstance(layout, RawDevices):
        n = len(layout.devices)
        return (RuleShare(layout.compact(), 1, False, n, n, n, n, f"{n} independent disks"),)
    raise ZsimError(f"no rule of thumb for a {type(layout).__name__}")


_METRICS = {
    "read_iops": "read IOPS",
    "write_iops": "write IOPS",
    "read_stream": "streaming read",
    "write_stream": "streaming write",
}


def _total(shares: tuple[RuleShare, ...], metric: str) -> float:
    return sum(share.count * getattr(share, metric) for share in shares)


def _term(shares: tuple[RuleShare, ...], metric: str) -> str:
    parts = []
    for share in shares:
        value = getattr(share, metric)
        disks = f"{value:.3g} disk{'' if value == 1 else 's'} {_METRICS[metric]}"
        if share.is_vdev:
            parts.append(f"{share.count} vdev{'' if share.count == 1 else 's'} x {disks}")
        else:
            parts.append(f"{share.label} = {disks}")
    return " + ".join(parts)


def _grouped(term: str) -> str:
    return f"({term})" if " + " in term else term


def baseline_estimate(layout: Layout | str, disk: Profile, rw: str, bs: int) -> BaselineEstimate:
    """The rule-of-thumb rates for workload ``rw`` (fio's names) with blocks of ``bs`` bytes.

    ``layout`` is a parsed layout (:func:`zsim.parse_layout`) or a layout string; ``disk`` the
    profile of every data disk. Pure: same inputs, same answer; no simulation.
    """
    if rw not in RW_MODES:
        raise ZsimError(f"rw {rw!r} is not one of {', '.join(RW_MODES)}")
    try:
        size = operator.index(bs)
    except TypeError:
        size = 0
    if isinstance(bs, bool) or size <= 0:
        raise ZsimError(f"bs must be a positive whole number of bytes, not {bs!r}")
    bs = size
    shares = rule_shares(layout)
    rates = disk_rates(disk)
    name = " + ".join(
        f"{s.count}x {s.label}" if s.is_vdev and s.count > 1 else s.label for s in shares
    )
    lines = [
        f"Rule of thumb ({SOURCE}) for {name} of {disk.name} ({disk.kind}), rw={rw}, bs={bs} B.",
        f"One disk: {rates.note}.",
        *(f"{s.label}{f' (x{s.count})' if s.count > 1 else ''}: {s.rule}." for s in shares),
    ]
    stream_r = _total(shares, "read_stream") * rates.read_bw
    stream_w = _total(shares, "write_stream") * rates.write_bw
    lines.append(
        f"Pool streaming: read {_term(shares, 'read_stream')} = {_rate(stream_r)}; "
        f"write {_term(shares, 'write_stream')} = {_rate(stream_w)}."
    )

    def random(direction: str) -> tuple[float, str]:
        per_disk = rates.read_iops if direction == "read" else rates.write_iops
        if per_disk is None:
            raise CatalogError(
                f"profile {disk.name!r} gives no {direction} IOPS figure (HDD: avg_seek_read "
                f"or avg_seek; SSD/NVMe: {direction}_iops), which {rw} needs"
            )
        metric = f"{direction}_iops"
        rule = _total(shares, metric) * per_disk
        stream = stream_r if direction == "read" else stream_w
        cap = stream / bs
        lines.append(
            f"Random {direction}s: rule {_term(shares, metric)} = {rule:.1f} IOPS; "
            f"streaming cap {_rate(stream)} / {bs} B = {cap:.1f} IOPS; "
            f"min = {min(rule, cap):.1f} IOPS."
        )
        if cap < rule:
            return cap, f"{_term(shares, direction + '_stream')} (caps {bs} B random {direction}s)"
        return rule, _term(shares, metric)

    if rw in ("read", "write"):
        bw = stream_r if rw == "read" else stream_w
        limit = _term(shares, f"{rw}_stream")
        lines.append(f"Streaming {rw}s: {_rate(bw)}, {bw / bs:.1f} IOPS of {bs} B.")
        out = (bw, 0.0) if rw == "read" else (0.0, bw)
        return _estimate(out[0], out[1], bs, limit, lines)
    if rw in ("randread", "randwrite"):
        direction = rw.removeprefix("rand")
        iops, limit = random(direction)
        bw = iops * bs
        out = (bw, 0.0) if direction == "read" else (0.0, bw)
        return _estimate(out[0], out[1], bs, limit, lines)
    # 50/50 mixes: time-share between the pure-read and pure-write rates (harmonic mean).
    if rw == "randrw":
        (r_iops, r_limit), (w_iops, w_limit) = random("read"), random("write")
        r, w = r_iops * bs, w_iops * bs
    else:
        r, w = stream_r, stream_w
        r_limit, w_limit = _term(shares, "read_stream"), _term(shares, "write_stream")
    combined = 2 * r * w / (r + w)
    lines.append(
        f"50/50 mix: combined = 2RW/(R + W) = 2 x {_rate(r)} x {_rate(w)} / "
        f"({_rate(r)} + {_rate(w)}) = {_rate(combined)}, half read and half write."
    )
    return _estimate(
        combined / 2,
        combined / 2,
        bs,
        f"50/50 mix of {_grouped(r_limit)} and {_grouped(w_limit)}",
        lines,
    )


def _estimate(
    read_bw: float, write_bw: float, bs: int, limit: str, lines: list[str]
) -> BaselineEstimate:
    lines.append(
        f"Result: read {_rate(read_bw)} ({read_bw / bs:.1f} IOPS), "
        f"write {_rate(write_bw)} ({write_bw / bs:.1f} IOPS)."
    )
    return BaselineEstimate(
        read_bytes_per_s=read_bw,
        write_bytes_per_s=write_bw,
        read_iops=read_bw / bs,
        write_iops=write_bw / bs,
        limit=f"rule-of-thumb: {limit}",
        explanation="\n".join(lines),
    )


def _rate(bytes_per_s: float) -> str:
    return f"{bytes_per_s / MB:.1f} MB/s"


def _num(value: float | None) -> str:
    return "no" if value is None else f"{value:g}"
