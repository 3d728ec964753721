"""diffprivlib [IBM's library]: mechanisms (``randomise``) and tools (functions with ``random_state``).

diffprivlib draws its noise from ``random_state``: ``None`` means ``secrets.SystemRandom`` (the
secure default), a ``numpy.random.RandomState`` means that generator. Seeded adapters pass, on every
call, a ``RandomState`` over the bit generator of the audit's ``rng`` (the audit's own stream, not
an integer seed: no two calls can collide on a 31-bit seed), so the audit is reproducible from its
seed. The sampling code is the same either way, only the uniform source differs; ``seeded=False``
audits the secure default instead.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from accountant import ApproxDP, Guarantee, PureDP

from ..protocols import Data
from .base import Adapter, check_size, require

_INSTALL = "diffprivlib 'scikit-learn<1.7' (or dpcert[thirdparty])"


def _random_state(seeded: bool, rng: np.random.Generator) -> np.random.RandomState | None:
    return np.random.RandomState(rng.bit_generator) if seeded else None


def _seeding(seeded: bool) -> str:
    if seeded:
        return "diffprivlib draws from a numpy RandomState over the audit's generator (reproducible)"
    return ("diffprivlib draws from secrets.SystemRandom (random_state=None): the seed does not "
            "control its outputs")


class DiffprivlibMechanism(Adapter):
    """A diffprivlib mechanism, given as its class and parameters, e.g.
    ``DiffprivlibMechanism(Laplace, epsilon=1.0, sensitivity=1.0)``; an output is
    ``mechanism.randomise(data)``. The mechanism is built once per call of ``sample`` with a
    ``random_state`` drawn from the audit's ``rng`` (see the module docstring)."""

    library = "diffprivlib"

    def __init__(self, mechanism: type, /, *, seeded: bool = True, **params: Any) -> None:
        require("diffprivlib", _INSTALL)
        if not isinstance(mechanism, type):
            raise TypeError("mechanism must be a diffprivlib mechanism class (the adapter builds it with "
                            "its random_state), e.g. DiffprivlibMechanism(Laplace, epsilon=1.0, "
                            f"sensitivity=1.0); got an instance of {type(mechanism).__name__}")
        if "random_state" in params:
            raise ValueError("random_state is set by the adapter on every call; do not pass it")
        if not isinstance(seeded, bool):
            raise TypeError(f"seeded must be True or False, got {seeded!r}")
        self.mechanism, self.params, self.seeded = mechanism, dict(params), seeded
        self.seeding = _seeding(seeded)
        built = mechanism(**params)  # diffprivlib validates the parameters here
        if not callable(getattr(built, "randomise", None)):
            raise TypeError(f"{mechanism.__name__} has no randomise method: not a diffprivlib mechanism")
        self._declared = (float(built.epsilon), float(getattr(built, "delta", 0.0)))

    def sample(self, data: Data, rng: np.random.Generator, /, size: int) -> list[Any]:
        size = check_size(size)
        mech = self.mechanism(**self.params, random_state=_random_state(self.seeded, rng))
        return [mech.randomise(data) for _ in range(size)]

    def declared(self) -> Guarantee:
        """The guarantee diffprivlib declares: epsilon-DP, or (epsilon, delta)-DP when delta > 0."""
        eps, delta = self._declared
        return PureDP(eps) if delta == 0.0 else ApproxDP(eps, delta)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"DiffprivlibMechanism({self.mechanism.__name__}, {args}, seeded={self.seeded})"


class DiffprivlibTool(Adapter):
    """A diffprivlib tool (``diffprivlib.tools.mean``, ``histogram``, ...) or any function taking
    ``random_state=``, with its keyword arguments, e.g. ``DiffprivlibTool(tools.mean, epsilon=1.0,
    bounds=(0, 1))``; an output is ``tool(data, **kwargs, random_state=...)``. A tool that takes an
    ``accountant`` gets a fresh ``BudgetAccountant`` on each draw, so the draws do not pile up in
    diffprivlib's default accountant."""

    library = "diffprivlib"

    def __init__(self, tool: Callable[..., Any], /, *, seeded: bool = True, **kwargs: Any) -> None:
        if not callable(tool):
            raise TypeError(f"tool must be a callable (a diffprivlib tool), got {type(tool).__name__}")
        if "random_state" in kwargs or "accountant" in kwargs:
            raise ValueError("random_state and accountant are set by the adapter on every draw; "
                             "do not pass them")
        if not isinstance(seeded, bool):
            raise TypeError(f"seeded must be True or False, got {seeded!r}")
        try:
            params = inspect.signature(tool).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        if params and "random_state" not in params and not any(
                p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            raise TypeError(f"{getattr(tool, '__name__', tool)!r} takes no random_state argument")
        self.tool, self.kwargs, self.seeded = tool, dict(kwargs), seeded
        self.seeding = _seeding(seeded)
        self._accountant: Callable[[], Any] | None = None
        if "accountant" in params:
            self._accountant = require("diffprivlib.accountant", _INSTALL).BudgetAccountant

    def sample(self, data: Data, rng: np.random.Generator, /, size: int) -> list[Any]:
        size = check_size(size)
        rs = _random_state(self.seeded, rng)
        extra: dict[str, Any] = {"random_state": rs}
        out = []
        for _ in range(size):
            if self._accountant is not None:
                extra["accountant"] = self._accountant()
            out.append(self.tool(data, **self.kwargs, **extra))
        return out

    def declared(self) -> Guarantee:
        """The guarantee the tool's ``epsilon`` (and ``delta``, if given) declare."""
        if "epsilon" not in self.kwargs:
            raise ValueError("the tool was given no epsilon: nothing declared")
        eps, delta = float(self.kwargs["epsilon"]), float(self.kwargs.get("delta", 0.0))
        return PureDP(eps) if delta == 0.0 else ApproxDP(eps, delta)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"DiffprivlibTool({getattr(self.tool, '__name__', self.tool)}, {args}, seeded={self.seeded})"
