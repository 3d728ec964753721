"""OpenDP measurements: ``measurement(data)`` is one output.

OpenDP samples its noise from the operating system's cryptographic generator and offers no way to
seed it, so the adapter is not seeded: an audit of it is not reproducible from its seed (its
bounds hold all the same, the draws being independent), and the report says so. Many draws per
call: the measurement is composed with itself (``dp.c.make_composition`` of ``batch`` copies,
one invocation releasing ``batch`` independent outputs, about twice as fast as one call per draw);
a measurement OpenDP cannot compose is called once per draw.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from accountant import Guarantee

from ..protocols import Data
from .base import Adapter, check_size, require

#: Outputs per invocation of the self-composed measurement.
BATCH = 1024


class OpenDPMeasurement(Adapter):
    """An OpenDP ``Measurement`` (built by ``dp.m.make_laplace`` and the like, chained or not).

    ``declared(d_in)`` is ``accountant.from_opendp(measurement, d_in)``: the guarantee the
    measurement's privacy map declares for inputs at distance ``d_in``."""

    library = "opendp"
    seeded = False
    seeding = ("OpenDP draws from the operating system's random source and cannot be seeded: the "
               "audit's seed does not control its outputs")

    def __init__(self, measurement: Any, /, *, batch: int = BATCH) -> None:
        if not (callable(measurement) and hasattr(measurement, "output_measure")
                and callable(getattr(measurement, "map", None))):
            raise TypeError("measurement must be an OpenDP Measurement, got "
                            f"{type(measurement).__name__}")
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
            raise ValueError(f"batch must be an integer >= 1, got {batch!r}")
        self.measurement, self.batch = measurement, int(batch)
        self._composed: dict[int, Callable[[Data], list[Any]] | None] = {}

    def sample(self, data: Data, rng: np.random.Generator, /, size: int) -> list[Any]:
        size = check_size(size)
        out: list[Any] = []
        while len(out) < size:
            k = min(self.batch, size - len(out))
            composed = self._compose(k)
            if composed is None:
                out.extend(self.measurement(data) for _ in range(k))
            else:
                out.extend(composed(data))
        return out

    def _compose(self, k: int) -> Callable[[Data], list[Any]] | None:
        if k not in self._composed:
            self._composed[k] = None
            if k > 1:
                dp = require("opendp.prelude", "opendp")
                try:
                    self._composed[k] = dp.c.make_composition([self.measurement] * k)
                except Exception:  # a measure OpenDP cannot compose, or "contrib" not enabled
                    self._composed[k] = None
        return self._composed[k]

    def declared(self, d_in: Any) -> Guarantee:
        """The guarantee OpenDP's privacy map declares at ``d_in`` (``accountant.from_opendp``)."""
        from accountant import from_opendp

        return from_opendp(self.measurement, d_in)

    def __repr__(self) -> str:
        return f"OpenDPMeasurement({self.measurement!r}, batch={self.batch})"
