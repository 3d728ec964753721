"""The round-off bounds of the PLD's convolutions hold (checked against extended precision and
exact integers), and the error-free splitting makes them small."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import fft as sfft

from accountant._pldgrid import EXACT_BOUND, _fft_conv, _fft_relative_error, _integer_bounds, _Operand


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
    out, rel, l1, _ = _fft_conv(a, b, 2 * n - 1, limit)
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
    out, rel, l1, _ = _fft_conv(a, None, 2 * a.size - 1, 0)
    assert excess(out, exact_convolution(a, a), rel) <= l1


def test_splitting_beats_the_plain_fft_bound() -> None:
    """The floor of issue 14: a plain FFT of a PLD-like law is charged ~1e-13 in l1; with the
    leading slices exact the charge is more than 10^5 times smaller (and still holds)."""
    a, b = pld_like(np.random.default_rng(3), 6000)
    n = 2 * a.size - 1
    nf = sfft.next_fast_len(n, real=True)
    plain = math.sqrt(nf) * _fft_relative_error(nf) * 2 * (
        math.sqrt(float(a @ a)) * float(b.sum()) + float(a.sum()) * math.sqrt(float(b @ b)))
    out, rel, l1, _ = _fft_conv(a, b, n, 0)
    assert l1 < plain * 1e-5
    assert excess(out, exact_convolution(a, b), rel) <= l1


@pytest.mark.parametrize("seed", range(4))
def test_certified_integer_products_are_exact(seed: int) -> None:
    """Where the bound of an integer slice product is below EXACT_BOUND, rounding the FFT product
    gives the exact integers (compared with exact int64 convolution)."""
    rng = np.random.default_rng(seed)
    a, b = pld_like(rng, int(rng.integers(500, 4000)))
    oa, ob = _Operand(a), _Operand(b)
    for beta in (8, 12, 14):
        _, _, _, h0a, h1a = oa.window(beta)
        _, _, _, h0b, h1b = ob.window(beta)
        nfe = sfft.next_fast_len(h0a.size + h0b.size - 1, real=True)
        fa0, fa1, fb0, fb1 = (sfft.rfft(v, nfe) for v in (h0a, h1a, h0b, h1b))
        ints = [v.astype(np.int64) for v in (h0a, h1a, h0b, h1b)]
        exact = (np.convolve(ints[0], ints[2]),
                 np.convolve(ints[0], ints[3]) + np.convolve(ints[1], ints[2]))
        bounds = _integer_bounds((h0a, h1a), (h0b, h1b), nfe)
        for spec, ex, bound in zip((fa0 * fb0, fa0 * fb1 + fa1 * fb0), exact, bounds, strict=False):
            d = sfft.irfft(spec, nfe)[:ex.size]
            assert float(np.abs(d - ex).max()) <= bound  # the bound holds entrywise
            if bound <= EXACT_BOUND:
                assert np.array_equal(np.rint(d).astype(np.int64), ex)


def test_uncertified_products_are_charged(monkeypatch: pytest.MonkeyPatch) -> None:
    """When no slice width gives a certified exact product (forced here by a zero threshold), the
    float products are kept and their worst-case bound is charged, which still covers the error."""
    import accountant._pldgrid as grid

    a, b = pld_like(np.random.default_rng(5), 3000)
    _, _, certified, _ = _fft_conv(a, b, 2 * a.size - 1, 0)
    monkeypatch.setattr(grid, "EXACT_BOUND", 0.0)
    out, rel, l1, _ = _fft_conv(a, b, 2 * a.size - 1, 0)
    assert l1 > 100 * certified
    assert excess(out, exact_convolution(a, b), rel) <= l1


def test_operand_slices_are_exact() -> None:
    a, _ = pld_like(np.random.default_rng(11), 3000)
    op = _Operand(a)
    lo, hi, ulp0, h0, h1 = op.window(13)
    t2 = op.t2(13)
    rebuilt = t2.astype(np.longdouble)
    rebuilt[lo:hi] += h0 * np.longdouble(ulp0) + h1 * np.longdouble(ulp0 * 2.0**-13)
    assert np.array_equal(rebuilt, a.astype(np.longdouble))
    assert (h0 < 2**13).all() and (h1 < 2**13).all() and (t2 < ulp0 * 2.0**-13).all()


def test_plain_fft_within_budget() -> None:
    """With a budget above its bound, one plain FFT is used (no relative part, a larger l1 charge
    than the split one) and its bound still holds; below it, the split is used."""
    a, b = pld_like(np.random.default_rng(9), 2500)
    n = 2 * a.size - 1
    l1_s = _fft_conv(a, b, n, 0)[2]
    out, rel, l1, _ = _fft_conv(a, b, n, 0, budget=1.0)
    assert rel == 0.0 and l1 > 100 * l1_s
    assert excess(out, exact_convolution(a, b), rel) <= l1
    assert _fft_conv(a, b, n, 0, budget=l1 / 2)[2] == l1_s
