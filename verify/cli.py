"""The ``dpcert`` command: account, compose, convert, dpsgd, calibrate, plot, audit, certify.
Tables for people, ``--json`` for machines.

Start-up is kept short (``dpcert --help`` imports only argparse): the accountant, the mechanisms
and the audit are imported by the command that needs them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import re
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn, cast

if TYPE_CHECKING:
    from accountant import Guarantee

    from . import examples

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


#: Guarantee flags of ``account``, ``compose`` and ``convert``: kind -> (metavar, help).
GUARANTEE_KINDS: dict[str, tuple[str, str]] = {
    "pure": ("EPS[xK]", "eps-DP (K copies)"),
    "approx": ("EPS,DELTA[xK]", "(eps, delta)-DP"),
    "gdp": ("MU[xK]", "mu-GDP"),
    "zcdp": ("RHO[xK]", "rho-zCDP"),
    "laplace": ("SCALE[xK]", "Laplace mechanism of scale b, L1 sensitivity 1 (its exact curve)"),
    "gaussian": ("SIGMA[xK]", "Gaussian mechanism of std sigma, L2 sensitivity 1 (1/sigma-GDP)"),
}


def make_guarantee(kind: str, body: str) -> Guarantee:
    """A guarantee from e.g. ("pure", "1"), ("approx", "1,1e-6"), ("gdp", "0.5"), ("zcdp", "0.1"),
    ("laplace", "10") (scale b) or ("gaussian", "4") (sigma), sensitivity 1."""
    from accountant import FDP, GDP, ZCDP, ApproxDP, LaplaceTradeoff, PureDP, div_up

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
        if kind == "laplace":
            b = _float("--laplace", body)
            if not b > 0.0:
                raise CliError(f"--laplace: the scale must be > 0, got {body!r}")
            return FDP(LaplaceTradeoff(div_up(1.0, b)))
        if kind == "gaussian":
            sigma = _float("--gaussian", body)
            if not sigma > 0.0:
                raise CliError(f"--gaussian: sigma must be > 0, got {body!r}")
            return GDP(div_up(1.0, sigma))
    except (ValueError, TypeError) as exc:
        if isinstance(exc, CliError):
            raise
        raise CliError(f"--{kind}: {exc}") from None
    raise CliError(f"unknown guarantee kind {kind!r}; use {', '.join(GUARANTEE_KINDS)}")


def parse_claim(spec: str) -> Guarantee:
    """A claim such as ``pure:1``, ``approx:1,1e-6``, ``gdp:0.5`` or ``zcdp:0.1``."""
    kind, sep, body = spec.partition(":")
    if not sep:
        raise CliError(f"--claim: expected KIND:VALUE such as pure:1 or approx:1,1e-6, got {spec!r}")
    return make_guarantee(kind.strip().lower(), body.strip())


def _guarantees(args: argparse.Namespace, gs: list[Guarantee] | None = None) -> list[Guarantee]:
    gs = [] if gs is None else gs
    for kind in GUARANTEE_KINDS:
        for spec in getattr(args, kind, None) or []:
            body, k = _repeat(f"--{kind}", spec)
            gs.extend([make_guarantee(kind, body)] * k)
    if not gs:
        raise CliError("give at least one guarantee: " + ", ".join(
            f"--{k} {m}" for k, (m, _) in GUARANTEE_KINDS.items()))
    return gs


def _compose(gs: list[Guarantee], method: str, tol: float | None = None) -> tuple[Guarantee, str]:
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


def _num(x: float) -> float | str:
    return x if math.isfinite(x) else str(x)


def _summary(g: Guarantee, deltas: list[float], epss: list[float]) -> dict[str, Any]:
    from accountant import CLTGDP, GDP

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
    gs = _guarantees(args, getattr(args, "prefilled", None))
    g, method = _compose(gs, args.method, getattr(args, "tol", None))
    s = _summary(g, args.delta or [1e-5], args.eps or [])
    s["method"] = method
    s["count"] = len(gs)
    if args.json:
        return json.dumps(s)
    return _table([("composed", f"{len(gs)} guarantees, method {method}"), *_summary_rows(s)])


def cmd_convert(args: argparse.Namespace) -> str:
    from accountant import to_gdp, to_zcdp

    gs = _guarantees(args)
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
        out.update(guarantee=f"({eps:.6g}, {delta:.6g})-DP", epsilon=_num(eps), delta=_num(delta))
        rows = [("epsilon", _fmt(out["epsilon"])), ("delta", _fmt(out["delta"]))]
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
    return _table([("from", str(g)), ("to", out["guarantee"]), *rows])


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _example(name: str) -> examples.Case:
    from . import examples

    for c in examples.cases():
        if name in (c.name, _slug(c.name)):
            return c
    raise CliError(f"unknown example {name!r}; list them with `dpcert audit --list`")


def _load(spec: str) -> Any:
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


def _json_arg(name: str, s: str) -> Any:
    try:
        return json.loads(s)
    except json.JSONDecodeError:
        raise CliError(f"{name}: expected JSON (a number or a list), got {s!r}") from None


def cmd_audit(args: argparse.Namespace) -> str:
    from . import examples
    from .audit import audit

    if args.list:
        return "\n".join(f"{_slug(c.name):45} {'buggy' if c.buggy else 'correct':8} claim {c.claim}"
                         for c in examples.cases())
    if args.example and args.callable:
        raise CliError("give an example name or --callable, not both")
    if args.callable:
        mech = _load(args.callable)
        if isinstance(mech, type):
            raise CliError(f"--callable {args.callable} is a class; give a function (data, rng) -> "
                           "output, e.g. a module-level function that builds the mechanism and "
                           "calls it")
        if not callable(mech):
            raise CliError(f"--callable {args.callable} is a {type(mech).__name__}, not callable")
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
              vectorised=args.vectorised, workers=args.workers, progress=args.progress,
              floating_point=args.floating_point)
    args.status = EXIT_VIOLATION if r.violation else EXIT_OK
    return r.to_json() if args.json else str(r)


def cmd_certify(args: argparse.Namespace) -> str:
    from .certify import certify

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


# ------------------------------------------------------------------- DP-SGD and calibration


def _positive(name: str, value: float | None) -> float | None:
    if value is not None and not (math.isfinite(value) and value > 0.0):
        raise CliError(f"{name} must be a finite number > 0, got {value!r}")
    return value


def _rate(args: argparse.Namespace) -> float | None:
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


def _step_count(args: argparse.Namespace, q: float | None) -> int | None:
    """The number of steps: --steps, or --epochs of 1/q steps each (rounded up: pessimistic)."""
    if args.steps is not None:
        if args.epochs is not None:
            raise CliError("give --steps or --epochs, not both")
        if args.steps < 1:
            raise CliError(f"--steps must be >= 1, got {args.steps}")
        return int(args.steps)
    if args.epochs is None:
        return None
    _positive("--epochs", args.epochs)
    if q is None:
        raise CliError("--epochs needs the sampling rate (--sampling-rate or --batch-size "
                       "with --dataset-size)")
    return max(1, math.ceil(float(args.epochs) / q - 1e-9))


def _dpsgd_inputs(args: argparse.Namespace) -> tuple[float | None, float | None, int | None]:
    q = _positive("--sampling-rate", _rate(args))
    return q, _positive("--noise-multiplier", args.noise_multiplier), _step_count(args, q)


def cmd_dpsgd(args: argparse.Namespace) -> str:
    from accountant import dpsgd_epsilon

    q, sigma, steps = _dpsgd_inputs(args)
    if q is None or sigma is None or steps is None:
        raise CliError("dpsgd needs the sampling rate (--sampling-rate, or --batch-size and "
                       "--dataset-size), --noise-multiplier and --steps (or --epochs)")
    acct = dpsgd_epsilon(q, sigma, steps, args.delta, tol=args.tol)
    out: dict[str, Any] = {
        "sampling_rate": q, "noise_multiplier": sigma, "steps": steps, "epochs": steps * q,
        "delta": args.delta, "epsilon": _num(acct.epsilon_upper), "epsilon_lower": _num(acct.epsilon_lower),
        "clt_epsilon": _num(acct.clt_epsilon), "clt_mu": _num(acct.clt_mu),
        "rdp_epsilon": _num(acct.rdp_epsilon)}
    rows: list[dict[str, Any]] = []
    if args.every is not None:
        if args.every <= 0:
            raise CliError(f"--every must be > 0 epochs, got {args.every}")
        per_epoch = 1.0 / q
        k = 1
        while True:
            t = min(steps, max(1, math.ceil(k * args.every * per_epoch - 1e-9)))
            at = acct if t == steps else dpsgd_epsilon(q, sigma, t, args.delta, tol=args.tol)
            lo, hi = at.epsilon_lower, at.epsilon_upper
            rows.append({"epochs": t * q, "steps": t, "epsilon": _num(hi), "epsilon_lower": _num(lo)})
            if args.progress:
                print(f"  {t}/{steps} steps", file=sys.stderr)
            if t == steps:
                break
            k += 1
        out["rows"] = rows
    if args.json:
        return json.dumps(out)
    head = _table([
        ("DP-SGD", f"sampling rate {q:.6g}, noise multiplier {sigma:.6g}, {steps} steps "
                   f"({steps * q:.4g} epochs), delta {args.delta:g}"),
        ("epsilon", f"{_fmt(out['epsilon'])}  (sound upper bound; exact value >= "
                    f"{_fmt(out['epsilon_lower'])})"),
        ("CLT estimate", f"{_fmt(out['clt_epsilon'])}  (mu = {_fmt(out['clt_mu'])}; an "
                         "approximation, not a bound)"),
        ("RDP bound", _fmt(out["rdp_epsilon"]))])
    if not rows:
        return head
    table = [f"{'epochs':>10}  {'steps':>10}  {'epsilon':>10}  {'lower':>10}"]
    table += [f"{r['epochs']:>10.4g}  {r['steps']:>10}  {_fmt(r['epsilon']):>10}  "
              f"{_fmt(r['epsilon_lower']):>10}" for r in rows]
    return head + "\n\n" + "\n".join(table)


def cmd_calibrate(args: argparse.Namespace) -> str:
    import time

    from accountant import dpsgd_epsilon
    from accountant.compose.dpsgd import dpsgd_noise_multiplier, dpsgd_sampling_rate, dpsgd_steps

    eps, delta = args.target_epsilon, args.delta
    start = time.perf_counter()
    if args.mechanism is not None:
        return _calibrate_mechanism(args)
    if delta is None:
        raise CliError("calibrate needs --delta")
    q, sigma, steps = _dpsgd_inputs(args)
    missing = [n for n, v in (("noise_multiplier", sigma), ("sampling_rate", q), ("steps", steps))
               if v is None]
    if len(missing) != 1:
        raise CliError("give two of --noise-multiplier, the sampling rate (--sampling-rate, or "
                       "--batch-size and --dataset-size) and --steps (or --epochs); the third is "
                       "solved for (or give --mechanism gaussian/laplace)")
    solved = missing[0]
    if solved == "noise_multiplier":
        assert q is not None and steps is not None
        sigma = dpsgd_noise_multiplier(eps, delta, q, steps, rtol=args.rtol)
    elif solved == "sampling_rate":
        assert sigma is not None and steps is not None
        q = dpsgd_sampling_rate(eps, delta, sigma, steps, rtol=args.rtol)
    else:
        assert q is not None and sigma is not None
        steps = dpsgd_steps(eps, delta, q, sigma, rtol=args.rtol)
    seconds = time.perf_counter() - start
    out: dict[str, Any] = {"solved_for": solved, "noise_multiplier": sigma, "sampling_rate": q,
                           "steps": steps, "target_epsilon": eps, "delta": delta,
                           "seconds": round(seconds, 3)}
    if steps == 0:
        out["epsilon"] = None
    else:
        assert q is not None and sigma is not None and steps is not None
        out["epsilon"] = _num(dpsgd_epsilon(q, sigma, steps, delta).epsilon_upper)
    if args.json:
        return json.dumps(out)
    value = out[solved]
    return _table([
        (solved.replace("_", " "), f"{value:.6g}" if isinstance(value, float) else str(value)),
        ("certifies", f"({eps:g}, {delta:g})-DP: sound epsilon {_fmt(out['epsilon'] or 'n/a')} at "
                      f"sampling rate {q:.6g}, noise multiplier {sigma:.6g}, {steps} steps"),
        ("time", f"{seconds:.2f} s")])


def _calibrate_mechanism(args: argparse.Namespace) -> str:
    """The least Gaussian sigma or Laplace scale whose exact guarantee implies the target (the
    real-valued mechanism; the catalogue's lattice release is `Mechanism.calibrated`)."""
    from accountant import FDP, GDP, ApproxDP, LaplaceTradeoff, PureDP, calibrate, div_up

    sens = _positive("--sensitivity", args.sensitivity) or 1.0
    target = (PureDP(args.target_epsilon) if not args.delta
              else ApproxDP(args.target_epsilon, args.delta))
    if args.mechanism == "gaussian":
        if not args.delta:
            raise CliError("a Gaussian mechanism is never pure DP: give --delta > 0")
        value = calibrate(lambda s: GDP(div_up(sens, s)), target, (sens * 1e-6, sens * 1e6),
                          tol=1e-9)
        name = "sigma"
    else:
        value = calibrate(lambda b: FDP(LaplaceTradeoff(div_up(sens, b))), target,
                          (sens * 1e-6, sens * 1e6), tol=1e-9)
        name = "scale"
    out = {"mechanism": args.mechanism, name: value, "sensitivity": sens, "target": str(target)}
    if args.json:
        return json.dumps(out)
    return _table([(f"{args.mechanism} {name}", f"{value:.9g}"), ("sensitivity", f"{sens:g}"),
                   ("target", str(target)),
                   ("note", "real-valued noise; mechanisms.Laplace/Gaussian.calibrated gives the "
                            "float-safe lattice release")])


# --------------------------------------------------------------------------- compose SPEC.toml

#: Release kinds of a compose spec file (one per [[release]] table) and what their value is.
SPEC_KINDS = {**{k: m for k, (m, _) in GUARANTEE_KINDS.items()},
              "randomized_response": "{eps = EPS, k = K}",
              "subsampled_gaussian": "{noise_multiplier = S, sampling_rate = Q}"}


def _spec_guarantee(i: int, rel: dict[str, Any]) -> tuple[Guarantee, int]:
    """One ``[[release]]`` table: exactly one kind key, an optional ``count``."""
    from accountant import PLD, subsampled_gaussian

    where = f"release {i + 1}"
    kinds = [k for k in rel if k in SPEC_KINDS]
    unknown = [k for k in rel if k not in SPEC_KINDS and k not in ("count", "label")]
    if unknown or len(kinds) != 1:
        raise CliError(f"{where}: give exactly one of {', '.join(SPEC_KINDS)} (and optionally "
                       f"count, label); got keys {sorted(rel)}")
    kind, value = kinds[0], rel[kinds[0]]
    count = rel.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise CliError(f"{where}: count must be an integer >= 1, got {count!r}")
    try:
        if kind == "randomized_response":
            return PLD.randomized_response(float(value["eps"]), int(value.get("k", 2))), count
        if kind == "subsampled_gaussian":
            return subsampled_gaussian(float(value["noise_multiplier"]),
                                       float(value["sampling_rate"])), count
        body = ",".join(str(v) for v in value) if isinstance(value, list) else str(value)
        return make_guarantee(kind, body), count
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, CliError):
            raise CliError(f"{where}: {exc}") from None
        raise CliError(f"{where} ({kind} = {value!r}): {type(exc).__name__}: {exc}; expected "
                       f"{SPEC_KINDS[kind]}") from None


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
        raise CliError(f"{path}: expected [[release]] tables and optional delta, eps, method; "
                       f"got {extra or 'release = ' + repr(releases)}")
    gs: list[Guarantee] = []
    for i, rel in enumerate(releases):
        g, k = _spec_guarantee(i, rel)
        gs.extend([g] * k)
    return gs, spec


