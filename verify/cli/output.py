"""What ``dpcert`` prints and how it fails: the exit statuses, the user error reported as one line
on stderr with exit status 2, the parser that reports its usage errors the same way, and the
number formatting and ``key  value`` tables shared by the commands (``--json`` prints ``json.dumps``
of the same values)."""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from typing import Any, NoReturn

#: Exit statuses of ``dpcert`` (also in ``dpcert --help`` and the README).
EXIT_OK, EXIT_VIOLATION, EXIT_BAD_INPUT, EXIT_AUDITED_CODE_FAILED = 0, 1, 2, 3

EXIT_CODES = """exit status:
  0  success; no violation found, or the claim is certified
  1  an audit found a violation, or certify could not show the claim
  2  bad usage or bad input (one line on stderr, no traceback)
  3  the audited code raised (its exception in one line on stderr)"""

__all__ = [
    "EXIT_AUDITED_CODE_FAILED",
    "EXIT_BAD_INPUT",
    "EXIT_CODES",
    "EXIT_OK",
    "EXIT_VIOLATION",
    "CliError",
    "Parser",
    "add_command",
    "fmt",
    "num",
    "one_line",
    "run_command",
    "table",
]


class CliError(Exception):
    """A user error reported as one line on stderr with exit status 2."""


def one_line(text: str) -> str:
    """``text`` with its whitespace (newlines included) collapsed to single spaces."""
    return " ".join(text.split())


class Parser(argparse.ArgumentParser):
    """argparse with usage errors reported in one line (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def add_command(sub: Any, name: str, help: str) -> argparse.ArgumentParser:
    """A sub-command ``name`` of ``sub`` (argparse's subparsers), its help also its description and
    the exit statuses its epilog."""
    p: argparse.ArgumentParser = sub.add_parser(name, help=help, description=help, epilog=EXIT_CODES,
                                                formatter_class=argparse.RawDescriptionHelpFormatter)
    return p


def num(x: float) -> float | str:
    """A number for JSON: itself when finite, else its name ("inf", "nan"), which JSON lacks."""
    return x if math.isfinite(x) else str(x)


def fmt(v: float | str) -> str:
    """A number for a table, 6 significant digits (a name such as "inf" as it is)."""
    return v if isinstance(v, str) else f"{v:.6g}"


def table(rows: list[tuple[str, str]]) -> str:
    """Rows ``key  value`` with the keys left-aligned in one column."""
    w = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{w}}  {v}" for k, v in rows)


def run_command(args: argparse.Namespace) -> int:
    """Run the parsed command ``args.run(args)`` and print its text; return its exit status
    (``args.status``, default 0). A ``CliError`` or any other exception is one line on stderr with
    exit status 2, never a traceback; an exception of the audited code (``verify.audit``'s
    ``MechanismError``) is one line with exit status 3."""
    where = f"dpcert {args.command}"
    try:
        with warnings.catch_warnings():  # numpy's floating-point notes are not for the CLI's user
            warnings.simplefilter("ignore", RuntimeWarning)
            text = args.run(args)
    except CliError as exc:
        print(f"{where}: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:
        from verify.audit import MechanismError

        if not isinstance(exc, MechanismError):
            print(f"{where}: error: {type(exc).__name__}: {one_line(str(exc))}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(f"{where}: the audited code failed: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_AUDITED_CODE_FAILED
    print(text)
    return int(getattr(args, "status", EXIT_OK))
