"""Benchmark: audit correct and deliberately buggy mechanisms; print verdicts and lower bounds.

Run ``python -m benchmarks.audit [--samples N] [--seeds K] [--sections ...]``. Each case has a known
verdict; the table shows, per case, the verdict, epsilon_lower (mu_lower for GDP claims) against the
true value, samples per input and seconds. Sections: the benchmark cases; structured outputs (None,
lists, dicts, strings, refusals; the adaptive search against random pairs and StatDP patterns);
floating point apart from the algorithm (the distributional and the representation finding of
float-naive and lattice releases, with right and wrong sensitivities); speed (vectorised draws per
second, and seconds per audit of plain callables returning a float, a string, a list, a dict);
analysis (the audit's CPU time beyond drawing against a plain Clopper-Pearson histogram auditor at
equal samples; also part of speed).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from typing import Any

import numpy as np

from accountant import GDP, RDP, ZCDP, Guarantee, PureDP
from mechanisms import Domain, Gaussian, noisy_histogram
from tests.support.audit_fixtures import NoiselessPTRMode, TopKReusingNoise, lattice_laplace
from verify import audit
from verify.audit.core import SELECTION_LEVEL_FACTOR
from verify.audit.regions import (
    Candidate,
    SortedScores,
    evaluate_renyi,
    evaluate_renyi_bins,
    renyi_bins,
    renyi_values,
    thresholds,
)
from verify.audit.renyi import claimed_renyi
from verify.audit.scores import Score
from verify.examples import (
    GeometricMechanism,
    NoisySum,
    RandomizedResponse,
    ScalarLaplace,
    SparseVector,
    TextbookLaplace,
    cases,
    textbook_laplace,
)
from verify.neighbours import AdaptiveSearch, PatternSearch, RandomSearch


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--only", default=None, help="substring of the case names to run")
    ap.add_argument("--no-speed", action="store_true", help="skip the speed measurements")
    ap.add_argument("--sections", default="cases,structured,fp,speed",
                    help="comma-separated: cases, structured, fp (floating point apart), renyi (multi-bin "
                         "against two-bin Renyi bounds; run it at --samples 20000 --seeds 40), rho (rho and "
                         "mu bounds on Gaussian histograms), svt (the sparse vector releasing noisy "
                         "answers, per seed), search, "
                         "search-cost (the default adaptive search against the witness audit: CPU "
                         "time and bounds, interleaved per seed, medians), search-reach (the fraction "
                         "of the known worst pair's loss the search reaches on exact and noisy "
                         "estimates, the minimum over at least 8 seeds), "
                         "speed (includes analysis), analysis (the audit's analysis time against a plain "
                         "Clopper-Pearson histogram auditor at 10^4, 10^5 and 10^6 samples per input), "
                         "stream (a vectorised Laplace audited on a local Dask cluster of 2 worker processes "
                         "at --stream-samples draws per input: seconds, driver and worker peak RSS)")
    ap.add_argument("--stream-samples", default="1e7,1e8",
                    help="comma-separated draws per input of the stream section")
    args = ap.parse_args(argv)
    sections = set(args.sections.split(","))
    header = (f"{'mechanism':42} {'claim':>9} {'known':>7} {'verdict':>9} {'lower bound':>12} "
              f"{'true':>7} {'ratio':>6} {'samples':>9} {'s':>6}")
    if "cases" in sections:
        print(header)
        print("-" * len(header))
    wrong = 0
    for case in cases():
        if "cases" not in sections:
            break
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
    if "structured" in sections:
        wrong += structured_section(args.samples, args.seeds, args.confidence)
    if "fp" in sections:
        wrong += fp_section(args.samples, args.seeds, args.confidence)
    if "renyi" in sections:
        renyi_section(args.samples, args.seeds, args.confidence)
    if "rho" in sections:
        rho_section(args.samples, args.seeds, args.confidence)
    if "stream" in sections:
        stream_section([int(float(x)) for x in args.stream_samples.split(",")], args.confidence)
    if "svt" in sections:
        wrong += svt_section(args.samples, args.seeds, args.confidence)
    if "search" in sections:  # hill climbing against the surrogate search (benchmarks/audit_search.py)
        from benchmarks.audit_search import search_section
        wrong += search_section(args.samples, args.seeds, args.confidence)
    if "search-cost" in sections:  # the search's time and bounds against the witness audit
        from benchmarks.audit_search import cost_section
        cost_section(args.samples, args.seeds, args.confidence, args.only)
    if "search-reach" in sections:  # the fraction of the known worst the search reaches, no draws
        from benchmarks.audit_search import reach_section
        reach_section(max(args.seeds, 8))
    if sections & {"cases", "structured", "fp", "search", "svt"}:
        print(f"\nverdicts different from the known one: {wrong}")
    if not args.no_speed and "speed" in sections:
        speed(args.samples)
        structured_speed(args.samples)
    if not args.no_speed and sections & {"speed", "analysis"}:
        analysis_speed(args.confidence)
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


# --------------------------------------------------------------- streaming on a local Dask cluster


def vectorised_laplace(x: float, rng: np.random.Generator, size: int) -> np.ndarray:
    """x + Laplace(1) as doubles: 1-DP at sensitivity 1 as real numbers (so audited with
    ``floating_point=False``)."""
    return x + rng.laplace(0.0, 1.0, size)


def peak_rss_mb() -> float:
    """This process's peak resident set size in MB (``ru_maxrss``: KB on Linux)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def stream_section(sizes: list[int], confidence: float, workers: int = 2) -> None:
    """A streaming audit at scale: ``vectorised_laplace`` against its true claim PureDP(1) on a
    local Dask cluster (``workers`` processes of one thread, started per row; the scheduler runs in
    the driver), ``executor=client.get_executor()``. The driver holds the selection draws (at most
    ``MAX_SELECTION_DRAWS`` per input) and the counts; each worker draws and counts one chunk of
    ``CHUNK`` draws at a time (tasks of at least ``TASK_CHUNKS`` chunks, at most
    ``MAX_TASKS_PER_INPUT`` tasks per input). Shown per row: draws per input, wall seconds, draws per
    second (both inputs), the driver's peak RSS (over the benchmark process so far, scheduler
    included) and the largest worker's, and epsilon_lower (the truth is 1). Last, 10^9 draws per
    input projected from the largest row's throughput (time linear in the draws: the selection
    half is capped, so this overestimates slightly)."""
    from distributed import Client, LocalCluster

    from verify.audit.sampling import MAX_SELECTION_DRAWS
    from verify.audit.streaming import MAX_TASKS_PER_INPUT, TASK_CHUNKS

    header = (f"{'stream: samples/input':>21} {'seconds':>8} {'draws/s':>11} {'driver MB':>9} "
              f"{'worker MB':>9} {'eps_lower':>9}")
    print(f"\nvectorised Laplace vs PureDP(1), floating_point=False, confidence {confidence}; local Dask "
          f"cluster, {workers} worker processes x 1 thread; selection <= {MAX_SELECTION_DRAWS:.0e} draws "
          f"per input, tasks of >= {TASK_CHUNKS} x 65536 draws, <= {MAX_TASKS_PER_INPUT} per input\n"
          f"{header}\n" + "-" * len(header))
    rate = math.nan
    for n in sizes:
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,  # type: ignore[no-untyped-call]
                          dashboard_address=":0") as cluster, Client(cluster) as client:  # type: ignore[no-untyped-call]
            client.run(peak_rss_mb)  # workers started and importing before the clock starts
            t0 = time.perf_counter()
            r = audit(vectorised_laplace, [(0.0, 1.0)], PureDP(1.0), samples=n, seed=0, vectorised=True,
                      confidence=confidence, floating_point=False, executor=client.get_executor())
            secs = time.perf_counter() - t0
            worker_mb = max(client.run(peak_rss_mb).values())
        rate = 2 * n / secs
        print(f"{n:21.0e} {secs:8.1f} {rate:11.3g} {peak_rss_mb():9.0f} {worker_mb:9.0f} "
              f"{r.epsilon_lower:9.4f}")
        sys.stdout.flush()
    print(f"projected for 1e9 draws per input at {rate:.3g} draws/s: {2e9 / rate / 60:.0f} min "
          f"({2e9 / rate / 3600:.2f} h) on {workers} workers; the driver's memory does not grow with it")


