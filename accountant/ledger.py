"""A privacy ledger: record releases, report the spent budget, refuse what would exceed it.

As a privacy filter [@rogers2016privacy] the check is
made on the *composed* guarantee of everything recorded plus the candidate release, with
``compose`` (closed forms where they exist, the sound PLD bound otherwise): a release is accepted
only if the sound upper bound stays within the budget, and a refused release leaves the ledger
unchanged.

Releases that need the numeric accountant (PLDs, f-DP curves, DP-SGD epochs) are also composed
*incrementally* into pessimistic grid laws (one per direction) on a grid fixed for a horizon of
steps: recording an epoch is one convolution, not a recomposition of everything so far. Those laws
give sound upper bounds (any pessimistic grid does); a release they cannot show to fit is checked
again on the freshly composed PLD, so the incremental path never refuses what the exact one
accepts. When the steps pass the horizon the laws are rebuilt on a finer grid (horizon x 16).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from ._numeric import check_count, check_real, hypot_up, smallest_epsilon, sum_up
from ._pldgrid import TAIL_BUDGET, GridLaw, compose_laws, self_compose
from .composition import compose
from .conversions import gdp_to_zcdp, pure_dp_to_zcdp
from .guarantees import CLTGDP, FDP, GDP, ZCDP, ApproxDP, Guarantee, PureDP
from .ordering import can_be_target, implication
from .pairs import Pair
from .pld import (
    DEFAULT_TOL,
    GRID_CONST,
    MAX_H,
    MIN_H,
    PLD,
    pld_from_guarantee,
)
from .serialisation import guarantee_from_dict, guarantee_to_dict


class BudgetExceededError(ValueError):
    """A release would take the composed guarantee past the ledger's budget."""


@dataclass(frozen=True)
class Release:
    """One recorded release: a guarantee applied ``count`` times, with a label."""

    guarantee: Guarantee
    count: int = 1
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.guarantee, Guarantee):
            raise TypeError(f"guarantee must be an accountant guarantee, got "
                            f"{type(self.guarantee).__name__}")
        if isinstance(self.guarantee, CLTGDP):
            raise ValueError(f"guarantee {self.guarantee} is an approximation, not a bound; "
                             "record its .rigorous() guarantee")
        object.__setattr__(self, "count", check_count("count", self.count))
        if not isinstance(self.label, str):
            raise TypeError("label must be a string")


