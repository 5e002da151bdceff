"""dRAID load per child for the analytic engine (``zsim/analytic/draid_load.py``), checked
against the discrete-event engine's own column map walked block by block."""

from __future__ import annotations

import numpy as np
import pytest

from zsim.analytic.demands import PoolModel
from zsim.analytic.draid_load import draid_read_shares, draid_write_hot_share
from zsim.layout.draid import DRAID_ROWHEIGHT
from zsim.scenario import scenario_from_dict
from zsim.units import GiB, MiB


def _model(layout: str, recordsize: str = "256K") -> PoolModel:
    sc = scenario_from_dict(
        {
            "hardware": {"disk": "seagate-ironwolf-12tb", "ram": "8GiB", "zfs_version": "2.3"},
            "pool": {"layout": layout, "recordsize": recordsize},
            "workload": {"tool": "fio", "rw": "randwrite", "bs": recordsize, "size": "2GiB"},
        }
    )
    return PoolModel(sc, 1)


def _walked_hot_share(model: PoolModel, start: int, span: int) -> float:
    """The busiest child's share of the leaf bytes of ``span`` bytes of new blocks from
    ``start``, through ``TopVdev.leaf_ios`` block by block (what the DES does)."""
    v = model.vdevs[0]
    load = np.zeros(len(v.top.vdev.devices))
    for i in range(span // v.asize):
        for leaf, _, nbytes in v.top.leaf_ios(start + i * v.asize, model.psize, True):
            load[leaf] += nbytes
    return float(load.max() / load.sum())


@pytest.mark.parametrize(
    "layout", ["draid1:2d:5c:2s", "draid1:2d:5c:1s", "draid3:2d:11c:0s", "draid2:4d:14c:1s"]
)
def test_hot_share_matches_the_map_walked_block_by_block(layout):
    model = _model(layout)
    top = model.vdevs[0].top
    span = 2 * GiB
    walked = np.mean(
        [_walked_hot_share(model, k * 977 * MiB, span) for k in range(16)]
    )  # 16 starts spread over the permutation cycle
    assert draid_write_hot_share(top, span) == pytest.approx(walked, rel=0.08)


def test_hot_share_tends_to_an_even_spread_over_many_slices_without_spares():
    top = _model("draid2:4d:12c:0s").vdevs[0].top
    share = draid_write_hot_share(top, 200 * GiB)
    assert share == pytest.approx(1 / 12, rel=0.02)
    # a txg of half a group loads that group's 6 children (two, where it straddles one)
    assert 0.8 / 6 < draid_write_hot_share(top, 6 * DRAID_ROWHEIGHT // 2) <= 1 / 6 + 1e-9


def test_spares_leave_children_out_of_their_slices():
    with_spare = _model("draid1:2d:5c:2s").vdevs[0].top
    assert draid_write_hot_share(with_spare, 64 * GiB) > 1.05 / 5


def test_read_shares_sum_to_the_columns_a_read_touches():
    model = _model("draid1:4d:13c:2s", "1M")
    top = model.vdevs[0].top
    shares = draid_read_shares(top, model.psize, 0, 128 * GiB)
    touched = sum(1 for _, _, n in top.leaf_ios(0, model.psize, False) if n)
    assert shares.sum() == pytest.approx(touched)
    # the map walked at random offsets over the span gives the same shares
    rng = np.random.default_rng(7)
    v = model.vdevs[0]
    walked = np.zeros(len(shares))
    draws = 20000
    for offset in rng.integers(0, 128 * GiB // v.asize, draws) * v.asize:
        for leaf, _, nbytes in top.leaf_ios(int(offset), model.psize, False):
            walked[leaf] += nbytes > 0
    assert np.abs(shares - walked / draws).max() < 0.03
    # a short span: a few groups, most children untouched
    short = draid_read_shares(top, model.psize, 0, 64 * MiB)
    assert (short == 0).sum() >= 13 - 2 - 5


def test_the_analytic_engine_answers_draid_pools():
    import zsim

    sc = scenario_from_dict(
        {
            "hardware": {"disk": "seagate-ironwolf-12tb", "ram": "16GiB", "zfs_version": "2.3"},
            "pool": {"layout": "draid2:4d:1s:12c", "recordsize": "128K"},
            "workload": {"tool": "fio", "rw": "randread", "bs": "128K", "size": "32GiB"},
        }
    )
    res = zsim.simulate(sc, engine="analytic")
    assert res.engine == "analytic" and res.read.iops > 0
