"""Batch samplers of DP-SGD: what the Poisson figure says about a shuffled or fixed-size pipeline.

For realistic settings (q 1e-3..1e-1, sigma 0.5..2, 1..100 epochs, delta 1e-5) one table:

- Poisson: dpcert's certified upper bound (``dpsgd_epsilon``), and dp_accounting's PLD accountant
  on the same run (``PoissonSampledDpEvent``) beside it;
- shuffle (add/remove): the certified lower bound on the true epsilon (the batch-linear-query max
  construction) and the sound upper bound (no amplification, GDP(sqrt(E)/sigma)), with the
  lower bound over the Poisson figure (how far a shuffled pipeline reporting the Poisson figure
  can be from the truth, at least);
- fixed-size without replacement (replace-one): dpcert's lower and upper bounds, and
  dp_accounting's RDP accountant (``SampledWithoutReplacementDpEvent``, REPLACE_ONE; its noise
  multiplier is relative to the replace-one sensitivity 2C, so sigma/2 describes the same run);
  dp_accounting 0.6's PLD accountant does not take that event.

    python -m benchmarks.shuffle [--quick]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import math
import time
from typing import Any

from accountant import dpsgd_epsilon

DELTA = 1e-5
#: (q, sigma, epochs): every q x sigma at 1 and 10 epochs, and a few 100-epoch runs.
SETTINGS = [(q, s, e) for q in (1e-3, 1e-2, 1e-1) for s in (0.5, 0.8, 1.0, 2.0) for e in (1, 10)] + \
    [(q, s, 100) for q in (1e-2, 1e-1) for s in (1.0, 2.0)]
QUICK = [(1e-2, 1.0, 10), (1e-3, 0.8, 1), (1e-3, 1.0, 1), (1e-1, 2.0, 10)]
#: The dataset size of dp_accounting's fixed-size event (only the ratio b/n enters its bound).
N = 100_000


def dp_accounting_figures(q: float, s: float, steps: int) -> tuple[float, float] | None:
    """(Poisson PLD epsilon, fixed-size RDP epsilon at sigma/2) from dp_accounting, or None."""
    try:
        import dp_accounting as dpa
        from dp_accounting import pld, rdp
    except ImportError:
        return None
    acc = pld.PLDAccountant(value_discretization_interval=1e-3)
    acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s)), steps)
    poisson = float(acc.get_epsilon(DELTA))
    wor = rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    wor.compose(dpa.SampledWithoutReplacementDpEvent(N, round(q * N), dpa.GaussianDpEvent(s / 2)), steps)
    return poisson, float(wor.get_epsilon(DELTA))


def row(q: float, s: float, epochs: int) -> dict[str, Any]:
    steps = round(epochs / q)
    t0 = time.perf_counter()
    poisson = dpsgd_epsilon(q, s, steps, DELTA, also=())
    shuffle = dpsgd_epsilon(q, s, steps, DELTA, also=(), sampler="shuffle")
    fixed = dpsgd_epsilon(q, s, steps, DELTA, also=(), sampler="fixed")
    ours = time.perf_counter() - t0
    theirs = dp_accounting_figures(q, s, steps)
    return {"q": q, "sigma": s, "epochs": epochs, "steps": steps, "poisson": poisson.epsilon_upper,
            "dpa_poisson": None if theirs is None else theirs[0],
            "shuffle_lower": shuffle.epsilon_lower, "shuffle_upper": shuffle.epsilon_upper,
            "fixed_lower": fixed.epsilon_lower, "fixed_upper": fixed.epsilon_upper,
            "dpa_fixed": None if theirs is None else theirs[1], "seconds": ours}


def _f(x: float | None) -> str:
    if x is None:
        return "-"
    return "inf" if math.isinf(x) else f"{x:.4g}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="four settings only")
    args = ap.parse_args(argv)
    try:
        version = importlib.metadata.version("dp-accounting")
    except importlib.metadata.PackageNotFoundError:
        version = "not installed"
    print(f"DP-SGD epsilon at delta = {DELTA:g} by batch sampler; dp_accounting {version}")
    print("Poisson and shuffle: add/remove adjacency; fixed-size: replace-one (a different relation: "
          "not comparable with the other columns)")
    print("x Poisson = shuffle lower bound / Poisson figure: the least factor by which the Poisson figure "
          "under-reports a shuffled pipeline\n")
    head = (f"{'q':>6} {'sigma':>5} {'ep':>4} {'steps':>6} | {'Poisson':>8} {'dp_acc':>8} | "
            f"{'shuf lo':>8} {'shuf up':>8} {'x Poisson':>9} | {'fix lo':>8} {'fix up':>8} "
            f"{'dp_acc RDP':>10} | {'ours s':>6}")
    print(head)
    print("-" * len(head))
    for q, s, e in (QUICK if args.quick else SETTINGS):
        r = row(q, s, e)
        ratio = r["shuffle_lower"] / r["poisson"]
        print(f"{q:>6g} {s:>5g} {e:>4} {r['steps']:>6} | {_f(r['poisson']):>8} {_f(r['dpa_poisson']):>8} | "
              f"{_f(r['shuffle_lower']):>8} {_f(r['shuffle_upper']):>8} {ratio:>9.3g} | "
              f"{_f(r['fixed_lower']):>8} {_f(r['fixed_upper']):>8} {_f(r['dpa_fixed']):>10} | "
              f"{r['seconds']:>6.1f}", flush=True)
        assert r["shuffle_lower"] <= r["shuffle_upper"] and r["fixed_lower"] <= r["fixed_upper"]


if __name__ == "__main__":
    main()
