"""Composition on a grid fixed in advance: the pessimistic laws (one per direction) of mechanisms
composed so far, extended one batch at a time by one convolution each.

The grid is the one a ``PLD`` of ``horizon`` steps would choose at accuracy ``tol``
(``grid_width``); any pessimistic grid law gives a sound upper bound on delta(eps), so the
figures stay bounds however many steps are composed, and are as tight as a fresh PLD's while the
steps stay within the horizon.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from accountant.core.search import smallest_epsilon
from accountant.core.validation import check_count
from accountant.pld.grid.composition import compose_laws, self_compose
from accountant.pld.grid.law import TAIL_BUDGET, GridLaw
from accountant.pld.laws.base import Direction
from accountant.pld.models.base import Pair
from accountant.pld.settings import DEFAULT_TOL, check_tol, grid_width, max_coarsening


@dataclass(frozen=True, eq=False)
class IncrementalPLD:
    """The composed pessimistic laws of ``steps`` mechanism runs on the grid of a PLD of
    ``horizon`` steps at accuracy ``tol``. ``extended`` returns a new value with more mechanisms
    composed in; the self-composed law of each (pair, count, direction) is shared between the
    values built from one another."""

    horizon: int
    tol: float = DEFAULT_TOL
    laws: Mapping[Direction, GridLaw] = field(default_factory=dict)
    steps: int = 0
    _cache: dict[tuple[Pair, int, Direction], GridLaw] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        check_count("horizon", self.horizon)
        check_tol(self.tol)

    @property
    def h(self) -> float:
        """The grid width: that of a PLD of ``horizon`` steps (``grid_width``)."""
        return grid_width(self.horizon, self.tol)

    def extended(self, factors: Sequence[tuple[Pair, int]]) -> IncrementalPLD:
        """This composition with ``count`` more runs of each (pair, count) in ``factors``. A
        mechanism's tails are cut with TAIL_BUDGET / horizon each (their sum is charged as any
        PLD's while the steps stay within the horizon, and is still an upper bound beyond)."""
        h = self.h
        max_level, tail = max_coarsening(h), TAIL_BUDGET / self.horizon
        laws = dict(self.laws)
        directions: tuple[Direction, ...] = ("remove", "add")
        for direction in directions:
            new = []
            for pair, count in factors:
                key = (pair, count, direction)
                if key not in self._cache:
                    d = pair.direction(direction)
                    self._cache[key] = self_compose(d.discretize(h, True, tail), count, max_level)
                new.append(self._cache[key])
            if new:
                laws[direction] = compose_laws([laws[direction], *new] if direction in laws else new)
        return replace(self, laws=laws, steps=self.steps + sum(c for _, c in factors))

    def delta(self, eps: float) -> float:
        """A sound upper bound on delta(eps), the larger of the two directions'."""
        return max((law.delta(eps) for law in self.laws.values()), default=0.0)

    def epsilon(self, delta: float) -> float:
        """A sound upper bound on epsilon(delta) (inf below the mass at infinite loss)."""
        if delta < max((law.inf for law in self.laws.values()), default=0.0):
            return math.inf
        return smallest_epsilon(self.delta, delta)


__all__ = ["IncrementalPLD"]
