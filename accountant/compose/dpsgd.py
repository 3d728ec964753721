"""One-call accounting and calibration of DP-SGD [@abadi2016deep]: Poisson-subsampled Gaussian steps.

``dpsgd_epsilon`` returns the PLD bracket (sound lower and upper bounds on the exact epsilon),
the central-limit mu of [@bu2020deep] / [@dong2022gaussian, Cor. 5.4],
mu = q sqrt(T (e^{1/sigma^2} - 1)), marked approximate, and the RDP bound
[@mironov2019sampled] for comparison.

The run is given as Opacus users write it too: ``batch_size`` and ``dataset_size`` (Poisson rate
q = batch_size / dataset_size, the expected batch) for the sampling rate, ``epochs`` (of 1/q steps
each, rounded up) for the steps; a combination that disagrees is refused.

``sampler`` names how the batches are drawn (``accountant.compose.samplers``): ``"poisson"`` (the
default, the bracket above), ``"fixed"`` (b = q n records without replacement each step, under
replace-one adjacency) or ``"shuffle"`` (a permutation per epoch cut into 1/q batches). For each,
``epsilon_upper`` is a sound upper bound on the true epsilon of that sampler and ``epsilon_lower`` a
certified lower bound on it: for Poisson the two ends of the tight pair's bracket; for fixed-size
batches the proven amplification theorem above and the attained mixture pair below; for shuffling
the no-amplification bound above and the adaptive-batch-linear-query construction below.

``dpsgd_noise_multiplier``, ``dpsgd_sampling_rate`` and ``dpsgd_steps`` solve for one parameter
given a target (eps, delta). A secant search on a coarse (still sound) PLD estimates the boundary
in a few evaluations; ``accountant.calibrate`` then certifies a bracket of relative width ``rtol``
around it, so the returned value implies the target (it was checked with ``implies``) and the
boundary of that sound bound lies within ``rtol`` of it.

"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from fractions import Fraction

from accountant.compose.calibration import calibrate, calibrate_count
from accountant.compose.samplers import Sampler, check_sampler, sampler_bounds
from accountant.compose.subsampled_rdp import (
    check_dpsgd_parameters,
    check_sampling_rate,
    subsampled_gaussian_rdp,
)
from accountant.core.types import Adjacency
from accountant.core.validation import check_count, check_real
from accountant.notions.guarantees import GDP, ApproxDP, Guarantee
from accountant.notions.ordering import implies
from accountant.pld.distribution import PLD, pld_from_guarantee
from accountant.pld.settings import DEFAULT_TOL
from accountant.pld.subsampling import subsampled_gaussian


@dataclass(frozen=True)
class DPSGDAccount:
    """Budget of a DP-SGD run at one delta.

    ``epsilon_lower <= exact epsilon <= epsilon_upper`` for the batch ``sampler`` under
    ``adjacency`` (``epsilon_upper`` is the figure to report): for ``"poisson"`` the PLD bracket
    of the tight pair; for ``"fixed"`` (replace-one) the amplification theorem's bound and the
    attained mixture pair's lower end; for ``"shuffle"`` the no-amplification bound and the
    lower end of the batch-linear-query construction (``accountant.compose.samplers``).
    ``clt_mu``/``clt_epsilon`` are the CLT approximation: not bounds. ``rdp_epsilon`` is the
    (looser) RDP upper bound. Those three describe Poisson sampling: None when not asked for
    (``also``) or for another sampler. ``epsilon(delta)`` answers any other delta from the same
    upper bound (``pld``, the composed PLD of the upper bound).
    """

    sampling_rate: float
    noise_multiplier: float
    steps: int
    delta: float
    epsilon_lower: float
    epsilon_upper: float
    clt_mu: float | None
    clt_epsilon: float | None
    rdp_epsilon: float | None
    pld: PLD = field(repr=False, compare=False)
    sampler: Sampler = "poisson"
    adjacency: Adjacency = "add_remove"

    def epsilon(self, delta: float | None = None) -> float:
        """The sound upper bound on epsilon at ``delta`` (default: the account's delta)."""
        return self.epsilon_upper if delta is None else self.pld.epsilon(delta)


def dpsgd_clt_mu(sampling_rate: float, noise_multiplier: float, steps: int) -> float:
    """mu = q sqrt(T (e^{1/sigma^2} - 1)), the CLT limit of DP-SGD [@bu2020deep; @dong2022gaussian, Cor. 5.4].
    An approximation, accurate when q sqrt(T) is of order one and T is large."""
    q, s, t = check_dpsgd_parameters(sampling_rate, noise_multiplier, steps)
    if 1.0 / (s * s) > 700.0:
        return math.inf  # e^{1/sigma^2} overflows: the approximation says nothing here
    return q * math.sqrt(t * math.expm1(1.0 / (s * s)))


#: The comparison figures ``dpsgd_epsilon`` can add to the PLD bracket.
COMPARISONS = ("clt", "rdp")


def dpsgd_epsilon(sampling_rate: float | None = None, noise_multiplier: float | None = None,
                  steps: int | None = None, delta: float | None = None, tol: float = DEFAULT_TOL, *,
                  epochs: float | None = None, batch_size: int | None = None,
                  dataset_size: int | None = None, also: Collection[str] = COMPARISONS,
                  sampler: Sampler = "poisson") -> DPSGDAccount:
    """Epsilon of DP-SGD with sampling rate q, noise multiplier sigma, T steps, at delta
    (add/remove adjacency, sensitivity = clipping norm): the PLD bracket, and the figures of
    ``also`` for comparison (``"clt"``: the CLT estimate, ``"rdp"``: the RDP bound; ``also=()``
    skips them, which is most of the time of a long run).

    ``sampler`` (module docstring) is how the batches are drawn: ``"poisson"`` (default),
    ``"fixed"`` (replace-one adjacency) or ``"shuffle"`` (1/q must be whole); for the last two
    the account's ``epsilon_upper`` and ``epsilon_lower`` bound that sampler's true epsilon
    (``accountant.compose.samplers``) and ``also`` is not computed (it describes Poisson).

    The rate may be given as ``batch_size`` and ``dataset_size`` and the steps as ``epochs``
    (module docstring), e.g. ``dpsgd_epsilon(noise_multiplier=1.1, batch_size=256,
    dataset_size=60_000, epochs=10, delta=1e-5)``."""
    name = check_sampler(sampler)
    q, t = dpsgd_schedule(sampling_rate, steps, epochs=epochs, batch_size=batch_size,
                          dataset_size=dataset_size)
    if noise_multiplier is None:
        raise TypeError("dpsgd_epsilon needs noise_multiplier")
    if delta is None:
        raise TypeError("dpsgd_epsilon needs delta")
    q, s, t = check_dpsgd_parameters(q, noise_multiplier, t)
    d = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    extra = _comparisons(also)
    if name != "poisson":
        bounds = sampler_bounds(name, q, s, t, tol)
        upper = bounds.epsilon_upper(d)
        return DPSGDAccount(q, s, t, d, bounds.epsilon_lower(d), upper, None, None, None,
                            pld_from_guarantee(bounds.upper, tol), name, bounds.adjacency)
    pld = dpsgd_pld(q, s, t, tol)
    lower, upper = pld.epsilon_bracket(d)
    mu = clt_eps = rdp_eps = None
    if "clt" in extra:
        mu = dpsgd_clt_mu(q, s, t)
        clt_eps = GDP(mu).epsilon(d) if math.isfinite(mu) else math.inf
    if "rdp" in extra:
        rdp_eps = subsampled_gaussian_rdp(q, s, t).epsilon(d)
    return DPSGDAccount(q, s, t, d, lower, upper, mu, clt_eps, rdp_eps, pld)


def _comparisons(also: Collection[str]) -> frozenset[str]:
    if isinstance(also, str) or not isinstance(also, Collection):
        raise TypeError(f"also must be a collection of {COMPARISONS}, got {also!r}")
    unknown = sorted(str(a) for a in also if a not in COMPARISONS)
    if unknown:
        raise ValueError(f"also must hold only {', '.join(COMPARISONS)}; got {unknown}")
    return frozenset(also)


def dpsgd_schedule(sampling_rate: float | None = None, steps: int | None = None, *,
                   epochs: float | None = None, batch_size: int | None = None,
                   dataset_size: int | None = None) -> tuple[float, int]:
    """(sampling rate, steps) of a DP-SGD run given either way: ``sampling_rate`` or
    ``batch_size / dataset_size`` (Poisson sampling with that expected batch); ``steps`` or
    ``epochs`` of 1/q steps each, rounded up (more steps: a larger, still sound epsilon; Opacus'
    ``get_noise_multiplier`` takes ``int(epochs / sample_rate)``, at most one step fewer). Both
    forms of one parameter may be given only when they agree."""
    q = sampling_rate
    if batch_size is not None or dataset_size is not None:
        if batch_size is None or dataset_size is None:
            raise TypeError("batch_size and dataset_size go together (the sampling rate is "
                            "batch_size / dataset_size)")
        n = check_count("dataset_size", dataset_size)
        b = check_count("batch_size", batch_size, high=n)
        ratio = b / n
        if q is not None and check_real("sampling_rate", q, low=0.0, high=1.0, low_open=True) != ratio:
            raise ValueError(f"inconsistent sampling: sampling_rate = {q!r} but batch_size / "
                             f"dataset_size = {b}/{n} = {ratio!r}; give one of them")
        q = ratio
        exact = Fraction(b, n)
    if q is None:
        raise TypeError("give sampling_rate, or batch_size and dataset_size")
    q = check_sampling_rate(q)
    if batch_size is None:
        exact = Fraction(q)
    if epochs is None:
        if steps is None:
            raise TypeError("give steps, or epochs")
        return q, check_count("steps", steps)
    e = check_real("epochs", epochs, low=0.0, low_open=True, high=1e12)
    per = Fraction(e) / exact
    from_epochs = max(1, math.ceil(per))
    if abs(per - round(per)) <= 1e-9 * per:  # 1 / 0.01 is 100, not 101 (the rate is a double)
        from_epochs = max(1, round(per))
    if steps is not None and check_count("steps", steps) != from_epochs:
        raise ValueError(f"inconsistent length: steps = {steps} but epochs = {e:g} at rate {q:g} is "
                         f"{from_epochs} steps; give one of them")
    return q, from_epochs


def dpsgd_pld(sampling_rate: float, noise_multiplier: float, steps: int,
              tol: float = DEFAULT_TOL) -> PLD:
    """The PLD of T DP-SGD steps (Poisson rate q, noise multiplier sigma, sensitivity 1)
    [@zhu2022optimal]; ``tol`` sets its grid (any grid gives a sound upper bound)."""
    q, s, t = check_dpsgd_parameters(sampling_rate, noise_multiplier, steps)
    return subsampled_gaussian(s, q, tol=tol).self_compose(t)


#: The noise multipliers ``dpsgd_noise_multiplier`` searches.
_SIGMA_LIMITS = (1e-2, 1e4)

#: Default relative precision of the calibrated parameter.
CALIBRATION_RTOL = 1e-3


def dpsgd_noise_multiplier(target_epsilon: float, delta: float, sampling_rate: float | None = None,
                           steps: int | None = None, *, epochs: float | None = None,
                           batch_size: int | None = None, dataset_size: int | None = None,
                           rtol: float = CALIBRATION_RTOL) -> float:
    """The least noise multiplier sigma (within a relative ``rtol``) whose T DP-SGD steps at rate
    q are shown, by the sound PLD bound, to be (target_epsilon, delta)-DP; the run given by
    ``sampling_rate`` or ``batch_size``/``dataset_size``, and ``steps`` or ``epochs``
    (``dpsgd_schedule``).

    Like Opacus' ``get_noise_multiplier``, but the answer is certified by ``accountant.calibrate``
    (``implies`` on a pessimistic PLD) rather than read from an estimate.
    """
    eps, d, rtol = _check_target(target_epsilon, delta, rtol)
    q, t = dpsgd_schedule(sampling_rate, steps, epochs=epochs, batch_size=batch_size,
                          dataset_size=dataset_size)
    tol = _pld_tol(eps, rtol)
    # reachable at all? the most noise searched (1e4) gives the least certified epsilon: one PLD,
    # a fraction of a second, instead of a search that ends in "neither end implies the target"
    least = dpsgd_pld(q, _SIGMA_LIMITS[1], t, tol).epsilon(d)
    if not least <= eps:
        where = (f"with noise_multiplier at its largest ({_SIGMA_LIMITS[1]:g}), sampling_rate={q!r} "
                 f"and steps={t}")
        if math.isinf(least):
            raise ValueError(f"delta={d!r} is out of reach: {where}, no finite epsilon is "
                             f"certified at this delta; ask for a larger delta")
        raise ValueError(f"target_epsilon={eps!r} at delta={d!r} is out of reach: {where}, the "
                         f"certified epsilon is {least:.6g}; ask for target_epsilon >= "
                         f"{least:.6g} (or a larger delta), or lower sampling_rate or steps")
    # the CLT guess sigma^-2 = log(1 + mu^2 / (q^2 T)), mu the GDP level of the target
    guess = 1.0 / math.sqrt(math.log1p((_gdp_mu(eps, d) / q) ** 2 / t))
    est = _secant(lambda s: dpsgd_pld(q, s, t, tol).epsilon(d), eps, guess, rtol, _SIGMA_LIMITS)
    return _certify(lambda s: dpsgd_pld(q, s, t, tol), ApproxDP(eps, d), est, rtol, _SIGMA_LIMITS)


def dpsgd_sampling_rate(target_epsilon: float, delta: float, noise_multiplier: float, steps: int,
                        *, rtol: float = CALIBRATION_RTOL) -> float:
    """The largest Poisson sampling rate q (within a relative ``rtol``; 1.0 if full batches fit)
    at which T DP-SGD steps with noise multiplier sigma are shown to be (target_epsilon, delta)-DP."""
    eps, d, rtol = _check_target(target_epsilon, delta, rtol)
    s = check_real("noise_multiplier", noise_multiplier, low=0.0, low_open=True, high=1e4)
    t = check_count("steps", steps)
    tol = _pld_tol(eps, rtol)
    target = ApproxDP(eps, d)
    if implies(dpsgd_pld(1.0, s, t, tol), target):
        return 1.0
    guess = min(0.5, _gdp_mu(eps, d) / math.sqrt(t * math.expm1(min(1.0 / (s * s), 700.0))))
    est = _secant(lambda q: dpsgd_pld(q, s, t, tol).epsilon(d), eps, guess, rtol, (1e-12, 1.0))
    return _certify(lambda q: dpsgd_pld(q, s, t, tol), target, est, rtol, (1e-12, 1.0))


def dpsgd_steps(target_epsilon: float, delta: float, sampling_rate: float, noise_multiplier: float,
                *, max_steps: int = 10**9, rtol: float = CALIBRATION_RTOL) -> int:
    """The largest number of DP-SGD steps (exact, up to ``max_steps``) shown to be
    (target_epsilon, delta)-DP at rate q and noise multiplier sigma; 0 if not even one step is."""
    eps, d, rtol = _check_target(target_epsilon, delta, rtol)
    q, s, _ = check_dpsgd_parameters(sampling_rate, noise_multiplier, 1)
    top = check_count("max_steps", max_steps)
    tol = _pld_tol(eps, rtol)
    target = ApproxDP(eps, d)

    def make(t: int) -> Guarantee:
        return dpsgd_pld(q, s, t, tol)

    if not implies(make(1), target):
        return 0
    if implies(make(top), target):
        return top
    guess = (_gdp_mu(eps, d) / q) ** 2 / math.expm1(min(1.0 / (s * s), 700.0))
    est = _secant(lambda t: make(max(1, round(t))).epsilon(d), eps, min(max(guess, 1.0), top), rtol,
                  (1.0, float(top)))
    width = max(1, math.ceil(rtol * est))
    lo, hi = max(1, math.floor(est) - width), min(top, math.ceil(est) + width)
    while True:  # the boundary is almost always inside: widen when it is not
        ok_lo, ok_hi = implies(make(lo), target), implies(make(hi), target)
        if ok_lo and not ok_hi:
            return calibrate_count(make, target, (lo, hi), increasing=True)
        width *= 4
        lo, hi = (max(1, lo - width), lo) if not ok_lo else (hi, min(top, hi + width))


def _check_target(eps: float, delta: float, rtol: float) -> tuple[float, float, float]:
    return (check_real("target_epsilon", eps, low=0.0, low_open=True, high=1e3),
            check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True),
            check_real("rtol", rtol, low=1e-9, high=0.1))


