"""Interoperability: an accountant with Opacus' interface, and dp_accounting's ``DpEvent`` trees.

``OpacusAccountant`` plugs into a training loop the way Opacus' accountants do (``step``,
``get_epsilon``, ``history``, ``state_dict``), but answers with the sound PLD bound of
[@zhu2022optimal] (and a bracket on request) instead of an RDP or PRV estimate; its ``sampler``
(``accountant.compose.samplers``) says how the loop draws its batches. No import of
torch or Opacus is needed; with Opacus installed, assign it to ``PrivacyEngine.accountant``.

``from_dp_event`` translates a dp_accounting event tree into a dpcert guarantee by the events'
class names and fields (dp_accounting need not be imported). Unsupported events raise ValueError
naming them. Each event type is translated by a function registered with ``register_dp_event``.

"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from fractions import Fraction
from typing import Any

from accountant.compose.composition import compose
from accountant.compose.samplers import (
    Sampler,
    batches_per_epoch,
    check_sampler,
    fixed_upper_pld,
    sampler_bounds,
    shuffle_gdp,
)
from accountant.compose.subsampled_rdp import subsampled_gaussian_rdp
from accountant.core.rounding import LIBM_ULP, div_down, div_up
from accountant.core.validation import check_count, check_real, check_reals
from accountant.notions.closed_forms import LaplaceTradeoff
from accountant.notions.guarantees import FDP, GDP, RDP, ZCDP, Guarantee, PureDP, rdp_epsilon
from accountant.pld.distribution import PLD, pld_from_guarantee
from accountant.pld.settings import DEFAULT_TOL, check_tol
from accountant.pld.subsampling import subsample, subsampled_gaussian

#: The Renyi orders of Opacus' RDP accountant (``get_privacy_spent``'s default ``alphas``).
OPACUS_ALPHAS: tuple[float, ...] = (*(k / 10 for k in range(11, 110)), *(float(a) for a in range(12, 64)))


class OpacusAccountant:
    """Opacus' accountant interface on dpcert's PLD accountant.

    ``history`` is a list of ``(noise_multiplier, sample_rate, steps)``, consecutive equal steps
    merged, as in Opacus. ``get_epsilon(delta)`` is a sound upper bound on the spent epsilon;
    ``get_epsilon_bracket(delta)`` gives (lower, upper).

    >>> acct = OpacusAccountant()
    >>> for _ in range(1000):
    ...     acct.step(noise_multiplier=1.0, sample_rate=0.01)
    >>> acct.history, len(acct)
    ([(1.0, 0.01, 1000)], 1000)
    >>> round(acct.get_epsilon(1e-5), 3)
    1.828

    ``OpacusAccountant(sampler="shuffle")`` (or ``"fixed"``) accounts a loop that shuffles each
    epoch (or draws fixed-size batches, replace-one adjacency): ``get_epsilon`` is that sampler's
    sound upper bound, each segment of the history composed (a shuffled segment counts its
    partial last epoch as a full one), and ``get_epsilon_bracket``'s lower end the sampler's
    certified lower bound for the first segment (a sub-run from step 0, whose epsilon the whole
    run's is at least).
    """

    def __init__(self, sampler: Sampler = "poisson") -> None:
        self.sampler: Sampler = check_sampler(sampler)
        self.history: list[tuple[float, float, int]] = []
        self._cache: tuple[tuple[tuple[tuple[float, float, int], ...], float], Guarantee] | None = None

    @classmethod
    def mechanism(cls) -> str:
        return "dpcert-pld"

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one optimisation step (Poisson rate ``sample_rate``, noise ``noise_multiplier``)."""
        s = check_real("noise_multiplier", noise_multiplier, low=0.0, low_open=True, high=1e4)
        q = check_real("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
        if self.sampler == "shuffle":
            batches_per_epoch(q)
        if self.history and self.history[-1][:2] == (s, q):
            self.history[-1] = (s, q, self.history[-1][2] + 1)
        else:
            self.history.append((s, q, 1))

    def __len__(self) -> int:
        return sum(t for _, _, t in self.history)

    def guarantee(self, tol: float | None = None, poisson: bool | None = None) -> Guarantee:
        """The composed guarantee of the steps so far (a PLD of accuracy ``tol``, default
        ``DEFAULT_TOL``, or a GDP for shuffled batches; 0-DP before the first step). ``poisson``
        (None: the accountant's sampler) must agree with ``sampler``."""
        if poisson is not None and poisson is not (self.sampler == "poisson"):
            if self.sampler == "poisson":
                raise ValueError("poisson must be True: this accountant composes Poisson-subsampled "
                                 "steps (for fixed-size or shuffled batches, "
                                 "OpacusAccountant(sampler='fixed' or 'shuffle'))")
            raise ValueError(f"poisson must be False or None: this accountant's sampler is "
                             f"{self.sampler!r}")
        tol = DEFAULT_TOL if tol is None else check_tol(tol)
        if not self.history:
            return PureDP(0.0)
        key = (tuple(self.history), tol)
        if self._cache is None or self._cache[0] != key:
            if self.sampler == "shuffle":
                self._cache = (key, compose([shuffle_gdp(q, s, t) for s, q, t in key[0]]))
            else:
                parts = [(subsampled_gaussian(s, q, tol=tol).self_compose(t) if self.sampler == "poisson"
                          else fixed_upper_pld(q, s, t, tol)) for s, q, t in key[0]]
                self._cache = (key, parts[0].compose(*parts[1:]) if len(parts) > 1 else parts[0])
        return self._cache[1]

    def get_epsilon(self, delta: float, *, eps_error: float | None = None,
                    poisson: bool | None = None) -> float:
        """Sound upper bound on the epsilon spent so far at ``delta``.

        The keywords of Opacus' accountants that mean something here are taken: ``eps_error`` (its
        PRV accountant's accuracy) is the PLD's ``tol``, the accuracy its grid is set by (see
        ``PLD``; the bound is sound at any); ``poisson`` (its GDP accountant's) must agree with the
        accountant's ``sampler`` (None: it does). Any other keyword is refused (TypeError), not
        ignored."""
        return self.guarantee(eps_error, poisson).epsilon(delta)

    def get_privacy_spent(self, delta: float, alphas: Sequence[float] | None = None) -> tuple[float, float]:
        """``(eps, best_alpha)`` as Opacus' RDP accountant returns them: ``eps`` is the sound PLD
        upper bound (``get_epsilon``, tighter than the RDP bound at every order) and
        ``best_alpha`` the Renyi order at which the RDP bound of the same steps
        (``subsampled_gaussian_rdp``, converted by [@canonne2020discrete, Prop. 12]) is least,
        over ``alphas`` (default: Opacus' orders). Before the first step: ``(0.0, nan)``."""
        orders = OPACUS_ALPHAS if alphas is None else check_reals("alphas", alphas, low=1.0,
                                                                  low_open=True)
        if not orders:
            raise ValueError("alphas must hold at least one order > 1")
        eps = self.get_epsilon(delta)
        if not self.history:
            return eps, math.nan
        total = [0.0] * len(orders)
        for s, q, t in self.history:
            rdp = subsampled_gaussian_rdp(q, s, t, orders=orders)
            total = [a + b for a, b in zip(total, rdp.epsilons, strict=True)]
        converted = [rdp_epsilon(a, r, delta) for a, r in zip(orders, total, strict=True)]
        return eps, float(orders[min(range(len(orders)), key=converted.__getitem__)])

    def get_epsilon_bracket(self, delta: float) -> tuple[float, float]:
        """(lower, upper) bounds on the exact epsilon spent so far (class docstring)."""
        g = self.guarantee()
        if not self.history:
            return (0.0, 0.0)
        if self.sampler == "poisson" and isinstance(g, PLD):
            return g.epsilon_bracket(delta)
        s, q, t = self.history[0]
        return sampler_bounds(self.sampler, q, s, t).epsilon_lower(delta), g.epsilon(delta)

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Any], None]:
        """A hook for Opacus' ``DPOptimizer.attach_step_hook``: one step per optimiser step."""
        def hook_fn(optim: Any) -> None:
            self.step(noise_multiplier=optim.noise_multiplier,
                      sample_rate=sample_rate * optim.accumulated_iterations)
        return hook_fn

    def state_dict(self, destination: MutableMapping[str, Any] | None = None) -> MutableMapping[str, Any]:
        out: MutableMapping[str, Any] = OrderedDict() if destination is None else destination
        out["history"] = list(self.history)
        out["mechanism"] = self.mechanism()
        if self.sampler != "poisson":  # a Poisson accountant's dict is Opacus' own shape
            out["sampler"] = self.sampler
        return out

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore ``history``; ValueError if the dict is empty, lacks keys or is another
        accountant's."""
        if not state_dict:
            raise ValueError("state_dict is empty or None: nothing to load")
        for key in ("history", "mechanism"):
            if key not in state_dict:
                raise ValueError(f"state_dict has no key {key!r}")
        if state_dict["mechanism"] != self.mechanism():
            raise ValueError(f"state_dict of mechanism {state_dict['mechanism']!r} cannot be loaded "
                             f"into an accountant of mechanism {self.mechanism()!r}")
        if state_dict.get("sampler", "poisson") != self.sampler:
            raise ValueError(f"state_dict of sampler {state_dict.get('sampler', 'poisson')!r} cannot "
                             f"be loaded into an accountant of sampler {self.sampler!r}")
        history = []
        for i, item in enumerate(state_dict["history"]):
            try:
                s, q, t = item
            except (TypeError, ValueError):
                raise ValueError(f"history[{i}] must be (noise_multiplier, sample_rate, steps), "
                                 f"got {item!r}") from None
            history.append((check_real("noise_multiplier", s, low=0.0, low_open=True, high=1e4),
                            check_real("sample_rate", q, low=0.0, high=1.0, low_open=True),
                            check_count("steps", t)))
        self.history = history


