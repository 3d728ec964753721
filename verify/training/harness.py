"""Canary audits of a training procedure: ``canary_audit(train, score, canaries, rng, ...)``.

The harness draws one fair coin per canary from the caller's ``numpy.random.Generator`` (recorded
in the report), adds the included canaries to the training data, trains, scores every canary with
the trained model and hands the scores and coins to ``one_run_audit``. With ``runs=R > 1`` it
repeats this R times with fresh coins and pools the R m guesses: the R runs together are one
mechanism whose records are the R m coins, each coin changes one run's dataset only, so the pooled
mechanism is exactly as private per coin as one run and the one-run tests apply with m := R m.

With a ``claim`` (the guarantee the trainer's accountant certifies for one run), the report puts
the audit's lower bound (valid at ``confidence``) beside the accountant's upper bound
``claim.epsilon(delta)`` and names the gap between them; the claim's trade-off curve is also
tested (refuted or not).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from accountant import Guarantee
from accountant.core.types import FloatArray
from accountant.core.validation import check_count, check_real

from .one_run import OneRunReport, one_run_audit

__all__ = ["CanaryAuditReport", "alignment_score", "canary_audit", "loss_score"]

Train = Callable[[Any, np.random.Generator], Any]
Score = Callable[[Any, Any], float]
Combine = Callable[[Any, Sequence[Any]], Any]


@dataclass(frozen=True)
class CanaryAuditReport:
    """The one-run report on the canaries' scores, the coins and scores themselves, and the
    accountant's upper bound beside the audit's lower bound (``epsilon_upper``, ``gap``)."""

    audit: OneRunReport
    included: tuple[bool, ...]
    scores: tuple[float, ...]
    runs: int
    claim: Guarantee | None
    #: the accountant's certified epsilon at the audit's delta (None without a claim)
    epsilon_upper: float | None
    seconds: float

    @property
    def epsilon_lower(self) -> float:
        return self.audit.epsilon_lower

    @property
    def gap(self) -> float | None:
        """epsilon_upper - epsilon_lower: how much of the certified budget the audit leaves
        unexplained (negative when the audit refutes the accountant)."""
        return None if self.epsilon_upper is None else self.epsilon_upper - self.audit.epsilon_lower

    @property
    def refuted(self) -> bool:
        """True when the audit contradicts the claim: a lower bound above the certified epsilon,
        or the claim's trade-off curve rejected (both at ``confidence``)."""
        above = self.epsilon_upper is not None and self.audit.epsilon_lower > self.epsilon_upper
        return above or bool(self.audit.claim_refuted)

    def __str__(self) -> str:
        a = self.audit
        lines = [f"canary audit: {a.m} canaries over {self.runs} run(s), confidence {a.confidence:g}",
                 f"  audit (lower bound):        epsilon >= {a.epsilon_lower:.4g} at delta = {a.delta:g}"
                 f"   (mu >= {a.mu_lower:.4g})"]
        if self.epsilon_upper is not None:
            gap = self.epsilon_upper - a.epsilon_lower
            lines.append(f"  accountant (upper bound):   epsilon <= {self.epsilon_upper:.4g}   "
                         f"({self.claim})")
            lines.append(f"  gap (upper - lower): {gap:.4g}"
                         + (" -- the lower bound exceeds the certified epsilon" if gap < 0 else ""))
            lines.append("  claim's trade-off curve: " + ("REFUTED" if a.claim_refuted else "not refuted"))
            lines.append("  verdict: " + ("the audit REFUTES the accountant's claim" if self.refuted
                                          else "consistent (the true epsilon lies between the bounds)"))
        lines.append(f"  guesses: {a.correct} correct of {a.guesses}; {a.n_tests} tests (Bonferroni); "
                     f"{self.seconds:.2f} s")
        return "\n".join(lines)


def _default_combine(data: Any, canaries: Sequence[Any]) -> Any:
    if data is None:
        return list(canaries) if not isinstance(canaries, np.ndarray) else canaries
    if isinstance(data, np.ndarray):
        extra = np.asarray(canaries, dtype=data.dtype).reshape((-1, *data.shape[1:]))
        return np.concatenate([data, extra])
    return list(data) + list(canaries)


def canary_audit(train: Train, score: Score, canaries: Sequence[Any] | NDArray[Any],
                 rng: np.random.Generator, *, data: Any = None, combine: Combine | None = None,
                 claim: Guarantee | None = None,
                 delta: float = 0.0, confidence: float = 0.95, runs: int = 1,
                 guesses: Sequence[tuple[int, int]] | None = None) -> CanaryAuditReport:
    """Audit ``train`` with the m = len(canaries) canaries (module docstring).

    ``train(dataset, rng) -> model`` trains on ``combine(data, included_canaries)`` (default: the
    arrays concatenated, or the lists joined); ``score(model, canary) -> float`` is higher for a
    canary more likely included (see ``loss_score``, ``alignment_score``); ``rng`` draws the coins
    and seeds each run. ``claim``: the guarantee the trainer claims for one run (its epsilon at
    ``delta`` is the accountant's upper bound, its trade-off curve is tested)."""
    t0 = time.perf_counter()
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    if not callable(train) or not callable(score):
        raise TypeError("train and score must be callables")
    if isinstance(canaries, (str, bytes)) or not isinstance(canaries, (Sequence, np.ndarray)):
        raise TypeError(f"canaries must be a sequence or an array of canaries, got {type(canaries).__name__}")
    m = len(canaries)
    if m < 2:
        raise ValueError(f"canaries must hold m >= 2 canaries, got m = {m}")
    runs = check_count("runs", runs, low=1, high=10**5)
    if claim is not None and not isinstance(claim, Guarantee):
        raise TypeError(f"claim must be an accountant Guarantee, got {type(claim).__name__}")
    delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    merge = _default_combine if combine is None else combine
    all_inc: list[bool] = []
    all_scores: list[float] = []
    for _ in range(runs):
        coins = rng.integers(0, 2, size=m).astype(bool)  # each exactly 1/2
        chosen = [canaries[int(i)] for i in np.flatnonzero(coins)]
        model = train(merge(data, chosen), rng)
        all_scores.extend(float(score(model, c)) for c in canaries)
        all_inc.extend(bool(b) for b in coins)
    report = one_run_audit(np.asarray(all_scores), np.asarray(all_inc), delta, confidence, claim=claim,
                           guesses=guesses)
    upper = None if claim is None else claim.epsilon(delta)
    return CanaryAuditReport(report, tuple(all_inc), tuple(all_scores), runs, claim, upper,
                             time.perf_counter() - t0)


def loss_score(loss: Callable[[Any, Any], float]) -> Score:
    """The score -loss(model, canary): a canary seen in training tends to have a lower loss."""
    return lambda model, canary: -float(loss(model, canary))


def alignment_score(direction: Callable[[Any], FloatArray], start: FloatArray | None = None) -> Score:
    """The score <theta_0 - theta, direction(canary)>: how far the trained parameters moved along
    the canary's gradient direction (a gradient step moves against the gradient). ``start`` is
    theta_0 (zeros by default); the model must be (convertible to) the parameter vector."""
    def score(model: Any, canary: Any) -> float:
        theta = np.asarray(model, dtype=np.float64)
        base = np.zeros_like(theta) if start is None else np.asarray(start, dtype=np.float64)
        return float(np.dot(base - theta, np.asarray(direction(canary), dtype=np.float64)))
    return score
