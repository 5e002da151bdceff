"""The inputs of a durability estimate (:class:`FailureModel`, :class:`RebuildWindow`,
:class:`GroupSpec`), its results (:class:`Durability`, :class:`PlainEstimate`) and the closed
forms: AFR from MTBF, the probability of an unrecoverable read, and MTTDL. The method is
described in :mod:`zsim.reliability`; the simulation is :mod:`zsim.reliability.monte_carlo`.
"""

from __future__ import annotations

import math
import operator
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


# ---------------------------------------------------------------- inputs


def shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def checked_real(name: str, value: Any, expected: str, example: str) -> float:
    """``value`` as a finite float, else a ZsimError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ZsimError(f"{name} = {shown(value)}: expected {expected}, e.g. {example}")
    number = float(value)
    if not math.isfinite(number):
        raise ZsimError(f"{name} = {shown(value)}: expected {expected}, e.g. {example}")
    return number


def checked_whole(name: str, value: Any, low: int, expected: str, example: str) -> int:
    """``value`` as an int ≥ ``low`` (not a bool), else a ZsimError naming ``name``."""
    if isinstance(value, bool):
        raise ZsimError(f"{name} = {shown(value)}: expected {expected}, e.g. {example}")
    try:
        number = operator.index(value)
    except TypeError:
        raise ZsimError(f"{name} = {shown(value)}: expected {expected}, e.g. {example}") from None
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
        afr = checked_real(
            "FailureModel.afr", self.afr, "a fraction between 0 and 1 (exclusive)", "0.015"
        )
        if not 0.0 < afr < 1.0:
            raise ZsimError(
                f"FailureModel.afr = {afr}: expected a fraction between 0 and 1 (exclusive), "
                "e.g. 0.015 for 1.5 % a year (not a percentage)"
            )
        if self.distribution not in DISTRIBUTIONS:
            raise ZsimError(
                f"FailureModel.distribution = {shown(self.distribution)}: "
                f"use one of {', '.join(DISTRIBUTIONS)}"
            )
        shape = checked_real(
            "FailureModel.weibull_shape", self.weibull_shape, "a number above 0", "1.12"
        )
        if not 0.0 < shape <= 100.0:
            raise ZsimError(
                f"FailureModel.weibull_shape = {shape}: expected a number above 0 (at most 100), "
                "e.g. 1.12"
            )
        ure = checked_real(
            "FailureModel.ure_per_bit", self.ure_per_bit, "a rate 0…1 per bit", "1e-15"
        )
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
            checked_real("RebuildWindow.seconds", s, "a duration in seconds above 0", "72000.0")
            for s in seconds
        )
        wts = tuple(
            checked_real("RebuildWindow.weights", w, "a probability 0…1", "0.5") for w in weights
        )
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
        disks = checked_whole("GroupSpec.disks", self.disks, 1, "a whole number ≥ 1", "8")
        if disks > MAX_DISKS:
            raise ZsimError(
                f"GroupSpec.disks = {disks}: at most {MAX_DISKS} disks per redundancy group"
            )
        tolerance = checked_whole(
            "GroupSpec.tolerance", self.tolerance, 0, "a whole number ≥ 0 (failures survived)", "2"
        )
        if tolerance >= disks:
            raise ZsimError(
                f"GroupSpec.tolerance = {tolerance} with disks = {disks}: a group survives at "
                f"most disks − 1 = {disks - 1} failures; use tolerance 0 for a single disk"
            )
        count = checked_whole("GroupSpec.count", self.count, 1, "a whole number ≥ 1 of groups", "2")
        if not isinstance(self.window, RebuildWindow):
            raise ZsimError(
                f"GroupSpec.window = {shown(self.window)}: expected a RebuildWindow, "
                "e.g. RebuildWindow((72000.0, 216000.0), (0.5, 0.5))"
            )
        read = checked_real(
            "GroupSpec.rebuild_read_bytes", self.rebuild_read_bytes, "bytes ≥ 0", "60e12"
        )
        if read < 0:
            raise ZsimError(f"GroupSpec.rebuild_read_bytes = {read}: expected bytes ≥ 0")
        if not isinstance(self.name, str):
            raise ZsimError(f"GroupSpec.name = {shown(self.name)}: expected text, e.g. 'raidz2 8'")
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
    mtbf = checked_real("mtbf_hours", mtbf_hours, "hours above 0", "1000000")
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
    n = checked_whole("disks", disks, 1, "a whole number ≥ 1", "6")
    t = checked_whole("tolerance", tolerance, 0, "a whole number ≥ 0", "2")
    if t >= n:
        raise ZsimError(f"tolerance = {t} with disks = {n}: a group survives at most disks − 1")
    mttf = checked_real("mttf_seconds", mttf_seconds, "seconds above 0", "3.2e13")
    mttr = checked_real("mttr_seconds", mttr_seconds, "seconds above 0", "72000")
    if mttf <= 0 or mttr <= 0:
        raise ZsimError(
            f"mttf_seconds = {mttf}, mttr_seconds = {mttr}: both must be above 0 seconds"
        )
    ways = math.prod(range(n - t, n + 1))
    # in logs: MTTF^(t+1) overflows a float for t ≥ 20
    log_value = (t + 1) * math.log(mttf) - math.log(ways) - t * math.log(mttr)
    return math.exp(min(log_value, 700.0))
