"""The probability of data loss (``zsim.reliability``).

Exact cases: stripes (closed form), the overlap probability g_t (brute force), MTTDL formulas,
URE arithmetic. The conditional Monte Carlo estimator is checked against plain Monte Carlo at
inflated failure rates, where losses are frequent enough to count, for tolerance 1, 2 and 3,
exponential and Weibull lifetimes, equal and unequal windows; and against the textbook MTTDL
in its limit (exponential lifetimes, short windows). Tolerances are stated at each assert:
Monte Carlo comparisons allow 4 combined standard errors (the seeds are fixed, so a pass is
reproducible; 4 σ keeps a change of seed from flaking).
"""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zsim.errors import ZsimError
from zsim.reliability import (
    YEAR,
    Durability,
    FailureModel,
    GroupSpec,
    RebuildWindow,
    afr_from_mtbf,
    durability,
    durability_plain_mc,
    mttdl_seconds,
    overlap_probability,
    ure_probability,
)

H = 3600.0
Z95 = 1.959963984540054
IDLE_LOADED = RebuildWindow((20 * H, 60 * H), (0.5, 0.5))


def loss_events(d: Durability) -> tuple[float, float]:
    """E[N] and its standard error, read back from a pool without stripes."""
    mean = -math.log1p(-d.loss_probability)
    high = -math.log1p(-d.loss_probability_ci95[1])
    return mean, (high - mean) / Z95


# ---------------------------------------------------------------- failure model


def test_afr_from_mtbf_is_one_year_of_exponential_lifetime():
    assert afr_from_mtbf(1_000_000) == pytest.approx(1 - math.exp(-8766 / 1e6), rel=1e-12)
    assert afr_from_mtbf(1_000_000) == pytest.approx(0.008727, abs=1e-6)
    # the AFR of a 2.5 Mh datasheet MTBF is about 0.35 %
    assert afr_from_mtbf(2_500_000) == pytest.approx(0.0035, abs=2e-5)


@pytest.mark.parametrize(
    ("distribution", "shape"),
    [("exponential", 1.0), ("weibull", 0.7), ("weibull", 1.12), ("weibull", 3.0)],
)
def test_first_year_failure_probability_is_the_afr(distribution, shape):
    model = FailureModel(0.03, distribution, weibull_shape=shape)
    assert 1 - float(model.survival(YEAR)) == pytest.approx(0.03, rel=1e-12)
    assert model.shape == shape


def test_exponential_survival_compounds_by_year():
    model = FailureModel(0.05)
    assert float(model.survival(3 * YEAR)) == pytest.approx(0.95**3, rel=1e-12)
    assert model.exponential_mttf_seconds == pytest.approx(YEAR / -math.log(0.95), rel=1e-12)


def test_weibull_scale_reproduces_elerath_pecht_fit():
    # Elerath & Pecht (2009): β = 1.12, η = 461 386 h. Its first-year failure probability,
    # fed back as the AFR, must give that η back.
    afr = 1 - math.exp(-((8766 / 461_386) ** 1.12))
    assert afr == pytest.approx(0.0118, abs=1e-4)
    model = FailureModel(afr, "weibull")
    assert model.weibull_shape == 1.12
    assert model.scale_seconds == pytest.approx(461_386 * H, rel=1e-9)


@pytest.mark.parametrize("shape", [1.0, 1.12, 3.0, 0.6])
def test_conditional_failure_is_the_ratio_of_survivals(shape):
    model = FailureModel(0.2, "weibull", weibull_shape=shape)
    age = np.array([0.0, 1e3, 3e7, 2e8])
    window = 36 * H
    direct = 1 - model.survival(age + window) / model.survival(age)
    assert model.conditional_failure(age, window) == pytest.approx(direct, rel=1e-9)
    if shape > 1:  # wear-out: an old disk is likelier to fail in the window than a new one
        assert np.all(np.diff(model.conditional_failure(age, window)) > 0)


