"""Private inference benchmark: coverage of GDP confidence intervals, noisy GD vs noisy Newton, DP-SGD.

(1) Coverage of nominal 95% intervals over ``--reps`` replications (default 1000) for Huber location
    (p = 1) and Huber regression with Mallows weights (p in {2, 5}), n in {1e3, 1e4}, mu in {0.5, 1},
    by noisy GD and noisy Newton (each with the private sandwich at mu: sqrt(3) mu-GDP for the
    continuous noise; the declared guarantee is printed): corrected intervals (V/n + C), naive ones
    (V/n), and the non-private sandwich interval at the M-estimate; width relative to the non-private
    one. Coverage is the share of (replication, coordinate) intervals containing the truth, with a
    95% Clopper-Pearson bracket.
(2) Noisy GD vs noisy Newton at equal budget (mu-GDP nominal, the noise per step grows with K):
    error to the non-private M-estimate and to the truth against K.
(3) DP-SGD logistic regression at eps in {1, 3, 8} (delta = 1e-5): test accuracy against the
    non-private clipped-likelihood fit, and examples per second per core. Opacus is not installed
    here (and not a dependency): no comparison with it is made.

Data: y = x^T beta + u, x = (1, z), z ~ N(0, I_{p-1}), u ~ N(0, 1), beta_j = (-1)^j / j; location:
y ~ N(0.5, 1). Start theta_0 = 0; K by ``default_iterations``; GD step 1.5/Bbar, Newton step 1.
Replications are vectorised in chunks (``--chunk``). Run with ``nice -n 10``.

    python -m benchmarks.inference [--reps 1000] [--only coverage|compare|dpsgd] [--quick]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Any

import numpy as np
from scipy import stats

from accountant import ApproxDP
from mechanisms import (
    BoundedPsiModel,
    HuberLocation,
    HuberRegression,
    NoisyGD,
    NoisyNewton,
    default_iterations,
    fit_nonprivate,
)

Z95 = float(stats.norm.ppf(0.975))


def design(rng: np.random.Generator, r: int, n: int, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if p == 1:
        truth = np.array([0.5])
        return np.ones((r, n, 1)), truth + rng.standard_normal((r, n)), truth
    truth = np.array([(-1.0) ** j / (j + 1) for j in range(p)])
    x = np.concatenate([np.ones((r, n, 1)), rng.standard_normal((r, n, p - 1))], axis=2)
    return x, x @ truth + rng.standard_normal((r, n)), truth


def model_for(p: int) -> BoundedPsiModel:
    return HuberLocation() if p == 1 else HuberRegression(p, weights="mallows")


def nonprivate_cov(model: BoundedPsiModel, theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    m = model.mean_hessian(theta, x, y)
    q = model.mean_outer(theta, x, y)
    mi = np.linalg.inv(m)
    return np.asarray(mi @ q @ mi / x.shape[1])


def cp(k: int, m: int) -> tuple[float, float]:
    lo = 0.0 if k == 0 else float(stats.beta.ppf(0.025, k, m - k + 1))
    hi = 1.0 if k == m else float(stats.beta.ppf(0.975, k + 1, m - k))
    return lo, hi


def coverage_row(p: int, n: int, mu: float, method: str, reps: int, chunk: int, seed: int) -> dict[str, Any]:
    model = model_for(p)
    cls = NoisyGD if method == "gd" else NoisyNewton
    k = default_iterations(n, method)  # type: ignore[arg-type]
    step = 1.5 / model.hess_bound if method == "gd" else 1.0
    est = cls(model, n, mu, k, step, inference_mu=mu)
    rng = np.random.default_rng(seed)
    hits = {"corrected": 0, "naive": 0, "slides": 0, "nonprivate": 0}
    width = {"corrected": 0.0, "naive": 0.0}
    err = []
    t0 = time.perf_counter()
    done = 0
    while done < reps:
        r = min(chunk, reps - done)
        x, y, truth = design(rng, r, n, p)
        fit = est.fit_batch(x, y, rng)
        theta_hat = fit_nonprivate(model, x, y, np.broadcast_to(truth, (r, p)), iterations=8)
        se_np = np.sqrt(np.einsum("rjj->rj", nonprivate_cov(model, theta_hat, x, y)))
        hits["corrected"] += int(fit.covers(truth).sum())
        hits["naive"] += int(fit.covers(truth, naive=True).sum())
        assert fit.naive_covariances is not None
        # the slides' GD correction 8 eta^2 B^2 K/(n^2 mu^2) I (for Newton at eta = 1 the slides'
        # C_Newton is the propagated correction itself)
        extra = 2.0 * step**2 * est.sigma_gradient**2 if method == "gd" else 0.0
        se_sl = np.sqrt(np.einsum("rjj->rj", fit.naive_covariances) + extra)
        hits["slides"] += int((np.abs(fit.estimates - truth) <= Z95 * se_sl).sum()) if method == "gd" \
            else int(fit.covers(truth).sum())
        hits["nonprivate"] += int((np.abs(theta_hat - truth) <= Z95 * se_np).sum())
        assert fit.covariances is not None and fit.naive_covariances is not None
        width["corrected"] += float((np.sqrt(np.einsum("rjj->rj", fit.covariances)) / se_np).sum())
        width["naive"] += float((np.sqrt(np.einsum("rjj->rj", fit.naive_covariances)) / se_np).sum())
        err.append(np.linalg.norm(fit.estimates - theta_hat, axis=1))
        done += r
    m = reps * p
    return {"model": "location" if p == 1 else f"regression p={p}", "n": n, "mu": mu, "method": method,
            "K": k, "reps": reps, "guarantee": str(est.guarantee()),
            **{f"cov_{key}": v / m for key, v in hits.items()},
            "cp_corrected": cp(hits["corrected"], m),
            "width_corrected": width["corrected"] / m, "width_naive": width["naive"] / m,
            "err_median": float(np.median(np.concatenate(err))), "seconds": time.perf_counter() - t0}


def run_coverage(reps: int, chunk: int, quick: bool) -> None:
    print("(1) coverage of nominal 95% intervals (share of replication x coordinate intervals "
          "containing the truth; CP: 95% Clopper-Pearson bracket of the corrected coverage)")
    head = (f"{'model':<16}{'n':>7}{'mu':>5}{'meth':>7}{'K':>4}{'reps':>6}  {'corrected':>9} "
            f"{'CP bracket':>15} {'naive':>6} {'slides':>6} {'non-priv':>8}  {'width c/np':>10} "
            f"{'width n/np':>10} "
            f"{'|th-th^|':>9} {'sec':>6}  guarantee")
    print(head)
    print("-" * len(head))
    ns = (1000,) if quick else (10_000, 1000)
    seed = 0
    for n in ns:
        for p in (1, 2, 5):
            for mu in (0.5, 1.0):
                for method in ("gd", "newton"):
                    seed += 1
                    row = coverage_row(p, n, mu, method, reps, chunk, seed)
                    lo, hi = row["cp_corrected"]
                    print(f"{row['model']:<16}{n:>7}{mu:>5}{method:>7}{row['K']:>4}{reps:>6}  "
                          f"{row['cov_corrected']:>9.3f} [{lo:.3f}, {hi:.3f}] {row['cov_naive']:>6.3f} "
                          f"{row['cov_slides']:>6.3f} "
                          f"{row['cov_nonprivate']:>8.3f}  {row['width_corrected']:>10.2f} "
                          f"{row['width_naive']:>10.2f} {row['err_median']:>9.2e} {row['seconds']:>6.1f}  "
                          f"{row['guarantee']}", flush=True)


def run_compare(reps: int, chunk: int) -> None:
    p, n, mu = 5, 10_000, 1.0
    model = model_for(p)
    print(f"\n(2) noisy GD vs noisy Newton at equal budget (Huber regression p = {p}, n = {n}, mu = {mu}; "
          f"median over {reps} replications)")
    print(f"{'K':>4}  {'GD |th-th^|':>12} {'GD |th-b|':>10}  {'Newton |th-th^|':>15} {'Newton |th-b|':>13}")
    rng = np.random.default_rng(99)
    x, y, truth = design(rng, reps, n, p)
    theta_hat = fit_nonprivate(model, x, y, np.broadcast_to(truth, (reps, p)), iterations=12)
    np_err = float(np.median(np.linalg.norm(theta_hat - truth, axis=1)))
    print(f"{'--':>4}  non-private |th^-b| median {np_err:.2e}")
    for k in (1, 2, 3, 5, 8, 12, 20, 30, 50):
        out = []
        for cls, step in ((NoisyGD, 1.5 / model.hess_bound), (NoisyNewton, 1.0)):
            est = cls(model, n, mu, k, step)
            th = np.concatenate([est.fit_batch(x[i:i + chunk], y[i:i + chunk], rng).estimates
                                 for i in range(0, reps, chunk)])
            out += [float(np.median(np.linalg.norm(th - theta_hat, axis=1))),
                    float(np.median(np.linalg.norm(th - truth, axis=1)))]
        print(f"{k:>4}  {out[0]:>12.2e} {out[1]:>10.2e}  {out[2]:>15.2e} {out[3]:>13.2e}", flush=True)


def run_dpsgd(reps: int) -> None:
    from mechanisms import DPSGD, LogisticRegression

    n, p, delta = 20_000, 5, 1e-5
    print(f"\n(3) DP-SGD logistic regression (n = {n}, p = {p}, clip 1, Poisson rate 0.01, 1000 steps, "
          f"lr 2; accuracy on 20000 test points, mean over runs; |th-th^|: median distance to the "
          f"non-private fixed point of the same clipping; Opacus is not installed: no comparison with it; "
          f"ex/s/core: sampled examples processed per second, one process)")
    print(f"{'eps':>4} {'clipping':>10} {'sigma':>7} {'steps':>6} {'runs':>5}  {'declared eps':>12}  "
          f"{'acc DP-SGD':>10} {'acc non-priv':>12} {'|th-th^|':>9} {'ex/s/core':>10}")
    rng = np.random.default_rng(5)
    truth = np.array([0.5, -1.0, 1.0, 0.5, -0.5])
    model = LogisticRegression(p, clip=1.0, design_bound=math.sqrt(p))

    def data(r: int, m: int) -> tuple[np.ndarray, np.ndarray]:
        z = np.clip(rng.standard_normal((r, m, p - 1)) / math.sqrt(p - 1) * 1.5, -1.0, 1.0)
        x = np.concatenate([np.ones((r, m, 1)), z], axis=2)
        x = x / np.maximum(1.0, np.linalg.norm(x, axis=2, keepdims=True) / model.design_bound)
        yy = (rng.random((r, m)) < 1 / (1 + np.exp(-(x @ truth)))).astype(np.float64)
        return x, yy

    x, y = data(1, n)
    xt, yt = data(1, 20_000)
    # the non-private fixed points of the two clippings: the L2-clipped likelihood by Newton, the
    # coordinate-clipped one by full-batch gradient descent with negligible noise (sigma = 1e-4)
    hats = {"l2": fit_nonprivate(model, x, y, iterations=30)[0],
            "coordinate": DPSGD(model, n, 1e-4, 1.0, 3000, 2.0).run(x[0], y[0], rng)}

    def acc(th: np.ndarray) -> float:
        return float(np.mean(((xt[0] @ th) > 0) == (yt[0] == 1)))

    for eps in (1.0, 3.0, 8.0):
        for clipping in ("coordinate", "l2"):
            est = DPSGD.calibrated(model, n, ApproxDP(eps, delta), sampling_rate=0.01, steps=1000,
                                   learning_rate=2.0, clipping=clipping, rtol=1e-3 if clipping == "coordinate"
                                   else 1e-2)
            runs = reps if clipping == "coordinate" else max(1, reps // 4)
            accs, errs = [], []
            t0 = time.perf_counter()
            for _ in range(runs):
                th = est.fit(np.column_stack([x[0], y[0]]), rng).estimate
                accs.append(acc(th))
                errs.append(float(np.linalg.norm(th - hats[clipping])))
            sec = time.perf_counter() - t0
            rate = runs * est.steps * est.sampling_rate * n / sec
            print(f"{eps:>4} {clipping:>10} {est.noise_multiplier:>7.3f} {est.steps:>6} {runs:>5}  "
                  f"{est.guarantee().epsilon(delta):>12.4f}  {np.mean(accs):>10.4f} "
                  f"{acc(hats[clipping]):>12.4f} "
                  f"{np.median(errs):>9.2e} {rate:>10.3g}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--chunk", type=int, default=100)
    ap.add_argument("--only", choices=["coverage", "compare", "dpsgd"])
    ap.add_argument("--quick", action="store_true", help="n = 1e3 only, for a smoke run")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    if a.only in (None, "coverage"):
        run_coverage(a.reps, a.chunk, a.quick)
    if a.only in (None, "compare"):
        run_compare(min(a.reps, 200), a.chunk)
    if a.only in (None, "dpsgd"):
        run_dpsgd(min(a.reps, 20))
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
