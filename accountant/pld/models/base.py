"""Dominating pairs: one frozen value per privacy-loss model, registered by ``kind`` for serialisation.

A mechanism is described for the accountant by a dominating pair (P, Q) of distributions for each
order of neighbouring datasets [@zhu2022optimal]: every privacy guarantee of the mechanism is read
from the law of the privacy loss L = log(q/p) under Q. A ``Pair`` declares the model by its
parameters and builds its ``LossDirection`` objects (``accountant.pld.laws``). A new loss model is one
new module here: its pair, and its law when none of the generic ones fits.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import fields
from functools import cached_property
from typing import Any, ClassVar

from accountant.notions.tradeoff import CURVES, TradeoffFunction
from accountant.pld.laws.base import Direction, LossDirection


class Pair(ABC):
    """A mechanism's dominating pair(s): ``remove`` = (P, Q) bounds one order of neighbouring
    datasets and ``add`` the other (None when one pair bounds both: the pair is symmetric).

    Concrete pairs are frozen dataclasses: equal values are the same mechanism, which the PLD
    groups and composes by repeated squaring. A subclass that sets ``kind`` is serialisable by its
    fields (numbers and nested pairs) and registered under that name (``pair_from_spec``).
    """

    kind: ClassVar[str | None] = None
    registry: ClassVar[dict[str, type[Pair]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if kind is not None:
            Pair.registry[kind] = cls

    @abstractmethod
    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        """Build (remove, add); add is None for a symmetric pair."""

    @cached_property
    def _built(self) -> tuple[LossDirection, LossDirection | None]:
        return self.directions()

    @property
    def remove(self) -> LossDirection:
        return self._built[0]

    @property
    def add(self) -> LossDirection | None:
        return self._built[1]

    @property
    def symmetric(self) -> bool:
        return self.add is None

    def direction(self, which: Direction) -> LossDirection:
        add = self.add
        return add if which == "add" and add is not None else self.remove


def pair_to_spec(pair: Pair) -> list[Any]:
    """A JSON-ready description ``[kind, [fields...]]`` of a registered pair (a field holding a
    trade-off curve is stored as the curve's registered form, ``{"curve": ...}``)."""
    if pair.kind is None:
        raise TypeError(f"cannot serialise {pair!r}: it is built from loss laws, arrays or callables "
                        "(record the guarantee it came from, or a registered pair)")
    values = [getattr(pair, f.name) for f in fields(pair)]  # type: ignore[arg-type]
    return [pair.kind, [_field_to_spec(v) for v in values]]


def _field_to_spec(v: Any) -> Any:
    if isinstance(v, Pair):
        return pair_to_spec(v)
    if isinstance(v, TradeoffFunction):
        return {"curve": CURVES.to_dict(v)}
    return list(v) if isinstance(v, tuple) else v


def pair_from_spec(spec: list[Any]) -> Pair:
    """Inverse of ``pair_to_spec``, by the registered ``kind``."""
    if not isinstance(spec, list) or len(spec) != 2 or not isinstance(spec[1], list):
        raise ValueError(f"a pair spec is [kind, [fields...]], got {spec!r}")
    cls = Pair.registry.get(spec[0])
    if cls is None:
        raise ValueError(f"unknown pair kind {spec[0]!r}; known: {sorted(Pair.registry)}")
    # a nested pair is [kind, [fields]], a curve {"curve": ...}; any other list is a field's value
    return cls(*(pair_from_spec(v) if _is_spec(v) else
                 CURVES.from_dict(v["curve"]) if isinstance(v, dict) and "curve" in v else v
                 for v in spec[1]))


def _is_spec(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and isinstance(v[0], str)
