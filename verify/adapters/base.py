"""The shape every adapter shares: a vectorised ``sample``, one draw by ``__call__``, a seeding flag."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ..protocols import Data, Output


class Adapter(ABC):
    """A third-party mechanism as ``verify.audit`` draws from it.

    ``seeded``: True when the outputs are a function of the ``rng`` passed in (an audit is then
    reproducible from its seed); ``seeding``: one sentence saying how the library is seeded, or why
    it cannot be. ``library``: the library's name."""

    library: str = ""
    seeded: bool = True
    seeding: str = ""

    @abstractmethod
    def sample(self, data: Data, rng: np.random.Generator, /, size: int) -> list[Any]:
        """``size`` independent outputs on ``data``, as a list."""

    def __call__(self, data: Data, rng: np.random.Generator, /) -> Output:
        """One output on ``data``."""
        return self.sample(data, rng, 1)[0]


def check_size(size: int) -> int:
    """``size`` as an int >= 0 (TypeError/ValueError naming it otherwise)."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"size must be an integer, got {type(size).__name__} {size!r}")
    if size < 0:
        raise ValueError(f"size must be >= 0, got {size}")
    return int(size)


def require(module: str, extra: str) -> Any:
    """Import a third-party library or raise ImportError saying how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"this adapter needs {module} ({exc}); install it with "
                          f"pip install {extra}") from exc
