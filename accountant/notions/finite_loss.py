"""Trade-off curves of finite privacy-loss laws: atoms of Q-mass at finite losses, plus mass at
+inf [@dong2022gaussian, Prop. 2.2]; the closed families (randomized response, f_{eps,delta},
discrete Laplace and Gaussian) with their declared loss and mass errors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from accountant.core.rounding import LIBM_REL
from accountant.core.types import SMALLEST_SUBNORMAL, UNIT_ROUNDOFF, FloatArray
from accountant.core.validation import as_float_array, check_count, check_real
from accountant.notions.discrete_gaussian import (
    DISCRETE_GAUSSIAN_TAIL,
    GAUSS_UNHELD_MASS,
    check_sigma2,
    discrete_gaussian_points,
    gauss_masses,
)
from accountant.notions.tradeoff import CURVES, LossMoments, PiecewiseLinearTradeoff


@dataclass(frozen=True, eq=False)
class FiniteLossTradeoff(PiecewiseLinearTradeoff):
    """T(P, Q) for distributions with finitely many privacy-loss values, held exactly.

    ``losses`` are finite values of L = log(q/p) with Q-masses ``q_masses``; ``q_inf`` is the
    Q-mass where P vanishes (L = +inf) and ``p_ninf`` the P-mass where Q vanishes. The profile is
    delta(eps) = q_inf + sum_l q_l (1 - e^{eps - l})_+, summed without cancellation.

    Rounding is outward: ``q_inf`` must be exact or rounded up by the caller, ``mass_rtol``
    bounds the relative error of the stored finite masses and
    ``loss_atol`` the absolute error of the stored losses against the exact pair; the profile is
    rounded up and the knots of the curve are moved left and down by those bounds plus the
    summation error (a knot moved left and down lies below a non-increasing curve).
    """

    _check_convexity: ClassVar[bool] = False
    losses: FloatArray = field(default_factory=lambda: np.zeros(0))
    q_masses: FloatArray = field(default_factory=lambda: np.zeros(0))
    q_inf: float = 0.0
    p_ninf: float = 0.0
    mass_rtol: float = 0.0
    loss_atol: float = 0.0
    #: What the curve is the curve of (e.g. "discrete Laplace(b=2, shift=1)"), for reprs only.
    label: str = ""
    #: How a named constructor built it, ``(name, *JSON arguments)`` (``RECIPES``): the curve is
    #: stored as that, not as its atoms (a discrete Gaussian curve holds 10^5 of them).
    recipe: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        losses = as_float_array("losses", self.losses).ravel()
        q = as_float_array("q_masses", self.q_masses).ravel()
        if not np.isfinite(losses).all():
            raise ValueError("losses must be finite (mass at +-inf goes in q_inf and p_ninf)")
        if q.shape != losses.shape:
            raise ValueError(f"losses and q_masses must have equal lengths, got {losses.size} "
                             f"losses and {q.size} q_masses")
        if (q < 0).any() or not np.isfinite(q).all():
            raise ValueError("q_masses must be finite and non-negative")
        for name in ("q_inf", "p_ninf"):
            check_real(name, getattr(self, name), low=0.0, high=1.0)
        for name in ("mass_rtol", "loss_atol"):
            check_real(name, getattr(self, name), low=0.0, high=math.inf, high_open=True)

    @classmethod
    def from_losses(cls, losses: ArrayLike, q_masses: ArrayLike, q_inf: float = 0.0,
                    p_ninf: float = 0.0, *, p_masses: ArrayLike | None = None,
                    mass_rtol: float = 0.0, loss_atol: float = 0.0, label: str = "",
                    recipe: tuple[Any, ...] = ()) -> FiniteLossTradeoff:
        """The pair with Q-masses ``q_masses`` at ``losses`` (P-masses q e^-l, or ``p_masses``
        when given, e.g. computed in log space where e^-l overflows); see the class docstring
        for ``mass_rtol`` and ``loss_atol``; ``label`` names the model in reprs and ``recipe`` is
        how a named constructor rebuilds it (its JSON form)."""
        l_ = as_float_array("losses", losses).ravel()
        q = as_float_array("q_masses", q_masses).ravel()
        if l_.shape != q.shape or (q < 0).any() or not np.isfinite(l_).all():
            raise ValueError("losses must be finite and q_masses non-negative, of equal length")
        order = np.argsort(-l_, kind="stable")
        l_, q = l_[order], q[order]
        if p_masses is None:
            with np.errstate(over="ignore"):
                p = np.where(q == 0.0, 0.0, q * np.exp(-l_))
            mass_rtol += loss_atol + LIBM_REL + UNIT_ROUNDOFF  # the losses', exp's and the product's errors
        else:
            p = as_float_array("p_masses", p_masses).ravel()[order]
        total_q, total_p = q_inf + q.sum(), p_ninf + p.sum()
        if abs(total_q - 1) > 1e-9 or abs(total_p - 1) > 1e-9:
            raise ValueError(f"masses must sum to 1 under P and Q, got {total_p!r} and {total_q!r}")
        # knots moved left and down by their error bounds (relative to the cumulative masses)
        r = mass_rtol + (l_.size + 4) * UNIT_ROUNDOFF
        alphas = np.minimum(np.concatenate([[0.0], np.cumsum(p)]) * (1.0 - r - loss_atol), 1.0)
        drop = q_inf + np.concatenate([[0.0], np.cumsum(q)])
        betas = 1.0 - drop * (1.0 + r) - 2 * UNIT_ROUNDOFF
        keep = np.concatenate([np.diff(alphas) > 0, [True]])  # of equal alphas, the lowest beta
        alphas, betas = alphas[keep], betas[keep]
        if alphas[0] > 0.0:
            alphas = np.concatenate([[0.0], alphas])
            betas = np.concatenate([[betas[0]], betas])
        if alphas[-1] < 1.0:
            alphas = np.concatenate([alphas, [1.0]])
            betas = np.concatenate([betas, [0.0]])
        betas = np.clip(betas, 0.0, 1.0 - alphas)
        return cls(alphas, betas, losses=l_, q_masses=q, q_inf=float(q_inf), p_ninf=float(p_ninf),
                   mass_rtol=mass_rtol, loss_atol=loss_atol, label=label, recipe=recipe)

    @classmethod
    def approx_dp(cls, eps: float, delta: float = 0.0) -> FiniteLossTradeoff:
        """f_{eps,delta}(a) = max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)) [@wasserman2010statistical;
        @dong2022gaussian, Prop. 2.5]: Q puts delta on L = +inf and (1-delta) on randomized response.

        The curve's JSON recipe holds eps and delta as the validated floats (``approx_dp(1)`` is
        stored as ``["approx_dp", 1.0, 0.0]``), as every guarantee and recipe records its real
        parameters (``ApproxDP(1, 0)`` is stored with ``"eps": 1.0``): the stored form is the same
        whichever numeric type the caller used (an int, a numpy scalar, -0.0) and in whatever order
        calls reach the cache, which shares one curve between 1 and 1.0."""
        eps = check_real("eps", eps, low=0.0, high=math.inf, high_open=True) + 0.0  # -0.0 as 0.0
        delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True) + 0.0
        return _approx_dp(cls, eps, delta)

    @classmethod
    def discrete_laplace(cls, scale: float, sensitivity: int = 1) -> FiniteLossTradeoff:
        """Exact T(P, Q) for P = DLap(b), Q = Delta + DLap(b), pmf proportional to exp(-|k|/b) on Z
        [@canonne2020discrete] (b = ``scale``, Delta = ``sensitivity``, an integer).

        With r = exp(-1/b) the loss log(q/p)(y) is Delta/b for y >= Delta (Q-mass 1/(1+r)), -Delta/b
        for y <= 0 (Q-mass r^Delta/(1+r)) and (2y - Delta)/b in between (Q-mass (1-r) r^(Delta-y)/(1+r)),
        the masses in log space. One loss atom per integer: the model of ``DiscreteLaplacePair``.
        """
        scale = check_real("scale", scale, low=0.0, high=math.inf, low_open=True, high_open=True)
        shift = check_count("sensitivity", sensitivity, low=0)
        if shift == 0:
            return cls.from_losses([0.0], [1.0])
        log_r = -1.0 / scale
        m = np.arange(1, shift)
        losses = np.concatenate([[shift / scale, -shift / scale], (2 * m - shift) / scale])
        log_norm = -math.log1p(math.exp(log_r))  # log 1/(1+r)
        q = np.concatenate([[math.exp(log_norm), math.exp(shift * log_r + log_norm)],
                            -math.expm1(log_r) * np.exp((shift - m) * log_r + log_norm)])
        # each loss k/b is rounded once (half an ulp); the profile and the curve are rounded outward
        # by that much (the losses of the exact pair may lie just above the doubles held). Masses:
        # the exponent k log r + log_norm (k <= shift) errs by 3u shift / b (log r = -1/b and the
        # product rounded, the sum) and 1.2 LIBM_REL + u log 2 (log_norm: exp, then log1p of a value
        # at most log 2 with slope at most 1/2); exp and expm1 add LIBM_REL each, the products 2u
        mass_rtol = 3.0 * UNIT_ROUNDOFF * shift / scale + 4.0 * LIBM_REL
        return cls.from_losses(losses, q, loss_atol=2.0 * UNIT_ROUNDOFF * shift / scale, mass_rtol=mass_rtol,
                               label=f"discrete Laplace(b={scale:.6g}, shift={shift})",
                               recipe=("discrete_laplace", scale, shift))

    @classmethod
    def discrete_gaussian(cls, sigma2: float | Fraction, shift: int = 1,
                          tail: float = DISCRETE_GAUSSIAN_TAIL) -> FiniteLossTradeoff:
        """T(P, Q) for P = N_Z(0, sigma2), Q = shift + N_Z(0, sigma2), pmf proportional to
        exp(-y^2/(2 sigma2)) on Z [@canonne2020discrete, Def. 1] (sigma2 exact: a float is taken at its
        binary value), the model of ``DiscreteGaussianPair`` and of the lattice Gaussian mechanism.

        Exact on the window -m <= y <= shift + m, m = ceil(tail sigma) (``discrete_gaussian_window``),
        where the loss is log(q/p)(y) = (2 shift y - shift^2)/(2 sigma2); the Q-mass outside the
        window goes to L = +inf and the P-mass outside to L = -inf, so the pair is a post-processing
        of this one and the curve a sound lower bound (pessimistic by less than exp(-tail^2/2)).

        Declared errors: the masses' (Q and P, both computed in log space) ``mass_rtol`` from
        ``gauss_masses``, which counts the error of the exponent's argument (hundreds of ulp where
        it is large), of log Z, and of the normaliser summed over the window only; masses below
        the normal range are not held and charged, at most ``GAUSS_UNHELD_MASS`` each, at +inf
        (Q) and -inf (P), as the window's rest is. Each loss is 2 shift y - shift^2 (exact, or
        three roundings of terms at most 3 max|L| 2 sigma2) over 2 sigma2 (sigma2 rounded, the
        quotient rounded): within 6u max|L| (1 + 5u) [@higham2002accuracy, Lemma 3.1], charged
        as ``loss_atol`` = 8u max|L|.
        """
        shift = check_count("shift", shift, low=0)
        tail = check_real("tail", tail, low=1.0, high=64.0)
        if shift == 0:
            return cls.from_losses([0.0], [1.0])
        exact = check_sigma2(sigma2)
        y, s2, log_z, log_z_err, outside = discrete_gaussian_points(exact, shift, tail)
        yf = y.astype(np.float64)
        losses = (2.0 * shift * yf - float(shift) ** 2) / (2.0 * s2)
        q, q_rtol = gauss_masses(yf - shift, s2, log_z, log_z_err, excess=outside)
        p, p_rtol = gauss_masses(yf, s2, log_z, log_z_err, excess=outside)
        # the window's rest and the masses not held, each rounded up (to the next double)
        q_inf = math.nextafter(outside + np.count_nonzero(q == 0.0) * GAUSS_UNHELD_MASS, 1.0)
        p_ninf = math.nextafter(outside + np.count_nonzero(p == 0.0) * GAUSS_UNHELD_MASS, 1.0)
        atol = 8.0 * UNIT_ROUNDOFF * float(np.max(np.abs(losses)))
        return cls.from_losses(losses, q, q_inf=q_inf, p_ninf=p_ninf, p_masses=p,
                               mass_rtol=max(q_rtol, p_rtol),
                               loss_atol=atol,
                               label=f"discrete Gaussian(sigma^2={s2:.6g}, shift={shift})",
                               recipe=("discrete_gaussian", str(exact), shift, tail))

    @classmethod
    def randomized_response(cls, eps: float, k: int = 2) -> FiniteLossTradeoff:
        """k-ary randomized response (truth kept w.p. e^eps/(e^eps + k - 1)) on two inputs."""
        eps = check_real("eps", eps, low=0.0, high=math.inf, high_open=True)
        k = check_count("k", k, low=2)
        z = 1.0 + (k - 1) * math.exp(-eps)  # (e^eps + k - 1) e^-eps, no overflow
        q = [1.0 / z, (k - 2) * math.exp(-eps) / z, math.exp(-eps) / z]
        # z errs by exp's LIBM_REL and 2u, each mass by that, exp's again and 2u more
        return cls.from_losses([eps, 0.0, -eps], q, p_masses=q[::-1],
                               mass_rtol=2.0 * LIBM_REL + 4.0 * UNIT_ROUNDOFF,
                               label=f"{k}-ary randomized response(eps={eps:.6g})",
                               recipe=("randomized_response", eps, k))

    def _profile(self, eps: FloatArray) -> FloatArray:
        if self.losses.size == 0:
            return np.full(eps.shape, self.q_inf)
        with np.errstate(over="ignore"):
            gap = eps[:, None] - self.losses[None, :]
        body = np.sum(self.q_masses[None, :] * -np.expm1(np.minimum(gap, 0.0)), axis=1)
        # a loss off by at most loss_atol moves a term by at most q e^{gap} loss_atol (and an atom
        # within loss_atol below eps by at most q 2 loss_atol)
        near = gap < self.loss_atol
        slack = np.sum(np.where(near, self.q_masses[None, :]
                                * np.exp(np.minimum(gap, 0.0)), 0.0), axis=1)
        # the masses', the expm1 terms' (LIBM_REL, their arguments' u at most) and the sum's errors
        r = self.mass_rtol + LIBM_REL + (self.losses.size + 4) * UNIT_ROUNDOFF
        # q_inf is held as a bound by the constructors: above every loss delta is exactly q_inf
        out = self.q_inf + body * (1.0 + r) + np.where(body > 0.0, UNIT_ROUNDOFF * self.q_inf, 0.0) \
            + 2.0 * self.loss_atol * slack
        return np.asarray(np.where(out > 0.0, out, np.where(slack > 0, SMALLEST_SUBNORMAL, 0.0)),
                          dtype=np.float64)

    def inverse(self) -> FiniteLossTradeoff:
        with np.errstate(over="ignore"):
            p = np.where(self.q_masses == 0.0, 0.0, self.q_masses * np.exp(-self.losses))
        return FiniteLossTradeoff.from_losses(-self.losses, p, q_inf=self.p_ninf, p_ninf=self.q_inf,
                                              p_masses=self.q_masses,
                                              mass_rtol=self.mass_rtol + self.loss_atol + LIBM_REL
                                              + UNIT_ROUNDOFF,
                                              loss_atol=self.loss_atol)

    def loss_moments(self) -> LossMoments:
        if self.q_inf > 0 or self.p_ninf > 0:
            raise ValueError("the privacy loss has an atom at +-infinity: its moments are infinite")
        with np.errstate(over="ignore"):
            p = np.where(self.q_masses == 0.0, 0.0, self.q_masses * np.exp(-self.losses))
        mean = float(np.sum(p * self.losses))
        return LossMoments(kl=-mean, kappa2=float(np.sum(p * self.losses**2)),
                           kappa3=float(np.sum(p * np.abs(self.losses - mean) ** 3)))

    @property
    def is_symmetric(self) -> bool:
        inv = self.inverse()
        return bool(inv.losses.shape == self.losses.shape
                    and np.allclose(inv.losses, self.losses, rtol=1e-12, atol=1e-15)
                    and np.allclose(inv.q_masses, self.q_masses, rtol=1e-9, atol=1e-15)
                    and math.isclose(self.q_inf, self.p_ninf, rel_tol=1e-9, abs_tol=1e-15))

    def __repr__(self) -> str:
        if self.label:
            return f"{self.label} curve ({self.losses.size} loss values)"
        return f"FiniteLossTradeoff({self.losses.size} loss values, q_inf={self.q_inf:g})"


#: The named constructors a ``recipe`` may call, with its JSON arguments.
RECIPES: dict[str, Any] = {
    "approx_dp": FiniteLossTradeoff.approx_dp,
    "discrete_laplace": FiniteLossTradeoff.discrete_laplace,
    "discrete_gaussian": lambda s2, shift, tail: FiniteLossTradeoff.discrete_gaussian(Fraction(s2), shift,
                                                                                     tail),
    "randomized_response": FiniteLossTradeoff.randomized_response,
}


#: The stored fields of a curve without a recipe (its knots, atoms and declared errors).
_ARRAYS = ("alphas", "betas", "losses", "q_masses")


_NUMBERS = ("q_inf", "p_ninf", "mass_rtol", "loss_atol")


def _encode(f: FiniteLossTradeoff) -> dict[str, Any]:
    if f.recipe:
        return {"recipe": list(f.recipe)}
    return {**{k: getattr(f, k).tolist() for k in _ARRAYS}, **{k: getattr(f, k) for k in _NUMBERS},
            "label": f.label}


def _decode(d: dict[str, Any]) -> FiniteLossTradeoff:
    if "recipe" in d:
        name, *args = d["recipe"]
        if name not in RECIPES:
            raise ValueError(f"unknown finite-loss curve recipe {name!r}; known: {sorted(RECIPES)}")
        out: FiniteLossTradeoff = RECIPES[name](*args)
        return out
    a = {k: np.asarray(as_float_array(k, d[k]), dtype=np.float64) for k in _ARRAYS}
    n = {k: check_real(k, d[k], low=0.0, high=math.inf, high_open=True) for k in _NUMBERS}
    return FiniteLossTradeoff(a["alphas"], a["betas"], losses=a["losses"], q_masses=a["q_masses"],
                              q_inf=n["q_inf"], p_ninf=n["p_ninf"], mass_rtol=n["mass_rtol"],
                              loss_atol=n["loss_atol"], label=str(d.get("label", "")))


CURVES.register(FiniteLossTradeoff, "finite_loss", encode=_encode, decode=_decode)


@lru_cache(maxsize=256)
def _approx_dp(cls: type[FiniteLossTradeoff], eps: float, delta: float) -> FiniteLossTradeoff:
    """``FiniteLossTradeoff.approx_dp`` on validated arguments, built once per (class, eps, delta):
    a claim object is often made anew for each audit or composition, and the curve is immutable."""
    from scipy import special  # imported on use: scipy.special is slow to import

    w = (1 - delta) * float(special.expit(eps))  # (1 - delta) e^eps / (1 + e^eps)
    w_c = (1 - delta) * float(special.expit(-eps))  # (1 - delta) / (1 + e^eps), no overflow
    return cls.from_losses([eps, -eps], [w, w_c], q_inf=delta, p_ninf=delta,
                           p_masses=[w_c, w], mass_rtol=LIBM_REL + 4.0 * UNIT_ROUNDOFF,  # expit's exp
                           label=f"({eps:.6g}, {delta:.6g})-DP", recipe=("approx_dp", eps, delta))
