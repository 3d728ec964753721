"""Accuracy of the vector smooth-sensitivity release, local-DP noisy gradient descent and the
winsorised subsample-and-aggregate aggregator, each beside its natural alternative.

1. ``coordinate_quantile_release`` (the coordinate-wise median, one (eps, delta) release in p
   dimensions) against p scalar ``SmoothSensitivityMedian`` releases at (eps/p, delta/p) each (basic
   composition): L2 error over the releases, data N(1/2, 0.1^2 I_p) clipped to [0, 1]^p.
2. ``LocalNoisyGD`` (every user randomises their own gradient) against the central ``NoisyGD`` at the
   same mu and K = ceil(3 log n) iterations, on a Huber regression (p = 2, design uniform in the unit
   disc, step 1); the local error over the slides' rate ``local_noisy_gd_rate`` (constant 1).
3. ``WinsorisedMean`` against ``trimmed_mean_aggregator`` (trim 0.1), both PureDP(eps) on m block
   values in [-2, 4] (block means of N(1, 1) data, blocks of 100: values N(1, 0.01), drawn directly).

    python -m benchmarks.estimator_pieces [--quick]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from accountant import PureDP
from mechanisms import (
    HuberRegression,
    LocalNoisyGD,
    NoisyGD,
    SmoothSensitivityMedian,
    WinsorisedMean,
    coordinate_quantile_release,
    default_iterations,
    fit_nonprivate,
)
from mechanisms.estimators import local_noisy_gd_rate, trimmed_mean_aggregator

EPS, DELTA = 1.0, 1e-6


def rmse(errors: np.ndarray) -> tuple[float, float]:
    """Root mean square of the rows' L2 norms and its Monte-Carlo standard error (delta method)."""
    sq = np.sum(errors**2, axis=1) if errors.ndim > 1 else errors**2
    m = float(sq.mean())
    return math.sqrt(m), float(sq.std(ddof=1) / math.sqrt(sq.size) / (2 * math.sqrt(m)))


def vector_smooth(quick: bool) -> None:
    print("### Vector smooth sensitivity: coordinate-wise median\n")
    print("| p | n | vector S/alpha | vector RMSE | p scalar releases RMSE | ratio | non-private |")
    print("|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(1)
    reps = 20 if quick else 100
    for p in (2, 10):
        for n in ((1000, 10_000) if quick else (1000, 10_000, 100_000)):
            x = np.clip(rng.normal(0.5, 0.1, size=(n, p)), 0.0, 1.0)
            med = np.sort(x, axis=0)[math.ceil(n / 2) - 1]
            vec = coordinate_quantile_release(0.0, 1.0, n, p, EPS, DELTA)
            out = vec.sample(x, rng, size=reps)
            scalar = SmoothSensitivityMedian(0.0, 1.0, n, EPS / p, DELTA / p)
            scal = np.stack([scalar.sample(x[:, j], rng, size=reps) for j in range(p)], axis=1)
            (rv, ev), (rs, es) = rmse(out - med), rmse(scal - med)
            print(f"| {p} | {n} | {vec.noise_scale(x):.3g} | {rv:.3g} ± {ev:.1g} | {rs:.3g} ± {es:.1g} | "
                  f"{rv / rs:.2f} | {float(np.linalg.norm(med - 0.5)):.2g} |")
    print()


def local_gd(quick: bool) -> None:
    print("### Local-DP noisy gradient descent: Huber regression, p = 2, mu = 1, K = ceil(3 log n)\n")
    print("| n | K | local error | central NoisyGD error | local / central | slides' rate | local / rate |")
    print("|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(2)
    model = HuberRegression(2, design_bound=1.0)
    reps = 4 if quick else 6
    for n in ((500, 2000) if quick else (500, 2000, 8000)):
        k = default_iterations(n, "gd")
        ang = rng.uniform(0, 2 * np.pi, (reps, n))
        rad = np.sqrt(rng.uniform(0, 1, (reps, n)))
        x = np.stack([rad * np.cos(ang), rad * np.sin(ang)], -1)
        y = x @ np.array([0.5, -0.5]) + rng.normal(0, 0.5, (reps, n))
        hat = fit_nonprivate(model, x, y)
        local = LocalNoisyGD(model, n, 1.0, k).fit_batch(x, y, rng)
        central = NoisyGD(model, n, 1.0, k).fit_batch(x, y, rng).estimates
        (rl, el), (rc, ec) = rmse(local - hat), rmse(central - hat)
        rate = local_noisy_gd_rate(n, 2, model.grad_bound, 1.0).value
        print(f"| {n} | {k} | {rl:.3g} ± {el:.1g} | {rc:.3g} ± {ec:.1g} | {rl / rc:.0f} | {rate:.3g} | "
              f"{rl / rate:.2f} |")
    print()


def winsorised(quick: bool) -> None:
    print("### Winsorised against trimmed aggregator: m block values N(1, 0.01) in [-2, 4], eps = 1\n")
    print("| m | winsorised RMSE | trimmed (0.1) RMSE | winsorised / trimmed | non-private |")
    print("|---|---|---|---|---|")
    rng = np.random.default_rng(3)
    reps = 100 if quick else 300
    for m in ((100, 1000) if quick else (100, 300, 1000, 10_000)):
        v = rng.normal(1.0, 0.1, size=m)
        w = WinsorisedMean(-2.0, 4.0, m, EPS).sample(v, rng, size=reps)
        t = np.asarray(trimmed_mean_aggregator(-2.0, 4.0, m, 0.1, PureDP(EPS)).sample(v, rng, size=reps),
                       dtype=float)
        (rw, ew), (rt, et) = rmse(w - 1.0), rmse(t - 1.0)
        print(f"| {m} | {rw:.3g} ± {ew:.1g} | {rt:.3g} ± {et:.1g} | {rw / rt:.2f} | "
              f"{abs(v.mean() - 1):.2g} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer settings and replications")
    args = parser.parse_args()
    t0 = time.perf_counter()
    vector_smooth(args.quick)
    local_gd(args.quick)
    winsorised(args.quick)
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
