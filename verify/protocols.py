"""What verify accepts: the shapes of mechanisms, callables and neighbour searches, as ``Protocol``s.

A dataset and an output are whatever the audited code takes and returns (an array, a list, a
number, a tuple, ...), so they stay open (``Data``, ``Output``); the objects around them are typed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeAlias, runtime_checkable

import numpy as np

from accountant import Guarantee
from accountant.core.types import FloatArray

#: A mechanism's input: whatever the audited code accepts (array, list, number, ...).
Data: TypeAlias = Any
#: One output, or outputs stacked on axis 0, as the audited code returns them.
Output: TypeAlias = Any
#: Two neighbouring inputs (not the accountant's dominating ``Pair``).
NeighbouringPair: TypeAlias = tuple[Data, Data]


class SampledMechanism(Protocol):
    """A dpcert mechanism as the audit draws from it: ``size`` outputs on ``data``."""

    def sample(self, data: Data, rng: np.random.Generator, /, size: int) -> Output: ...


class LossMechanism(SampledMechanism, Protocol):
    """A sampled mechanism that also knows its privacy loss log(p(y | data2) / p(y | data)) (used
    by the audit's exact likelihood-ratio score when present)."""

    def privacy_loss(self, y: Output, data: Data, data2: Data, /) -> FloatArray: ...


#: A plain callable ``(data, rng) -> output`` (third-party code included).
PlainMechanism: TypeAlias = Callable[[Data, np.random.Generator], Output]
#: A vectorised callable ``(data, rng, size) -> outputs stacked on axis 0`` (``vectorised=True``).
VectorisedMechanism: TypeAlias = Callable[[Data, np.random.Generator, int], Output]
#: Anything ``verify.audit`` can draw from.
Auditable: TypeAlias = SampledMechanism | PlainMechanism | VectorisedMechanism


@runtime_checkable
class NeighbourSearch(Protocol):
    """A search for neighbouring inputs (``verify.neighbours``): the pairs to audit."""

    def pairs(self, rng: np.random.Generator, /) -> Sequence[NeighbouringPair]: ...


@runtime_checkable
class AdaptiveNeighbourSearch(NeighbourSearch, Protocol):
    """A search that adapts to the mechanism (``verify.neighbours.AdaptiveSearch``): given
    ``estimate(pairs) -> estimated losses`` (computed by the audit on exploration draws of their
    own), it returns the pairs to audit."""

    def search(self, estimate: Callable[[Sequence[Any]], Sequence[float]],
               rng: np.random.Generator, /) -> Sequence[NeighbouringPair]: ...


#: Neighbouring inputs for an audit: pairs, or a search that proposes them.
Neighbours: TypeAlias = NeighbourSearch | Sequence[NeighbouringPair]


class DeclaredMechanism(Protocol):
    """A mechanism that declares its guarantee (what ``verify.certify`` reads)."""

    def guarantee(self) -> Guarantee: ...
