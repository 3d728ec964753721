"""The numeric search space of the adaptive search: a box of records (optionally also a ball), the
dataset size and the adjacency, with the domain's extreme and central records and the helpers that
compare neighbouring datasets held as (n, d) arrays."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from accountant.core.types import MACHINE_EPSILON, Adjacency, FloatArray

from .fixed import FloatPair

__all__ = ["MAX_RECORDS", "SearchAdjacency", "SearchSpace", "differing_record", "rows_differ", "unique_pairs"]

#: The relations the adaptive search explores: a dataset adjacency, or "answers" (query answers,
#: scalars or d-vectors, each moving by at most the sensitivity, in a declared norm for vectors).
SearchAdjacency = Adjacency | Literal["answers"]
#: Most records (corners, axis points) a vector domain contributes to the structured start.
MAX_RECORDS = 12


@dataclass(frozen=True)
class SearchSpace:
    """The numeric search space: records in [lo, hi] (d coordinates; optionally also in a ball
    around 0), n records (answers) per dataset, the adjacency. Datasets are (n, d) arrays inside
    the search; ``scalar`` ones are handed out as (n,) arrays."""

    lo: FloatArray
    hi: FloatArray
    n: int
    adj: SearchAdjacency
    scalar: bool
    integers: bool
    ball: tuple[str, float] | None

    @property
    def d(self) -> int:
        return int(self.lo.size)

    def fix(self, x: FloatArray) -> FloatArray:
        """Rows moved into the domain: the ball (scaled toward 0), the box, then whole numbers
        (toward 0 with a ball, so neither constraint breaks)."""
        x = np.array(x, dtype=np.float64).reshape(-1, self.d)
        if self.ball is not None:
            norm, r = self.ball
            size = np.abs(x).sum(axis=1) if norm == "l1" else np.sqrt((x * x).sum(axis=1))
            over = size > r
            x[over] *= (r / size[over] * (1.0 - 4 * MACHINE_EPSILON))[:, None]
        x = np.clip(x, self.lo, self.hi)
        if self.integers:
            x = np.trunc(x) if self.ball is not None else np.clip(np.round(x), np.ceil(self.lo),
                                                                   np.floor(self.hi))
        return np.asarray(x + 0.0, dtype=np.float64)  # + 0.0: no -0.0 rows

    def record(self, c: FloatArray) -> FloatArray:
        return np.asarray(self.fix(np.asarray(c, dtype=np.float64)[None, :])[0], dtype=np.float64)

    def opposite(self, c: FloatArray) -> FloatArray:
        """The record farthest from c in the domain's own geometry: the opposite corner of the box,
        or -c in a ball."""
        return self.record(-c if self.ball is not None else self.lo + self.hi - c)

    def records(self) -> list[FloatArray]:
        """Extreme and central records: first two opposite extremes, then the centre, then (vector
        records) the other box corners (all of them for d <= 3, else one-hot corners and their
        opposites) or the ball's points on the coordinate axes and the diagonal."""
        lo, hi, d = self.lo, self.hi, self.d
        mid = (lo + hi) / 2
        if self.integers and self.ball is None:
            lo, hi, mid = np.ceil(lo), np.floor(hi), np.round(mid)
        if self.ball is None:
            recs = [lo, hi, mid]
            if d > 1:
                if d <= 3:
                    recs += [np.where(np.array(bits, dtype=bool), hi, lo)
                             for bits in itertools.product((0, 1), repeat=d)]
                else:
                    for j in range(min(d, 4)):
                        one = np.arange(d) == j
                        recs += [np.where(one, hi, lo), np.where(one, lo, hi)]
        else:
            r = self.ball[1]
            diag = np.full(d, r / (d if self.ball[0] == "l1" else math.sqrt(d)))
            recs = [r * _unit(d, 0), -r * _unit(d, 0), np.zeros(d), diag, -diag]
            for j in range(1, min(d, 4)):
                recs += [r * _unit(d, j), -r * _unit(d, j)]
        out: list[FloatArray] = []
        for c in recs:
            c = self.record(c)
            if not any(np.array_equal(c, o) for o in out):
                out.append(c)
        return out[:MAX_RECORDS]

    def random_record(self, rng: np.random.Generator) -> FloatArray:
        return self.record(rng.uniform(self.lo, self.hi))

    def out(self, x: FloatArray) -> FloatArray:
        return np.asarray(x[:, 0] if self.scalar else x, dtype=np.float64)


def _unit(d: int, j: int) -> FloatArray:
    return np.asarray(np.arange(d) == j, dtype=np.float64)


def rows_differ(x: FloatArray, x2: FloatArray) -> NDArray[np.bool_]:
    """Which rows of two (n, d) datasets of the same size differ."""
    return np.asarray(np.any(x != x2, axis=1))

def differing_record(x: FloatArray, x2: FloatArray, adj: str) -> int:
    """The changed record (replace) or the removed one (add_remove) of rows x, x2."""
    if adj == "replace":
        idx = np.flatnonzero(rows_differ(x, x2))
        return int(idx[0]) if idx.size else 0
    for i in range(x2.shape[0]):
        if np.any(x[i] != x2[i]):
            return i
    return int(x.shape[0]) - 1


def unique_pairs(pairs: Sequence[tuple[Any, Any]]) -> list[FloatPair]:
    """The pairs as float arrays, each once (the first occurrence kept, in order)."""
    seen: set[tuple[bytes, bytes, tuple[int, ...], tuple[int, ...]]] = set()
    out: list[FloatPair] = []
    for a, b in pairs:
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        k = (a.tobytes(), b.tobytes(), a.shape, b.shape)
        if k not in seen:
            seen.add(k)
            out.append((a, b))
    return out

