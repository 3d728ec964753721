"""Benchmark: time of one release of the clipped mean, dpcert against PyDP, diffprivlib and OpenDP.

Run ``python -m benchmarks.per_call [--n 1000 10000] [--calls 400] [--rounds 5]``.
Each library releases the mean of n values clipped into [-10, 10] at pure eps = 1: dpcert's
``clipped_mean`` (the float-safe lattice Laplace sampler, as in ``benchmarks.estimators``), PyDP's
``BoundedMean``, diffprivlib's ``tools.mean`` and OpenDP's clamp >> mean >> Laplace chain. The
mechanisms are built once (construction is not timed); a call is one release on an n-vector that
the library takes as it is (PyDP and OpenDP take a Python list, converted before timing). The
libraries are timed interleaved, ``rounds`` times ``calls`` calls each in turn, so that a shared,
loaded machine slows them alike; the table gives the median time per call over all calls, its
interquartile range, and the ratio of medians to PyDP's. The load average and the versions are
printed with the table.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import math
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from accountant import PureDP
from mechanisms import Domain, clipped_mean

LO, HI, EPS = -10.0, 10.0, 1.0

Release = Callable[[], Any]


def version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def releases(n: int, x: np.ndarray) -> tuple[dict[str, Release], list[str]]:
    """Library -> a zero-argument call releasing one private mean of ``x``; notes on missing ones."""
    rng = np.random.default_rng(1)
    mech = clipped_mean(Domain(LO, HI, n), PureDP(EPS))
    out: dict[str, Release] = {"dpcert (this checkout)": lambda: mech.sample(x, rng)}
    notes: list[str] = []
    xs = x.tolist()
    try:
        from pydp.algorithms.laplacian import BoundedMean

        def pdp() -> Any:
            return BoundedMean(epsilon=EPS, lower_bound=LO, upper_bound=HI, dtype="float").quick_result(xs)

        out[f"pydp {version('python-dp')}"] = pdp
    except Exception as exc:
        notes.append(f"PyDP not importable: {type(exc).__name__}: {str(exc)[:80]}")
    try:
        from diffprivlib import tools

        out[f"diffprivlib {version('diffprivlib')}"] = lambda: tools.mean(x, epsilon=EPS, bounds=(LO, HI))
    except Exception as exc:
        notes.append(f"diffprivlib not importable: {type(exc).__name__}: {str(exc)[:80]}")
    try:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n), dp.symmetric_distance()
        odp = dp.binary_search_chain(
            lambda s: space >> dp.t.then_clamp((LO, HI)) >> dp.t.then_mean()
            >> dp.m.then_laplace(s),
            d_in=2, d_out=EPS)
        out[f"opendp {version('opendp')}"] = lambda: odp(xs)
    except Exception as exc:
        notes.append(f"OpenDP not importable: {type(exc).__name__}: {str(exc)[:80]}")
    return out, notes


def time_interleaved(calls: dict[str, Release], per_round: int, rounds: int) -> dict[str, np.ndarray]:
    """Seconds per call of each release, the libraries taking turns ``rounds`` times."""
    secs: dict[str, list[float]] = {k: [] for k in calls}
    for f in calls.values():  # warm-up: imports, caches, first-call set-up
        for _ in range(20):
            f()
    for _ in range(rounds):
        for name, f in calls.items():
            for _ in range(per_round):
                t0 = time.perf_counter()
                f()
                secs[name].append(time.perf_counter() - t0)
    return {k: np.asarray(v) for k, v in secs.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--calls", type=int, default=400, help="calls per library per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print(f"# clipped mean, bounds [{LO:g}, {HI:g}], pure eps = {EPS:g}; one release per call, median of "
          f"{args.calls * args.rounds} calls ({args.rounds} interleaved rounds of {args.calls})")
    print(f"# load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"| {'n':>6} | {'library':<22} | {'ms/call (median)':>16} | {'IQR (ms)':>15} | {'/ PyDP':>7} |")
    print(f"|{'-' * 8}|{'-' * 24}|{'-' * 18}|{'-' * 17}|{'-' * 9}|")
    notes: list[str] = []
    for n in args.n:
        x = np.random.default_rng(args.seed).normal(size=n)
        calls, notes = releases(n, x)
        secs = time_interleaved(calls, args.calls, args.rounds)
        pydp = next((float(np.median(v)) for k, v in secs.items() if k.startswith("pydp")), math.nan)
        for name, v in secs.items():
            med = float(np.median(v))
            q1, q3 = np.percentile(v, [25, 75]) * 1e3
            iqr = f"{q1:.4f}-{q3:.4f}"
            print(f"| {n:>6} | {name:<22} | {med * 1e3:>16.4f} | {iqr:>15} | {med / pydp:>7.2f} |")
    print(f"# load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    for note in notes:
        print(f"# {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
