"""Figures: trade-off curves, privacy profiles, epsilon against DP-SGD steps, audit ROC points.

Each figure has a function returning its arrays (no matplotlib needed) and a ``plot_*`` function
drawing them on a matplotlib ``Axes`` (a new figure when ``ax`` is None) with labelled axes.
matplotlib is optional: ``pip install -e '.[plot]'`` (the ``plot`` extra).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from accountant import (
    CLTGDP,
    FDP,
    GDP,
    PLD,
    RDP,
    ZCDP,
    ApproxDP,
    Approximate,
    Guarantee,
    PureDP,
    dpsgd_epsilon,
)
from accountant.core.types import FloatArray

from .audit import AuditReport

#: Message naming the extra when matplotlib is missing.
MATPLOTLIB_HINT = ("plotting needs matplotlib, which is not installed; install the `plot` extra: "
                   "pip install -e '.[plot]' (from a checkout) or pip install matplotlib")


def pyplot() -> Any:
    """matplotlib.pyplot, or ModuleNotFoundError naming the ``plot`` extra."""
    try:
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(MATPLOTLIB_HINT, name=exc.name) from None
    return plt


def _axes(ax: Any) -> Any:
    return pyplot().subplots(figsize=(5.0, 4.0))[1] if ax is None else ax


# ----------------------------------------------------------------------------- arrays


def tradeoff_points(g: Guarantee, n: int = 400) -> tuple[FloatArray, FloatArray]:
    """(alpha, beta) on the guarantee's trade-off curve (exact, or its sound lower bound)."""
    alpha = np.unique(np.concatenate([np.linspace(0.0, 1.0, n), np.geomspace(1e-6, 1.0, n)]))
    return alpha, np.asarray(g.tradeoff(alpha), dtype=np.float64)


def profile_points(g: Guarantee, eps: Sequence[float] | FloatArray | None = None
                   ) -> tuple[FloatArray, FloatArray]:
    """(eps, delta(eps)): the privacy profile, a sound upper bound at each eps."""
    e = np.linspace(0.0, 10.0, 101) if eps is None else np.asarray(eps, dtype=np.float64)
    return e, np.asarray(g.delta(e), dtype=np.float64)


def steps_points(sampling_rate: float, noise_multiplier: float, steps: Sequence[int],
                 delta: float) -> dict[str, FloatArray]:
    """Epsilon of DP-SGD at each number of steps: the sound upper bound, the lower bound, the
    RDP bound and the CLT approximation (``steps``, ``upper``, ``lower``, ``rdp``, ``clt``)."""
    accts = [dpsgd_epsilon(sampling_rate, noise_multiplier, int(t), delta) for t in steps]
    return {"steps": np.asarray(steps, dtype=np.float64),
            "upper": np.array([a.epsilon_upper for a in accts]),
            "lower": np.array([a.epsilon_lower for a in accts]),
            "rdp": np.array([a.rdp_epsilon for a in accts]),
            "clt": np.array([a.clt_epsilon for a in accts])}


# ----------------------------------------------------------------------------- figures


def plot_tradeoff(guarantees: Sequence[Guarantee], labels: Sequence[str] | None = None,
                  ax: Any = None) -> Any:
    """Trade-off curves beta = f(alpha) of the guarantees, with the no-privacy line 1 - alpha."""
    ax = _axes(ax)
    for i, g in enumerate(guarantees):
        a, b = tradeoff_points(g)
        ax.plot(a, b, label=labels[i] if labels else str(g))
    ax.plot([0, 1], [1, 0], ":", color="grey", label="perfect privacy (1 - alpha)")
    ax.set(xlabel="type I error alpha", ylabel="type II error beta", xlim=(0, 1), ylim=(0, 1),
           title="trade-off curves")
    ax.legend(fontsize="small")
    return ax


@functools.singledispatch
def profile_kind(g: Guarantee) -> str:
    """What ``g.delta(eps)`` is, for a figure's legend: ``"tight"`` (the guarantee's exact profile),
    ``"conversion bound"`` (an upper bound through a conversion, e.g. zCDP and RDP to (eps, delta)
    [@canonne2020discrete]), ``"numeric bound"`` (a sound upper bound with a discretisation error,
    the PLD) or ``"approximation"`` (the CLT: not a bound). Register a new guarantee type with
    ``profile_kind.register``; an unregistered one is called a bound, never tight."""
    return "upper bound"


@profile_kind.register(PureDP)
@profile_kind.register(ApproxDP)
@profile_kind.register(GDP)
@profile_kind.register(FDP)
def _tight(g: Guarantee) -> str:
    return "tight"


