"""Benchmark: audit correct and deliberately buggy mechanisms; print verdicts and lower bounds.

Run ``python benchmarks/audit.py [--samples N] [--seeds K]``. Each case has a known verdict; the
table shows, per case, the verdict, epsilon_lower (mu_lower for GDP claims) against the true value,
samples per input and seconds.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from accountant import GDP, PureDP
from verify import audit
from verify.examples import ScalarLaplace, cases, textbook_laplace


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--only", default=None, help="substring of the case names to run")
    ap.add_argument("--no-speed", action="store_true", help="skip the speed measurements")
    args = ap.parse_args(argv)
    header = (f"{'mechanism':42} {'claim':>9} {'known':>7} {'verdict':>9} {'lower bound':>12} "
              f"{'true':>7} {'ratio':>6} {'samples':>9} {'s':>6}")
    print(header)
    print("-" * len(header))
    wrong = 0
    for case in cases():
        if args.only and args.only not in case.name:
            continue
        for seed in range(args.seeds):
            t0 = time.perf_counter()
            r = audit(case.mechanism, case.pairs, case.claim, samples=args.samples,
                      confidence=args.confidence, seed=seed)
            secs = time.perf_counter() - t0
            gdp = isinstance(case.claim, GDP)
            lower = r.mu_lower if gdp else r.epsilon_lower
            true = case.true_mu if gdp else case.true_eps
            ratio = "" if true is None or not math.isfinite(true) or true == 0 else f"{lower / true:.3f}"
            true_s = "?" if true is None else f"{true:.3g}"
            verdict = "VIOLATION" if r.violation else "pass"
            known = "buggy" if case.buggy else "correct"
            wrong += r.violation != case.buggy
            lb = f"{'mu' if gdp else 'eps'}>={lower:.4g}"
            print(f"{case.name:42} {case.claim!s:>9} {known:>7} {verdict:>9} {lb:>12} {true_s:>7} "
                  f"{ratio:>6} {args.samples:>9} {secs:6.2f}")
            sys.stdout.flush()
    print(f"\nverdicts different from the known one: {wrong}")
    if not args.no_speed:
        speed(args.samples)
    return 0 if wrong == 0 else 1


def speed(samples: int) -> None:
    """End-to-end draws per second for a vectorised mechanism, and the overhead of the audit beyond
    the calls themselves for a plain scalar callable."""
    mech = ScalarLaplace(1.0)
    t0 = time.perf_counter()
    audit(mech, [(0.0, 1.0)], PureDP(1.0), samples=samples, seed=0)
    t = time.perf_counter() - t0
    print(f"vectorised Laplace: {2 * samples / t:,.0f} draws/s end to end (one process)")
    n = min(samples, 200_000)
    rng = np.random.default_rng(0)
    audit(textbook_laplace, [(0.0, 1.0)], PureDP(1.0), samples=1000, seed=1)  # warm up
    t0 = time.perf_counter()
    for x in (0.0, 1.0):
        _ = [textbook_laplace(x, rng) for _ in range(n)]
    t_calls = time.perf_counter() - t0
    t0 = time.perf_counter()
    audit(textbook_laplace, [(0.0, 1.0)], PureDP(1.0), samples=n, seed=0)
    t_audit = time.perf_counter() - t0
    print(f"scalar callable, {n} draws per input: calls {t_calls:.2f} s, audit {t_audit:.2f} s, "
          f"overhead {100 * (t_audit / t_calls - 1):.0f}%")


if __name__ == "__main__":
    raise SystemExit(main())
