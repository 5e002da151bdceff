"""Cache (L2ARC) vdevs: hit probability from their size and fill, ARC headers, feed writes."""

from __future__ import annotations

import pytest

from zsim.scenario import scenario_from_dict
from zsim.simulate import simulate


def _run(layout: str, cache_fill: float = 1.0, rw: str = "randread"):
    sc = scenario_from_dict(
        {
            "hardware": {
                "disk": "seagate-ironwolf-12tb",
                "cache_device": "samsung-870-evo-500gb",
                "ram": "16GiB",
                "zfs_version": "2.2",
            },
            "pool": {"layout": layout, "recordsize": "16K", "fill": 0.1, "cache_fill": cache_fill},
            "workload": {
                "tool": "fio",
                "rw": rw,
                "bs": "16K",
                "numjobs": 16,
                "iodepth": 1,
                "size": "32GiB",
            },
        }
    )
    return simulate(sc, seed=1, target_ci=0.05, max_sim_seconds=4, max_wall_seconds=600)


def test_a_warm_cache_serves_the_reads_it_holds():
    """512 GiB of 16 KiB records over a 500 GB SSD cache: the cache holds most of what the
    ARC cannot, so most random reads come from the SSD and IOPS rise several-fold."""
    plain = _run("4x mirror 2")
    cached = _run("4x mirror 2 cache 1")
    p = cached.details["l2arc_hit_probability"]
    assert 0.7 < p < 1.0
    hits = cached.details["l2arc_hits"] / (cached.read.iops * cached.sim_seconds)
    assert hits == pytest.approx(p, abs=0.1)
    assert cached.read.iops > 3 * plain.read.iops
    # the headers of ~30 M cached blocks take ~2.8 GB of the ARC
    assert cached.details["arc_records"] < plain.details["arc_records"]


def test_a_cold_cache_helps_nothing_and_warms_at_the_feed_rate():
    cold = _run("4x mirror 2 cache 1", cache_fill=0.0)
    plain = _run("4x mirror 2")
    assert cold.details["l2arc_hits"] == 0
    assert cold.read.iops == pytest.approx(plain.read.iops, rel=0.1)
    # 500 GB at l2arc_write_max = 8 MiB/s: about 16.6 hours to fill
    assert cold.details["l2arc_warm_seconds"] == pytest.approx(500e9 / (8 << 20), rel=0.01)
    assert cold.details["l2arc_feed_bytes"] > 0  # evicted blocks are being fed


def test_sequential_reads_do_not_use_the_cache():
    """l2arc_noprefetch = 1: prefetched (streaming) buffers are not cached in the L2ARC."""
    r = _run("4x mirror 2 cache 1", rw="read")
    assert r.details["l2arc_hits"] == 0