def cmd_compose(args: argparse.Namespace) -> str:
    gs: list[Guarantee] = []
    if args.spec is not None:
        gs, opts = read_spec(args.spec)
        for key in ("delta", "eps"):
            if getattr(args, key) is None and key in opts:
                vals = opts[key] if isinstance(opts[key], list) else [opts[key]]
                setattr(args, key, [_float(key, str(v)) for v in vals])
        if args.method == "auto" and "method" in opts:
            if opts["method"] not in METHODS:
                raise CliError(f"{args.spec}: method must be one of {', '.join(METHODS)}")
            args.method = opts["method"]
    args.prefilled = gs
    return cmd_account(args)


def _add_compose(sub: Any) -> None:
    p = _command(sub, "compose", help="compose the releases of a TOML spec file and/or flags")
    p.add_argument("spec", nargs="?", metavar="SPEC.toml",
                   help="[[release]] tables, each one of " + ", ".join(SPEC_KINDS)
                   + " with an optional count; top-level delta, eps, method")
    _add_guarantee_args(p)
    p.add_argument("--method", choices=METHODS, default="auto")
    p.set_defaults(run=cmd_compose)


def _add_dpsgd_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sampling-rate", type=float, metavar="Q", help="Poisson sampling rate")
    p.add_argument("--batch-size", type=int, metavar="B", help="expected batch size (with --dataset-size)")
    p.add_argument("--dataset-size", type=int, metavar="N", help="number of records")
    p.add_argument("--noise-multiplier", "--sigma", type=float, metavar="SIGMA",
                   help="noise std / clipping norm")
    p.add_argument("--steps", type=int, metavar="T", help="number of steps")
    p.add_argument("--epochs", type=float, metavar="E", help="epochs of 1/q steps each")


