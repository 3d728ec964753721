"""Privacy guarantees as immutable, validated values.

Every guarantee answers ``delta(eps)`` (an exact value or a sound upper bound), ``epsilon(delta)``
(the smallest eps with ``delta(eps) <= delta``, found by bisection to a relative tolerance of
``EPSILON_RTOL`` and never below the true value) and ``tradeoff`` (its f-DP curve, exact or a
sound lower bound).

"""

from __future__ import annotations

import math
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accountant.core.codec import Codec
from accountant.core.rounding import LIBM_REL, sum_up
from accountant.core.search import smallest_epsilon
from accountant.core.types import UNIT_ROUNDOFF, FloatArray
from accountant.core.validation import as_float_array, check_real, check_reals
from accountant.notions.closed_forms import GaussianTradeoff
from accountant.notions.finite_loss import FiniteLossTradeoff
from accountant.notions.tradeoff import (
    CURVES,
    ProfileTradeoff,
    TradeoffFunction,
    as_tradeoff,
    function_name,
)


class Guarantee(ABC):
    """A differential-privacy guarantee of one notion."""

    @abstractmethod
    def _delta(self, eps: float) -> float:
        """delta(eps) for one finite eps (exact, or a sound upper bound)."""

    @property
    @abstractmethod
    def tradeoff(self) -> TradeoffFunction:
        """The guarantee's f-DP curve (exact, or a sound lower bound)."""

    @overload
    def delta(self, eps: float) -> float: ...

    @overload
    def delta(self, eps: NDArray[Any] | Sequence[float]) -> FloatArray: ...

    def delta(self, eps: float | NDArray[Any] | Sequence[float]) -> float | FloatArray:
        """Smallest delta such that the guarantee implies (eps, delta)-DP."""
        e = as_float_array("eps", eps)
        out = np.array([self._delta_checked(float(x)) for x in e.ravel()]).reshape(e.shape)
        return float(out) if np.ndim(eps) == 0 else out

    def _delta_checked(self, eps: float) -> float:
        if eps == math.inf:
            return self._delta_at_infinity()
        return min(1.0, max(0.0, self._delta(eps)))

    def _delta_at_infinity(self) -> float:
        return 0.0

    def epsilon(self, delta: float) -> float:
        """Smallest eps >= 0 with delta(eps) <= delta, rounded up (``math.inf`` if none)."""
        delta = check_real("delta", delta, low=0.0, high=1.0)
        if delta < self._delta_at_infinity():
            return math.inf
        return smallest_epsilon(self._delta_checked, delta)

    def to_approx_dp(self, delta: float) -> ApproxDP:
        """The (eps, delta)-DP guarantee implied at this delta (ValueError where no finite eps is)."""
        eps = self.epsilon(delta)
        if eps == math.inf:
            raise ValueError(f"{self} implies no (eps, delta)-DP with finite eps at delta = {delta!r}; "
                             "delta must be larger")
        return ApproxDP(eps, delta)


@dataclass(frozen=True)
class PureDP(Guarantee):
    """eps-DP; its trade-off curve is f_{eps,0}, attained by randomized response."""

    eps: float

    def __post_init__(self) -> None:
        check_real("eps", self.eps, low=0.0, high=math.inf, high_open=True)

    @cached_property
    def tradeoff(self) -> FiniteLossTradeoff:
        return FiniteLossTradeoff.approx_dp(self.eps, 0.0)

    def _delta(self, eps: float) -> float:
        return self.tradeoff.profile(eps)

    def epsilon(self, delta: float) -> float:
        delta = check_real("delta", delta, low=0.0, high=1.0)
        return self.eps if delta == 0.0 else super().epsilon(delta)

    def __str__(self) -> str:
        return f"{self.eps:g}-DP"


@dataclass(frozen=True)
class ApproxDP(Guarantee):
    """(eps, delta)-DP; curve f_{eps,delta} [@wasserman2010statistical; @dong2022gaussian, Prop. 2.5]."""

    eps: float
    delta_: float = field(metadata={"name": "delta"})

    def __init__(self, eps: float, delta: float) -> None:
        object.__setattr__(self, "eps", check_real("eps", eps, low=0.0, high=math.inf,
                                                   high_open=True))
        object.__setattr__(self, "delta_", check_real("delta", delta, low=0.0, high=1.0,
                                                      high_open=True))

    def __repr__(self) -> str:
        return f"ApproxDP(eps={self.eps!r}, delta={self.delta_!r})"

    @cached_property
    def tradeoff(self) -> FiniteLossTradeoff:
        return FiniteLossTradeoff.approx_dp(self.eps, self.delta_)

    def _delta(self, eps: float) -> float:
        return self.tradeoff.profile(eps)

    def _delta_at_infinity(self) -> float:
        return self.delta_

    def __str__(self) -> str:
        return f"({self.eps:g}, {self.delta_:g})-DP"


