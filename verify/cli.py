"""The ``dpcert`` command: account, convert, audit, certify. Tables for people, ``--json`` for machines."""

from __future__ import annotations

import argparse
import importlib
import json
import math
import re
import sys
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn, cast

from accountant import CLTGDP, GDP, ZCDP, ApproxDP, Guarantee, Method, PureDP, compose
from accountant.conversions import gdp_to_zcdp, pure_dp_to_gdp, pure_dp_to_zcdp

from . import examples
from .audit import MechanismError, audit
from .certify import certify

METHODS = ("auto", "exact", "pld", "clt", "rdp", "advanced", "basic")

#: Exit statuses of ``dpcert`` (also in ``dpcert --help`` and the README).
EXIT_OK, EXIT_VIOLATION, EXIT_BAD_INPUT, EXIT_AUDITED_CODE_FAILED = 0, 1, 2, 3

EXIT_CODES = """exit status:
  0  success; no violation found, or the claim is certified
  1  an audit found a violation, or certify could not show the claim
  2  bad usage or bad input (one line on stderr, no traceback)
  3  the audited code raised (its exception in one line on stderr)"""


class CliError(Exception):
    """A user error reported as one line on stderr with exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors reported in one line (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {_one_line(message)} (see {self.prog} --help)\n")


def _one_line(text: str) -> str:
    return " ".join(text.split())


# ------------------------------------------------------------------------------ parsing


def _float(name: str, s: str) -> float:
    try:
        return float(s)
    except ValueError:
        raise CliError(f"{name}: expected a number, got {s!r}") from None


def _repeat(name: str, spec: str) -> tuple[str, int]:
    body, _, times = spec.partition("x")
    if not times:
        return body, 1
    try:
        k = int(times)
    except ValueError:
        raise CliError(f"{name}: expected VALUE[xCOUNT], got {spec!r}") from None
    if k < 1:
        raise CliError(f"{name}: COUNT must be >= 1, got {k}")
    return body, k


def make_guarantee(kind: str, body: str) -> Guarantee:
    """A guarantee from e.g. ("pure", "1"), ("approx", "1,1e-6"), ("gdp", "0.5"), ("zcdp", "0.1")."""
    try:
        if kind == "pure":
            return PureDP(_float("--pure", body))
        if kind == "approx":
            parts = body.split(",")
            if len(parts) != 2:
                raise CliError(f"--approx: expected EPS,DELTA, got {body!r}")
            return ApproxDP(_float("--approx eps", parts[0]), _float("--approx delta", parts[1]))
        if kind == "gdp":
            return GDP(_float("--gdp", body))
        if kind == "zcdp":
            return ZCDP(_float("--zcdp", body))
    except (ValueError, TypeError) as exc:
        if isinstance(exc, CliError):
            raise
        raise CliError(f"--{kind}: {exc}") from None
    raise CliError(f"unknown guarantee kind {kind!r}; use pure, approx, gdp or zcdp")


def parse_claim(spec: str) -> Guarantee:
    """A claim such as ``pure:1``, ``approx:1,1e-6``, ``gdp:0.5`` or ``zcdp:0.1``."""
    kind, sep, body = spec.partition(":")
    if not sep:
        raise CliError(f"--claim: expected KIND:VALUE such as pure:1 or approx:1,1e-6, got {spec!r}")
    return make_guarantee(kind.strip().lower(), body.strip())


def _guarantees(args: argparse.Namespace) -> list[Guarantee]:
    gs: list[Guarantee] = []
    for kind in ("pure", "approx", "gdp", "zcdp"):
        for spec in getattr(args, kind) or []:
            body, k = _repeat(f"--{kind}", spec)
            gs.extend([make_guarantee(kind, body)] * k)
    if not gs:
        raise CliError("give at least one guarantee: --pure EPS[xK], --approx EPS,DELTA[xK], "
                       "--gdp MU[xK] or --zcdp RHO[xK]")
    return gs


def _compose(gs: list[Guarantee], method: str) -> tuple[Guarantee, str]:
    if len(gs) == 1 and method in ("auto", "exact"):
        return gs[0], "single guarantee"
    tried = ["exact", "pld"] if method == "auto" else [method]
    errors = []
    for m in tried:
        try:
            g = compose(gs, method=cast(Method, m))
            # the exact default composes numerically (PLD) when no closed form exists
            return g, "pld" if type(g).__name__ == "PLD" else m
        except (ValueError, TypeError, ArithmeticError, IndexError) as exc:
            errors.append(f"{m}: {type(exc).__name__}: {exc}")
    raise CliError("cannot compose these guarantees (" + "; ".join(errors) + ")")


def _num(x: float) -> float | str:
    return x if math.isfinite(x) else str(x)


def _summary(g: Guarantee, deltas: list[float], epss: list[float]) -> dict[str, Any]:
    out: dict[str, Any] = {"guarantee": str(g),
                           "epsilon": {f"{d:g}": _num(g.epsilon(d)) for d in deltas},
                           "delta": {f"{e:g}": _num(float(g.delta(e))) for e in epss}}
    if isinstance(g, GDP):
        out["mu"] = g.mu
        out["approximate"] = isinstance(g, CLTGDP)
    bracket = getattr(g, "epsilon_bracket", None)
    if callable(bracket):  # numeric accountants certify a (lower, upper) bracket around the truth
        out["epsilon_bracket"] = {f"{d:g}": [_num(x) for x in bracket(d)] for d in deltas}
    return out


def _table(rows: list[tuple[str, str]]) -> str:
    w = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{w}}  {v}" for k, v in rows)


def _summary_rows(s: dict[str, Any]) -> list[tuple[str, str]]:
    rows = [("guarantee", s["guarantee"])]
    if "mu" in s:
        rows.append(("GDP mu", f"{s['mu']:.6g}" + (" (CLT approximation)" if s.get("approximate") else "")))
    brackets = s.get("epsilon_bracket", {})
    rows += [(f"epsilon at delta={d}", _fmt(v) + (f"  (certified bracket [{_fmt(brackets[d][0])}, "
                                                   f"{_fmt(brackets[d][1])}])" if d in brackets else ""))
             for d, v in s["epsilon"].items()]
    rows += [(f"delta at eps={e}", _fmt(v)) for e, v in s["delta"].items()]
    return rows


def _fmt(v: float | str) -> str:
    return v if isinstance(v, str) else f"{v:.6g}"


# ----------------------------------------------------------------------------- commands


def cmd_account(args: argparse.Namespace) -> str:
    gs = _guarantees(args)
    g, method = _compose(gs, args.method)
    s = _summary(g, args.delta or [1e-5], args.eps or [])
    s["method"] = method
    s["count"] = len(gs)
    if args.json:
        return json.dumps(s)
    return _table([("composed", f"{len(gs)} guarantees, method {method}"), *_summary_rows(s)])


def cmd_convert(args: argparse.Namespace) -> str:
    gs = _guarantees(args)
    if len(gs) != 1:
        raise CliError("convert takes exactly one guarantee (compose with `dpcert account`)")
    g = gs[0]
    to = args.to
    out: Guarantee
    if to == "approx":
        if args.delta is None:
            raise CliError("--to approx needs --delta")
        out = g.to_approx_dp(args.delta[0])
    elif to == "gdp":
        if isinstance(g, GDP):
            out = g
        elif isinstance(g, PureDP):
            out = pure_dp_to_gdp(g.eps)
        else:
            raise CliError(f"no conversion from {g} to GDP (only pure DP converts)")
    elif to == "zcdp":
        if isinstance(g, PureDP):
            out = pure_dp_to_zcdp(g.eps)
        elif isinstance(g, GDP):
            out = gdp_to_zcdp(g.mu)
        elif isinstance(g, ZCDP):
            out = g
        else:
            raise CliError(f"no conversion from {g} to zCDP")
    else:  # pragma: no cover - argparse restricts choices
        raise CliError(f"unknown target {to!r}")
    s = _summary(out, args.delta or [], args.eps or [])
    s["from"] = str(g)
    if args.json:
        return json.dumps(s)
    return _table([("from", str(g)), *_summary_rows(s)])


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _example(name: str) -> examples.Case:
    for c in examples.cases():
        if name in (c.name, _slug(c.name)):
            return c
    raise CliError(f"unknown example {name!r}; list them with `dpcert audit --list`")


def _load(spec: str) -> Any:
    mod, sep, attr = spec.partition(":")
    if not sep:
        raise CliError(f"expected MODULE:NAME, got {spec!r}")
    try:
        obj: Any = importlib.import_module(mod)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise CliError(f"cannot load {spec!r}: {exc}") from None
    return obj


def _json_arg(name: str, s: str) -> Any:
    try:
        return json.loads(s)
    except json.JSONDecodeError:
        raise CliError(f"{name}: expected JSON (a number or a list), got {s!r}") from None


def cmd_audit(args: argparse.Namespace) -> str:
    if args.list:
        return "\n".join(f"{_slug(c.name):45} {'buggy' if c.buggy else 'correct':8} claim {c.claim}"
                         for c in examples.cases())
    if args.example and args.callable:
        raise CliError("give an example name or --callable, not both")
    if args.callable:
        mech = _load(args.callable)
        if args.data is None or args.data2 is None:
            raise CliError("--callable needs --data and --data2 (JSON)")
        pairs = [(_json_arg("--data", args.data), _json_arg("--data2", args.data2))]
        if args.claim is None:
            raise CliError("--callable needs --claim")
        claim = parse_claim(args.claim)
    elif args.example:
        case = _example(args.example)
        mech, pairs = case.mechanism, case.pairs
        if args.data is not None and args.data2 is not None:
            pairs = [(_json_arg("--data", args.data), _json_arg("--data2", args.data2))]
        claim = parse_claim(args.claim) if args.claim else case.claim
    else:
        raise CliError("give an example name (see --list) or --callable MODULE:FUNCTION")
    r = audit(mech, pairs, claim, samples=args.samples, confidence=args.confidence, seed=args.seed,
              vectorised=args.vectorised, workers=args.workers, progress=args.progress)
    args.status = EXIT_VIOLATION if r.violation else EXIT_OK
    return r.to_json() if args.json else str(r)


def cmd_certify(args: argparse.Namespace) -> str:
    if args.mechanism:
        mech = _load(args.mechanism)
        if isinstance(mech, type) or (not hasattr(mech, "guarantee") and callable(mech)):
            try:
                mech = mech()
            except TypeError as exc:
                raise CliError(f"cannot build a mechanism from {args.mechanism!r}: {exc}") from None
        if args.claim is None:
            raise CliError("--mechanism needs --claim")
        claim = parse_claim(args.claim)
    elif args.example:
        case = _example(args.example)
        mech = case.mechanism
        claim = parse_claim(args.claim) if args.claim else case.claim
    else:
        raise CliError("give an example name or --mechanism MODULE:NAME")
    try:
        c = certify(mech, claim)
    except TypeError as exc:
        raise CliError(str(exc)) from None
    args.status = EXIT_OK if c.holds else EXIT_VIOLATION
    return c.to_json() if args.json else str(c)


# ------------------------------------------------------------------------------- parser


def _add_guarantee_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pure", action="append", metavar="EPS[xK]", help="eps-DP (K copies)")
    p.add_argument("--approx", action="append", metavar="EPS,DELTA[xK]", help="(eps, delta)-DP")
    p.add_argument("--gdp", action="append", metavar="MU[xK]", help="mu-GDP")
    p.add_argument("--zcdp", action="append", metavar="RHO[xK]", help="rho-zCDP")
    p.add_argument("--delta", action="append", type=float, metavar="DELTA",
                   help="report epsilon at this delta (repeatable)")
    p.add_argument("--eps", action="append", type=float, metavar="EPS",
                   help="report delta at this eps (repeatable)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _command(sub: Any, name: str, help: str) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(name, help=help, description=help, epilog=EXIT_CODES,
                                                formatter_class=argparse.RawDescriptionHelpFormatter)
    return p


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="dpcert", description="Differential-privacy accounting and verification.",
                 epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    p = _command(sub, "account", help="compose guarantees and report epsilon/delta")
    _add_guarantee_args(p)
    p.add_argument("--method", choices=METHODS, default="auto",
                   help="composition method (auto: exact closed form, else numeric PLD)")
    p.set_defaults(run=cmd_account)
    p = _command(sub, "convert", help="convert one guarantee to another notion")
    _add_guarantee_args(p)
    p.add_argument("--to", choices=("approx", "gdp", "zcdp"), required=True)
    p.set_defaults(run=cmd_convert)
    p = _command(sub, "audit", help="black-box audit of an example mechanism or a callable")
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
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_audit)
    p = _command(sub, "certify", help="white-box check of a declared mechanism against a claim")
    p.add_argument("example", nargs="?", help="built-in example (see `dpcert audit --list`)")
    p.add_argument("--mechanism", metavar="MODULE:NAME", help="a mechanism object (or a factory)")
    p.add_argument("--claim", help="claim, e.g. pure:1, approx:1,1e-6, gdp:0.5")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_certify)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``dpcert``; returns the exit status (``EXIT_CODES``): 0 success, 1 violation
    (or claim not certified), 2 bad usage or input, 3 the audited code raised. Errors are one line
    on stderr, never a traceback."""
    parser = build_parser()
    args = parser.parse_args(None if argv is None else list(argv))
    where = f"dpcert {args.command}"
    try:
        with warnings.catch_warnings():  # numpy's floating-point notes are not for the CLI's user
            warnings.simplefilter("ignore", RuntimeWarning)
            text = args.run(args)
    except CliError as exc:
        print(f"{where}: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except MechanismError as exc:
        print(f"{where}: the audited code failed: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_AUDITED_CODE_FAILED
    except Exception as exc:  # the library refusing (or failing on) the input: one line, exit 2
        print(f"{where}: error: {type(exc).__name__}: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(text)
    return int(getattr(args, "status", EXIT_OK))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
