"""Privacy of the noisy M-estimators: per-step sensitivities over neighbouring datasets (hypothesis),
declared guarantees against closed forms, the one-step release audited, a broken variant refuted."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import verify
from accountant import GDP, ZCDP, ApproxDP, compose, implies
from mechanisms import (
    HuberLocation,
    HuberRegression,
    LogisticRegression,
    NoisyGD,
    NoisyNewton,
)
from mechanisms.estimators.mestimation import BoundedPsiModel
from mechanisms.estimators.release import lattice_release, mean_mechanism

FINITE = st.floats(-1e3, 1e3, allow_nan=False)

# (model, theta, x, y, x', y')
Neighbours = tuple[BoundedPsiModel, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _row(draw: st.DrawFn, p: int, bound: float) -> np.ndarray:
    """A design row with ||x||_2 <= bound (the boundary included)."""
    v = np.array(draw(st.lists(st.floats(-1.0, 1.0), min_size=p, max_size=p)))
    radius = draw(st.floats(0.0, 1.0)) * bound
    norm = float(np.linalg.norm(v))
    return v * (radius / norm) * (1 - 1e-12) if norm > 0 else v


@st.composite
def neighbours(draw: st.DrawFn) -> Neighbours:
    """(model, theta, x, y, x', y'): datasets of n records differing in record 0, within the domain."""
    kind = draw(st.sampled_from(["location", "huber", "mallows", "logistic"]))
    p = 1 if kind == "location" else draw(st.integers(1, 4))
    r = draw(st.floats(0.1, 20.0))
    if kind == "location":
        model: BoundedPsiModel = HuberLocation(c=draw(st.floats(0.1, 3.0)), scale=draw(st.floats(0.1, 5.0)))
    elif kind == "huber":
        model = HuberRegression(p, c=draw(st.floats(0.1, 3.0)), scale=draw(st.floats(0.1, 5.0)),
                                design_bound=r)
    elif kind == "mallows":
        model = HuberRegression(p, c=draw(st.floats(0.1, 3.0)), scale=draw(st.floats(0.1, 5.0)),
                                weights="mallows", design_bound=draw(st.sampled_from([math.inf, r])))
    else:
        model = LogisticRegression(p, clip=draw(st.floats(0.05, 5.0)), design_bound=r)
    n = draw(st.integers(1, 6))
    bound = min(r, 50.0) if kind != "location" else 1.0
    rows = [np.ones(1) if kind == "location" else _row(draw, p, bound) for _ in range(n + 1)]
    if kind == "logistic":
        ys = [float(draw(st.integers(0, 1))) for _ in range(n + 1)]
    else:
        ys = [draw(FINITE) for _ in range(n + 1)]
    x = np.array(rows[:n])[None]
    y = np.array(ys[:n])[None]
    x2, y2 = x.copy(), y.copy()
    x2[0, 0], y2[0, 0] = rows[n], ys[n]
    theta = np.array([draw(FINITE) / 10 for _ in range(p)])[None]
    return model, theta, x, y, x2, y2


def _triu(m: np.ndarray) -> np.ndarray:
    iu = np.triu_indices(m.shape[-1])
    return m[..., iu[0], iu[1]]


@settings(max_examples=300, deadline=None)
@given(neighbours())
def test_step_sensitivities_hold_on_neighbouring_datasets(case: Neighbours) -> None:
    model, theta, x, y, x2, y2 = case
    assert isinstance(model, BoundedPsiModel)
    n = x.shape[1]
    b, bb = model.grad_bound, model.hess_bound
    slack = 1 + 1e-9
    psi = model.per_example_gradients(theta, x, y)
    assert (np.linalg.norm(psi, axis=-1) <= b * slack).all()
    dg = model.mean_gradient(theta, x, y) - model.mean_gradient(theta, x2, y2)
    assert np.linalg.norm(dg) <= 2 * b / n * slack
    dh = _triu(model.mean_hessian(theta, x, y) - model.mean_hessian(theta, x2, y2))
    assert np.linalg.norm(dh) <= math.sqrt(2) * bb / n * slack
    dq = _triu(model.mean_outer(theta, x, y) - model.mean_outer(theta, x2, y2))
    assert np.linalg.norm(dq) <= math.sqrt(2) * b * b / n * slack


def test_sensitivity_bounds_are_attained_or_nearly() -> None:
    """The gradient bound 2B/n is attained (opposite clipped residuals): it is not loose."""
    model = HuberRegression(2, c=1.0, design_bound=2.0)
    x = np.array([[[2.0, 0.0]]])
    th = np.zeros((1, 2))
    dg = model.mean_gradient(th, x, np.array([[100.0]])) - model.mean_gradient(th, x, np.array([[-100.0]]))
    assert math.isclose(float(np.linalg.norm(dg)), 2 * model.grad_bound)


def test_guarantees_compose_as_stated() -> None:
    n, mu = 1000, 1.0
    gd = NoisyGD(HuberLocation(), n, mu, 10, inference_mu=mu)
    g = gd.guarantee()
    assert isinstance(g, GDP)
    # sqrt(3) mu for the continuous noise; the lattice adds less than 0.1%
    assert math.sqrt(3) * mu <= g.mu <= math.sqrt(3) * mu * 1.001
    step = gd.gradient_mechanism.closed_form_guarantee()
    assert isinstance(step, GDP) and math.isclose(step.mu, mu / math.sqrt(10), rel_tol=1e-3)
    newton = NoisyNewton(HuberLocation(), n, mu, 4)
    gn = newton.guarantee()
    assert isinstance(gn, GDP) and mu <= gn.mu <= mu * 1.001
    reg = NoisyNewton(HuberRegression(3, design_bound=2.0), n, mu, 4, inference_mu=mu)
    gz = reg.guarantee()
    assert isinstance(gz, ZCDP) and 1.5 * mu**2 <= gz.rho <= 1.5 * mu**2 * 1.002
    parts = [reg.gradient_mechanism.closed_form_guarantee(), reg.hessian_mechanism.closed_form_guarantee()]
    assert math.isclose(gz.rho, compose(parts * 4).rho + 0.5 * mu**2 * 2, rel_tol=2e-3)  # type: ignore[attr-defined]


def test_calibration_meets_the_target_with_least_noise() -> None:
    model = HuberRegression(3, weights="mallows")
    target = ApproxDP(1.0, 1e-6)
    est = NoisyGD.calibrated(model, 2000, target, iterations=8)
    assert implies(est.guarantee(), target)
    louder = NoisyGD(model, 2000, est.mu * 1.001, 8, inference_mu=est.mu * 1.001)
    assert not implies(louder.guarantee(), target)
    with pytest.raises(ValueError, match="GDP target needs p = 1"):
        NoisyGD.calibrated(model, 2000, GDP(1.0), iterations=8)
    loc = NoisyNewton.calibrated(HuberLocation(), 500, GDP(0.5), iterations=3, inference=False, tol=1e-3)
    assert implies(loc.guarantee(), GDP(0.5)) and loc.mu > 0.499


def test_lattice_release_is_the_catalogue_law() -> None:
    """The stacked release draws the same lattice values as the catalogue's Gaussian.sample."""
    mech = mean_mechanism(4, 2, 0.5, 1.0, 0.3, "mean")
    rec = np.array([[0.1, 0.2], [0.3, -0.2], [0.5, 0.0], [-0.1, 0.4]])
    a = lattice_release(mech, np.repeat(rec.mean(axis=0)[None], 20000, axis=0), np.random.default_rng(1))
    b = mech.sample(rec, np.random.default_rng(2), size=20000)
    gamma = 2.0 ** mech.grid_exponent()
    assert np.all(np.mod(a / gamma, 1.0) == 0.0) and np.all(np.mod(b / gamma, 1.0) == 0.0)
    # same law: means and sds agree within 5 standard errors (fixed seeds)
    se = 0.3 / math.sqrt(20000)
    assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) < 5 * math.sqrt(2) * se)
    assert np.all(np.abs(a.std(axis=0) - 0.3) < 0.01) and np.all(np.abs(b.std(axis=0) - 0.3) < 0.01)


