"""Benchmark: RMSE of dpcert's private estimators against diffprivlib and OpenDP at the same budget.

Run ``python -m benchmarks.estimators [--trials 200] [--n 1000 10000 100000] [--estimand ...]``.
Data: N(0, 1), Student t with 3 degrees of freedom, and the 5%-contaminated normal: N(0, 1) with
probability 0.95, a point mass at 100 with probability 0.05; every value is clipped into the bounds
(so the contamination sits at 10). The target is the population value of the clipped law (its
variance and standard deviation by numerical integration). Each dpcert row states its neighbouring
relation (``rel``: replace-one or add/remove) and is compared with the best anchor at the same
relation: diffprivlib and OpenDP (sized data, d_in = 2 symmetric distance) are replace-one, PyDP
(python-dp, which releases noisy sums and a noisy count) is add/remove. Common random numbers: the
datasets come from a generator of their own (seeded by seed, n and the law), the same for every
estimator and independent of which estimators run; ``--releases R`` draws R private releases of every
estimator per dataset (the RMSE is over datasets and releases). The ratio of RMSEs carries a paired
standard error over the datasets, by the delta method on the per-dataset mean squared errors
(``paired_ratio``: the sampling error each dataset gives both estimators cancels to first order), and
a paired bootstrap of the same (column ``boot``, 400 resamples) as a check. ``--anchor-table`` keeps
the dpcert estimators of the anchor table only (``PRIMARY``); ``--relation`` keeps the estimators
and anchors of one neighbouring relation; ``--anchors`` keeps the named anchor libraries only. The IQR
rows run the joint exponential mechanism (``JointExponentialIQR``) beside the independent quartiles at
eps/2 each, and print the paired ratio of the two (``BESIDE``). Budget: eps = 1 (pure-DP estimators and
all anchors), (eps, delta) = (1, 1e-6) for the smooth-sensitivity, PTR and Scale estimators (their
declared guarantee at delta = 1e-6 is <= 1: see the eps column); bounds [-10, 10]. Every estimator
sees the same datasets (a paired comparison), one release per trial. Refusals (BOTTOM) are counted
and left out of the RMSE. The sparse mean (d = 1000, s = 10, mu_j = 1 on the support, centred
noise of each law) is compared with dpcert's own noisy truncated mean at the same (eps, delta) (no
anchor library has a sparse mean); n = 1e5 is skipped there (10^8 values per dataset).

``--certified-noise`` prints instead the certified CDP eps of the lattice smooth-sensitivity noises
against Bun & Steinke's closed forms (no data).

``--only-rates`` runs instead the estimators whose source papers give a rate (no anchors; default
20 trials): the noisy truncated mean (d = 1 and 10) and the sparse mean (d = 100, s = 5) on N(mu, I)
data with T = 2 sqrt(log n) (Cai, Wang & Zhang's sub-Gaussian case, T >= C sigma sqrt(log n)), and
the per-coordinate mean M_mean on +-1 records (d = 10, delta = (0.2, 0.2, 2, ..., 2), eps = 2, q = 0),
each printed with its mean error (E||.||_2, or E||.||_2^2 for M_mean, as the theorems state them),
the theorem's rate and lower bound (``mechanisms.rates``) and the ratios error / rate and
error / lower bound. The rates hold up to a constant: the check is that the ratios stay bounded as
n grows, not their values.

The table has one row per dpcert estimator: its RMSE and seconds per estimate, the best anchor's
RMSE and the ratio dpcert / best anchor (> 1: the anchor is more accurate). Anchors that cannot be
imported are reported as such (diffprivlib 0.6 needs scikit-learn < 1.7).
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import integrate, optimize, stats

from accountant import BCDP, PureDP
from mechanisms import (
    BOTTOM,
    AdaptiveMean,
    AdaptiveVariance,
    BCDPMean,
    Domain,
    Laplace,
    Mean,
    Rate,
    bcdp_mean_corollary_rate,
    bcdp_mean_rate,
    clipped_variance,
    mean_lower_rate,
    sparse_mean_lower_rate,
    sparse_mean_rate,
    truncated_mean_rate,
)
from mechanisms.estimators import (
    AdaptivePTRMedian,
    ExponentialQuantile,
    JointExponentialIQR,
    LatticeArsinhNormal,
    LatticeLLN,
    LatticeScaleMixture,
    LatticeSmoothNoise,
    LatticeULN,
    PTRMedian,
    PTRWindowMedian,
    ScaleIQR,
    SmoothLaplaceQuantile,
    SmoothLLNQuantile,
    SmoothLLNTrimmedMean,
    SmoothSensitivityMedian,
    SparseMean,
    TruncatedMean,
    cdp_epsilon_for,
)
from mechanisms.noise import Staircase

EPS, DELTA, LO, HI = 1.0, 1e-6, -10.0, 10.0
BINS = 2**14


def quantile_bins(n: int) -> int:
    """Candidates of dpcert's exponential-mechanism quantiles at sample size n: 2^14, or the power of
    two >= 16 n when larger. The grid adds an error of about w / sqrt(12), w = (HI - LO)/bins, to the
    exponential mechanism's own (a few order-statistic spacings, ~1/(n f)); a grid that refines with n
    keeps it below that, as the data-interval mechanism (diffprivlib) has no grid at all."""
    return max(BINS, 1 << math.ceil(math.log2(16 * n)))
#: (dataset, the dataset as a list of floats, generator, releases) -> the releases, shape (releases,).
Estimator = Callable[[np.ndarray, list[float], np.random.Generator, int], np.ndarray]
#: An anchor library's estimator: (dataset, dataset as a list, generator) -> one release.
AnchorEstimator = Callable[[np.ndarray, list[float], np.random.Generator], Any]


# ------------------------------------------------------------------------------------------ data

CONTAMINATION, OUTLIER = 0.05, 100.0


def draw(dist: str, rng: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray:
    """Values of the law clipped into [LO, HI]."""
    if dist == "normal":
        x = rng.normal(size=size)
    elif dist == "t3":
        x = rng.standard_t(3, size=size)
    else:
        z = rng.normal(size=size)
        x = np.where(rng.random(size=size) < CONTAMINATION, OUTLIER, z)
    return np.clip(x, LO, HI)


def cdf(dist: str, v: float) -> float:
    """CDF of the clipped law at v in [LO, HI)."""
    if dist == "normal":
        return float(stats.norm.cdf(v))
    if dist == "t3":
        return float(stats.t.cdf(v, 3))
    return float((1 - CONTAMINATION) * stats.norm.cdf(v))


def clipped_moment(dist: str, k: int) -> float:
    """E[clip(X, LO, HI)^k] for the uncontaminated laws (integral inside, atoms at the bounds)."""
    law = stats.norm() if dist == "normal" else stats.t(3)
    inside = integrate.quad(lambda v: v**k * law.pdf(v), LO, HI, epsabs=1e-13, epsrel=1e-12)[0]
    return float(inside + LO**k * law.cdf(LO) + HI**k * law.sf(HI))


def clipped_variance_of(dist: str) -> float:
    if dist == "contaminated":  # (1 - p) N(0, 1) clipped (mean ~0) plus an atom at HI
        p, m1, m2 = CONTAMINATION, clipped_moment("normal", 1), clipped_moment("normal", 2)
        mean = (1 - p) * m1 + p * HI
        return (1 - p) * m2 + p * HI**2 - mean**2
    return clipped_moment(dist, 2) - clipped_moment(dist, 1) ** 2


def quantile(dist: str, q: float) -> float:
    return float(optimize.brentq(lambda v: cdf(dist, v) - q, -50, 50, xtol=1e-12))


def truth(estimand: str, dist: str) -> float:
    if estimand == "mean":
        return CONTAMINATION * HI if dist == "contaminated" else 0.0
    if estimand == "variance":
        return clipped_variance_of(dist)
    if estimand == "std":
        return math.sqrt(clipped_variance_of(dist))
    if estimand == "median":
        return quantile(dist, 0.5)
    if estimand == "q90":
        return quantile(dist, 0.9)
    return quantile(dist, 0.75) - quantile(dist, 0.25)


# --------------------------------------------------------------------------------------- anchors

def anchors() -> tuple[dict[str, Callable[[int], dict[str, AnchorEstimator]]], list[str]]:
    """Per library: n -> {estimand: estimator}; and notes on libraries that did not import."""
    libs: dict[str, Callable[[int], dict[str, AnchorEstimator]]] = {}
    notes = []
    try:
        from diffprivlib import tools

        def dpl(n: int) -> dict[str, AnchorEstimator]:
            b = (LO, HI)

            def rs(rng: np.random.Generator) -> int:  # diffprivlib takes a seed or a RandomState
                return int(rng.integers(2**31))

            return {
                "mean": lambda x, xl, rng: tools.mean(x, epsilon=EPS, bounds=b, random_state=rs(rng)),
                "median": lambda x, xl, rng: tools.median(x, epsilon=EPS, bounds=b, random_state=rs(rng)),
                "q90": lambda x, xl, rng: tools.quantile(x, 0.9, epsilon=EPS, bounds=b, random_state=rs(rng)),
                "iqr": lambda x, xl, rng: (
                    tools.quantile(x, 0.75, epsilon=EPS / 2, bounds=b, random_state=rs(rng))
                    - tools.quantile(x, 0.25, epsilon=EPS / 2, bounds=b, random_state=rs(rng))),
                "variance": lambda x, xl, rng: tools.var(x, epsilon=EPS, bounds=b, random_state=rs(rng)),
                "std": lambda x, xl, rng: tools.std(x, epsilon=EPS, bounds=b, random_state=rs(rng)),
            }

        libs["diffprivlib"] = dpl
    except Exception as exc:
        notes.append(f"diffprivlib not importable: {type(exc).__name__}: {str(exc)[:80]}")
    try:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        cands = list(np.linspace(LO, HI, BINS + 1))

        def odp(n: int) -> dict[str, AnchorEstimator]:
            space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n), dp.symmetric_distance()

            def quant(alpha: float, eps: float) -> Any:  # d_in = 2: one record replaced
                return dp.binary_search_chain(
                    lambda s: dp.m.make_private_quantile(*space, dp.max_divergence(), candidates=cands,
                                                         alpha=alpha, scale=s), d_in=2, d_out=eps)

            mean = dp.binary_search_chain(
                lambda s: space >> dp.t.then_clamp((LO, HI)) >> dp.t.then_mean() >> dp.m.then_laplace(s),
                d_in=2, d_out=EPS)
            var = dp.binary_search_chain(
                lambda s: space >> dp.t.then_clamp((LO, HI)) >> dp.t.then_variance() >> dp.m.then_laplace(s),
                d_in=2, d_out=EPS)
            med, q90, q25, q75 = quant(0.5, EPS), quant(0.9, EPS), quant(0.25, EPS / 2), quant(0.75, EPS / 2)
            return {"mean": lambda x, xl, rng: mean(xl), "median": lambda x, xl, rng: med(xl),
                    "q90": lambda x, xl, rng: q90(xl),
                    "iqr": lambda x, xl, rng: q75(xl) - q25(xl),
                    "variance": lambda x, xl, rng: var(xl),
                    "std": lambda x, xl, rng: math.sqrt(max(var(xl), 0.0))}

        libs["opendp"] = odp
    except Exception as exc:
        notes.append(f"OpenDP not importable: {type(exc).__name__}: {str(exc)[:80]}")
    try:
        from pydp.algorithms.laplacian import BoundedMean, BoundedStandardDeviation, BoundedVariance

        def pdp(n: int) -> dict[str, AnchorEstimator]:
            kw = {"epsilon": EPS, "lower_bound": LO, "upper_bound": HI, "dtype": "float"}
            return {"mean": lambda x, xl, rng: BoundedMean(**kw).quick_result(xl),
                    "variance": lambda x, xl, rng: BoundedVariance(**kw).quick_result(xl),
                    "std": lambda x, xl, rng: BoundedStandardDeviation(**kw).quick_result(xl)}

        libs["pydp"] = pdp
    except Exception as exc:
        notes.append(f"PyDP not importable: {type(exc).__name__}: {str(exc)[:80]}")
    return libs, notes


#: The neighbouring relation of each anchor library's guarantee.
RELATION = {"diffprivlib": "replace", "opendp": "replace", "pydp": "add_remove"}


# ---------------------------------------------------------------------------------------- dpcert

def dpcert(n: int) -> dict[str, dict[str, tuple[Estimator, float]]]:
    """estimand -> {name: (estimator, declared eps at delta = 1e-6)}; a name ending in " [a/r]" is
    add/remove, every other replace-one (``relation``)."""
    lap = Laplace.calibrated(Mean(Domain(LO, HI, n, clip=True)), PureDP(EPS))
    stair = Staircase(Mean(Domain(LO, HI, n, clip=True)), EPS)
    ada_mean = AdaptiveMean(LO, HI, EPS, n)
    ada_mean_ar = AdaptiveMean(LO, HI, EPS, adjacency="add_remove")
    bins = quantile_bins(n)
    em = {q: ExponentialQuantile(LO, HI, n, EPS, q=q, bins=bins) for q in (0.5, 0.9)}
    em_half = {q: ExponentialQuantile(LO, HI, n, EPS / 2, q=q, bins=bins) for q in (0.25, 0.75)}
    joint_iqr = JointExponentialIQR(LO, HI, n, EPS, bins=bins)
    ss = SmoothSensitivityMedian(LO, HI, n, EPS, DELTA)
    ptr = PTRMedian(LO, HI, n, EPS / 2, DELTA, eta=150.0 / n)
    lln = {q: SmoothLLNQuantile.for_approx_dp(LO, HI, n, EPS, DELTA, q=q) for q in (0.5, 0.9)}
    uln = SmoothLLNQuantile.for_approx_dp(LO, HI, n, EPS, DELTA, law="uniform-log-normal")
    lln_tm = SmoothLLNTrimmedMean.for_approx_dp(LO, HI, n, EPS, DELTA)
    ptr_iqr = AdaptivePTRMedian(LO, HI, n, EPS, DELTA)
    ss_lap = SmoothLaplaceQuantile(LO, HI, n, EPS, DELTA)
    ptr_win = window_ptr(n)
    scale = ScaleIQR(EPS / 4, DELTA)

    def eps_of(m: Any) -> float:
        return float(m.guarantee().epsilon(DELTA))

    def one(m: Any) -> Estimator:
        return lambda x, xl, rng, r: np.asarray(m.sample(x, rng, size=r))  # refusals stay objects

    ada = {(adj, out): AdaptiveVariance(LO, HI, EPS, adj, n if adj == "replace" else None, output_kind=out)
           for adj in ("replace", "add_remove") for out in ("variance", "std")}
    plug = clipped_variance(Domain(LO, HI, n), PureDP(EPS))
    return {
        "variance": {"adaptive variance": (one(ada["replace", "variance"]), EPS),
                     "adaptive variance [a/r]": (one(ada["add_remove", "variance"]), EPS),
                     "Laplace clipped var.": (one(plug), eps_of(plug))},
        "std": {"adaptive std": (one(ada["replace", "std"]), EPS),
                "adaptive std [a/r]": (one(ada["add_remove", "std"]), EPS)},
        "mean": {"staircase clipped mean": (one(stair), eps_of(stair)),
                 "adaptive-interval mean": (one(ada_mean), eps_of(ada_mean)),
                 "adaptive mean [a/r]": (one(ada_mean_ar), eps_of(ada_mean_ar)),
                 "Laplace clipped mean": (one(lap), eps_of(lap)),
                 "LLN 10%-trimmed mean": (one(lln_tm), eps_of(lln_tm))},
        "median": {"EM median": (one(em[0.5]), EPS), "smooth-sens. median": (one(ss), eps_of(ss)),
                   "LLN smooth-sens. median": (one(lln[0.5]), eps_of(lln[0.5])),
                   "ULN smooth-sens. median": (one(uln), eps_of(uln)),
                   "PTR median (eta=150/n)": (one(ptr), eps_of(ptr)),
                   "PTR median (IQR eta)": (one(ptr_iqr), eps_of(ptr_iqr)),
                   "Laplace smooth-sens. med.": (one(ss_lap), eps_of(ss_lap)),
                   "PTR window mean (10/n)": (one(ptr_win), eps_of(ptr_win))},
        "q90": {"EM 0.9-quantile": (one(em[0.9]), EPS),
                "LLN smooth-sens. 0.9-q.": (one(lln[0.9]), eps_of(lln[0.9]))},
        "iqr": {"JointExp IQR": (one(joint_iqr), EPS),
                "EM q75 - EM q25": (
            lambda x, xl, rng, r: em_half[0.75].sample(x, rng, size=r) - em_half[0.25].sample(x, rng, size=r),
            EPS),
                "Scale (Alg. 12)": (one(scale), eps_of(scale))},
    }


#: Half of eps for each of PTR's test and release, less the lattice release's slack.
PTR_HALF = EPS / 2 * (1 - 2.0**-12)


def window_ptr(n: int) -> Any:
    """``PTRWindowMedian`` at (1, 1e-6): eps/2 for the test and the release, the fixed proposal
    eta = 10/n (about 4 spacings 1/(n f) of a law with density f = 0.4 at its median), the default
    window of 5% of the data."""
    return PTRWindowMedian(LO, HI, n, PTR_HALF, DELTA, eta=10.0 / n, release_eps=PTR_HALF)


def relation(name: str) -> str:
    return "add_remove" if name.endswith("[a/r]") else "replace"


# ------------------------------------------------------------------------------------------- run

DISTS = ("normal", "t3", "contaminated")
ESTIMANDS = ("variance", "std", "mean", "median", "q90", "iqr")


#: The dpcert estimators of each estimand in the anchor table (``--anchor-table``): one per relation (the
#: first), and for the mean the adaptive-interval and Laplace releases beside the staircase, for comparison,
#: and the adaptive-interval mean under add/remove (against PyDP's noisy sum over a noisy count); for the
#: IQR the joint exponential mechanism and, beside it, the two quartiles' independent ones at eps/2 each.
PRIMARY = {"variance": ("adaptive variance", "adaptive variance [a/r]"),
           "std": ("adaptive std", "adaptive std [a/r]"),
           "mean": ("staircase clipped mean", "adaptive-interval mean", "Laplace clipped mean",
                    "adaptive mean [a/r]"),
           "median": ("EM median",), "q90": ("EM 0.9-quantile",), "iqr": ("JointExp IQR", "EM q75 - EM q25")}


#: Pairs of dpcert estimators of one estimand compared directly (the paired ratio of RMSEs, under the rows).
BESIDE = {"JointExp IQR": "EM q75 - EM q25"}


def rmse(e: np.ndarray) -> float:
    return math.sqrt(float(np.mean(np.square(e))))


def rmse_se(e: np.ndarray) -> float:
    """Delta-method standard error of the RMSE: sd(e^2) / (2 RMSE sqrt(trials))."""
    if e.size < 2:
        return math.nan
    return float(np.std(e**2, ddof=1) / (2 * rmse(e) * math.sqrt(e.size)))


def trial_mse(errors: list[np.ndarray]) -> np.ndarray:
    """Per dataset, the mean squared error over its releases (refusals, NaN, left out)."""
    return np.asarray([np.nanmean(np.square(e)) if (~np.isnan(e)).any() else math.nan for e in errors])


def mse_rmse_se(msq: np.ndarray) -> tuple[float, float]:
    """RMSE = sqrt(mean of the per-dataset mean squared errors) and its delta-method standard error
    sd(msq) / (2 RMSE sqrt(datasets)): the datasets are the independent units."""
    m = msq[~np.isnan(msq)]
    r = math.sqrt(float(np.mean(m))) if m.size else math.nan
    se = float(np.std(m, ddof=1) / (2 * r * math.sqrt(m.size))) if m.size > 1 and r > 0 else math.nan
    return r, se


def paired_ratio(ours: np.ndarray, theirs: np.ndarray) -> tuple[float, float]:
    """rmse(ours)/rmse(theirs) from per-dataset mean squared errors on the same datasets (common random
    numbers), and its paired delta-method standard error: with A, B the means of a_i, b_i over the T
    datasets, Var(log sqrt(A/B)) ~ Var(a_i/A - b_i/B) / (4 T), so se = ratio sd(a_i/A - b_i/B) / (2 sqrt T).
    The shared sampling error of each dataset cancels in a_i/A - b_i/B to first order."""
    ok = ~np.isnan(ours) & ~np.isnan(theirs)
    a, b = ours[ok], theirs[ok]
    if a.size < 2:
        return math.nan, math.nan
    ma, mb = float(np.mean(a)), float(np.mean(b))
    r = math.sqrt(ma / mb)
    return r, r * float(np.std(a / ma - b / mb, ddof=1)) / (2 * math.sqrt(a.size))


def ratio_se(ours: np.ndarray, theirs: np.ndarray, seed: int, reps: int = 400) -> float:
    """Paired bootstrap standard error of rmse(ours)/rmse(theirs), resampling the datasets (each with
    all its releases) from per-dataset mean squared errors; a check on ``paired_ratio``'s."""
    g = np.random.default_rng(seed)
    idx = g.integers(0, ours.size, size=(reps, ours.size))
    r = np.sqrt(np.mean(ours[idx], axis=1) / np.mean(theirs[idx], axis=1))
    return float(np.std(r, ddof=1))


