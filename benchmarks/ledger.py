"""Per-epoch ledger: 100 DP-SGD epochs recorded one by one, spent epsilon read after each.

Incremental (the Ledger: one convolution per epoch) against recomposing everything from scratch
after each epoch (what the ledger did before). Usage: python -m benchmarks.ledger [EPOCHS]
"""

from __future__ import annotations

import sys
import time

from accountant import ApproxDP, Ledger, compose, dpsgd_pld


def main() -> None:
    epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    epoch = dpsgd_pld(0.004, 1.0, 250)  # q = 0.004, sigma = 1, 250 steps per epoch
    ledger = Ledger(budget=ApproxDP(10.0, 1e-5))
    start = time.perf_counter()
    for _ in range(epochs):
        ledger.record(epoch, label="epoch")
        incremental = ledger.spent_epsilon(1e-5)
    t_inc = time.perf_counter() - start
    start = time.perf_counter()
    for k in range(1, epochs + 1):
        fresh = compose([epoch] * k).epsilon(1e-5)
    t_fresh = time.perf_counter() - start
    print(f"{'epochs':>7} {'incremental s':>14} {'from scratch s':>15} {'eps incremental':>16} "
          f"{'eps fresh':>10}")
    print(f"{epochs:>7} {t_inc:14.2f} {t_fresh:15.2f} {incremental:16.6f} {fresh:10.6f}")


if __name__ == "__main__":
    main()
