"""One-run audits from canary scores: ``one_run_audit(scores, included)``.

The caller drew, for each of m canaries, a fair coin ``included`` (the canary goes into the training
data or not), trained once, and scored each canary (higher = more likely included). For each guess
count (k_in, k_out) on a grid fixed before looking at the data, the auditor guesses "in" for the
k_in highest scores and "out" for the k_out lowest (ties broken by position, never by the coins) and
counts the correct guesses c among r = k_in + k_out. Each count is tested by

- ``steinke``: the (eps, delta)-DP test of Steinke, Nasr & Jagielski [@steinke2023privacy], exact
  binomial tails (interval arithmetic);
- ``fdp``: the f-DP test of Mahloujifar, Melis & Chaudhuri [@mahloujifar2024auditing] against the
  (eps, delta)-DP curve (an epsilon lower bound) and against mu-GDP (a mu lower bound), and, when a
  ``claim`` is given, against the claim's trade-off curve (refuted or not).

Multiple testing: the report takes the best bound over the grid and the tests, so each test runs at
level (1 - confidence) / n_tests (Bonferroni over every (guess count, test) pair evaluated). All
reported bounds and the verdict hold together with probability >= ``confidence``, for any
mechanism, whatever the scores. A pre-registered ``guesses`` list of one count makes n_tests small.

Each bound is a lower bound: ``epsilon_lower`` <= the run's true epsilon at ``delta`` (with respect
to one canary, add/remove), ``mu_lower`` <= the least mu for which it is mu-GDP. ``gdp_epsilon`` is
the epsilon at ``delta`` of GDP(mu_lower): a lower bound only if the run's trade-off curve is
Gaussian-shaped (as DP-SGD's is, approximately), so it is reported apart, never as a bound.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from accountant import GDP, Guarantee
from accountant.core.validation import check_count, check_real

from . import fdp, steinke

__all__ = ["GuessTest", "OneRunReport", "default_guesses", "one_run_audit"]


@dataclass(frozen=True)
class GuessTest:
    """One guess count: k_in "in" guesses on the top scores, k_out "out" guesses on the bottom ones,
    ``correct`` of the r = k_in + k_out right, and each test's largest rejected parameter at the
    report's per-test level as screened in floating point (the report's headline bounds are these
    candidates re-checked rigorously; these per-count figures are for display)."""

    k_in: int
    k_out: int
    correct: int
    epsilon_steinke: float
    epsilon_fdp: float
    mu_fdp: float
    claim_rejected: bool | None = None

    @property
    def guesses(self) -> int:
        return self.k_in + self.k_out


@dataclass(frozen=True)
class OneRunReport:
    """What ``one_run_audit`` found; every bound holds at ``confidence`` jointly (module docstring)."""

    m: int
    included: int
    confidence: float
    delta: float
    epsilon_lower: float
    #: "steinke" or "fdp": the test that gave ``epsilon_lower`` (None when it is 0)
    method: str | None
    mu_lower: float
    gdp_epsilon: float
    #: the guess count that gave ``epsilon_lower`` (the largest mu when epsilon_lower is 0)
    witness: GuessTest | None
    tests: tuple[GuessTest, ...]
    n_tests: int
    level: float
    claim: Guarantee | None = None
    #: True when the claim's trade-off curve is rejected; None without a claim
    claim_refuted: bool | None = None
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default=())

    @property
    def guesses(self) -> int:
        return 0 if self.witness is None else self.witness.guesses

    @property
    def correct(self) -> int:
        return 0 if self.witness is None else self.witness.correct

    def to_dict(self) -> dict[str, Any]:
        return {"m": self.m, "included": self.included, "confidence": self.confidence, "delta": self.delta,
                "epsilon_lower": self.epsilon_lower, "method": self.method, "mu_lower": self.mu_lower,
                "gdp_epsilon": self.gdp_epsilon, "guesses": self.guesses, "correct": self.correct,
                "k_in": None if self.witness is None else self.witness.k_in,
                "k_out": None if self.witness is None else self.witness.k_out,
                "n_tests": self.n_tests, "level": self.level,
                "claim": None if self.claim is None else str(self.claim), "claim_refuted": self.claim_refuted,
                "seconds": self.seconds}

    def __str__(self) -> str:
        w = self.witness
        lines = [f"one-run audit of {self.m} canaries ({self.included} included) at confidence "
                 f"{self.confidence:g}:",
                 f"  epsilon >= {self.epsilon_lower:.4g} at delta = {self.delta:g}"
                 + (f" ({self.method}: {w.correct} of {w.guesses} guesses correct, {w.k_in} 'in' + "
                    f"{w.k_out} 'out')" if w is not None and self.method is not None else ""),
                 f"  mu >= {self.mu_lower:.4g} (GDP); GDP({self.mu_lower:.3g}) has epsilon "
                 f"{self.gdp_epsilon:.4g} at delta = {self.delta:g} (not a bound unless the curve is "
                 "Gaussian)",
                 f"  {self.n_tests} tests, each at level {self.level:.3g} (Bonferroni)"]
        if self.claim is not None:
            lines.append(f"  claim {self.claim}: " + ("REFUTED" if self.claim_refuted else "not refuted"))
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


def default_guesses(m: int) -> tuple[tuple[int, int], ...]:
    """The grid used when none is given: r = m, m/2, m/4, ... (r >= 4 or the smallest), each as all
    "in" guesses and as half "in", half "out" (one-sided r = m guesses every canary "in": dropped)."""
    out: list[tuple[int, int]] = []
    r = m
    while True:
        if r < m:
            out.append((r, 0))
        if r >= 2:
            out.append((r - r // 2, r // 2))
        if r <= 4:
            break
        r //= 2
    return tuple(dict.fromkeys(out))


def _check_inputs(scores: ArrayLike, included: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    inc = np.asarray(included)
    if inc.dtype != np.bool_:
        raise TypeError(f"included must be a boolean array (the recorded coin flips), got dtype {inc.dtype}")
    s = np.asarray(scores)
    if s.dtype.kind not in "iuf":
        raise TypeError(f"scores must be an array of real numbers, got dtype {s.dtype}")
    s = s.astype(np.float64)
    if s.ndim != 1 or inc.ndim != 1:
        raise ValueError(f"scores and included must be 1-d, got shapes {s.shape} and {inc.shape}")
    if s.size < 2:
        raise ValueError(f"scores must hold m >= 2 canaries, got m = {s.size}")
    if s.size != inc.size:
        raise ValueError(f"scores and included must have the same length, got {s.size} and {inc.size}")
    if not np.isfinite(s).all():
        at = int(np.flatnonzero(~np.isfinite(s))[0])
        raise ValueError(f"scores must be finite, got {s[at]!r} at index {at}")
    return s, inc


def _check_guesses(guesses: Sequence[tuple[int, int]], m: int) -> tuple[tuple[int, int], ...]:
    out = []
    for g in guesses:
        if not isinstance(g, tuple) or len(g) != 2:
            raise TypeError(f"guesses must be a sequence of (k_in, k_out) pairs, got {g!r}")
        k_in = check_count("guesses k_in", g[0], low=0, high=m)
        k_out = check_count("guesses k_out", g[1], low=0, high=m)
        if not 1 <= k_in + k_out <= m:
            raise ValueError(f"guesses must have 1 <= k_in + k_out <= m = {m}, got {g!r}")
        out.append((k_in, k_out))
    if not out:
        raise ValueError("guesses must hold at least one (k_in, k_out) pair")
    return tuple(out)


def one_run_audit(scores: ArrayLike, included: ArrayLike, delta: float = 0.0, confidence: float = 0.95, *,
                  claim: Guarantee | None = None,
                  guesses: Sequence[tuple[int, int]] | None = None) -> OneRunReport:
    """Lower bounds on the privacy of one training run from its canaries' scores (module docstring).

    ``scores``: one finite float per canary, higher meaning "more likely included"; ``included``:
    the recorded coin flips (bool, each drawn with probability 1/2 independently of everything the
    run saw); ``delta`` in [0, 1); ``confidence`` in (0, 1); ``claim``: a guarantee whose trade-off
    curve is tested; ``guesses``: the (k_in, k_out) counts to try (default ``default_guesses(m)``).
    Returns an ``OneRunReport`` whose bounds hold jointly at ``confidence``."""
    t0 = time.perf_counter()
    s, inc = _check_inputs(scores, included)
    delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    confidence = check_real("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    if claim is not None and not isinstance(claim, Guarantee):
        raise TypeError(f"claim must be an accountant Guarantee, got {type(claim).__name__}")
    m = int(s.size)
    grid = default_guesses(m) if guesses is None else _check_guesses(guesses, m)
    families = 3 + (claim is not None)
    n_tests = len(grid) * families
    gamma = (1 - Fraction(confidence)) / n_tests
    level = float(gamma)
    order = np.argsort(-s, kind="stable")  # depends on the scores only
    ranked = inc[order]
    curve = None if claim is None else claim.tradeoff
    counts = [(k_in, k_out, int(ranked[:k_in].sum()) + (int((~ranked[m - k_out:]).sum()) if k_out else 0))
              for k_in, k_out in grid]
    ks = np.array([a + b for a, b, _ in counts])
    cs = np.array([c for _, _, c in counts])
    eps_fdp = fdp.epsilon_screen(ks, cs, m, delta, level)
    mu_fdp = fdp.mu_screen(ks, cs, m, level)
    rejected = None if curve is None else fdp.claim_rejected(ks, cs, m, level, curve)
    screened = [GuessTest(k_in, k_out, c, steinke.screen(k_in + k_out, c, m, delta, level), float(eps_fdp[j]),
                          float(mu_fdp[j]), None if rejected is None else bool(rejected[j]))
                for j, (k_in, k_out, c) in enumerate(counts)]
    tests = tuple(screened)
    # the headline values: the best screened candidates, each re-checked rigorously (a failed check
    # falls to the next candidate); any value a test rejects is a bound (module docstrings)
    eps, eps_test, method = 0.0, None, None
    candidates = ([(t.epsilon_steinke, "steinke", t) for t in tests]
                  + [(t.epsilon_fdp, "fdp", t) for t in tests])
    for value, name, t in sorted(candidates, key=lambda x: -x[0]):
        if value <= eps:
            break
        if name == "steinke":
            got = steinke.certify(t.guesses, t.correct, m, delta, gamma, value)
        else:
            got = fdp.epsilon_certify(t.guesses, t.correct, m, delta, level, value)
        if got > eps:
            eps, eps_test, method = got, t, name
    mu, mu_test = 0.0, None
    for t in sorted(tests, key=lambda t: -t.mu_fdp):
        if t.mu_fdp <= mu:
            break
        got = fdp.mu_certify(t.guesses, t.correct, m, level, t.mu_fdp)
        if got > mu:
            mu, mu_test = got, t
    gdp_eps = GDP(mu).epsilon(delta) if mu > 0.0 and delta > 0.0 else (math.inf if mu > 0.0 else 0.0)
    refuted = None if claim is None else any(bool(t.claim_rejected) for t in tests)
    notes = []
    if not 0 < int(inc.sum()) < m:
        notes.append("every canary has the same coin: no guess can be informative")
    return OneRunReport(m, int(inc.sum()), confidence, delta, eps, method, mu, gdp_eps,
                        eps_test if eps_test is not None else mu_test, tests, n_tests,
                        level, claim, refuted, time.perf_counter() - t0, tuple(notes))