def _add_dpsgd(sub: Any) -> None:
    p = _command(sub, "dpsgd", help="epsilon of DP-SGD (Poisson-subsampled Gaussian steps)")
    _add_dpsgd_inputs(p)
    p.add_argument("--delta", type=float, required=True)
    p.add_argument("--every", type=float, metavar="EPOCHS", help="a table row every EPOCHS epochs")
    p.add_argument("--tol", type=float, default=3e-5, help="PLD accuracy target in epsilon")
    p.add_argument("--progress", action="store_true", help="progress on stderr")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_dpsgd)


def _add_calibrate(sub: Any) -> None:
    p = _command(sub, "calibrate", help="solve DP-SGD's noise multiplier, sampling rate or steps "
                                        "(or a Gaussian/Laplace noise scale) for a target")
    p.add_argument("--target-epsilon", type=float, required=True, metavar="EPS")
    p.add_argument("--delta", type=float, help="target delta (omit for pure DP with --mechanism)")
    _add_dpsgd_inputs(p)
    p.add_argument("--mechanism", choices=("gaussian", "laplace"),
                   help="calibrate a single Gaussian sigma or Laplace scale instead")
    p.add_argument("--sensitivity", type=float, help="L2 (Gaussian) or L1 (Laplace) sensitivity")
    p.add_argument("--rtol", type=float, default=1e-3, help="relative precision of the answer")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_calibrate)