def crossfit_anchor(msq: dict[str, np.ndarray]) -> tuple[np.ndarray, str]:
    """Per-dataset mean squared errors of "the best anchor", chosen without looking at the datasets it is
    scored on: the datasets are split by parity of their index, and each half is scored against the
    anchor whose RMSE is the least on the other half (cross-fitting). Taking the least of the anchors'
    RMSEs on the same datasets would lean the ratio towards the anchor that was lucky on them (when
    two anchors are close, the ratio to their minimum is biased up by about half the spread of their
    difference). Here each half's anchor is chosen independently of that half's errors, so each half's
    mean squared error has the expectation of the chosen anchor's own, at least the best anchor's: the
    ratio moves only by second-order terms (about 6e-4 at 30 datasets, where the same-data minimum
    adds 0.011: ``tests/product/test_benchmark_anchor_choice.py``) and, when the choice is wrong,
    towards dpcert by at most the gap between the two anchors. Returns the per-dataset errors and the anchor's
    name (``"a|b"`` when the halves chose differently: a on the even datasets, b on the odd)."""
    names = sorted(msq)
    size = msq[names[0]].size
    half = np.arange(size) % 2
    out = np.full(size, math.nan)
    chosen = []
    for h in (0, 1):
        other = half != h
        best = min(names, key=lambda k: float(np.nanmean(msq[k][other])) if np.any(
            ~np.isnan(msq[k][other])) else math.inf)
        out[half == h] = msq[best][half == h]
        chosen.append(best)
    return out, chosen[0] if chosen[0] == chosen[1] else "|".join(chosen)