# --------------------------------------------------------------- analysis against a plain auditor


class _Replay:
    """A mechanism whose draws are recorded on a first audit (with the CPU time spent drawing) and
    served again on a second audit of the same seed, so the second audit's time is its analysis."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.store: dict[tuple[str, int, int], Any] = {}
        self.draw_seconds = 0.0
        self.replaying = False

    def sample(self, data: Any, rng: np.random.Generator, size: int) -> Any:
        key = (repr(data), size, int(rng.bit_generator.state["state"]["state"]))
        if self.replaying:
            return self.store[key]
        t0 = time.process_time()
        out = self.inner.sample(data, rng, size)
        self.draw_seconds += time.process_time() - t0
        self.store[key] = out
        return out

    def privacy_loss(self, y: Any, data: Any, data2: Any) -> Any:
        return self.inner.privacy_loss(y, data, data2)


def cp_histogram_auditor(x: np.ndarray, y: np.ndarray, confidence: float, bins: int = 100) -> float:
    """The reference: a plain Clopper-Pearson histogram auditor of pure DP on all draws (no
    selection split). Both samples are binned at the equal-mass cuts of the pooled draws (``bins``
    bins, so it needs no scale; for discrete outputs the cuts fall on the values), the regions are
    the K = 2 (bins - 1) upper and lower tails {bin >= j} and {bin < j}, each tested in both
    orientations, with one-sided Clopper-Pearson bounds at level (1 - confidence) / (4 K) each
    (Bonferroni over 2K tests of two bounds): eps >= log(Q_lower(S) / P_upper(S)) and its mirror.
    The cuts depend on the pooled draws, as in plain auditors (the audit chooses on separate draws)."""
    from scipy import stats as st

    x, y = np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel()
    pooled = np.concatenate([x, y])
    edges = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, bins + 1)[1:-1], method="inverted_cdf"))
    cx = np.bincount(np.searchsorted(edges, x, "right"), minlength=edges.size + 1)
    cy = np.bincount(np.searchsorted(edges, y, "right"), minlength=edges.size + 1)
    tx, ty = np.cumsum(cx[::-1])[::-1][1:], np.cumsum(cy[::-1])[::-1][1:]  # counts of {bin >= j}
    kx = np.concatenate([tx, x.size - tx]).astype(np.float64)
    ky = np.concatenate([ty, y.size - ty]).astype(np.float64)
    gamma = (1.0 - confidence) / (2 * 2 * kx.size)

    def upper(k: np.ndarray, n: int) -> np.ndarray:
        return np.where(k < n, st.beta.isf(gamma, k + 1.0, np.maximum(n - k, 1.0)), 1.0)

    def lower(k: np.ndarray, n: int) -> np.ndarray:
        return np.where(k > 0, st.beta.ppf(gamma, np.maximum(k, 1.0), n - k + 1.0), 0.0)

    with np.errstate(divide="ignore"):
        e1 = np.log(lower(ky, y.size)) - np.log(upper(kx, x.size))
        e2 = np.log(lower(kx, x.size)) - np.log(upper(ky, y.size))
    return max(0.0, float(np.max(e1)), float(np.max(e2)))


#: Repeats of the analysis section at 10^4 draws per input, as a multiple of ``repeats`` (each run
#: takes milliseconds, so a median of 3 moves with every spike of the machine's load).
SMALL_REPEATS = 5


def analysis_speed(confidence: float, sizes: tuple[int, ...] = (10_000, 100_000, 1_000_000),
                   repeats: int = 3) -> None:
    """CPU seconds (``time.process_time``, one process) of the audit beyond drawing, against the
    reference ``cp_histogram_auditor`` on the same number of draws per input, both claimed PureDP(1)
    on (0, 1). draw: the mechanism's ``sample`` calls in a first audit; analysis: the median of
    ``repeats`` audits of the same seed served the recorded draws (the same report); reference:
    the median of ``repeats`` runs of the plain auditor on n fresh draws per input, each run right
    after an analysis (``SMALL_REPEATS`` times as many at 10^4 draws). Lower bounds: the audit's
    epsilon_lower and the reference's."""
    print(f"\nanalysis against a plain Clopper-Pearson histogram auditor (CPU s, medians of {repeats} "
          f"({repeats * SMALL_REPEATS} at 10^4), "
          f"numpy {np.__version__}, confidence {confidence})")
    header = (f"{'mechanism':26} {'n/input':>9} {'draw':>7} {'analysis':>9} {'reference':>10} "
              f"{'ratio':>6} {'audit eps>=':>12} {'ref eps>=':>10}")
    print(header + "\n" + "-" * len(header))
    mechs: list[tuple[str, Any, tuple[Any, Any]]] = [
        ("vectorised Laplace(1)", ScalarLaplace(1.0), (0.0, 1.0)),
        ("randomized response(1)", RandomizedResponse(1.0), (0, 1)),
        ("geometric(1)", GeometricMechanism(1.0), (0, 1)),
    ]
    for name, mech, pair in mechs:
        audit(mech, [pair], PureDP(1.0), samples=1000, seed=0, confidence=confidence)  # warm up
        for n in sizes:
            rep = _Replay(mech)
            first = audit(rep, [pair], PureDP(1.0), samples=n, seed=0, confidence=confidence)
            rep.replaying = True
            rng = np.random.default_rng(n)
            x, y = mech.sample(pair[0], rng, n), mech.sample(pair[1], rng, n)
            analyses, refs = [], []
            # interleaved, so both see the same load; milliseconds at 10^4 draws: more repeats
            for _ in range(repeats * SMALL_REPEATS if n <= 10_000 else repeats):
                t0 = time.process_time()
                second = audit(rep, [pair], PureDP(1.0), samples=n, seed=0, confidence=confidence)
                analyses.append(time.process_time() - t0)
                if second.epsilon_lower != first.epsilon_lower:
                    raise RuntimeError("the replayed audit differs from the first: the analysis is not timed")
                t0 = time.process_time()
                ref = cp_histogram_auditor(x, y, confidence)
                refs.append(time.process_time() - t0)
            rep.store.clear()
            t_analysis, t_ref = statistics.median(analyses), statistics.median(refs)
            print(f"{name:26} {n:>9} {rep.draw_seconds:7.2f} {t_analysis:9.4f} {t_ref:10.4f} "
                  f"{t_analysis / t_ref:6.2f} {first.epsilon_lower:12.4f} {ref:10.4f}")
            sys.stdout.flush()


