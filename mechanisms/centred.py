"""The centred power sums sum_i (x_i - c)^p (p = 1, 2) about a public centre c, with sensitivities
derived symbolically from the domain like the primitives of ``queries``: the building blocks of a
variance whose noise scales with the squared reach of the data about c rather than about 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from accountant.core.types import FloatArray

from .domain import Domain, as_expr
from .queries import Query, Sensitivity, separable

__all__ = ["CentredSum"]


@dataclass(frozen=True)
class CentredSum(Query):
    """Coordinate-wise centred power sum sum_i (x_ij - c)^p for a public centre c and p in {1, 2}.

    Over the box [lower_j, upper_j], with u = lower_j - c and v = upper_j - c: add/remove moves the
    sum by (x_j - c)^p, so c_j = max(|u|, |v|)^p. Replace-one moves it by (x'_j - c)^p - (x_j - c)^p:
    for p = 1 at most v - u = upper_j - lower_j; for p = 2 at most max(u^2, v^2) - m^2 with
    m = max(0, u, -v) the distance from c to the box (0 when c lies in it). All are attained at
    box corners (or at c), hence exact.
    """

    domain: Domain
    centre: Any = 0
    power: int = 2

    def __post_init__(self) -> None:
        if isinstance(self.power, bool) or self.power not in (1, 2):
            raise ValueError(f"power must be 1 or 2, got {self.power!r}")
        object.__setattr__(self, "centre", as_expr("centre", self.centre))

    @property
    def output_dim(self) -> Any:
        return self.domain.d

    def describe(self) -> str:
        return "centred sum" if self.power == 1 else "centred sum of squares"

    def _exprs(self) -> dict[str, Any]:
        return {"centre": self.centre}

    def _derive(self) -> Sensitivity:
        dom, c, p = self.domain, self.centre, self.power
        ends = [(a - c, b - c) for a, b in zip(dom.lower, dom.upper, strict=True)]
        if dom.adjacency == "add_remove":
            cs = tuple(sympy.simplify(sympy.Max(sympy.Abs(u), sympy.Abs(v)) ** p) for u, v in ends)
            step = (f"adding or removing x moves the sum by (x - c)^{p}, "
                    f"at most max(|lower - c|, |upper - c|)^{p}")
        elif p == 1:
            cs = tuple(sympy.simplify(v - u) for u, v in ends)
            step = "replacing x by x' moves the sum by x' - x, at most upper - lower"
        else:
            cs = tuple(sympy.simplify(sympy.Max(u**2, v**2) - sympy.Max(0, u, -v) ** 2) for u, v in ends)
            step = ("replacing x by x' moves the sum by (x' - c)^2 - (x - c)^2, at most the largest minus "
                    "the least square over the box")
        l1, l2, linf = separable(cs, dom.d)
        return Sensitivity(l1, l2, linf, (step, f"per coordinate: c = {list(cs)}"))

    def evaluate(self, x: FloatArray) -> FloatArray:
        y = x - float(self.centre)
        return np.atleast_1d((y if self.power == 1 else y * y).sum(axis=0))