#: The non-private estimator of each estimand on the clipped data: the floor no private release measured
#: on the same datasets can be reliably below (its error is the sampling error alone).
NONPRIVATE: dict[str, Callable[[np.ndarray], float]] = {
    "mean": lambda x: float(np.mean(x)),
    "median": lambda x: float(np.median(x)),
    "q90": lambda x: float(np.quantile(x, 0.9)),
    "iqr": lambda x: float(np.quantile(x, 0.75) - np.quantile(x, 0.25)),
    "variance": lambda x: float(np.var(x, ddof=1)),
    "std": lambda x: float(np.std(x, ddof=1)),
}


def repeated(f: AnchorEstimator) -> Estimator:
    """An anchor's estimator called once per release."""
    def run(x: np.ndarray, xl: list[float], rng: np.random.Generator, r: int) -> np.ndarray:
        return np.asarray([f(x, xl, rng) for _ in range(r)], dtype=object)
    return run


def run_univariate(ns: list[int], trials: int, seed: int, dists: tuple[str, ...] = DISTS,
                   estimands: tuple[str, ...] = ESTIMANDS, releases: int = 1,
                   anchor_table: bool = False,
                   relations: tuple[str, ...] = ("replace", "add_remove"),
                   anchor_libs: tuple[str, ...] = tuple(RELATION)) -> list[dict[str, Any]]:
    """Every estimator on the same ``trials`` datasets per (law, n) (common random numbers: the
    datasets come from their own generator, seeded by (seed, n, law), and do not depend on which
    estimators run), ``releases`` private releases of each estimator per dataset; only the dpcert
    estimators and anchors of the neighbouring ``relations``, and only the anchor libraries
    ``anchor_libs``."""
    libs, notes = anchors()
    for note in notes:
        print(f"# {note}")
    rows = []
    for dist in dists:
        for n in ns:
            ours = {k: {name: v for name, v in est.items()
                        if (not anchor_table or name in PRIMARY[k]) and relation(name) in relations}
                    for k, est in dpcert(n).items() if k in estimands}
            ours = {k: v for k, v in ours.items() if v}
            theirs = {lib: make(n) for lib, make in libs.items()
                      if RELATION[lib] in relations and lib in anchor_libs}
            errs: dict[tuple[str, str], list[np.ndarray]] = {}
            secs: dict[tuple[str, str], float] = {}
            refusals: dict[tuple[str, str], int] = {}
            data_rng = np.random.default_rng([seed, n, DISTS.index(dist)])
            rng = np.random.default_rng([seed, n, DISTS.index(dist), 1])
            for _ in range(trials):
                x = draw(dist, data_rng, n)
                xl = x.tolist()
                for estimand in ours:
                    t = truth(estimand, dist)
                    cands: dict[tuple[str, str], Estimator] = {
                        (estimand, k): v[0] for k, v in ours[estimand].items()}
                    for lib, est in theirs.items():
                        if estimand in est:
                            cands[estimand, f"@{lib}"] = repeated(est[estimand])
                    for key, fn in cands.items():
                        t0 = time.perf_counter()
                        out = fn(x, xl, rng, releases)
                        secs[key] = secs.get(key, 0.0) + time.perf_counter() - t0
                        bottom = np.asarray([o is BOTTOM for o in out], dtype=bool)
                        refusals[key] = refusals.get(key, 0) + int(bottom.sum())
                        vals = np.asarray([math.nan if b else float(o)
                                           for o, b in zip(out, bottom, strict=True)])
                        errs.setdefault(key, []).append(vals - t)
                    plain = np.asarray([NONPRIVATE[estimand](x) - t])  # the same on every release
                    errs.setdefault((estimand, "@@nonprivate"), []).append(plain)
            for estimand in ours:
                msq = {k[1]: trial_mse(v) for k, v in errs.items() if k[0] == estimand}
                floor_msq = msq.pop("@@nonprivate")
                for name, (_, eps) in ours[estimand].items():
                    key = (estimand, name)
                    rel = relation(name)
                    same = {lib: v for lib, v in msq.items()
                            if lib.startswith("@") and RELATION[lib[1:]] == rel}
                    anchor = {lib[1:]: mse_rmse_se(v)[0] for lib, v in same.items()}
                    r, se = mse_rmse_se(msq[name])
                    ratio = rse = boot = floor = floor_se = math.nan
                    best, best_name = np.full(trials, math.nan), "-"
                    if same:
                        best, best_name = crossfit_anchor({lib[1:]: v for lib, v in same.items()})
                        ratio, rse = paired_ratio(msq[name], best)
                        both = ~np.isnan(msq[name]) & ~np.isnan(best)
                        boot = ratio_se(msq[name][both], best[both], seed)
                        floor, floor_se = paired_ratio(floor_msq, best)
                    rows.append({"estimand": estimand, "dist": dist, "n": n, "estimator": name, "eps": eps,
                                 "rel": "a/r" if rel == "add_remove" else "repl",
                                 "rmse": r, "rmse_se": se, "sec": secs[key] / (trials * releases),
                                 "refused": refusals.get(key, 0) / (trials * releases),
                                 "anchor": best_name, "anchor_rmse": mse_rmse_se(best)[0],
                                 "ratio": ratio, "ratio_se": rse, "ratio_boot_se": boot,
                                 "floor": floor, "floor_se": floor_se, "anchors": anchor,
                                 "anchor_ratios": {lib[1:]: paired_ratio(msq[name], v)
                                                   for lib, v in same.items()},
                                 "anchor_sec": {lib: secs[estimand, "@" + lib] / (trials * releases)
                                                for lib in anchor}})
                print_rows(rows[-len(ours[estimand]):])
                for name, other in BESIDE.items():
                    if name in ours[estimand] and other in ours[estimand]:
                        r, se = paired_ratio(msq[name], msq[other])
                        print(f"#   {name} / {other}: RMSE ratio {r:.3f} +- {se:.3f} (paired, same datasets)")
    return rows