def test_weibull_lifetimes_have_the_weibull_mean():
    model = FailureModel(0.1, "weibull", weibull_shape=2.0)
    draws = model.lifetimes(np.random.default_rng(5), 200_000)
    se = draws.std() / math.sqrt(draws.size)
    assert abs(draws.mean() - model.mttf_seconds) < 4 * se


# ---------------------------------------------------------------- closed forms


def test_ure_probability_of_a_12tb_read_at_1e14():
    assert ure_probability(12e12, 1e-14) == pytest.approx(1 - math.exp(-0.96), rel=1e-12)
    assert ure_probability(12e12, 1e-14) == pytest.approx(0.617, abs=5e-4)
    assert ure_probability(12e12, 0.0) == 0.0


def test_mttdl_formulas():
    mttf, mttr = 1e6 * H, 24 * H
    assert mttdl_seconds(8, 1, mttf, mttr) == pytest.approx(mttf**2 / (8 * 7 * mttr), rel=1e-12)
    # Chen et al. (1994), RAID 6: MTTF³ / (N (N − 1) (N − 2) MTTR²)
    assert mttdl_seconds(8, 2, mttf, mttr) == pytest.approx(
        mttf**3 / (8 * 7 * 6 * mttr**2), rel=1e-12
    )
    assert mttdl_seconds(4, 0, mttf, mttr) == pytest.approx(mttf / 4, rel=1e-12)
    assert mttdl_seconds(12, 3, mttf, mttr) == pytest.approx(
        mttf**4 / (12 * 11 * 10 * 9 * mttr**3), rel=1e-12
    )


def test_pool_mttdl_is_group_mttdl_over_count():
    model = FailureModel(0.02)
    one = GroupSpec(6, 2, 1, IDLE_LOADED, 0.0)
    three = GroupSpec(6, 2, 3, IDLE_LOADED, 0.0)
    a = durability([one], model, 5 * YEAR, trials=200)
    b = durability([three], model, 5 * YEAR, trials=200)
    expected = mttdl_seconds(6, 2, model.exponential_mttf_seconds, 40 * H)
    assert a.mttdl_seconds == pytest.approx(expected, rel=1e-12)
    assert b.mttdl_seconds == pytest.approx(expected / 3, rel=1e-12)
    assert b.mttdl_loss_probability == pytest.approx(
        1 - math.exp(-5 * YEAR * 3 / expected), rel=1e-12
    )


@pytest.mark.parametrize("distribution", ["exponential", "weibull"])
def test_stripe_is_closed_form(distribution):
    model = FailureModel(0.02, distribution)
    stripe = GroupSpec(1, 0, 10, IDLE_LOADED, 0.0, "stripe of 10")
    d = durability([stripe], model, 5 * YEAR, trials=200)
    exact = 1 - float(model.survival(5 * YEAR)) ** 10
    if distribution == "exponential":
        assert exact == pytest.approx(1 - 0.98**50, rel=1e-12)
    assert d.loss_probability == pytest.approx(exact, rel=1e-12)
    assert d.loss_probability_ci95 == pytest.approx((exact, exact), rel=1e-12)
    assert d.window_loss_probability == 1.0
    assert d.ure_probability == 0.0
    plain = durability_plain_mc([stripe], model, 5 * YEAR, trials=20000, seed=2)
    se = math.sqrt(exact * (1 - exact) / plain.trials)
    assert abs(plain.loss_probability - exact) < 4 * se


# ---------------------------------------------------------------- overlap of windows


@pytest.mark.parametrize("t", [2, 3, 4])
@pytest.mark.parametrize("span_h", [15.0, 40.0, 100.0])
def test_overlap_probability_matches_brute_force(t, span_h):
    window = RebuildWindow((20 * H, 60 * H, 35 * H), (0.5, 0.3, 0.2))
    span = span_h * H
    rng = np.random.default_rng(11)
    n = 200_000
    fails = rng.random((n, t)) * span
    downs = window.sample(rng, n * t).reshape(n, t)
    last = fails.max(axis=1)
    together = np.all(fails + downs > last[:, None], axis=1).mean()
    g = float(overlap_probability(t, span, window))
    assert abs(g - together) < 4 * math.sqrt(together * (1 - together) / n) + 1e-9
    if span_h <= 20:  # every window outlasts the span: all are down together
        assert g == 1.0


