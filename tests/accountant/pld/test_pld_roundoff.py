"""The round-off bounds of the PLD's convolutions hold (checked against extended precision and
exact integers), and the error-free splitting makes them small."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accountant.pld.grid.convolve import (
    EXACT_BOUND,
    FFTOperand,
    fft_conv,
    fft_relative_error,
    integer_bounds,
    next_fast_len,
)


def exact_convolution(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a * b in long double (64-bit mantissa on x86-64: ~2000x more precise than double)."""
    return np.convolve(a.astype(np.longdouble), b.astype(np.longdouble))


def pld_like(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Probability vectors with a bulk and tails spanning many orders of magnitude, as in a PLD."""
    x = np.arange(n)
    a = np.exp(-0.5 * ((x - n / 2) / (n / 10)) ** 2) * rng.uniform(0.5, 1.5, n)
    b = np.exp(-np.abs(x - n / 3) / (n / 20)) * rng.uniform(0.5, 1.5, n)
    return a / a.sum(), b / b.sum()


def excess(out: np.ndarray, exact: np.ndarray, rel: float) -> float:
    """l1 norm of the error left after the relative part of the bound."""
    return float(np.maximum(np.abs(out.astype(np.longdouble) - exact) - rel * exact, 0).sum())


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("direct", [True, False])
def test_convolution_error_is_within_its_bound(seed: int, direct: bool) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 3000))
    a, b = pld_like(rng, n)
    limit = 10**9 if direct else 0
    out, rel, l1, _ = fft_conv(a, b, 2 * n - 1, limit)
    assert excess(out, exact_convolution(a, b), rel) <= l1
    if direct:
        assert l1 == 0.0 and rel > 0.0  # direct sums of non-negative terms err only relatively
    else:
        assert 0.0 < rel < 1e-14 and l1 > 0.0


@pytest.mark.parametrize("seed", range(3))
def test_self_convolution_bound(seed: int) -> None:
    rng = np.random.default_rng(7 + seed)
    a = rng.uniform(0, 1, 4000) ** 8
    a /= a.sum()
    out, rel, l1, _ = fft_conv(a, None, 2 * a.size - 1, 0)
    assert excess(out, exact_convolution(a, a), rel) <= l1


def test_splitting_beats_the_plain_fft_bound() -> None:
    """The floor of issue 14: a plain FFT of a PLD-like law is charged ~1e-13 in l1; with the
    leading slices exact the charge is more than 10^5 times smaller (and still holds)."""
    a, b = pld_like(np.random.default_rng(3), 6000)
    n = 2 * a.size - 1
    nf = next_fast_len(n)
    plain = math.sqrt(nf) * fft_relative_error(nf) * 2 * (
        math.sqrt(float(a @ a)) * float(b.sum()) + float(a.sum()) * math.sqrt(float(b @ b)))
    out, rel, l1, _ = fft_conv(a, b, n, 0)
    assert l1 < plain * 1e-5
    assert excess(out, exact_convolution(a, b), rel) <= l1


@pytest.mark.parametrize("slices", [2, 3, 4])
@pytest.mark.parametrize("seed", range(4))
def test_certified_integer_products_are_exact(seed: int, slices: int) -> None:
    """Where the bound of a diagonal of integer slice products is below EXACT_BOUND, rounding the
    FFT product gives the exact integers (compared with exact int64 convolution)."""
    rng = np.random.default_rng(seed)
    a, b = pld_like(rng, int(rng.integers(500, 4000)))
    oa, ob = FFTOperand(a), FFTOperand(b)
    for beta in (8, 12, 14):
        ha, hb = oa.window(beta, slices)[3], ob.window(beta, slices)[3]
        nfe = next_fast_len(ha[0].size + hb[0].size - 1)
        fa, fb = [np.fft.rfft(v, nfe) for v in ha], [np.fft.rfft(v, nfe) for v in hb]
        ia, ib = [v.astype(np.int64) for v in ha], [v.astype(np.int64) for v in hb]
        bounds = integer_bounds(oa.norms(beta, slices), ob.norms(beta, slices), nfe)
        assert len(bounds) == 2 * slices - 1
        for d, bound in enumerate(bounds):
            pairs = [(i, d - i) for i in range(slices) if 0 <= d - i < slices]
            exact = sum(np.convolve(ia[i], ib[j]) for i, j in pairs)
            assert isinstance(exact, np.ndarray)  # pairs is never empty
            spec = sum(fa[i] * fb[j] for i, j in pairs)
            v = np.fft.irfft(spec, nfe)[:exact.size]
            assert float(np.abs(v - exact).max()) <= bound  # the bound holds entrywise
            if bound <= EXACT_BOUND:
                assert np.array_equal(np.rint(v).astype(np.int64), exact)


@pytest.mark.parametrize("seed", range(3))
def test_three_slices_when_refinement_is_asked(seed: int) -> None:
    """With a remainder budget below the two-slice bound, three slices are taken: the charge is
    much smaller (2^-beta again) and still covers the error; without a budget, two slices."""
    a, b = pld_like(np.random.default_rng(20 + seed), 3000)
    n = 2 * a.size - 1
    two = fft_conv(a, b, n, 0)
    three = fft_conv(a, b, n, 0, budget=two[2] * 1e-6, refine=True)
    assert three[2] < two[2] * 1e-3
    for out, rel, l1, _ in (two, three):
        assert excess(out, exact_convolution(a, b), rel) <= l1
    square = fft_conv(a, None, n, 0, budget=two[2] * 1e-6, refine=True)
    assert excess(square[0], exact_convolution(a, a), square[1]) <= square[2]


def test_uncertified_products_are_charged(monkeypatch: pytest.MonkeyPatch) -> None:
    """When no slice width gives a certified exact product (forced here by a zero threshold), the
    float products are kept and their worst-case bound is charged, which still covers the error."""
    import accountant.pld.grid.convolve as grid

    a, b = pld_like(np.random.default_rng(5), 3000)
    _, _, certified, _ = fft_conv(a, b, 2 * a.size - 1, 0)
    monkeypatch.setattr(grid, "EXACT_BOUND", 0.0)
    out, rel, l1, _ = fft_conv(a, b, 2 * a.size - 1, 0)
    assert l1 > 100 * certified
    assert excess(out, exact_convolution(a, b), rel) <= l1


def test_four_slices_when_allowed() -> None:
    """With max_slices = 4 and a budget below the three-slice bound, a fourth slice is taken: the
    charge shrinks again and still covers the error."""
    a, b = pld_like(np.random.default_rng(31), 3000)
    n = 2 * a.size - 1
    three = fft_conv(a, b, n, 0, budget=1e-300, refine=True)
    four = fft_conv(a, b, n, 0, budget=1e-300, refine=True, max_slices=4)
    assert four[2] < three[2] * 1e-3
    assert excess(four[0], exact_convolution(a, b), four[1]) <= four[2]


@pytest.mark.parametrize("slices", [2, 3, 4])
@pytest.mark.parametrize("power", [1, 6])
def test_operand_slices_are_exact(slices: int, power: int) -> None:
    a, _ = pld_like(np.random.default_rng(11), 3000)
    a = a ** power  # power 6: tails below ulp_{S-1}, a window shorter than the array
    op = FFTOperand(a)
    lo, hi, ulp0, hs = op.window(13, slices)
    t = op.rest(13, slices)
    rebuilt = t.astype(np.longdouble)
    for k, hk in enumerate(hs):
        rebuilt[lo:hi] += hk * np.longdouble(ulp0 * 2.0 ** (-13 * k))
        assert (hk < 2**13).all()
    assert np.array_equal(rebuilt, a.astype(np.longdouble))
    assert (t < ulp0 * 2.0 ** (-13 * (slices - 1))).all()
    # the window runs from the first to the last entry at least ulp_{S-1}
    last = ulp0 * 2.0 ** (-13 * (slices - 1))
    assert a[lo] >= last and a[hi - 1] >= last
    assert (a[:lo] < last).all() and (a[hi:] < last).all()


def test_plain_fft_within_budget() -> None:
    """With a budget above its bound, one plain FFT is used (no relative part, a larger l1 charge
    than the split one) and its bound still holds; below it, the split is used."""
    a, b = pld_like(np.random.default_rng(9), 2500)
    n = 2 * a.size - 1
    l1_s = fft_conv(a, b, n, 0)[2]
    out, rel, l1, _ = fft_conv(a, b, n, 0, budget=1.0)
    assert rel == 0.0 and l1 > 100 * l1_s
    assert excess(out, exact_convolution(a, b), rel) <= l1
    assert fft_conv(a, b, n, 0, budget=l1 / 2)[2] == l1_s


def test_next_fast_len_is_the_least_5_smooth_length() -> None:
    """``next_fast_len(n)`` is the least 2^i 3^j 5^k >= n (checked by brute force up to 3000,
    and against scipy.fft's own ``next_fast_len(n, real=True)`` on random sizes up to 10^9)."""
    from scipy import fft as sfft

    def smooth(m: int) -> bool:
        for p in (2, 3, 5):
            while m % p == 0:
                m //= p
        return m == 1

    best = 1
    for n in range(3000, 0, -1):  # from the top: the least smooth m >= n
        if smooth(n):
            best = n
        assert next_fast_len(n) == best
    rng = np.random.default_rng(0)
    for n in rng.integers(1, 10**9, 300):
        assert next_fast_len(int(n)) == sfft.next_fast_len(int(n), real=True)
