"""Audit of the one-shot private M-estimator (``mechanisms.OneShotMEstimator``, Huber location, c = 1.345,
scale 1) against the (eps, delta) its asymptotic theorem states, at several n.

Its guarantee is an ``AsymptoticDP``: the audit tests its ``hypothesis()`` (an ``ApproxDP``) with
``verify.audit`` (the mechanism's exact ``privacy_loss`` included), at confidence 0.95. Two pairs
of neighbouring datasets (replace-one) per n:

- typical: x = a N(0, 1) sample (seeded), x' = x with the record nearest the M-estimate replaced by
  10 (an outlier: T(F_n) moves by about c/(n M_n), M_n drops by 1/n);
- adversarial: two records at 0, the others at +-50 (half each side), and x' with one of the two
  central records moved to 50: M_n halves, so the noise scale doubles.

Columns: n, pair, the noise sd on x and x', the audit's epsilon lower bound at the claimed delta,
and its verdict ("violation" = the claim is refuted at 95%).

    python -m benchmarks.one_shot_audit [--samples 200000] [--eps 1] [--delta 1e-5] [--ns 20,50,200,1000]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from mechanisms import HuberLocation, OneShotMEstimator
from verify import audit


def typical_pair(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.random.default_rng(seed).standard_normal(n)
    mech = OneShotMEstimator(HuberLocation(), n, 1.0, 1e-5)
    theta = float(mech.fit(x)[0][0])
    x2 = x.copy()
    x2[int(np.argmin(np.abs(x - theta)))] = 10.0
    return x, x2


def adversarial_pair(n: int) -> tuple[np.ndarray, np.ndarray]:
    side = (n - 2) // 2
    x = np.concatenate([np.full(side, -50.0), np.zeros(n - 2 * side), np.full(side, 50.0)])
    x2 = x.copy()
    x2[side] = 50.0
    return x, x2


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=200_000)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--ns", default="20,50,200,1000")
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args(argv)
    ns = [int(v) for v in a.ns.split(",")]
    print(f"One-shot M-estimator (Huber location, c = 1.345), claimed ~({a.eps:g}, {a.delta:g})-DP "
          f"(asymptotic); audit: {a.samples} draws per input, confidence 0.95, seed {a.seed}\n")
    print("| n | pair | noise sd (x) | noise sd (x') | eps lower bound at delta | verdict | seconds |")
    print("|---:|---|---:|---:|---:|---|---:|")
    for n in ns:
        mech = OneShotMEstimator(HuberLocation(), n, a.eps, a.delta)
        for name, (x, x2) in (("typical", typical_pair(n, a.seed + n)), ("adversarial", adversarial_pair(n))):
            t0 = time.perf_counter()
            rep = audit(mech, [(x, x2)], mech.guarantee().hypothesis(), samples=a.samples, seed=a.seed,
                        floating_point=False)
            verdict = "violation" if rep.violation else "holds (not refuted)"
            print(f"| {n} | {name} | {mech.scale(x):.4g} | {mech.scale(x2):.4g} | {rep.epsilon_lower:.3f} | "
                  f"{verdict} | {time.perf_counter() - t0:.1f} |")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