def run_sparse(ns: list[int], trials: int, seed: int,
               dists: tuple[str, ...] = DISTS) -> list[dict[str, Any]]:
    d, s = 1000, 10
    rows = []
    for dist in dists:
        centre = 0.5 if dist == "contaminated" else 0.0
        for n in [v for v in ns if v <= 10_000]:
            sparse = SparseMean(4.0, d, n, s, EPS, DELTA)
            eps = float(sparse.guarantee().epsilon(DELTA))
            base = TruncatedMean(4.0, d, n, eps, DELTA)
            mu = np.zeros(d)
            mu[:s] = 1.0
            rng = np.random.default_rng([seed, n, d, DISTS.index(dist)])
            err: dict[str, list[float]] = {"sparse": [], "base": []}
            sec = {"sparse": 0.0, "base": 0.0}
            for _ in range(trials):
                x = mu + draw(dist, rng, (n, d)) - centre
                for key, m in (("sparse", sparse), ("base", base)):
                    t0 = time.perf_counter()
                    out = m.sample(x, rng)
                    sec[key] += time.perf_counter() - t0
                    err[key].append(float(np.sum((out - mu) ** 2)))
            rows.append({"estimand": "sparse mean", "dist": dist, "n": n, "estimator": "sparse mean (Alg. 3)",
                         "eps": eps, "rel": "repl", "rmse_se": math.nan, "ratio_se": math.nan,
                         "ratio_boot_se": math.nan,
                         "rmse": math.sqrt(np.mean(err["sparse"])), "sec": sec["sparse"] / trials,
                         "refused": 0.0, "anchor": "dpcert truncated mean",
                         "anchor_rmse": math.sqrt(np.mean(err["base"])), "anchors": {},
                         "ratio": math.sqrt(np.mean(err["sparse"]) / np.mean(err["base"]))})
            print_rows(rows[-1:])
    return rows


