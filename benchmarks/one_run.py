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
(c) Seconds of ``one_run_audit`` on 1,000 canaries (default grid, median of 5; wall and CPU time).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from typing import Any

import numpy as np
from scipy import stats

from accountant import GDP, ApproxDP, dpsgd_noise_multiplier
from verify import canary_audit, one_run_audit
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

        from diffprivlib.models import GaussianNB  # type: ignore[import-untyped]
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
    """The mechanism ``(data, rng) -> the model's output at x = probe`` of diffprivlib's
    ``LogisticRegression(epsilon, data_norm = 1)`` (name "logistic": the decision value) or
    ``LinearRegression(epsilon, bounds_X = bounds_y = (-1, 1))`` ("linear": the prediction), fitted
    on the rows (x, y) of ``data`` and seeded from ``rng``; None when diffprivlib does not import."""
    try:
        import warnings

        from diffprivlib.models import LinearRegression, LogisticRegression
    except ImportError:
        return None

    def mechanism(data: np.ndarray, rng: np.random.Generator) -> float:
        seed = int(rng.integers(2**31))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
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
    answers the opposite of the canary's label at x = 1."""
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
    ap.add_argument("--logistic-samples", type=int, default=300, help="fits per dataset in (e)")
    args = ap.parse_args(argv)
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