@dataclass(frozen=True)
class GDP(Guarantee):
    """mu-Gaussian DP: f >= G_mu [@dong2022gaussian, Def. 2.7]."""

    mu: float

    def __post_init__(self) -> None:
        check_real("mu", self.mu, low=0.0, high=math.inf, low_open=True, high_open=True)

    @cached_property
    def tradeoff(self) -> GaussianTradeoff:
        return GaussianTradeoff(self.mu)

    def _delta(self, eps: float) -> float:
        return self.tradeoff.profile(eps)

    def __str__(self) -> str:
        return f"{self.mu:g}-GDP"


class Approximate(Guarantee):
    """Marker of a guarantee that is *not a bound*: an approximation (``CLTGDP``) or a statement that
    holds only in a limit (``AsymptoticDP``). Its ``delta``/``epsilon``/``tradeoff`` describe what it
    states; every path that produces or consumes a bound (composition, conversions, the ordering,
    PLDs, ledgers, calibration, JSON) refuses it with ``refusal()``."""

    @property
    @abstractmethod
    def what(self) -> str:
        """What the value is, e.g. "a CLT approximation" (for error messages)."""

    @property
    @abstractmethod
    def instead(self) -> str:
        """What to use in its place where a bound is needed (for error messages)."""

    def refusal(self) -> str:
        """The message every refusing path gives: what the value is and what to use instead."""
        return f"{self} is {self.what}, not a bound; {self.instead}"

    def to_approx_dp(self, delta: float) -> ApproxDP:
        """Refused: an (eps, delta)-DP value would read as a bound."""
        raise ValueError(self.refusal())


@dataclass(frozen=True)
class CLTGDP(GDP, Approximate):
    """An *approximate* mu-GDP from the central limit theorem [@dong2022gaussian, Thm 3.5]. Not a bound.

    ``gamma`` is the Berry-Esseen error: the true composed curve f satisfies
    G_mu(a + gamma) - gamma <= f(a) <= G_mu(a - gamma) + gamma; ``rigorous()`` returns the
    guarantee given by the left-hand side, which is a valid lower bound.
    """

    gamma: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_real("gamma", self.gamma, low=0.0, high=math.inf, high_open=True)

    def rigorous(self) -> FDP:
        """The sound f-DP guarantee max(0, G_mu(a + gamma) - gamma) of Berry-Esseen."""
        g, gam = GaussianTradeoff(self.mu), self.gamma

        def lower(a: FloatArray) -> FloatArray:
            return np.maximum(g(np.minimum(a + gam, 1.0)) - gam, 0.0)

        return FDP(lower)

    def __str__(self) -> str:
        return f"~{self.mu:g}-GDP (CLT approximation, Berry-Esseen error {self.gamma:.3g})"

    @property
    def what(self) -> str:
        return "a CLT approximation"

    @property
    def instead(self) -> str:
        return "use its .rigorous() guarantee"


