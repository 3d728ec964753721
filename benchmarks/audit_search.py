"""Benchmark: the adaptive neighbour search, hill climbing against the DP-Finder-style surrogate.

Run ``python -m benchmarks.audit_search [--samples N] [--seeds K] [--budget B]`` (or the ``search``
section of ``benchmarks/audit.py``; its ``search-cost`` section runs ``cost_section``: the audit
with the default search against the witness audit on the known worst pairs, time and bounds).
Each buggy structured case is audited with
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

from accountant import GDP, ZCDP, PureDP
from mechanisms import Domain
from mechanisms.samplers import discrete_laplace_array
from tests.support.audit_fixtures import (
    ClipAfterSumStep,
    GaussianHistogram,
    NoiselessPTRMode,
    TopKReusingNoise,
)
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


class NoisyTotal:
    """The total of one answer vector in R^d plus Laplace(1) noise, claimed 1-DP: calibrated to an
    l1 sensitivity of 1 while the answers are declared to move within the l2 ball of radius 1, so
    the total moves by up to sqrt(d) (true eps 2 at d = 4, on the all-ones direction only)."""

    def sample(self, data: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        return float(np.sum(data)) + rng.laplace(0.0, 1.0, size or 1)


def cost_cases() -> list[tuple[str, Any, Any, list[tuple[Any, Any]], dict[str, Any], str, float]]:
    """(name, mechanism, claim, known worst pairs, AdaptiveSearch keyword arguments, the bound
    compared ("eps" or "mu"), its true value)."""
    hist = GaussianHistogram(sigma=2.0, bins=3)
    step = ClipAfterSumStep(sigma=2.0, clip=1.0, d=2)
    ones = np.full((1, 4), 0.25)  # all-ones difference of l2 norm 1, about the centre of the box
    return [
        ("noisy total, l2 answers (d=4)", NoisyTotal(), PureDP(1.0), [(-ones, ones)],
         {"domain": Domain(-5.0, 5.0, n=1, d=4), "adjacency": "answers", "norm": "l2"}, "eps", 2.0),
        ("3-bin Gaussian histogram, zCDP claim", hist, ZCDP(1 / 8),
         [(np.zeros(10), np.r_[np.zeros(9), 1.0])], {"domain": (0, 2, 10), "integers": True}, "mu",
         math.sqrt(2) / 2),
        ("DP-SGD step, clip after sum (d=2)", step, GDP(0.5),
         [(np.array([[-0.85, -0.85], [2.5, 2.5]]), np.array([[-0.85, -0.85]]))],
         {"domain": Domain(-2.5, 2.5, n=2, d=2, adjacency="add_remove")}, "mu", 1.5),
    ]


def cost_section(samples: int, seeds: int, confidence: float, only: str | None = None) -> None:
    """Per target and seed: the witness audit (the known worst pairs, fixed) and the audit with
    ``AdaptiveSearch`` (default budget and keep, hill climbing) at the same samples per input, run
    one after the other on the same seed (so both see the same load on a shared machine): the CPU
    time of each (``time.process_time``: one process, no workers), their ratio, and the bound each
    reaches; then per target the medians over seeds, the ratio of the median times and the median
    of the per-seed ratios (each seed's two audits share the machine's load)."""
    header = (f"{'search cost':38} {'seed':>4} {'witness s':>9} {'search s':>9} {'ratio':>6} "
              f"{'bound':>5} {'witness':>8} {'search':>8} {'search/witness':>14} {'true':>6}")
    print("\n" + header + "\n" + "-" * len(header))
    summary = []
    for name, mech, claim, worst, kw, bound, true in cost_cases():
        if only is not None and not any(o in name for o in only.split(",")):
            continue
        tw, ts, bw, bs = [], [], [], []
        for seed in range(seeds):
            opts: dict[str, Any] = {"samples": samples, "confidence": confidence, "seed": seed,
                                    "vectorised": True, "floating_point": False}
            t0 = time.process_time()
            w = audit(mech, worst, claim, **opts)
            t1 = time.process_time()
            s = audit(mech, AdaptiveSearch(**kw), claim, **opts)
            t2 = time.process_time()
            tw.append(t1 - t0)
            ts.append(t2 - t1)
            bw.append(w.epsilon_lower if bound == "eps" else w.mu_lower)
            bs.append(s.epsilon_lower if bound == "eps" else s.mu_lower)
            print(f"{name:38} {seed:>4} {tw[-1]:9.2f} {ts[-1]:9.2f} {ts[-1] / tw[-1]:6.2f} {bound:>5} "
                  f"{bw[-1]:8.4g} {bs[-1]:8.4g} {bs[-1] / bw[-1]:14.3f} {true:6.4g}")
            sys.stdout.flush()
        summary.append((name, float(np.median(tw)), float(np.median(ts)),
                        float(np.median(np.array(ts) / np.array(tw))), float(np.median(bw)),
                        float(np.median(bs))))
    print(f"\n{'median over seeds':38} {'samples':>8} {'witness s':>9} {'search s':>9} {'ratio':>6} "
          f"{'paired':>6} {'bound witness':>13} {'bound search':>12}")
    for name, mw, ms, paired, bw_, bs_ in summary:
        print(f"{name:38} {samples:>8} {mw:9.2f} {ms:9.2f} {ms / mw:6.2f} {paired:6.2f} {bw_:13.4g} "
              f"{bs_:12.4g}")
    print("(ratio: of the median times; paired: the median of the per-seed ratios)")


def reach_section(seeds: int = 8) -> None:
    """The fraction of the known worst loss the search reaches with the exact loss of each pair as
    its estimate and with seeded Gaussian noise of sd 0.05 on it (the minimum over ``seeds``), at the
    default budget: the vector-answer targets of ``tests/support/answer_targets.py`` (d =
    4, one answer) and the clip-after-sum step (``ClipAfterSumStep.mu``, worst 3 / sigma)."""
    from tests.support import answer_targets as answers

    targets: list[tuple[str, AdaptiveSearch, Any, AdaptiveSearch, float]] = []
    for name, (norm, loss, worst, _) in sorted(answers.CASES.items()):
        targets.append((f"{name} ({norm})", AdaptiveSearch(answers.DOMAIN, "answers", norm=norm), loss,
                        AdaptiveSearch(answers.DOMAIN, "answers", norm=norm, method="surrogate"), worst))
    step = ClipAfterSumStep(sigma=2.0, clip=1.0, d=2)
    dom = Domain(-2.5, 2.5, n=2, d=2, adjacency="add_remove")
    targets.append(("clip after sum, mu (add_remove)", AdaptiveSearch(dom), step.mu,
                    AdaptiveSearch(dom, method="surrogate"), 3.0 / step.sigma))
    header = (f"{'reached fraction of the worst (min over seeds)':48} {'climb':>6} {'climb+noise':>11} "
              f"{'surrogate':>9} {'surr.+noise':>11}")
    print("\n" + header + "\n" + "-" * len(header))
    for name, climb, loss, surrogate, worst in targets:
        cells = []
        for search in (climb, surrogate):
            for noise in (0.0, 0.05):
                reached = []
                for seed in range(seeds):
                    noise_rng = np.random.default_rng(100 + seed)

                    def estimate(cands: Any, loss: Any = loss, noise: float = noise,
                                 noise_rng: np.random.Generator = noise_rng) -> list[float]:
                        return [loss(x, x2) + noise * float(noise_rng.normal()) for x, x2 in cands]

                    found = search.search(estimate, np.random.default_rng(seed))
                    reached.append(max(loss(x, x2) for x, x2 in found) / worst)
                cells.append(min(reached))
        print(f"{name:48} {cells[0]:6.3f} {cells[1]:11.3f} {cells[2]:9.3f} {cells[3]:11.3f}")
        sys.stdout.flush()


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
