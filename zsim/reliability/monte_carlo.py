"""The conditional Monte Carlo estimate of the loss probability (:func:`durability`) and the
plain simulation it is checked against (:func:`durability_plain_mc`); the method is
described in :mod:`zsim.reliability`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zsim.errors import ZsimError
from zsim.reliability.model import (
    Durability,
    FailureModel,
    GroupSpec,
    PlainEstimate,
    RebuildWindow,
    checked_real,
    checked_whole,
    mttdl_seconds,
    shown,
    ure_probability,
)

_Z95 = 1.959963984540054
#: disk slots simulated at once, and floats held per batch of failures (bound the memory)
_SLOT_BUDGET = 1 << 21
_CELL_BUDGET = 1 << 23


@dataclass(frozen=True)
class _Failures:
    """The failures of one group kind over a chunk of trials, sorted by (group, time)."""

    trial: np.ndarray  # trial of each failure, within the chunk
    group: np.ndarray  # group of each failure, within the chunk (trial * count + index)
    slot: np.ndarray  # disk slot within its group
    tau: np.ndarray  # failure time, s
    window: np.ndarray  # its rebuild window (sampled), s


def _simulate_failures(
    spec: GroupSpec, model: FailureModel, mission: float, rng: np.random.Generator, trials: int
) -> _Failures:
    """Renewal paths of every disk slot of ``trials`` pools: a slot's disk fails after a
    lifetime, the slot is down for a sampled window, then holds a new disk. Failures at or
    after the mission end are dropped. Vectorised over slots; one pass per failure rank."""
    per_trial = spec.count * spec.disks
    active = np.arange(trials * per_trial, dtype=np.int64)
    start = np.zeros(active.size)
    ids, taus, windows = [], [], []
    while active.size:
        tau = start + model.lifetimes(rng, active.size)
        hit = tau < mission
        active, tau = active[hit], tau[hit]
        window = spec.window.sample(rng, active.size)
        ids.append(active)
        taus.append(tau)
        windows.append(window)
        start = tau + window
        keep = start < mission
        active, start = active[keep], start[keep]
    slot_id = np.concatenate(ids)
    tau = np.concatenate(taus)
    window = np.concatenate(windows)
    group = slot_id // spec.disks
    order = np.lexsort((tau, group))
    return _Failures(
        trial=group[order] // spec.count,
        group=group[order],
        slot=(slot_id % spec.disks)[order],
        tau=tau[order],
        window=window[order],
    )


@dataclass(frozen=True)
class _Neighbours:
    """The other slots of each failure's group at the failure time τ; arrays (failures, disks).

    ``age``: seconds since the slot's disk was new; ``up``: the slot works at τ (False for
    the failing slot itself and for slots still down in their own window). With hits (plain
    Monte Carlo only): ``hit`` marks up slots whose disk fails within the failure's window,
    ``hit_tau`` and ``hit_back`` that failure's time and the end of its window, s."""

    age: np.ndarray
    up: np.ndarray
    hit: np.ndarray | None = None
    hit_tau: np.ndarray | None = None
    hit_back: np.ndarray | None = None


