"""DP-SGD noise-multiplier calibration: time and tightness, next to Opacus when it is installed.

For each workload, the certified noise multiplier (accountant.dpsgd_noise_multiplier), its wall
time, the sound epsilon it reaches (fine PLD grid) and the PLD *lower* bound on epsilon at a
noise multiplier 0.5% smaller (above the target: the answer is provably within 0.5%). Wall and
CPU seconds are both printed: on a shared machine the wall time is the CPU time times the load.
Usage: python -m benchmarks.calibration [--quick]
"""

from __future__ import annotations

import sys
import time

from accountant import dpsgd_epsilon, dpsgd_noise_multiplier

WORKLOADS = [  # (name, q, T, eps, delta)
    ("W4 q=0.004 T=1e5 eps=3", 0.004, 100_000, 3.0, 1e-5),
    ("W4 q=0.004 T=1e5 eps=8", 0.004, 100_000, 8.0, 1e-5),
    ("q=0.01 T=1000 eps=3", 0.01, 1000, 3.0, 1e-5),
    ("q=0.01 T=1e4 eps=1", 0.01, 10_000, 1.0, 1e-6),
]


def opacus_time(q: float, t: int, eps: float, delta: float) -> str:
    try:
        from opacus.accountants.utils import get_noise_multiplier
    except ImportError:
        return "not installed"
    start = time.perf_counter()
    sigma = get_noise_multiplier(target_epsilon=eps, target_delta=delta, sample_rate=q, steps=t,
                                 accountant="prv")
    return f"{time.perf_counter() - start:.2f} s (sigma {sigma:.4f})"


def main() -> None:
    rows = WORKLOADS[2:] if "--quick" in sys.argv else WORKLOADS
    print(f"{'workload':28} {'sigma':>9} {'wall':>7} {'cpu':>6} {'eps at sigma':>13} "
          f"{'eps_lower at 0.995 sigma':>25}  opacus")
    for name, q, t, eps, delta in rows:
        start, cpu = time.perf_counter(), time.process_time()
        sigma = dpsgd_noise_multiplier(eps, delta, q, t)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        upper = dpsgd_epsilon(q, sigma, t, delta).epsilon_upper
        lower = dpsgd_epsilon(q, sigma * 0.995, t, delta).epsilon_lower
        print(f"{name:28} {sigma:9.5f} {seconds:6.2f}s {cpu:5.2f}s {upper:13.5f} {lower:25.5f}  "
              f"{opacus_time(q, t, eps, delta)}")


if __name__ == "__main__":
    main()
