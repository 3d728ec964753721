"""Batch samplers of DP-SGD: how each step's batch is drawn, and what that does to the budget.

Three samplers, named by the ``Sampler`` literal (one place for the names: ``SAMPLERS``); q is
the sampling rate b/n (batch size over dataset size), sigma the noise multiplier (noise std over
the clipping norm C), gradients in clip units (sensitivity 1 under add/remove):

- ``"poisson"``: every record joins each step's batch independently with probability q. The
  accountant's DP-SGD pair (``dpsgd_pld``) is tight [@zhu2022optimal]: its PLD bracket brackets
  the true epsilon, under add/remove adjacency.
- ``"fixed"``: each step draws b = q n of the n records uniformly without replacement,
  independently of the other steps. Its natural adjacency is replace-one (n is public). Upper
  bound: one step of a Gaussian sum (replace-one sensitivity 2C, so G_{2/sigma}) subsampled
  without replacement is C_q(G_{2/sigma})-DP [@dong2022gaussian, Thm 4.2], composed over the
  steps by its symmetric pair (``accountant.subsample(..., "without_replacement")``). Lower
  bound: the run with the differing record's clipped gradient +1 (one neighbour) or -1 (the
  other) and every other record's 0 outputs, at each step independently, N(+-1, sigma^2) with
  probability q and N(0, sigma^2) otherwise: the mixture pair ((1-q)N(0) + qN(-1), (1-q)N(0) +
  qN(1)) of ``subsampled_gaussian(..., adjacency="replace")``, composed; the lower end of its PLD
  bracket is a lower bound on the true epsilon. The two ends are not the same pair: the gap
  between them is the price of the proven theorem (a factor 2 to 10 in the measured settings,
  the largest at small sigma).
- ``"shuffle"``: each epoch draws a uniform permutation of the records and cuts it into K = 1/q
  consecutive batches of b (K must be whole: b divides n); a run of T steps is ceil(T/K) epochs,
  the last one possibly partial. Under add/remove, a dataset without record x has the batches of
  the dataset with x, x taken out (its batch one short; a uniform permutation of n slots of which
  the dataset fills some has exactly this law, which is what ``mechanisms.estimators.DPSGD``
  draws).

  Upper bound (no amplification). Couple the permutations of the two neighbours so that their
  batches differ only by x. Given the permutation, an epoch is an adaptive composition of K
  Gaussian steps of which only x's step has a sensitivity, at most 1 (clip units): GDP(1/sigma)
  [@dong2022gaussian, Cor. 3.3], whatever the position; averaging over the (common) permutation
  keeps it (joint convexity of the trade-off bound). E epochs are GDP(sqrt(E)/sigma) exactly; a
  partial last epoch counts as a full one (pessimistic). ``shuffle_gdp`` returns it.

  Lower bound [@chua2024private; @chua2024scalable]. In the adaptive batch linear query model,
  let every other record's clipped gradient be -1 and x's be +1: the batch sums, shifted by the
  known b, are 0 except x's batch, +2 with x and +1 without (one short). One epoch of K batches,
  m of them released (m = K but in a partial last epoch) is then the pair, at a uniformly random
  position t of K,
  P = (1/K) sum_t N(2 e_t, sigma^2 I_m) vs Q = (1/K) sum_t N(e_t, sigma^2 I_m) (e_t = 0 for t > m),
  post-processed by x -> max_t x_t, whose CDFs are, with w = m/K and Phi the normal CDF,
  F(x) = w Phi((x - s)/sigma) Phi(x/sigma)^(m-1) + (1 - w) Phi(x/sigma)^m for the shift s = 2 (P)
  or 1 (Q). Epochs are independent, so the E-fold product of the (post-processed) pair has an
  epsilon no larger than the mechanism's; binning the max into cells is a further post-processing.
  ``shuffle_max_pmfs`` computes the cell masses in mpmath (``LOWER_DPS`` digits, each mass to a
  relative error u <= 2^-52 after rounding to a double), the PLD engine composes them, and the
  lower end of its bracket is read at delta (1 + u)^N (N the composed epochs) and lowered by
  N log((1 + u)/(1 - u)): every event's probability of the rounded product is within (1 +- u)^N
  of the exact one, so this is a lower bound on the epsilon of the exact binned pair, hence on
  the true epsilon.

``sampler_bounds`` returns, for ``"fixed"`` or ``"shuffle"``, the guarantee whose epsilon is the
sound upper bound, the PLD whose bracket's lower end bounds the true epsilon from below, and the
adjacency; Poisson sampling is ``dpsgd_pld``'s (both ends of one bracket).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, get_args

import mpmath
import numpy as np

from accountant.core.types import Adjacency, FloatArray
from accountant.core.validation import check_count, check_real
from accountant.notions.guarantees import GDP, Guarantee
from accountant.pld.distribution import PLD
from accountant.pld.settings import DEFAULT_TOL, check_tol
from accountant.pld.subsampling import subsample, subsampled_gaussian

__all__ = [
    "SAMPLERS",
    "Sampler",
    "SamplerBounds",
    "batches_per_epoch",
    "check_sampler",
    "fixed_lower_pld",
    "fixed_upper_pld",
    "sampler_bounds",
    "shuffle_gdp",
    "shuffle_lower_pld",
    "shuffle_max_cdf",
    "shuffle_max_pmfs",
]

Sampler = Literal["poisson", "fixed", "shuffle"]
#: The batch samplers, by name.
SAMPLERS: tuple[Sampler, ...] = get_args(Sampler)

#: The least PLD accuracy of the lower bounds: a certified lower end at any accuracy, and a coarser
#: grid spares the bracket's refinement most of its time at small rates.
LOWER_TOL = 1e-3
#: mpmath digits of the shuffle lower bound's cell masses.
LOWER_DPS = 50
#: Relative error of each cell mass once rounded to a double (mpmath's error is far below).
MASS_RELATIVE_ERROR = 2.0**-52
#: Cells of the binned maximum: more is tighter and slower (the bound is valid for any number).
LOWER_CELLS = 2000
#: The binned range leaves out at most this much mass of either law at each end (into end cells).
LOWER_TAIL = 1e-25
#: No cell carries less than this mass under either law (cells are merged until then).
TINY_MASS = 1e-290


def check_sampler(sampler: str) -> Sampler:
    """``sampler`` if it names a batch sampler (``SAMPLERS``); ValueError/TypeError otherwise."""
    if not isinstance(sampler, str):
        raise TypeError(f"sampler must be one of {', '.join(SAMPLERS)}, got {type(sampler).__name__} "
                        f"{sampler!r}")
    for name in SAMPLERS:
        if sampler == name:
            return name
    raise ValueError(f"sampler must be one of {', '.join(SAMPLERS)}, got {sampler!r}")


def batches_per_epoch(sampling_rate: float) -> int:
    """K = 1/q, the batches of one shuffled epoch; ValueError unless 1/q is whole (to 1e-9
    relative: a rate given as a double b/n with b dividing n)."""
    q = check_real("sampling_rate", sampling_rate, low=0.0, high=1.0, low_open=True)
    k = round(1.0 / q)
    if k < 1 or abs(k * q - 1.0) > 1e-9:
        raise ValueError(f"sampler='shuffle' cuts each epoch into 1/sampling_rate batches, so "
                         f"1/sampling_rate must be a whole number (the batch size dividing the "
                         f"dataset size), got sampling_rate={sampling_rate!r} (1/q = {1.0 / q:.9g})")
    return k


def _shuffle_epochs(sampling_rate: float, steps: int) -> tuple[int, int, int]:
    """(K, full epochs, steps of the partial last epoch) of T shuffled steps at rate q."""
    k = batches_per_epoch(sampling_rate)
    t = check_count("steps", steps)
    return k, t // k, t % k


def shuffle_gdp(sampling_rate: float, noise_multiplier: float, steps: int) -> GDP:
    """GDP(sqrt(E)/sigma), E = ceil(T/K) epochs: the no-amplification upper bound of shuffled
    DP-SGD under add/remove (module docstring)."""
    _k, full, rest = _shuffle_epochs(sampling_rate, steps)
    s = check_real("noise_multiplier", noise_multiplier, low=0.0, low_open=True, high=1e100)
    epochs = full + (1 if rest else 0)
    mu = math.sqrt(epochs) / s
    return GDP(math.nextafter(mu, math.inf))  # the quotient rounded up


def shuffle_max_cdf(x: float, noise_multiplier: float, batches: int, released: int,
                    shift: int) -> mpmath.mpf:
    """F(x) = w Phi((x - shift)/sigma) Phi(x/sigma)^(m-1) + (1 - w) Phi(x/sigma)^m, w = m/K: the
    CDF of the largest of m released batch sums of one shuffled epoch (module docstring), the
    differing record's batch shifted by ``shift`` (2: present, 1: absent)."""
    xm = mpmath.mpf(check_real("x", x))
    s = mpmath.mpf(check_real("noise_multiplier", noise_multiplier, low=0.0, low_open=True, high=1e4))
    k = check_count("batches", batches, high=10**9)
    m = check_count("released", released, high=k)
    check_count("shift", shift, low=1, high=2)
    w = mpmath.mpf(m) / k
    base = mpmath.ncdf(xm / s)
    return w * mpmath.ncdf((xm - shift) / s) * base ** (m - 1) + (1 - w) * base ** m