def _pld_tol(eps: float, rtol: float) -> float:
    """A PLD grid accurate to about a fraction rtol of the target epsilon (sound at any grid)."""
    return min(1e-2, max(1e-5, rtol * eps / 4))


def _gdp_mu(eps: float, delta: float) -> float:
    """The mu of the mu-GDP guarantee that is just (eps, delta)-DP (a starting guess)."""
    return calibrate(GDP, ApproxDP(eps, delta), (1e-6, 1e3), tol=1e-4)


def _secant(eps_at: Callable[[float], float], target: float, x0: float, rtol: float,
            limits: tuple[float, float]) -> float:
    """An estimate of the x with eps_at(x) = target for a monotone eps_at: a secant search in
    log-log coordinates, safeguarded by the bracket it finds; at most 30 evaluations."""
    lo_lim, hi_lim = math.log(limits[0]), math.log(limits[1])
    goal = math.log(target)

    def f(u: float) -> float:
        e = eps_at(math.exp(u))
        return math.inf if not e > 0.0 else math.log(e) - goal  # inf: far from the boundary

    u0 = min(max(math.log(x0), lo_lim), hi_lim)
    pts = [(u0, f(u0))]
    u1 = u0 + (0.05 if u0 + 0.05 <= hi_lim else -0.05)
    pts.append((u1, f(u1)))
    for _ in range(28):
        (ua, fa), (ub, fb) = pts[-2], pts[-1]
        if abs(fb) < rtol / 8:
            break
        neg = [u for u, v in pts if v < 0]
        pos = [u for u, v in pts if v > 0]
        if math.isfinite(fa) and math.isfinite(fb) and fa != fb:
            u = ub - fb * (ub - ua) / (fb - fa)
        else:
            u = ub + (1.0 if len(pos) > len(neg) else -1.0)
        if neg and pos:  # keep inside the bracket found so far: bisect when the step leaves it
            a, b = _bracket(neg, pos)
            if not a < u < b:
                u = 0.5 * (a + b)
        u = min(max(u, ub - 2.0, lo_lim), ub + 2.0, hi_lim)
        if u == ub:
            break
        pts.append((u, f(u)))
    return math.exp(min(pts, key=lambda p: abs(p[1]))[0])


def _bracket(neg: list[float], pos: list[float]) -> tuple[float, float]:
    """The narrowest interval between a point of each sign (the function is monotone)."""
    pairs = [(min(a, b), max(a, b)) for a in neg for b in pos]
    return min(pairs, key=lambda p: p[1] - p[0])


def _certify(make: Callable[[float], Guarantee], target: Guarantee, est: float, rtol: float,
             limits: tuple[float, float]) -> float:
    """``calibrate`` on a bracket of relative width rtol around the estimate, widened (x4) until it
    holds the boundary: the safe end, certified by ``implies``."""
    width = rtol / 2
    while True:
        lo, hi = max(limits[0], est / (1 + width)), min(limits[1], est * (1 + width))
        try:
            return calibrate(make, target, (lo, hi), tol=rtol)
        except ValueError:
            if lo == limits[0] and hi == limits[1]:
                raise
            width *= 4
