"""Vector query answers for the adaptive search: pairs of (n, d) answer arrays whose rows each move
within a norm ball of radius Delta (the declared sensitivity), their extreme starts and their moves.

A pair (a, a') is neighbouring when every row k has ||a_k - a'_k|| <= Delta in the declared norm
(l1, l2 or linf) and a != a'. Membership is checked exactly (rational arithmetic on the doubles), so
no pair outside the relation reaches the audit: a pair built at radius Delta (1 - ``RADIUS_MARGIN``)
whose rounding still crosses the ball is discarded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

from accountant.core.types import FloatArray

from .fixed import FloatPair
from .space import SearchSpace, unique_pairs

__all__ = ["ANSWER_NORMS", "MAX_AXES", "MOVE_WEIGHTS", "RADIUS_MARGIN", "AnswerBall", "AnswerNorm", "norm_of"]

#: The norms a vector answer's sensitivity may be declared in.
AnswerNorm = Literal["l1", "l2", "linf"]
ANSWER_NORMS: tuple[str, ...] = ("l1", "l2", "linf")
#: Most coordinate axes among the starting directions (the all-ones direction is always one).
MAX_AXES = 4
#: How often each move is drawn: the shared answer, a rotation by a perturbation or one coordinate, a
#: sign flip or jump to an extreme direction, a rescaling (rotations carry most of the climb).
MOVE_WEIGHTS = (0.2, 0.5, 0.15, 0.15)
#: Differences are built at radius Delta (1 - RADIUS_MARGIN), so rounding keeps them in the ball.
RADIUS_MARGIN = 1e-12


def norm_of(v: FloatArray, norm: str) -> FloatArray:
    """The norm of each row of ``v`` (a float estimate, used to scale; membership is exact)."""
    a = np.abs(np.asarray(v, dtype=np.float64).reshape(v.shape[0], -1))
    if norm == "l1":
        return np.asarray(a.sum(axis=1), dtype=np.float64)
    if norm == "l2":
        return np.asarray(np.sqrt((a * a).sum(axis=1)), dtype=np.float64)
    return np.asarray(a.max(axis=1), dtype=np.float64)


@dataclass(frozen=True)
class AnswerBall:
    """Rows of answers in the box [lo, hi]^d of ``space``, each moving by at most ``radius`` in
    ``norm``. Directions are unit vectors of the norm: the coordinate axes, and the all-ones
    direction scaled to the norm (1/d for l1, 1/sqrt(d) for l2, 1 for linf), where an l1 claim on
    noise calibrated to l2 (or l2 on linf) loses most."""

    space: SearchSpace
    norm: str
    radius: float

    def directions(self) -> list[FloatArray]:
        """Unit directions: the all-ones one first, then up to ``MAX_AXES`` coordinate axes."""
        d = self.space.d
        ones = np.ones(d) / float(norm_of(np.ones((1, d)), self.norm)[0])
        return [ones, *(np.asarray(np.arange(d) == j, dtype=np.float64) for j in range(min(d, MAX_AXES)))]

    def scaled(self, u: FloatArray, r: float) -> FloatArray:
        """u rescaled to norm r (1 - RADIUS_MARGIN); 0 stays 0."""
        size = float(norm_of(u[None, :], self.norm)[0])
        if not size > 0:
            return np.zeros_like(u)
        return np.asarray(u * (r * (1.0 - RADIUS_MARGIN) / size), dtype=np.float64)

    def neighbours(self, x: FloatArray, x2: FloatArray) -> bool:
        """Exactly: same shape, different, every row's difference within the ball."""
        if x.shape != x2.shape or np.array_equal(x, x2):
            return False
        r = Fraction(self.radius)
        for row, row2 in zip(x, x2, strict=True):
            diff = [abs(Fraction(float(b)) - Fraction(float(a))) for a, b in zip(row, row2, strict=True)]
            if self.norm == "l1":
                ok = sum(diff, Fraction(0)) <= r
            elif self.norm == "l2":
                ok = sum((t * t for t in diff), Fraction(0)) <= r * r
            else:
                ok = max(diff) <= r
            if not ok:
                return False
        return True

    def pair(self, centre: FloatArray, diff: FloatArray) -> FloatPair | None:
        """Rows centre -/+ diff/2 moved into the box; None unless a neighbouring pair."""
        sp = self.space
        x, x2 = sp.fix(centre - diff / 2), sp.fix(centre + diff / 2)
        return (x, x2) if self.neighbours(x, x2) else None

    def starts(self) -> list[FloatPair]:
        """Antipodal pairs at the ball's extreme directions: every row (then only the first row)
        moved by Delta u about the centre of the box, for each direction u; then the same
        differences along the all-ones direction and the first axis, both signs, with the shared answers
        at the box's lower corner."""
        sp, n = self.space, self.space.n
        mid = (sp.lo + sp.hi) / 2
        diffs = [self.scaled(u, self.radius) for u in self.directions()]
        out: list[FloatPair | None] = []
        rows = [np.ones(n, dtype=bool)] + ([np.arange(n) == 0] if n > 1 else [])
        for which in rows:
            out += [self.pair(np.tile(mid, (n, 1)), np.where(which[:, None], v, 0.0)) for v in diffs]
        for v in diffs[:2]:
            for sgn in (1.0, -1.0):
                low = sp.lo + np.abs(v) / 2
                out.append(self.pair(np.tile(low, (n, 1)), np.tile(sgn * v, (n, 1))))
        return unique_pairs([p for p in out if p is not None])

    def move(self, pair: FloatPair, rng: np.random.Generator) -> FloatPair:
        """One random move that keeps the pair neighbouring (else ``pair`` itself), on one row or on
        all rows: move the shared answer (the midpoint) toward a random or extreme point, rotate the
        difference (a Gaussian perturbation, a sign flip of one coordinate, or a jump to a signed
        extreme direction) keeping its norm, or rescale it (to the full radius, or by a factor in
        [1/2, 1] capped at the radius)."""
        sp = self.space
        x, x2 = pair
        centre, diff = (x + x2) / 2, x2 - x
        rows = np.arange(x.shape[0]) == int(rng.integers(x.shape[0]))
        if x.shape[0] > 1 and rng.random() < 0.5:
            rows[:] = True
        u = int(rng.choice(4, p=np.asarray(MOVE_WEIGHTS)))
        if u == 0:  # the shared answer
            recs = [*sp.records(), sp.random_record(rng)]
            target = recs[int(rng.integers(len(recs)))]
            t = float(rng.uniform())
            centre = np.where(rows[:, None], centre + t * (target - centre), centre)
        else:
            new = diff.copy()
            for k in np.flatnonzero(rows):
                new[k] = self._reshape(diff[k], u, rng)
            diff = new
        moved = self.pair(centre, diff)
        return pair if moved is None else moved

    def _reshape(self, v: FloatArray, u: int, rng: np.random.Generator) -> FloatArray:
        """A new difference for one row, of the same norm (capped at the radius) for a rotation:
        u = 1 a Gaussian perturbation or one coordinate grown or shrunk; u = 2 one sign flipped or a
        signed extreme direction; u = 3 rescaled (to the radius, or by a factor in [1/2, 1])."""
        size = float(norm_of(v[None, :], self.norm)[0])
        r = min(size, self.radius) if size > 0 else self.radius
        if u == 1:
            if rng.random() < 0.5:  # one coordinate grown or shrunk
                w = v.copy() if size > 0 else self.directions()[0].copy()
                j = int(rng.integers(v.size))
                w[j] = w[j] * float(rng.uniform(0.0, 2.0)) + float(rng.choice([-1.0, 1.0])) * r / v.size
            else:  # a random rotation
                step = float(rng.uniform(0.05, 0.5)) * r / math.sqrt(v.size)
                w = v + step * rng.normal(size=v.size)
            return self.scaled(w, r)
        if u == 2:
            if size > 0 and rng.random() < 0.5:
                w = v.copy()
                w[int(rng.integers(v.size))] *= -1.0
                return np.asarray(w, dtype=np.float64)
            dirs = self.directions()
            signs = rng.choice(np.array([-1.0, 1.0]), size=v.size)
            return self.scaled(signs * dirs[int(rng.integers(len(dirs)))], r if size > 0 else self.radius)
        if rng.random() < 0.5 or size == 0:
            return self.scaled(v if size > 0 else self.directions()[0], self.radius)
        return self.scaled(v, min(self.radius, size * float(rng.uniform(0.5, 1.0))))
