"""The read path of the vdev queue and mirror: what several sequential streams get.

Mechanisms (``zsim.des.vdev``, ``zsim.des.zfs_model``), each from OpenZFS source:
mirror child load counts active I/Os only (``vdev_mirror_load()``), a demand read promotes
its block's queued prefetch (``arc_read()`` → ``zio_change_priority()``, 0.8+), LBA-ordered
classes issue by elevator (≤ 2.1) or by 0.5 s time slot then offset (2.2+,
``vdev_queue_io_to_issue()``), and sync and async reads aggregate together both ways
(``vdev_queue_aggregate()`` over ``vq_read_offset_tree``). The end-to-end runs are a few
simulated seconds with a fixed seed.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from zsim.des.engine import Engine
from zsim.des.vdev import ASYNC_READ, SYNC_READ, LeafQueue, TopVdev, Zio
from zsim.layout.grammar import parse_layout
from zsim.machine.resources import DevIO
from zsim.machine.run_control import RunControl
from zsim.scenario import scenario_from_dict
from zsim.units import KiB, MiB
from zsim.zfs.version import parse_zfs_version

# ------------------------------------------------------------------ queue mechanics


class _Disk:
    """Records what reaches it; completes nothing unless told."""

    def __init__(self) -> None:
        self.ios: list[DevIO] = []
        self.env = SimpleNamespace(now=0.0)

    def submit(self, io: DevIO) -> None:
        self.ios.append(io)


def _leaf(version: str = "2.4") -> tuple[LeafQueue, _Disk]:
    disk = _Disk()
    return LeafQueue(disk, MiB, parse_zfs_version(version)), disk  # type: ignore[arg-type]


def _zio(offset: int, klass: int, nbytes: int = 128 * KiB) -> Zio:
    return Zio(offset, nbytes, False, klass, lambda: None)


def _finish(disk: _Disk, i: int = 0) -> None:
    disk.ios.pop(i).done()


def test_promote_requeues_as_sync_read_without_issuing():
    leaf, disk = _leaf()
    for k in range(3):  # async read max_active = 3: these go to the disk
        leaf.add(_zio(k * 10 * MiB, ASYNC_READ))
    waiting = _zio(100 * MiB, ASYNC_READ)
    leaf.add(waiting)
    assert len(disk.ios) == 3 and leaf.qlen[ASYNC_READ] == 1
    assert leaf.promote(waiting)
    assert waiting.klass == SYNC_READ and leaf.qlen == [1, 0, 0, 0, 0, 0]
    assert len(disk.ios) == 3  # vdev_queue_change_io_priority() only re-queues
    _finish(disk)
    assert disk.ios[-1].offset == 100 * MiB  # issued at the next scheduling point
    assert not leaf.promote(waiting)  # no longer queued


def _three_active(leaf: LeafQueue) -> None:
    """Fill the async-read class's 3 active slots at 50–52 MiB (last offset 52 MiB + 128K)."""
    for off in (50, 51, 52):
        leaf.add(_zio(off * MiB, ASYNC_READ))


