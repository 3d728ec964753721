"""``dpcert account``, ``convert`` and ``compose``: compose guarantees (given as flags or as the
releases of a TOML spec file) and report epsilon and delta, or convert one guarantee to another
notion. Composition is ``accountant.compose``; conversions are ``accountant.to_gdp``/``to_zcdp``."""

from __future__ import annotations

import argparse
import importlib
import json
from typing import TYPE_CHECKING, Any, cast

from .inputs import GUARANTEE_KINDS, add_guarantee_args, guarantees_from, make_guarantee
from .output import CliError, add_command, add_tol, fmt, num, table

if TYPE_CHECKING:
    from accountant import Guarantee

__all__ = [
    "DEFAULT_DELTA",
    "METHODS",
    "SPEC_KINDS",
    "add_account",
    "add_compose",
    "add_convert",
    "cmd_account",
    "cmd_compose",
    "cmd_convert",
    "compose_guarantees",
    "read_spec",
    "summary",
    "summary_rows",
]

#: The composition methods of ``--method`` (``auto``: the exact closed form, else the numeric PLD).
METHODS = ("auto", "exact", "pld", "clt", "rdp", "advanced", "basic")

#: The delta ``account`` and ``compose`` report epsilon at when no ``--delta`` is given.
DEFAULT_DELTA = 1e-5


def compose_guarantees(gs: list[Guarantee], method: str, tol: float | None = None) -> tuple[Guarantee, str]:
    """The composition of ``gs`` by ``method`` (``accountant.compose``; ``auto`` tries the exact
    closed form, then the numeric PLD) and the name of the method that composed them."""
    from accountant import Method, compose

    if len(gs) == 1 and method in ("auto", "exact"):
        return gs[0], "single guarantee"
    tried = ["exact", "pld"] if method == "auto" else [method]
    errors = []
    for m in tried:
        try:
            g = compose(gs, method=cast(Method, m), tol=tol)
            # the exact default composes numerically (PLD) when no closed form exists
            return g, "pld" if type(g).__name__ == "PLD" else m
        except (ValueError, TypeError, ArithmeticError, IndexError) as exc:
            errors.append(f"{m}: {type(exc).__name__}: {exc}")
    raise CliError("cannot compose these guarantees (" + "; ".join(errors) + ")")


def summary(g: Guarantee, deltas: list[float], epss: list[float]) -> dict[str, Any]:
    """The JSON summary of ``g``: epsilon at each delta, delta at each eps, mu for a GDP (and whether
    it is a CLT approximation), and the certified (lower, upper) bracket of a numeric accountant."""
    from accountant import GDP, Approximate

    out: dict[str, Any] = {"guarantee": str(g),
                           "epsilon": {f"{d:g}": num(g.epsilon(d)) for d in deltas},
                           "delta": {f"{e:g}": num(float(g.delta(e))) for e in epss}}
    if isinstance(g, GDP):
        out["mu"] = g.mu
        out["approximate"] = isinstance(g, Approximate)
    bracket = getattr(g, "epsilon_bracket", None)
    if callable(bracket):  # numeric accountants certify a (lower, upper) bracket around the truth
        out["epsilon_bracket"] = {f"{d:g}": [num(x) for x in bracket(d)] for d in deltas}
    return out


def summary_rows(s: dict[str, Any]) -> list[tuple[str, str]]:
    """The table rows of a ``summary``."""
    rows = [("guarantee", s["guarantee"])]
    if "mu" in s:
        rows.append(("GDP mu", f"{s['mu']:.6g}" + (" (CLT approximation)" if s.get("approximate") else "")))
    brackets = s.get("epsilon_bracket", {})
    rows += [(f"epsilon at delta={d}", fmt(v) + (f"  (certified bracket [{fmt(brackets[d][0])}, "
                                                   f"{fmt(brackets[d][1])}])" if d in brackets else ""))
             for d, v in s["epsilon"].items()]
    rows += [(f"delta at eps={e}", fmt(v)) for e, v in s["delta"].items()]
    return rows


def cmd_account(args: argparse.Namespace) -> str:
    """The composition of the guarantees given (and of ``args.prefilled``, a spec file's releases),
    reported at ``--delta`` (default ``DEFAULT_DELTA``) and ``--eps``."""
    gs = guarantees_from(args, getattr(args, "prefilled", None))
    g, method = compose_guarantees(gs, args.method, getattr(args, "tol", None))
    s = summary(g, args.delta or [DEFAULT_DELTA], args.eps or [])
    s["method"] = method
    s["count"] = len(gs)
    if args.json:
        return json.dumps(s)
    return table([("composed", f"{len(gs)} guarantees, method {method}"), *summary_rows(s)])


