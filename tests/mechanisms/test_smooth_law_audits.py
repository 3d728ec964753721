"""The smooth-sensitivity median and trimmed mean under each lattice law released for concentrated
DP beside the Laplace-log-normal one (uniform-log-normal, arsinh-normal): audits (no violation of the
(eps, 1e-3)-DP implied by the declared (1/2 eps^2)-CDP, and a variant with 100 times less noise
refuted on the same pair; confidence 0.95, fixed seeds) and accuracy against the Laplace-log-normal
release. The Laplace-log-normal audits, with a local-sensitivity variant, are in
``test_estimators_smooth_cdp.py``."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from functools import cached_property
from typing import Any

import numpy as np
import pytest

import verify
from accountant import ZCDP, ApproxDP
from mechanisms.estimators import LatticeSmoothNoise, SmoothLLNQuantile, SmoothLLNTrimmedMean

#: (law, the median's eps): the arsinh-normal audit runs at eps 0.15 so that 100 s stays within the
#: release's s <= 10
LAWS = [("uniform-log-normal", 0.3), ("arsinh-normal", 0.15)]

Sampler = Callable[[Any, np.random.Generator, int], Any]


def _implied(g: ZCDP, delta: float = 1e-3) -> ApproxDP:
    return ApproxDP(g.epsilon(delta), delta)


def _as_reals(mech: SmoothLLNQuantile | SmoothLLNTrimmedMean) -> Sampler:
    """The release as a plain vectorised sampler: with enough draws (> 256 distinct values among the
    selection draws) the audit reads its outputs as real numbers (intervals, histograms) rather than
    counting exact lattice values, nearly all distinct."""
    return lambda data, rng, size: mech.sample(data, rng, size)


@dataclasses.dataclass(frozen=True)
class _SmallScale(SmoothLLNQuantile):
    """Broken: the noise's shift parameter s is 100 times the calibrated one (100 times less noise)."""

    @cached_property
    def noise(self) -> LatticeSmoothNoise:
        good = super().noise  # the calibrated noise
        return dataclasses.replace(good, s=good.s * 100)


@pytest.mark.parametrize(("law", "eps"), LAWS)
def test_median_audit_and_a_too_small_scale_refuted(law: str, eps: float) -> None:
    """Witness (n = 21 on [0, 1]): x has its median 0.5 alone between ten 0s and ten 1s, y moves it
    to 0 (the median moves by 0.5)."""
    x = np.array([0.0] * 10 + [0.5] + [1.0] * 10)
    y = x.copy()
    y[10] = 0.0
    good = SmoothLLNQuantile(0.0, 1.0, 21, eps, resolution=2.0**-8, law=law)
    claim = _implied(good.guarantee())
    report = verify.audit(_as_reals(good), [(x, y)], claim, samples=1000, seed=0, vectorised=True)
    assert not report.violation
    broken = _SmallScale(0.0, 1.0, 21, eps, resolution=2.0**-8, law=law)
    assert broken.noise.s == 100 * good.noise.s
    report = verify.audit(_as_reals(broken), [(x, y)], claim, samples=1000, seed=0, vectorised=True)
    assert report.violation


@pytest.mark.parametrize(("law", "eps"), LAWS)
def test_trimmed_mean_audit(law: str, eps: float) -> None:
    """One record moved from the trimmed tail to the far end: no violation of the implied (eps, 1e-3)."""
    x = np.array([0.0] * 10 + [1.0] * 10)
    y = x.copy()
    y[0] = 1.0
    mech = SmoothLLNTrimmedMean(0.0, 1.0, 20, 1.0, trim=2, resolution=2.0**-8, law=law)
    report = verify.audit(_as_reals(mech), [(x, y)], _implied(mech.guarantee()), samples=1000, seed=0,
                          vectorised=True)
    assert not report.violation


@pytest.mark.parametrize("law", [law for law, _ in LAWS])
def test_median_accuracy_and_against_lln(law: str) -> None:
    """At n = 20000, eps = 0.3 on N(0, 1) data: 40 releases have RMSE below 2x the non-private
    median's sd 1/(2 f(0) sqrt n) = 0.0089, and their noise (release minus sample median) has RMSE
    below the Laplace-log-normal release's on the same data (expected ratios ~0.5 for ULN, from sd(Z)
    x shift coefficient / sigma, and ~0.34 for arsinh-normal, from sd(Z) eps_1 c / (sd(Z) sigma^-1
    e^(3 sigma^2/2)) with c = eps_shift/s, at the defaults; 40 draws of each make a ratio above 1 a
    > 4 sd event)."""
    rng = np.random.default_rng(5)
    n = 20_000
    mech = SmoothLLNQuantile(-10.0, 10.0, n, 0.3, law=law)
    lln = SmoothLLNQuantile(-10.0, 10.0, n, 0.3)
    err, gap, gap_lln = [], [], []
    for _ in range(40):
        x = rng.normal(size=n)
        med = mech.statistic(x)
        v = float(mech.sample(x, rng))
        err.append(v)
        gap.append(v - med)
        gap_lln.append(float(lln.sample(x, rng)) - med)
    assert math.sqrt(np.mean(np.square(err))) < 2 * 0.5 * math.sqrt(2 * math.pi) / math.sqrt(n)
    assert np.sqrt(np.mean(np.square(gap))) < np.sqrt(np.mean(np.square(gap_lln)))
