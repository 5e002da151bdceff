"""The app's design model (zsim/app/design.py): scenarios, capacity breakdown, URL state."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zsim
from zsim.app import design as model
from zsim.app import scaling_model
from zsim.errors import ZsimError

IRONWOLF = "seagate-ironwolf-12tb"


def test_default_design_is_eight_ironwolfs_in_raidz2_and_builds_every_workload():
    d = model.Design()
    d.check()
    assert (d.disk, d.disks, d.layout) == (IRONWOLF, 8, "raidz2 8")
    for name in d.workloads:
        sc = d.scenario(name)
        assert sc.pool.layout == "raidz2 8"
        # the TOML the page offers is the file `zsim simulate` reads back to the same scenario
        again = zsim.scenario_from_dict(__import__("tomllib").loads(sc.to_toml()))
        assert again.to_toml() == sc.to_toml()


def test_auto_recordsize_is_each_presets_own_and_an_explicit_one_wins():
    d = model.Design()
    assert d.scenario("vm-16k").pool.recordsize == 16 * 1024
    assert d.scenario("media-1m-read").pool.recordsize == 1 << 20
    assert d.replace(recordsize="64K").scenario("vm-16k").pool.recordsize == 64 * 1024
    assert d.replace(workloads=("custom",)).scenario("custom").pool.recordsize == 128 * 1024


def test_capacity_breakdown_adds_up_to_the_raw_bytes_and_matches_zsim_capacity():
    d = model.Design(layout="2x raidz2 4")
    report = model.capacity_report(d)
    direct = zsim.capacity("2x raidz2 4", disk_size=zsim.load_profile(IRONWOLF).capacity)
    assert report.usable_bytes == direct.usable_bytes
    parts = model.capacity_breakdown(report)
    assert sum(p["bytes"] for p in parts) == report.raw_bytes
    assert parts[0]["part"].startswith("usable")
    assert parts[0]["bytes"] == report.usable_bytes


def test_breakdown_counts_spares_and_support_devices():
    d = model.Design(disks=8, layout="raidz2 6 spare 2 log mirror 2")
    report = model.capacity_report(d)
    parts = {p["part"]: p["bytes"] for p in model.capacity_breakdown(report)}
    assert parts["hot spares"] == 2 * zsim.load_profile(IRONWOLF).capacity
    assert parts["log / cache / special devices"] > 0
    assert sum(parts.values()) == report.raw_bytes + report.support_raw_bytes


def test_a_layout_that_does_not_use_the_chosen_disks_names_the_fix():
    with pytest.raises(ZsimError, match="uses 6 disks but 8 were chosen"):
        model.Design(layout="raidz2 6").check()
    with pytest.raises(ZsimError, match="raidz3"):
        model.Design(disks=3, layout="raidz3 3").check()
    with pytest.raises(ZsimError, match="no workload"):
        model.Design(workloads=()).check()


@pytest.mark.parametrize(
    ("kind", "width", "disks", "layout"),
    [
        ("raidz2", 6, 8, "raidz2 6 spare 2"),
        ("raidz2", 4, 8, "2x raidz2 4"),
        ("mirror", 2, 8, "4x mirror 2"),
        ("stripe", 1, 8, "stripe 8"),
        ("draid2", 6, 8, "draid2:4d:1s:8c"),
    ],
)
def test_picker_layouts_use_every_disk(kind, width, disks, layout):
    text = model.picker_layout(kind, width, disks)
    assert text == layout
    assert model.data_device_count(zsim.parse_layout(text)) == disks


def test_picker_refuses_a_vdev_wider_than_the_disks():
    with pytest.raises(ZsimError, match="needs at least 10 disks"):
        model.picker_layout("raidz2", 10, 8)


def test_costs_need_a_price_and_are_per_usable_tb():
    d = model.Design()
    assert model.costs(d, 68 * 10**12) == {"cost_usd": None, "usd_per_usable_tb": None}
    priced = model.costs(d.replace(price_usd=250.0), 68 * 10**12)
    assert priced["cost_usd"] == 2000.0
    assert priced["usd_per_usable_tb"] == pytest.approx(2000 / 68)


designs = st.builds(
    model.Design,
    layout=st.sampled_from(["raidz2 8", "4x mirror 2", "raidz1 4 spare 4", "stripe 8"]),
    recordsize=st.sampled_from(model.RECORDSIZES),
    ashift=st.sampled_from([9, 12, 13]),
    compression=st.sampled_from(model.COMPRESSION),
    sync=st.sampled_from(model.SYNC),
    price_usd=st.one_of(st.none(), st.floats(1, 5000, allow_nan=False)),
    workloads=st.lists(st.sampled_from([*model.PRESET_LABELS, model.CUSTOM]), min_size=1,
                       max_size=3, unique=True).map(tuple),
    custom=st.builds(model.CustomWorkload, rw=st.sampled_from(model.FIO_RW),
                     bs=st.sampled_from([4096, 65536, 1 << 20]),
                     numjobs=st.integers(1, 64), iodepth=st.integers(1, 64),
                     sync=st.booleans()),
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(designs)
def test_the_url_query_string_round_trips_every_design(d):
    params = model.design_to_query(d)
    assert all(isinstance(v, str) for v in params.values())
    back, problems = model.design_from_query(params)
    assert problems == []
    assert back == d


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from([*model.QUERY_KEYS, *model.CUSTOM_QUERY_KEYS, "x"]),
                       st.text(max_size=12)))  # fmt: skip
def test_a_mangled_link_still_opens_with_a_warning_per_bad_parameter(params):
    design, problems = model.design_from_query(params)
    assert isinstance(design, model.Design)
    assert all(p.startswith("ignored ?") for p in problems)


def test_scaling_families_lay_out_the_disks():
    assert scaling_model.family_layout("one wide raidz2", 12) == "raidz2 12"
    assert scaling_model.family_layout("raidz2 vdevs of 4", 12) == "3x raidz2 4"
    assert scaling_model.family_layout("2-way mirrors", 12) == "6x mirror 2"
    with pytest.raises(ZsimError, match="multiples of 4"):
        scaling_model.family_layout("single disks", 6)


def test_des_progress_callback_and_latency_quantiles():
    sc = model.Design().scenario("4k-randread")
    seen: list[tuple[float, float, float]] = []
    res = zsim.simulate(sc, engine="des", seed=3, target_ci=0.2, max_sim_seconds=4,
                        progress=lambda s, w, ci: seen.append((s, w, ci)))  # fmt: skip
    assert seen
    assert [s for s, _, _ in seen] == sorted(s for s, _, _ in seen)
    q = res.details["latency_quantiles_s"]["read"]
    values = [q[k] for k in sorted(q, key=float)]
    assert values == sorted(values)
    assert q["0.5"] == pytest.approx(res.read.latency_p50, rel=1e-9)
    assert q["0.99"] == pytest.approx(res.read.latency_p99, rel=1e-9)