def cmd_convert(args: argparse.Namespace) -> str:
    """One guarantee as (eps, delta)-DP at ``--delta`` or ``--eps``, or as GDP or zCDP (``--to``)."""
    from accountant import to_gdp, to_zcdp

    gs = guarantees_from(args)
    if len(gs) != 1:
        raise CliError("convert takes exactly one guarantee (compose with `dpcert account`)")
    g = gs[0]
    to = args.to or ("approx" if args.delta or args.eps else None)
    if to is None:
        raise CliError("give --delta DELTA (or --eps EPS) for (eps, delta)-DP, or --to gdp/zcdp")
    out: dict[str, Any] = {"from": str(g), "to": to}
    if to == "approx":
        if len(args.delta or []) + len(args.eps or []) != 1:
            raise CliError("--to approx needs exactly one --delta (or one --eps)")
        eps, delta = ((g.epsilon(args.delta[0]), args.delta[0]) if args.delta
                      else (args.eps[0], float(g.delta(args.eps[0]))))
        out.update(guarantee=f"({eps:.6g}, {delta:.6g})-DP", epsilon=num(eps), delta=num(delta))
        rows = [("epsilon", fmt(out["epsilon"])), ("delta", fmt(out["delta"]))]
    else:
        convert, notion, name = (to_gdp, "GDP", "mu") if to == "gdp" else (to_zcdp, "zCDP", "rho")
        try:
            target = convert(g)
        except TypeError as exc:
            raise CliError(f"no conversion from {g} to {notion} ({exc})") from None
        value = getattr(target, name)
        out.update({"guarantee": str(target), name: value})
        rows = [(f"{notion} {name}", f"{value:.6g}")]
    if args.json:
        return json.dumps(out)
    return table([("from", str(g)), ("to", out["guarantee"]), *rows])

# --------------------------------------------------------------------------- compose SPEC.toml

#: Release kinds of a compose spec file (one per [[release]] table) and what their value is.
SPEC_KINDS = {**{k: m for k, (m, _) in GUARANTEE_KINDS.items()},
              "approx": "[EPS, DELTA]",
              "randomized_response": "{eps = EPS, k = K}",
              "subsampled_gaussian": "{noise_multiplier = S, sampling_rate = Q}"}

#: The keys of a table-valued release kind: (required, optional).
_TABLE_KEYS = {"randomized_response": (("eps",), ("k",)),
               "subsampled_gaussian": (("noise_multiplier", "sampling_rate"), ())}


