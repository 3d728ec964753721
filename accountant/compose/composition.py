"""Composition of guarantees: exact closed forms, the central limit theorem, and baselines."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import Any, Literal, overload

import mpmath
import numpy as np
from scipy import special

from accountant.core.rounding import LIBM_REL, hypot_up, round_up, sum_up
from accountant.core.types import UNIT_ROUNDOFF, FloatArray
from accountant.core.validation import check_count
from accountant.notions.conversions import to_rdp
from accountant.notions.finite_loss import FiniteLossTradeoff
from accountant.notions.guarantees import (
    CLTGDP,
    FDP,
    GDP,
    RDP,
    ZCDP,
    ApproxDP,
    Approximate,
    Guarantee,
    PureDP,
)
from accountant.notions.tradeoff import ProfileTradeoff
from accountant.pld.distribution import PLD, compose_plds
from accountant.pld.settings import check_tol


def log_binomial_pmf(k: int, p_log: float, q_log: float) -> FloatArray:
    """log of C(k, l) p^(k-l) q^l for l = 0..k, given log p and log q."""
    ll = np.arange(k + 1, dtype=np.float64)
    log_choose = special.gammaln(k + 1.0) - special.gammaln(ll + 1.0) - special.gammaln(k - ll + 1.0)
    return np.asarray(log_choose + (k - ll) * p_log + ll * q_log, dtype=np.float64)


Method = Literal["exact", "pld", "clt", "basic", "advanced", "rdp"]


#: Largest support of an exact composition of (eps, delta) guarantees before we refuse.
MAX_EXACT_SUPPORT = 2_000_000


#: Berry-Esseen constant used by [@dong2022gaussian, Thm 3.5].
BERRY_ESSEEN_C = 0.56


@overload
def compose(guarantees: Sequence[GDP], *, method: Literal["exact"] = ...,
            tol: float | None = ...) -> GDP: ...


@overload
def compose(guarantees: Sequence[ZCDP], *, method: Literal["exact"] = ...,
            tol: float | None = ...) -> ZCDP: ...


@overload
def compose(guarantees: Sequence[PLD], *, method: Literal["exact"] = ...,
            tol: float | None = ...) -> PLD: ...


@overload
def compose(guarantees: Sequence[PureDP | ApproxDP], *, method: Literal["exact"] = ...,
            tol: float | None = ...) -> FDP: ...


@overload
def compose(guarantees: Sequence[Guarantee], *, method: Literal["pld"],
            tol: float | None = ...) -> PLD: ...


@overload
def compose(guarantees: Sequence[Guarantee], *, method: Literal["clt"],
            tol: float | None = ...) -> CLTGDP: ...


@overload
def compose(guarantees: Sequence[Guarantee], *, method: Literal["basic"],
            tol: float | None = ...) -> ApproxDP: ...


@overload
def compose(guarantees: Sequence[Guarantee], *, method: Literal["advanced"],
            tol: float | None = ...) -> FDP: ...


@overload
def compose(guarantees: Sequence[Guarantee], *, method: Literal["rdp"],
            tol: float | None = ...) -> RDP: ...


@overload
def compose(guarantees: Sequence[Guarantee], *, method: Method = ...,
            tol: float | None = ...) -> Guarantee: ...


def compose(guarantees: Sequence[Guarantee], *, method: Method = "exact",
            tol: float | None = None) -> Guarantee:
    """Guarantee of the adaptive composition of mechanisms with the given guarantees.

    method:
      - ``"exact"``: closed forms — GDP adds mu^2 [@dong2022gaussian, Cor. 3.3], zCDP adds rho, RDP adds
        per order, pure and approximate DP compose exactly to the product of their randomized-response pairs
        [@kairouz2015composition] (heterogeneous eps by grouping equal values). Where no closed
        form exists (mixed notions, PLDs, subsampled mechanisms) the numeric PLD is used.
      - ``"pld"``: numeric composition of privacy-loss distributions (``accountant.pld.PLD``):
        sound upper bounds, with ``epsilon_bracket`` for the lower bound; identical items are
        grouped and composed by repeated squaring.
      - ``"clt"``: the Gaussian limit of [@dong2022gaussian, Thm 3.5], a ``CLTGDP`` carrying its
        Berry-Esseen error; an approximation, not a bound.
      - ``"basic"``: (sum eps, sum delta) — a baseline.
      - ``"advanced"``: [@dwork2010boosting; @dwork2014algorithmic, Thm 3.20], as a privacy
        profile over all eps. A baseline.
      - ``"rdp"``: convert each guarantee to RDP, add, convert back [@mironov2017renyi; @canonne2020discrete].

    ``tol`` (PLD results only: ``"pld"``, and ``"exact"`` where no closed form exists) is the
    accuracy the PLD's grid is set by (``PLD``): below the default a smaller tol never gives a wider
    bracket ``epsilon_bracket(delta)``, at a cost growing like 1/sqrt(tol); it is not a bound on
    the bracket's width. The default is
    the smallest tol of the PLDs composed (``accountant.pld.DEFAULT_TOL`` for other guarantees).

    A ``CLTGDP`` (an approximation) composes only by ``"clt"``; every other method refuses it. Any
    other ``Approximate`` guarantee (e.g. an ``AsymptoticDP``) is refused by every method.
    """
    gs = _guarantee_list(guarantees)
    if tol is not None:
        tol = check_tol(tol)
        if method not in ("exact", "pld"):
            raise ValueError(f"tol applies to PLD compositions (method 'pld' or 'exact'), "
                             f"not to method={method!r}")
    # checked by type (isinstance is issubclass of the type), then the first such item: a list of
    # 10^5 copies of one guarantee (DP-SGD) pays one check, not 10^5
    kinds = set(map(type, gs))
    refused = {k for k in kinds if issubclass(k, Approximate) and not issubclass(k, CLTGDP)}
    limit = next((g for g in gs if type(g) in refused), None) if refused else None
    if isinstance(limit, Approximate):
        raise ValueError(f"cannot compose by method={method!r}: {limit.refusal()}")
    if method != "clt" and any(issubclass(k, CLTGDP) for k in kinds):
        raise ValueError(f"a CLTGDP is an approximation, not a bound, and cannot be composed by "
                         f"method={method!r}; use method='clt', or its .rigorous() guarantee")
    if method == "exact":
        return _compose_exact(gs, tol)
    if method == "pld":
        return compose_plds(gs, tol)
    if method == "clt":
        return compose_clt(gs)
    if method == "basic":
        return compose_basic(gs)
    if method == "advanced":
        return compose_advanced(gs)
    if method == "rdp":
        return _compose_as_rdp(gs)
    raise ValueError(f"method must be one of exact, pld, clt, basic, advanced, rdp; got {method!r}")


def _guarantee_list(guarantees: Sequence[Guarantee]) -> list[Guarantee]:
    """The guarantees as a non-empty list, or a TypeError/ValueError that says what is expected."""
    if isinstance(guarantees, (Guarantee, str, bytes)) or not isinstance(guarantees, Iterable):
        raise TypeError("compose takes a list of guarantees, e.g. compose([g1, g2]), got "
                        f"{type(guarantees).__name__}")
    gs = list(guarantees)
    if not gs:
        raise ValueError("guarantees must contain at least one guarantee")
    for kind in set(map(type, gs)):
        if not issubclass(kind, Guarantee):
            raise TypeError(f"guarantees must be accountant guarantees, got {kind.__name__}")
    return gs


#: Closed forms of composition, by the set of guarantee types they take (``register_composition``).
_CLOSED_FORMS: list[tuple[frozenset[type[Guarantee]], Callable[[list[Guarantee]], Guarantee]]] = []


def register_composition(kinds: type[Guarantee] | tuple[type[Guarantee], ...],
                         fn: Callable[[list[Any]], Guarantee]) -> None:
    """Register the exact composition of lists whose guarantees all have (exactly) one of the
    ``kinds``; ``compose(..., method="exact")`` uses the first registered form that covers a list,
    and the numeric PLD when none does (``pld_from_guarantee`` is registrable too)."""
    group = kinds if isinstance(kinds, tuple) else (kinds,)
    for k in group:
        if not (isinstance(k, type) and issubclass(k, Guarantee)):
            raise TypeError(f"kinds must be Guarantee subclasses, got {k!r}")
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    _CLOSED_FORMS.append((frozenset(group), fn))


def _compose_exact(gs: list[Guarantee], tol: float | None = None) -> Guarantee:
    kinds = set(map(type, gs))
    for group, fn in _CLOSED_FORMS:
        if kinds <= group:
            return fn(gs)
    return compose_plds(gs, tol)


def _eps_delta(g: Guarantee) -> tuple[float, float]:
    if isinstance(g, PureDP):
        return g.eps, 0.0
    if isinstance(g, ApproxDP):
        return g.eps, g.delta_
    raise TypeError(f"this composition needs PureDP or ApproxDP guarantees, got {type(g).__name__};"
                    " convert with g.to_approx_dp(delta) first")


def compose_approx_dp_exact(gs: Sequence[Guarantee]) -> FDP:
    """Exact composition of (eps_i, delta_i)-DP guarantees [@kairouz2015composition].

    Each f_{eps,delta} is the trade-off of a randomized-response pair with an atom of mass delta at
    infinite loss; the composed curve is that of the product pair. Equal eps values are grouped, so
    a group of k copies contributes a binomial on {k eps, (k-2) eps, ..., -k eps}.

    Rounding is bounded and passed on (``FiniteLossTradeoff`` rounds outward): a loss is a sum of
    G group terms, each within ulp of |k eps|; a log-mass is a sum of terms of magnitude at most
    ``log_scale``, each computed within LIBM_ULP ulps (gammaln, log1p), and exp adds LIBM_ULP ulps
    (within the four spare terms).
    """
    pairs = [_eps_delta(g) for g in _guarantee_list(gs)]
    log_no_atom = math.fsum(math.log1p(-d) for _, d in pairs)
    groups = sorted(Counter(e for e, _ in pairs).items())
    loss_scale = math.fsum(k * e for e, k in groups)
    log_scale = abs(log_no_atom) + math.fsum(
        3.0 * math.lgamma(k + 1.0) + k * (e + 2.0 * math.log1p(math.exp(-e))) for e, k in groups)
    losses = np.zeros(1)
    log_q = np.zeros(1)
    for eps, k in groups:
        if eps == 0.0:
            continue
        if losses.size * (k + 1) > MAX_EXACT_SUPPORT:
            raise ValueError("exact composition would need more than "
                             f"{MAX_EXACT_SUPPORT} loss values; use method='pld' or 'clt'")
        log_w = -math.log1p(math.exp(-eps))  # log e^eps/(1+e^eps)
        log_1mw = log_w - eps  # log 1/(1+e^eps), no overflow
        group_loss = eps * (k - 2.0 * np.arange(k + 1))
        group_log_q = log_binomial_pmf(k, log_w, log_1mw)
        losses = (losses[:, None] + group_loss[None, :]).ravel()
        log_q = (log_q[:, None] + group_log_q[None, :]).ravel()
    q = np.exp(log_q + log_no_atom)
    p = np.exp(log_q - losses + log_no_atom)  # P-masses in log space: e^-loss may overflow
    atom = _atom_up([d for _, d in pairs])
    u = UNIT_ROUNDOFF
    # relative error of one mass, doubled by the normalisation, plus the normalising sum
    mass_rtol = 2.0 * (LIBM_REL * (len(groups) + 4) * (1.0 + log_scale)) + (q.size + 4) * u
    loss_atol = 2.0 * u * (len(groups) + 1) * loss_scale
    return FDP(FiniteLossTradeoff.from_losses(
        losses, q / q.sum() * (1 - atom), q_inf=atom, p_ninf=atom,
        p_masses=p / p.sum() * (1 - atom), mass_rtol=mass_rtol + loss_atol, loss_atol=loss_atol))


def _atom_up(deltas: Sequence[float]) -> float:
    """1 - prod(1 - delta_i) rounded up: the Q-mass at +inf of the product pair; exact in
    rationals for up to 64 nonzero deltas, else at 50 digits with a 1e-40 relative margin."""
    ds = [d for d in deltas if d > 0.0]
    if len(ds) <= 64:
        exact = 1 - math.prod((1 - Fraction(d) for d in ds), start=Fraction(1))
        f = float(exact)
        return math.nextafter(f, math.inf) if Fraction(f) < exact else f
    with mpmath.workdps(50):
        log_keep = mpmath.fsum(mpmath.log1p(-mpmath.mpf(d)) for d in ds)
        return min(round_up(-mpmath.expm1(log_keep) * (1 + mpmath.mpf(10) ** -40)), 1.0)


def _compose_as_rdp(gs: Sequence[Guarantee]) -> RDP:
    counts = Counter(gs)  # repeated guarantees are converted once and weighted
    return compose_rdp([to_rdp(g) for g in counts], weights=list(counts.values()))


def compose_rdp(rdps: Sequence[RDP], weights: Sequence[int] | None = None) -> RDP:
    """RDP composes additively at each order [@mironov2017renyi, Prop. 1]; ``weights`` repeat items.
    Sums are exact in rationals, rounded up."""
    if not rdps:
        raise ValueError("guarantees must contain at least one guarantee")
    if weights is None:
        w = [1] * len(rdps)
    elif isinstance(weights, (str, bytes)) or not isinstance(weights, Iterable):
        raise TypeError(f"weights must be a sequence of integers, got {type(weights).__name__}")
    else:
        w = [check_count("weights", c) for c in weights]
        if len(w) != len(rdps):
            raise ValueError(f"weights must have one count per RDP guarantee ({len(rdps)}), "
                             f"got {len(w)}")
    tabulated = [r for r in rdps if r.curve is None]
    if not tabulated:
        pairs = list(zip(rdps, w, strict=True))
        return RDP.from_curve(lambda a: sum_up((r.at(a) for r, _ in pairs), [c for _, c in pairs]))
    common = set(tabulated[0].orders)
    for r in tabulated[1:]:
        common &= set(r.orders)
    if not common:
        raise ValueError("the tabulated RDP guarantees share no order; tabulate them at common orders")
    orders = tuple(sorted(common))
    return RDP(orders=orders, epsilons=tuple(sum_up((r.at(a) for r in rdps), w) for a in orders))


def compose_clt(gs: Sequence[Guarantee]) -> CLTGDP:
    """Gaussian approximation of a composition [@dong2022gaussian, Thm 3.5]:

    mu = 2 sum kl_i / sqrt(sum (kappa2_i - kl_i^2)),
    gamma = 0.56 sum kappa3_i / (sum (kappa2_i - kl_i^2))^{3/2},
    and G_mu(a + gamma) - gamma <= f_1 x ... x f_n (a) <= G_mu(a - gamma) + gamma.
    """
    moments = [g.tradeoff.loss_moments() for g in _guarantee_list(gs)]
    kl = math.fsum(m.kl for m in moments)
    var = math.fsum(m.kappa2 - m.kl ** 2 for m in moments)
    if not var > 0.0 or not kl > 0.0:
        raise ValueError("the CLT needs a privacy loss with positive mean and variance")
    k3 = math.fsum(m.kappa3 for m in moments)
    return CLTGDP(2.0 * kl / math.sqrt(var), gamma=BERRY_ESSEEN_C * k3 / var ** 1.5)


def compose_basic(gs: Sequence[Guarantee]) -> ApproxDP:
    """Basic composition: (sum eps_i, sum delta_i)-DP [@dwork2014algorithmic, Thm 3.16]. A baseline."""
    pairs = [_eps_delta(g) for g in _guarantee_list(gs)]
    total_delta = sum_up(d for _, d in pairs)
    if total_delta >= 1.0:
        raise ValueError(f"basic composition gives delta = {total_delta!r} >= 1: no guarantee")
    return ApproxDP(sum_up(e for e, _ in pairs), total_delta)


def advanced_composition_profile(pairs: Sequence[tuple[float, float]]) -> Callable[[float], float]:
    """delta(eps') of advanced composition [@dwork2010boosting, heterogeneous form]:
    eps' = sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1), delta = delta' + sum delta_i,
    and basic composition where it is better. Rounded outward: the sums rounded up (exactly,
    ``sum_up``), eps_i (e^eps_i - 1) raised by numpy's expm1 error (LIBM_REL) and two products',
    the exponent (eps' - s1)^2 / (2 s2) lowered by its four roundings, exp's LIBM_REL added."""
    u = UNIT_ROUNDOFF
    eps_i = [float(e) for e, _ in pairs]
    with np.errstate(over="ignore"):  # inf beyond eps ~ 709
        s1 = sum_up(float(e * np.expm1(e)) * (1.0 + LIBM_REL + 2.0 * u) for e in eps_i)
    s2 = sum_up(eps_i, eps_i)
    total_eps = sum_up(eps_i)
    total_delta = sum_up(d for _, d in pairs)

    def delta(eps: float) -> float:
        if eps >= total_eps:
            return min(1.0, total_delta)
        if eps <= s1 or s2 == 0.0:
            return 1.0
        gap = eps - s1
        tail = math.exp(-(gap * gap / (2.0 * s2)) * (1.0 - 8.0 * u)) * (1.0 + LIBM_REL + 2.0 * u)
        return min(1.0, math.nextafter(total_delta + tail, math.inf))

    return delta


def compose_advanced(gs: Sequence[Guarantee]) -> FDP:
    """The advanced composition theorem as an f-DP guarantee built from its profile. A baseline."""
    parts = [_eps_delta(g) for g in _guarantee_list(gs)]
    return FDP(ProfileTradeoff(advanced_composition_profile(parts),
                               label=f"advanced composition of {len(parts)} releases"))


register_composition(GDP, lambda gs: GDP(hypot_up(g.mu for g in gs)))  # [@dong2022gaussian, Cor. 3.3]


register_composition(ZCDP, lambda gs: ZCDP(sum_up(g.rho for g in gs)))  # [@bun2016concentrated]


register_composition((RDP, ZCDP), lambda gs: _compose_as_rdp(gs))  # [@mironov2017renyi, Prop. 1]


register_composition((PureDP, ApproxDP), compose_approx_dp_exact)  # [@kairouz2015composition]
