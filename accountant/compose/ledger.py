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
from dataclasses import dataclass
from typing import Any

from accountant.compose.composition import compose
from accountant.compose.serialisation import guarantee_from_dict, guarantee_to_dict
from accountant.core.rounding import hypot_up, sum_up
from accountant.core.validation import check_count, check_real
from accountant.notions.conversions import gdp_to_zcdp, pure_dp_to_zcdp
from accountant.notions.guarantees import FDP, GDP, ZCDP, ApproxDP, Approximate, Guarantee, PureDP
from accountant.notions.ordering import can_be_target, implication
from accountant.pld.distribution import PLD, pld_from_guarantee
from accountant.pld.incremental import IncrementalPLD


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
        if isinstance(self.guarantee, Approximate):
            raise ValueError(f"guarantee {self.guarantee} is an approximation, not a bound; a ledger "
                             f"records bounds only: {self.guarantee.instead}")
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
        self._running: _Running | None = None
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
        running = _Running.extend(self._running, candidate)
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
            ledger._running = _Running.extend(ledger._running, releases[:i + 1])
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


@dataclass(frozen=True, eq=False)
class _Running:
    """The first ``done`` releases composed incrementally (``IncrementalPLD``)."""

    laws: IncrementalPLD
    done: int

    @staticmethod
    def extend(current: _Running | None, releases: tuple[Release, ...]) -> _Running | None:
        """The composition of ``releases`` (the first ``current.done`` of which are in
        ``current``), or None when no release needs the numeric accountant. A composition whose
        steps pass its horizon is rebuilt on the grid of a horizon 16x the steps."""
        if not any(_numeric(r.guarantee) for r in releases):
            return None
        per_release = [pld_from_guarantee(r.guarantee).factors for r in releases]
        factors = [(pair, c * r.count) for r, fs in zip(releases, per_release, strict=True)
                   for pair, c in fs]
        steps = sum(c for _, c in factors)
        if current is None or steps > current.laws.horizon:
            laws, new = IncrementalPLD(max(1000, 16 * steps)), factors
        else:
            done = sum(len(fs) for fs in per_release[:current.done])
            laws, new = current.laws, factors[done:]
        return _Running(laws.extended(new), len(releases))

    def epsilon(self, delta: float) -> float:
        return self.laws.epsilon(delta)

    def fits(self, budget: Guarantee) -> bool:
        """Shown (soundly) to fit an (eps, delta) or pure budget; False means "not shown"."""
        if isinstance(budget, ApproxDP):
            return self.laws.delta(budget.eps) <= budget.delta_
        if isinstance(budget, PureDP):
            return self.laws.delta(budget.eps) <= 0.0
        return False