_TRANSLATORS: dict[str, Callable[[Any], Guarantee]] = {}


def register_dp_event(class_name: str) -> Callable[[Callable[[Any], Guarantee]], Callable[[Any], Guarantee]]:
    """Register the translation of dp_accounting events of this class name."""
    def deco(fn: Callable[[Any], Guarantee]) -> Callable[[Any], Guarantee]:
        _TRANSLATORS[class_name] = fn
        return fn
    return deco


def from_dp_event(event: Any) -> Guarantee:
    """The dpcert guarantee of a dp_accounting ``DpEvent`` tree (add/remove adjacency, as in
    dp_accounting's PLD accountant; sampling without replacement: replace-one, see ``subsample``).

    >>> from dp_accounting import GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent
    >>> event = SelfComposedDpEvent(PoissonSampledDpEvent(0.01, GaussianDpEvent(1.0)), 1000)
    >>> round(from_dp_event(event).epsilon(1e-5), 3)
    1.828
    """
    name = type(event).__name__
    if name not in _TRANSLATORS:
        if not any(c.__name__ == "DpEvent" for c in type(event).__mro__):
            raise TypeError(f"expected a dp_accounting DpEvent, got {name}")
        raise ValueError(f"{name} is not supported by dpcert's translator (supported: "
                         f"{', '.join(sorted(_TRANSLATORS))})")
    return _TRANSLATORS[name](event)