def test_overlap_probability_closed_form_for_two():
    # one window length v < w: the gap between two uniform failures must be below v,
    # P = 1 − (1 − v/w)²
    window = RebuildWindow.fixed(10 * H)
    for span in (10 * H, 25 * H, 80 * H):
        expected = 1 - (1 - min(1.0, 10 * H / span)) ** 2
        assert float(overlap_probability(2, span, window)) == pytest.approx(expected, rel=1e-12)
    assert float(overlap_probability(1, 80 * H, window)) == 1.0


# ---------------------------------------------------------------- estimator vs plain Monte Carlo

LONG = RebuildWindow((200 * H, 600 * H), (0.5, 0.5))
LONGER = RebuildWindow((300 * H, 900 * H), (0.6, 0.4))


@pytest.mark.parametrize(
    ("spec", "model", "trials"),
    [
        (GroupSpec(6, 1, 1, IDLE_LOADED, 0.0), FailureModel(0.3), 20000),
        (GroupSpec(2, 1, 3, IDLE_LOADED, 0.0), FailureModel(0.3, "weibull"), 20000),
        (GroupSpec(6, 2, 1, LONG, 0.0), FailureModel(0.3), 20000),
        (GroupSpec(6, 2, 1, LONG, 0.0), FailureModel(0.3, "weibull"), 20000),
        (GroupSpec(6, 2, 1, RebuildWindow.fixed(400 * H), 0.0), FailureModel(0.3), 20000),
        (GroupSpec(8, 2, 1, LONG, 0.0), FailureModel(0.05, "weibull", weibull_shape=2.5), 20000),
        (GroupSpec(8, 3, 1, LONGER, 0.0), FailureModel(0.4), 20000),
    ],
    ids=[
        "mirror-ish t1 exp",
        "mirror2 weibull",
        "t2 exp unequal",
        "t2 weibull unequal",
        "t2 exp equal",
        "t2 wear-out",
        "t3 exp",
    ],
)
def test_conditional_estimator_agrees_with_plain_monte_carlo(spec, model, trials):
    mission = 5 * YEAR
    cond = durability([spec], model, mission, trials=trials, seed=3)
    plain = durability_plain_mc([spec], model, mission, trials=trials, seed=4)
    mean, se = loss_events(cond)
    assert plain.loss_events > 0.005  # losses are frequent enough for plain Monte Carlo
    # the same estimand, E[N]
    assert abs(mean - plain.loss_events) < 4 * math.hypot(se, plain.loss_events_se)
    # the headline: P(loss) = 1 − exp(−E[N]) against the fraction of trials with > t disks
    # down at once; tolerance: 4 standard errors plus E[N]²/2, the order of the Poisson
    # approximation's error
    p = plain.loss_probability
    se_p = math.sqrt(p * (1 - p) / trials)
    assert abs(cond.loss_probability - p) < 4 * math.hypot(se, se_p) + mean**2 / 2
    # conditioning is the point: far smaller error for the same trials
    assert se < plain.loss_events_se / 5
    assert cond.expected_failures == pytest.approx(plain.expected_failures, rel=0.02)


def test_window_of_first_failure_alone_would_overcount_unequal_windows():
    # With 200 h / 600 h windows, "2 more failures within the first window" counts cases where
    # the second disk came back before the third failed. The plain simulation of "3 disks
    # down at once" must be well below that naive count and agree with the estimator.
    spec = GroupSpec(6, 2, 1, LONG, 0.0)
    model = FailureModel(0.3)
    plain = durability_plain_mc([spec], model, 5 * YEAR, trials=20000, seed=4)
    cond = durability([spec], model, 5 * YEAR, trials=20000, seed=3)
    lam = -math.log(0.7) / YEAR
    # naive leading order: failures × C(5,2) × E[(λw)²] (failures from the simulation)
    naive = cond.expected_failures * 10 * lam**2 * (0.5 * (200 * H) ** 2 + 0.5 * (600 * H) ** 2)
    assert plain.loss_probability < 0.85 * naive
    assert cond.loss_probability < 0.85 * naive


