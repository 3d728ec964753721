"""From raw outputs to what the tests see: a numeric matrix, category ids and exact-count keys.

Equal-shape numeric outputs (numbers, arrays) keep their numbers as columns. Anything else — None,
NaN, strings, refusal sentinels, lists, tuples, dicts, nested, mixed with numbers across draws or
inputs — is *featurised*: each output is split into a skeleton (its structure with every real number
replaced by a slot marker: lengths, keys, None, NaN and non-numeric values kept as categories) and
the numbers in its slots. A layout fitted on the selection draws of both inputs of a pair fixes the
columns: one per slot path (list index or dict key, nested), NaN where the slot is absent or holds
a category, and one per variable-length container (its length). The numeric score families then see
the numbers, the exact-count family sees (skeleton, numbers) and the category family the skeleton
alone, so "no answer" (None, NaN, a refusal) is a category of its own, never the number 0.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from typing import Any

import numpy as np
from numpy.typing import NDArray

from accountant.core.types import FloatArray

#: Most columns a featurised layout keeps (slot paths first seen first, then lengths).
MAX_COLUMNS = 64

_NUM = ("#",)
_NAN = ("nan",)
_NONE = ("none",)
Path = tuple[Hashable, ...]


@dataclass
class Batch:
    """Outputs of one input at one stage: ``values`` an (n, d) numeric array (None when the outputs
    carry no numbers); ``keys`` one comparable key per output for exact value counts; ``cats`` the
    structure category of each output (None for plain numeric outputs); ``raw`` the outputs as the
    mechanism returned them (for its ``privacy_loss``); ``slots`` how many leading columns are
    numbers (the rest are container lengths); ``memo`` what scores derived from these outputs and
    share (a batch is never modified)."""

    values: NDArray[Any] | None
    keys: NDArray[Any]
    raw: Any
    cats: NDArray[np.int64] | None = None
    slots: int = 0
    memo: dict[Hashable, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def n(self) -> int:
        return int(self.keys.shape[0])


def row_keys(values: NDArray[Any]) -> NDArray[Any]:
    """One comparable key per row (the row's bytes), so rows can be counted and looked up."""
    v = np.ascontiguousarray(values)
    if v.shape[1] == 1:
        col: NDArray[Any] = v[:, 0].copy()
        # floats by their bits, so a (canonical) NaN equals itself
        return col.view(np.int64) if col.dtype == np.float64 else col
    out: NDArray[Any] = v.view(np.dtype((np.void, v.dtype.itemsize * v.shape[1])))[:, 0]
    return out


def missing_pattern(values: FloatArray) -> NDArray[np.int64]:
    """The structure category of a numeric output: which of its coordinates are NaN ("no value"),
    one int64 key per row (bit j for coordinate j; a polynomial hash beyond 62 coordinates), so a
    NaN-padded array and the same outputs as lists with None get the same categories."""
    miss = np.isnan(values)
    d = miss.shape[1]
    if d <= 62:
        out = np.zeros(miss.shape[0], dtype=np.int64)
        for j in range(d):
            out |= miss[:, j].astype(np.int64) << j
        return out
    h = np.zeros(miss.shape[0], dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(d):
            h = h * np.uint64(1_000_003) + miss[:, j].astype(np.uint64)
    return h.view(np.int64)


def _canonical_float(values: FloatArray) -> FloatArray:
    """One bit pattern for NaN and for zero (-0.0 and 0.0 are one real number)."""
    out: FloatArray = values + 0.0
    np.copyto(out, np.nan, where=np.isnan(out))
    return out


def skeleton(o: Any, nums: list[float]) -> Hashable:
    """The structure of one output with its real numbers appended to ``nums`` (in slot order);
    dict keys in their order (an order that depends on the data is observable, so it counts).

    Raises ValueError naming the output when it is neither a number, None, a string, a container
    of these, nor hashable (so it cannot be compared with other outputs)."""
    t = type(o)
    if t is float:
        if o != o:
            return _NAN
        nums.append(o)
        return _NUM
    if t is list or t is tuple:
        if all(type(v) is float and v == v for v in o):  # flat numbers: the common case, fast
            nums.extend(o)
            return _flat(len(o))
        out: list[Hashable] = ["["]
        for v in o:  # numbers and None inline (answers and "no answer"), the rest recursively
            if type(v) is float and v == v:
                nums.append(v)
                out.append(_NUM)
            elif v is None:
                out.append(_NONE)
            else:
                out.append(skeleton(v, nums))
        return tuple(out)
    if t is dict:
        return ("{", *[(k, skeleton(v, nums)) for k, v in o.items()])
    if t is str:
        return ("=", o)
    if t is int or t is bool:
        return _real(o, nums)
    if o is None:
        return _NONE
    if isinstance(o, np.ndarray):
        return skeleton(o.tolist(), nums)
    if isinstance(o, np.generic):
        return skeleton(o.item(), nums)
    if isinstance(o, bytes):
        return ("=", o)
    if isinstance(o, numbers.Real):
        return _real(o, nums)
    if isinstance(o, dict):
        return skeleton(dict(o), nums)
    if isinstance(o, (list, tuple)):
        return skeleton(list(o), nums)
    if isinstance(o, (set, frozenset)):
        return ("=", frozenset(_hashable_leaf(v) for v in o))
    try:
        hash(o)
    except TypeError:
        shown = repr(o) if len(repr(o)) <= 60 else repr(o)[:57] + "..."
        raise ValueError(f"mechanism returned an output that cannot be compared with others: {shown} "
                         f"(type {type(o).__name__}: not a number, None, string, list, tuple, dict, "
                         "array or hashable value)") from None
    return ("=", o)


@lru_cache(maxsize=1024)
def _flat(n: int) -> tuple[Hashable, ...]:
    return ("[", *([_NUM] * n))


def _real(o: Any, nums: list[float]) -> Hashable:
    try:
        x = float(o)
    except (OverflowError, ValueError, TypeError):
        return ("=", o)
    if x != x:
        return _NAN
    nums.append(x)
    return _NUM


def _hashable_leaf(o: Any) -> Hashable:
    nums: list[float] = []
    s = skeleton(o, nums)
    return (s, tuple(nums))


def _walk(s: Hashable, path: Path, slots: list[Path], lengths: list[tuple[Path, int]]) -> None:
    """Slot paths of a skeleton (in the order its numbers were appended) and its container lengths."""
    if s == _NUM:
        slots.append(path)
        return
    if not isinstance(s, tuple) or not s or s[0] not in ("[", "{"):
        return
    lengths.append((path, len(s) - 1))
    if s[0] == "[":
        for i, c in enumerate(s[1:]):
            _walk(c, (*path, i), slots, lengths)
    else:
        for k, c in s[1:]:
            _walk(c, (*path, k), slots, lengths)


@dataclass
class _Shape:
    slots: list[Path]
    lengths: list[tuple[Path, int]]


@dataclass
class Layout:
    """How one pair's outputs become batches; fitted on the selection draws of both inputs and then
    fixed (new skeletons seen later get new category ids, their slots map to known columns only).

    ``numeric``: equal-shape numeric outputs on both inputs (``shape`` the row shape); else the
    outputs are featurised with ``columns`` (slot paths) and ``length_columns``."""

    numeric: bool
    shape: tuple[int, ...] = ()
    floats: bool = False
    columns: dict[Path, int] = field(default_factory=dict)
    length_columns: dict[Path, int] = field(default_factory=dict)
    skeletons: dict[Hashable, int] = field(default_factory=dict)
    shapes: list[_Shape] = field(default_factory=list)

    @classmethod
    def fit(cls, chunks_p: list[Any], chunks_q: list[Any], n: int) -> tuple[Layout, Batch, Batch]:
        """The layout of a pair's selection draws (n per input), and their two batches."""
        ap, aq = _numeric(chunks_p), _numeric(chunks_q)
        if ap is not None and aq is not None and ap.shape[1:] == aq.shape[1:]:
            lay = cls(True, tuple(ap.shape[1:]), floats="f" in (ap.dtype.kind, aq.dtype.kind))
            return lay, lay._numeric_batch(ap, chunks_p, n), lay._numeric_batch(aq, chunks_q, n)
        lay = cls(False)
        objs_p, objs_q = _objects(chunks_p), _objects(chunks_q)
        for objs in (objs_p, objs_q):
            if len(objs) != n:
                raise ValueError(f"mechanism returned {len(objs)} outputs, expected {n}")
        parsed = [lay._parse(objs_p), lay._parse(objs_q)]
        seen_len: dict[Path, set[int]] = {}
        slot_order: dict[Path, None] = {}
        for sh in lay.shapes:
            for p in sh.slots:
                slot_order.setdefault(p, None)
            for p, ln in sh.lengths:
                seen_len.setdefault(p, set()).add(ln)
        for p in slot_order:
            if len(lay.columns) >= MAX_COLUMNS:
                break
            lay.columns[p] = len(lay.columns)
        for p, ns in seen_len.items():
            if len(ns) > 1 and len(lay.columns) + len(lay.length_columns) < MAX_COLUMNS:
                lay.length_columns[p] = len(lay.columns) + len(lay.length_columns)
        bp = lay._assemble(objs_p, *parsed[0])
        bq = lay._assemble(objs_q, *parsed[1])
        return lay, bp, bq

    def forget_skeletons(self, known: int) -> None:
        """Forget every skeleton learnt after the first ``known`` (``batch`` numbers the new
        structures of its outputs from ``len(skeletons)`` on, in the order first seen)."""
        for s in list(self.skeletons)[known:]:
            del self.skeletons[s]
        del self.shapes[known:]

    def column_names(self) -> list[str]:
        """Names of the value columns (slot paths, then container lengths), for reports."""
        if self.numeric:
            return []
        return ([describe_path(p) for p in self.columns]
                + [f"len({describe_path(p)})" for p in self.length_columns])

    def _shape_of(self, s: Hashable) -> _Shape:
        sid = self.skeletons.get(s)
        if sid is None:
            slots: list[Path] = []
            lengths: list[tuple[Path, int]] = []
            _walk(s, (), slots, lengths)
            sid = self.skeletons[s] = len(self.skeletons)
            self.shapes.append(_Shape(slots, lengths))
        return self.shapes[sid]

    def batch(self, chunks: list[Any], n: int) -> Batch:
        """Normalise raw chunk outputs; raise ValueError naming ``mechanism`` for bad shapes or counts."""
        if self.numeric:
            arr = _numeric(chunks)
            if arr is not None:
                return self._numeric_batch(arr, chunks, n)
        objs = _objects(chunks)
        if len(objs) != n:
            raise ValueError(f"mechanism returned {len(objs)} outputs, expected {n}")
        if self.numeric:  # numeric on the selection draws, not here: compare what can be compared
            shape = self.shape
            raise ValueError(f"mechanism returned outputs of shape {shape} (numeric) at first and "
                             f"others later ({_shown(objs)}): outputs of one pair must be comparable")
        return self._assemble(objs, *self._parse(objs))

    def _numeric_batch(self, arr: NDArray[Any], chunks: list[Any], n: int) -> Batch:
        if arr.ndim == 0 or arr.shape[0] != n:
            raise ValueError(f"mechanism's vectorised sampler must return {n} outputs stacked on axis 0, "
                             f"got an array of shape {arr.shape}")
        shape = tuple(arr.shape[1:])
        if shape != self.shape:
            raise ValueError(f"mechanism returned outputs of shape {shape} on one input and "
                             f"{self.shape} on another: output shapes must agree")
        values = arr.reshape(n, -1)
        if values.dtype.kind == "b":
            values = values.astype(np.int64)
        if values.dtype.kind == "f" or self.floats:
            values = _canonical_float(values.astype(np.float64))
        raw = arr if any(isinstance(c, np.ndarray) for c in chunks) else _objects(chunks)
        cats = missing_pattern(values) if values.dtype.kind == "f" else None
        return Batch(values, row_keys(values), raw, cats, values.shape[1])

    def _parse(self, objs: list[Any]) -> tuple[NDArray[np.int64], list[list[float]]]:
        """Skeleton id and numbers of each output (new skeletons are added to the table)."""
        table = self.skeletons
        all_nums: list[list[float]] = []
        ids: list[int] = []
        for o in objs:
            nums: list[float] = []
            s = skeleton(o, nums)
            sid = table.get(s)
            if sid is None:
                self._shape_of(s)
                sid = table[s]
            ids.append(sid)
            all_nums.append(nums)
        return np.asarray(ids, dtype=np.int64).reshape(len(objs)), all_nums

    def _assemble(self, objs: list[Any], sids: NDArray[np.int64], all_nums: list[list[float]]) -> Batch:
        n = len(objs)
        d_slots = len(self.columns)
        d = d_slots + len(self.length_columns)
        if d == 0:
            return Batch(None, sids.copy(), objs, sids, 0)
        # per skeleton: the column of each of its slots (-1: not a column) and its length columns
        width = max((len(sh.slots) for sh in self.shapes), default=0)
        colmap = np.full((len(self.shapes), max(width, 1)), -1, dtype=np.int64)
        lenmat = np.full((len(self.shapes), max(len(self.length_columns), 1)), np.nan)
        for sid, sh in enumerate(self.shapes):
            for j, p in enumerate(sh.slots):
                colmap[sid, j] = self.columns.get(p, -1)
            for p, ln in sh.lengths:
                c = self.length_columns.get(p)
                if c is not None:
                    lenmat[sid, c - d_slots] = ln
        values = np.full((n, d), np.nan)
        counts = np.fromiter(map(len, all_nums), dtype=np.int64, count=n)
        total = int(counts.sum())
        if total:
            flat = np.fromiter(chain.from_iterable(all_nums), dtype=np.float64, count=total)
            rows = np.repeat(np.arange(n), counts)
            starts = np.cumsum(counts) - counts
            pos = np.arange(total) - np.repeat(starts, counts)
            cols = colmap[sids[rows], pos]
            keep = cols >= 0
            values[rows[keep], cols[keep]] = flat[keep]
        if self.length_columns:
            values[:, d_slots:] = lenmat[sids][:, : d - d_slots]
        values = _canonical_float(values)
        keys = row_keys(np.concatenate([sids[:, None].astype(np.float64), values], axis=1))
        return Batch(values, keys, objs, sids, d_slots)


def _shown(objs: list[Any]) -> str:
    s = repr(objs[0]) if objs else "nothing"
    return s if len(s) <= 40 else s[:37] + "..."


def _objects(chunks: list[Any]) -> list[Any]:
    out: list[Any] = []
    for c in chunks:
        if isinstance(c, np.ndarray):
            out.extend(c.tolist() if c.dtype != object else list(c))
        elif isinstance(c, (list, tuple)):
            out.extend(c)
        else:
            out.append(c)
    return out


def _numeric(chunks: list[Any]) -> NDArray[Any] | None:
    """The chunks as one numeric array stacked on axis 0, or None if they are not all numeric."""
    arrs: list[NDArray[Any]] = []
    for c in chunks:
        if isinstance(c, np.ndarray):
            a = c
        else:
            if not isinstance(c, list) or not c or isinstance(c[0], (str, bytes, dict)) or c[0] is None:
                return None
            try:
                a = np.asarray(c)
            except (ValueError, TypeError):
                return None
        if a.dtype.kind not in "biuf" or a.ndim == 0:
            return None
        arrs.append(a)
    if not arrs:
        return None
    if len(arrs) == 1:
        return arrs[0]
    if len({a.shape[1:] for a in arrs}) > 1:
        return None
    return np.concatenate(arrs, axis=0)


def pooled_unique_count(a: Batch, b: Batch, limit: float = math.inf) -> int | None:
    """The number of distinct outputs in two batches, or None when it exceeds ``limit`` (decided on
    the first 2 limit + 1 outputs when they already hold more than ``limit`` distinct ones)."""
    keys = np.concatenate([a.keys, b.keys])
    if keys.size > 2 * limit + 1:
        head = keys[: int(2 * limit) + 1]
        if np.unique(head).size > limit:
            return None
    u = int(np.unique(keys).size)
    return u if u <= limit else None


def describe_path(p: Sequence[Hashable]) -> str:
    return "y" + "".join(f"[{k!r}]" for k in p) if p else "y"