def _noise(name: str, value: float) -> float:
    if value == 0:
        raise ValueError(f"{name} = 0 releases the data without noise: no DP guarantee")
    return check_real(name, value, low=0.0, low_open=True, high=math.inf, high_open=True)


@register_dp_event("NoOpDpEvent")
def _(event: Any) -> Guarantee:
    return PureDP(0.0)


@register_dp_event("NonPrivateDpEvent")
def _(event: Any) -> Guarantee:
    raise ValueError("NonPrivateDpEvent: a non-private release has no DP guarantee (epsilon = inf)")


@register_dp_event("UnsupportedDpEvent")
def _(event: Any) -> Guarantee:
    raise ValueError("UnsupportedDpEvent: the event tree contains a release no accountant supports")


@register_dp_event("GaussianDpEvent")
def _(event: Any) -> Guarantee:
    return GDP(div_up(1.0, _noise("GaussianDpEvent.noise_multiplier", event.noise_multiplier)))


@register_dp_event("LaplaceDpEvent")
def _(event: Any) -> Guarantee:
    return FDP(LaplaceTradeoff(div_up(1.0, _noise("LaplaceDpEvent.noise_multiplier",
                                                    event.noise_multiplier))))


@register_dp_event("DiscreteLaplaceDpEvent")
def _(event: Any) -> Guarantee:
    # P(x) proportional to e^{-a |x|}: scale t = 1/a in [@canonne2020discrete]'s notation
    a = _noise("DiscreteLaplaceDpEvent.noise_parameter", event.noise_parameter)
    return PLD.discrete_laplace(div_down(1.0, a),
                                check_count("DiscreteLaplaceDpEvent.sensitivity", event.sensitivity))


