"""``dpcert audit``: the black-box audit (``verify.audit``) of a built-in example
(``verify.examples``, listed by ``--list``) or of any callable ``MODULE:FUNCTION``; ``dpcert power``:
the draws such an audit needs, planned before it runs (``verify.audit.power``)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .inputs import example_case, json_arg, load_object, parse_claim, slug
from .output import EXIT_OK, EXIT_VIOLATION, CliError, add_command, num, table

__all__ = ["add_audit", "add_power", "cmd_audit", "cmd_power"]


def cmd_audit(args: argparse.Namespace) -> str:
    """The list of built-in examples, or the audit (``verify.audit``) of one of them or of a callable;
    exit status 1 on a violation."""
    from verify import examples

    if args.list:
        return "\n".join(f"{slug(c.name):45} {'buggy' if c.buggy else 'correct':8} claim {c.claim}"
                         for c in examples.cases())
    if args.example and args.callable:
        raise CliError("give an example name or --callable, not both")
    if args.callable:
        mech = load_object(args.callable)
        if isinstance(mech, type):
            raise CliError(f"--callable {args.callable} is a class; give a function (data, rng) -> "
                           "output, e.g. a module-level function that builds the mechanism and "
                           "calls it")
        if not callable(mech):
            raise CliError(f"--callable {args.callable} is a {type(mech).__name__}, not callable")
        if args.data is None or args.data2 is None:
            raise CliError("--callable needs --data and --data2 (JSON)")
        pairs = [(json_arg("--data", args.data), json_arg("--data2", args.data2))]
        if args.claim is None:
            raise CliError("--callable needs --claim")
        claim = parse_claim(args.claim)
    elif args.example:
        case = example_case(args.example)
        mech, pairs = case.mechanism, case.pairs
        if args.data is not None and args.data2 is not None:
            pairs = [(json_arg("--data", args.data), json_arg("--data2", args.data2))]
        claim = parse_claim(args.claim) if args.claim else case.claim
    else:
        raise CliError("give an example name (see --list) or --callable MODULE:FUNCTION")
    from verify.audit import audit  # after the inputs are read: a bad one is refused without it

    r = audit(mech, pairs, claim, samples=args.samples, confidence=args.confidence, seed=args.seed,
              vectorised=args.vectorised, workers=args.workers, progress=args.progress,
              floating_point=args.floating_point)
    args.status = EXIT_VIOLATION if r.violation else EXIT_OK
    return r.to_json() if args.json else str(r)


def add_audit(sub: Any) -> None:
    """The ``audit`` command and its flags."""
    p = add_command(sub, "audit", help="black-box audit of an example mechanism or a callable")
    p.add_argument("example", nargs="?", help="built-in example (see --list)")
    p.add_argument("--list", action="store_true", help="list the built-in examples")
    p.add_argument("--callable", metavar="MODULE:FUNCTION", help="a callable (data, rng) -> output")
    p.add_argument("--vectorised", action="store_true", help="the callable takes (data, rng, size)")
    p.add_argument("--data", help="first input, JSON")
    p.add_argument("--data2", help="neighbouring input, JSON")
    p.add_argument("--claim", help="claim, e.g. pure:1, approx:1,1e-6, gdp:0.5, zcdp:0.1")
    p.add_argument("--samples", type=int, default=100_000, help="draws per input")
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=None, help="processes to draw with")
    p.add_argument("--progress", action="store_true", help="progress bar on stderr")
    p.add_argument("--floating-point", action=argparse.BooleanOptionalAction, default=True,
                   help="also test the IEEE-754 representation of float outputs (reported apart "
                        "from the finding on outputs as real numbers)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_audit)


def cmd_power(args: argparse.Namespace) -> str:
    """The draws per input an audit needs to refute ``--claim`` against a mechanism that is
    ``--truth`` (``verify.samples_needed``), or with ``--samples`` the power of that audit."""
    claim, truth = parse_claim(args.claim), parse_claim(args.truth, "--truth")
    from verify.audit import plan_audit, samples_needed  # after the inputs are read

    try:
        samples = args.samples if args.samples is not None else samples_needed(
            claim, truth, args.confidence, power=args.power, tests=args.tests)
        plan = plan_audit(claim, truth, samples, args.confidence, tests=args.tests)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        return json.dumps({"claim": str(claim), "truth": str(truth), "confidence": plan.confidence,
                           "samples": plan.samples, "power": plan.power, "alpha": num(plan.alpha),
                           "beta": num(plan.beta), "tests": plan.tests, "level": plan.level})
    return table([("claim", str(claim)), ("truth", str(truth)),
                  ("draws per input", f"{plan.samples:,}"), ("power", f"{plan.power:.3f}"),
                  ("confidence", f"{plan.confidence:g}"),
                  ("region", f"alpha = {plan.alpha:.3g}, beta = {plan.beta:.3g}"),
                  ("tests", f"{plan.tests} (each bound at level {plan.level:.3g})"),
                  ("model", "a plan, not a bound: the audit is assumed to find the best region")])


def add_power(sub: Any) -> None:
    """The ``power`` command and its flags."""
    p = add_command(sub, "power", help="draws per input an audit needs to refute a claim (or the "
                                       "power of an audit of --samples draws)")
    p.add_argument("--claim", required=True, help="the claim audited, e.g. pure:1, gdp:0.5")
    p.add_argument("--truth", required=True, help="the mechanism's real guarantee, e.g. pure:1.5")
    p.add_argument("--samples", type=int, default=None, help="draws per input: report the power")
    p.add_argument("--power", type=float, default=0.5, help="probability of refuting (default 0.5)")
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--tests", type=int, default=None,
                   help="tests of the audit (default: two families times the claim's objectives)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_power)
