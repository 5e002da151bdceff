"""Properties every simulated resilver must have, on layouts hypothesis draws."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zsim
from zsim.hardware import hdd
from zsim.hardware.catalog import load_profile

DISK = "seagate-ironwolf-12tb"

LAYOUTS = st.one_of(
    st.builds(lambda n, w: f"{n}x mirror {w}", st.integers(1, 3), st.integers(2, 3)),
    st.builds(lambda p, extra: f"raidz{p} {p + 1 + extra}", st.integers(1, 3), st.integers(1, 8)),
    st.builds(
        lambda lvl, n: f"md-raid{lvl} {n}", st.sampled_from([1, 5, 6, 10]), st.sampled_from([4, 6])
    ),
    st.builds(lambda p, d: f"draid{p}:{d}d:1s:{p + d + 6}c", st.integers(1, 2), st.integers(2, 6)),
)


@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(
    layout=LAYOUTS,
    fill=st.sampled_from([0.1, 0.5, 0.9]),
    recordsize=st.sampled_from(["128K", "1M"]),
    written=st.sampled_from(["sequential", "random"]),
)
def test_a_resilver_is_finite_monotone_and_no_faster_than_its_disks(
    layout, fill, recordsize, written
):
    sc = zsim.scenario_from_dict(
        {
            "hardware": {"disk": DISK},
            "pool": {"layout": layout, "recordsize": recordsize, "fill": fill},
            "workload": {"rw": "randread", "bs": "128K"},
            "resilver": {"written": written},
            "durability": {"afr": 0.015, "trials": 500},
        }
    )
    r = zsim.resilver(sc)
    assert r.seconds is not None and 0 < r.seconds < math.inf
    times = [t for t, _ in r.progress]
    done = [b for _, b in r.progress]
    assert times == sorted(times) and done == sorted(done)
    assert done[-1] == r.bytes_resilvered
    # the survivors supply at least what the replacement receives
    assert r.bytes_read >= 0.99 * r.bytes_resilvered
    # one new disk cannot be written faster than its outer zone (a dRAID distributed
    # spare spreads the writes over all children instead)
    top = hdd.media_rate(hdd.hdd_params(load_profile(DISK)), 0.0)
    if r.spare != "distributed":
        assert r.bytes_per_s <= 1.02 * top, (r.bytes_per_s, top)
    assert 0.0 <= r.durability["loss_probability"] <= 1.0
