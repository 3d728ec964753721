"""``dpcert certify``: the white-box check (``verify.certify``) of a declared mechanism against a
claim."""

from __future__ import annotations

import argparse
from typing import Any

from .inputs import example_case, load_object, parse_claim
from .output import EXIT_OK, EXIT_VIOLATION, CliError, add_command

__all__ = ["add_certify", "cmd_certify"]


def cmd_certify(args: argparse.Namespace) -> str:
    """The white-box check (``verify.certify``) of a built-in example or a mechanism ``MODULE:NAME``
    (or a factory of one) against a claim; exit status 1 when the claim is not shown."""
    if args.mechanism:
        mech = load_object(args.mechanism)
        if isinstance(mech, type) or (not hasattr(mech, "guarantee") and callable(mech)):
            try:
                mech = mech()
            except TypeError as exc:
                raise CliError(f"cannot build a mechanism from {args.mechanism!r}: {exc}") from None
        if args.claim is None:
            raise CliError("--mechanism needs --claim")
        claim = parse_claim(args.claim)
    elif args.example:
        case = example_case(args.example)
        mech = case.mechanism
        claim = parse_claim(args.claim) if args.claim else case.claim
    else:
        raise CliError("give an example name or --mechanism MODULE:NAME")
    from verify.certify import certify  # after the inputs are read: a bad one is refused without it

    try:
        c = certify(mech, claim)
    except TypeError as exc:
        raise CliError(str(exc)) from None
    args.status = EXIT_OK if c.holds else EXIT_VIOLATION
    return c.to_json() if args.json else str(c)


def add_certify(sub: Any) -> None:
    """The ``certify`` command and its flags."""
    p = add_command(sub, "certify", help="white-box check of a declared mechanism against a claim")
    p.add_argument("example", nargs="?", help="built-in example (see `dpcert audit --list`)")
    p.add_argument("--mechanism", metavar="MODULE:NAME", help="a mechanism object (or a factory)")
    p.add_argument("--claim", help="claim, e.g. pure:1, approx:1,1e-6, gdp:0.5")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_certify)