def shuffle_max_pmfs(noise_multiplier: float, batches: int, released: int,
                     cells: int = LOWER_CELLS) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(edges, p, q): the masses of the largest released batch sum of one shuffled epoch under P
    (record present) and Q (absent) on the cells (-inf, e_0], (e_0, e_1], ..., (e_last, inf), in
    mpmath, each rounded to the nearest double. The edges are multiples of a width h (1/k when
    at most 1, so the shifted CDFs are read at edges too) covering the range where either law
    leaves out at most ``LOWER_TAIL`` at each end."""
    s = check_real("noise_multiplier", noise_multiplier, low=0.0, low_open=True, high=1e4)
    k = check_count("batches", batches, high=10**9)
    m = check_count("released", released, high=k)
    n_cells = check_count("cells", cells, low=10, high=10**6)
    with mpmath.workdps(LOWER_DPS):
        # below lo, Phi(x/sigma)^m <= LOWER_TAIL; above hi, m Phi_c((x - 2)/sigma) <= LOWER_TAIL
        lo = s * float(mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.power(LOWER_TAIL, 1.0 / m) - 1))
        hi = 2.0 + s * float(mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * mpmath.mpf(LOWER_TAIL) / m))
        # the cell width h: 1/k when at most 1 (the shifted points x - 1, x - 2 are then edges too)
        width = (hi - lo) / n_cells
        h = Fraction(1, math.ceil(1.0 / width)) if width <= 1.0 else Fraction(math.ceil(width))
        j0, j1 = math.floor(lo / h), math.ceil(hi / h)
        memo: dict[Fraction, mpmath.mpf] = {}

        def phi(u: Fraction) -> mpmath.mpf:
            if u not in memo:
                memo[u] = mpmath.ncdf(mpmath.mpf(u.numerator) / u.denominator / s)
            return memo[u]

        w = mpmath.mpf(m) / k

        def cdf(j: int, shift: int) -> mpmath.mpf:
            base = phi(j * h)
            return w * phi(j * h - shift) * base ** (m - 1) + (1 - w) * base ** m

        cuts = list(range(j0, j1 + 1))
        fp = [mpmath.mpf(0)] + [cdf(j, 2) for j in cuts] + [mpmath.mpf(1)]
        fq = [mpmath.mpf(0)] + [cdf(j, 1) for j in cuts] + [mpmath.mpf(1)]
        # a cell whose mass would round below the normal doubles is merged into its neighbour
        # (coarser cells: a further post-processing), so no positive mass rounds to 0
        keep = [i for i in range(1, len(cuts) + 1)
                if min(fp[i] - fp[i - 1], fq[i] - fq[i - 1]) >= TINY_MASS
                and min(fp[-1] - fp[i], fq[-1] - fq[i]) >= TINY_MASS]
        fp = [fp[0], *(fp[i] for i in keep), fp[-1]]
        fq = [fq[0], *(fq[i] for i in keep), fq[-1]]
        p = np.array([float(b - a) for a, b in itertools.pairwise(fp)])
        q = np.array([float(b - a) for a, b in itertools.pairwise(fq)])
    edges = np.array([float(cuts[i - 1] * h) for i in keep], dtype=np.float64)
    return edges, p, q


@functools.lru_cache(maxsize=64)
def _epoch_pld(noise_multiplier: float, batches: int, released: int, tol: float, cells: int) -> PLD:
    _, p, q = shuffle_max_pmfs(noise_multiplier, batches, released, cells)
    # the pmfs sum to 1 within a few ulps; from_pmfs's check takes them as they are
    return PLD.from_pmfs(p, q, tol=tol)


def shuffle_lower_pld(sampling_rate: float, noise_multiplier: float, steps: int,
                      tol: float = DEFAULT_TOL, cells: int = LOWER_CELLS) -> PLD:
    """The PLD of the largest batch sum binned into ``cells`` cells over the run's epochs (module
    docstring): full epochs composed, and the partial last one if any. The lower end of its
    bracket, read as ``SamplerBounds.epsilon_lower`` does, bounds the true epsilon from below."""
    k, full, rest = _shuffle_epochs(sampling_rate, steps)
    s = check_real("noise_multiplier", noise_multiplier, low=0.0, low_open=True, high=1e4)
    t = check_tol(tol)
    c = check_count("cells", cells, low=10, high=10**6)
    parts = []
    if full:
        parts.append(_epoch_pld(s, k, k, t, c).self_compose(full))
    if rest:
        parts.append(_epoch_pld(s, k, rest, t, c))
    return parts[0].compose(*parts[1:]) if len(parts) > 1 else parts[0]


def _rounding_margin(sampling_rate: float, steps: int) -> tuple[float, float]:
    """(delta factor, epsilon margin) of the rounded cell masses over the composed epochs."""
    _, full, rest = _shuffle_epochs(sampling_rate, steps)
    n = full + (1 if rest else 0)
    u = MASS_RELATIVE_ERROR
    return (1.0 + u) ** n * (1.0 + 1e-15), n * math.log1p(2 * u / (1.0 - u)) * (1.0 + 1e-6)


def fixed_upper_pld(sampling_rate: float, noise_multiplier: float, steps: int,
                    tol: float = DEFAULT_TOL) -> PLD:
    """T steps of C_q(G_{2/sigma}) [@dong2022gaussian, Thm 4.2]: the sound upper bound of
    fixed-size batches drawn without replacement, replace-one adjacency."""
    s = check_real("noise_multiplier", noise_multiplier, low=0.0, low_open=True, high=1e4)
    q = check_real("sampling_rate", sampling_rate, low=0.0, high=1.0, low_open=True)
    mu = math.nextafter(2.0 / s, math.inf)
    t = check_count("steps", steps)
    return subsample(GDP(mu), q, "without_replacement", tol=check_tol(tol)).self_compose(t)


def fixed_lower_pld(sampling_rate: float, noise_multiplier: float, steps: int,
                    tol: float = DEFAULT_TOL) -> PLD:
    """T steps of the attained pair ((1-q)N(0) + qN(-1), (1-q)N(0) + qN(1)) in noise units
    1/sigma: its bracket's lower end is a lower bound on the true epsilon of fixed-size batches
    (replace-one; module docstring)."""
    s = check_real("noise_multiplier", noise_multiplier, low=0.0, low_open=True, high=1e4)
    q = check_real("sampling_rate", sampling_rate, low=0.0, high=1.0, low_open=True)
    t = check_count("steps", steps)
    return subsampled_gaussian(s, q, tol=check_tol(tol), adjacency="replace").self_compose(t)


@dataclass(frozen=True)
class SamplerBounds:
    """A sampler's bounds for one run: ``upper.epsilon(delta)`` is a sound upper bound on the
    true epsilon, ``epsilon_lower(delta)`` a certified lower bound, under ``adjacency``."""

    sampler: Sampler
    adjacency: Adjacency
    upper: Guarantee
    lower: PLD
    #: (delta factor, epsilon margin) by which the lower PLD is read (1, 0 when it is exact).
    margin: tuple[float, float] = (1.0, 0.0)

    def epsilon_upper(self, delta: float) -> float:
        return self.upper.epsilon(delta)

    def epsilon_lower(self, delta: float) -> float:
        factor, eps_margin = self.margin
        d = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        lower = self.lower.epsilon_bracket(min(d * factor, 1.0))[0]
        return max(0.0, lower - eps_margin)


def sampler_bounds(sampler: Sampler, sampling_rate: float, noise_multiplier: float, steps: int,
                   tol: float = DEFAULT_TOL) -> SamplerBounds:
    """The bounds of the ``"fixed"`` or ``"shuffle"`` sampler (module docstring), the lower PLD at
    accuracy max(tol, ``LOWER_TOL``). Poisson sampling is refused: its tight pair is
    ``dpsgd_pld``, whose bracket gives both ends."""
    name = check_sampler(sampler)
    low_tol = max(check_tol(tol), LOWER_TOL)
    if name == "poisson":
        raise ValueError("sampler_bounds describes sampler='fixed' or 'shuffle'; for 'poisson' the "
                         "tight pair is dpsgd_pld (its epsilon_bracket gives both ends)")
    if name == "fixed":
        return SamplerBounds(name, "replace", fixed_upper_pld(sampling_rate, noise_multiplier, steps, tol),
                             fixed_lower_pld(sampling_rate, noise_multiplier, steps, low_tol))
    return SamplerBounds(name, "add_remove", shuffle_gdp(sampling_rate, noise_multiplier, steps),
                         shuffle_lower_pld(sampling_rate, noise_multiplier, steps, low_tol),
                         _rounding_margin(sampling_rate, steps))
