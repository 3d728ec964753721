"""Benchmark: the adaptive neighbour search, hill climbing against the DP-Finder-style surrogate.

Run ``python -m benchmarks.audit_search [--samples N] [--seeds K] [--budget B]`` (or the ``search``
section of ``benchmarks/audit.py``). Each buggy structured case is audited with
``AdaptiveSearch(..., method="climb")`` and ``method="surrogate"`` at the same budget of
estimates, so both draw the same number of samples (the ``samples`` column: exploration, selection
and evaluation draws in all); the table shows the verdict and the lower bound each finds, per seed,
and a summary of the mean lower bound per case and method. A correct sparse vector is audited
too (no violation expected from either).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from fractions import Fraction
from typing import Any

import numpy as np

from accountant import PureDP
from mechanisms import Domain
from mechanisms.samplers import discrete_laplace_array
from tests.support.audit_fixtures import NoiselessPTRMode, TopKReusingNoise
from verify import audit
from verify.examples import SparseVector
from verify.neighbours import AdaptiveSearch


class VectorSum:
    """Sum of n integer records in {0, 1}^3 plus exact discrete Laplace noise per coordinate for L1
    sensitivity 1 (the dimension forgotten: true eps 3 on opposite corners), claimed 1-DP."""

    def sample(self, data: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        x = np.clip(np.round(np.asarray(data, dtype=np.float64)), 0, 1).reshape(-1, 3)
        return x.sum(axis=0) + discrete_laplace_array(rng, Fraction(1), (size or 1, 3))


def search_cases() -> list[tuple[str, Any, Any, bool, float | None]]:
    """(name, mechanism, AdaptiveSearch keyword arguments, buggy, true eps)."""
    svt = {"domain": (-1.0, 2.0, 10), "adjacency": "answers"}
    return [
        ("noiseless-test PTR", NoiselessPTRMode(), {"domain": (0, 10, 100), "integers": True}, True,
         math.inf),
        ("top-k reusing noise", TopKReusingNoise(1.0, 2), {"domain": (0, 10, 5), "adjacency": "answers"},
         True, None),
        ("svt no query noise (Alg. 5)", SparseVector(1.0, variant="no_query_noise"), svt, True, math.inf),
        ("svt no halting (Alg. 6)", SparseVector(1.0, variant="no_halting"), svt, True, math.inf),
        ("svt unscaled noise (Alg. 4) c=3", SparseVector(1.0, c=3, variant="unscaled_query_noise"), svt,
         True, (1 + 6 * 3) / 4),
        ("svt no threshold noise", SparseVector(1.0, variant="no_threshold_noise"), svt, True, None),
        ("svt noisy answers (Alg. 3, NaN array)", SparseVector(1.0, variant="noisy_answer"), svt, True, None),
        ("vector sum, dimension forgotten (d=3)", VectorSum(), {"domain": Domain(0, 1, n=10, d=3),
                                                               "integers": True}, True, 3.0),
        ("svt correct (Alg. 1)", SparseVector(1.0), svt, False, 1.0),
    ]


def search_section(samples: int, seeds: int, confidence: float, budget: int = 48, first_seed: int = 0) -> int:
    """Print the comparison; return the number of verdicts different from the known one."""
    header = (f"{'search comparison':40} {'method':>9} {'seed':>4} {'verdict':>9} {'eps lower':>10} "
              f"{'true':>6} {'samples':>11} {'s':>7}")
    print("\n" + header + "\n" + "-" * len(header))
    wrong = 0
    summary: dict[tuple[str, str], list[float]] = {}
    for name, mech, kw, buggy, true in search_cases():
        for method in ("climb", "surrogate"):
            search = AdaptiveSearch(budget=budget, method=method, **kw)
            for seed in range(first_seed, first_seed + seeds):
                t0 = time.perf_counter()
                r = audit(mech, search, PureDP(1.0), samples=samples, confidence=confidence, seed=seed,
                          vectorised=True, floating_point=False)
                secs = time.perf_counter() - t0
                wrong += r.violation != buggy
                summary.setdefault((name, method), []).append(r.epsilon_lower)
                true_s = "?" if true is None else f"{true:.3g}"
                print(f"{name:40} {method:>9} {seed:>4} {'VIOLATION' if r.violation else 'pass':>9} "
                      f"{r.epsilon_lower:10.4g} {true_s:>6} {r.samples_total:>11} {secs:7.1f}")
                sys.stdout.flush()
    print(f"\n{'mean eps lower over seeds':40} {'climb':>10} {'surrogate':>10} {'ratio':>7}")
    for name, *_ in search_cases():
        c, s = np.mean(summary[(name, "climb")]), np.mean(summary[(name, "surrogate")])
        ratio = f"{s / c:.3f}" if c > 0 else "-"
        print(f"{name:40} {c:10.4g} {s:10.4g} {ratio:>7}")
    return wrong


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--samples", type=int, default=200_000)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--budget", type=int, default=48)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--only", default=None, help="comma-separated substrings of the case names to run")
    args = ap.parse_args(argv)
    if args.only:
        keep = [c for c in search_cases() if any(o in c[0] for o in args.only.split(","))]
        globals()["search_cases"] = lambda: keep
    wrong = search_section(args.samples, args.seeds, args.confidence, args.budget, args.first_seed)
    print(f"\nverdicts different from the known one: {wrong}")
    return 0 if wrong == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
