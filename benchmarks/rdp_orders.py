"""RDP accounting at fractional orders and of finite and bounded-range mechanisms: tables.

1. DP-SGD: the RDP epsilon of ``subsampled_gaussian_rdp`` on integer orders only (the former default
   grid) and on the default grid (1.1 to 10.9 by 0.1, then integers), next to Opacus's RDP accountant
   (its default orders and conversion) when Opacus is importable, and the PLD upper bound.
2. Exponential mechanisms (eps-bounded range): k-fold composition by the tight BR Renyi curve, by
   (eps^2/8)-zCDP and as pure DP, and the single-mechanism curve against a eps^2/8.
3. k-ary randomized response: the exact Renyi divergence (``to_rdp`` of its declared f-DP) against the
   pure-DP (binary) bound.

    python -m benchmarks.rdp_orders [--quick]

Opacus's ``accountants/analysis/rdp.py`` needs only numpy and scipy; it is loaded by file when the
``opacus`` package is on the path but torch is not (``pip install --no-deps opacus``).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import time
from pathlib import Path
from types import ModuleType

from accountant import (
    BoundedRange,
    PureDP,
    compose,
    dpsgd_pld,
    subsampled_gaussian_rdp,
    to_rdp,
    to_zcdp,
)
from accountant.notions.conversions import randomized_response_renyi
from mechanisms import RandomizedResponse

INTEGER_ORDERS = tuple(float(a) for a in (*range(2, 64), 80, 96, 128, 160, 192, 256, 384, 512))
#: Opacus's RDPAccountant.DEFAULT_ALPHAS (opacus/accountants/rdp.py).
OPACUS_ALPHAS = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))

WORKLOADS = [  # (q, sigma, steps, delta)
    (0.04, 1.5, 2250, 1e-5),
    (0.01, 1.0, 1000, 1e-5),
    (0.02, 0.7, 300, 1e-5),
    (0.001, 0.8, 10_000, 1e-6),
    (0.004, 1.1, 100_000, 1e-5),
]


def opacus_rdp() -> ModuleType | None:
    """Opacus's RDP analysis module, or None when Opacus is not installed."""
    try:
        from opacus.accountants.analysis import rdp
        return rdp  # type: ignore[no-any-return]
    except ImportError:
        pass
    spec = importlib.util.find_spec("opacus")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "accountants" / "analysis" / "rdp.py"
    mod_spec = importlib.util.spec_from_file_location("opacus_rdp_analysis", path)
    if mod_spec is None or mod_spec.loader is None:
        return None
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    return mod


def dpsgd_table(workloads: list[tuple[float, float, int, float]]) -> None:
    op = opacus_rdp()
    print("1. DP-SGD, RDP epsilon (rel = relative to Opacus; 'max per-order' = largest relative "
          "excess of our RDP over Opacus's at its orders)")
    print(f"{'q':>6} {'sigma':>5} {'steps':>6} {'delta':>6} | {'integer':>9} {'default':>9} {'t (s)':>5} |"
          f" {'opacus':>9} {'rel int':>9} {'rel dflt':>9} {'max per-order':>13} | {'PLD upper':>9}")
    for q, s, t, d in workloads:
        e_int = subsampled_gaussian_rdp(q, s, t, orders=INTEGER_ORDERS).epsilon(d)
        t0 = time.perf_counter()
        ours = subsampled_gaussian_rdp(q, s, t)
        e_new = ours.epsilon(d)
        dt = time.perf_counter() - t0
        if op is not None:
            rdp = op.compute_rdp(q=q, noise_multiplier=s, steps=t, orders=OPACUS_ALPHAS)
            e_op = float(op.get_privacy_spent(orders=OPACUS_ALPHAS, rdp=rdp, delta=d)[0])
            mine = subsampled_gaussian_rdp(q, s, t, orders=[float(a) for a in OPACUS_ALPHAS]).epsilons
            per = max((m - o) / o for m, o in zip(mine, rdp, strict=True))
            opx = f" {e_op:9.5f} {(e_int - e_op) / e_op:+9.2e} {(e_new - e_op) / e_op:+9.2e} {per:+13.2e}"
        else:
            opx = f" {'n/a':>9} {'':>9} {'':>9} {'':>13}"
        pld = dpsgd_pld(q, s, t).epsilon(d)
        print(f"{q:6g} {s:5g} {t:6d} {d:6g} | {e_int:9.5f} {e_new:9.5f} {dt:5.2f} |{opx} | {pld:9.5f}")
    if op is None:
        print("   Opacus is not installed: no comparison (pip install --no-deps opacus suffices)")


def bounded_range_table() -> None:
    print("\n2. k exponential mechanisms (eps-BR), epsilon at delta")
    print(f"{'eps':>5} {'k':>5} {'delta':>6} | {'BR rdp':>9} {'eps^2/8 zCDP':>12} {'pure rdp':>9} "
          f"{'pure exact':>10}")
    cases = [(0.1, 100, 1e-6), (0.5, 10, 1e-6), (1.0, 50, 1e-6), (3.0, 10, 1e-3), (0.01, 1000, 1e-6)]
    for eps, k, d in cases:
        g = BoundedRange(eps)
        br = compose([g] * k, method="rdp").epsilon(d)
        z = compose([to_zcdp(g)] * k).epsilon(d)
        pr = compose([PureDP(eps)] * k, method="rdp").epsilon(d)
        pe = compose([PureDP(eps)] * k).epsilon(d)
        print(f"{eps:5g} {k:5d} {d:6g} | {br:9.4f} {z:12.4f} {pr:9.4f} {pe:10.4f}")
    print("   one eps-BR mechanism: D_a against a eps^2/8")
    print(f"{'eps':>5} " + " ".join(f"{'a=' + format(a, 'g'):>17}" for a in (1.0, 2.0, 10.0, 100.0)))
    for eps in (0.1, 1.0, 5.0):
        curve = to_rdp(BoundedRange(eps))
        row = [f"{curve.at(a):.4g}/{a * eps * eps / 8:.4g}" for a in (1.0, 2.0, 10.0, 100.0)]
        print(f"{eps:5g} " + " ".join(f"{c:>17}" for c in row))


def rr_table() -> None:
    print("\n3. k-ary randomized response, Renyi divergence at order 5: exact (to_rdp of its f-DP) "
          "vs the binary (pure-DP) bound")
    print(f"{'eps':>5} {'k':>5} | {'exact':>10} {'binary':>10} {'excess':>8}")
    for eps, k in [(1.0, 3), (1.0, 10), (2.0, 5), (0.5, 100)]:
        ex = to_rdp(RandomizedResponse(k, eps).guarantee()).at(5.0)
        bi = randomized_response_renyi(eps, 5.0)
        print(f"{eps:5g} {k:5d} | {ex:10.6f} {bi:10.6f} {100 * (bi - ex) / ex:7.2f}%")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="the first two DP-SGD workloads only")
    args = ap.parse_args()
    dpsgd_table(WORKLOADS[:2] if args.quick else WORKLOADS)
    bounded_range_table()
    rr_table()
    assert math.isfinite(subsampled_gaussian_rdp(0.04, 1.5, 2250).epsilon(1e-5))


if __name__ == "__main__":
    main()