@dataclass(frozen=True)
class AsymptoticDP(Approximate):
    """(eps, delta)-DP that a theorem proves only in a limit (e.g. as n -> infinity under
    assumptions on the data's law), so *not a bound* for any finite instance; ``holds_when`` says
    when (the theorem and its conditions). Its ``tradeoff`` is f_{eps,delta}, the statement itself;
    ``hypothesis()`` is the same statement as an ``ApproxDP`` for an audit to test, never to
    account with."""

    eps: float
    delta_: float = field(metadata={"name": "delta"})
    holds_when: str = "asymptotically"

    def __init__(self, eps: float, delta: float, holds_when: str = "asymptotically") -> None:
        object.__setattr__(self, "eps", check_real("eps", eps, low=0.0, high=math.inf, high_open=True))
        object.__setattr__(self, "delta_", check_real("delta", delta, low=0.0, high=1.0, high_open=True))
        if not isinstance(holds_when, str) or not holds_when:
            raise TypeError(f"holds_when must be a non-empty string, got {holds_when!r}")
        object.__setattr__(self, "holds_when", holds_when)

    def __repr__(self) -> str:
        return f"AsymptoticDP(eps={self.eps!r}, delta={self.delta_!r}, holds_when={self.holds_when!r})"

    @cached_property
    def tradeoff(self) -> FiniteLossTradeoff:
        return self.hypothesis().tradeoff

    def _delta(self, eps: float) -> float:
        return self.tradeoff.profile(eps)

    def _delta_at_infinity(self) -> float:
        return self.delta_

    def hypothesis(self) -> ApproxDP:
        """The (eps, delta)-DP statement, for an audit to test (``verify.audit``); not a bound."""
        return ApproxDP(self.eps, self.delta_)

    @property
    def what(self) -> str:
        return f"an asymptotic guarantee (it holds {self.holds_when})"

    @property
    def instead(self) -> str:
        return ("audit its .hypothesis() at the n of interest, or use a mechanism with a finite-n "
                "guarantee (e.g. NoisyGD)")

    def __str__(self) -> str:
        return f"~({self.eps:g}, {self.delta_:g})-DP (asymptotic)"


@dataclass(frozen=True, eq=False)
class FDP(Guarantee):
    """f-DP for a trade-off function f [@dong2022gaussian, Def. 2.3]. A plain callable is validated first."""

    tradeoff_fn: TradeoffFunction

    def __init__(self, tradeoff: TradeoffFunction | Callable[[FloatArray], ArrayLike]) -> None:
        object.__setattr__(self, "tradeoff_fn", as_tradeoff(tradeoff))

    @property
    def tradeoff(self) -> TradeoffFunction:
        return self.tradeoff_fn

    def _delta(self, eps: float) -> float:
        return self.tradeoff_fn.profile(eps)

    def _delta_at_infinity(self) -> float:
        # the Q-mass at loss +inf: 1 - f(0), or the profile's limit (exact for finite losses,
        # whose f(0) knot is lost when the P-mass of the largest loss underflows)
        return min(1.0 - self.tradeoff_fn(0.0), self.tradeoff_fn.profile(math.inf))

    def __str__(self) -> str:
        return f"f-DP with f = {self.tradeoff_fn}"

    def __repr__(self) -> str:
        return f"FDP({self.tradeoff_fn!r})"


#: Unit round-off of a double: the error bounds below count a few of them per operation.


def rdp_delta(order: float, rdp_eps: float, eps: float) -> float:
    """delta for (eps, delta)-DP from (order, rdp_eps)-RDP, the tight conversion of Canonne,
    Kamath & Steinke [@canonne2020discrete, Prop. 12] and Asoodeh et al. [@asoodeh2021three]:
    delta = exp((a-1)(rdp_eps - eps)) / a * (1 - 1/a)^(a-1); at order infinity RDP is pure
    rdp_eps-DP and delta is its profile. Rounded up: the exponent is raised by a bound on its
    rounding error (LIBM_REL and 4 u of each term, log and log1p erring by LIBM_REL; log1p(-1/a)
    contributes a/(a-1) ulps near a = 1), exp's LIBM_REL taken off its result; below
    the normal range, where a relative margin is lost, by one subnormal step (never 0)."""
    a = order
    if rdp_eps == math.inf:
        return 1.0
    if a == math.inf:
        return FiniteLossTradeoff.approx_dp(rdp_eps).profile(eps)
    t1 = (a - 1.0) * (rdp_eps - eps)
    t2 = (a - 1.0) * math.log1p(-1.0 / a)
    t3 = math.log(a)
    err = (LIBM_REL + 4.0 * UNIT_ROUNDOFF) * (abs(t1) + abs(t2) + abs(t3) + a)
    d = math.exp(min(t1 + t2 - t3 + err, 0.0)) * (1.0 + LIBM_REL + 2.0 * UNIT_ROUNDOFF)
    return d if d >= sys.float_info.min else math.nextafter(d, math.inf)


def rdp_epsilon(order: float, rdp_eps: float, delta: float) -> float:
    """eps from (order, rdp_eps)-RDP at delta, inverting ``rdp_delta`` [@canonne2020discrete, Prop. 12],
    rounded up by a bound on its rounding error; at order infinity the pure-DP epsilon."""
    a = order
    if rdp_eps == math.inf:
        return math.inf
    if a == math.inf:
        return PureDP(rdp_eps).epsilon(delta)
    t1 = math.log1p(-1.0 / a)
    t2 = (math.log(delta) + math.log(a)) / (a - 1.0)
    err = (LIBM_REL + 4.0 * UNIT_ROUNDOFF) * (abs(rdp_eps) + abs(t1) + a / (a - 1.0) + abs(t2))
    return max(0.0, math.nextafter(rdp_eps + t1 - t2 + err, math.inf))