# ---------------------------------------------------------------- limits and properties


def test_mirror_with_short_windows_matches_mttdl():
    # The textbook limit: exponential lifetimes, MTTR ≪ MTTF, one parity. E[N] =
    # failures × P(partner fails in the window) ≈ 2λM · λw = M / MTTDL.
    spec = GroupSpec(2, 1, 4, RebuildWindow((12 * H, 36 * H), (0.75, 0.25)), 0.0)
    d = durability([spec], FailureModel(0.02), 5 * YEAR, trials=100_000, seed=7)
    mean, se = loss_events(d)
    expected = 5 * YEAR / d.mttdl_seconds
    # 4 standard errors (≈ 1.4 %) plus 1 % for the second-order terms (down time, λw)
    assert abs(mean - expected) < 4 * se + 0.01 * expected
    assert d.loss_probability == pytest.approx(d.mttdl_loss_probability, rel=0.03)


def test_double_parity_is_half_the_mttdl_figure():
    # MTTF³/(N(N−1)(N−2)MTTR²) is the Markov chain in which, with two disks down, repairs
    # finish at rate 1/MTTR: one at a time. Here each failed disk has its own window, so the
    # two-down state ends with the first of the two windows: half the exposure (1/t! for
    # t parities).
    spec = GroupSpec(6, 2, 2, RebuildWindow.fixed(24 * H), 0.0)
    d = durability([spec], FailureModel(0.02), 5 * YEAR, trials=100_000, seed=7)
    mean, se = loss_events(d)
    expected = 5 * YEAR / d.mttdl_seconds / 2
    assert abs(mean - expected) < 4 * se + 0.01 * expected
    triple = GroupSpec(8, 3, 2, RebuildWindow.fixed(24 * H), 0.0)
    d3 = durability([triple], FailureModel(0.02), 5 * YEAR, trials=100_000, seed=7)
    mean3, se3 = loss_events(d3)
    expected3 = 5 * YEAR / d3.mttdl_seconds / 6
    assert abs(mean3 - expected3) < 4 * se3 + 0.01 * expected3


def test_rare_losses_depend_on_the_mean_window_only():
    # With independent windows, the chance that t given disks are down at one instant is
    # (λ E[w])^t whatever the window distribution: 20 h / 60 h half and half loses data as
    # often as a fixed 40 h. (Counting "t more failures within the first window" alone would
    # give E[w²]/E[w]² = 1.25 times more.)
    model = FailureModel(0.02)
    mixed = durability([GroupSpec(6, 2, 2, IDLE_LOADED, 0.0)], model, 5 * YEAR, trials=50_000)
    fixed = durability(
        [GroupSpec(6, 2, 2, RebuildWindow.fixed(40 * H), 0.0)], model, 5 * YEAR, trials=50_000
    )
    m1, se1 = loss_events(mixed)
    m2, se2 = loss_events(fixed)
    assert abs(m1 - m2) < 4 * math.hypot(se1, se2) + 0.01 * m2


def test_window_loss_of_a_mirror_is_the_partner_failing_in_the_window():
    model = FailureModel(0.02)
    spec = GroupSpec(2, 1, 3, IDLE_LOADED, 0.0)
    d = durability([spec], model, 5 * YEAR, trials=2000)
    lam = -math.log(0.98) / YEAR
    exact = 0.5 * -math.expm1(-lam * 20 * H) + 0.5 * -math.expm1(-lam * 60 * H)
    assert d.window_loss_probability == pytest.approx(exact, rel=1e-3)


