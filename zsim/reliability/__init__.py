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

from zsim.reliability.model import (
    DISTRIBUTIONS,
    ELERATH_PECHT_SHAPE,
    HOURS_PER_YEAR,
    MAX_DISKS,
    YEAR,
    Durability,
    FailureModel,
    GroupSpec,
    PlainEstimate,
    RebuildWindow,
    afr_from_mtbf,
    mttdl_seconds,
    ure_probability,
)
from zsim.reliability.monte_carlo import durability, durability_plain_mc, overlap_probability

__all__ = [
    "DISTRIBUTIONS",
    "ELERATH_PECHT_SHAPE",
    "HOURS_PER_YEAR",
    "MAX_DISKS",
    "YEAR",
    "Durability",
    "FailureModel",
    "GroupSpec",
    "PlainEstimate",
    "RebuildWindow",
    "afr_from_mtbf",
    "durability",
    "durability_plain_mc",
    "mttdl_seconds",
    "overlap_probability",
    "ure_probability",
]