def test_exact_sum_release_sums_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """The DP-SGD sum is exact on the fine grid: its lattice index is the integer rounding of the
    Python-integer sum of the per-record fine indices, for a batch whose float sum would err."""
    from fractions import Fraction

    from mechanisms.estimators.release import SUM_FINE_BITS, exact_sum_release, sum_mechanism

    mech = sum_mechanism(3, 1.0, 1.0, 0.5, "sum")
    e = mech.grid_exponent()
    rng = np.random.default_rng(0)
    recs = rng.uniform(-1, 1, (5000, 3)) * np.array([1.0, 1e-9, 1e9])[None] / 1e9
    fine = [[round(Fraction(float(v)) / Fraction(2) ** (e - SUM_FINE_BITS)) for v in row] for row in recs]
    exact = [sum(col) for col in zip(*fine, strict=True)]
    idx = [(t + 2 ** (SUM_FINE_BITS - 1)) // 2**SUM_FINE_BITS for t in exact]
    import mechanisms.estimators.release as release

    monkeypatch.setattr(release, "discrete_gaussian_array", lambda rng, s2, shape: np.zeros(shape, np.int64))
    out = exact_sum_release(mech, recs, rng)
    assert np.ldexp(out, -e).tolist() == [float(i) for i in idx]  # noise switched off: the exact index
    assert float(mech.query.l2) <= 1.0 + math.sqrt(3) * 2.0 ** (e - SUM_FINE_BITS)


# ----- audits ------------------------------------------------------------------------------------------
N_AUDIT = 10
WORST = (np.array([100.0] + [0.0] * (N_AUDIT - 1)), np.array([-100.0] + [0.0] * (N_AUDIT - 1)))


def test_one_step_release_passes_the_audit() -> None:
    est = NoisyGD(HuberLocation(c=1.0), N_AUDIT, 1.0, 1, step=1.0)
    claim = est.guarantee()
    report = verify.audit(est, [WORST], claim, samples=40_000, seed=3, use_privacy_loss=False)
    assert not report.violation


def test_clipping_after_averaging_is_refuted() -> None:
    """Broken: the raw mean gradient is clipped to B after averaging, with the noise of 2B/n: one
    record moves it by up to 2B, not 2B/n."""
    est = NoisyGD(HuberLocation(c=1.0), N_AUDIT, 1.0, 1, step=1.0)
    mech = est.gradient_mechanism

    def broken(data: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
        raw = -(np.asarray(data) - 0.0).mean()  # unclipped Huber-free gradient at theta = 0
        clipped = np.clip(raw, -1.0, 1.0)
        return -lattice_release(mech, np.full((size, 1), clipped), rng)[:, 0]

    report = verify.audit(broken, [WORST], est.guarantee(), samples=20_000, seed=4, vectorised=True)
    assert report.violation


def test_noise_for_the_wrong_iteration_count_is_refuted() -> None:
    """Broken: four gradient steps released with the noise of one step but claiming the guarantee of
    K = 1 (mu-GDP): the transcript is 2 mu-GDP."""
    est = NoisyGD(HuberLocation(c=1.0), N_AUDIT, 1.0, 1, step=1.0)
    mech = est.gradient_mechanism

    def broken(data: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
        g = -np.clip(np.asarray(data), -1.0, 1.0).mean()  # theta stays near 0: same gradient each step
        out: np.ndarray = lattice_release(mech, np.full((size * 4, 1), g), rng).reshape(size, 4).sum(axis=1)
        return out

    report = verify.audit(broken, [WORST], est.guarantee(), samples=40_000, seed=5, vectorised=True)
    assert report.violation


# ----- bad input ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("make", "match"), [
    (lambda: HuberLocation(c=0.0), "c must lie"),
    (lambda: HuberLocation(c=math.nan), "c must lie"),
    (lambda: LogisticRegression(2, clip=-1.0), "clip must lie"),
    (lambda: HuberRegression(2), "design_bound must be finite"),
    (lambda: HuberRegression(2, design_bound=0.0), "design_bound must lie"),
    (lambda: HuberRegression(2, weights="huber", design_bound=1.0), "weights must be"),  # type: ignore[arg-type]
    (lambda: NoisyGD(HuberLocation(), 10, 1.0, 0), "iterations must be"),
    (lambda: NoisyGD(HuberLocation(), 10, 1.0, 5, step=2.0), "step must lie"),
    (lambda: NoisyGD(HuberLocation(), 10, 1.0, 5, step=-0.1), "step must lie"),
    (lambda: NoisyNewton(HuberLocation(), 10, 1.0, 5, step=1.5), "step must lie"),
    (lambda: NoisyGD(HuberLocation(), 10, 0.0, 5), "mu must lie"),
    (lambda: NoisyGD(HuberLocation(), 10, math.inf, 5), "mu must lie"),
    (lambda: NoisyGD(HuberLocation(), 0, 1.0, 5), "n must be"),
    (lambda: NoisyGD(HuberLocation(), 10, 1.0, 5, theta0=(0.0, 1.0)), "theta0 must have"),
    (lambda: NoisyGD("huber", 10, 1.0, 5), "model must be"),  # type: ignore[arg-type]
])
def test_bad_parameters_are_named(make: object, match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        make()  # type: ignore[operator]


def test_bad_data_is_named() -> None:
    rng = np.random.default_rng(0)
    est = NoisyGD(HuberRegression(2, design_bound=1.0), 3, 1.0, 2, step=0.5)
    good = np.array([[0.5, 0.5, 1.0], [0.1, 0.0, 2.0], [0.0, -0.3, 0.0]])
    est.fit(good, rng)
    outside = good.copy()
    outside[1, 0] = 2.0
    with pytest.raises(ValueError, match="outside the declared design_bound"):
        est.fit(outside, rng)
    nan = good.copy()
    nan[2, 2] = math.nan
    with pytest.raises(ValueError, match="NaN"):
        est.fit(nan, rng)
    inf = good.copy()
    inf[2, 2] = math.inf
    with pytest.raises(ValueError, match="finite"):
        est.fit(inf, rng)
    with pytest.raises(ValueError, match="declared for n = 3"):
        est.fit(good[:2], rng)
    with pytest.raises(TypeError, match=r"numpy\.random\.Generator"):
        est.fit(good, 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="0 or 1"):
        NoisyGD(LogisticRegression(2), 3, 1.0, 2).fit(good, rng)
