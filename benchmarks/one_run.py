"""Benchmark: one-run audits of training runs (``verify.one_run_audit``, ``verify.canary_audit``).

Run ``python -m benchmarks.one_run [--seeds 2] [--skip-estimator]``. Three sections:

(a) Simulated mechanisms that meet their claim exactly, m = 1,000 canaries, confidence 0.95,
    delta = 1e-5: each canary's score is coin * mu + N(0, 1) (mu-GDP per canary) or randomized
    response (report the coin with probability e^eps / (1 + e^eps), pure eps-DP). Columns: the true
    epsilon at delta, dpcert's ``epsilon_lower`` (and the test that gave it), and a reference
    reimplementation (here only, from the published description; jax is not installed) of
    jax_privacy's ``CanaryScoreAuditor.epsilon_one_run``: one-sided guesses at every score threshold,
    Bonferroni over all m + 1 thresholds, the same Steinke et al. p-value in floating point, root
    found by bisection. Its ``epsilon_one_run_fdp`` tests the Gaussian curve whose delta(eps) is
    delta, which refutes a GDP claim, not (eps, delta)-DP: it is dpcert's ``gdp_epsilon`` column
    (computed with dpcert's grid and Bonferroni count), shown for comparison and not as a bound.
(b) DP-SGD with m = 1,000 gradient canaries and a claim calibrated to eps = 8 at delta = 1e-5:
    dpcert's estimator ``mechanisms.estimators.DPSGD`` (Huber regression, p = 1024, Hadamard
    canaries, coordinate clipping; one run), and the white-box trainer
    ``verify.training.GradientCanarySGD`` (q = 1/16, T = 160, canaries of gradient norm 10 C) in the
    correct form and four broken ones. A claim counts as refuted when the audit's lower bound exceeds
    the accountant's epsilon or the claim's trade-off curve is rejected. Each variant is audited
    with R = 1, 10, 100 pooled runs, stopping at the first refutation; the three looks are a
    multiple test, so each runs at confidence 1 - 0.05 / 3 (the verdict "refuted within R runs" holds
    at 0.95). Pooled audits (R > 1) pre-register one guess count (M/4 "in", M/4 "out", M = 1000 R).
(d) diffprivlib's GaussianNB (when it imports): 8 canaries per run (feature j at its bound, class 0)
    scored by the class-0 mean of feature j, 50 pooled runs, against its declared eps and against a
    misdeclared one (run at eps = 50, claimed 1).
(e) diffprivlib's LogisticRegression and LinearRegression (when it imports), audited over many runs
    with ``verify.audit`` (exact Clopper-Pearson bounds): D = 5 records (x = 1, y = 0 for logistic,
    -1 for linear) and 5 records (x = -1, y = 1), data_norm = 1 and C = 1 (logistic), bounds (-1, 1)
    for x and y (linear); D' = D plus the canary (x = 1, y = 1), which the model fitted on D gets
    wrong, so its influence is near its largest; the output is the fitted model at x = 1 (decision
    value or prediction: a post-processing of the coefficient vector). Rows: the declared epsilon;
    a canary outside data_norm / bounds_X (x = 5: diffprivlib clips each row first, so the canary is
    the clipped one); misdeclared wrappers (run at eps = 10 or 100, claimed 1).
(f) The shuffled trainer claimed as Poisson, audited with the construction of the accountant's
    shuffle lower bound (``GradientCanarySGD.adversarial_pair``: every other gradient -C e_0, the
    canary +C e_0; score ``max_llr``, the log-likelihood ratio of each epoch's largest batch sum),
    one canary per run, with ``verify.audit`` on the pair (D, D + canary): 50 runs per dataset
    (100 runs), one pre-registered look at confidence 0.95, claim the Poisson accountant's curve.
    Beside each setting: the Poisson epsilon, the shuffle lower bound's epsilon, the fixed points
    p = f(p) of both curves, and the power the calculator (``verify.plan_audit``, 2 tests) gives
    100 runs against the lower bound's pair; the correct (Poisson) trainer with the same canary
    and score on the eps = 8 setting as a control.
(g) What no audit can do (``verify.power_ceiling``): the most probability with which any audit of N
    memberships (runs or canary coins) refutes a claim at 0.95, whatever the mechanism, and the N
    that certain refutation needs.
(h) diffprivlib's GaussianNB and PCA audited over many runs like (e): GaussianNB (bounds (0, 1)):
    D = 2 x (0, class 0) + 2 x (1, class 1), canary (1, class 0), output the class-0 mean;
    PCA (centered=True, data_norm = 1, one component): D = 2 x (0, +-0.3), canary (1, 0), output
    |first component's coordinate 0|.
(i) diffprivlib's LogisticRegression with fit_intercept=True, white-box (its algorithm as an exact
    minimiser, no diffprivlib call): objective perturbation outputs the minimiser w of
    sum_i l_i(w) + |w_x|^2 / (2 C) + b.w, b with density proportional to exp(-|b| / s) (diffprivlib's
    Vector mechanism, s = 2 sqrt(data_norm^2 + 1) / eps', eps' = eps - 2 log(1 + sqrt(2) C / 4)).
    The L2 term leaves the intercept out (scikit-learn's loss), so the output's density on D and D'
    = D plus a canary, exp(-|b_D(w)| / s) |det H_D(w)|, has the ratio
    exp(-(|b_D'(w)| - |b_D(w)|) / s) det H_D'(w) / det H_D(w), unbounded where D's records leave no
    curvature in the intercept. D is (e)'s (5 x (1, 0), 5 x (-1, 1)), the canary (0, 1) (inside
    data_norm = 1). Shown: the largest log ratio on a grid of w, the share of draws of b on D' whose
    minimiser exists, and the probability under D' that the log ratio exceeds eps and 2 eps (Monte
    Carlo; S = {log ratio > 2 eps} has P_D'(S) - e^eps P_D(S) >= P_D'(S)(1 - e^-eps), a delta the
    pure claim does not allow).
(j) Opacus (when torch and opacus import: the ``opacus`` extra): ``PrivacyEngine`` trains a logistic
    regression (2 features, 256 background records) with m = 256 Dirac canaries (x = 20 e_i, label
    1; score the trained weight w_i), Poisson rate q = 1/8, sigma = 1, C = 1, 5 epochs (T = 40),
    SGD at lr = 0.01 (``tests/support/opacus_target.py``); the claim is dpcert's Poisson accountant
    for that run. Variants: as claimed; a tenth of the noise multiplier passed to Opacus; clipping
    off (max_grad_norm = 1e6) with the noise of the claimed C. Looks at R = 1, 5, 20 pooled runs,
    each at confidence 1 - 0.05/3, stopping at the first refutation, as in (b2). Run with
    ``--only j`` only (its own block on the measurements page).
(c) Seconds of ``one_run_audit`` on 1,000 canaries (default grid, median of 5; wall and CPU time).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from typing import Any

import numpy as np
from scipy import optimize, stats

from accountant import GDP, ApproxDP, dpsgd_noise_multiplier, dpsgd_pld, sampler_bounds
from verify import audit, canary_audit, one_run_audit, plan_audit, power_ceiling, tradeoff_fixed_point
from verify.training import GradientCanarySGD, dpsgd_canaries

DELTA = 1e-5
CONF = 0.95


# ------------------------------------------------------------------------------- (a) reference

def _reference_pvalue(r: int, v: int, m: int, eps: float, delta: float) -> float:
    """The one-run p-value as jax_privacy describes it (float survival functions)."""
    p = 1.0 / (1.0 + math.exp(-eps))
    beta = float(stats.binom.sf(v - 1, r, p))
    if delta == 0.0:
        return beta
    i = np.arange(1, v + 1)
    spread = stats.binom.sf(v - i - 1, r, p) - beta
    return min(beta + float(np.max(spread / i, initial=0.0)) * delta * 2 * m, 1.0)


def reference_epsilon_one_run(scores: np.ndarray, coins: np.ndarray, delta: float, conf: float) -> float:
    """CanaryScoreAuditor.epsilon_one_run with its default Bonferroni strategy, reimplemented."""
    m = scores.size
    order = np.argsort(-scores, kind="stable")
    correct = np.cumsum(coins[order])  # top-k guesses "in", k = 1..m
    level = (1.0 - conf) / (m + 1)
    best, best_p = 0.0, 0.5
    ks = np.arange(1, m + 1)
    for k in ks[np.argsort(-(correct / ks), kind="stable")]:
        c = int(correct[k - 1])
        if c / k <= best_p:
            continue
        if _reference_pvalue(int(k), c, m, best, delta) > level:
            continue
        lo, hi = best, max(1.0, 2 * best)
        while _reference_pvalue(int(k), c, m, hi, delta) <= level and hi < 60:
            lo, hi = hi, 2 * hi
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if _reference_pvalue(int(k), c, m, mid, delta) <= level else (lo, mid)
        if lo > best:
            best, best_p = lo, 1.0 / (1.0 + math.exp(-lo))
    return best


def section_a(seeds: int) -> None:
    print("(a) simulated mechanisms, m = 1000, confidence 0.95; epsilon lower bounds at delta = 0 and 1e-5")
    head = (f"{'mechanism':10} {'seed':>4} {'true(0)':>7} {'true(d)':>7} {'ours(0)':>7} {'ref(0)':>7} "
            f"{'ours(d)':>7} {'test':>7} {'ref(d)':>7} {'mu_low':>7} {'gdp_eps*':>8} {'s':>5}")
    print(head)
    print("-" * len(head))
    m = 1000
    cases = [("GDP mu=1", "gdp", 1.0), ("GDP mu=2", "gdp", 2.0), ("GDP mu=4", "gdp", 4.0),
             ("RR eps=1", "rr", 1.0), ("RR eps=2", "rr", 2.0), ("RR eps=4", "rr", 4.0)]
    for name, kind, par in cases:
        true0 = math.inf if kind == "gdp" else par
        true = GDP(par).epsilon(DELTA) if kind == "gdp" else par
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            coins = rng.integers(0, 2, m).astype(bool)
            if kind == "gdp":
                scores = coins * par + rng.standard_normal(m)
            else:
                keep = rng.random(m) < 1.0 / (1.0 + math.exp(-par))
                scores = np.where(keep, coins, ~coins) + 1e-6 * rng.standard_normal(m)
            pure = one_run_audit(scores, coins, 0.0, CONF)
            t0 = time.perf_counter()
            rep = one_run_audit(scores, coins, DELTA, CONF)
            sec = time.perf_counter() - t0
            ref0 = reference_epsilon_one_run(scores, coins, 0.0, CONF)
            ref = reference_epsilon_one_run(scores, coins, DELTA, CONF)
            print(f"{name:10} {seed:>4} {true0:>7.4g} {true:>7.4g} {pure.epsilon_lower:>7.4g} {ref0:>7.4g} "
                  f"{rep.epsilon_lower:>7.4g} {rep.method or '-':>7} {ref:>7.4g} {rep.mu_lower:>7.4g} "
                  f"{rep.gdp_epsilon:>8.4g} {sec:>5.2f}")
    print("ours: dpcert's epsilon_lower; ref: the reimplemented CanaryScoreAuditor.epsilon_one_run;")
    print("* gdp_eps: epsilon at delta = 1e-5 of GDP(mu_low): refutes the Gaussian curve only, not a bound")
    print()


# ------------------------------------------------------------------------------- (b) DP-SGD

def section_b_estimator() -> None:
    from mechanisms.estimators import DPSGD
    from mechanisms.estimators.mestimation import HuberRegression

    print("(b1) dpcert's mechanisms.estimators.DPSGD, Huber regression p = 1024, coordinate clipping,")
    print("     m = 1000 Hadamard gradient canaries, q = 1/16, T = 160, claim calibrated to eps = 8")
    p, m, q, steps = 1024, 1000, 1 / 16, 160
    model = HuberRegression(p, c=1.0, design_bound=1.0)
    t0 = time.perf_counter()
    est = DPSGD.calibrated(model, m, ApproxDP(8.0, DELTA), q, steps)
    t_cal = time.perf_counter() - t0
    rows = dpsgd_canaries(m, p)

    def train(data: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        x, y = model.split(data)
        return est.run(x, y, rng)

    def score(theta: np.ndarray, canary: np.ndarray) -> float:
        return float(np.dot(theta, canary[:-1]))  # the gradient is -x: theta moves along +x

    t0 = time.perf_counter()
    rep = canary_audit(train, score, rows, np.random.default_rng(0), claim=est.guarantee(), delta=DELTA,
                       confidence=CONF)
    sec = time.perf_counter() - t0
    a = rep.audit
    print(f"noise multiplier {est.noise_multiplier:.4g} (calibrated in {t_cal:.1f} s)")
    head = (f"{'target':22} {'eps_lower':>9} {'test':>8} {'mu_lower':>8} {'eps_upper':>9} {'gap':>7} "
            f"{'refuted':>8} {'s':>6}")
    print(head)
    print("-" * len(head))
    print(f"{'DPSGD (correct)':22} {a.epsilon_lower:>9.4g} {a.method or '-':>8} {a.mu_lower:>8.4g} "
          f"{rep.epsilon_upper:>9.4g} {rep.gap:>7.4g} {rep.refuted!s:>8} {sec:>6.1f}")
    print()


def section_b_variants() -> None:
    m, q, steps = 1000, 1 / 16, 160
    sigma = dpsgd_noise_multiplier(8.0, DELTA, q, steps)
    print(f"(b2) GradientCanarySGD, d = m = 1000 Dirac canaries of norm 10 C, q = 1/16, T = 160, "
          f"sigma = {sigma:.4g} (Poisson accountant: eps = 8 at delta = 1e-5)")
    print("     looks at R = 1, 10, 100 pooled runs, each at confidence 1 - 0.05/3")
    head = (f"{'variant':20} {'R':>4} {'eps_lower':>9} {'mu_lower':>8} {'eps_upper':>9} {'curve':>8} "
            f"{'refuted':>8} {'s':>6}")
    print(head)
    print("-" * len(head))
    conf = 1.0 - (1.0 - CONF) / 3
    for variant in ("correct", "no_clipping", "clip_after_sum", "noise_by_batch", "shuffle_as_poisson"):
        t = GradientCanarySGD(m, sigma, q, steps, variant=variant)
        can = t.canaries(m, norm=10.0)
        claim = t.claim()
        for runs in (1, 10, 100):
            mm = m * runs
            guesses = None if runs == 1 else [(mm // 4, mm // 4)]
            t0 = time.perf_counter()
            rep = canary_audit(t.train, t.score, can, np.random.default_rng(runs), claim=claim, delta=DELTA,
                               confidence=conf, runs=runs, guesses=guesses)
            sec = time.perf_counter() - t0
            a = rep.audit
            print(f"{variant:20} {runs:>4} {a.epsilon_lower:>9.4g} {a.mu_lower:>8.4g} "
                  f"{rep.epsilon_upper:>9.4g} "
                  f"{'rejected' if a.claim_refuted else 'kept':>8} {rep.refuted!s:>8} {sec:>6.1f}")
            if rep.refuted:
                break
    print()


# ------------------------------------------------------------------------------- (d) diffprivlib

def section_d(runs: int) -> None:
    try:
        import warnings

        from diffprivlib.models import GaussianNB
    except ImportError as exc:  # diffprivlib 0.6 needs scikit-learn < 1.7
        print(f"(d) diffprivlib GaussianNB: not run ({exc})")
        print()
        return
    warnings.filterwarnings("ignore", module="diffprivlib")
    from accountant import PureDP

    d, n_bg = 8, 40
    rng0 = np.random.default_rng(0)
    background = np.column_stack([rng0.uniform(0, 1, (n_bg, d)), rng0.integers(0, 2, n_bg)])
    canaries = np.zeros((d, d + 1))
    canaries[np.arange(d), np.arange(d)] = 1.0  # class 0, feature j at the top of its bounds
    print(f"(d) diffprivlib GaussianNB, {d} features in [0, 1], {n_bg} background records, "
          f"{d} canaries per run")
    print(f"    (class 0, feature j = 1), score = the class-0 mean of feature j; {runs} pooled runs")
    head = f"{'run at eps':>10} {'claim':>6} {'eps_lower':>9} {'mu_lower':>8} {'refuted':>8} {'s':>6}"
    print(head)
    print("-" * len(head))
    for eps, claim in ((1.0, 1.0), (50.0, 1.0)):
        def train(data: np.ndarray, rng: np.random.Generator, eps: float = eps) -> Any:
            model = GaussianNB(epsilon=eps, bounds=(np.zeros(d), np.ones(d)),
                               random_state=int(rng.integers(2**31)))
            return model.fit(data[:, :-1], data[:, -1].astype(int))

        def score(model: Any, canary: np.ndarray) -> float:
            return float(model.theta_[0, int(np.argmax(canary[:-1]))])

        t0 = time.perf_counter()
        rep = canary_audit(train, score, canaries, np.random.default_rng(1), data=background,
                           claim=PureDP(claim), confidence=CONF, runs=runs)
        sec = time.perf_counter() - t0
        print(f"{eps:>10g} {claim:>6g} {rep.epsilon_lower:>9.4g} {rep.audit.mu_lower:>8.4g} "
              f"{rep.refuted!s:>8} {sec:>6.1f}")
    print()


# ------------------------------------------------------------------------------- (e) diffprivlib LR

def diffprivlib_model(name: str, epsilon: float, probe: float = 1.0) -> Any:
    """The mechanism ``(data, rng) -> a number`` of a diffprivlib model fitted on ``data`` at
    ``epsilon``, seeded from ``rng``: ``LogisticRegression(data_norm = 1)`` (name "logistic": the
    decision value at x = probe), ``LinearRegression(bounds_X = bounds_y = (-1, 1))`` ("linear": the
    prediction at x = probe), ``GaussianNB(bounds = (0, 1))`` ("gaussian_nb": the class-0 mean of
    the one feature), ``PCA(n_components = 1, centered = True, data_norm = 1)`` ("pca": |coordinate
    0 of the component|); rows (x, y) but for PCA (the rows themselves). None when diffprivlib does
    not import."""
    try:
        import warnings

        from diffprivlib.models import PCA, GaussianNB, LinearRegression, LogisticRegression
    except ImportError:
        return None

    def mechanism(data: np.ndarray, rng: np.random.Generator) -> float:
        seed = int(rng.integers(2**31))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if name == "gaussian_nb":
                nb = GaussianNB(epsilon=epsilon, bounds=([0.0], [1.0]), random_state=seed)
                return float(nb.fit(data[:, :-1], data[:, -1].astype(int)).theta_[0, 0])
            if name == "pca":
                pca = PCA(n_components=1, epsilon=epsilon, data_norm=1.0, centered=True, bounds=(-1.0, 1.0),
                          random_state=seed)
                return float(abs(pca.fit(data).components_[0][0]))
            if name == "logistic":
                logistic = LogisticRegression(epsilon=epsilon, data_norm=1.0, random_state=seed)
                logistic.fit(data[:, :-1], data[:, -1].astype(int))
                return float(logistic.decision_function([[probe]])[0])
            linear = LinearRegression(epsilon=epsilon, bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0),
                                      random_state=seed)
            return float(linear.fit(data[:, :-1], data[:, -1]).predict([[probe]])[0])

    return mechanism


def canary_pair(name: str, canary_x: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """D and D' = D plus the canary (canary_x, 1): for "logistic" D is 5 records (1, 0) and 5 records
    (-1, 1), for "linear" 5 records (1, -1) and 5 records (-1, 1); either way the model fitted on D
    answers the opposite of the canary's label at x = 1. For "gaussian_nb": D = 2 x (0, class 0) +
    2 x (1, class 1), canary (canary_x, class 0) (it moves the class-0 mean from 0 to 1/3); for
    "pca": D = 2 x (0, 0.3) + 2 x (0, -0.3), canary (canary_x, 0) (it turns the top component from
    the second axis to the first)."""
    if name == "gaussian_nb":
        d = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [1.0, 1.0]])
        return d, np.vstack([d, [canary_x, 0.0]])
    if name == "pca":
        d = np.array([[0.0, 0.3], [0.0, -0.3]] * 2)
        return d, np.vstack([d, [canary_x, 0.0]])
    low = 0.0 if name == "logistic" else -1.0
    d = np.array([[1.0, low]] * 5 + [[-1.0, 1.0]] * 5)
    return d, np.vstack([d, [canary_x, 1.0]])


def section_e(samples: int) -> None:
    from accountant import PureDP
    from verify import audit

    if diffprivlib_model("logistic", 1.0) is None:
        print("(e) diffprivlib LogisticRegression, LinearRegression: not run (diffprivlib does not import)")
        print()
        return
    print("(e) diffprivlib LogisticRegression (data_norm = 1, C = 1; D = 5 x (1, 0) + 5 x (-1, 1)) and")
    print("    LinearRegression (bounds (-1, 1); D = 5 x (1, -1) + 5 x (-1, 1)); D' = D + canary (x, 1);")
    print(f"    output: the model at x = 1; verify.audit, {samples} fits per dataset (floating_point=False:")
    print("    the outputs as real numbers), confidence 0.95")
    head = (f"{'model':9} {'run at eps':>10} {'claim':>6} {'canary x':>8} {'eps_lower':>9} {'mu_lower':>8} "
            f"{'refuted':>8} {'fits':>6} {'s':>6}")
    print(head)
    print("-" * len(head))
    rows = [("logistic", 10.0, 10.0, 1.0), ("logistic", 10.0, 10.0, 5.0), ("logistic", 10.0, 1.0, 1.0),
            ("logistic", 100.0, 1.0, 1.0), ("linear", 10.0, 10.0, 1.0), ("linear", 10.0, 10.0, 5.0),
            ("linear", 10.0, 1.0, 1.0), ("linear", 100.0, 1.0, 1.0)]
    for name, eps, claim, x in rows:
        rep = audit(diffprivlib_model(name, eps), [canary_pair(name, x)], PureDP(claim), samples=samples,
                    seed=0, confidence=CONF, floating_point=False)
        print(f"{name:9} {eps:>10g} {claim:>6g} {x:>8g} {rep.epsilon_lower:>9.4g} {rep.mu_lower:>8.4g} "
              f"{rep.violation!s:>8} {rep.samples_total:>6} {rep.seconds:>6.1f}")
    print("canary x = 5 lies outside data_norm = 1 and bounds_X = (-1, 1): diffprivlib clips it to x = 1")
    print("before fitting, so the same seeds give the same outputs as the row above it")
    print()


def section_h(samples: int) -> None:
    from accountant import PureDP

    if diffprivlib_model("pca", 1.0) is None:
        print("(h) diffprivlib GaussianNB, PCA: not run (diffprivlib does not import)")
        print()
        return
    print("(h) diffprivlib GaussianNB (bounds (0, 1); D = 2 x (0, class 0) + 2 x (1, class 1), canary")
    print("    (1, class 0); output the class-0 mean) and PCA (centered=True, data_norm = 1;")
    print("    D = 2 x (0, +-0.3), canary (1, 0); output |component[0]|); verify.audit,")
    print(f"    {samples} fits per dataset, confidence 0.95")
    head = (f"{'model':11} {'run at eps':>10} {'claim':>6} {'eps_lower':>9} {'mu_lower':>8} {'refuted':>8} "
            f"{'fits':>6} {'s':>6}")
    print(head)
    print("-" * len(head))
    for name in ("gaussian_nb", "pca"):
        for eps, claim in ((1.0, 1.0), (10.0, 10.0), (10.0, 1.0), (100.0, 1.0)):
            rep = audit(diffprivlib_model(name, eps), [canary_pair(name)], PureDP(claim), samples=samples,
                        seed=0, confidence=CONF, floating_point=False)
            print(f"{name:11} {eps:>10g} {claim:>6g} {rep.epsilon_lower:>9.4g} {rep.mu_lower:>8.4g} "
                  f"{rep.violation!s:>8} {rep.samples_total:>6} {rep.seconds:>6.1f}")
    print()


# ------------------------------------------------------------------------------- (f), (g) shuffle

#: (q, sigma, T, declared n) of section (f); the first is (b2)'s eps = 8 claim.
SHUFFLE_SETTINGS = ((1 / 16, 0.8295733609070779, 160, 64), (1 / 16, 0.8295733609070779, 16, 64),
                    (1e-3, 0.5, 1000, 1000), (1e-3, 0.8, 1000, 1000), (0.01, 1.0, 1000, 100))


def shuffle_audit(q: float, sigma: float, steps: int, slots: int, variant: str = "shuffle_as_poisson",
                  samples: int = 50, seed: int = 0) -> Any:
    """``verify.audit`` of ``GradientCanarySGD(variant)`` on its adversarial pair, output its
    ``max_llr`` (the shuffle's score whatever ran), against the Poisson accountant's claim."""
    t = GradientCanarySGD(1, sigma, q, steps, variant=variant, slots=slots)  # type: ignore[arg-type]
    reader = GradientCanarySGD(1, sigma, q, steps, variant="shuffle_as_poisson", slots=slots)
    background, canary = reader.adversarial_pair()

    def mechanism(data: np.ndarray, rng: np.random.Generator) -> float:
        return reader.max_llr(t.step_outputs(data, rng))

    return audit(mechanism, [(background, np.vstack([background, canary]))], t.claim(), samples=samples,
                 seed=seed, confidence=CONF, floating_point=False, delta=DELTA)


def section_f(seeds: int) -> None:
    print("(f) shuffle_as_poisson audited with the shuffle lower bound's canary (other gradients -C e_0,")
    print("    canary +C e_0, score max_llr), one canary per run, verify.audit: 50 runs per dataset")
    print("    (100 runs), one look at confidence 0.95, claim the Poisson accountant's curve; p = fixed")
    print("    point of a curve; power: verify.plan_audit of 100 runs (2 tests) against the lower")
    print("    bound's pair")
    head = (f"{'q':>7} {'sigma':>6} {'T':>5} {'ep':>3} {'eps_P':>6} {'eps_sh>=':>8} {'p_claim':>7} "
            f"{'p_shuf':>7} {'power':>6} {'seed':>4} {'eps_lower':>9} {'mu_lower':>8} {'refuted':>8} "
            f"{'s':>5}")
    print(head)
    print("-" * len(head))
    for q, sigma, steps, slots in SHUFFLE_SETTINGS:
        claim = dpsgd_pld(q, sigma, steps)
        lower = sampler_bounds("shuffle", q, sigma, steps)
        power = plan_audit(claim, lower.lower, 50, CONF, tests=2).power
        epochs = round(steps * q)
        for seed in range(seeds):
            rep = shuffle_audit(q, sigma, steps, slots, seed=seed)
            print(f"{q:>7.4g} {sigma:>6.4g} {steps:>5} {epochs:>3} {claim.epsilon(DELTA):>6.3g} "
                  f"{lower.epsilon_lower(DELTA):>8.4g} {tradeoff_fixed_point(claim):>7.3g} "
                  f"{tradeoff_fixed_point(lower.lower):>7.3g} {power:>6.3f} {seed:>4} "
                  f"{rep.epsilon_lower:>9.4g} {rep.mu_lower:>8.4g} {rep.violation!s:>8} {rep.seconds:>5.1f}")
    q, sigma, steps, slots = SHUFFLE_SETTINGS[0]
    rep = shuffle_audit(q, sigma, steps, slots, variant="correct")
    print(f"control: the correct (Poisson) trainer, same canary and score, q = 1/16, T = {steps}: "
          f"eps_lower {rep.epsilon_lower:.4g}, refuted {rep.violation}")
    print()


def section_g() -> None:
    q, sigma, steps, _ = SHUFFLE_SETTINGS[0]
    claims = [("(8, 1e-5)-DP", ApproxDP(8.0, DELTA)), ("(4, 1e-5)-DP", ApproxDP(4.0, DELTA)),
              ("Poisson curve, eps 8", dpsgd_pld(q, sigma, steps)),
              ("GDP, eps 8", GDP(optimize.brentq(lambda mu: GDP(mu).epsilon(DELTA) - 8.0, 0.5, 10.0)))]
    print("(g) the most any audit at 0.95 refutes with, whatever the mechanism (verify.power_ceiling):")
    print("    min(1, 0.05 (1 - p)^-N), N memberships (runs, or canary coins in one run or pooled)")
    head = (f"{'claim':22} {'eps(1e-5)':>9} {'p':>9} {'N=100':>7} {'N=1000':>7} {'N=1e4':>7} "
            f"{'N(power 1/2)':>12} {'N(power 1)':>10}")
    print(head)
    print("-" * len(head))
    for name, c in claims:
        p = tradeoff_fixed_point(c)
        half = math.ceil(math.log(10.0) / -math.log1p(-p)) if p > 0 else math.inf
        full = math.ceil(math.log(20.0) / -math.log1p(-p)) if p > 0 else math.inf
        print(f"{name:22} {c.epsilon(DELTA):>9.4g} {p:>9.3g} {power_ceiling(c, 100):>7.4f} "
              f"{power_ceiling(c, 1000):>7.4f} {power_ceiling(c, 10_000):>7.4f} {half:>12} {full:>10}")
    print()


# ------------------------------------------------------------------------------- (i) intercept

def _logistic_terms(w: np.ndarray, x: np.ndarray, y: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    """(-b, Hessian) of objective perturbation at its minimiser w: the gradient and Hessian of
    sum_i l_i(w) + w_x^2 / (2C), rows x = (feature, 1), the intercept unregularised."""
    from scipy.special import expit

    pr = expit(x @ w)
    reg = np.diag([1.0 / c, 0.0])
    return x.T @ (pr - y) + reg @ w, (x * (pr * (1.0 - pr))[:, None]).T @ x + reg


def logistic_log_ratio(w: np.ndarray, x: np.ndarray, y: np.ndarray, canary: np.ndarray, label: float,
                       c: float, scale: float) -> float:
    """log p_D'(w) - log p_D(w) of the exact objective-perturbation minimiser (section (i))."""
    b_d, h_d = _logistic_terms(w, x, y, c)
    b_c, h_c = _logistic_terms(w, canary[None], np.array([label]), math.inf)
    return float(-(np.linalg.norm(b_d + b_c) - np.linalg.norm(b_d)) / scale
                 + math.log(np.linalg.det(h_d + h_c) / np.linalg.det(h_d)))


def section_i(draws: int) -> None:
    from scipy.special import expit

    c, eps = 1.0, 1.0
    norm = math.sqrt(1.0 + 1.0)  # data_norm = 1 and the intercept's 1
    scale = 2.0 * norm / (eps - 2.0 * math.log1p(0.25 * norm * c))
    x = np.array([[1.0, 1.0]] * 5 + [[-1.0, 1.0]] * 5)
    y = np.array([0.0] * 5 + [1.0] * 5)
    canary, label = np.array([0.0, 1.0]), 1.0
    grid = np.linspace(-30.0, 30.0, 121)
    best = max((logistic_log_ratio(np.array([a, b]), x, y, canary, label, c, scale), a, b)
               for a in grid for b in grid)
    print("(i) diffprivlib LogisticRegression, fit_intercept=True, exact minimiser (white-box):")
    print(f"    eps = {eps:g}, C = {c:g}, data_norm = 1, D = 5 x (1, 0) + 5 x (-1, 1), canary (0, 1);")
    print(f"    noise scale s = {scale:.4g}")
    print(f"    largest log density ratio on a grid of w in [-30, 30]^2: {best[0]:.4g} at w = ({best[1]:g}, "
          f"{best[2]:g}) (a pure eps-DP output has at most eps = {eps:g})")
    rng = np.random.default_rng(0)
    xs, ys = np.vstack([x, canary]), np.append(y, label)
    direction = rng.standard_normal((draws, 2))
    b = direction / np.linalg.norm(direction, axis=1, keepdims=True) * rng.gamma(2.0, scale, draws)[:, None]
    w = np.zeros_like(b)
    reg = np.diag([1.0 / c, 0.0])
    for _ in range(200):  # damped Newton, every draw at once; a draw with no minimiser fails the check below
        pr = expit(w @ xs.T)
        grad = (pr - ys) @ xs + b + w @ reg
        hess = np.einsum("ni,ij,ik->njk", pr * (1.0 - pr), xs, xs) + reg[None]
        hess += 1e-12 * np.eye(2)[None]  # a draw that runs off has a singular Hessian
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        w -= step * np.minimum(1.0, 5.0 / np.maximum(np.linalg.norm(step, axis=1, keepdims=True), 1e-300))
    pr = expit(w @ xs.T)
    ok = np.linalg.norm((pr - ys) @ xs + b + w @ reg, axis=1) < 1e-8
    ratios = np.array([logistic_log_ratio(v, x, y, canary, label, c, scale) for v in w[ok]])
    share = ok.mean()
    print(f"    {draws} draws of b on D': a minimiser exists for {share:.3f} of them (the rest run off: no")
    print("    minimiser, diffprivlib returns where L-BFGS stops); P_D'(log ratio > eps) = "
          f"{share * np.mean(ratios > eps):.4f}, > 2 eps: {share * np.mean(ratios > 2 * eps):.4f}")
    print()


# ------------------------------------------------------------------------------- (j) Opacus

def section_j() -> None:
    try:
        import opacus
        import torch
    except ImportError:
        print("(j) Opacus: not run (torch or opacus does not import: pip install -e '.[opacus]')")
        print()
        return
    from opacus.accountants import RDPAccountant

    from tests.support.opacus_target import OpacusLogistic

    torch.set_num_threads(1)
    base = OpacusLogistic()
    rdp = RDPAccountant()
    for _ in range(base.steps):
        rdp.step(noise_multiplier=base.noise_multiplier, sample_rate=base.sampling_rate)
    print(f"(j) Opacus {opacus.__version__} (torch {torch.__version__}) PrivacyEngine, logistic regression, "
          f"{base.features} features, n = {base.n}, m = {base.m} Dirac canaries of norm {base.radius:g}")
    print(f"    q = 1/{base.batches}, sigma = {base.noise_multiplier:g}, C = {base.max_grad_norm:g}, "
          f"T = {base.steps}; claim: dpcert's Poisson accountant, eps <= "
          f"{base.claim().epsilon(DELTA):.4g} at delta = 1e-5 (Opacus' RDP accountant: "
          f"{rdp.get_epsilon(DELTA):.4g})")
    print("    looks at R = 1, 5, 20 pooled runs, each at confidence 1 - 0.05/3")
    head = (f"{'variant':12} {'R':>4} {'eps_lower':>9} {'mu_lower':>8} {'eps_upper':>9} {'curve':>8} "
            f"{'refuted':>8} {'s':>6}")
    print(head)
    print("-" * len(head))
    conf = 1.0 - (1.0 - CONF) / 3
    background = base.background(np.random.default_rng(0))
    for variant in ("correct", "low_noise", "no_clipping"):
        t = OpacusLogistic(variant=variant)
        for runs in (1, 5, 20):
            rep = canary_audit(t.train, t.score, t.canaries(), np.random.default_rng(runs), data=background,
                               claim=t.claim(), delta=DELTA, confidence=conf, runs=runs)
            a = rep.audit
            print(f"{variant:12} {runs:>4} {a.epsilon_lower:>9.4g} {a.mu_lower:>8.4g} "
                  f"{rep.epsilon_upper:>9.4g} {'rejected' if a.claim_refuted else 'kept':>8} "
                  f"{rep.refuted!s:>8} {rep.seconds:>6.1f}")
            if rep.refuted:
                break
    print()


# ------------------------------------------------------------------------------- (c) speed

def section_c() -> None:
    print("(c) seconds of one_run_audit on 1000 canaries (default grid, median of 5): wall clock and")
    print("    CPU time of the process (the machine is shared: load does not inflate the CPU time)")
    rng = np.random.default_rng(0)
    coins = rng.integers(0, 2, 1000).astype(bool)
    scores = coins * 1.0 + rng.standard_normal(1000)
    for delta in (0.0, DELTA):
        wall, cpu = [], []
        for _ in range(5):
            t0, c0 = time.perf_counter(), time.process_time()
            one_run_audit(scores, coins, delta, CONF)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        print(f"delta = {delta:g}: wall {statistics.median(wall):.3f} s, CPU {statistics.median(cpu):.3f} s "
              f"(CPU min {min(cpu):.3f}, max {max(cpu):.3f})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--skip-estimator", action="store_true", help="skip (b1), the slowest row")
    ap.add_argument("--diffprivlib-runs", type=int, default=50)
    ap.add_argument("--logistic-samples", type=int, default=300, help="fits per dataset in (e) and (h)")
    ap.add_argument("--only", choices=["f", "g", "h", "i", "j"],
                    help="run one of the sections (f) to (j) only")
    ap.add_argument("--intercept-draws", type=int, default=20_000, help="Monte Carlo draws in (i)")
    args = ap.parse_args(argv)
    if args.only is None or args.only == "f":
        section_f(args.seeds)
    if args.only is None or args.only == "g":
        section_g()
    if args.only is None or args.only == "h":
        section_h(args.logistic_samples)
    if args.only is None or args.only == "i":
        section_i(args.intercept_draws)
    if args.only == "j":  # its own block on the page: the full run does not need the opacus extra
        section_j()
    if args.only is not None:
        return 0
    section_a(args.seeds)
    if not args.skip_estimator:
        section_b_estimator()
    section_b_variants()
    section_d(args.diffprivlib_runs)
    section_e(args.logistic_samples)
    section_c()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