# ------------------------------------------------------------------------------------ plot


def cmd_plot(args: argparse.Namespace) -> str:
    from . import plots

    if not args.output.lower().endswith((".png", ".svg", ".pdf")):
        raise CliError(f"--output must end in .png, .svg or .pdf, got {args.output!r}")
    plt = plots.pyplot()  # ModuleNotFoundError naming the `plot` extra when matplotlib is missing
    plt.switch_backend("Agg")  # a file, not a window
    if args.kind in ("tradeoff", "profile"):
        curves, labels = [], []
        for kind in GUARANTEE_KINDS:
            for spec in getattr(args, kind) or []:
                body, k = _repeat(f"--{kind}", spec)
                g = make_guarantee(kind, body)
                curves.append(g if k == 1 else _compose([g] * k, "auto")[0])
                labels.append(f"{g} x{k}" if k > 1 else str(g))
        if not curves:
            raise CliError("give at least one guarantee to plot (--gdp MU, --laplace SCALE, ...)")
        if args.kind == "tradeoff":
            ax = plots.plot_tradeoff(curves, labels)
        else:
            ax = plots.plot_profile(curves, labels, eps=[args.eps_max * i / 100 for i in range(101)])
    elif args.kind == "steps":
        q, sigma, steps = _dpsgd_inputs(args)
        if q is None or sigma is None or steps is None or args.delta is None:
            raise CliError("plot steps needs the sampling rate, --noise-multiplier, --steps (the "
                           "largest) and --delta")
        grid = sorted({max(1, round(steps * (i + 1) / args.points)) for i in range(args.points)})
        ax = plots.plot_steps(q, sigma, grid, args.delta)
    else:
        from .audit import audit

        if not args.example:
            raise CliError("plot audit needs an example name (see `dpcert audit --list`)")
        case = _example(args.example)
        report = audit(case.mechanism, case.pairs, case.claim, samples=args.samples, seed=0)
        ax = plots.plot_audit(report)
    ax.figure.savefig(args.output, bbox_inches="tight")
    plt.close(ax.figure)
    return f"wrote {args.output}"


