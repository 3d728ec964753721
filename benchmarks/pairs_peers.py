"""Issue 14: the pairs the peers express, dpcert against dp_accounting on the same pairs.

Rows (delta = 1e-5): Gaussians with random sensitivity (dp_accounting's
``from_mixture_gaussian_mechanism``), the truncated discrete Gaussian (its
``from_discrete_gaussian_mechanism(truncation_bound=m)``), the Poisson-subsampled Gaussian under
replace-one adjacency (its ``from_gaussian_mechanism(..., neighboring_relation=REPLACE_ONE)``,
whose privacy loss is documented as the same pair), and a Poisson-subsampled asymmetric pmf pair
(dp_accounting does not subsample a pmf pair: no anchor).

"truth" is an independent value where one is cheap: mpmath root and normal tails for one mixture
step (``references.GaussianMixtureRef``), exact enumeration of composed finite pairs
(``references.PairRef``); "-" otherwise. dpcert's columns are its certified bracket
[lower, upper]; dp_accounting's is its pessimistic estimate at its default grid
(value_discretization_interval 1e-4). Its mixture of Gaussians took ~7 minutes per row on the
shared 2-core machine, so it runs only with ``--mixture-anchor``. Seconds are wall-clock.

    python -m benchmarks.pairs_peers [--mixture-anchor]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from typing import Any

from mpmath import mpf

from accountant import (
    GDP,
    PLD,
    MixtureGaussianPair,
    TruncatedDiscreteGaussianPair,
    subsample,
)
from tests.support.references import (
    ONE,
    ZERO,
    GaussianMixtureRef,
    PairRef,
    epsilon_exact,
    mpf_of,
    subsample_pair,
    truncated_discrete_gaussian,
)

try:
    from dp_accounting.pld import privacy_loss_distribution as dpa
except ImportError:  # pragma: no cover - optional anchor
    dpa = None


def _timed(f: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    v = f()
    return v, time.perf_counter() - t0


Row = tuple[str, Any, Callable[[], Any] | None, Callable[[], float] | None]


def rows(delta: float, mixture_anchor: bool) -> list[Row]:
    """(name, dpcert PLD builder, dp_accounting builder, truth)."""
    out: list[Row] = []

    def mixture(sigma: float, sens: tuple[float, ...], probs: tuple[float, ...], t: int) -> None:
        name = f"mixture s={sens} p={probs} sigma={sigma} T={t}"
        ours = lambda: PLD.from_pair(MixtureGaussianPair(sigma, sens, probs), count=t)  # noqa: E731
        anchor = None if dpa is None or not mixture_anchor else (
            lambda: dpa.from_mixture_gaussian_mechanism(
            sigma, list(sens), list(probs)).self_compose(t))
        truth = None
        if t == 1:
            mix = [(mpf_of(s) / mpf_of(sigma), mpf_of(p)) for s, p in zip(sens, probs, strict=True)]
            ref = GaussianMixtureRef([(ZERO, ONE)], mix)
            ref_add = GaussianMixtureRef([(-m, w) for m, w in mix], [(ZERO, ONE)])
            truth = lambda: max(float(epsilon_exact(ref, mpf(delta))),  # noqa: E731
                                float(epsilon_exact(ref_add, mpf(delta))))
        out.append((name, ours, anchor, truth))

    mixture(1.0, (0.0, 1.0, 2.0), (0.81, 0.18, 0.01), 1)
    mixture(1.0, (0.0, 1.0, 2.0), (0.81, 0.18, 0.01), 100)
    mixture(0.8, (0.5, 1.5, 3.0), (0.2, 0.5, 0.3), 1)
    mixture(2.0, (0.0, 1.0), (0.99, 0.01), 1000)

    def tdg(sigma: float, m: int, d: int, t: int) -> None:
        name = f"truncated DG sigma={sigma} m={m} Delta={d} T={t}"
        ours = lambda: PLD.from_pair(TruncatedDiscreteGaussianPair(sigma, m, d), count=t)  # noqa: E731
        anchor = None if dpa is None else (lambda: dpa.from_discrete_gaussian_mechanism(
            sigma, d, truncation_bound=m).self_compose(t))
        base = truncated_discrete_gaussian(sigma, m, d)
        truth = (lambda: float(epsilon_exact(base.power(t) if t > 1 else base, mpf(delta)))) \
            if (2 * m + d + 1) <= 12 or t <= 3 else None
        out.append((name, ours, anchor, truth))

    tdg(2.0, 12, 1, 1)
    tdg(2.0, 12, 1, 10)
    tdg(3.0, 20, 2, 2)

    def replace(sigma: float, q: float, t: int) -> None:
        name = f"replace-one DP-SGD q={q} sigma={sigma} T={t}"
        ours = lambda: subsample(GDP(1.0 / sigma), q, adjacency="replace").self_compose(t)  # noqa: E731
        anchor = None if dpa is None else (lambda: dpa.from_gaussian_mechanism(
            sigma, sensitivity=1.0, sampling_prob=q,
            neighboring_relation=dpa.NeighborRel.REPLACE_ONE).self_compose(t))
        truth = None
        if t == 1:
            keep, m_ = mpf_of(q), ONE / mpf_of(sigma)
            ref = GaussianMixtureRef([(ZERO, 1 - keep), (-m_, keep)], [(ZERO, 1 - keep), (m_, keep)])
            truth = lambda: float(epsilon_exact(ref, mpf(delta)))  # noqa: E731
        out.append((name, ours, anchor, truth))

    replace(1.0, 0.01, 1)
    replace(1.0, 0.01, 1000)

    p, q, r = [0.5, 0.3, 0.2, 0.0], [0.1, 0.2, 0.3, 0.4], 0.1
    rem, add = subsample_pair(PairRef.from_floats(p, q), r)
    for t in (1, 20):
        name = f"asymmetric pmfs subsampled r={r} T={t}"

        def ours(t: int = t) -> PLD:
            return subsample(PLD.from_pmfs(p, q), r).self_compose(t)

        def truth(t: int = t) -> float:
            return max(float(epsilon_exact(x.power(t) if t > 1 else x, mpf(delta))) for x in (rem, add))

        out.append((name, ours, None, truth))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mixture-anchor", action="store_true",
                        help="run dp_accounting on the mixture rows (minutes per row here)")
    args = parser.parse_args()
    delta = 1e-5
    print(f"delta = {delta}; dpcert default tol; dp_accounting default grid (1e-4)")
    head = (f"{'pair':<52} {'dpcert lower':>13} {'dpcert upper':>13} {'s':>6} "
            f"{'dp_acc':>11} {'s':>6} {'truth':>11}")
    print(head)
    print("-" * len(head))
    for name, ours, anchor, truth in rows(delta, args.mixture_anchor):
        def bracket(ours: Callable[[], PLD] = ours) -> tuple[float, float]:
            return ours().epsilon_bracket(delta)

        (lo, up), t_ours = _timed(bracket)
        dpa_s, t_dpa = "-", math.nan
        if anchor is not None:
            def anchor_epsilon(anchor: Callable[[], Any] = anchor) -> float:
                eps: float = anchor().get_epsilon_for_delta(delta)
                return eps

            v, t_dpa = _timed(anchor_epsilon)
            dpa_s = f"{v:.7f}"
        tr = "-" if truth is None else f"{truth():.7f}"
        print(f"{name:<52} {lo:>13.7f} {up:>13.7f} {t_ours:>6.2f} {dpa_s:>11} "
              f"{t_dpa:>6.2f} {tr:>11}")


if __name__ == "__main__":
    main()