def test_window_loss_grows_with_age_only_for_wear_out():
    spec = GroupSpec(6, 1, 2, IDLE_LOADED, 0.0)
    short, long = 1 * YEAR, 10 * YEAR
    wear = FailureModel(0.05, "weibull", weibull_shape=3.0)
    assert (
        durability([spec], wear, long, trials=2000).window_loss_probability
        > 1.5 * durability([spec], wear, short, trials=2000).window_loss_probability
    )
    flat = FailureModel(0.05)
    assert durability([spec], flat, long, trials=2000).window_loss_probability == pytest.approx(
        durability([spec], flat, short, trials=2000).window_loss_probability, rel=1e-3
    )


def test_windows_are_cut_at_the_mission_end():
    # windows far longer than the mission: a failure at τ exposes the partner for M − τ only,
    # E[N] = ∫₀ᴹ 2λ (1 − e^(−λ(M−τ))) dτ = 2(λM − 1 + e^(−λM))
    mission = 30 * 86400.0
    spec = GroupSpec(2, 1, 1, RebuildWindow.fixed(300 * 86400.0), 0.0)
    model = FailureModel(0.1)
    d = durability([spec], model, mission, trials=200_000, seed=5)
    mean, se = loss_events(d)
    lm = -math.log(0.9) / YEAR * mission
    expected = 2 * (lm - 1 + math.exp(-lm))
    assert abs(mean - expected) < 4 * se + 0.005 * expected


def test_expected_failures_of_exponential_disks():
    model = FailureModel(0.05)
    spec = GroupSpec(6, 2, 2, IDLE_LOADED, 0.0)
    d = durability([spec], model, 5 * YEAR, trials=20000)
    expected = 12 * -math.log(0.95) * 5  # a Poisson process; down time is negligible
    se = math.sqrt(expected / 20000)
    assert abs(d.expected_failures - expected) < 4 * se + 0.002 * expected
    # Weibull β = 1.12 with the same first-year AFR: the hazard keeps rising, more failures
    wd = durability([spec], FailureModel(0.05, "weibull"), 5 * YEAR, trials=20000)
    assert wd.expected_failures > d.expected_failures + 8 * se


def test_weibull_of_shape_one_is_the_exponential():
    spec = GroupSpec(6, 2, 2, IDLE_LOADED, 48e12)
    a = durability([spec], FailureModel(0.05), 5 * YEAR, trials=2000, seed=9)
    b = durability(
        [spec], FailureModel(0.05, "weibull", weibull_shape=1.0), 5 * YEAR, trials=2000, seed=9
    )
    assert b.loss_probability == pytest.approx(a.loss_probability, rel=1e-9)
    assert b.ure_probability == pytest.approx(a.ure_probability, rel=1e-9)
    assert b.expected_failures == a.expected_failures


@settings(max_examples=25, deadline=None)
@given(
    afr=st.floats(0.005, 0.08),
    window_h=st.floats(6.0, 200.0),
    factor=st.floats(1.6, 4.0),
    disks=st.integers(4, 12),
    tolerance=st.integers(1, 2),
)
def test_loss_grows_with_window_and_afr_and_falls_with_tolerance(
    afr, window_h, factor, disks, tolerance
):
    def loss(afr: float, window_h: float, tolerance: int) -> float:
        spec = GroupSpec(disks, tolerance, 2, RebuildWindow.fixed(window_h * H), 0.0)
        return durability([spec], FailureModel(afr), 5 * YEAR, trials=2000).loss_probability

    base = loss(afr, window_h, tolerance)
    assert base > 0
    assert loss(afr, window_h * factor, tolerance) > base
    assert loss(min(0.5, afr * factor), window_h, tolerance) > base
    assert loss(afr, window_h, tolerance + 1) < base