@profile_kind.register(RDP)
@profile_kind.register(ZCDP)
def _conversion(g: Guarantee) -> str:
    return "conversion bound"


@profile_kind.register(PLD)
def _numeric(g: Guarantee) -> str:
    return "numeric bound"


@profile_kind.register(CLTGDP)
@profile_kind.register(Approximate)
def _approximation(g: Guarantee) -> str:
    return "approximation"


PROFILE_STYLES = {"tight": "-", "conversion bound": "--", "numeric bound": "-.", "approximation": ":",
                  "upper bound": "--"}


def plot_profile(guarantees: Sequence[Guarantee], labels: Sequence[str] | None = None,
                 eps: Sequence[float] | FloatArray | None = None, ax: Any = None) -> Any:
    """Privacy profiles delta(eps), log scale; each label says whether the curve is tight or a
    bound (``profile_kind``), and the line style shows it (solid: tight, dashed: conversion bound)."""
    ax = _axes(ax)
    for i, g in enumerate(guarantees):
        e, d = profile_points(g, eps)
        keep = d > 0
        kind = profile_kind(g)
        ax.semilogy(e[keep], d[keep], PROFILE_STYLES[kind],
                    label=f"{labels[i] if labels else g}: {kind}")
    ax.set(xlabel="epsilon", ylabel="delta(epsilon)",
           title="privacy profiles (solid = tight)")
    ax.legend(fontsize="small")
    return ax


def steps_grid(steps: int, points: int = 8) -> list[int]:
    """Step counts from 1 to ``steps`` for a figure of epsilon against steps: ``points`` evenly
    spaced ones and, below the first of them, a geometric head (epsilon rises fastest there)."""
    if steps < 1 or points < 1:
        raise ValueError(f"steps and points must be >= 1, got steps={steps!r}, points={points!r}")
    even = [max(1, round(steps * (i + 1) / points)) for i in range(points)]
    head = np.geomspace(1.0, even[0], max(2, points // 2) + 1)[:-1] if even[0] > 1 else np.array([1.0])
    return sorted({*(round(float(t)) for t in head), *even})


def plot_steps(sampling_rate: float, noise_multiplier: float, steps: Sequence[int], delta: float,
               ax: Any = None) -> Any:
    """Epsilon against DP-SGD steps: the certified bracket (PLD), the RDP bound and the CLT
    approximation, each computed step count marked; the x axis spans the step counts. The bracket
    is drawn as a band only where it is wide enough to see; otherwise the upper bound's label gives
    its width."""
    ax = _axes(ax)
    p = steps_points(sampling_rate, noise_multiplier, steps, delta)
    t = p["steps"]
    top = max(p["upper"].max(), p["rdp"].max(), p["clt"].max())
    span = float(top - min(p["lower"].min(), p["clt"].min()))
    width = float((p["upper"] - p["lower"]).max())
    if width > 0.01 * span:
        ax.fill_between(t, p["lower"], p["upper"], alpha=0.3, color="C0", label="PLD bracket (certified)")
        upper = "PLD upper bound (certified)"
    else:
        upper = f"PLD upper bound (certified; exact within {width:.1g})"
    ax.plot(t, p["upper"], "-", marker=".", color="C0", label=upper)
    ax.plot(t, p["rdp"], "--", marker=".", color="C1", label="RDP bound")
    ax.plot(t, p["clt"], ":", marker=".", color="C2", label="CLT (approximation)")
    ax.set(xlabel="steps", ylabel=f"epsilon at delta = {delta:g}", xlim=(float(t[0]), float(t[-1])),
           ylim=(0.0, None), title=f"DP-SGD, q = {sampling_rate:g}, sigma = {noise_multiplier:g}")
    ax.legend(fontsize="small")
    return ax


def plot_audit(report: AuditReport, ax: Any = None) -> Any:
    """The audit's test points in the (alpha, beta) plane with their simultaneous confidence boxes,
    against the claimed trade-off curve, an inset magnifying the boxes, the witness marked; a box
    wholly below the curve refutes the claim. The arrays: ``AuditReport.roc_points``."""
    ax = report.plot(pyplot().subplots(figsize=(5.5, 5.5))[1] if ax is None else ax)
    verdict = "violation" if report.violation else "no violation found"
    ax.set_title(f"audit: {verdict}, epsilon >= {report.epsilon_lower:.3g}"
                 if math.isfinite(report.epsilon_lower) else f"audit: {verdict}")
    return ax


__all__ = ["MATPLOTLIB_HINT", "PROFILE_STYLES", "plot_audit", "plot_profile", "plot_steps",
           "plot_tradeoff", "profile_kind", "profile_points", "pyplot", "steps_grid", "steps_points",
           "tradeoff_points"]
