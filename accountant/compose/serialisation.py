"""Guarantees to and from JSON, by registration.

Each guarantee type is registered once, where it is declared, under a ``kind`` name with an encoder
to a dict of plain values and a decoder back (``accountant.notions.guarantees.GUARANTEES``); an
f-DP guarantee is stored with its curve, whose type is registered the same way
(``accountant.notions.tradeoff.CURVES``). Types are matched exactly (a ``CLTGDP`` is not a ``GDP``
here, and an approximation has no registered form). A frozen-dataclass guarantee whose fields are
numbers needs only ``register_guarantee(MyGuarantee)``; the ledger then stores it without being
edited. A guarantee or curve that holds a Python function cannot be stored: the ``TypeError`` says
so and what to store instead.

"""

from __future__ import annotations

import importlib
from typing import Any, TypeVar

from accountant.core.codec import Decoder, Encoder
from accountant.notions.guarantees import GUARANTEES, Guarantee
from accountant.notions.tradeoff import CURVES, TradeoffFunction

G = TypeVar("G", bound=Guarantee)

F = TypeVar("F", bound=TradeoffFunction)


def register_guarantee(cls: type[G], kind: str | None = None, encode: Encoder | None = None,
                       decode: Decoder | None = None) -> type[G]:
    """Register a guarantee type for JSON under ``kind`` (default: the class name). Without
    ``encode``/``decode`` the type must be a dataclass whose fields are JSON values, rebuilt by
    keyword (a field's ``metadata["name"]`` is its keyword when they differ)."""
    return GUARANTEES.register(cls, kind, encode, decode)


def register_curve(cls: type[F], kind: str | None = None, encode: Encoder | None = None,
                   decode: Decoder | None = None) -> type[F]:
    """Register a trade-off curve type for JSON (the curve of an ``FDP`` guarantee), as
    ``register_guarantee`` does for guarantees."""
    return CURVES.register(cls, kind, encode, decode)


def guarantee_to_dict(g: Guarantee) -> dict[str, Any]:
    """A JSON-ready description ``{"type": kind, ...}`` of a registered guarantee."""
    if not isinstance(g, Guarantee):
        raise TypeError(f"g must be an accountant guarantee, got {type(g).__name__}")
    return GUARANTEES.to_dict(g)


def guarantee_from_dict(d: dict[str, Any]) -> Guarantee:
    """Inverse of ``guarantee_to_dict``."""
    if isinstance(d, dict) and not GUARANTEES.knows(d.get("type")):
        _load_registrations()
    return GUARANTEES.from_dict(d)


def _load_registrations() -> None:
    """Import every module of ``accountant`` that registers a kind (the extensions' guarantees),
    as the first use of any of the package's exports does."""
    package = importlib.import_module("accountant")
    getattr(package, "Ledger")  # noqa: B009 (the lazy package loads its modules on first use)


__all__ = ["guarantee_from_dict", "guarantee_to_dict", "register_curve", "register_guarantee"]