def test_mixed_pool_multiplies_survival():
    model = FailureModel(0.03, "weibull")
    mirror = GroupSpec(2, 1, 4, IDLE_LOADED, 12e12)
    stripe = GroupSpec(1, 0, 2, IDLE_LOADED, 0.0)
    alone = durability([mirror], model, 5 * YEAR, trials=5000, seed=4)
    mixed = durability([mirror, stripe], model, 5 * YEAR, trials=5000, seed=4)
    stripe_survival = float(model.survival(5 * YEAR)) ** 2
    assert 1 - mixed.loss_probability == pytest.approx(
        (1 - alone.loss_probability) * stripe_survival, rel=1e-12
    )
    assert mixed.window_loss_probability == 1.0
    assert mixed.expected_failures > alone.expected_failures
    assert mixed.mttdl_seconds < alone.mttdl_seconds


# ---------------------------------------------------------------- URE


def test_ure_figures_of_a_mirror():
    # a mirror rebuild has no redundancy: every rebuild reads 12 TB at 1e-14 per bit
    model = FailureModel(0.02, ure_per_bit=1e-14)
    spec = GroupSpec(2, 1, 3, IDLE_LOADED, 12e12)
    d = durability([spec], model, 5 * YEAR, trials=20000, seed=2)
    per_rebuild = 1 - math.exp(-0.96)
    assert d.window_ure_probability == pytest.approx(per_rebuild, rel=1e-3)
    # failures are nearly Poisson(μ): P(no URE) = E[(1 − p)^K] = exp(−μ p)
    expected = 1 - math.exp(-d.expected_failures * per_rebuild)
    assert abs(d.ure_probability - expected) < 4 * math.sqrt(expected * (1 - expected) / 20000)


def test_ure_needs_no_redundancy_left():
    # raidz2: a URE matters only when a second disk fails in the window, so it is rare;
    # raidz1 of the same disks: every rebuild is exposed
    model = FailureModel(0.02, ure_per_bit=1e-15)
    z1 = durability([GroupSpec(6, 1, 1, IDLE_LOADED, 60e12)], model, 5 * YEAR, trials=5000)
    z2 = durability([GroupSpec(6, 2, 1, IDLE_LOADED, 60e12)], model, 5 * YEAR, trials=5000)
    assert z1.window_ure_probability == pytest.approx(1 - math.exp(-0.48), rel=1e-3)
    assert z2.window_ure_probability < 1e-3 * z1.window_ure_probability
    assert z2.ure_probability < 1e-3 * z1.ure_probability
    off = durability(
        [GroupSpec(6, 1, 1, IDLE_LOADED, 60e12)],
        FailureModel(0.02, ure_per_bit=0.0),
        5 * YEAR,
        trials=200,
    )
    assert off.ure_probability == 0.0


# ---------------------------------------------------------------- reproducibility, output


def test_same_seed_same_result_other_seed_close():
    spec = GroupSpec(8, 2, 3, IDLE_LOADED, 84e12, "raidz2 8")
    model = FailureModel(0.015, "weibull")
    a = durability([spec], model, 5 * YEAR, trials=5000, seed=1)
    b = durability([spec], model, 5 * YEAR, trials=5000, seed=1)
    c = durability([spec], model, 5 * YEAR, trials=5000, seed=2)
    assert a == b
    assert c.loss_probability != a.loss_probability
    mean_a, se_a = loss_events(a)
    mean_c, se_c = loss_events(c)
    assert abs(mean_a - mean_c) < 4 * math.hypot(se_a, se_c)
    assert a.seed == 1 and c.seed == 2 and a.trials == 5000


def test_to_dict_is_json_with_every_field():
    spec = GroupSpec(6, 2, 2, IDLE_LOADED, 60e12, "raidz2 6")
    d = durability([spec], FailureModel(0.015), 5 * YEAR, trials=500)
    data = json.loads(json.dumps(d.to_dict(), allow_nan=False))
    assert data["loss_probability"] == d.loss_probability
    assert data["loss_probability_ci95"] == list(d.loss_probability_ci95)
    assert data["mission_seconds"] == 5 * YEAR
    assert data["trials"] == 500 and "conditional Monte Carlo" in data["method"]
    lo, hi = d.loss_probability_ci95
    assert 0 < lo < d.loss_probability < hi < 1e-6


