"""Values to and from JSON-ready dicts, by registration.

A ``Codec`` holds one family of values (the guarantees, the trade-off curves): each type is
registered once, where it is declared, under a ``kind`` name with an encoder to a dict of plain
values and a decoder back. Types are matched exactly (a subclass is its own kind). A frozen
dataclass whose fields are JSON values needs no encoder: it is stored by its fields and rebuilt by
keyword. A type that cannot be stored (it holds a user's function) is registered with the reason
and the way out, which the ``TypeError`` repeats.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")

C = TypeVar("C", bound=type)


Encoder = Callable[[Any], dict[str, Any]]


Decoder = Callable[[dict[str, Any]], Any]


class Codec(Generic[T]):
    """The registered kinds of one family of values (``family`` names it in messages)."""

    def __init__(self, family: str, base: type, register_hint: str) -> None:
        self.family = family
        self.base = base
        self.register_hint = register_hint
        self._encoders: dict[type, tuple[str, Encoder]] = {}
        self._decoders: dict[str, Decoder] = {}
        self._refused: dict[type, str] = {}

    def register(self, cls: C, kind: str | None = None, encode: Encoder | None = None,
                 decode: Decoder | None = None) -> C:
        """Register ``cls`` under ``kind`` (default: the class name). Without ``encode``/``decode``
        the type must be a dataclass whose fields are JSON values, rebuilt by keyword (a field's
        ``metadata["name"]`` is its keyword when they differ)."""
        if not (isinstance(cls, type) and issubclass(cls, self.base)):
            raise TypeError(f"cls must be a {self.base.__name__} subclass, got {cls!r}")
        name = cls.__name__ if kind is None else kind
        if not isinstance(name, str) or not name:
            raise TypeError(f"kind must be a non-empty string, got {name!r}")
        if encode is None or decode is None:
            if not is_dataclass(cls):
                raise TypeError(f"{cls.__name__} is not a dataclass: give encode and decode")
            keys = [(f.name, f.metadata.get("name", f.name)) for f in fields(cls)
                    if f.init or "name" in f.metadata]

            def encode_fields(value: Any) -> dict[str, Any]:
                return {key: _plain(getattr(value, attr)) for attr, key in keys}

            def decode_fields(d: dict[str, Any]) -> Any:
                return cls(**{key: d[key] for _, key in keys if key in d})

            encode, decode = encode or encode_fields, decode or decode_fields
        self._encoders[cls] = (name, encode)
        self._decoders[name] = decode
        self._refused.pop(cls, None)
        return cls

    def refuse(self, cls: type, reason: str) -> None:
        """Declare that values of ``cls`` cannot be stored, and why (and what to do instead)."""
        self._refused[cls] = reason

    def to_dict(self, value: T) -> dict[str, Any]:
        """``{"type": kind, ...}`` for a value of a registered type; TypeError saying why not."""
        entry = self._encoders.get(type(value))
        if entry is None:
            reason = self._refused.get(type(value))
            if reason is not None:
                raise TypeError(f"cannot serialise {value!r} to JSON: {reason}")
            raise TypeError(f"cannot serialise a {type(value).__name__} {self.family} to JSON: its type "
                            f"is not registered; register it with {self.register_hint}")
        kind, encode = entry
        return {"type": kind, **encode(value)}

    def from_dict(self, d: dict[str, Any]) -> T:
        """Inverse of ``to_dict``."""
        if not isinstance(d, dict):
            raise TypeError(f"a serialised {self.family} is a dict, got {type(d).__name__}")
        decode = self._decoders.get(d.get("type"))  # type: ignore[arg-type]
        if decode is None:
            raise ValueError(f"unknown {self.family} type {d.get('type')!r}; known: "
                             f"{sorted(self._decoders)}")
        out: T = decode({k: v for k, v in d.items() if k != "type"})
        return out

    def knows(self, kind: Any) -> bool:
        return kind in self._decoders


def _plain(value: Any) -> Any:
    """A tuple as a list (JSON has no tuples); anything else as it is."""
    return list(value) if isinstance(value, tuple) else value


__all__ = ["Codec", "Decoder", "Encoder"]
