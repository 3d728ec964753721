"""Local, Bayesian, coordinate and Bayesian-coordinate DP [@aliakbarpour2025enhancing].

Four guarantee types, registered like any other (serialisation, ordering, composition):

- ``LocalDP(eps)``: any two records are eps-indistinguishable [@aliakbarpour2025enhancing, Def. 1].
- ``BayesianDP(eps)``: for a prior pi, the laws of the output given x in S and x in S' (pi(S),
  pi(S') > 0) are eps-indistinguishable [Def. 2]; eps-LDP implies it for every prior (Prop. 1).
- ``CoordinateDP(c, eps)``: changing coordinate i alone moves the output law by at most e^{c_i}
  [Def. 3]; with ``eps`` a known LDP level (at most sum c, Prop. 4 part 1).
- ``BCDP(deltas, q, eps)``: for every prior whose coordinate dependence is bounded by ``q``
  (TV(pi_{x_-i | x_i in S}, pi_{x_-i | x_i in S'}) <= q_i, eq. (13) and Assumption 1), the laws of
  the output given x_i in S and x_i in S' are delta_i-indistinguishable [Def. 4]; ``eps`` is an LDP
  level the mechanism also has (inf: none). By Theorem 1 delta_i is the eps of the f_{delta_i,0}
  curve of the test between two hypotheses on coordinate i.

As whole-record guarantees (``delta(eps)``, ``tradeoff``) the first three have the curve f_{eps,0} of
their LDP level; a BCDP has the curve of its ``eps`` and none at all when eps is infinite
(Example 1: a BCDP mechanism need not be LDP for any eps). BCDP does not compose (Example 2), and
``compose`` refuses it with that reason; LDP and CDP compose, and are converted afterwards.

"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import cast

import mpmath
import numpy as np

from accountant.compose.composition import register_composition
from accountant.compose.serialisation import register_guarantee
from accountant.core.rounding import round_down, round_up, sum_up
from accountant.core.validation import check_count, check_real, check_reals
from accountant.notions.finite_loss import FiniteLossTradeoff
from accountant.notions.guarantees import Guarantee
from accountant.notions.ordering import Implication, register_target
from accountant.notions.tradeoff import PiecewiseLinearTradeoff, TradeoffFunction
from accountant.pld.distribution import PLD, pld_from_guarantee

__all__ = [
    "BCDP",
    "BCDPCompositionError",
    "BayesianDP",
    "CoordinateDP",
    "LocalDP",
    "baseline_zeta",
    "bcdp_cdp_vector",
    "cdp_to_bcdp",
    "ldp_to_bcdp",
    "ldp_to_bdp",
    "mean_cdp_vector",
]


#: Why ``compose`` refuses BCDP guarantees.
COMPOSITION_REFUSAL = (
    "BCDP guarantees do not compose [@aliakbarpour2025enhancing, Example 2]: with x uniform on "
    "{0,1}^3, M(x) = (x1 xor x2, x3) or (x2, x1 xor x3) with probability 1/2 each is 0-BCDP for x1, "
    "yet two independent copies that chose differently reveal x1 exactly. Compose the mechanisms' "
    "LocalDP or CoordinateDP guarantees instead (those compose) and convert the result with "
    "cdp_to_bcdp (Proposition 4), as Theorem 3 does by halving c, not delta.")


class BCDPCompositionError(ValueError):
    """``compose`` was asked to compose BCDP guarantees (see ``COMPOSITION_REFUSAL``)."""


def _trivial_curve() -> PiecewiseLinearTradeoff:
    """f = 0: no whole-record protection."""
    return PiecewiseLinearTradeoff(np.array([0.0, 1.0]), np.array([0.0, 0.0]))


class _PureLevel(Guarantee):
    """A guarantee whose whole-record curve is f_{L,0} for an LDP level L (inf: no curve)."""

    @property
    def ldp_level(self) -> float:
        raise NotImplementedError

    @cached_property
    def tradeoff(self) -> TradeoffFunction:
        level = self.ldp_level
        return _trivial_curve() if math.isinf(level) else FiniteLossTradeoff.approx_dp(level, 0.0)

    def _delta(self, eps: float) -> float:
        return 1.0 if math.isinf(self.ldp_level) else self.tradeoff.profile(eps)

    def _delta_at_infinity(self) -> float:
        return 1.0 if math.isinf(self.ldp_level) else 0.0


def _level(name: str, value: float) -> float:
    return check_real(name, value, low=0.0, high=math.inf)


@dataclass(frozen=True)
class _OneLevel(_PureLevel):
    eps: float

    def __post_init__(self) -> None:
        check_real("eps", self.eps, low=0.0, high=math.inf, high_open=True)

    @property
    def ldp_level(self) -> float:
        return self.eps


@dataclass(frozen=True)
class LocalDP(_OneLevel):
    """eps-LDP: P(M(x) in R) <= e^eps P(M(x') in R) for all records x, x'
    [@aliakbarpour2025enhancing, Def. 1]."""

    def __str__(self) -> str:
        return f"{self.eps:g}-LDP"


@dataclass(frozen=True)
class BayesianDP(_OneLevel):
    """eps-BDP of a (prior, mechanism) pair [@aliakbarpour2025enhancing, Def. 2]; by Prop. 1 it is
    eps-LDP after a change of the mechanism on a null set of the prior, so its curve f_{eps,0} holds
    for records drawn from the prior."""

    def __str__(self) -> str:
        return f"{self.eps:g}-BDP"


#: The most coordinates a guarantee of this module takes (its certificates are exact
#: rational sums and 50-digit logs per coordinate: about a second at this size).
MAX_DIMENSION = 10**4


def _vector(name: str, values: Sequence[float], *, high: float = math.inf,
            finite: bool = False) -> tuple[float, ...]:
    """One non-negative level per coordinate (at least 1, at most ``MAX_DIMENSION``); with
    ``finite``, inf is refused."""
    if hasattr(values, "__len__") and not isinstance(values, (str, bytes)) \
            and len(values) > MAX_DIMENSION:
        raise ValueError(f"{name} must have at most {MAX_DIMENSION} entries (one per coordinate), "
                         f"got {len(values)} (the certificates take about a second at that size)")
    out = check_reals(name, values, low=0.0, high=high)
    if not out:
        raise ValueError(f"{name} must have at least one entry (one per coordinate), got ()")
    if finite and not all(math.isfinite(x) for x in out):
        i = next(i for i, x in enumerate(out) if not math.isfinite(x))
        raise ValueError(f"{name} must hold finite levels, one per coordinate, got {name}[{i}] = "
                         f"{out[i]!r}: an infinite level is no bound at all; give every "
                         f"coordinate a finite level (a coordinate of an eps-LDP mechanism leaks at "
                         f"most eps)")
    return out


@dataclass(frozen=True)
class CoordinateDP(_PureLevel):
    """c-CDP: records differing only in coordinate i are c_i-indistinguishable
    [@aliakbarpour2025enhancing, Def. 3]; ``eps`` is a known LDP level (default: sum c, which c-CDP
    implies, Prop. 4 part 1)."""

    c: tuple[float, ...]
    eps: float = math.inf

    def __post_init__(self) -> None:
        object.__setattr__(self, "c", _vector("c", self.c, finite=True))
        object.__setattr__(self, "eps", _level("eps", self.eps))

    @property
    def ldp_level(self) -> float:
        return min(self.eps, sum_up(self.c))

    def __str__(self) -> str:
        return f"c-CDP (c = {[round(x, 6) for x in self.c]}, {self.ldp_level:g}-LDP)"


@dataclass(frozen=True)
class BCDP(_PureLevel):
    """delta-BCDP for every prior with dependence bound q, and eps-LDP
    [@aliakbarpour2025enhancing, Def. 4, eq. (13)]: ``deltas[i]`` bounds the privacy loss of
    coordinate i (finite: a coordinate with no demand is bounded by the LDP level eps); ``q[i]``
    in [0, 1] bounds TV(pi_{x_-i | x_i in S},
    pi_{x_-i | x_i in S'}) (a number is used for every coordinate; q_i = 1 holds for every prior);
    ``eps`` is the whole-record LDP level (inf: none claimed)."""

    deltas: tuple[float, ...]
    q: Sequence[float] | float = 1.0
    eps: float = math.inf

    def __post_init__(self) -> None:
        d = _vector("deltas", self.deltas, finite=True)
        raw = self.q
        if isinstance(raw, (int, float, np.integer, np.floating)) and not isinstance(raw, bool):
            q = (check_real("q", raw, low=0.0, high=1.0),) * len(d)
        else:  # a sequence (anything else is refused by _vector, naming q)
            q = _vector("q", cast(Sequence[float], raw), high=1.0)
        if len(q) != len(d):
            raise ValueError(f"q must have one entry per coordinate ({len(d)}), got {len(q)}")
        object.__setattr__(self, "deltas", d)
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "eps", _level("eps", self.eps))

    @property
    def qs(self) -> tuple[float, ...]:
        """q, one entry per coordinate."""
        assert isinstance(self.q, tuple)
        return self.q

    @property
    def ldp_level(self) -> float:
        return self.eps

    @property
    def dimension(self) -> int:
        return len(self.deltas)

    def __str__(self) -> str:
        ldp = "" if math.isinf(self.eps) else f", {self.eps:g}-LDP"
        return f"delta-BCDP (delta = {[round(x, 6) for x in self.deltas]}, q = {list(self.qs)}{ldp})"


def ldp_to_bdp(g: LocalDP) -> BayesianDP:
    """eps-LDP is eps-BDP under every prior [@aliakbarpour2025enhancing, Prop. 1]."""
    if not isinstance(g, LocalDP):
        raise TypeError(f"g must be a LocalDP guarantee, got {type(g).__name__}")
    return BayesianDP(g.eps)


def ldp_to_bcdp(g: LocalDP, d: int) -> BCDP:
    """eps-LDP is (eps 1)-BCDP under every prior, i.e. with q = 1 [@aliakbarpour2025enhancing, Prop. 3]."""
    if not isinstance(g, LocalDP):
        raise TypeError(f"g must be a LocalDP guarantee, got {type(g).__name__}")
    d = check_count("d", d)
    return BCDP((g.eps,) * d, 1.0, g.eps)


def _up(x: mpmath.mpf) -> float:
    """A double >= x (x computed at 50 digits: widened by 1e-40 relative before rounding up)."""
    return round_up(x * (1 + mpmath.mpf(10) ** -40) if x > 0 else x * (1 - mpmath.mpf(10) ** -40))


def _leak(c_i: float, q: float, s: float) -> float:
    """c_i + log(1 + q (e^s - 1)), rounded up (the bound (52) of [@aliakbarpour2025enhancing, App. A.4])."""
    if q == 0.0:  # independent coordinates: the others tell nothing about x_i
        return c_i
    if math.isinf(s):
        return math.inf
    with mpmath.workdps(50):
        return _up(mpmath.mpf(c_i) + mpmath.log1p(mpmath.mpf(q) * mpmath.expm1(mpmath.mpf(s))))


def _float_up(x: Fraction) -> float:
    """The smallest double >= x >= 0 (what ``sum_up`` gives for the same exact sum)."""
    if x >= Fraction(2) ** 1024:
        return math.inf
    f = float(x)
    return math.nextafter(f, math.inf) if Fraction(f) < x else f


def _qs(q: Sequence[float] | float, d: int) -> tuple[float, ...]:
    return BCDP((0.0,) * d, q).qs  # validated and broadcast


def cdp_to_bcdp(g: CoordinateDP, q: Sequence[float] | float) -> BCDP:
    """CDP plus a dependence bound q gives BCDP [@aliakbarpour2025enhancing, Prop. 4]:
    part 1, delta_i = c_i + log(1 + q_i (e^{sum_{j != i} c_j} - 1)); part 2, when the mechanism is
    also eps-LDP, delta_i = min(c_i + log(1 + q_i (e^eps - 1)), eps). The smaller of the two applies
    (part 1 holds whatever eps is); every delta_i is rounded up, and the result is (min(eps, sum c))-LDP."""
    if not isinstance(g, CoordinateDP):
        raise TypeError(f"g must be a CoordinateDP guarantee, got {type(g).__name__}")
    d = len(g.c)
    qs = _qs(q, d)
    level = g.ldp_level
    deltas = []
    total = sum((Fraction(x) for x in g.c), Fraction(0))  # exact; each rest is total - c_i
    for c_i, q_i in zip(g.c, qs, strict=True):
        rest = _float_up(total - Fraction(c_i)) if d > 1 else 0.0
        part1 = _leak(c_i, q_i, rest)
        part2 = min(_leak(c_i, q_i, g.eps), g.eps)
        deltas.append(min(part1, part2, level))
    return BCDP(tuple(deltas), qs, level)


def _shrink_to(c: Sequence[float], qs: tuple[float, ...], ldp: bool,
               deltas: tuple[float, ...]) -> tuple[float, ...]:
    """Scale c down (by 1 - t, t doubling from 1e-15) until ``cdp_to_bcdp`` (rounded up) certifies
    ``deltas``: the float solutions of (16) and of the linear programme hold with equality before
    rounding. Every delta_i grows with every c_j, and c = 0 gives delta = 0, so this ends. With
    ``ldp`` the mechanism's LDP level is max(c) (Prop. 4 part 2), else sum(c)."""
    t = 0.0
    while True:
        cc = tuple(x * (1.0 - t) for x in c)
        got = cdp_to_bcdp(CoordinateDP(cc, max(cc) if ldp else math.inf), qs).deltas
        if all(x <= y for x, y in zip(got, deltas, strict=True)):
            return cc
        t = 1e-15 if t == 0.0 else 2.0 * t


def _log_ratio_bound(delta: float, q: float) -> float:
    """log(1 + (e^delta - 1)/q) for q in (0, 1], without overflow (delta - log q + O(e^-delta))."""
    if delta < 700.0:
        return math.log1p(math.expm1(delta) / q)
    return delta + math.log1p(-(1.0 - q) * math.exp(-delta)) - math.log(q)


def bcdp_cdp_vector(deltas: Sequence[float], q: Sequence[float] | float, *,
                    weights: Sequence[float] | None = None,
                    lower: Sequence[float] | None = None) -> tuple[float, ...]:
    """A CDP vector c whose Prop. 4 (part 1) BCDP guarantee meets ``deltas``: the linear programme
    max w.c subject to A_delta c <= 1, c >= ``lower`` [@aliakbarpour2025enhancing, Prop. 6, eq. (53)],
    A[i, i] = 1/delta_i, A[i, j] = 1/log(1 + (e^{delta_i} - 1)/q_i) (j != i), solved with scipy's
    HiGHS. Raises ``ValueError`` when the constraints admit no c >= ``lower``. The returned c is
    checked (and scaled down by ~1e-15 where rounding demands) against ``cdp_to_bcdp``."""
    dl = _vector("deltas", deltas)
    d = len(dl)
    qs = _qs(q, d)
    w = np.ones(d) if weights is None else np.asarray(_vector("weights", weights), dtype=np.float64)
    lo = np.zeros(d) if lower is None else np.asarray(_vector("lower", lower), dtype=np.float64)
    for name, arr in (("weights", w), ("lower", lo)):
        if arr.shape != (d,):
            raise ValueError(f"{name} must have one entry per coordinate ({d}), got {arr.size}")
    a = np.empty((d, d))
    for i in range(d):
        if qs[i] == 0.0:
            off = 0.0  # independent coordinates: the others do not leak coordinate i
        else:
            off = math.inf if dl[i] == 0.0 else 1.0 / _log_ratio_bound(dl[i], qs[i])
        a[i, :] = off
        a[i, i] = math.inf if dl[i] == 0.0 else 1.0 / dl[i]
    # an infinite coefficient in column j (delta_i = 0) forces c_j = 0; the rest is finite
    forced = np.isinf(a).any(axis=0)
    if (lo[forced] > 0).any():
        bad = int(np.flatnonzero(forced & (lo > 0))[0])
        raise ValueError(f"infeasible: lower[{bad}] = {lo[bad]} > 0 but a zero delta forces "
                         f"c[{bad}] = 0 [@aliakbarpour2025enhancing, Prop. 6]")
    free = np.flatnonzero(~forced)
    c = np.zeros(d)
    if free.size:
        from scipy import optimize  # imported on use: slow to import

        res = optimize.linprog(-w[free], A_ub=a[:, free], b_ub=np.ones(d),
                               bounds=[(float(x), None) for x in lo[free]], method="highs")
        if res.status == 2:
            raise ValueError(f"infeasible: no CDP vector c >= lower = {lo.tolist()} satisfies "
                             f"A_delta c <= 1 for deltas = {list(dl)}, q = {list(qs)} "
                             "[@aliakbarpour2025enhancing, Prop. 6]; lower the floor or raise deltas")
        if res.status == 3:
            raise ValueError("unbounded: some coordinate has no finite constraint (an infinite "
                             "delta with q = 0 everywhere); give finite deltas")
        if res.status != 0:
            raise ArithmeticError(f"the linear programme of Prop. 6 failed: {res.message}")
        c[free] = np.maximum(np.asarray(res.x, dtype=np.float64), 0.0)
    return _shrink_to(c.tolist(), qs, False, dl)


def mean_cdp_vector(deltas: Sequence[float], eps: float, q: float, zeta: float) -> tuple[float, ...]:
    """The CDP vector of [@aliakbarpour2025enhancing, Thm 2, eq. (16)] for non-decreasing ``deltas``,
    LDP level ``eps`` and dependence bound ``q`` (Assumption 1): with dt_i = min(delta_i, eps),
    c_d = min(log((e^{zeta dt_1} + q - 1)/q), dt_d) (dt_d when q = 0) and, for i < d, c_i = c_d if
    c_d <= dt_i else dt_i - log(1 + q (e^{c_d} - 1)). ``zeta`` in [0, 1] (the paper takes (0, 1];
    zeta = 0 gives c_d = 0 when q > 0). Rounded down so that ``cdp_to_bcdp`` of
    ``CoordinateDP(c, c_d)`` with q_i = q (i < d) meets dt."""
    dl = _vector("deltas", deltas)
    if any(b < a for a, b in itertools.pairwise(dl)):
        raise ValueError(f"deltas must be non-decreasing (sort the coordinates), got {list(dl)}")
    eps = check_real("eps", eps, low=0.0, high=math.inf, low_open=True, high_open=True)
    q = check_real("q", q, low=0.0, high=1.0)
    zeta = check_real("zeta", zeta, low=0.0, high=1.0)
    dt = [min(x, eps) for x in dl]
    with mpmath.workdps(50):
        if q == 0.0:
            cd = dt[-1]
        else:
            head = mpmath.log((mpmath.exp(mpmath.mpf(zeta) * dt[0]) + q - 1) / q)
            cd = min(round_down(head), dt[-1])
        leak = mpmath.log1p(mpmath.mpf(q) * mpmath.expm1(mpmath.mpf(cd)))
        c = [cd if cd <= x else max(0.0, round_down(mpmath.mpf(x) - leak)) for x in dt[:-1]] + [cd]
    # an entry that is 0 in exact arithmetic (zeta = 1) comes out of the floats as ~1e-17: make it 0
    c = [0.0 if x < 1e-12 * dt[-1] else x for x in c]
    qs = (q,) * (len(dt) - 1) + (1.0,)
    return _shrink_to(c, qs, True, tuple(dt))


def baseline_zeta(deltas: Sequence[float], eps: float, q: float) -> float:
    """zeta* = log(1 + q (e^{dt_1} - 1)) / dt_1, at which (16) gives c = dt_1 1: Mechanism 1 is then
    the dt_1-LDP channel on the whole record, the min-delta baseline. Lowered by ulps until the
    float c_d does not exceed dt_1 (the rule (16) jumps down at c_d = dt_i). 0 when q = 0."""
    dl = _vector("deltas", deltas)
    eps = check_real("eps", eps, low=0.0, high=math.inf, low_open=True, high_open=True)
    q = check_real("q", q, low=0.0, high=1.0)
    d1 = min(dl[0], eps)
    if q == 0.0 or d1 == 0.0:
        return 0.0
    zeta = min(1.0, math.log1p(q * math.expm1(d1)) / d1)
    while mean_cdp_vector(dl, eps, q, zeta)[-1] > d1:
        zeta = math.nextafter(zeta, 0.0)
    return zeta


def _compose_bcdp(gs: list[BCDP]) -> BCDP:
    if len(gs) == 1:
        return gs[0]
    raise BCDPCompositionError(COMPOSITION_REFUSAL)


@pld_from_guarantee.register
def _(g: BCDP, tol: float = 0.0) -> PLD:
    raise BCDPCompositionError(COMPOSITION_REFUSAL)


def _compose_cdp(gs: list[CoordinateDP]) -> CoordinateDP:
    dims = {len(g.c) for g in gs}
    if len(dims) != 1:
        raise ValueError(f"CoordinateDP guarantees of different dimensions cannot compose: {sorted(dims)}")
    c = tuple(sum_up(col) for col in zip(*(g.c for g in gs), strict=True))
    return CoordinateDP(c, sum_up(g.ldp_level for g in gs))


register_guarantee(LocalDP)


register_guarantee(BayesianDP)


register_guarantee(CoordinateDP, encode=lambda g: {"c": list(g.c), "eps": g.eps},
                   decode=lambda d: CoordinateDP(tuple(d["c"]), d["eps"]))


register_guarantee(BCDP, encode=lambda g: {"deltas": list(g.deltas), "q": list(g.qs), "eps": g.eps},
                   decode=lambda d: BCDP(tuple(d["deltas"]), tuple(d["q"]), d["eps"]))


# pure LDP composes by adding eps [@aliakbarpour2025enhancing, Thm 2 proof]; CDP coordinate-wise
register_composition(LocalDP, lambda gs: LocalDP(sum_up(g.eps for g in gs)))


register_composition(CoordinateDP, _compose_cdp)


register_composition(BCDP, _compose_bcdp)


def _ldp_of(g: Guarantee) -> float | None:
    """The LDP level a guarantee of these types states (None: not a local notion)."""
    if isinstance(g, (LocalDP, CoordinateDP, BCDP)):
        return g.ldp_level
    return None


@register_target
def _(target: LocalDP, g: Guarantee) -> Implication:
    level = _ldp_of(g)
    if level is None:
        return Implication(False, f"{g} states no local-DP level")
    return Implication(level <= target.eps, f"LDP level {level:.6g}")


@register_target
def _(target: BayesianDP, g: Guarantee) -> Implication:
    level = g.eps if isinstance(g, BayesianDP) else _ldp_of(g)  # Prop. 1
    if level is None:
        return Implication(False, f"{g} states no local- or Bayesian-DP level")
    return Implication(level <= target.eps, f"BDP level {level:.6g} (Prop. 1)")


@register_target
def _(target: CoordinateDP, g: Guarantee) -> Implication:
    d = len(target.c)
    if isinstance(g, LocalDP):  # eps-LDP is (eps 1)-CDP
        c: tuple[float, ...] = (g.eps,) * d
    elif isinstance(g, CoordinateDP) and len(g.c) == d:
        c = g.c
    else:
        return Implication(False, f"{g} states no {d}-coordinate CDP vector")
    level = _ldp_of(g)
    assert level is not None
    ok = all(x <= t for x, t in zip(c, target.c, strict=True)) and level <= target.ldp_level
    return Implication(ok, f"c = {list(c)}, LDP level {level:.6g}")


@register_target
def _(target: BCDP, g: Guarantee) -> Implication:
    d = target.dimension
    level = _ldp_of(g)
    if isinstance(g, LocalDP):
        got = ldp_to_bcdp(g, d)
        how = "Prop. 3"
    elif isinstance(g, CoordinateDP) and len(g.c) == d:
        got = cdp_to_bcdp(g, target.qs)
        how = "Prop. 4"
    elif isinstance(g, BCDP) and g.dimension == d:
        if any(qg < qt for qg, qt in zip(g.qs, target.qs, strict=True)):
            return Implication(False, f"{g} holds for dependence up to q = {list(g.qs)}, below the "
                               f"target's {list(target.qs)}")
        got, how = g, "as stated"
    else:
        return Implication(False, f"{g} states no {d}-coordinate BCDP bound")
    assert level is not None
    ok = all(x <= t for x, t in zip(got.deltas, target.deltas, strict=True)) and level <= target.eps
    return Implication(ok, f"delta = {[float(f'{x:.6g}') for x in got.deltas]} ({how}), "
                       f"LDP level {level:.6g}")
