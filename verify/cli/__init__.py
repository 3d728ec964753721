"""The ``dpcert`` command: account, compose, convert, dpsgd, calibrate, plot, audit, power, certify.
Tables for people, ``--json`` for machines.

One module per command group: ``account`` (account, convert, compose), ``dpsgd``, ``calibrate``,
``plot``, ``audit`` (audit, power), ``certify``; ``inputs`` reads the flags shared by several
commands (guarantees, claims, examples, ``MODULE:NAME``) and ``output`` holds the exit statuses, the
one-line errors and the tables. Each command calls the library's own function for its work
(``accountant.compose``, ``accountant.dpsgd_epsilon``, the calibrations of ``accountant`` and
``mechanisms``, ``verify.audit``, ``verify.samples_needed``, ``verify.certify``, ``verify.plots``).

Start-up is kept short (``dpcert --help`` imports only argparse): the accountant, the mechanisms
and the audit are imported by the command that needs them.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from .account import METHODS, SPEC_KINDS, add_account, add_compose, add_convert, read_spec
from .audit import add_audit, add_power
from .calibrate import add_calibrate
from .certify import add_certify
from .dpsgd import add_dpsgd
from .inputs import GUARANTEE_KINDS, make_guarantee, parse_claim
from .output import (
    EXIT_AUDITED_CODE_FAILED,
    EXIT_BAD_INPUT,
    EXIT_CODES,
    EXIT_OK,
    EXIT_VIOLATION,
    CliError,
    Formatter,
    Parser,
    run_command,
)
from .plot import add_plot

__all__ = [
    "EXIT_AUDITED_CODE_FAILED",
    "EXIT_BAD_INPUT",
    "EXIT_CODES",
    "EXIT_OK",
    "EXIT_VIOLATION",
    "GUARANTEE_KINDS",
    "METHODS",
    "SPEC_KINDS",
    "CliError",
    "build_parser",
    "main",
    "make_guarantee",
    "parse_claim",
    "read_spec",
]


def build_parser() -> argparse.ArgumentParser:
    """The ``dpcert`` parser: one sub-command per command, in the order of ``dpcert --help``."""
    ap = Parser(prog="dpcert", description="Differential-privacy accounting and verification.",
                epilog=EXIT_CODES, formatter_class=Formatter)
    sub = ap.add_subparsers(dest="command", required=True)
    for add in (add_account, add_convert, add_compose, add_dpsgd, add_calibrate, add_plot, add_audit,
                add_power, add_certify):
        add(sub)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``dpcert``; returns the exit status (``EXIT_CODES``): 0 success, 1 violation
    (or claim not certified), 2 bad usage or input, 3 the audited code raised. Errors are one line
    on stderr, never a traceback."""
    parser = build_parser()
    args = parser.parse_args(None if argv is None else list(argv))
    return run_command(args)