def rdp_classic_epsilon(order: float, rdp_eps: float, delta: float) -> float:
    """The classic eps = rdp_eps + log(1/delta)/(a - 1) [@mironov2017renyi, Prop. 3], rounded up."""
    t = -math.log(delta) / (order - 1.0)
    return math.nextafter(rdp_eps + t + (LIBM_REL + 4.0 * UNIT_ROUNDOFF) * (rdp_eps + t), math.inf)


#: Orders searched for a curve given as a function: 1 + e^t for t in [_MIN_LOG_ORDER, log _MAX_ORDER].
_MAX_ORDER = 1e6


_MIN_LOG_ORDER = -12.0


@dataclass(frozen=True, eq=False)
class RDP(Guarantee):
    """Renyi DP [@mironov2017renyi]: D_a(M(S) || M(S')) <= eps(a), given at ``orders`` or as a function.

    Construct with ``RDP(orders=[...], epsilons=[...])`` or ``RDP.from_curve(fn)``; conversions to
    (eps, delta) minimise the tight bound of Canonne, Kamath & Steinke over the orders.
    """

    orders: tuple[float, ...] = ()
    epsilons: tuple[float, ...] = ()
    curve: Callable[[float], float] | None = None

    def __post_init__(self) -> None:
        if self.curve is None:
            orders = check_reals("orders", self.orders, low=1.0, low_open=True)
            epsilons = check_reals("epsilons", self.epsilons, low=0.0)
            if len(orders) == 0 or len(orders) != len(epsilons):
                raise ValueError("orders and epsilons must be non-empty and of equal length, got "
                                 f"{len(orders)} and {len(epsilons)}")
            object.__setattr__(self, "orders", orders)
            object.__setattr__(self, "epsilons", epsilons)
        elif not callable(self.curve):
            raise TypeError("curve must be a callable order -> RDP epsilon")

    @classmethod
    def from_curve(cls, curve: Callable[[float], float]) -> RDP:
        """RDP given for every order a > 1 by a function."""
        return cls(curve=curve)

    def at(self, order: float) -> float:
        """The RDP epsilon at one order (only the listed orders for a tabulated RDP)."""
        if self.curve is not None:
            return check_real("rdp epsilon", self.curve(order), low=0.0)
        try:
            return self.epsilons[self.orders.index(order)]
        except ValueError:
            raise ValueError(f"order {order!r} is not among the tabulated orders") from None

    def _minimise(self, objective: Callable[[float], float]) -> float:
        if self.curve is None:
            return min(objective(o) for o in self.orders)
        from scipy import optimize  # imported on use: scipy.optimize is slow to import

        res = optimize.minimize_scalar(lambda t: objective(1.0 + math.exp(t)),
                                       bounds=(_MIN_LOG_ORDER, math.log(_MAX_ORDER)), method="bounded",
                                       options={"xatol": 1e-10})
        grid = [1.0 + math.exp(t) for t in np.linspace(_MIN_LOG_ORDER, math.log(_MAX_ORDER), 60)]
        return min(float(res.fun), *(objective(o) for o in grid))

    def _delta(self, eps: float) -> float:
        return self._minimise(lambda a: rdp_delta(a, self.at(a), eps))

    def epsilon(self, delta: float) -> float:
        delta = check_real("delta", delta, low=0.0, high=1.0)
        if delta == 0.0:
            return math.inf
        eps = self._minimise(lambda a: rdp_epsilon(a, self.at(a), delta))
        # the two minimisations may disagree by rounding; search up until delta(eps) <= delta
        return smallest_epsilon(self._delta_checked, delta, eps_low=eps)

    @cached_property
    def tradeoff(self) -> ProfileTradeoff:
        return ProfileTradeoff(self._delta_checked, label=f"the profile of {self}")

    def __str__(self) -> str:
        if self.curve is not None:
            return f"RDP given by {function_name(self.curve)}"
        return f"RDP at {len(self.orders)} orders"

    def __repr__(self) -> str:
        if self.curve is not None:
            return f"RDP.from_curve({function_name(self.curve)})"
        return f"RDP(orders={self.orders!r}, epsilons={self.epsilons!r})"