def test_ten_groups_of_ten_disks_is_quick():
    spec = GroupSpec(10, 2, 10, IDLE_LOADED, 108e12, "raidz2 10")
    start = time.perf_counter()
    d = durability([spec], FailureModel(0.015, "weibull"), 5 * YEAR, trials=20000)
    elapsed = time.perf_counter() - start
    print(f"\n10 × raidz2 10, 20000 trials: {elapsed:.3f} s, P(loss) = {d.loss_probability:.3g}")
    assert 0 < d.loss_probability < 1e-4


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: FailureModel(0.0), "afr"),
        (lambda: FailureModel(1.0), "afr"),
        (lambda: FailureModel(1.5), "afr"),
        (lambda: FailureModel(float("nan")), "afr"),
        (lambda: FailureModel("2%"), "afr"),
        (lambda: FailureModel(0.01, "lognormal"), "distribution"),
        (lambda: FailureModel(0.01, "weibull", weibull_shape=0.0), "weibull_shape"),
        (lambda: FailureModel(0.01, ure_per_bit=-1e-15), "ure_per_bit"),
        (lambda: RebuildWindow((10.0, 20.0), (0.5,)), "weight"),
        (lambda: RebuildWindow((), ()), "RebuildWindow"),
        (lambda: RebuildWindow((0.0,), (1.0,)), "seconds"),
        (lambda: RebuildWindow((-5.0, 20.0), (0.5, 0.5)), "seconds"),
        (lambda: RebuildWindow((10.0, 20.0), (0.5, 0.6)), "sum to 1"),
        (lambda: RebuildWindow((10.0, 20.0), (1.5, -0.5)), "weights"),
        (lambda: GroupSpec(0, 0, 1, IDLE_LOADED, 0.0), "disks"),
        (lambda: GroupSpec(6, 6, 1, IDLE_LOADED, 0.0), "tolerance"),
        (lambda: GroupSpec(6, -1, 1, IDLE_LOADED, 0.0), "tolerance"),
        (lambda: GroupSpec(1, 1, 1, IDLE_LOADED, 0.0), "tolerance"),
        (lambda: GroupSpec(6, 2, 0, IDLE_LOADED, 0.0), "count"),
        (lambda: GroupSpec(6, 2.5, 1, IDLE_LOADED, 0.0), "tolerance"),
        (lambda: GroupSpec(6, 2, 1, 72000.0, 0.0), "window"),
        (lambda: GroupSpec(6, 2, 1, IDLE_LOADED, -1.0), "rebuild_read_bytes"),
        (lambda: durability([], FailureModel(0.01), YEAR), "groups"),
        (lambda: durability([GroupSpec(2, 1, 1, IDLE_LOADED, 0.0)], 0.01, YEAR), "FailureModel"),
        (
            lambda: durability([GroupSpec(2, 1, 1, IDLE_LOADED, 0.0)], FailureModel(0.01), 0.0),
            "mission_seconds",
        ),
        (
            lambda: durability(
                [GroupSpec(2, 1, 1, IDLE_LOADED, 0.0)], FailureModel(0.01), YEAR, trials=99
            ),
            "trials",
        ),
        (
            lambda: durability(
                [GroupSpec(2, 1, 1, IDLE_LOADED, 0.0)], FailureModel(0.01), YEAR, seed=-1
            ),
            "seed",
        ),
        (lambda: afr_from_mtbf(0), "mtbf_hours"),
        (lambda: mttdl_seconds(4, 4, 1e10, 1e5), "tolerance"),
        (lambda: mttdl_seconds(4, 1, 1e10, 0.0), "mttr_seconds"),
    ],
)
def test_bad_input_raises_one_line_naming_the_field(build, field):
    with pytest.raises(ZsimError) as info:
        build()
    message = str(info.value)
    assert field in message
    assert "\n" not in message