# --------------------------------------------------------------- structured outputs, floating point


def _lap(rng: np.random.Generator, scale: float, size: int) -> np.ndarray:
    """Exact lattice Laplace noise (the reference sampler), for the correct structured cases."""
    return lattice_laplace(rng, scale, (size,))


def none_or_int(x: int, rng: np.random.Generator, size: int) -> list[Any]:
    """The most blatant PTR bug: always an int on one input, always None on the other."""
    return [0 if x == 0 else None] * size


def list_or_empty(x: float, rng: np.random.Generator, size: int) -> list[Any]:
    """10-DP (Laplace 0.1 on a sensitivity-1 value) in a variable-length list, claimed 1-DP."""
    keep = rng.integers(0, 2, size).astype(bool)
    vals = x + _lap(rng, 0.1, size)
    return [[float(v)] if k else [] for k, v in zip(keep, vals, strict=True)]


def dict_release(x: float, rng: np.random.Generator, size: int) -> list[Any]:
    """10-DP in a dict, claimed 1-DP."""
    return [{"v": float(v)} for v in x + _lap(rng, 0.1, size)]


def svt_none_list(x: Any, rng: np.random.Generator, size: int) -> list[Any]:
    """The sparse vector releasing noisy answers (Roth's Alg. 3) as None/float lists. Its true
    epsilon on these pairs is 10/4 = 2.5, not 2: with threshold noise T and query noise Lap(4),
    each query below T and the released answer v each change probability by a factor at most
    e^{1/4} for a fixed T, exactly e^{1/4} when v < 0 (then T <= v < 0, both Laplace tails are
    exponential), so the output (answer at the 10th query, v < 0) has loss 10/4 on (0^10, 1^10)."""
    a = SparseVector(1.0, variant="noisy_answer").sample(x, rng, size)
    return [[None if np.isnan(v) else float(v) for v in row] for row in a]