class Ledger:
    """Releases against an optional budget (PureDP, ApproxDP, GDP or ZCDP).

    >>> from accountant import GDP, ApproxDP, Ledger
    >>> ledger = Ledger(budget=ApproxDP(1.0, 1e-6))
    >>> _ = ledger.record(GDP(0.1), count=4, label="counts")
    >>> round(ledger.spent_gdp_mu(), 6)
    0.2
    """

    def __init__(self, budget: Guarantee | None = None,
                 releases: tuple[Release, ...] = ()) -> None:
        if budget is not None and not (isinstance(budget, Guarantee)
                                       and can_be_target(type(budget))):
            raise TypeError("budget must be a guarantee with a registered ordering (PureDP, "
                            f"ApproxDP, GDP, ZCDP, FDP, ...), got {type(budget).__name__}")
        self._budget = budget
        self._releases: tuple[Release, ...] = ()
        self._running: _RunningLaws | None = None
        for r in releases:
            self.record(r.guarantee, r.count, r.label)

    @property
    def budget(self) -> Guarantee | None:
        return self._budget

    @property
    def releases(self) -> tuple[Release, ...]:
        return self._releases

    # ----- recording --------------------------------------------------------------------------
    def record(self, guarantee: Guarantee, count: int = 1, label: str = "") -> Release:
        """Record a release; raise ``BudgetExceededError`` (ledger unchanged) if over budget."""
        release = Release(guarantee, count, label)
        candidate = (*self._releases, release)
        running = _RunningLaws.extend(self._running, candidate)
        if self._budget is not None and not (running is not None and running.fits(self._budget)):
            spent = implication(_compose(candidate), self._budget)
            if not spent.holds:
                raise BudgetExceededError(
                    f"release {label or type(guarantee).__name__!r} (x{count}) would exceed the "
                    f"budget {self._budget}: spent would be {spent.detail}")
        self._releases, self._running = candidate, running
        return release

    # ----- reporting --------------------------------------------------------------------------
    def spent(self) -> Guarantee | None:
        """The composed guarantee of all releases (None when nothing was recorded)."""
        return _compose(self._releases) if self._releases else None

    def spent_epsilon(self, delta: float) -> float:
        """Sound upper bound on the spent epsilon at delta."""
        delta = check_real("delta", delta, low=0.0, high=1.0)
        if self._running is not None:  # incremental, as accurate as a fresh PLD on its horizon
            return self._running.epsilon(delta)
        g = self.spent()
        return 0.0 if g is None else g.epsilon(delta)

    def spent_gdp_mu(self) -> float | None:
        """mu when every release is GDP (mu's add in quadrature), else None."""
        gs = [r.guarantee for r in self._releases]
        if not gs or not all(type(g) is GDP for g in gs):
            return None
        return hypot_up([r.guarantee.mu for r in self._releases if isinstance(r.guarantee, GDP)],
                        [r.count for r in self._releases])

    def spent_zcdp_rho(self) -> float | None:
        """rho when every release is zCDP, GDP (rho = mu^2/2) or pure DP (rho = eps^2/2),
        rounded up."""
        total = []
        for r in self._releases:
            g = r.guarantee
            if type(g) is ZCDP:
                total.append(g.rho)
            elif type(g) is GDP:
                total.append(gdp_to_zcdp(g.mu).rho)
            elif type(g) is PureDP:
                total.append(pure_dp_to_zcdp(g.eps).rho)
            else:
                return None
        return sum_up(total, [r.count for r in self._releases]) if total else None

    def spent_pure_eps(self) -> float | None:
        """Total eps when every release is pure DP (basic composition is exact for the sum)."""
        if not self._releases or not all(type(r.guarantee) is PureDP for r in self._releases):
            return None
        return sum_up([r.guarantee.eps for r in self._releases if isinstance(r.guarantee, PureDP)],
                      [r.count for r in self._releases])

    def report(self, delta: float = 1e-6) -> dict[str, Any]:
        """The spent budget in every notion that applies, plus the sound (eps, delta)."""
        g = self.spent()
        out: dict[str, Any] = {"releases": len(self._releases),
                               "steps": sum(r.count for r in self._releases), "delta": delta}
        if g is None:
            out["epsilon"] = 0.0
            return out
        out["epsilon"] = g.epsilon(delta)
        if isinstance(g, PLD):
            out["epsilon_bracket"] = g.epsilon_bracket(delta)
        for key, val in (("gdp_mu", self.spent_gdp_mu()), ("zcdp_rho", self.spent_zcdp_rho()),
                         ("pure_eps", self.spent_pure_eps())):
            if val is not None:
                out[key] = val
        if self._budget is not None:
            out["budget"] = str(self._budget)
        return out

    # ----- JSON --------------------------------------------------------------------------------
    def to_json(self) -> str:
        """Serialise budget and releases (guarantees by their parameters)."""
        return json.dumps({
            "budget": None if self._budget is None else guarantee_to_dict(self._budget),
            "releases": [{"guarantee": guarantee_to_dict(r.guarantee), "count": r.count,
                          "label": r.label} for r in self._releases]})

    @classmethod
    def from_json(cls, text: str) -> Ledger:
        """Inverse of ``to_json``; refuses non-integer counts and a ledger over its budget."""
        data = json.loads(text)
        budget = None if data.get("budget") is None else guarantee_from_dict(data["budget"])
        ledger = cls(budget)
        releases = tuple(Release(guarantee_from_dict(r["guarantee"]), r["count"], r["label"])
                         for r in data["releases"])
        if budget is not None and releases:
            spent = implication(_compose(releases), budget)
            if not spent.holds:
                raise BudgetExceededError(f"the ledger is already over its budget {budget}: "
                                          f"spent is {spent.detail}")
        ledger._releases = releases
        for i in range(len(releases)):  # the grids the ledger had: the same figures after a round trip
            ledger._running = _RunningLaws.extend(ledger._running, releases[:i + 1])
        return ledger

    def __len__(self) -> int:
        return len(self._releases)

    def __repr__(self) -> str:
        return f"Ledger(budget={self._budget}, {len(self._releases)} releases)"


