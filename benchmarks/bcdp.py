"""Benchmark: Figure 3 of Aliakbarpour et al. (BCDP mean estimation, Appendix B.1), reproduced.

Run ``python -m benchmarks.bcdp [--trials 1000] [--n 10000] [--seed 0]``. d = 10,
delta = (0.2, 0.2, 2, ..., 2), eps = 2; records are +-1 vectors drawn from the prior of eqs. (59)-(60)
(all coordinates equal to one fair bit with probability q, else independent fair bits), for q in
{0, 0.1, ..., 1}. Per trial and per method: the squared L2 error of the mean of the n released
vectors against the records' mean, summed over the 10 coordinates, with and without projection
onto [-1, 1]^d. Methods: the baseline (the Duchi et al. channel at min delta = 0.2 on the whole
record), M_mean with the paper's zeta = (1 + q)/2, and M_mean with dpcert's zeta (least worst-case
MSE over [-1, 1]^d for n users); methods with the same c-vector are the same mechanism and share
their draws in a trial. The table gives the median and quartiles over trials, and the
closed-form worst-case MSE (unprojected) of each method.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from accountant import BCDP, implies
from mechanisms.local import BCDPMean

D = 10
DELTAS = (0.2, 0.2) + (2.0,) * 8
EPS = 2.0
METHODS = ("baseline", "paper", "minimax")


@dataclass(frozen=True)
class Row:
    """One q: per method, the c-vector's ends, worst-case MSE, and quartiles of the errors."""

    q: float
    c_first: dict[str, float]
    c_last: dict[str, float]
    worst_case: dict[str, float]
    quartiles: dict[str, tuple[float, float, float]]  # keys "method" and "method+proj"


def mechanisms(q: float, n: int) -> dict[str, BCDPMean]:
    target = BCDP(DELTAS, q, EPS)
    out = {"baseline": BCDPMean((min(DELTAS),) * D, q),
           "paper": BCDPMean.calibrated(target, "paper"),
           "minimax": BCDPMean.calibrated(target, "minimax", n=n)}
    for name, m in out.items():
        assert implies(m.guarantee(), target), name
    return out


def draw_records(q: float, n: int, trials: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """(trials, n, d) records in {-1, 1}^d from the prior of App. B.1 (data, not a mechanism)."""
    shared = rng.random((trials, n, 1)) < q
    z = rng.integers(0, 2, size=(trials, n, 1))
    bits = np.where(shared, z, rng.integers(0, 2, size=(trials, n, D)))
    return 2.0 * bits - 1.0


def errors(mech: BCDPMean, x: NDArray[np.float64],
           rng: np.random.Generator) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Squared errors of the released mean per trial, unprojected and projected onto [-1, 1]^d."""
    t, n, d = x.shape
    est = np.asarray(mech.sample(x.reshape(t * n, d), rng)).reshape(t, n, d).mean(axis=1)
    truth = x.mean(axis=1)
    raw = np.sum((est - truth) ** 2, axis=1)
    proj = np.sum((np.clip(est, -1.0, 1.0) - truth) ** 2, axis=1)
    return raw, proj


def figure3(qs: list[float], n: int, trials: int, rng: np.random.Generator,
            chunk: int = 10) -> list[Row]:
    rows = []
    for q in qs:
        mechs = mechanisms(q, n)
        errs: dict[str, list[NDArray[np.float64]]] = {k: [] for m in METHODS for k in (m, m + "+proj")}
        done = 0
        while done < trials:
            t = min(chunk, trials - done)
            x = draw_records(q, n, t, rng)
            seen: dict[tuple[float, ...], tuple[NDArray[np.float64], NDArray[np.float64]]] = {}
            for name, mech in mechs.items():
                # a method whose c equals another's is the same mechanism: it reuses those draws
                if mech.c not in seen:
                    seen[mech.c] = errors(mech, x, rng)
                raw, proj = seen[mech.c]
                errs[name].append(raw)
                errs[name + "+proj"].append(proj)
            done += t
        quart = {}
        for k, e in errs.items():
            lo, med, hi = (float(v) for v in np.quantile(np.concatenate(e), [0.25, 0.5, 0.75]))
            quart[k] = (lo, med, hi)
        rows.append(Row(q, {k: m.c[0] for k, m in mechs.items()},
                        {k: m.c[-1] for k, m in mechs.items()},
                        {k: m.worst_case_mse(n) for k, m in mechs.items()}, quart))
    return rows


def table(rows: list[Row]) -> str:
    def cell(v: tuple[float, float, float]) -> str:
        return f"{v[1]:.3g} [{v[0]:.3g}, {v[2]:.3g}]"

    head = ("| q | c_1 / c_d paper | c_1 / c_d minimax | baseline | paper zeta | minimax zeta "
            "| baseline +proj | paper +proj | minimax +proj | worst-case MSE b / p / m |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        lines.append(
            f"| {r.q:.1f} | {r.c_first['paper']:.3f} / {r.c_last['paper']:.3f} "
            f"| {r.c_first['minimax']:.3f} / {r.c_last['minimax']:.3f} "
            + " ".join(f"| {cell(r.quartiles[k])}" for k in
                       ("baseline", "paper", "minimax", "baseline+proj", "paper+proj", "minimax+proj"))
            + f" | {r.worst_case['baseline']:.3g} / {r.worst_case['paper']:.3g} / "
              f"{r.worst_case['minimax']:.3g} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--q", type=float, nargs="*", default=[i / 10 for i in range(11)])
    ap.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = figure3(args.q, args.n, args.trials, np.random.default_rng(args.seed))
    print(f"Figure 3 (App. B.1): d = {D}, delta = {DELTAS}, eps = {EPS}, n = {args.n}, "
          f"{args.trials} trials; squared L2 error of the mean: median [25%, 75%]")
    print(table(rows))
    print(f"{time.perf_counter() - t0:.0f} s")
    if args.json is not None:
        args.json.write_text(json.dumps([r.__dict__ for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
