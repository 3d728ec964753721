"""``dpcert calibrate``: solve DP-SGD's noise multiplier, sampling rate or number of steps for a
target (``accountant.dpsgd_noise_multiplier``, ``dpsgd_sampling_rate``, ``dpsgd_steps``), or a single
Gaussian sigma or Laplace scale for a sensitivity (``mechanisms.gaussian_sigma`` and
``mechanisms.laplace_scale``, the library's calibration of noise to a target)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from .dpsgd import add_dpsgd_inputs, dpsgd_inputs, positive
from .output import CliError, add_command, fmt, num, table, timing, timing_text

if TYPE_CHECKING:
    from accountant.core.types import FloatArray
    from mechanisms import Gaussian, Laplace

__all__ = ["add_calibrate", "calibrate_mechanism", "cmd_calibrate"]


def cmd_calibrate(args: argparse.Namespace) -> str:
    """The one DP-SGD parameter not given (or, with ``--mechanism``, a noise scale) for the target
    (``--target-epsilon``, ``--delta``), with the sound epsilon it certifies."""
    from accountant import dpsgd_epsilon, dpsgd_noise_multiplier, dpsgd_sampling_rate, dpsgd_steps

    eps, delta = args.target_epsilon, args.delta
    if args.mechanism is not None:
        return calibrate_mechanism(args)
    if delta is None:
        raise CliError("calibrate needs --delta")
    q, sigma, steps = dpsgd_inputs(args)
    missing = [n for n, v in (("noise_multiplier", sigma), ("sampling_rate", q), ("steps", steps))
               if v is None]
    if len(missing) != 1:
        raise CliError("give two of --noise-multiplier, the sampling rate (--sampling-rate, or "
                       "--batch-size and --dataset-size) and --steps (or --epochs); the third is "
                       "solved for (or give --mechanism gaussian/laplace)")
    solved = missing[0]
    if solved == "noise_multiplier":
        assert q is not None and steps is not None
        sigma = dpsgd_noise_multiplier(eps, delta, q, steps, rtol=args.rtol)
    elif solved == "sampling_rate":
        assert sigma is not None and steps is not None
        q = dpsgd_sampling_rate(eps, delta, sigma, steps, rtol=args.rtol)
    else:
        assert q is not None and sigma is not None
        steps = dpsgd_steps(eps, delta, q, sigma, rtol=args.rtol)
    out: dict[str, Any] = {"solved_for": solved, "noise_multiplier": sigma, "sampling_rate": q,
                           "steps": steps, "target_epsilon": eps, "delta": delta}
    if steps == 0:
        out["epsilon"] = None
    else:
        assert q is not None and sigma is not None and steps is not None
        out["epsilon"] = num(dpsgd_epsilon(q, sigma, steps, delta, also=()).epsilon_upper)
    took = timing()  # the whole command: start-up, calibration and the epsilon above
    out["seconds"], out["cpu_seconds"] = took["wall"], took["cpu"]
    if args.json:
        return json.dumps(out)
    value = out[solved]
    return table([
        (solved.replace("_", " "), f"{value:.6g}" if isinstance(value, float) else str(value)),
        ("certifies", f"({eps:g}, {delta:g})-DP: sound epsilon {fmt(out['epsilon'] or 'n/a')} at "
                      f"sampling rate {q:.6g}, noise multiplier {sigma:.6g}, {steps} steps"),
        ("time", timing_text(took))])


def calibrate_mechanism(args: argparse.Namespace) -> str:
    """The least Gaussian sigma or Laplace scale for ``--sensitivity`` (default 1) whose declared
    guarantee implies the target: ``mechanisms.Gaussian/Laplace.calibrated(query, target,
    sampler="float")`` on a query of that sensitivity, the real-valued mechanisms (the analytic
    Gaussian [@balle2018improving, Thm 8]; the Laplace closed forms b = Delta/eps and
    b = Delta/(eps - 2 log(1 - delta)) [@dong2022gaussian, Sec. 2.3]), each checked with
    ``accountant.implies`` and moved up to the least double that passes. The catalogue's
    float-safe lattice release is the same ``calibrated`` with its default sampler."""
    from accountant import ApproxDP, PureDP
    from mechanisms import CustomQuery, Domain, Gaussian, Laplace
    from mechanisms.domain import to_float_up

    sens = positive("--sensitivity", args.sensitivity) or 1.0
    target = (PureDP(args.target_epsilon) if not args.delta
              else ApproxDP(args.target_epsilon, args.delta))
    name = "sigma" if args.mechanism == "gaussian" else "scale"
    if args.mechanism == "gaussian":
        if not args.delta:
            raise CliError("a Gaussian mechanism is never pure DP: give --delta > 0")
        query = CustomQuery(Domain(), _unused, l2=sens, name=f"a query of L2 sensitivity {sens:g}")
        mech: Gaussian | Laplace = Gaussian.calibrated(query, target, sampler="float")
    else:
        query = CustomQuery(Domain(), _unused, l1=sens, name=f"a query of L1 sensitivity {sens:g}")
        mech = Laplace.calibrated(query, target, sampler="float")
    value = to_float_up(name, mech.scale)
    out = {"mechanism": args.mechanism, name: value, "sensitivity": sens, "target": str(target)}
    if args.json:
        return json.dumps(out)
    return table([(f"{args.mechanism} {name}", f"{value:.9g}"), ("sensitivity", f"{sens:g}"),
                  ("target", str(target)),
                  ("note", "real-valued noise; mechanisms.Laplace/Gaussian.calibrated gives the "
                           "float-safe lattice release")])


def _unused(records: FloatArray) -> FloatArray:
    """The query's function, never evaluated: calibration reads only the declared sensitivity."""
    return records


def add_calibrate(sub: Any) -> None:
    """The ``calibrate`` command and its flags."""
    p = add_command(sub, "calibrate", help="solve DP-SGD's noise multiplier, sampling rate or steps (or a "
                                           "Gaussian/Laplace noise scale) for a target")
    p.add_argument("--target-epsilon", type=float, required=True, metavar="EPS")
    p.add_argument("--delta", type=float, help="target delta (omit for pure DP with --mechanism)")
    add_dpsgd_inputs(p)
    p.add_argument("--mechanism", choices=("gaussian", "laplace"),
                   help="calibrate a single Gaussian sigma or Laplace scale instead")
    p.add_argument("--sensitivity", type=float, help="L2 (Gaussian) or L1 (Laplace) sensitivity")
    p.add_argument("--rtol", type=float, default=1e-3, help="relative precision of the answer")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_calibrate)