@dataclass(frozen=True)
class ZCDP(Guarantee):
    """rho-zero-concentrated DP [@bun2016concentrated]: RDP eps(a) = rho a for every a > 1."""

    rho: float

    def __post_init__(self) -> None:
        check_real("rho", self.rho, low=0.0, high=math.inf, high_open=True)

    def to_rdp(self) -> RDP:
        """RDP eps(a) = rho a, rounded up [@bun2016concentrated, Def. 1.1]."""
        rho = self.rho
        return RDP.from_curve(lambda a: sum_up([rho], [a]))

    def _optimal_order(self, eps: float) -> float:
        """The order minimising the conversion ``rdp_delta(a, rho a, eps)``, within the orders the
        RDP conversion searches. Its exponent g(a) = (a-1)(rho a - eps) + (a-1) log(1 - 1/a) - log a
        [@canonne2020discrete, Prop. 12] has g'(a) = rho (2a - 1) - eps + log(1 - 1/a), increasing
        (g'' = 2 rho + 1/(a^2 (a-1)) > 0), so the minimiser is the root of g', found by bisection in
        log(a - 1). Any order gives a valid delta: the root's accuracy affects tightness only."""
        lo, hi = _MIN_LOG_ORDER, math.log(_MAX_ORDER)
        for _ in range(64):
            mid = 0.5 * (lo + hi)
            a = 1.0 + math.exp(mid)
            if self.rho * (2.0 * a - 1.0) - eps + math.log1p(-1.0 / a) < 0.0:
                lo = mid
            else:
                hi = mid
        return 1.0 + math.exp(0.5 * (lo + hi))

    def _delta(self, eps: float) -> float:
        if self.rho == 0.0:
            return 0.0
        a = self._optimal_order(eps)
        return rdp_delta(a, sum_up([self.rho], [a]), eps)

    def epsilon(self, delta: float) -> float:
        delta = check_real("delta", delta, low=0.0, high=1.0)
        if self.rho == 0.0:
            return 0.0
        eps = super().epsilon(delta)  # the smallest eps whose delta (at its best order) is <= delta
        # beyond the doubles' range of eps (huge rho), the RDP conversion's finite eps, if any
        return eps if eps < math.inf else self.to_rdp().epsilon(delta)

    @cached_property
    def tradeoff(self) -> ProfileTradeoff:
        return ProfileTradeoff(self._delta_checked, label=f"the profile of {self}")

    def __str__(self) -> str:
        return f"{self.rho:g}-zCDP"


#: The JSON forms of guarantees (a ledger's file), one kind per guarantee type, registered where the
#: type is declared (``accountant.register_guarantee`` for a new one).
GUARANTEES: Codec[Guarantee] = Codec("guarantee", Guarantee, "accountant.register_guarantee")


GUARANTEES.register(PureDP)


GUARANTEES.register(ApproxDP)


GUARANTEES.register(GDP)


GUARANTEES.register(ZCDP)


GUARANTEES.refuse(CLTGDP, "the central limit theorem's mu is an approximation, not a bound (a ledger "
                          "refuses it too); store a bound, e.g. the PLD of the composition")


GUARANTEES.refuse(AsymptoticDP, "an asymptotic guarantee holds only in a limit, not for this n (a ledger "
                                "refuses it too); store a finite-n bound")


def _encode_fdp(g: FDP) -> dict[str, Any]:
    try:
        return {"curve": CURVES.to_dict(g.tradeoff_fn)}
    except TypeError as exc:
        raise TypeError(f"cannot serialise an FDP guarantee: {exc}") from None


GUARANTEES.register(FDP, encode=_encode_fdp, decode=lambda d: FDP(CURVES.from_dict(d["curve"])))


def _encode_rdp(g: RDP) -> dict[str, Any]:
    if g.curve is not None:
        raise TypeError(f"cannot serialise {g!r} to JSON: its curve is a Python function, which JSON "
                        "cannot hold; tabulate it at the orders you need, RDP(orders=orders, "
                        "epsilons=[g.at(a) for a in orders]) (a sound guarantee at those orders)")
    return {"orders": list(g.orders), "epsilons": list(g.epsilons)}


GUARANTEES.register(RDP, encode=_encode_rdp,
                    decode=lambda d: RDP(orders=tuple(d["orders"]), epsilons=tuple(d["epsilons"])))
