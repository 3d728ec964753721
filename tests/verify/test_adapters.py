"""verify.adapters: diffprivlib, OpenDP and PyDP mechanisms audited through their adapters.

For each library: a correct mechanism against the claim it declares is not refuted, and a
misdeclared claim (the mechanism's noise calibrated for a larger epsilon than claimed) is refuted.
diffprivlib is seeded from the audit's generator, so its audits are reproducible and their
verdicts fixed by the seed. OpenDP and PyDP cannot be seeded: their audits are statistical tests
with stated error rates. A "not refuted" check runs at confidence 0.999, so a correct library fails
it with probability <= 1e-3. A "refuted" check has a claim off by a factor >= 3 in epsilon and
enough draws that the witness's adjusted p-value was below 1e-15 in every run tried. Floating-point
representation is not tested here (``floating_point=False``): these libraries add float noise to
the value, which notebook 04 shows separately. Each library's tests skip, with the reason, when it
is not installed (CI installs diffprivlib and OpenDP, not PyDP).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import verify
from accountant import ApproxDP, PureDP, from_opendp
from verify.adapters import (
    DiffprivlibMechanism,
    DiffprivlibTool,
    OpenDPMeasurement,
    PyDPAlgorithm,
    PyDPMechanism,
)

#: Confidence of the audits that must not refute a correct (unseeded) library.
CORRECT = 0.999


def audit(mech: Any, pair: tuple[Any, Any], claim: Any, samples: int, seed: int = 0,
          confidence: float = 0.95) -> verify.AuditReport:
    return verify.audit(mech, [pair], claim, samples=samples, seed=seed, confidence=confidence,
                        floating_point=False)


# ---- the audit's reproducibility check (no third-party library needed) ----------------------------

def test_an_rng_ignoring_callable_is_reported_unseeded() -> None:
    own = np.random.default_rng()

    def ignores_rng(x: float, rng: np.random.Generator) -> float:
        return x + float(own.laplace())

    r = audit(ignores_rng, (0.0, 1.0), PureDP(1.0), samples=2000)
    assert r.seeded is False
    assert "not reproducible from the seed" in str(r) and "different outputs" in str(r)
    assert r.to_dict()["seeded"] is False


def test_a_seeded_callable_is_not_flagged() -> None:
    r = audit(lambda x, rng: x + float(rng.laplace()), (0.0, 1.0), PureDP(1.0), samples=2000)
    assert r.seeded is True and "reproducible" not in str(r)


# ---- diffprivlib: seeded -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dpl() -> Any:
    return pytest.importorskip("diffprivlib",
                               reason="diffprivlib is not installed (pip install dpcert[thirdparty])")


def test_diffprivlib_mechanism_is_seeded_from_the_audit(dpl: Any) -> None:
    lap = DiffprivlibMechanism(dpl.mechanisms.Laplace, epsilon=1.0, sensitivity=1.0)
    rng = np.random.default_rng
    assert lap.sample(0.0, rng(5), 3) == lap.sample(0.0, rng(5), 3) != lap.sample(0.0, rng(6), 3)
    assert lap.seeded and lap.declared() == PureDP(1.0)
    a = audit(lap, (0.0, 1.0), lap.declared(), samples=20_000, seed=3)
    b = audit(lap, (0.0, 1.0), lap.declared(), samples=20_000, seed=3)
    assert not a.violation and a.seeded
    assert (a.epsilon_lower, a.p_value, a.witness) == (b.epsilon_lower, b.p_value, b.witness)


def test_diffprivlib_mechanism_misdeclared_is_refuted(dpl: Any) -> None:
    lap = DiffprivlibMechanism(dpl.mechanisms.Laplace, epsilon=1.0, sensitivity=1.0)
    assert audit(lap, (0.0, 1.0), PureDP(0.3), samples=20_000).violation
    geo = DiffprivlibMechanism(dpl.mechanisms.Geometric, epsilon=1.0, sensitivity=1)
    assert not audit(geo, (0, 1), geo.declared(), samples=20_000).violation
    assert audit(geo, (0, 1), PureDP(0.3), samples=20_000).violation


def test_diffprivlib_gaussian_declares_approximate_dp(dpl: Any) -> None:
    gau = DiffprivlibMechanism(dpl.mechanisms.GaussianAnalytic, epsilon=1.0, delta=1e-5, sensitivity=1.0)
    assert gau.declared() == ApproxDP(1.0, 1e-5)
    assert not audit(gau, (0.0, 1.0), gau.declared(), samples=20_000).violation
    assert audit(gau, (0.0, 1.0), ApproxDP(0.2, 1e-5), samples=20_000).violation


def test_diffprivlib_tool(dpl: Any) -> None:
    mean = DiffprivlibTool(dpl.tools.mean, epsilon=1.0, bounds=(0.0, 1.0))
    x, x2 = np.zeros(4), np.array([0.0, 0.0, 0.0, 1.0])  # replace-one neighbours
    assert mean.declared() == PureDP(1.0)
    assert not audit(mean, (x, x2), mean.declared(), samples=3000).violation
    assert audit(mean, (x, x2), PureDP(0.2), samples=3000).violation
    rng = np.random.default_rng
    assert mean.sample(x, rng(1), 2) == mean.sample(x, rng(1), 2)


def test_diffprivlib_adapters_refuse_misuse(dpl: Any) -> None:
    with pytest.raises(TypeError, match="mechanism class"):
        DiffprivlibMechanism(dpl.mechanisms.Laplace(epsilon=1.0, sensitivity=1.0))
    with pytest.raises(ValueError, match="random_state"):
        DiffprivlibMechanism(dpl.mechanisms.Laplace, epsilon=1.0, sensitivity=1.0, random_state=0)
    with pytest.raises(ValueError, match=r"[Ee]psilon"):
        DiffprivlibMechanism(dpl.mechanisms.Laplace, epsilon=-1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="accountant"):
        DiffprivlibTool(dpl.tools.mean, epsilon=1.0, accountant=None)
    with pytest.raises(TypeError, match="random_state"):
        DiffprivlibTool(lambda x: x)
    with pytest.raises(ValueError, match="size"):
        DiffprivlibMechanism(dpl.mechanisms.Laplace, epsilon=1.0, sensitivity=1.0).sample(
            0.0, np.random.default_rng(0), -1)


def test_diffprivlib_unseeded_is_reported(dpl: Any) -> None:
    lap = DiffprivlibMechanism(dpl.mechanisms.Laplace, seeded=False, epsilon=1.0, sensitivity=1.0)
    r = audit(lap, (0.0, 1.0), lap.declared(), samples=2000, confidence=CORRECT)
    assert not r.seeded and "secrets.SystemRandom" in str(r)


# ---- OpenDP: not seedable ------------------------------------------------------------------------

def test_opendp_laplace(dp: Any, space: Any) -> None:
    lap = OpenDPMeasurement(dp.m.make_laplace(*space, scale=1.0))
    claim = lap.declared(1.0)
    assert claim == PureDP(1.0) and not lap.seeded
    r = audit(lap, (0.0, 1.0), claim, samples=6000, confidence=CORRECT)
    assert not r.violation and not r.seeded
    assert "OpenDP draws from the operating system's random source and cannot be seeded" in str(r)
    # misdeclared: the claim of the measurement with 4 times the noise
    wrong = from_opendp(dp.m.make_laplace(*space, scale=4.0), 1.0)
    assert audit(lap, (0.0, 1.0), wrong, samples=6000).violation


def test_opendp_gaussian_zcdp(dp: Any, space: Any) -> None:
    gau = OpenDPMeasurement(dp.m.make_gaussian(*space, scale=1.0))
    assert not audit(gau, (0.0, 1.0), gau.declared(1.0), samples=6000, confidence=CORRECT).violation
    assert audit(gau, (0.0, 1.0), from_opendp(dp.m.make_gaussian(*space, scale=4.0), 1.0),
                 samples=6000).violation


def test_opendp_batches_and_falls_back(dp: Any, space: Any) -> None:
    rng = np.random.default_rng(0)
    geo = OpenDPMeasurement(dp.m.make_laplace(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale=1.0),
                            batch=100)
    out = geo.sample(3, rng, 250)
    assert len(out) == 250 and all(isinstance(v, int) for v in out) and len(set(out)) > 1
    # a profile measure OpenDP cannot compose: one call per draw
    prof = OpenDPMeasurement(dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*space, scale=1.0)))
    assert len(prof.sample(0.0, rng, 5)) == 5 and isinstance(prof(0.0, rng), float)
    assert prof.declared(1.0).epsilon(1e-5) >= 4.7
    with pytest.raises(TypeError, match="OpenDP Measurement"):
        OpenDPMeasurement(lambda x: x)
    with pytest.raises(ValueError, match="batch"):
        OpenDPMeasurement(dp.m.make_laplace(*space, scale=1.0), batch=0)


# ---- PyDP: not seedable --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pydp() -> Any:
    pytest.importorskip("pydp", reason="PyDP is not installed (pip install python-dp, or dpcert[thirdparty])")
    import pydp.algorithms.laplacian as laplacian
    import pydp.algorithms.numerical_mechanisms as numerical

    return numerical, laplacian


def test_pydp_mechanisms(pydp: Any) -> None:
    numerical, _ = pydp
    lap = PyDPMechanism(numerical.LaplaceMechanism(epsilon=1.0, sensitivity=1.0))
    assert lap.declared() == PureDP(1.0) and not lap.seeded
    r = audit(lap, (0.0, 1.0), lap.declared(), samples=20_000, confidence=CORRECT)
    assert not r.violation and "PyDP draws from a secure generator" in str(r)
    assert audit(lap, (0.0, 1.0), PureDP(0.3), samples=20_000).violation
    gau = PyDPMechanism(numerical.GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=1.0))
    assert gau.declared() == ApproxDP(1.0, 1e-5)
    assert not audit(gau, (0.0, 1.0), gau.declared(), samples=20_000, confidence=CORRECT).violation
    assert audit(gau, (0.0, 1.0), ApproxDP(0.1, 1e-5), samples=60_000).violation


def test_pydp_algorithm(pydp: Any) -> None:
    _, laplacian = pydp
    mean = PyDPAlgorithm(laplacian.BoundedSum, epsilon=1.0, lower_bound=0, upper_bound=1, dtype="float")
    assert mean.declared() == PureDP(1.0)
    x, x2 = [0.0] * 4, [0.0, 0.0, 0.0, 1.0]
    assert not audit(mean, (x, x2), mean.declared(), samples=4000, confidence=CORRECT).violation
    assert audit(mean, (x, x2), PureDP(0.2), samples=4000).violation
    with pytest.raises(TypeError, match="algorithm class"):
        PyDPAlgorithm(mean)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="add_noise"):
        PyDPMechanism(object())