def gaussian_records(g: np.random.Generator, n: int, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """n records N(mu, I) (a vector of n values when mu has one entry) and the target mu."""
    x = mu + g.normal(size=(n, mu.size))
    return (x[:, 0] if mu.size == 1 else x), mu


def sign_records(g: np.random.Generator, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """n records of independent fair signs in {-1, 1}^d and their mean (M_mean's target)."""
    x = g.choice([-1.0, 1.0], size=(n, d))
    return x, x.mean(axis=0)


def run_rates(ns: list[int], trials: int, seed: int) -> None:
    """Mean error of the estimators with a rate in their paper, against the rate and the lower bound."""
    print(f"{'estimator':36} {'n':>7} {'error':>10} {'+-se':>9} {'rate':>10} {'err/rate':>8} "
          f"{'lower':>10} {'err/lower':>9}  theorems")
    deltas, bcdp_eps = (0.2, 0.2) + (2.0,) * 8, 2.0
    for n in ns:
        rng = np.random.default_rng([seed, n])
        t = 2.0 * math.sqrt(math.log(n))
        cases: list[tuple[str, Any, Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray]],
                          Rate, Rate, bool]] = []
        for d in (1, 10):
            cases.append((f"truncated mean d={d} (Thm 15)", TruncatedMean(t, d, n, EPS, DELTA),
                          functools.partial(gaussian_records, n=n, mu=np.zeros(d)),
                          truncated_mean_rate(n, d, EPS, DELTA, bounded=False),
                          mean_lower_rate(n, d, EPS, DELTA), False))
        d, s = 100, 5
        mu = np.zeros(d)
        mu[:s] = 1.0
        cases.append(("sparse mean d=100 s=5 (Alg. 3)", SparseMean(t, d, n, s, EPS, DELTA),
                      functools.partial(gaussian_records, n=n, mu=mu),
                      sparse_mean_rate(n, d, s, EPS, DELTA, bounded=False),
                      sparse_mean_lower_rate(n, d, s, EPS, DELTA), False))
        bcdp = BCDPMean.calibrated(BCDP(deltas, 0.0, bcdp_eps), "paper")
        cases.append(("M_mean d=10, MSE (Thm 2)", bcdp, functools.partial(sign_records, n=n, d=len(deltas)),
                      bcdp_mean_rate(n, bcdp.c),
                      bcdp_mean_corollary_rate(n, len(deltas), 2, 0.2, bcdp_eps, 0.0), True))
        for name, mech, data, rate, other, squared in cases:
            errs = []
            for _ in range(trials):
                x, target = data(rng)
                out = np.asarray(mech.sample(x, rng), dtype=float)
                if out.ndim == 2:  # M_mean: one release per record, projected mean
                    out = np.clip(out.mean(axis=0), -1.0, 1.0)
                e = float(np.sum((np.atleast_1d(out) - target) ** 2))
                errs.append(e if squared else math.sqrt(e))
            m, se = float(np.mean(errs)), float(np.std(errs, ddof=1) / math.sqrt(len(errs)))
            print(f"{name:36} {n:>7} {m:10.4g} {se:9.2g} {rate.value:10.4g} {m / rate.value:8.3f} "
                  f"{other.value:10.4g} {m / other.value:9.3f}  {rate.theorem}; {other.theorem}")
            sys.stdout.flush()
    print("# rate: the estimator's upper rate; lower: the minimax lower bound (Thm 13, the slides' "
          "classical-mean bound),\n# or for M_mean the Corollary 1 form of (17). Both hold up to "
          "constants the papers do not give.")