def _number(where: str, value: Any) -> float:
    """A TOML number (an integer or a float; a string such as "0.5" is refused, as Python refuses
    ``PureDP("0.5")``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        shown = f"the string {value!r}" if isinstance(value, str) else f"{type(value).__name__} {value!r}"
        raise CliError(f"{where} must be a number, got {shown}" + (
            f" (write {value} without quotes)" if isinstance(value, str) else ""))
    return float(value)


def _table(where: str, kind: str, value: Any) -> dict[str, Any]:
    """A table-valued release: every required key, no unknown one (each named)."""
    required, optional = _TABLE_KEYS[kind]
    allowed = ", ".join((*required, *optional))
    if not isinstance(value, dict):
        raise CliError(f"{where}: {kind} must be a table {SPEC_KINDS[kind]}, got {value!r}")
    unknown = sorted(set(value) - {*required, *optional})
    if unknown:
        raise CliError(f"{where}: {kind} has unknown key(s) {', '.join(unknown)}; allowed keys: {allowed}")
    missing = [k for k in required if k not in value]
    if missing:
        raise CliError(f"{where}: {kind} lacks key(s) {', '.join(missing)}; allowed keys: {allowed}")
    return value


def _spec_guarantee(i: int, rel: dict[str, Any]) -> tuple[Guarantee, int]:
    """One ``[[release]]`` table: exactly one kind key, an optional ``count``, values of the
    declared types."""
    from accountant import PLD, subsampled_gaussian

    where = f"release {i + 1}"
    if not isinstance(rel, dict):
        raise CliError(f"{where}: expected a [[release]] table, got {rel!r}")
    kinds = [k for k in rel if k in SPEC_KINDS]
    unknown = [k for k in rel if k not in SPEC_KINDS and k not in ("count", "label")]
    if unknown or len(kinds) != 1:
        raise CliError(f"{where}: give exactly one of {', '.join(SPEC_KINDS)} (and optionally "
                       f"count, label); got keys {', '.join(sorted(rel)) or 'none'}"
                       + (f" (unknown: {', '.join(sorted(unknown))})" if unknown else ""))
    kind, value = kinds[0], rel[kinds[0]]
    count = rel.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise CliError(f"{where}: count must be an integer >= 1, got {count!r}")
    if not isinstance(rel.get("label", ""), str):
        raise CliError(f"{where}: label must be a string, got {rel['label']!r}")
    try:
        if kind == "randomized_response":
            t = _table(where, kind, value)
            k = t.get("k", 2)
            if isinstance(k, bool) or not isinstance(k, int):
                raise CliError(f"{where}: randomized_response k must be an integer >= 2, got {k!r}")
            return PLD.randomized_response(_number(f"{where}: randomized_response eps", t["eps"]), k), count
        if kind == "subsampled_gaussian":
            t = _table(where, kind, value)
            return subsampled_gaussian(
                _number(f"{where}: subsampled_gaussian noise_multiplier", t["noise_multiplier"]),
                _number(f"{where}: subsampled_gaussian sampling_rate", t["sampling_rate"])), count
        if kind == "approx":
            if not isinstance(value, list) or len(value) != 2:
                raise CliError(f"{where}: approx must be a list [EPS, DELTA], got {value!r}")
            body = ",".join(repr(_number(f"{where}: approx", v)) for v in value)
        else:
            body = repr(_number(f"{where}: {kind}", value))
        return make_guarantee(kind, body), count
    except CliError as exc:
        msg = str(exc)
        raise CliError(msg if msg.startswith(where) else f"{where}: {msg}") from None
    except (TypeError, ValueError) as exc:
        raise CliError(f"{where} ({kind} = {value!r}): {exc}; expected {SPEC_KINDS[kind]}") from None


def read_spec(path: str) -> tuple[list[Guarantee], dict[str, Any]]:
    """The releases of a TOML spec file (``[[release]]`` tables) and its top-level options
    (``delta``, ``eps``, ``method``)."""
    try:
        tomllib: Any = importlib.import_module("tomllib")
    except ModuleNotFoundError:  # Python 3.10
        raise CliError("reading a spec file needs Python >= 3.11 (tomllib)") from None
    try:
        with open(path, "rb") as fh:
            spec = tomllib.load(fh)
    except OSError as exc:
        raise CliError(f"cannot read {path!r}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CliError(f"{path}: not valid TOML: {exc}") from None
    releases = spec.pop("release", [])
    extra = sorted(set(spec) - {"delta", "eps", "method"})
    if extra or not isinstance(releases, list):
        raise CliError(f"{path}: unknown top-level key(s) {', '.join(extra)}; allowed: release "
                       "([[release]] tables), delta, eps, method" if extra else
                       f"{path}: release must be [[release]] tables, got release = {releases!r}")
    for key in ("delta", "eps"):
        if key in spec:
            vals = spec[key] if isinstance(spec[key], list) else [spec[key]]
            spec[key] = [_number(f"{path}: {key}", v) for v in vals]
    if "method" in spec and spec["method"] not in METHODS:
        raise CliError(f"{path}: method must be one of {', '.join(METHODS)}, got {spec['method']!r}")
    gs: list[Guarantee] = []
    for i, rel in enumerate(releases):
        g, k = _spec_guarantee(i, rel)
        gs.extend([g] * k)
    return gs, spec


def cmd_compose(args: argparse.Namespace) -> str:
    """``account`` of a spec file's releases and the flags, the file's delta, eps and method used
    where the flags give none."""
    gs: list[Guarantee] = []
    if args.spec is not None:
        gs, opts = read_spec(args.spec)
        for key in ("delta", "eps"):
            if getattr(args, key) is None and key in opts:
                setattr(args, key, opts[key])
        if args.method == "auto" and "method" in opts:
            args.method = opts["method"]
    args.prefilled = gs
    return cmd_account(args)


def add_compose(sub: Any) -> None:
    """The ``compose`` command and its flags."""
    p = add_command(sub, "compose", help="compose the releases of a TOML spec file and/or flags")
    p.add_argument("spec", nargs="?", metavar="SPEC.toml",
                   help="[[release]] tables, each one of " + ", ".join(SPEC_KINDS)
                   + " with an optional count; top-level delta, eps, method")
    add_guarantee_args(p, delta_default=f"the file's delta, else {DEFAULT_DELTA:g}")
    p.add_argument("--method", choices=METHODS, default="auto",
                   help="composition method (auto: exact closed form, else numeric PLD; a file's method "
                        "applies when this is auto)")
    add_tol(p)
    p.set_defaults(run=cmd_compose)


def add_account(sub: Any) -> None:
    """The ``account`` command and its flags."""
    p = add_command(sub, "account", help="compose guarantees and report epsilon/delta")
    add_guarantee_args(p, delta_default=f"{DEFAULT_DELTA:g}")
    p.add_argument("--method", choices=METHODS, default="auto",
                   help="composition method (auto: exact closed form, else numeric PLD)")
    add_tol(p)
    p.set_defaults(run=cmd_account)


def add_convert(sub: Any) -> None:
    """The ``convert`` command and its flags."""
    p = add_command(sub, "convert", help="convert one guarantee to another notion")
    add_guarantee_args(p)
    p.add_argument("--to", choices=("approx", "gdp", "zcdp"),
                   help="target notion (default: approx when --delta or --eps is given)")
    p.set_defaults(run=cmd_convert)
