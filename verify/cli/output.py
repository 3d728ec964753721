"""What ``dpcert`` prints and how it fails: the exit statuses, the user error reported as one line
on stderr with exit status 2, the parser that reports its usage errors the same way, the number
formatting and ``key  value`` tables shared by the commands (``--json`` prints ``json.dumps`` of
the same values), the ``--tol`` flag and the timings of the whole command."""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from typing import Any, NoReturn

#: When ``dpcert`` started (the import of the command line, before any command's work).
_STARTED = time.perf_counter()

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
    "Formatter",
    "Parser",
    "add_command",
    "add_tol",
    "fmt",
    "num",
    "one_line",
    "run_command",
    "table",
    "timing",
    "timing_text",
    "tol_value",
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


class Formatter(argparse.RawDescriptionHelpFormatter):
    """The help of every command: descriptions as written, and each option's default stated
    (``(default: 3e-05)``) unless its help already says it or it has none."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (default is None or default is False or default is argparse.SUPPRESS
                or not action.option_strings or "default" in text):
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


def add_command(sub: Any, name: str, help: str) -> argparse.ArgumentParser:
    """A sub-command ``name`` of ``sub`` (argparse's subparsers), its help also its description and
    the exit statuses its epilog."""
    p: argparse.ArgumentParser = sub.add_parser(name, help=help, description=help, epilog=EXIT_CODES,
                                                formatter_class=Formatter)
    return p


def timing() -> dict[str, float]:
    """The time of the whole command so far: ``wall`` seconds since ``dpcert`` started and ``cpu``
    seconds of the process (its start-up included), each rounded to milliseconds."""
    return {"wall": round(time.perf_counter() - _STARTED, 3), "cpu": round(time.process_time(), 3)}


def timing_text(t: dict[str, float]) -> str:
    """``timing()`` for a table."""
    return f"{t['wall']:.2f} s wall, {t['cpu']:.2f} s CPU (the whole command)"


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
            if "tol" in vars(args):
                tol_value(args.tol)
            text = args.run(args)
    except CliError as exc:
        print(f"{where}: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:
        # a MechanismError comes from an audit, which imported its module: reading sys.modules
        # spares every other bad input the import of the audit (scipy.stats: seconds)
        sampling = sys.modules.get("verify.audit.sampling")
        if sampling is None or not isinstance(exc, sampling.MechanismError):
            print(f"{where}: error: {type(exc).__name__}: {one_line(str(exc))}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(f"{where}: the audited code failed: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_AUDITED_CODE_FAILED
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader left (``dpcert ... | head``): end quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that the flush at exit does not fail again
    return int(getattr(args, "status", EXIT_OK))


def tol_value(value: float | None) -> float | None:
    """``--tol``: the PLD's accuracy, a number in [MIN_TOL, 1] (None: the default); ``CliError``
    (one line, exit status 2) for 0, a negative number, NaN or more than 1."""
    if value is None:
        return None
    from accountant.pld.settings import MIN_TOL

    if not MIN_TOL <= value <= 1.0:  # NaN fails too
        raise CliError(f"--tol: the PLD accuracy must be a number in [{MIN_TOL:g}, 1] (it sets the "
                       f"grid of the numeric accountant), got {value!r}")
    return value


def add_tol(p: argparse.ArgumentParser, default: float | None = None) -> None:
    """``--tol`` on a command that builds a PLD (checked by ``run_command`` before the command)."""
    p.add_argument("--tol", type=float, default=default, metavar="TOL",
                   help="PLD accuracy: sets the grid of the numeric accountant (a smaller tol, a "
                        "finer grid; not a bound on the bracket's width)"
                   + ("" if default is not None else " (default: 3e-05)"))