@register_dp_event("RandomizedResponseDpEvent")
def _(event: Any) -> Guarantee:
    # keep the input w.p. 1 - p, else uniform on k buckets: e^eps = 1 + k (1 - p)/p
    p = check_real("RandomizedResponseDpEvent.noise_parameter", event.noise_parameter, low=0.0, high=1.0)
    k = check_count("RandomizedResponseDpEvent.num_buckets", event.num_buckets, low=2)
    if p == 0.0:
        raise ValueError("RandomizedResponseDpEvent with noise_parameter 0 outputs its input: no DP")
    if p == 1.0:
        return PureDP(0.0)
    ratio = 1 + k * (1 - Fraction(p)) / Fraction(p)  # exact; eps rounded up (a looser RR is dominated)
    if ratio < 10**300:
        eps = math.nextafter(math.log(ratio), math.inf) + LIBM_ULP * math.ulp(math.log(ratio))
    else:  # a subnormal p: the ratio overflows a float, so log of the numerator minus log of the
        # denominator (integers); each log errs by LIBM_ULP ulp, the difference by half an ulp
        log_n, log_d = math.log(ratio.numerator), math.log(ratio.denominator)
        eps = math.nextafter(log_n - log_d + (LIBM_ULP + 1) * (math.ulp(log_n) + math.ulp(log_d)),
                             math.inf)
    return PLD.randomized_response(eps, k)


@register_dp_event("ZCDpEvent")
def _(event: Any) -> Guarantee:
    rho = check_real("ZCDpEvent.rho", event.rho, low=0.0, high=math.inf, high_open=True)
    xi = check_real("ZCDpEvent.xi", event.xi, low=0.0, high=math.inf, high_open=True)
    if xi == 0.0:
        return ZCDP(rho)
    orders = tuple(float(a) for a in (*range(2, 64), 80, 96, 128, 256, 512))
    return RDP(orders, tuple(math.nextafter(xi + rho * a, math.inf) for a in orders))


@register_dp_event("SingleEpochTreeAggregationDpEvent")
def _(event: Any) -> Guarantee:
    # a record lies in one leaf of one tree: ceil(log2 T) + 1 noisy nodes of the deepest tree
    steps = event.step_counts if isinstance(event.step_counts, list) else [event.step_counts]
    # an empty list (dp_accounting accepts it) is no tree at all: nothing released
    deepest = max((check_count("step_counts", t, low=0) for t in steps), default=0)
    if deepest == 0:
        return PureDP(0.0)
    sigma = _noise("SingleEpochTreeAggregationDpEvent.noise_multiplier", event.noise_multiplier)
    return GDP(math.nextafter(math.sqrt((deepest - 1).bit_length() + 1) / sigma, math.inf))


@register_dp_event("SelfComposedDpEvent")
def _(event: Any) -> Guarantee:
    k = check_count("SelfComposedDpEvent.count", event.count, low=0)
    g = from_dp_event(event.event)
    if k == 0 or g == PureDP(0.0):
        return PureDP(0.0)
    if isinstance(g, (GDP, ZCDP)):
        return compose([g] * k)
    return pld_from_guarantee(g).self_compose(k)


@register_dp_event("ComposedDpEvent")
def _(event: Any) -> Guarantee:
    gs = [from_dp_event(e) for e in event.events]
    gs = [g for g in gs if g != PureDP(0.0)]
    if not gs:
        return PureDP(0.0)
    if len(gs) == 1:
        return gs[0]
    if all(isinstance(g, type(gs[0])) and type(g) in (GDP, ZCDP) for g in gs):
        return compose(gs)
    return compose(gs, method="pld")


@register_dp_event("PoissonSampledDpEvent")
def _(event: Any) -> Guarantee:
    q = check_real("PoissonSampledDpEvent.sampling_probability", event.sampling_probability,
                   low=0.0, high=1.0)
    g = from_dp_event(event.event)
    return PureDP(0.0) if q == 0.0 or g == PureDP(0.0) else subsample(g, q, "poisson")


@register_dp_event("SampledWithoutReplacementDpEvent")
def _(event: Any) -> Guarantee:
    n = check_count("SampledWithoutReplacementDpEvent.source_dataset_size", event.source_dataset_size)
    m = check_count("SampledWithoutReplacementDpEvent.sample_size", event.sample_size, low=0, high=n)
    g = from_dp_event(event.event)
    if m == 0 or g == PureDP(0.0):
        return PureDP(0.0)
    rate = m / n
    if Fraction(rate) < Fraction(m, n):  # the float rate rounded down: round it up
        rate = math.nextafter(rate, math.inf)
    return subsample(g, min(rate, 1.0), "without_replacement")


__all__ = ["OpacusAccountant", "from_dp_event", "register_dp_event"]
