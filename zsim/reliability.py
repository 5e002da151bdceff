"""The probability of losing data, given simulated rebuild windows.

The resilver simulator tells this module, per kind of redundancy group (a mirror, a raidz or
dRAID redundancy group, an md array, or a single disk of a stripe), how many disks it has,
how many failures it survives, how many such groups the pool has, a *distribution* of rebuild
windows (seconds from a failure until the group has its redundancy back, the replacement delay
included) and the bytes a rebuild reads from the survivors. :func:`durability` turns that and
a :class:`FailureModel` into a :class:`Durability`: the probability of losing a whole group
(hence the pool) within a mission time, with its 95 % confidence interval, the probability of
an unrecoverable read while a group had no redundancy left, per-window figures, and the classic
MTTDL figure for comparison. ``docs/durability.md`` explains the method with a worked example.

Model (all times in seconds, a year is 365.25 days = 31 557 600 s):

* **Disk lifetimes** are independent, exponential with rate λ = −ln(1 − AFR) / year, or
  Weibull with shape β and scale η = year / (−ln(1 − AFR))^(1/β), so that in both cases the
  probability of failing within the first year equals the AFR. Each disk *slot* is a renewal
  process: a failed disk's slot is down for one rebuild window w (drawn from the window
  distribution), then holds a new disk of age 0 (Elerath & Pecht, IEEE Trans. Computers
  58(3):289–299, 2009, model each slot this way, with Weibull times to operational failure).
* **A group is lost** when more than ``tolerance`` of its disks are down at once (each failed
  disk stays down for its own window). A stripe (tolerance 0) is lost at its first failure.
* **Unrecoverable read errors**: while ``tolerance`` disks of a group are down it has no
  redundancy left, and its rebuild reads ``rebuild_read_bytes`` with no way to repair a bad
  sector; that read hits at least one URE with probability 1 − exp(−8 · bytes · ure_per_bit)
  (a Poisson count of bit errors at the datasheet "non-recoverable read errors per bits read").

Estimator (see :func:`durability`): losses of redundant groups are rare events (10⁻⁷ per
mission is ordinary), which plain Monte Carlo cannot see. We use *conditional Monte Carlo*
(Ross, *Simulation*, 5th ed. 2013, ch. 9, variance reduction by conditioning; Asmussen &
Glynn, *Stochastic Simulation*, 2007, ch. V): simulate only the failure times of every slot,
which are common, and for each failure add the exact conditional probability, given the ages
of the other disks at that moment, that enough of them fail within its window — a
Poisson-binomial tail computed by the standard dynamic programme (e.g. Chen & Liu,
Statistica Sinica 7, 1997) — and are down together (:func:`overlap_probability`). The mean
over trials of that sum is an unbiased estimate of the expected number of loss events E[N];
the loss probability is reported as 1 − exp(−E[N]), the Poisson approximation for rare,
nearly independent events (Barbour, Holst & Janson, *Poisson Approximation*, 1992).
:func:`durability_plain_mc` is the straightforward simulation the tests check it against.

MTTDL (:func:`mttdl_seconds`): Patterson, Gibson & Katz (SIGMOD 1988) for one parity,
MTTF² / (N (N − 1) MTTR); for t parities MTTF^(t+1) / (N (N − 1) ⋯ (N − t) MTTR^t) (Chen,
Lee, Gibson, Katz & Patterson, ACM Computing Surveys 26(2), 1994, give t = 2). It assumes
exponential lifetimes and, for t ≥ 2, repairs done one at a time, and is reported for
comparison only: Greenan, Plank & Wylie ("Mean time to meaningless", HotStorage 2010) and
Elerath & Pecht (2009) show how it misleads.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from zsim.errors import ZsimError

#: seconds in a year of 365.25 days, as AFRs and mission times use
YEAR = 365.25 * 86400.0
#: hours in that year (afr_from_mtbf)
HOURS_PER_YEAR = 8766.0
DISTRIBUTIONS = ("exponential", "weibull")
#: Weibull shape β of hard disks' time to operational failure fitted to field data by Elerath
#: & Pecht, IEEE Trans. Computers 58(3):289–299, 2009 (their base case: β = 1.12, η = 461 386 h,
#: a slowly increasing hazard) [recalled: the paper's parameter table could not be retrieved
#: to re-check; the shared notes quote η = 461 386 h as used by fomy/simd]
ELERATH_PECHT_SHAPE = 1.12
#: largest number of disks in a group (the Poisson-binomial programme is O(disks × tolerance))
MAX_DISKS = 1024
_Z95 = 1.959963984540054
#: disk slots simulated at once, and floats held per batch of failures (bound the memory)
_SLOT_BUDGET = 1 << 21
_CELL_BUDGET = 1 << 23


# ---------------------------------------------------------------- inputs


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _real(name: str, value: Any, expected: str, example: str) -> float:
    """``value`` as a finite float, else a ZsimError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ZsimError(f"{name} = {_show(value)}: expected {expected}, e.g. {example}")
    number = float(value)
    if not math.isfinite(number):
        raise ZsimError(f"{name} = {_show(value)}: expected {expected}, e.g. {example}")
    return number