def rr_strings(x: int, rng: np.random.Generator, size: int) -> list[str]:
    """Randomized response (exact sampler) answering "yes"/"no": 1-DP, claimed 1-DP."""
    bits = np.asarray(RandomizedResponse(1.0).sample(x, rng, size)).ravel()
    return ["yes" if b else "no" for b in bits]


def answer_or_none(x: int, rng: np.random.Generator, size: int) -> list[Any]:
    """Randomized response (0.5) on whether to answer, then the lattice Laplace (0.5) release in a
    dict: 1-DP, claimed 1-DP."""
    bits = np.asarray(RandomizedResponse(0.5).sample(x, rng, size)).ravel()
    vals = x + _lap(rng, 2.0, size)
    return [{"v": float(v), "n": [1, 2]} if b else None for b, v in zip(bits, vals, strict=True)]


def float_naive_sum(data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
    """Sum of records in [-1, 1] plus numpy Laplace for sensitivity 1 (true 2): wrong algorithm AND
    a float-naive release."""
    return float(np.clip(np.asarray(data, dtype=np.float64), -1, 1).sum()) + rng.laplace(0.0, 1.0, size)


def structured_cases() -> list[tuple[str, Any, Any, Guarantee, bool, float | None, bool]]:
    """(name, mechanism, pairs or search, claim, buggy, true eps, floating_point) of the section."""
    svt_q, svt_q2 = [0.0] * 10, [1.0] * 10
    ramp, ramp2 = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    return [
        ("None vs int (PTR without a test)", none_or_int, [(0, 1)], PureDP(1.0), True, math.inf, True),
        ("list [x + Lap(.1)] or [] (10-DP)", list_or_empty, [(0.0, 1.0)], PureDP(1.0), True, 10.0, False),
        ("dict {'v': x + Lap(.1)} (10-DP)", dict_release, [(0.0, 1.0)], PureDP(1.0), True, 10.0, False),
        ("svt noisy answers as None/float list", svt_none_list, [(svt_q, svt_q2), (ramp, ramp2)],
         PureDP(1.0), True, 2.5, False),
        ("svt noisy answers as NaN-padded array", SparseVector(1.0, variant="noisy_answer"),
         [(svt_q, svt_q2), (ramp, ramp2)], PureDP(1.0), True, 2.5, False),
        ("randomized response as strings", rr_strings, [(0, 1)], PureDP(1.0), False, 1.0, True),
        ("answer (dict) or None, 1-DP", answer_or_none, [(0, 1)], PureDP(1.0), False, 1.0, True),
        ("noiseless-test PTR (adaptive search)", NoiselessPTRMode(),
         AdaptiveSearch((0, 10, 100), integers=True), PureDP(1.0), True, math.inf, True),
        ("noiseless-test PTR (random search)", NoiselessPTRMode(),
         RandomSearch((0, 10, 100), count=10, integers=True), PureDP(1.0), True, math.inf, True),
        ("top-k reusing noise (adaptive, answers)", TopKReusingNoise(1.0, 2),
         AdaptiveSearch((0, 10, 5), "answers"), PureDP(1.0), True, None, False),
        ("top-k reusing noise (StatDP patterns)", TopKReusingNoise(1.0, 2), PatternSearch(5),
         PureDP(1.0), True, None, False),
    ]


def fp_cases() -> list[tuple[str, Any, list[tuple[Any, Any]], Guarantee, bool, bool]]:
    """(name, mechanism, pairs, claim, algorithm buggy, representation buggy)."""
    return [
        ("float-naive Laplace, right scale", TextbookLaplace(1.0), [(0.0, 1.0)], PureDP(1.0), False, True),
        # (0, 1) shows the representation leak (an output of exactly Z near 0), (-1, 1) the sensitivity
        ("float-naive Laplace, wrong sensitivity", float_naive_sum, [([0.0], [1.0]), ([-1.0], [1.0])],
         PureDP(1.0), True, True),
        ("lattice Laplace, wrong sensitivity", NoisySum(1.0, assumed_sensitivity=1.0), [([-1.0], [1.0])],
         PureDP(1.0), True, False),
        ("lattice Laplace, right scale", ScalarLaplace(1.0), [(0.0, 1.0)], PureDP(1.0), False, False),
    ]


def structured_section(samples: int, seeds: int, confidence: float) -> int:
    header = f"{'structured outputs':42} {'known':>7} {'verdict':>9} {'eps lower':>10} {'true':>6} {'s':>7}"
    print("\n" + header + "\n" + "-" * len(header))
    wrong = 0
    for name, mech, nb, claim, buggy, true, fp in structured_cases():
        for seed in range(seeds):
            t0 = time.perf_counter()
            r = audit(mech, nb, claim, samples=samples, confidence=confidence, seed=seed, vectorised=True,
                      floating_point=fp)
            secs = time.perf_counter() - t0
            expected = buggy and "random search" not in name  # random pairs are expected to miss it
            wrong += r.violation != expected
            true_s = "?" if true is None else f"{true:.3g}"
            verdict = "VIOLATION" if r.violation else "pass"
            print(f"{name:42} {'buggy' if buggy else 'correct':>7} {verdict:>9} "
                  f"{r.epsilon_lower:10.4g} {true_s:>6} {secs:7.2f}")
            sys.stdout.flush()
    return wrong


def fp_section(samples: int, seeds: int, confidence: float) -> int:
    header = (f"{'floating point apart from the algorithm':42} {'distributional':>22} "
              f"{'representation':>22} {'s':>7}")
    print("\n" + header + "\n" + "-" * len(header))
    wrong = 0
    for name, mech, pairs, claim, alg_bug, rep_bug in fp_cases():
        for seed in range(seeds):
            t0 = time.perf_counter()
            r = audit(mech, pairs, claim, samples=samples, confidence=confidence, seed=seed, vectorised=True)
            secs = time.perf_counter() - t0
            rep = r.representation
            wrong += r.distributional.violation != alg_bug
            wrong += (rep is not None and rep.violation) != rep_bug
            dist = r.distributional
            d = f"{'VIOL' if dist.violation else 'pass'} eps>={dist.epsilon_lower:.3g}"
            fp = "n/a"
            if rep is not None:
                fp = f"{'VIOL' if rep.violation else 'pass'} eps>={rep.epsilon_lower:.3g}"
            print(f"{name:42} {d:>22} {fp:>22} {secs:7.2f}")
            sys.stdout.flush()
    return wrong


# --------------------------------------------------------------- Renyi tests: multi-bin against two-bin


def _renyi_pmf(p: np.ndarray, q: np.ndarray, a: float) -> float:
    """D_a(p || q) of two probability vectors, in log space."""
    return float(np.logaddexp.reduce(a * np.log(p) + (1 - a) * np.log(q)) / (a - 1))


def _laplace_renyi(a: float) -> float:
    """D_a(Lap(0, 1) || Lap(1, 1)) [@mironov2017renyi, Prop. 6]."""
    return float(np.logaddexp(math.log(a / (2 * a - 1)) + (a - 1), math.log((a - 1) / (2 * a - 1)) - a)
                 / (a - 1))


FOUR = np.array([0.4, 0.3, 0.2, 0.1])


def renyi_mechanisms() -> list[tuple[str, Any, Any, Any]]:
    """(name, sampler (x, rng, size) -> outputs, true D_a as a function of a, claims), each pair (0, 1);
    the claims are below the truth (refutable) and at it (a refutation there is a false alarm)."""
    def four(x: int, rng: np.random.Generator, size: int) -> np.ndarray:
        v = rng.choice(4, size, p=FOUR)
        return np.asarray(v if x == 0 else 3 - v, dtype=np.float64)

    def four_curve(a: float) -> float:
        return _renyi_pmf(FOUR, FOUR[::-1], a)

    def scaled(curve: Any, c: float) -> RDP:
        return RDP.from_curve(lambda a: c * curve(a))

    return [
        ("gaussian sigma=1 (rho 0.5)", lambda x, rng, n: x + rng.standard_normal(n), lambda a: 0.5 * a,
         [("zCDP(0.3)", ZCDP(0.3)), ("zCDP(0.35)", ZCDP(0.35)), ("zCDP(0.4)", ZCDP(0.4)),
          ("zCDP(0.5) true", ZCDP(0.5))]),
        ("laplace b=1", lambda x, rng, n: x + rng.laplace(0.0, 1.0, n), _laplace_renyi,
         [(f"{c:g} x curve", scaled(_laplace_renyi, c)) for c in (0.8, 0.9, 0.95, 1.0)]),
        ("4 values (.4,.3,.2,.1) reversed", four, four_curve,
         [(f"{c:g} x curve", scaled(four_curve, c)) for c in (0.8, 0.9, 0.95, 1.0)]),
    ]


def gaussian_histogram(k: int, rho: float) -> tuple[Any, list[tuple[list[float], list[float]]], float]:
    """A histogram of k bins with lattice Gaussian noise (the catalogue's ``noisy_histogram``), a
    neighbouring pair, and the pair's zCDP level |Delta|^2 / (2 sigma^2) (its Renyi divergence at
    every order over the order; the lattice noise's is at most that), calibrated to ``rho``: one
    record moved between two bins (Delta = (-1, 1, 0, ...)) for k >= 2, out of the only bin for k = 1."""
    if k == 1:
        pair, sq = ([0.0, 0.0, 0.0], [0.0, 0.0, 1.5]), 1.0
    else:
        pair, sq = ([0.0, 1.0, 2.0], [1.0, 1.0, 2.0]), 2.0
    # the catalogue calibrates to its L2 sensitivity sqrt(2); the pair's divergence scales with sq / 2
    mech = noisy_histogram(Domain(0, k + 1, n=3), ZCDP(rho * 2.0 / sq), edges=list(range(k + 1)),
                           noise="gaussian")
    if not isinstance(mech, Gaussian):
        raise TypeError(f"expected a Gaussian mechanism, got {mech!r}")
    truth = sq / (2.0 * float(mech.sigma) ** 2)
    return mech, [pair], truth


def svt_section(samples: int, seeds: int, confidence: float) -> int:
    """Roth's sparse vector releasing noisy answers (Alg. 3; true eps 2.5 on 10 queries) and the
    correct one (Alg. 1), both claimed 1-DP on the benchmark cases' pairs ((0^10, 1^10) and a ramp),
    per seed: verdict, eps lower bound and the witness region. Returns the number of verdicts
    different from the known one."""
    header = f"{'svt: mechanism':28} {'seed':>4} {'verdict':>9} {'eps_lower':>9} {'s':>6}  witness"
    print(f"\n{samples} draws per input, confidence {confidence}\n{header}\n" + "-" * len(header))
    wrong = 0
    pairs = [([0.0] * 10, [1.0] * 10), ([0.0, 0.0, 0.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0, 0.0, 0.0])]
    for name, variant, buggy in (("noisy answers (Alg. 3)", "noisy_answer", True),
                                 ("correct (Alg. 1)", "correct", False)):
        for seed in range(seeds):
            t0 = time.perf_counter()
            r = audit(SparseVector(1.0, variant=variant), pairs, PureDP(1.0), samples=samples, seed=seed,
                      confidence=confidence)
            wrong += r.violation != buggy
            w = "" if r.witness is None else r.witness.region[:60]
            print(f"{name:28} {seed:4d} {'VIOLATION' if r.violation else 'pass':>9} {r.epsilon_lower:9.3f} "
                  f"{time.perf_counter() - t0:6.1f}  {w}")
            sys.stdout.flush()
    return wrong


def rho_section(samples: int, seeds: int, confidence: float) -> None:
    """Tightness of the audit's rho lower bound (``AuditReport.rho_lower``) and mu lower bound on
    Gaussian histograms of k = 1..5 bins (``gaussian_histogram``) claimed at their pair's true zCDP
    level rho = mu^2/2: the mean bounds over the truth at ``samples`` draws per input, and the least
    ratio over the seeds."""
    header = (f"{'rho: mechanism':22} {'rho':>7} {'samples':>9} {'rho_lower':>9} {'ratio':>6} {'min':>6} "
              f"{'mu_lower/mu':>11} {'s':>6}")
    print(f"\n{seeds} seeds, confidence {confidence}\n{header}\n" + "-" * len(header))
    for k in range(1, 6):
        for mu in (0.5, 1.0, 2.0):
            mech, pairs, rho = gaussian_histogram(k, mu * mu / 2)
            t0 = time.perf_counter()
            reps = [audit(mech, pairs, ZCDP(rho), samples=samples, seed=s, confidence=confidence)
                    for s in range(seeds)]
            secs = (time.perf_counter() - t0) / seeds
            lows = np.array([r.rho_lower for r in reps])
            mus = np.array([r.mu_lower for r in reps])
            print(f"{f'histogram k={k} mu={mu:g}':22} {rho:7.4g} {samples:9d} {lows.mean():9.4g} "
                  f"{lows.mean() / rho:6.3f} {lows.min() / rho:6.3f} {mus.mean() / math.sqrt(2 * rho):11.3f} "
                  f"{secs:6.1f}")
            sys.stdout.flush()


def renyi_section(samples: int, seeds: int, confidence: float) -> None:
    """Held-out power of the multi-bin Renyi lower bound against the two-bin one at the same sample
    size and error level. Per seed: 30% of the draws per input choose the test (two-bin: threshold,
    direction, order; multi-bin: bin count, direction, order) as the audit does, on the output
    itself as the score; the other 70% bound D_a with two one-sided bounds at level (1 - confidence)
    / 2 each (2m bounds at that level / m for m bins). Shown: the share of seeds whose bound refutes
    the claim at the chosen order, the mean bound over the truth at that order, the median chosen
    order, and the mean D_2 bound (order fixed at 2, the rest chosen likewise) against the true D_2.
    A seed where the multi-bin test has no bins (fewer than 3 distinct cuts) counts as bound 0.
    Last, the share of full audits (same size and confidence, every test, fitted scores, their own
    draws) refuting the claim: the audit evaluates whichever Renyi test its selection favours, with
    the curve tests, at a level shared among them."""
    n_sel = round(0.3 * samples)
    n_eval = samples - n_sel
    gamma = (1.0 - confidence) / 2
    gamma_sel = gamma * SELECTION_LEVEL_FACTOR
    score = Score("y", lambda b: np.asarray(b.values, dtype=np.float64).ravel(), fitted=False)  # the output
    header = (f"{'renyi: mechanism':32} {'claim':>14} {'refuted 2-bin':>13} {'multi':>6} "
              f"{'bound/true 2-bin':>16} {'multi':>6} {'order 2-bin':>11} {'multi':>6} "
              f"{'D_2 2-bin':>9} {'multi':>6} {'true':>6} {'audit':>6} {'s':>6}")
    print(f"\n{samples} draws per input, {seeds} seeds, confidence {confidence}\n{header}\n"
          + "-" * len(header))
    for name, sample, truth, claims in renyi_mechanisms():
        for label, claim in claims:
            orders, claimed = claimed_renyi(claim)  # type: ignore[misc]
            at2 = 2.0 * claim.rho if isinstance(claim, ZCDP) else claim.at(2.0)
            refuted = np.zeros(2)
            ratio = np.zeros(2)
            d2 = np.zeros(2)
            chosen: list[list[float]] = [[], []]
            audits = 0
            t0 = time.perf_counter()
            for seed in range(seeds):
                rng = np.random.default_rng([seed, 2026])
                audits += audit(sample, [(0, 1)], claim, samples=samples, confidence=confidence, seed=seed,
                                vectorised=True, floating_point=False).violation
                sp, sq = sample(0, rng, n_sel), sample(1, rng, n_sel)
                ep, eq = sample(0, rng, n_eval), sample(1, rng, n_eval)
                srt = SortedScores.of(sp, sq)
                thr = thresholds(srt)
                for k, (ords, cl) in enumerate(((orders, claimed), (np.array([2.0]), np.array([at2])))):
                    vals, order, direction = renyi_values(srt, thr, gamma_sel, ords, cl)
                    j = int(np.argmax(vals))
                    two = Candidate(float(vals[j]), 0, 0, int(direction[j]), float(thr[j]), float(order[j]))
                    multi = renyi_bins(srt, 0, 0, gamma_sel, ords, cl)
                    for i, c in enumerate((two, multi)):
                        if c is None:
                            continue
                        claimed_c = float(cl[int(np.flatnonzero(ords == c.order)[0])])
                        test = evaluate_renyi_bins if c.edges else evaluate_renyi
                        pt = test(c, score, c.count(ep), c.count(eq), n_eval, gamma, 1, claimed_c)
                        low = float(pt.renyi_lower or 0.0)
                        if k == 0:
                            refuted[i] += low > claimed_c
                            ratio[i] += low / truth(c.order)
                            chosen[i].append(c.order)
                        else:
                            d2[i] += low
            secs = time.perf_counter() - t0
            r, q, d = refuted / seeds, ratio / seeds, d2 / seeds
            o = [float(np.median(x)) if x else math.nan for x in chosen]
            print(f"{name:32} {label:>14} {r[0]:13.2f} {r[1]:6.2f} {q[0]:16.3f} {q[1]:6.3f} {o[0]:11.3g} "
                  f"{o[1]:6.3g} {d[0]:9.3f} {d[1]:6.3f} {truth(2.0):6.3f} {audits / seeds:6.2f} {secs:6.1f}")
            sys.stdout.flush()


def structured_speed(samples: int) -> None:
    """Seconds per audit of plain callables drawing the same Laplace value, returned as a float, a
    string, a list and a dict (the call cost included, as a user sees it)."""
    n = min(samples, 200_000)
    forms: list[tuple[str, Any]] = [
        ("float", lambda x, rng: x + float(rng.laplace())),
        ("string", lambda x, rng: "a" if rng.laplace() + x > 0 else "b"),
        ("list", lambda x, rng: [x + float(rng.laplace())]),
        ("dict", lambda x, rng: {"v": x + float(rng.laplace())}),
        ("None or float", lambda x, rng: None if rng.random() < 0.1 else x + float(rng.laplace())),
    ]
    print(f"\n{'output type (plain callable)':30} {'seconds':>8} {'per draw (us)':>14} {'vs float':>9}")
    base = 0.0
    for name, fn in forms:
        t0 = time.perf_counter()
        audit(fn, [(0.0, 1.0)], PureDP(1.0), samples=n, seed=0, floating_point=False)
        t = time.perf_counter() - t0
        base = base or t
        print(f"{name:30} {t:8.2f} {1e6 * t / (2 * n):14.2f} {t / base:9.2f}")


if __name__ == "__main__":
    raise SystemExit(main())