@pytest.mark.parametrize("version", ["0.7", "0.8", "2.1"])
def test_elevator_serves_the_next_offset_after_the_last_io(version):
    leaf, disk = _leaf(version)
    _three_active(leaf)
    for off in (10, 60, 90, 20, 70):
        leaf.add(_zio(off * MiB, ASYNC_READ))
    order = []
    for _ in range(4):
        _finish(disk, 0)
        order.append(disk.ios[-1].offset // MiB)
    assert order == [60, 70, 90, 10]  # upward from the last I/O, then wrap to the lowest


@pytest.mark.parametrize(("version", "order"), [("2.1", [60, 70, 10]), ("2.4", [10, 60, 70])])
def test_time_slots_keep_an_old_io_from_waiting_behind_a_stream(version, order):
    leaf, disk = _leaf(version)
    _three_active(leaf)
    leaf.add(_zio(10 * MiB, ASYNC_READ))  # old, below the last offset
    disk.env.now = 0.6  # > 2**29 ns later: a newer time slot (2.2+)
    leaf.add(_zio(60 * MiB, ASYNC_READ))
    leaf.add(_zio(70 * MiB, ASYNC_READ))
    got = []
    for _ in range(3):
        _finish(disk, 0)
        got.append(disk.ios[-1].offset // MiB)
    assert got == order


def test_demand_read_aggregates_with_queued_prefetch_both_ways():
    leaf, disk = _leaf("2.4")
    for k in range(3):  # fill the async read slots far away
        leaf.add(_zio(500 * MiB + k * 10 * MiB, ASYNC_READ))
    for k in range(10):  # sync reads to take all 10 sync slots
        leaf.add(_zio(800 * MiB + k * 10 * MiB, SYNC_READ))
    leaf.add(_zio(0, ASYNC_READ))
    leaf.add(_zio(256 * KiB, ASYNC_READ))
    leaf.add(_zio(128 * KiB, SYNC_READ))  # queued: sync read class is full
    _finish(disk, 3)  # a sync read completes: the sync read goes with both prefetches
    io = disk.ios[-1]
    assert (io.offset, io.nbytes) == (0, 384 * KiB)
    assert leaf.waiting == 0


def test_mirror_load_counts_active_ios_not_queued():
    vdev = parse_layout("mirror 2").vdevs[0]
    leaves, _disks = zip(*(_leaf("2.4") for _ in range(2)), strict=True)
    top = TopVdev(vdev, list(leaves), 12, 1 << 40, True)
    for k in range(3):  # child 0: 3 active async reads plus 5 queued ones
        leaves[0].add(_zio(k * 100 * MiB, ASYNC_READ))
    for k in range(5):
        leaves[0].add(_zio((k + 5) * 100 * MiB, ASYNC_READ))
    for k in range(4):  # child 1: 4 active sync reads
        leaves[1].add(_zio(k * 100 * MiB + 7 * MiB, SYNC_READ))
    assert leaves[0].queued > leaves[1].queued and leaves[0].active_ios < leaves[1].active_ios
    # far from both children's last offsets: the seek increments tie, the load decides
    assert top.leaf_ios(3000 * MiB, 128 * KiB, False)[0][0] == 0


# ------------------------------------------------------------------ end to end


def _engine(layout: str, numjobs: int, version: str | None = None, **hw) -> Engine:
    hardware = {"disk": "seagate-ironwolf-12tb", "ram": "16GiB", "cpu_cores": 8, **hw}
    if version is not None:
        hardware["zfs_version"] = version
    workload = {"tool": "fio", "rw": "read", "bs": "1M", "numjobs": numjobs, "size": "64GiB"}
    sc = scenario_from_dict(
        {"hardware": hardware, "pool": {"layout": layout, "ashift": 12}, "workload": workload}
    )
    return Engine(sc, 1, RunControl(target_ci=0.05, max_sim_seconds=4, max_wall_seconds=300))


def _read_bps(layout: str, numjobs: int) -> float:
    return _engine(layout, numjobs).run().read.bytes_per_s


@pytest.mark.parametrize(("children", "numjobs", "floor"), [(2, 2, 1.6), (3, 4, 2.2)])
def test_mirror_sequential_reads_grow_with_the_children(children, numjobs, floor):
    """Streams spread over the children (the load counts active I/Os only, so a child busy
    with one stream's queued prefetch does not repel the others) and each child reads its
    stream nearly sequentially: measured 2–3× one disk with 2–4 streams. The floor leaves
    room below the children count for the seeks between streams and a short run."""
    one = _read_bps("stripe 1", numjobs)
    mirror = _read_bps(f"mirror {children}", numjobs)
    print(f"mirror {children}, {numjobs} jobs: {mirror / 1e6:.0f} MB/s, one disk {one / 1e6:.0f}")
    assert mirror >= floor * one


@pytest.mark.parametrize("version", ["2.1", None])
def test_streams_on_one_disk_share_it(version):
    """Four sequential readers on one HDD: up to 2.1 a starved stream's demand read promotes
    its queued prefetch to the FIFO sync class; from 2.2 the time slots do the same. Every
    job gets within a factor 3 of the mean."""
    engine = _engine("stripe 1", 4, version)
    engine.run()
    got = [job.bytes_read for job in engine.jobs]
    mean = sum(got) / len(got)
    print(f"zfs {version or 'current'}: per-job MB read {[round(b / 1e6) for b in got]}")
    assert mean > 0
    assert all(mean / 3 <= b <= 3 * mean for b in got)


def test_sequential_read_of_more_than_the_arc_mostly_misses():
    """Four streams over files totalling ~1.3× the ARC, read in a loop: each record is
    evicted before its stream comes back to it, so demand reads find it only when its
    prefetch has already completed."""
    workload = {"tool": "fio", "rw": "read", "bs": "1M", "numjobs": 4, "size": "312MiB"}
    sc = scenario_from_dict(
        {
            "hardware": {"disk": "seagate-ironwolf-12tb", "ram": "2GiB", "cpu_cores": 8},
            "pool": {"layout": "stripe 8", "ashift": 12},
            "workload": workload,
        }
    )
    engine = Engine(sc, 1, RunControl(target_ci=0.05, max_sim_seconds=4, max_wall_seconds=300))
    result = engine.run()
    arc_bytes = engine.zfs.arc.capacity * sc.pool.recordsize
    assert 1.1 <= 4 * 312 * MiB / arc_bytes <= 1.6
    ratio = result.details["arc_hit_ratio"]
    print(f"ARC {arc_bytes / MiB:.0f} MiB, hit ratio {ratio:.2f}")
    assert ratio < 0.5
