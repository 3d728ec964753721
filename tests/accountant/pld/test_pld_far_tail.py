"""The square of a law with a far tail (``far_tail_square``): within its round-off bound of M(a * a),
the products of two far-tail entries moved by less than 2 FAR_BLOCK positions, up (pessimistic) or down
(optimistic); a pessimistic law's tail sums then lie at or above the exact square's and an optimistic
law's profile at or below, and the composed laws keep bracketing the truth (checked against long-double
direct convolution and the closed form of a composed Gaussian)."""

from __future__ import annotations

import numpy as np
import pytest

from accountant.pld.grid.convolve import FAR_BLOCK, FAR_LEVEL, FAR_MIN, far_tail_square, fft_conv


def with_far_tail(rng: np.random.Generator, bulk: int, far: int) -> np.ndarray:
    """A bulk of ``bulk`` entries (a Gaussian-like pile with noise) followed by a far tail of ``far``
    entries far below FAR_LEVEL of the top, decaying over 20 orders of magnitude, as the single
    step of a Poisson-subsampled Gaussian on a fine grid."""
    x = np.arange(bulk)
    head = np.exp(-0.5 * ((x - bulk / 3) / (bulk / 12)) ** 2) * rng.uniform(0.5, 1.5, bulk)
    head = np.where(head >= 1e-6, head, 1e-6)  # the bulk ends above FAR_LEVEL of its top
    tail = np.exp(-np.linspace(0.0, 46.0, far)) * 1e-13 * rng.uniform(0.5, 1.5, far)
    a = np.concatenate([head, tail])
    return np.asarray(a / a.sum(), dtype=np.float64)


def moved_square(a: np.ndarray, up: bool) -> np.ndarray:
    """M(a * a) in long double by direct sums: the far tail found as ``far_tail_square`` finds it,
    each entry moved to its block's top (up) or bottom, the other products in place."""
    ld = a.astype(np.longdouble)
    p = int(np.flatnonzero(a >= float(a.max()) * FAR_LEVEL)[-1]) + 1
    n = 2 * a.size - 1
    pos = np.arange(a.size)
    far = a.size - p
    k = -(-far // FAR_BLOCK)
    pad = k * FAR_BLOCK - far
    if up:  # blocks counted from the last position, each entry moved to its block's top
        moved = (a.size - 1) - FAR_BLOCK * ((a.size - 1 - pos) // FAR_BLOCK)
    else:  # blocks counted from p, each entry moved to its block's bottom
        moved = p + FAR_BLOCK * ((pos - p) // FAR_BLOCK)
    assert pad >= 0
    out = np.zeros(n, dtype=np.longdouble)
    head, tail = ld[:p], ld[p:]
    out[:2 * p - 1] += np.convolve(head, head)
    out[p:p + a.size - 1] += 2 * np.convolve(head, tail)
    for i in range(p, a.size):  # the far tail's pairs, moved
        np.add.at(out, moved[i] + moved[p:], ld[i] * tail)
    return out


@pytest.mark.parametrize("budget", [0.0, 1.0])  # pieces split (exact slices) or by plain FFT
@pytest.mark.parametrize("up", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_far_tail_square_within_its_bound(seed: int, up: bool, budget: float) -> None:
    rng = np.random.default_rng(seed)
    a = with_far_tail(rng, int(rng.integers(300, 800)), FAR_MIN + int(rng.integers(0, 200)))
    n = 2 * a.size - 1
    got = far_tail_square(a, n, 0, budget, False, 3, up)
    assert got is not None
    out, rel, l1, _ = got
    ref = moved_square(a, up)
    err = np.maximum(np.abs(out.astype(np.longdouble) - ref) - rel * ref, 0)
    assert float(err.sum()) <= l1
    if budget == 0.0:  # fft_conv takes this path for squares with a far tail (the same answer)
        same = fft_conv(a, None, n, 0, 0.0, False, 3, 1 if up else -1)
        assert np.array_equal(same[0], out)


@pytest.mark.parametrize("seed", range(2))
def test_moves_go_one_way(seed: int) -> None:
    """Up: every tail sum of M(a * a) is at least the exact square's (fact 2: delta can only
    rise); down: at most; the total mass is the same; nothing leaves [0, n)."""
    rng = np.random.default_rng(10 + seed)
    a = with_far_tail(rng, 400, FAR_MIN + 77)
    exact = np.convolve(a.astype(np.longdouble), a.astype(np.longdouble))
    tails = np.cumsum(exact[::-1])[::-1]
    for up in (True, False):
        moved = moved_square(a, up)
        assert moved.size == exact.size
        moved_tails = np.cumsum(moved[::-1])[::-1]
        scale = 1e-15 * float(tails[0])
        assert abs(float(moved_tails[0] - tails[0])) <= scale
        if up:
            assert np.all(moved_tails - tails >= -scale)
        else:
            assert np.all(moved_tails - tails <= scale)
        assert float(np.max(np.abs(moved_tails - tails))) > 0.0  # something did move


def test_no_far_tail_no_split() -> None:
    """A law without a far tail (or a short one) is squared as before."""
    rng = np.random.default_rng(5)
    a = with_far_tail(rng, 3000, 100)
    assert far_tail_square(a, 2 * a.size - 1, 0, 0.0, False, 3, True) is None
    b = rng.uniform(0.5, 1.5, 9000)
    assert far_tail_square(b, 2 * b.size - 1, 0, 0.0, False, 3, True) is None


def test_dpsgd_bracket_holds_the_truth_with_far_squares(monkeypatch: pytest.MonkeyPatch) -> None:
    """DP-SGD q = 0.01, sigma = 1, T = 1000 at delta 1e-5 (the accounting benchmark's W3, truth
    1.8282367 from an independent high-precision computation, to 7 decimals): its laws square
    far tails this way, and both ends still hold the truth; without the far split (FAR_SHARE
    above 1) the bracket is within 1e-7 of it."""
    from accountant import GDP, compose, subsample
    from accountant.pld.grid import convolve

    calls: list[bool] = []
    inner = convolve.far_tail_square

    def spy(*args: object) -> object:
        out = inner(*args)  # type: ignore[arg-type]
        calls.append(out is not None)
        return out

    def bracket() -> tuple[float, float]:
        pld = compose([subsample(GDP(1.0), rate=0.01, scheme="poisson")] * 1000)
        return pld.epsilon_bracket(1e-5)

    truth, resolution = 1.8282367, 5e-8
    monkeypatch.setattr(convolve, "far_tail_square", spy)
    lo, up = bracket()
    assert any(calls)
    assert lo <= truth + resolution and truth - resolution <= up
    monkeypatch.setattr(convolve, "FAR_SHARE", 2.0)
    lo0, up0 = bracket()
    assert abs(lo - lo0) <= 1e-7 and abs(up - up0) <= 1e-7