#: Most guarantees ``_compose`` expands into a list (a PLD is self-composed instead).
MAX_EXPANDED = 10**7


def _compose(releases: tuple[Release, ...]) -> Guarantee:
    if all(type(r.guarantee) is GDP for r in releases):  # closed form, any counts
        return GDP(hypot_up([r.guarantee.mu for r in releases if isinstance(r.guarantee, GDP)],
                            [r.count for r in releases]))
    if sum(r.count for r in releases if not isinstance(r.guarantee, PLD)) > MAX_EXPANDED:
        raise ValueError(f"more than {MAX_EXPANDED} recorded steps to compose one by one; record "
                         "repeated steps as a PLD (it is self-composed by squaring)")
    gs: list[Guarantee] = []
    for r in releases:
        g = r.guarantee
        if isinstance(g, PLD) and r.count > 1:
            gs.append(g.self_compose(r.count))
        else:
            gs.extend([g] * r.count)
    return compose(gs)


def _numeric(g: Guarantee) -> bool:
    """Whether a release is composed by the numeric accountant (no closed form)."""
    return isinstance(g, (PLD, FDP))


class _RunningLaws:
    """Pessimistic grid laws (remove, add) of every recorded release, on a grid fixed for a
    horizon of steps; ``extend`` convolves the new releases in (see the module docstring)."""

    def __init__(self, horizon: int) -> None:
        self.horizon = horizon
        h = min(max(math.sqrt(DEFAULT_TOL / (GRID_CONST * horizon)), MIN_H), MAX_H)
        self.h, self.max_level = h, max(0, int(math.log2(MAX_H / h)))
        self.tail = TAIL_BUDGET / horizon
        self.laws: dict[str, GridLaw] = {}
        #: the self-composed law of each (pair, count, direction) met on this grid
        self.cache: dict[tuple[Pair, int, str], GridLaw] = {}
        self.steps = 0
        self.done = 0  # releases composed in

    @staticmethod
    def extend(current: _RunningLaws | None, releases: tuple[Release, ...]) -> _RunningLaws | None:
        """The laws of ``releases`` (the first ``current.done`` of which are in ``current``), or
        None when no release needs the numeric accountant. ``current`` is not modified."""
        if not any(_numeric(r.guarantee) for r in releases):
            return None
        factors = [(pair, c * r.count) for r in releases
                   for pair, c in pld_from_guarantee(r.guarantee).factors]
        steps = sum(c for _, c in factors)
        if current is None or steps > current.horizon:  # (re)build on a grid for 16x the steps
            out, new = _RunningLaws(max(1000, 16 * steps)), factors
        else:
            done = sum(len(pld_from_guarantee(r.guarantee).factors) for r in releases[:current.done])
            out, new = current._copy(), factors[done:]
        for direction in ("remove", "add"):
            laws = [out._law(pair, c, direction) for pair, c in new]
            if direction in out.laws:
                laws.insert(0, out.laws[direction])
            out.laws[direction] = compose_laws(laws)
        out.steps, out.done = steps, len(releases)
        return out

    def _law(self, pair: Pair, count: int, direction: str) -> GridLaw:
        key = (pair, count, direction)
        if key not in self.cache:
            d = pair.direction("add" if direction == "add" else "remove")
            self.cache[key] = self_compose(d.discretize(self.h, True, self.tail), count,
                                           self.max_level)
        return self.cache[key]

    def _copy(self) -> _RunningLaws:
        out = _RunningLaws.__new__(_RunningLaws)
        out.__dict__.update(self.__dict__, laws=dict(self.laws))
        return out

    def delta(self, eps: float) -> float:
        return max(law.delta(eps) for law in self.laws.values())

    def epsilon(self, delta: float) -> float:
        if delta < max(law.inf for law in self.laws.values()):
            return math.inf
        return smallest_epsilon(self.delta, delta)

    def fits(self, budget: Guarantee) -> bool:
        """Shown (soundly) to fit an (eps, delta) or pure budget; False means "not shown"."""
        if isinstance(budget, ApproxDP):
            return self.delta(budget.eps) <= budget.delta_
        if isinstance(budget, PureDP):
            return self.delta(budget.eps) <= 0.0
        return False