def _neighbours(f: _Failures, disks: int, with_hits: bool = False) -> _Neighbours:
    """The state of the other slots of its group at each failure, from the failures of the
    same group in the same trial (only groups with several failures need a look)."""
    n = f.tau.size
    age = np.repeat(f.tau[:, None], disks, axis=1)
    up = np.ones((n, disks), dtype=bool)
    up[np.arange(n), f.slot] = False
    hit = np.zeros((n, disks), dtype=bool) if with_hits else None
    hit_tau = np.full((n, disks), -np.inf) if with_hits else None
    hit_back = np.full((n, disks), np.inf) if with_hits else None
    if n:
        first = np.flatnonzero(np.r_[True, f.group[1:] != f.group[:-1]])
        counts = np.diff(np.r_[first, n])
        row = np.repeat(np.arange(first.size), counts)
        back = f.tau + f.window
        most = int(counts.max())
        padded = np.full((first.size, most), -1, dtype=np.int64)
        padded[row, np.arange(n) - first[row]] = np.arange(n)
        ev = np.flatnonzero(counts[row] > 1)
        for column in range(most if ev.size else 0):
            other = padded[row[ev], column]
            ok = (other >= 0) & (f.slot[np.maximum(other, 0)] != f.slot[ev])
            e, o = ev[ok], other[ok]
            # a slot's failures are in time order: the last assignment is its latest renewal
            renewed = back[o] <= f.tau[e]
            age[e[renewed], f.slot[o[renewed]]] = f.tau[e[renewed]] - back[o[renewed]]
            down = (f.tau[o] < f.tau[e]) & ~renewed
            up[e[down], f.slot[o[down]]] = False
            if hit is not None and hit_tau is not None and hit_back is not None:
                inside = (f.tau[o] > f.tau[e]) & (f.tau[o] <= f.tau[e] + f.window[e])
                inside &= ~hit[e, f.slot[o]]  # the slot's first failure after τ only
                e, o = e[inside], o[inside]
                hit[e, f.slot[o]] = True
                hit_tau[e, f.slot[o]] = f.tau[o]
                hit_back[e, f.slot[o]] = back[o]
    if hit is not None:
        hit &= up
    return _Neighbours(age, up, hit, hit_tau, hit_back)


def _tail(q: np.ndarray, top: int) -> np.ndarray:
    """Poisson-binomial probabilities of the number of events among independent Bernoulli
    trials with probabilities ``q`` (last axis), capped at ``top``: returns [..., k] =
    P(exactly k) for k < top and [..., top] = P(≥ top). The standard recursion (Chen & Liu,
    Statistica Sinica 7, 1997) with an absorbing top state, so that a tiny tail is summed,
    never obtained as 1 − (a number near 1)."""
    columns = np.ascontiguousarray(np.moveaxis(q, -1, 0))
    dp = np.zeros((top + 1, *q.shape[:-1]))
    dp[0] = 1.0
    for p in columns:
        if not p.any():
            continue
        carry = dp[:top] * p
        dp[:top] *= 1.0 - p  # the top state is absorbing: it keeps all of its mass
        dp[1:] += carry
    return np.moveaxis(dp, 0, -1)


def overlap_probability(t: int, span: Any, window: RebuildWindow) -> np.ndarray:
    """g_t(w): the probability that a disk failing at time 0 (down until ``span``) and ``t``
    other disks failing at independent uniform times in (0, ``span``), each then down for its
    own window drawn from ``window``, are all down at one instant.

    All t + 1 are down at once iff each earlier one is still down when the last fails. Given
    the last failure at u (density t u^(t−1)/w^t), the others are uniform on (0, u) and one is
    still down with probability (1/u)∫₀ᵘ P(V > y) dy = E[min(V, u)]/u, so
    g_t(w) = t/w^t ∫₀ʷ E[min(V, u)]^(t−1) du — evaluated exactly, E[min(V, u)] being piecewise
    linear in u for a discrete window distribution. g = 1 when t ≤ 1 or every window is at
    least ``span`` (then the first window-rule "t others fail within the window" is exact);
    g ≤ 1 always. Failure times within a window are uniform when the window is short next to
    the disks' lifetimes (the hazard barely changes across it). ``span`` in s, any shape.
    """
    w = np.asarray(span, dtype=float)
    if t <= 1:
        return np.ones_like(w)
    order = np.argsort(window.seconds)
    values = np.asarray(window.seconds)[order]
    probs = np.asarray(window.weights)[order]
    # in units of the span: a(s) = E[min(V/w, s)] = C + D s between consecutive values of V/w
    total = np.zeros_like(w)
    lo = np.zeros_like(w)
    c = np.zeros_like(w)
    d = 1.0
    for value, prob in zip(values, probs, strict=True):
        x = value / w
        hi = np.minimum(x, 1.0)
        if d > 1e-9:
            total += ((c + d * hi) ** t - (c + d * lo) ** t) / d
        else:
            total += t * c ** (t - 1) * (hi - lo)
        c = c + prob * x
        d -= prob
        lo = hi
    total += t * c ** (t - 1) * (1.0 - lo)  # beyond the longest window: a(s) = E[V]/w
    return np.minimum(total, 1.0)


