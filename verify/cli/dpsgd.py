"""``dpcert dpsgd``: epsilon of DP-SGD (Poisson-subsampled Gaussian steps) through
``accountant.dpsgd_epsilon``, a sound upper bound with its lower bound, and on request (``--also
clt,rdp``) the CLT estimate and the RDP bound; with ``--sampler fixed|shuffle`` the bounds of that
batch sampler, the Poisson figure beside them; and the DP-SGD inputs (sampling rate, noise
multiplier, steps) that ``calibrate`` and ``plot steps`` read too.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from .output import CliError, add_command, add_tol, fmt, num, table, timing, timing_text

#: The comparison figures ``--also`` may ask for (``accountant.dpsgd_epsilon``'s ``also``).
COMPARISONS = ("clt", "rdp")

__all__ = ["COMPARISONS", "add_dpsgd", "add_dpsgd_inputs", "also_value", "cmd_dpsgd", "dpsgd_inputs",
           "positive", "sampling_rate", "step_count"]


def positive(name: str, value: float | None) -> float | None:
    """``value`` when absent or a finite number > 0 (``CliError`` naming ``name`` otherwise)."""
    if value is not None and not (math.isfinite(value) and value > 0.0):
        raise CliError(f"{name} must be a finite number > 0, got {value!r}")
    return value


def sampling_rate(args: argparse.Namespace) -> float | None:
    """The Poisson sampling rate: --sampling-rate, or --batch-size / --dataset-size."""
    if args.sampling_rate is not None:
        if args.batch_size is not None:
            raise CliError("give --sampling-rate or --batch-size with --dataset-size, not both")
        return float(args.sampling_rate)
    if args.batch_size is None:
        return None
    if args.dataset_size is None:
        raise CliError("--batch-size needs --dataset-size (the sampling rate is their ratio)")
    if not 1 <= args.batch_size <= args.dataset_size:
        raise CliError(f"--batch-size must lie in [1, --dataset-size = {args.dataset_size}], "
                       f"got {args.batch_size}")
    return float(args.batch_size / args.dataset_size)


def step_count(args: argparse.Namespace, q: float | None) -> int | None:
    """The number of steps: --steps, or --epochs of 1/q steps each (rounded up: pessimistic)."""
    if args.steps is not None:
        if args.epochs is not None:
            raise CliError("give --steps or --epochs, not both")
        if args.steps < 1:
            raise CliError(f"--steps must be >= 1, got {args.steps}")
        return int(args.steps)
    if args.epochs is None:
        return None
    positive("--epochs", args.epochs)
    if q is None:
        raise CliError("--epochs needs the sampling rate (--sampling-rate or --batch-size "
                       "with --dataset-size)")
    return max(1, math.ceil(float(args.epochs) / q - 1e-9))


def dpsgd_inputs(args: argparse.Namespace) -> tuple[float | None, float | None, int | None]:
    """(sampling rate, noise multiplier, steps) of the flags, each None when not given."""
    q = positive("--sampling-rate", sampling_rate(args))
    return q, positive("--noise-multiplier", args.noise_multiplier), step_count(args, q)


def also_value(s: str) -> tuple[str, ...]:
    """``--also``: a comma-separated subset of ``COMPARISONS`` (a usage error otherwise)."""
    parts = tuple(dict.fromkeys(p.strip().lower() for p in s.split(",") if p.strip()))
    bad = [p for p in parts if p not in COMPARISONS]
    if bad or not parts:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of {', '.join(COMPARISONS)}, "
                                         f"got {s!r}")
    return parts


def cmd_dpsgd(args: argparse.Namespace) -> str:
    """Epsilon of DP-SGD at ``--delta`` (``accountant.dpsgd_epsilon``): the sound upper bound and
    its lower bound, and the CLT estimate and the RDP bound when ``--also`` asks for them; with
    ``--every``, a row every so many epochs."""
    # the defining module, not the package: ``accountant``'s lazy exports would import every
    # submodule (about 0.1 s of the command), and this path uses none of their registrations
    from accountant.compose.dpsgd import dpsgd_epsilon

    q, sigma, steps = dpsgd_inputs(args)
    if q is None or sigma is None or steps is None:
        raise CliError("dpsgd needs the sampling rate (--sampling-rate, or --batch-size and "
                       "--dataset-size), --noise-multiplier and --steps (or --epochs)")
    if args.every is not None and not (math.isfinite(args.every) and args.every > 0):
        raise CliError(f"--every must be > 0 epochs, got {args.every}")
    also = tuple(args.also or ())
    sampler = args.sampler
    if sampler != "poisson" and also:
        raise CliError(f"--also describes Poisson sampling; drop it with --sampler {sampler}")
    acct = dpsgd_epsilon(q, sigma, steps, args.delta, tol=args.tol, also=also, sampler=sampler)
    out: dict[str, Any] = {
        "sampling_rate": q, "noise_multiplier": sigma, "steps": steps, "epochs": steps * q,
        "delta": args.delta, "sampler": sampler, "adjacency": acct.adjacency,
        "epsilon": num(acct.epsilon_upper), "epsilon_lower": num(acct.epsilon_lower)}
    if sampler != "poisson":
        poisson = dpsgd_epsilon(q, sigma, steps, args.delta, tol=args.tol, also=())
        out["poisson_epsilon"] = num(poisson.epsilon_upper)
    for key in ("clt_epsilon", "clt_mu", "rdp_epsilon"):  # null unless --also asked for it
        value = getattr(acct, key)
        out[key] = None if value is None else num(value)
    rows: list[dict[str, Any]] = []
    if args.every is not None:
        per_epoch = 1.0 / q
        k = 1
        while True:
            t = min(steps, max(1, math.ceil(k * args.every * per_epoch - 1e-9)))
            at = acct if t == steps else dpsgd_epsilon(q, sigma, t, args.delta, tol=args.tol, also=(),
                                                       sampler=sampler)
            lo, hi = at.epsilon_lower, at.epsilon_upper
            rows.append({"epochs": t * q, "steps": t, "epsilon": num(hi), "epsilon_lower": num(lo)})
            if args.progress:
                print(f"  {t}/{steps} steps", file=sys.stderr)
            if t == steps:
                break
            k += 1
        out["rows"] = rows
    took = timing()
    out["seconds"], out["cpu_seconds"] = took["wall"], took["cpu"]
    if args.json:
        return json.dumps(out)
    lines = [
        ("DP-SGD", f"sampling rate {q:.6g}, noise multiplier {sigma:.6g}, {steps} steps "
                   f"({steps * q:.4g} epochs), delta {args.delta:g}"),
        ("epsilon", f"{fmt(out['epsilon'])}  (sound upper bound; exact value >= "
                    f"{fmt(out['epsilon_lower'])})")]
    if sampler != "poisson":
        what = {"fixed": "fixed-size batches (replace-one)", "shuffle": "shuffled batches"}[sampler]
        lines[1] = ("epsilon", f"Poisson-accounted eps {fmt(out['poisson_epsilon'])}; your pipeline "
                               f"with {what}: eps in [{fmt(out['epsilon_lower'])}, {fmt(out['epsilon'])}]")
    if out["clt_epsilon"] is not None:
        lines.append(("CLT estimate", f"{fmt(out['clt_epsilon'])}  (mu = {fmt(out['clt_mu'])}; an "
                                      "approximation, not a bound)"))
    if out["rdp_epsilon"] is not None:
        lines.append(("RDP bound", fmt(out["rdp_epsilon"])))
    lines.append(("time", timing_text(took)))
    head = table(lines)
    if not rows:
        return head
    body = [f"{'epochs':>10}  {'steps':>10}  {'epsilon':>10}  {'lower':>10}"]
    body += [f"{r['epochs']:>10.4g}  {r['steps']:>10}  {fmt(r['epsilon']):>10}  "
             f"{fmt(r['epsilon_lower']):>10}" for r in rows]
    return head + "\n\n" + "\n".join(body)


def add_dpsgd_inputs(p: argparse.ArgumentParser) -> None:
    """The DP-SGD flags: sampling rate (or batch and dataset size), noise multiplier, steps (or
    epochs)."""
    p.add_argument("--sampling-rate", type=float, metavar="Q", help="Poisson sampling rate")
    p.add_argument("--batch-size", type=int, metavar="B", help="expected batch size (with --dataset-size)")
    p.add_argument("--dataset-size", type=int, metavar="N", help="number of records")
    p.add_argument("--noise-multiplier", "--sigma", type=float, metavar="SIGMA",
                   help="noise std / clipping norm")
    p.add_argument("--steps", type=int, metavar="T", help="number of steps")
    p.add_argument("--epochs", type=float, metavar="E", help="epochs of 1/q steps each")


def add_dpsgd(sub: Any) -> None:
    """The ``dpsgd`` command and its flags."""
    p = add_command(sub, "dpsgd", help="epsilon of DP-SGD (Poisson-subsampled Gaussian steps)")
    add_dpsgd_inputs(p)
    p.add_argument("--delta", type=float, required=True)
    p.add_argument("--sampler", default="poisson", metavar="poisson|fixed|shuffle",
                   help="how the batches are drawn: poisson (default), fixed (b records without "
                        "replacement each step; replace-one adjacency) or shuffle (a permutation "
                        "per epoch cut into 1/q batches): the bounds of that sampler, beside the "
                        "Poisson figure (accountant.SAMPLERS)")
    p.add_argument("--also", type=also_value, metavar="clt,rdp",
                   help="also compute the CLT estimate (an approximation) and/or the RDP bound "
                        "(default: neither; they take most of the time of a long run)")
    p.add_argument("--every", type=float, metavar="EPOCHS", help="a table row every EPOCHS epochs")
    add_tol(p, default=3e-5)
    p.add_argument("--progress", action="store_true", help="progress on stderr")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_dpsgd)
