"""``dpcert plot``: trade-off curves, privacy profiles, epsilon against DP-SGD steps or an audit's
ROC points, drawn by ``verify.plots`` to a PNG, SVG or PDF file."""

from __future__ import annotations

import argparse
from typing import Any

from .account import compose_guarantees
from .dpsgd import add_dpsgd_inputs, dpsgd_inputs
from .inputs import GUARANTEE_KINDS, example_case, make_guarantee, parse_repeat
from .output import CliError, add_command

__all__ = ["add_plot", "cmd_plot"]


def cmd_plot(args: argparse.Namespace) -> str:
    """A figure (``verify.plots``) written to ``--output``: trade-off curves or privacy profiles of
    guarantees, epsilon of DP-SGD against its steps, or an audit's ROC points."""
    from verify import plots

    if not args.output.lower().endswith((".png", ".svg", ".pdf")):
        raise CliError(f"--output must end in .png, .svg or .pdf, got {args.output!r}")
    plt = plots.pyplot()  # ModuleNotFoundError naming the `plot` extra when matplotlib is missing
    plt.switch_backend("Agg")  # a file, not a window
    if args.kind in ("tradeoff", "profile"):
        curves, labels = [], []
        for kind in GUARANTEE_KINDS:
            for spec in getattr(args, kind) or []:
                body, k = parse_repeat(f"--{kind}", spec)
                g = make_guarantee(kind, body)
                curves.append(g if k == 1 else compose_guarantees([g] * k, "auto")[0])
                labels.append(f"{g} x{k}" if k > 1 else str(g))
        if not curves:
            raise CliError("give at least one guarantee to plot (--gdp MU, --laplace SCALE, ...)")
        if args.kind == "tradeoff":
            ax = plots.plot_tradeoff(curves, labels)
        else:
            ax = plots.plot_profile(curves, labels, eps=[args.eps_max * i / 100 for i in range(101)])
    elif args.kind == "steps":
        q, sigma, steps = dpsgd_inputs(args)
        if q is None or sigma is None or steps is None or args.delta is None:
            raise CliError("plot steps needs the sampling rate, --noise-multiplier, --steps (the "
                           "largest) and --delta")
        grid = plots.steps_grid(steps, args.points)
        ax = plots.plot_steps(q, sigma, grid, args.delta)
    else:
        from verify.audit import audit

        if not args.example:
            raise CliError("plot audit needs an example name (see `dpcert audit --list`)")
        case = example_case(args.example)
        report = audit(case.mechanism, case.pairs, case.claim, samples=args.samples, seed=0)
        ax = plots.plot_audit(report)
    ax.figure.savefig(args.output, bbox_inches="tight")
    plt.close(ax.figure)
    return f"wrote {args.output}"


def add_plot(sub: Any) -> None:
    """The ``plot`` command and its flags."""
    p = add_command(sub, "plot", help="draw trade-off curves, privacy profiles, epsilon against "
                                   "DP-SGD steps or an audit's ROC points to a PNG/SVG/PDF file")
    p.add_argument("kind", choices=("tradeoff", "profile", "steps", "audit"))
    p.add_argument("example", nargs="?", help="for `audit`: a built-in example")
    p.add_argument("--output", "-o", required=True, metavar="FILE", help=".png, .svg or .pdf")
    for kind, (metavar, text) in GUARANTEE_KINDS.items():
        p.add_argument(f"--{kind}", action="append", metavar=metavar, help=text + "; one curve each")
    add_dpsgd_inputs(p)
    p.add_argument("--delta", type=float, help="for `steps`")
    p.add_argument("--points", type=int, default=8, help="for `steps`: number of step counts")
    p.add_argument("--eps-max", type=float, default=10.0, help="for `profile`: largest eps")
    p.add_argument("--samples", type=int, default=20_000, help="for `audit`: draws per input")
    p.set_defaults(run=cmd_plot)
