"""PyDP (Google's differential-privacy library): numerical mechanisms and algorithms.

PyDP's C++ core draws from a secure generator of its own and exposes no seed, so these adapters
are not seeded: an audit of them is not reproducible from its seed (its bounds hold all the same),
and the report says so. PyDP releases one value per call; the adapters loop in Python (about
10 us per draw for a numerical mechanism).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accountant import ApproxDP, Guarantee, PureDP

from ..protocols import Data
from .base import Adapter, check_size, require

_SEEDING = ("PyDP draws from a secure generator of its own and cannot be seeded: the audit's seed "
            "does not control its outputs")


def _declared(eps: Any, delta: Any) -> Guarantee:
    e, d = float(eps), float(delta or 0.0)
    return PureDP(e) if d == 0.0 else ApproxDP(e, d)


class PyDPMechanism(Adapter):
    """A PyDP numerical mechanism (``pydp.algorithms.numerical_mechanisms.LaplaceMechanism``,
    ``GaussianMechanism``): an output is ``mechanism.add_noise(data)``."""

    library = "pydp"
    seeded = False
    seeding = _SEEDING

    def __init__(self, mechanism: Any, /) -> None:
        if not callable(getattr(mechanism, "add_noise", None)):
            raise TypeError("mechanism must be a PyDP numerical mechanism (with add_noise), got "
                            f"{type(mechanism).__name__}")
        self.mechanism = mechanism

    def sample(self, data: Data, rng: np.random.Generator, /, size: int) -> list[Any]:
        size = check_size(size)
        add = self.mechanism.add_noise
        return [add(data) for _ in range(size)]

    def declared(self) -> Guarantee:
        """The guarantee PyDP declares: epsilon-DP (Laplace), (epsilon, delta)-DP (Gaussian)."""
        return _declared(self.mechanism.epsilon, getattr(self.mechanism, "delta", 0.0))

    def __repr__(self) -> str:
        return f"PyDPMechanism({type(self.mechanism).__name__}(epsilon={self.mechanism.epsilon!r}))"


class PyDPAlgorithm(Adapter):
    """A PyDP algorithm class and its parameters, e.g. ``PyDPAlgorithm(BoundedMean, epsilon=1.0,
    lower_bound=0, upper_bound=1, dtype="float")``: each output is ``quick_result(list(data))`` of
    a freshly built algorithm (an algorithm's budget is spent by one result)."""

    library = "pydp"
    seeded = False
    seeding = _SEEDING

    def __init__(self, algorithm: type, /, **params: Any) -> None:
        require("pydp", "python-dp")
        if not isinstance(algorithm, type):
            raise TypeError("algorithm must be a PyDP algorithm class (built afresh for each draw), "
                            f"got an instance of {type(algorithm).__name__}")
        built = algorithm(**params)  # PyDP validates the parameters here
        if not callable(getattr(built, "quick_result", None)):
            raise TypeError(f"{algorithm.__name__} has no quick_result method: not a PyDP algorithm")
        self.algorithm, self.params = algorithm, dict(params)
        self._declared = (built.epsilon, getattr(built, "delta", 0.0))

    def sample(self, data: Data, rng: np.random.Generator, /, size: int) -> list[Any]:
        size = check_size(size)
        values = list(data)
        return [self.algorithm(**self.params).quick_result(values) for _ in range(size)]

    def declared(self) -> Guarantee:
        """The guarantee PyDP declares for the algorithm: epsilon-DP, or (epsilon, delta)-DP."""
        return _declared(*self._declared)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"PyDPAlgorithm({self.algorithm.__name__}, {args})"
