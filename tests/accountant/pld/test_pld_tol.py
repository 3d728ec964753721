"""The public accuracy parameter ``tol`` (issue 14): honoured, monotone, validated.

Truths: W1 is GDP(2) (closed form); W3 and W4 are the accounting benchmark's references (mpmath
quadrature of the subsampled-Gaussian privacy loss, issue 3), to 7 decimals.
"""

from __future__ import annotations

import itertools
import math

import pytest

from accountant import GDP, PLD, ApproxDP, compose, subsample
from accountant.pld.subsampling import subsampled_gaussian

TOLS = (1e-4, 3e-5, 1e-5)
DELTA = 1e-5


def w1(tol: float) -> PLD:
    return compose([PLD.gaussian(5.0)] * 100, method="pld", tol=tol)


def w3(tol: float) -> PLD:
    return compose([subsample(GDP(1.0), 0.01, tol=tol)] * 1000)


def w4(tol: float) -> PLD:
    return compose([subsampled_gaussian(1.1, 0.004)] * 100_000, tol=tol)


@pytest.mark.parametrize(("build", "truth"), [(w1, 9.9972561), (w3, 1.8282367), (w4, 6.7326941)],
                         ids=["W1", "W3", "W4"])
def test_smaller_tol_gives_a_narrower_bracket(build: object, truth: float) -> None:
    assert callable(build)
    widths = []
    for tol in TOLS:
        pld = build(tol)
        assert isinstance(pld, PLD) and pld.tol == tol
        lo, up = pld.epsilon_bracket(DELTA)
        assert lo - 1e-7 <= truth <= up + 1e-7
        widths.append(up - lo)
    assert all(b < a for a, b in itertools.pairwise(widths)), widths
    # the width follows tol (the grid's error is O(h^2) = O(tol)): 10x smaller tol, >= 5x narrower
    assert widths[0] > 5 * widths[-1], widths


def test_finer_tols_keep_narrowing_on_w3() -> None:
    # below tol 1e-5 the k copies of W3's tail-relative source charge, and their cross terms,
    # outgrew the grid error (tol 1e-6: upper - truth 1.4e-4, 7x that at 1e-5); the absolute
    # charge is now carried too and each delta uses the smaller bound
    # (tols on distinct rungs of the ladder: 7.5e-6 and 1.875e-6; a tol is read at the nearest)
    truth = 1.8282367
    excess = []
    for tol in (1e-5, 2e-6):
        lo, up = w3(tol).epsilon_bracket(DELTA)
        assert lo - 1e-7 <= truth <= up + 1e-7
        excess.append(up - truth)
    assert all(b < a for a, b in itertools.pairwise(excess)), excess
    assert excess[-1] < 3e-6, excess


def test_tol_default_and_override() -> None:
    g = subsample(GDP(1.0), 0.01)
    assert g.tol == PLD.gaussian(1.0).tol
    assert compose([g] * 3).tol == g.tol
    assert compose([g, subsample(GDP(1.0), 0.01, tol=1e-3)]).tol == g.tol  # the smallest
    assert compose([g] * 3, tol=1e-3).tol == 1e-3
    mixed = compose([ApproxDP(1.0, 1e-6), GDP(1.0)], tol=2e-4)  # no closed form: a PLD
    assert isinstance(mixed, PLD) and mixed.tol == 2e-4


@pytest.mark.parametrize("bad", [0.0, -1e-3, 2.0, math.nan, math.inf, 1e-12])
def test_bad_tol_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="tol"):
        compose([GDP(1.0)] * 2, method="pld", tol=bad)
    with pytest.raises(ValueError, match="tol"):
        subsample(GDP(1.0), 0.1, tol=bad)


def test_tol_is_refused_where_it_does_not_apply() -> None:
    with pytest.raises(ValueError, match="tol"):
        compose([GDP(1.0)] * 2, method="clt", tol=1e-4)
    with pytest.raises(TypeError, match="tol"):
        compose([GDP(1.0)] * 2, method="pld", tol="1e-4")  # type: ignore[call-overload]


def test_cli_tol(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from verify.cli import main

    args = ["account", "--gdp", "0.3x4", "--approx", "0.5,1e-7x3", "--delta", "1e-5", "--json"]
    assert main([*args, "--tol", "1e-3"]) == 0
    coarse = json.loads(capsys.readouterr().out)
    assert main([*args, "--tol", "1e-5"]) == 0
    fine = json.loads(capsys.readouterr().out)
    assert coarse["method"] == fine["method"] == "pld"
    assert main([*args, "--tol", "-1"]) == 2
    assert "tol" in capsys.readouterr().err
    (lo_c, up_c), (lo_f, up_f) = coarse["epsilon_bracket"]["1e-05"], fine["epsilon_bracket"]["1e-05"]
    assert up_f - lo_f < up_c - lo_c  # the accuracy reached the grid
