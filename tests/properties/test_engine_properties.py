"""Engine properties (hypothesis, few examples: each is a short DES run)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from zsim.scenario import scenario_from_dict
from zsim.simulate import simulate

HDD = {"disk": "seagate-ironwolf-12tb", "ram": "16GiB", "cpu_cores": 8}
vdevs = st.sampled_from(["mirror 2", "raidz1 3", "raidz2 4", "stripe 1", "mirror 3"])
workloads = st.sampled_from(
    [
        {"rw": "randread", "bs": "128K"},
        {"rw": "randread", "bs": "1M"},
        {"rw": "read", "bs": "1M"},
    ]
)


def rate(layout: str, work: dict) -> float:
    sc = scenario_from_dict(
        {
            "hardware": HDD,
            "pool": {"layout": layout, "fill": 0.1},
            "workload": {"tool": "fio", "numjobs": 16, "iodepth": 1, "size": "32GiB", **work},
        }
    )
    r = simulate(sc, seed=3, target_ci=0.03, max_wall_seconds=15)
    return r.read.bytes_per_s


@settings(max_examples=6, deadline=None)
@given(vdevs, vdevs, workloads)
def test_adding_a_vdev_never_lowers_throughput(first, extra, work):
    """16 outstanding reads, so a second vdev always has work to do; a 3 % CI on each side,
    so a 'lower' result beyond 6 % would be a real inversion."""
    before = rate(first, work)
    after = rate(f"{first} + {extra}", work)
    assert after >= before * 0.94, (first, extra, work, before, after)