def _add_plot(sub: Any) -> None:
    p = _command(sub, "plot", help="draw trade-off curves, privacy profiles, epsilon against "
                                   "DP-SGD steps or an audit's ROC points to a PNG/SVG/PDF file")
    p.add_argument("kind", choices=("tradeoff", "profile", "steps", "audit"))
    p.add_argument("example", nargs="?", help="for `audit`: a built-in example")
    p.add_argument("--output", "-o", required=True, metavar="FILE", help=".png, .svg or .pdf")
    for kind, (metavar, text) in GUARANTEE_KINDS.items():
        p.add_argument(f"--{kind}", action="append", metavar=metavar, help=text + "; one curve each")
    _add_dpsgd_inputs(p)
    p.add_argument("--delta", type=float, help="for `steps`")
    p.add_argument("--points", type=int, default=8, help="for `steps`: number of step counts")
    p.add_argument("--eps-max", type=float, default=10.0, help="for `profile`: largest eps")
    p.add_argument("--samples", type=int, default=20_000, help="for `audit`: draws per input")
    p.set_defaults(run=cmd_plot)


# ------------------------------------------------------------------------------- parser


def _add_guarantee_args(p: argparse.ArgumentParser) -> None:
    for kind, (metavar, text) in GUARANTEE_KINDS.items():
        p.add_argument(f"--{kind}", action="append", metavar=metavar, help=text)
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
    p.add_argument("--tol", type=float, help="target width in epsilon of a PLD's bracket (accuracy)")
    p.set_defaults(run=cmd_account)
    p = _command(sub, "convert", help="convert one guarantee to another notion")
    _add_guarantee_args(p)
    p.add_argument("--to", choices=("approx", "gdp", "zcdp"),
                   help="target notion (default: approx when --delta or --eps is given)")
    p.set_defaults(run=cmd_convert)
    _add_compose(sub)
    _add_dpsgd(sub)
    _add_calibrate(sub)
    _add_plot(sub)

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
    p.add_argument("--floating-point", action=argparse.BooleanOptionalAction, default=True,
                   help="also test the IEEE-754 representation of float outputs (reported apart "
                        "from the finding on outputs as real numbers)")
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
    except Exception as exc:
        from .audit import MechanismError

        if not isinstance(exc, MechanismError):
            print(f"{where}: error: {type(exc).__name__}: {_one_line(str(exc))}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(f"{where}: the audited code failed: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_AUDITED_CODE_FAILED
    print(text)
    return int(getattr(args, "status", EXIT_OK))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
