"""Distributional privacy over a set of databases [@zhou2009differential, Def. 2.3-2.4, Thm 2.5], by
exact enumeration of the sign matrices of Example 3.6."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

from mechanisms.compression import CompressedRelease, covariance, truncated_loss_bound
from mechanisms.distributional import covariance_distance, distributional_privacy, set_delta_max


def sign_matrices(n: int, p: int) -> list[np.ndarray]:
    """Every n x p matrix of +-1 whose covariance is non-singular (Example 3.6; columns have squared
    norm n, eq. (4))."""
    out = []
    for bits in itertools.product((-1.0, 1.0), repeat=n * p):
        x = np.array(bits).reshape(n, p)
        if np.linalg.eigvalsh(x.T @ x / n)[0] > 1e-9:
            out.append(x)
    return out


def m_for(n: int, p: int) -> int:
    return math.ceil(2 * (2.5 + 7.7) * math.log(2 * n * p)) + 1  # Lemma 4.4's m


def test_brute_force_agrees() -> None:
    # every pair of the set, one call of the pairwise bound each: the same alpha, the same pairs
    dbs = sign_matrices(3, 2)
    m = m_for(3, 2)
    dmax = set_delta_max(dbs)
    res = distributional_privacy(dbs, m, np.eye(2))
    losses, one_row = [], []
    for i, j in itertools.combinations(range(len(dbs)), 2):
        same = np.array_equal(covariance(dbs[i]), covariance(dbs[j]))
        v = 0.0 if same else truncated_loss_bound(dbs[i], dbs[j], m, np.eye(2), dmax).value
        losses.append(v)
        if int(np.any(dbs[i] != dbs[j], axis=1).sum()) == 1:
            one_row.append(v)
    assert res.pairs == len(dbs) * (len(dbs) - 1) // 2 == len(losses)
    assert res.alpha == pytest.approx(max(losses), rel=1e-12)
    assert res.differential_alpha == pytest.approx(max(one_row), rel=1e-12)
    assert res.neighbour_pairs == len(one_row)
    i, j = res.worst_pair
    assert truncated_loss_bound(dbs[i], dbs[j], m, np.eye(2), dmax).value == pytest.approx(res.alpha)
    assert dmax == max(covariance_distance(a, b) for a, b in itertools.combinations(dbs, 2))


@pytest.mark.parametrize("n", [3, 4, 5])
def test_theorem_2_5_and_row_sign_flips(n: int) -> None:
    dbs = sign_matrices(n, 2)
    m = m_for(n, 2)
    res = distributional_privacy(dbs, m, np.eye(2))
    # Thm 2.5: distributional privacy on S_n implies differential privacy on S_n
    assert res.differential_alpha <= res.alpha
    # with the constraint V = 0 the only one-row neighbours are a row's sign flip (X'X unchanged):
    # n per database, and the release's law is the same (alpha = 0)
    flat = distributional_privacy(dbs, m, np.eye(2), max_distance=0.0)
    assert flat.neighbour_pairs == len(dbs) * n // 2
    assert flat.alpha == 0.0 and flat.differential_alpha == 0.0


def test_sampled_losses_stay_below_alpha() -> None:
    # draws of the truncated release for the worst pair: |log f_1/f_2| (untruncated densities, i.e.
    # without the renormalisation term) never exceeds alpha
    dbs = sign_matrices(4, 2)
    m = m_for(4, 2)
    res = distributional_privacy(dbs, m, np.eye(2))
    x1, x2 = dbs[res.worst_pair[0]], dbs[res.worst_pair[1]]
    rel = CompressedRelease(m, reference=np.eye(2), delta_max=res.delta_max, max_draws=10_000)
    rng = np.random.default_rng(3)
    s1, s2 = covariance(x1), covariance(x2)
    worst = 0.0
    for _ in range(200):
        out = rel.sample(x1, rng)
        s = out.T @ out
        ll1 = -0.5 * np.trace(np.linalg.solve(s1, s)) - 0.5 * m * np.linalg.slogdet(s1)[1]
        ll2 = -0.5 * np.trace(np.linalg.solve(s2, s)) - 0.5 * m * np.linalg.slogdet(s2)[1]
        worst = max(worst, abs(ll1 - ll2))
    assert 0.0 < worst <= res.alpha


@pytest.mark.parametrize(("kw", "exc", "match"), [
    ({"databases": [np.eye(2)]}, ValueError, "at least two"),
    ({"databases": [np.eye(2), np.eye(3)]}, ValueError, "n x p"),
    ({"databases": [np.eye(2), np.full((2, 2), np.nan)]}, ValueError, r"NaN|finite"),
    ({"m": 0}, ValueError, "m"),
    ({"max_distance": -1.0}, ValueError, "max_distance"),
    ({"max_distance": math.nan}, ValueError, "max_distance"),
    ({"delta_max": math.inf}, ValueError, "delta_max"),
])
def test_bad_input(kw: dict[str, Any], exc: type[Exception], match: str) -> None:
    args: dict[str, Any] = {"databases": sign_matrices(3, 2)[:4], "m": 60, "reference": np.eye(2), **kw}
    with pytest.raises(exc, match=match):
        distributional_privacy(**args)


def test_no_pair_within_the_constraint() -> None:
    dbs = [np.array([[1.0, 1.0], [1.0, -1.0], [1.0, 1.0]]), np.array([[1.0, 1.0], [1.0, 1.0], [1.0, -1.0]])]
    # equal covariances: one pair at V = 0; and a tiny constraint with distinct covariances: none
    assert distributional_privacy(dbs, 60, np.eye(2), max_distance=0.0).alpha == 0.0
    other = [dbs[0], np.array([[1.0, -1.0], [1.0, -1.0], [1.0, 1.0]])]
    with pytest.raises(ValueError, match="no two databases"):
        distributional_privacy(other, 60, np.eye(2), max_distance=1e-3)