def _window_terms(
    model: FailureModel,
    spec: GroupSpec,
    age: np.ndarray,
    up: np.ndarray,
    span: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Per failure, averaged over the window distribution (``span``: (lengths, failures), s):

    * P(loss) = g_t · P(exactly t up others fail in the window) + P(more than t do), with
      q_j = 1 − S(a_j + w)/S(a_j) per other disk and g_t from :func:`overlap_probability`;
    * P(no redundancy left) = g_(t−1) · P(exactly t − 1 do) (the rebuild that may hit a URE).
    """
    weights = np.asarray(spec.window.weights)
    t = spec.tolerance
    inc = model.hazard_increment(age[None, :, :], span[:, :, None])
    q = np.where(up[None, :, :], -np.expm1(-inc), 0.0)
    dp = _tail(q, t + 1)
    loss = overlap_probability(t, span, spec.window) * dp[..., t] + dp[..., t + 1]
    zero = overlap_probability(t - 1, span, spec.window) * dp[..., t - 1]
    return weights @ loss, weights @ zero


def _chunk_trials(spec: GroupSpec, model: FailureModel, mission: float, trials: int) -> int:
    """Trials simulated at once, so that slots and per-failure arrays stay within budget."""
    per_trial = spec.count * spec.disks
    per_slot = max(float(model.cumulative_hazard(mission)), mission / model.mttf_seconds, 1e-3)
    cells = per_trial * per_slot * spec.disks * (2 * len(spec.window.seconds) + 4)
    return max(1, min(trials, _SLOT_BUDGET // per_trial, int(_CELL_BUDGET // cells)))


def _validate_run(
    groups: Sequence[GroupSpec],
    failures: FailureModel,
    mission_seconds: float,
    trials: int,
    seed: int,
) -> tuple[tuple[GroupSpec, ...], float, int, int]:
    if not isinstance(failures, FailureModel):
        raise ZsimError(
            f"failures = {shown(failures)}: expected a FailureModel, e.g. FailureModel(afr=0.015)"
        )
    try:
        specs = tuple(groups)
    except TypeError:
        raise ZsimError("groups must be a sequence of GroupSpec, one per kind of group") from None
    if not specs:
        raise ZsimError("groups is empty: give at least one GroupSpec (the pool's data vdevs)")
    for spec in specs:
        if not isinstance(spec, GroupSpec):
            raise ZsimError(f"groups holds {shown(spec)}: every entry must be a GroupSpec")
    mission = checked_real(
        "mission_seconds", mission_seconds, "seconds above 0", "157788000 (5 years)"
    )
    if mission <= 0:
        raise ZsimError(
            f"mission_seconds = {mission}: expected seconds above 0, e.g. 157788000 (5 years)"
        )
    n = checked_whole("trials", trials, 100, "a whole number ≥ 100", "20000")
    s = checked_whole("seed", seed, 0, "a whole number ≥ 0", "1")
    return specs, mission, n, s


def durability(
    groups: Sequence[GroupSpec],
    failures: FailureModel,
    mission_seconds: float,
    *,
    trials: int = 20000,
    seed: int = 1,
) -> Durability:
    """Durability of a pool made of ``groups`` over ``mission_seconds``.

    * Stripes (tolerance 0): exact, P(no loss) = S(mission)^(disks · count).
    * Redundant groups: conditional Monte Carlo over ``trials`` simulated pools. Each trial
      draws every slot's renewal path (failure times, a window per failure). For each
      failure at time τ, with the other slots' disks at ages a_j taken from the same path (a
      slot still down at τ cannot fail again), q_j(w) = 1 − S(a_j + w)/S(a_j) is the
      probability that disk j fails within window w (cut at the mission end). The failure
      adds Σ_w p_w [g_t(w) · P(exactly t of the q_j) + P(more than t)] to the trial's count
      of loss events: the Poisson-binomial distribution of the others failing in the window,
      and g_t the probability that t of them and the first disk are all down at one instant
      (:func:`overlap_probability`; 1 when no window is shorter than w). Each loss is
      counted once, at the earliest failure among the disks down when it happens; the only
      double count is of more than t failures in one window, a higher-order term. The mean
      over trials estimates E[N], the expected number of loss events; the loss probability
      is 1 − exp(−E[N] − Σ_stripes n H(mission)), the Poisson approximation (its error
      grows with E[N]: nil for rare losses, a few per cent at E[N] ≈ 0.3–1). The 95 %
      interval maps E[N] ± 1.96 standard errors through the same formula.
    * URE: a failure after which t − 1 other disks fail in its window, all down together
      (for t = 1: no other), leaves the group without redundancy; its rebuild reads
      ``rebuild_read_bytes`` and hits a URE with probability 1 − exp(−8 · bytes ·
      ure_per_bit). Per trial P(no URE) = Π(1 − those terms); the figure is 1 − its mean.
      The whole read is charged, although part of it may be done before redundancy is lost.

    Each group kind draws from its own stream of ``numpy.random.SeedSequence(seed)``, so the
    same input and seed give the same figures.
    """
    specs, mission, trials, seed = _validate_run(groups, failures, mission_seconds, trials, seed)
    streams = np.random.SeedSequence(seed).spawn(len(specs))
    loss_events = np.zeros(trials)
    log_no_ure = np.zeros(trials)
    failure_count = np.zeros(trials)
    stripe_exponent = 0.0
    window_loss, window_ure = 0.0, 0.0
    for spec, stream in zip(specs, streams, strict=True):
        rng = np.random.default_rng(stream)
        ure_term = ure_probability(spec.rebuild_read_bytes, failures.ure_per_bit)
        lengths = np.asarray(spec.window.seconds)
        sum_loss = sum_ure = 0.0
        n_failures = 0
        chunk = _chunk_trials(spec, failures, mission, trials)
        for begin in range(0, trials, chunk):
            n = min(chunk, trials - begin)
            f = _simulate_failures(spec, failures, mission, rng, n)
            failure_count[begin : begin + n] += np.bincount(f.trial, minlength=n)
            if spec.tolerance == 0 or f.tau.size == 0:
                continue
            nb = _neighbours(f, spec.disks)
            age, up = nb.age, nb.up
            full = np.broadcast_to(lengths[:, None], (lengths.size, f.tau.size))
            loss_full, zero_full = _window_terms(failures, spec, age, up, full)
            loss, zero = loss_full.copy(), zero_full.copy()
            cut = f.tau + lengths.max() > mission
            if cut.any():
                short = np.minimum(lengths[:, None], mission - f.tau[cut][None, :])
                loss[cut], zero[cut] = _window_terms(failures, spec, age[cut], up[cut], short)
            ure = zero * ure_term
            loss_events[begin : begin + n] += np.bincount(f.trial, loss, minlength=n)
            with np.errstate(divide="ignore"):
                log_no_ure[begin : begin + n] += np.bincount(f.trial, np.log1p(-ure), minlength=n)
            sum_loss += float(loss_full.sum())
            sum_ure += float((zero_full * ure_term).sum())
            n_failures += f.tau.size
        if spec.tolerance == 0:
            stripe_exponent += spec.disks * spec.count * float(failures.cumulative_hazard(mission))
            window_loss = 1.0
            continue
        if n_failures:
            mean_loss, mean_ure = sum_loss / n_failures, sum_ure / n_failures
        else:  # no failure in any trial: others of half the mission's age
            age = np.full((1, spec.disks), mission / 2)
            up = np.ones((1, spec.disks), dtype=bool)
            up[0, 0] = False
            loss1, zero1 = _window_terms(failures, spec, age, up, lengths[:, None])
            mean_loss, mean_ure = float(loss1[0]), float(zero1[0]) * ure_term
        window_loss = max(window_loss, mean_loss)
        window_ure = max(window_ure, mean_ure)

    mean = float(loss_events.mean())
    se = float(loss_events.std(ddof=1)) / math.sqrt(trials)
    loss_p = -math.expm1(-(stripe_exponent + mean))
    ci = (
        -math.expm1(-(stripe_exponent + max(0.0, mean - _Z95 * se))),
        -math.expm1(-(stripe_exponent + mean + _Z95 * se)),
    )
    ure_p = float(np.mean(-np.expm1(log_no_ure)))

    rate = sum(
        spec.count
        / mttdl_seconds(
            spec.disks, spec.tolerance, failures.exponential_mttf_seconds, spec.window.mean_seconds
        )
        for spec in specs
    )
    pool_mttdl = 1.0 / rate
    dist = (
        "exponential" if failures.distribution == "exponential" else f"Weibull β={failures.shape:g}"
    )
    method = (
        f"conditional Monte Carlo over disk renewal paths ({trials} trials, seed {seed}, "
        f"{dist} lifetimes, AFR {failures.afr:g}): P(loss) = 1 − exp(−E[loss events]), "
        "stripes in closed form"
    )
    return Durability(
        mission_seconds=mission,
        loss_probability=loss_p,
        loss_probability_ci95=ci,
        ure_probability=ure_p,
        window_loss_probability=window_loss,
        window_ure_probability=window_ure,
        expected_failures=float(failure_count.mean()),
        mttdl_seconds=pool_mttdl,
        mttdl_loss_probability=-math.expm1(-mission / pool_mttdl),
        trials=trials,
        seed=seed,
        method=method,
    )


def durability_plain_mc(
    groups: Sequence[GroupSpec],
    failures: FailureModel,
    mission_seconds: float,
    *,
    trials: int = 20000,
    seed: int = 1,
) -> PlainEstimate:
    """Plain Monte Carlo of the same model: simulate every failure and window and count the
    trials in which more than ``tolerance`` disks of a group were down at once (a stripe: any
    failure). Only useful where losses are frequent (inflated AFRs, long windows) — it is the
    reference the tests check :func:`durability` against. Also counts, per trial, the failures
    whose window saw ≥ ``tolerance`` other up disks of the group fail: the E[N] that
    :func:`durability` estimates by conditioning."""
    specs, mission, trials, seed = _validate_run(groups, failures, mission_seconds, trials, seed)
    streams = np.random.SeedSequence(seed).spawn(len(specs))
    lost = np.zeros(trials, dtype=bool)
    events = np.zeros(trials)
    failure_count = np.zeros(trials)
    for spec, stream in zip(specs, streams, strict=True):
        rng = np.random.default_rng(stream)
        chunk = _chunk_trials(spec, failures, mission, trials)
        for begin in range(0, trials, chunk):
            n = min(chunk, trials - begin)
            f = _simulate_failures(spec, failures, mission, rng, n)
            failure_count[begin : begin + n] += np.bincount(f.trial, minlength=n)
            if f.tau.size == 0:
                continue
            nb = _neighbours(f, spec.disks, with_hits=True)
            assert nb.hit is not None and nb.hit_tau is not None and nb.hit_back is not None
            others_down = spec.disks - 1 - nb.up.sum(axis=1)
            at_once = (others_down >= spec.tolerance).astype(float)
            lost_here = np.bincount(f.trial, at_once, minlength=n) > 0
            lost[begin : begin + n] |= lost_here
            if spec.tolerance > 0:
                # the estimand of durability(): more than t others fail in the window, or
                # exactly t, all down together with the failed disk when the last one fails
                hits = nb.hit.sum(axis=1)
                last = np.where(nb.hit, nb.hit_tau, -np.inf).max(axis=1)
                first_back = np.where(nb.hit, nb.hit_back, np.inf).min(axis=1)
                together = (hits == spec.tolerance) & (first_back > last)
                counted = ((hits > spec.tolerance) | together).astype(float)
                events[begin : begin + n] += np.bincount(f.trial, counted, minlength=n)
    p = float(lost.mean())
    # Wilson score interval
    z2 = _Z95 * _Z95
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = _Z95 * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return PlainEstimate(
        mission_seconds=mission,
        loss_probability=p,
        loss_probability_ci95=(max(0.0, centre - half), min(1.0, centre + half)),
        loss_events=float(events.mean()),
        loss_events_se=float(events.std(ddof=1)) / math.sqrt(trials),
        expected_failures=float(failure_count.mean()),
        trials=trials,
        seed=seed,
    )
