"""``python -m accountant``: a worked accounting example, the budget of a statistics release.

100 counting queries, each answered with the Laplace mechanism at eps = 0.1, reported at
delta = 1e-5 by every composition method, from the loosest baseline to the exact answer.
"""

from __future__ import annotations

import time

from . import FDP, GDP, Guarantee, LaplaceTradeoff, PureDP, compose
from .compose.composition import Method


def main() -> None:
    delta, k = 1e-5, 100
    rows: list[tuple[str, str, float, float]] = []
    cases: list[tuple[str, str, list[Guarantee], Method]] = [
        ("basic composition", "bound", [PureDP(0.1)] * k, "basic"),
        ("advanced composition", "bound", [PureDP(0.1)] * k, "advanced"),
        ("RDP (tight conversion)", "bound", [PureDP(0.1)] * k, "rdp"),
        ("exact, as pure 0.1-DP", "exact", [PureDP(0.1)] * k, "exact"),
        ("CLT, Laplace curve", "approx.", [FDP(LaplaceTradeoff(0.1))] * k, "clt"),
    ]
    for name, kind, gs, method in cases:
        t0 = time.perf_counter()
        eps = compose(gs, method=method).epsilon(delta)
        rows.append((name, kind, eps, time.perf_counter() - t0))
    t0 = time.perf_counter()
    eps = compose([GDP(0.1)] * k).epsilon(delta)
    rows.append(("100 Gaussian queries, 0.1-GDP each", "exact", eps, time.perf_counter() - t0))
    print(f"Budget of 100 releases at delta = {delta:g}")
    print(f"{'method':<36}{'kind':<9}{'epsilon':>12}{'seconds':>10}")
    for name, kind, eps, sec in rows:
        print(f"{name:<36}{kind:<9}{eps:>12.6f}{sec:>10.3f}")


if __name__ == "__main__":
    main()