#: The Medians table: column name -> estimator factory at n (EM median first: the reference).
MEDIANS: dict[str, Callable[[int], Any]] = {
    "EM median": lambda n: ExponentialQuantile(LO, HI, n, EPS, bins=BINS),
    "NRS Gaussian SS": lambda n: SmoothSensitivityMedian(LO, HI, n, EPS, DELTA),
    "LLN SS (CDP)": lambda n: SmoothLLNQuantile.for_approx_dp(LO, HI, n, EPS, DELTA),
    "ULN SS (CDP)": lambda n: SmoothLLNQuantile.for_approx_dp(LO, HI, n, EPS, DELTA,
                                                              law="uniform-log-normal"),
    "arsinh SS (CDP)": lambda n: SmoothLLNQuantile.for_approx_dp(LO, HI, n, EPS, DELTA, law="arsinh-normal"),
    "Laplace SS (eps, delta)": lambda n: SmoothLaplaceQuantile(LO, HI, n, EPS, DELTA),
    "PTR 150/n": lambda n: PTRMedian(LO, HI, n, EPS / 2, DELTA, eta=150.0 / n),
    "PTR IQR eta": lambda n: AdaptivePTRMedian(LO, HI, n, EPS, DELTA),
    "PTR window 10/n": window_ptr,
}


