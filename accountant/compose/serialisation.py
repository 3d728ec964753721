"""Guarantees to and from JSON, by registration.

Each guarantee type is registered once, under a ``kind`` name, with an encoder to a dict of plain
values and a decoder back; types are matched exactly (a ``CLTGDP`` is not a ``GDP`` here, and an
approximation has no registered form). A frozen-dataclass guarantee whose fields are numbers needs
only ``register_guarantee(MyGuarantee)``; the ledger then stores it without being edited.

"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any, TypeVar

from accountant.notions.guarantees import GDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP
from accountant.pld.distribution import PLD
from accountant.pld.models.base import pair_from_spec, pair_to_spec

G = TypeVar("G", bound=Guarantee)


Encoder = Callable[[Any], dict[str, Any]]


Decoder = Callable[[dict[str, Any]], Guarantee]


_ENCODERS: dict[type[Guarantee], tuple[str, Encoder]] = {}


_DECODERS: dict[str, Decoder] = {}


def register_guarantee(cls: type[G], kind: str | None = None, encode: Encoder | None = None,
                       decode: Decoder | None = None) -> type[G]:
    """Register a guarantee type for JSON under ``kind`` (default: the class name). Without
    ``encode``/``decode`` the type must be a dataclass whose fields are JSON values, rebuilt by
    keyword (a field's ``metadata["name"]`` is its keyword when they differ)."""
    if not (isinstance(cls, type) and issubclass(cls, Guarantee)):
        raise TypeError(f"cls must be a Guarantee subclass, got {cls!r}")
    name = cls.__name__ if kind is None else kind
    if encode is None or decode is None:
        if not is_dataclass(cls):
            raise TypeError(f"{cls.__name__} is not a dataclass: give encode and decode")
        keys = [(f.name, f.metadata.get("name", f.name)) for f in fields(cls) if f.init or
                "name" in f.metadata]

        def encode_fields(g: Any) -> dict[str, Any]:
            return {key: getattr(g, attr) for attr, key in keys}

        def decode_fields(d: dict[str, Any]) -> Guarantee:
            return cls(**{key: d[key] for _, key in keys})

        encode, decode = encode or encode_fields, decode or decode_fields
    _ENCODERS[cls] = (name, encode)
    _DECODERS[name] = decode
    return cls


def guarantee_to_dict(g: Guarantee) -> dict[str, Any]:
    """A JSON-ready description ``{"type": kind, ...}`` of a registered guarantee."""
    entry = _ENCODERS.get(type(g))
    if entry is None:
        raise TypeError(f"cannot serialise a {type(g).__name__} guarantee to JSON; register it with "
                        "accountant.serialisation.register_guarantee")
    kind, encode = entry
    return {"type": kind, **encode(g)}


def guarantee_from_dict(d: dict[str, Any]) -> Guarantee:
    """Inverse of ``guarantee_to_dict``."""
    if not isinstance(d, dict):
        raise TypeError(f"a serialised guarantee is a dict, got {type(d).__name__}")
    decode = _DECODERS.get(d.get("type"))  # type: ignore[arg-type]
    if decode is None:
        raise ValueError(f"unknown guarantee type {d.get('type')!r}; known: {sorted(_DECODERS)}")
    return decode({k: v for k, v in d.items() if k != "type"})


def _encode_rdp(g: RDP) -> dict[str, Any]:
    if g.curve is not None:
        raise TypeError("cannot serialise an RDP given by a function; tabulate it at orders")
    return {"orders": list(g.orders), "epsilons": list(g.epsilons)}


register_guarantee(PureDP)


register_guarantee(ApproxDP)


register_guarantee(GDP)


register_guarantee(ZCDP)


register_guarantee(RDP, encode=_encode_rdp,
                   decode=lambda d: RDP(orders=tuple(d["orders"]), epsilons=tuple(d["epsilons"])))


register_guarantee(
    PLD,
    encode=lambda g: {"tol": g.tol, "factors": [[pair_to_spec(s), c] for s, c in g.factors]},
    decode=lambda d: PLD(tuple((pair_from_spec(s), c) for s, c in d["factors"]), d["tol"]))


__all__ = ["guarantee_from_dict", "guarantee_to_dict", "register_guarantee"]
