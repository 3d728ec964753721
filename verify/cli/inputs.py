"""What the commands read: numbers, guarantee flags (``--gdp 0.5x10``), claims (``pure:1``),
JSON inputs, objects named ``MODULE:NAME`` and the built-in examples by name. Each bad input is a
``CliError`` naming the flag."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
from typing import TYPE_CHECKING, Any

from .output import CliError

if TYPE_CHECKING:
    from accountant import Guarantee
    from verify.examples import Case

__all__ = [
    "GUARANTEE_KINDS",
    "add_guarantee_args",
    "example_case",
    "guarantees_from",
    "json_arg",
    "load_object",
    "make_guarantee",
    "parse_claim",
    "parse_float",
    "parse_repeat",
    "slug",
]


def parse_float(name: str, s: str) -> float:
    """``s`` as a float (``CliError`` naming ``name`` otherwise)."""
    try:
        return float(s)
    except ValueError:
        raise CliError(f"{name}: expected a number, got {s!r}") from None


def parse_repeat(name: str, spec: str) -> tuple[str, int]:
    """``VALUE[xCOUNT]`` as (VALUE, COUNT), COUNT 1 when absent."""
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


#: Guarantee flags of ``account``, ``compose`` and ``convert``: kind -> (metavar, help).
GUARANTEE_KINDS: dict[str, tuple[str, str]] = {
    "pure": ("EPS[xK]", "eps-DP (K copies)"),
    "approx": ("EPS,DELTA[xK]", "(eps, delta)-DP"),
    "gdp": ("MU[xK]", "mu-GDP"),
    "zcdp": ("RHO[xK]", "rho-zCDP"),
    "laplace": ("SCALE[xK]", "Laplace mechanism of scale b, L1 sensitivity 1 (its exact curve)"),
    "gaussian": ("SIGMA[xK]", "Gaussian mechanism of std sigma, L2 sensitivity 1 (1/sigma-GDP)"),
}


def make_guarantee(kind: str, body: str, flag: str | None = None) -> Guarantee:
    """A guarantee from e.g. ("pure", "1"), ("approx", "1,1e-6"), ("gdp", "0.5"), ("zcdp", "0.1"),
    ("laplace", "10") (scale b) or ("gaussian", "4") (sigma), sensitivity 1; errors name ``flag``
    (default ``--KIND``, the flag of that kind)."""
    from accountant import FDP, GDP, ZCDP, ApproxDP, LaplaceTradeoff, PureDP, div_up

    where = f"--{kind}" if flag is None else flag
    try:
        if kind == "pure":
            return PureDP(parse_float(where, body))
        if kind == "approx":
            parts = body.split(",")
            if len(parts) != 2:
                raise CliError(f"{where}: expected EPS,DELTA, got {body!r}")
            return ApproxDP(parse_float(f"{where} eps", parts[0]), parse_float(f"{where} delta", parts[1]))
        if kind == "gdp":
            return GDP(parse_float(where, body))
        if kind == "zcdp":
            return ZCDP(parse_float(where, body))
        if kind == "laplace":
            b = parse_float(where, body)
            if not b > 0.0:
                raise CliError(f"{where}: the scale must be > 0, got {body!r}")
            return FDP(LaplaceTradeoff(div_up(1.0, b)))
        if kind == "gaussian":
            sigma = parse_float(where, body)
            if not sigma > 0.0:
                raise CliError(f"{where}: sigma must be > 0, got {body!r}")
            return GDP(div_up(1.0, sigma))
    except (ValueError, TypeError) as exc:
        if isinstance(exc, CliError):
            raise
        raise CliError(f"{where}: {exc}") from None
    raise CliError(f"{where}: unknown guarantee kind {kind!r}; use {', '.join(GUARANTEE_KINDS)}")


def parse_claim(spec: str, flag: str = "--claim") -> Guarantee:
    """A claim such as ``pure:1``, ``approx:1,1e-6``, ``gdp:0.5`` or ``zcdp:0.1``, given by ``flag``
    (named in errors)."""
    kind, sep, body = spec.partition(":")
    if not sep:
        raise CliError(f"{flag}: expected KIND:VALUE such as pure:1 or approx:1,1e-6, got {spec!r}")
    return make_guarantee(kind.strip().lower(), body.strip(), f"{flag} {spec}")


def guarantees_from(args: argparse.Namespace, gs: list[Guarantee] | None = None) -> list[Guarantee]:
    """``gs`` followed by the guarantees of the flags of ``GUARANTEE_KINDS``, each repeated its
    COUNT times (``CliError`` when there are none)."""
    gs = [] if gs is None else gs
    for kind in GUARANTEE_KINDS:
        for spec in getattr(args, kind, None) or []:
            body, k = parse_repeat(f"--{kind}", spec)
            gs.extend([make_guarantee(kind, body)] * k)
    if not gs:
        raise CliError("give at least one guarantee: " + ", ".join(
            f"--{k} {m}" for k, (m, _) in GUARANTEE_KINDS.items()))
    return gs


def add_guarantee_args(p: argparse.ArgumentParser, delta_default: str | None = None) -> None:
    """The guarantee flags, ``--delta``/``--eps`` (the points reported) and ``--json``;
    ``delta_default`` says in ``--help`` which delta is reported when none is given."""
    for kind, (metavar, text) in GUARANTEE_KINDS.items():
        p.add_argument(f"--{kind}", action="append", metavar=metavar, help=text)
    p.add_argument("--delta", action="append", type=float, metavar="DELTA",
                   help="report epsilon at this delta (repeatable" + (
                       f"; default: {delta_default})" if delta_default else ")"))
    p.add_argument("--eps", action="append", type=float, metavar="EPS",
                   help="report delta at this eps (repeatable)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def slug(name: str) -> str:
    """An example's name as typed on the command line: lower case, words joined by '-'."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def example_case(name: str) -> Case:
    """The built-in example (``verify.examples.cases()``) named ``name`` or its slug."""
    from verify import examples

    for c in examples.cases():
        if name in (c.name, slug(c.name)):
            return c
    raise CliError(f"unknown example {name!r}; list them with `dpcert audit --list`")


def load_object(spec: str) -> Any:
    """MODULE:NAME, the module found on sys.path or in the working directory (as ``python -m``)."""
    mod, sep, attr = spec.partition(":")
    if not sep:
        raise CliError(f"expected MODULE:NAME, got {spec!r}")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())  # after the installed packages: a local file never shadows them
    try:
        obj: Any = importlib.import_module(mod)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise CliError(f"cannot load {spec!r}: {type(exc).__name__}: {exc}") from None
    return obj


def json_arg(name: str, s: str) -> Any:
    """``s`` parsed as JSON (an input dataset given on the command line)."""
    try:
        return json.loads(s)
    except json.JSONDecodeError:
        raise CliError(f"{name}: expected JSON (a number or a list), got {s!r}") from None