def run_medians(ns: list[int], trials: int, seed: int, dists: tuple[str, ...] = DISTS,
                columns: tuple[str, ...] = tuple(MEDIANS)) -> None:
    """The Medians table: RMSE of each median estimator against the population median, and its
    ratio to the exponential-mechanism median's on the same datasets (paired bootstrap s.e.); the
    share refused is shown where not 0 (refusals are left out of that estimator's RMSE). ``columns``:
    the estimators run (the EM median always, first)."""
    names = ["EM median", *(k for k in MEDIANS if k in columns and k != "EM median")]
    print(f"Medians at (eps, delta) = ({EPS}, {DELTA:g}), bounds [{LO:g}, {HI:g}], {trials} trials; "
          "RMSE, and for the others the ratio to the EM median's RMSE +- s.e.\n")
    print("| law | n | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for dist in dists:
        t = truth("median", dist)
        for n in ns:
            mechs = {k: MEDIANS[k](n) for k in names}
            errs: dict[str, list[float]] = {k: [] for k in names}
            rng = np.random.default_rng([seed, n, DISTS.index(dist), 7])
            for _ in range(trials):
                x = draw(dist, rng, n)
                for k, m in mechs.items():
                    out = m.sample(x, rng)
                    errs[k].append(math.nan if out is BOTTOM else float(out) - t)
            em = np.asarray(errs["EM median"])
            cells = [f"{rmse(em):.4g}"]
            for k in names[1:]:
                e = np.asarray(errs[k])
                ok = ~np.isnan(e)
                ratio = rmse(e[ok]) / rmse(em[ok]) if ok.any() else math.nan
                se = ratio_se(e[ok] ** 2, em[ok] ** 2, seed) if ok.sum() > 1 else math.nan
                cell = f"{ratio:.2f} ± {se:.2f}"
                if not ok.all():
                    cell += f" ({1 - ok.mean():.0%} refused)"
                cells.append(cell)
            print(f"| {dist} | {n} | " + " | ".join(cells) + " |")
            sys.stdout.flush()


def run_grid_rounding(n: int, datasets: int, seed: int, block: int = 30, noise: float = 1e-4) -> None:
    """The median against OpenDP's grid, without running OpenDP: at n = 1e5 its exponential mechanism on
    ``BINS + 1`` candidates releases, all but surely, the candidate nearest the sample median (a cell
    holds ~45 data points near the median, so neighbouring candidates' scores differ by ~45 ranks). Per
    law, on ``datasets`` datasets of n values: the ratio of the sample median's RMSE to the rounded
    median's (paired s.e.), the same with the law shifted by w (sqrt 5 - 1)/2 (w the grid's cell; the
    truth shifted with it, off the grid), the rounded median's RMSE with the truth on the grid over
    its RMSE shifted (paired, the same datasets), Sheppard's prediction sqrt(MSE/(MSE + w^2/12)), the spread
    of the ratio over blocks of ``block`` datasets, and the anchor table's choice of the best anchor
    simulated on those blocks (dpcert and diffprivlib: the sample median plus N(0, noise^2) per
    release, 3 releases; OpenDP: the rounded median): how often OpenDP is the same-data best, the
    ratio reported then, and the mean ratio to the same-data best, to each anchor and to the
    cross-fitted choice."""
    grid = np.linspace(LO, HI, BINS + 1)
    w = float(grid[1] - grid[0])
    shift = w * (math.sqrt(5) - 1) / 2

    def rounded(v: np.ndarray) -> np.ndarray:
        return np.asarray(grid[np.clip(np.rint((v - LO) / w).astype(int), 0, grid.size - 1)])

    print(f"n = {n}, {datasets} datasets per law, OpenDP's grid of {BINS + 1} candidates (cell {w:.4g}); "
          f"blocks of {block} datasets; private noise sd {noise:g}\n")
    print("| law | truth | RMSE sample median | sample / rounded | shifted: sample / rounded "
          "| rounded: on grid / shifted | Sheppard | spread over blocks | OpenDP same-data best "
          "| ratio then | same-data best | vs diffprivlib | vs OpenDP | cross-fitted |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for dist in DISTS:
        t = truth("median", dist)
        data_rng = np.random.default_rng([seed, n, DISTS.index(dist), 11])
        m = np.asarray([np.median(draw(dist, data_rng, n)) for _ in range(datasets)])
        a, b = (m - t) ** 2, (rounded(m) - t) ** 2
        r, se = paired_ratio(a, b)
        b_shift = (rounded(m + shift) - (t + shift)) ** 2
        rs, ses = paired_ratio(a, b_shift)
        on_off, on_off_se = paired_ratio(b, b_shift)  # the rounded median's RMSE, truth on / off the grid
        sheppard = math.sqrt(a.mean() / (a.mean() + w * w / 12))
        g = np.random.default_rng([seed, n, DISTS.index(dist), 12])
        sim = []
        for start in range(0, datasets - block + 1, block):
            mm = m[start:start + block]
            ours, dpl = (np.mean((mm[:, None] + noise * g.standard_normal((block, 3)) - t) ** 2, axis=1)
                         for _ in range(2))
            odp = (rounded(mm) - t) ** 2
            r_odp, r_dpl = paired_ratio(ours, odp)[0], paired_ratio(ours, dpl)[0]
            chosen = odp.mean() < dpl.mean()
            cross = paired_ratio(ours, crossfit_anchor({"opendp": odp, "diffprivlib": dpl})[0])[0]
            sim.append((math.sqrt(a[start:start + block].mean() / b[start:start + block].mean()), chosen,
                        r_odp if chosen else r_dpl, r_dpl, r_odp, cross))
        v = np.asarray(sim)
        pick = v[:, 1] == 1
        then = f"{v[pick, 2].mean():.4f}" if pick.any() else "-"
        print(f"| {dist} | {t:.4f} | {math.sqrt(a.mean()):.4g} | {r:.4f} +- {se:.4f} | {rs:.4f} +- {ses:.4f} "
              f"| {on_off:.4f} +- {on_off_se:.4f} | {sheppard:.4f} | {v[:, 0].std(ddof=1):.4f} "
              f"| {pick.mean():.0%} | {then} "
              f"| {v[:, 2].mean():.4f} | {v[:, 3].mean():.4f} | {v[:, 4].mean():.4f} "
              f"| {v[:, 5].mean():.4f} |")
        sys.stdout.flush()


def run_interval_anatomy(ns: list[int], trials: int, seed: int, releases: int,
                         dists: tuple[str, ...] = DISTS) -> None:
    """Where the adaptive-interval mean (replace-one) gains and loses against the staircase mean on the
    whole box, on the anchor table's datasets (the same generator and seeds): per release, the interval
    [lo, hi] of stage 1, the clipping shift clip_mean - sample_mean (the records moved into [lo, hi];
    its mean is the clipping bias) and the stage-2 noise release - clip_mean; the staircase's noise is
    its release - sample_mean. With e = sample_mean - truth (the sampling error, common to both),
    MSE(adaptive) = E e^2 + E shift^2 + 2 E[e shift] + E noise^2 (the noise is independent of the
    rest), and MSE(staircase) = E e^2 + E noise_box^2. Printed: the mean interval width over the box's,
    the share of releases whose interval is wider than (1 - interval_share) of the box (where stage 2's
    noise is larger than the whole-box staircase's at full eps), each term over MSE(staircase), and the
    RMSE ratio adaptive / staircase with its paired standard error."""
    print("| law | n | width / box | share wider than 0.6 box | sampling / MSE_st | noise_box / MSE_st "
          "| noise_2 / MSE_st | shift^2 / MSE_st | 2 e.shift / MSE_st | mean shift | adaptive / staircase |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for dist in dists:
        t = truth("mean", dist)
        for n in ns:
            ada = AdaptiveMean(LO, HI, EPS, n)
            stair = Staircase(Mean(Domain(LO, HI, n, clip=True)), EPS)
            limit = (1 - ada.interval_share) * (HI - LO)
            data_rng = np.random.default_rng([seed, n, DISTS.index(dist)])
            rng = np.random.default_rng([seed, n, DISTS.index(dist), 3])
            terms: dict[str, list[float]] = {k: [] for k in ("e2", "box", "noise", "shift2", "cross", "shift",
                                                             "width", "wide")}
            msq_a, msq_s = [], []
            for _ in range(trials):
                x = draw(dist, data_rng, n)
                e = float(np.mean(x)) - t
                counts = np.asarray(ada.histogram.sample(x, rng, size=releases), dtype=float)
                counts = counts.reshape(releases, -1)
                box = np.asarray(stair.sample(x, rng, size=releases), dtype=float) - float(np.mean(x))
                a_err = []
                for row in counts:
                    lo, hi = ada.interval(row)
                    shift = float(np.mean(np.clip(x, lo, hi))) - float(np.mean(x))
                    noise = float(ada.release(lo, hi).sample(x, rng)) - float(np.mean(np.clip(x, lo, hi)))
                    terms["shift"].append(shift)
                    terms["shift2"].append(shift**2)
                    terms["cross"].append(2 * e * shift)
                    terms["noise"].append(noise**2)
                    terms["width"].append((hi - lo) / (HI - LO))
                    terms["wide"].append(float(hi - lo > limit))
                    a_err.append(e + shift + noise)
                terms["e2"].append(e * e)
                terms["box"].extend((box**2).tolist())
                msq_a.append(float(np.mean(np.square(a_err))))
                msq_s.append(float(np.mean((e + box) ** 2)))
            m = {k: float(np.mean(v)) for k, v in terms.items()}
            mse_st = m["e2"] + m["box"]
            ratio, se = paired_ratio(np.asarray(msq_a), np.asarray(msq_s))
            print(f"| {dist} | {n} | {m['width']:.3f} | {m['wide']:.0%} | {m['e2'] / mse_st:.3f} "
                  f"| {m['box'] / mse_st:.3f} | {m['noise'] / mse_st:.3f} | {m['shift2'] / mse_st:.3f} "
                  f"| {m['cross'] / mse_st:+.3f} | {m['shift']:+.2e} | {ratio:.3f} +- {se:.3f} |")
            sys.stdout.flush()


HEADER = (f"{'estimand':12} {'data':13} {'n':>7} {'dpcert estimator':24} {'rel':>4} {'eps':>6} {'RMSE':>9} "
          f"{'+-se':>8} {'s/est':>8} {'refused':>7} {'best anchor':18} {'anchor RMSE':>11} {'ratio':>6} "
          f"{'+-se':>6} {'boot':>6} {'floor':>6} {'+-se':>6}")


def print_rows(rows: list[dict[str, Any]]) -> None:
    for r in rows:
        print(f"{r['estimand']:12} {r['dist']:13} {r['n']:>7} {r['estimator']:24} {r['rel']:>4} "
              f"{r['eps']:6.3f} "
              f"{r['rmse']:9.4g} {r['rmse_se']:8.2g} {r['sec']:8.4f} {r['refused']:7.2%} {r['anchor']:18} "
              f"{r['anchor_rmse']:11.4g} {r['ratio']:6.3f} {r['ratio_se']:6.3f} {r['ratio_boot_se']:6.3f} "
              f"{r.get('floor', math.nan):6.3f} {r.get('floor_se', math.nan):6.3f}")
        if len(r["anchors"]) > 1:  # every anchor's RMSE (s/release) and the ratio to it, for pooling runs
            sec, rat = r.get("anchor_sec", {}), r.get("anchor_ratios", {})
            print("#   anchors: " + ", ".join(
                f"{k} {v:.4g} ({sec.get(k, math.nan):.4f} s; ratio {rat.get(k, (math.nan,))[0]:.3f} "
                f"+- {rat.get(k, (math.nan, math.nan))[1]:.3f})" for k, v in sorted(r["anchors"].items())))
        sys.stdout.flush()


def certified_noise_table() -> None:
    """The certified CDP eps of the lattice smooth-sensitivity noises (``LatticeLLN``, ``LatticeULN``
    at its default sigma and at sigma = 1.5, ``LatticeArsinhNormal`` at its default sigma and at
    Bun & Steinke's 2/sqrt 3) against Bun & Steinke's closed form at the grid's (s, t, sigma), with
    the median's noise figure sd(Z)/(t s), at the CDP eps of (1, 1e-6) and at 0.5 and 1."""
    print("| law | sigma (grid) | target CDP eps | t = k ln2/m | s | eps_dil | eps_shift | certified eps "
          "| paper's form | certified/paper | sd(Z)/(t s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for eps in (cdp_epsilon_for(EPS, DELTA), 0.5, 1.0):
        for cls, sigma in ((LatticeLLN, None), (LatticeULN, None), (LatticeULN, 1.5),
                           (LatticeArsinhNormal, None), (LatticeArsinhNormal, 2 / math.sqrt(3))):
            r: LatticeSmoothNoise = cls.for_epsilon(eps, sigma)
            if isinstance(r, LatticeScaleMixture):
                sg = r.sigma_grid
                spread = math.exp(2 * sg**2)
                var = 2 * spread if cls is LatticeLLN else spread / 3
                name = "LLN" if cls is LatticeLLN else "ULN"
            else:
                sg = r.sigma
                var = math.expm1(2 * sg**2) / (2 * sg**2)
                name = "arsinh"
            print(f"| {name} | {sg:.4f} | {eps:.4f} | {r.k * r.h:.5f} | {r.s:.5f} "
                  f"| {r.dilation_epsilon:.5f} | {r.shift_epsilon:.5f} | {r.epsilon:.6f} "
                  f"| {r.paper_epsilon:.6f} "
                  f"| {r.epsilon / r.paper_epsilon:.7f} | {math.sqrt(var) / (r.smoothing * r.s):.1f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 10_000, 100_000])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--releases", type=int, default=1,
                    help="private releases of every estimator per dataset (default 1)")
    ap.add_argument("--anchor-table", action="store_true",
                    help="only the dpcert estimator of each estimand that the anchor table compares")
    ap.add_argument("--relation", nargs="+", default=["replace", "add_remove"],
                    choices=["replace", "add_remove"],
                    help="only the dpcert estimators and anchors of these neighbouring relations")
    ap.add_argument("--anchors", nargs="+", default=list(RELATION), choices=list(RELATION),
                    help="only these anchor libraries (default all; the best anchor is chosen among them)")
    ap.add_argument("--skip-sparse", action="store_true")
    ap.add_argument("--only-sparse", action="store_true")
    ap.add_argument("--dist", nargs="+", default=list(DISTS), choices=DISTS)
    ap.add_argument("--estimand", nargs="+", default=list(ESTIMANDS), choices=ESTIMANDS)
    ap.add_argument("--medians", action="store_true",
                    help="only the Medians table (ratios to the exponential-mechanism median)")
    ap.add_argument("--median-columns", nargs="+", default=list(MEDIANS), choices=list(MEDIANS),
                    metavar="COLUMN", help="with --medians: the estimators run (default all; the EM median "
                    "always): " + ", ".join(MEDIANS))
    ap.add_argument("--only-rates", action="store_true",
                    help="only the estimators with a rate, against it (default 20 trials)")
    ap.add_argument("--certified-noise", action="store_true",
                    help="only the certified eps table of the smooth-sensitivity lattice noises")
    ap.add_argument("--grid-rounding", action="store_true",
                    help="only the median against OpenDP's grid, simulated (its release is the sample "
                    "median rounded to the grid at n = 1e5; the first --n, --trials datasets per law)")
    ap.add_argument("--interval-anatomy", action="store_true",
                    help="only the adaptive-interval mean against the staircase mean, its MSE split into "
                    "sampling error, clipping shift and stage-2 noise (the anchor table's datasets)")
    args = ap.parse_args(argv)
    if args.interval_anatomy:
        run_interval_anatomy(args.n, args.trials, args.seed, args.releases, tuple(args.dist))
        return 0
    if args.grid_rounding:
        run_grid_rounding(args.n[0], args.trials, args.seed)
        return 0
    if args.medians:
        run_medians(args.n, args.trials, args.seed, tuple(args.dist), tuple(args.median_columns))
        return 0
    if args.certified_noise:
        certified_noise_table()
        return 0
    if args.only_rates:
        run_rates(args.n, args.trials if "--trials" in (argv or sys.argv) else 20, args.seed)
        return 0
    print(HEADER)
    print("-" * len(HEADER))
    if not args.only_sparse:
        run_univariate(args.n, args.trials, args.seed, tuple(args.dist), tuple(args.estimand),
                       args.releases, args.anchor_table, tuple(args.relation), tuple(args.anchors))
    if not args.skip_sparse:
        run_sparse(args.n, args.trials, args.seed, tuple(args.dist))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