def _whole(name: str, value: Any, low: int, expected: str, example: str) -> int:
    """``value`` as an int ≥ ``low`` (not a bool), else a ZsimError naming ``name``."""
    if isinstance(value, bool):
        raise ZsimError(f"{name} = {_show(value)}: expected {expected}, e.g. {example}")
    try:
        number = operator.index(value)
    except TypeError:
        raise ZsimError(f"{name} = {_show(value)}: expected {expected}, e.g. {example}") from None
    if number < low:
        raise ZsimError(f"{name} = {number}: expected {expected}, e.g. {example}")
    return number


@dataclass(frozen=True)
class FailureModel:
    """How disks fail.

    Attributes:
        afr: annualized failure rate, the probability that a new disk fails within its first
            year (365.25 days); a fraction, 0 < afr < 1. Datasheets state 0.35–0.9 %
            (1–2.5 million hours MTBF, see :func:`afr_from_mtbf`); field replacement rates
            of 2–4 % are common (Schroeder & Gibson, FAST 2007).
        distribution: ``"exponential"`` (constant hazard λ = −ln(1 − afr) / year) or
            ``"weibull"``.
        weibull_shape: Weibull shape β (only with ``"weibull"``); default 1.12, the field fit
            of hard disks' time to operational failure by Elerath & Pecht (IEEE Trans.
            Computers 58(3), 2009). The scale η is derived so that the probability of failing
            within the first year equals ``afr``: η = year / (−ln(1 − afr))^(1/β).
        ure_per_bit: unrecoverable read errors per bit read (datasheet "non-recoverable read
            errors per bits read": 1e-14 consumer, 1e-15 NAS/enterprise); 0 disables the
            URE figures.
    """

    afr: float
    distribution: str = "exponential"
    weibull_shape: float = ELERATH_PECHT_SHAPE
    ure_per_bit: float = 1e-15

    def __post_init__(self) -> None:
        afr = _real("FailureModel.afr", self.afr, "a fraction between 0 and 1 (exclusive)", "0.015")
        if not 0.0 < afr < 1.0:
            raise ZsimError(
                f"FailureModel.afr = {afr}: expected a fraction between 0 and 1 (exclusive), "
                "e.g. 0.015 for 1.5 % a year (not a percentage)"
            )
        if self.distribution not in DISTRIBUTIONS:
            raise ZsimError(
                f"FailureModel.distribution = {_show(self.distribution)}: "
                f"use one of {', '.join(DISTRIBUTIONS)}"
            )
        shape = _real("FailureModel.weibull_shape", self.weibull_shape, "a number above 0", "1.12")
        if not 0.0 < shape <= 100.0:
            raise ZsimError(
                f"FailureModel.weibull_shape = {shape}: expected a number above 0 (at most 100), "
                "e.g. 1.12"
            )
        ure = _real("FailureModel.ure_per_bit", self.ure_per_bit, "a rate 0…1 per bit", "1e-15")
        if not 0.0 <= ure <= 1.0:
            raise ZsimError(
                f"FailureModel.ure_per_bit = {ure}: expected errors per bit read, 0…1, e.g. 1e-15"
            )
        object.__setattr__(self, "afr", afr)
        object.__setattr__(self, "weibull_shape", shape)
        object.__setattr__(self, "ure_per_bit", ure)

    @property
    def shape(self) -> float:
        """The Weibull shape β in use: 1 for the exponential distribution."""
        return 1.0 if self.distribution == "exponential" else self.weibull_shape

    @property
    def scale_seconds(self) -> float:
        """Weibull scale η, s (1/λ for the exponential): F(year) = 1 − exp(−(year/η)^β) = afr."""
        return YEAR / (-math.log1p(-self.afr)) ** (1.0 / self.shape)

    @property
    def mttf_seconds(self) -> float:
        """Mean time to failure of a new disk, s: η Γ(1 + 1/β) (= 1/λ when exponential)."""
        return self.scale_seconds * math.gamma(1.0 + 1.0 / self.shape)

    @property
    def exponential_mttf_seconds(self) -> float:
        """MTTF of the exponential distribution with this AFR, 1/λ = year / −ln(1 − afr), s —
        what a datasheet MTBF means and what the MTTDL formulas take."""
        return YEAR / -math.log1p(-self.afr)

    def cumulative_hazard(self, seconds: Any) -> np.ndarray:
        """H(t) = (t/η)^β of a new disk at age ``seconds``; S(t) = exp(−H(t))."""
        t = np.asarray(seconds, dtype=float)
        return (t / self.scale_seconds) ** self.shape

    def survival(self, seconds: Any) -> np.ndarray:
        """S(t): probability that a new disk is still working at age ``seconds``."""
        return np.exp(-self.cumulative_hazard(seconds))

    def hazard_increment(self, age: Any, window: Any) -> np.ndarray:
        """H(a + w) − H(a): −ln of the conditional survival S(a + w)/S(a) of a disk of age
        ``age`` over the next ``window`` seconds (arrays broadcast). Computed as
        (a/η)^β · expm1(β · log1p(w/a)) so that short windows on old disks keep their digits."""
        a = np.asarray(age, dtype=float)
        w = np.asarray(window, dtype=float)
        eta, beta = self.scale_seconds, self.shape
        if beta == 1.0:
            return np.broadcast_to(w / eta, np.broadcast_shapes(a.shape, w.shape))
        x, y = a / eta, w / eta
        positive = x > 0
        safe = np.where(positive, x, 1.0)
        return np.where(positive, safe**beta * np.expm1(beta * np.log1p(y / safe)), y**beta)

    def conditional_failure(self, age: Any, window: Any) -> np.ndarray:
        """1 − S(a + w)/S(a): probability that a disk of age ``age`` (s) fails within the next
        ``window`` seconds."""
        return -np.expm1(-self.hazard_increment(age, window))

    def lifetimes(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` lifetimes of new disks, s: η · E^(1/β) with E standard exponential."""
        e = rng.standard_exponential(n)
        if self.shape != 1.0:
            e **= 1.0 / self.shape
        return self.scale_seconds * e


@dataclass(frozen=True)
class RebuildWindow:
    """The distribution of one group's rebuild window: the seconds from a disk failure until
    the group has its redundancy back (replacement delay plus resilver), as a discrete
    distribution — e.g. an idle-pool and a loaded-pool resilver time with their shares.

    Attributes:
        seconds: possible window lengths, s, each > 0.
        weights: their probabilities, each ≥ 0, summing to 1 (within 1e-9).
    """

    seconds: tuple[float, ...]
    weights: tuple[float, ...]

    @classmethod
    def fixed(cls, seconds: float) -> RebuildWindow:
        """A window of one length, s."""
        return cls((seconds,), (1.0,))

    def __post_init__(self) -> None:
        try:
            seconds = tuple(self.seconds)
            weights = tuple(self.weights)
        except TypeError:
            raise ZsimError(
                "RebuildWindow.seconds and .weights must be sequences of numbers, "
                "e.g. RebuildWindow((72000.0, 216000.0), (0.5, 0.5))"
            ) from None
        if not seconds or len(seconds) != len(weights):
            raise ZsimError(
                f"RebuildWindow has {len(seconds)} window length(s) and {len(weights)} weight(s): "
                "give one weight per length, e.g. RebuildWindow((72000.0, 216000.0), (0.5, 0.5))"
            )
        secs = tuple(
            _real("RebuildWindow.seconds", s, "a duration in seconds above 0", "72000.0")
            for s in seconds
        )
        wts = tuple(_real("RebuildWindow.weights", w, "a probability 0…1", "0.5") for w in weights)
        if min(secs) <= 0:
            raise ZsimError(
                f"RebuildWindow.seconds = {secs}: every window must be above 0 seconds; "
                "add the replacement delay to the resilver time"
            )
        if min(wts) < 0:
            raise ZsimError(f"RebuildWindow.weights = {wts}: weights must be 0 or more")
        if abs(math.fsum(wts) - 1.0) > 1e-9:
            raise ZsimError(
                f"RebuildWindow.weights = {wts} sum to {math.fsum(wts):.12g}: "
                "they are probabilities and must sum to 1"
            )
        object.__setattr__(self, "seconds", secs)
        object.__setattr__(self, "weights", wts)

    @property
    def mean_seconds(self) -> float:
        """The mean window, s (the MTTR of the MTTDL formulas)."""
        return math.fsum(s * w for s, w in zip(self.seconds, self.weights, strict=True))

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` window lengths drawn from the distribution, s."""
        values = np.asarray(self.seconds)
        if values.size == 1:
            return np.full(n, values[0])
        cumulative = np.cumsum(self.weights)
        index = np.searchsorted(cumulative, rng.random(n) * cumulative[-1], side="right")
        return values[np.minimum(index, values.size - 1)]


@dataclass(frozen=True)
class GroupSpec:
    """One kind of redundancy group of the pool.

    Attributes:
        disks: leaves in one group (mirror width, raidz width, dRAID redundancy group
            width, md members); a stripe of single disks is 1 disk per group, tolerance 0.
        tolerance: disk failures a group survives (0 stripe, n − 1 mirror, the parity of
            raidz/dRAID, 1 for md RAID 5, 2 for RAID 6); 0 ≤ tolerance < disks.
        count: how many such groups the pool has (≥ 1).
        window: the distribution of its rebuild windows, s.
        rebuild_read_bytes: bytes read from the survivors to rebuild one failed disk, B.
        name: a label, e.g. ``"raidz2 8"``.
    """

    disks: int
    tolerance: int
    count: int
    window: RebuildWindow
    rebuild_read_bytes: float
    name: str = ""

    def __post_init__(self) -> None:
        disks = _whole("GroupSpec.disks", self.disks, 1, "a whole number ≥ 1", "8")
        if disks > MAX_DISKS:
            raise ZsimError(
                f"GroupSpec.disks = {disks}: at most {MAX_DISKS} disks per redundancy group"
            )
        tolerance = _whole(
            "GroupSpec.tolerance", self.tolerance, 0, "a whole number ≥ 0 (failures survived)", "2"
        )
        if tolerance >= disks:
            raise ZsimError(
                f"GroupSpec.tolerance = {tolerance} with disks = {disks}: a group survives at "
                f"most disks − 1 = {disks - 1} failures; use tolerance 0 for a single disk"
            )
        count = _whole("GroupSpec.count", self.count, 1, "a whole number ≥ 1 of groups", "2")
        if not isinstance(self.window, RebuildWindow):
            raise ZsimError(
                f"GroupSpec.window = {_show(self.window)}: expected a RebuildWindow, "
                "e.g. RebuildWindow((72000.0, 216000.0), (0.5, 0.5))"
            )
        read = _real("GroupSpec.rebuild_read_bytes", self.rebuild_read_bytes, "bytes ≥ 0", "60e12")
        if read < 0:
            raise ZsimError(f"GroupSpec.rebuild_read_bytes = {read}: expected bytes ≥ 0")
        if not isinstance(self.name, str):
            raise ZsimError(f"GroupSpec.name = {_show(self.name)}: expected text, e.g. 'raidz2 8'")
        object.__setattr__(self, "disks", disks)
        object.__setattr__(self, "tolerance", tolerance)
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "rebuild_read_bytes", read)


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class Durability:
    """Durability figures of a pool over a mission (SI units: seconds, probabilities).

    Attributes:
        mission_seconds: the mission time, s.
        loss_probability: P(the pool loses a whole group — hence its data — within the
            mission); 1 − exp(−E[N]) over the expected loss events, exact for stripes.
        loss_probability_ci95: 95 % confidence interval of ``loss_probability`` (from the
            trial-to-trial standard error of E[N]).
        ure_probability: P(at least one unrecoverable block within the mission: a URE while
            a group had no redundancy left) — a partial loss, reported separately.
        window_loss_probability: P(losing the group during one rebuild window, given one of
            its disks just failed), averaged over the window distribution and the simulated
            failures; the worst group kind (1 for a stripe).
        window_ure_probability: the same for an unrecoverable read during that window.
        expected_failures: expected disk failures in the pool over the mission (replaced
            disks included).
        mttdl_seconds: the closed-form MTTDL of the pool (exponential lifetimes with this
            AFR, MTTR = mean window), s — for comparison.
        mttdl_loss_probability: 1 − exp(−mission / MTTDL).
        trials: Monte Carlo trials.
        seed: the seed; the same input and seed give the same figures.
        method: one line saying how it was estimated.
    """

    mission_seconds: float
    loss_probability: float
    loss_probability_ci95: tuple[float, float]
    ure_probability: float
    window_loss_probability: float
    window_ure_probability: float
    expected_failures: float
    mttdl_seconds: float
    mttdl_loss_probability: float
    trials: int
    seed: int
    method: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data, SI units (seconds, probabilities as fractions)."""
        out = asdict(self)
        out["loss_probability_ci95"] = list(self.loss_probability_ci95)
        out["units"] = "seconds"
        return out


@dataclass(frozen=True)
class PlainEstimate:
    """The result of :func:`durability_plain_mc` (a reference for tests at inflated rates).

    Attributes:
        mission_seconds: the mission time, s.
        loss_probability: fraction of trials in which more than ``tolerance`` disks of some
            group were down at once (or a stripe disk failed).
        loss_probability_ci95: Wilson 95 % interval of that fraction.
        loss_events: mean number per trial of failures whose rebuild window saw at least
            ``tolerance`` other disks of the group (up at the failure) fail — the quantity
            E[N] that :func:`durability` estimates; stripes not included.
        loss_events_se: its standard error.
        expected_failures: mean disk failures per trial.
        trials, seed: as given.
    """

    mission_seconds: float
    loss_probability: float
    loss_probability_ci95: tuple[float, float]
    loss_events: float
    loss_events_se: float
    expected_failures: float
    trials: int
    seed: int


# ---------------------------------------------------------------- closed forms


def afr_from_mtbf(mtbf_hours: float) -> float:
    """The AFR of a datasheet MTBF, hours: 1 − exp(−8766 h / MTBF) (exponential lifetimes;
    8766 h = 365.25 days). 1 000 000 h gives 0.873 %."""
    mtbf = _real("mtbf_hours", mtbf_hours, "hours above 0", "1000000")
    if mtbf <= 0:
        raise ZsimError(f"mtbf_hours = {mtbf}: expected hours above 0, e.g. 1000000")
    return -math.expm1(-HOURS_PER_YEAR / mtbf)


def ure_probability(read_bytes: float, ure_per_bit: float) -> float:
    """P(at least one unrecoverable read error while reading ``read_bytes`` bytes):
    1 − exp(−8 · bytes · ure_per_bit), bit errors being a Poisson count. 12 TB at 1e-14
    per bit gives 1 − exp(−0.96) = 0.617."""
    return -math.expm1(-8.0 * read_bytes * ure_per_bit)


def mttdl_seconds(disks: int, tolerance: int, mttf_seconds: float, mttr_seconds: float) -> float:
    """Mean time to data loss of one group, s, by the classic Markov-model approximation.

    MTTF^(t+1) / (N (N − 1) ⋯ (N − t) · MTTR^t) for N disks surviving t failures, valid for
    MTTR ≪ MTTF: t = 1 is Patterson, Gibson & Katz (SIGMOD 1988), t = 2 the RAID 6 (P+Q)
    formula of Chen et al. (ACM Computing Surveys 26(2), 1994); t = 0 gives MTTF/N, a stripe.
    The Markov chain behind it has exponential lifetimes and repairs, and with k disks down
    one repair finishing at rate 1/MTTR (one at a time); with every failed disk rebuilt on
    its own clock, as :func:`durability` models, the exposure is t! times smaller. See
    Greenan, Plank & Wylie, "Mean time to meaningless" (HotStorage 2010) for why the figure
    misleads. A pool of ``count`` such groups in series has MTTDL / count.
    """
    n = _whole("disks", disks, 1, "a whole number ≥ 1", "6")
    t = _whole("tolerance", tolerance, 0, "a whole number ≥ 0", "2")
    if t >= n:
        raise ZsimError(f"tolerance = {t} with disks = {n}: a group survives at most disks − 1")
    mttf = _real("mttf_seconds", mttf_seconds, "seconds above 0", "3.2e13")
    mttr = _real("mttr_seconds", mttr_seconds, "seconds above 0", "72000")
    if mttf <= 0 or mttr <= 0:
        raise ZsimError(
            f"mttf_seconds = {mttf}, mttr_seconds = {mttr}: both must be above 0 seconds"
        )
    ways = math.prod(range(n - t, n + 1))
    # in logs: MTTF^(t+1) overflows a float for t ≥ 20
    log_value = (t + 1) * math.log(mttf) - math.log(ways) - t * math.log(mttr)
    return math.exp(min(log_value, 700.0))


# ---------------------------------------------------------------- simulation


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
            f"failures = {_show(failures)}: expected a FailureModel, e.g. FailureModel(afr=0.015)"
        )
    try:
        specs = tuple(groups)
    except TypeError:
        raise ZsimError("groups must be a sequence of GroupSpec, one per kind of group") from None
    if not specs:
        raise ZsimError("groups is empty: give at least one GroupSpec (the pool's data vdevs)")
    for spec in specs:
        if not isinstance(spec, GroupSpec):
            raise ZsimError(f"groups holds {_show(spec)}: every entry must be a GroupSpec")
    mission = _real("mission_seconds", mission_seconds, "seconds above 0", "157788000 (5 years)")
    if mission <= 0:
        raise ZsimError(
            f"mission_seconds = {mission}: expected seconds above 0, e.g. 157788000 (5 years)"
        )
    n = _whole("trials", trials, 100, "a whole number ≥ 100", "20000")
    s = _whole("seed", seed, 0, "a whole number ≥ 0", "1")
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
