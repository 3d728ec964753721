"""Convolution of grid laws: FFT products with a certified round-off bound, split into slices where
the bound would exceed its budget, and direct convolution of small laws; a square whose far tail is
most of its length reads the tail's products with itself on blocks, moved up (pessimistic) or down
(optimistic) (``far_tail_square``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

from accountant.core.types import MACHINE_EPSILON, UNIT_ROUNDOFF, FloatArray
from accountant.pld.grid.coarsen import coarsen, truncate
from accountant.pld.grid.law import REFINE_MAX_POINTS, TAIL_MASS, GridLaw, sum_rounding, tail_l1

#: Convolutions with fewer than this many products are done directly rather than by FFT. Direct
#: sums of non-negative terms err only relatively, and pessimistic laws carry relative errors
#: through every level; optimistic laws fold them into the absolute slack at each coarsening, where
#: the FFT's (smaller, absolute) error serves them better.
DIRECT_CONV = {True: 20_000_000, False: 200_000}


@lru_cache(maxsize=256)
def next_fast_len(n: int) -> int:
    """The least 5-smooth integer (2^i 3^j 5^k) at least n >= 1: a length pocketfft transforms by
    its radix-2, 3, 4 and 5 passes alone (no Bluestein step, whose error ``fft_relative_error``
    does not cover), and within a factor 1.25 or so of n."""
    if n <= 1:
        return 1
    best = 1 << (n - 1).bit_length()  # a power of 2 at least n
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            # the least p35 2^i at least n
            m = p35 << max(0, (-(-n // p35) - 1).bit_length())
            best = min(best, m)
            p35 *= 3
        p5 *= 5
    return best


def fft_relative_error(nf: int) -> float:
    """3 eps_F + u for transforms of length nf [@higham2002accuracy, Thm 24.2, with twiddle error u;
    pocketfft's mixed radices are charged as if every level were a radix-2 level, log2 nf]. The
    transforms are numpy's (``numpy.fft``, pocketfft's C++ implementation since numpy 2.0, as
    scipy.fft's) at 5-smooth lengths (``next_fast_len``): Cooley-Tukey passes of radix 2, 3, 4
    and 5 with twiddle factors computed to within about u, the model of the bound."""
    u = UNIT_ROUNDOFF
    eta = u + (4 * u / (1 - 4 * u)) * (math.sqrt(2.0) + u)
    levels = math.ceil(math.log2(nf))
    eps_f = levels * eta / (1.0 - levels * eta)
    return 3.0 * eps_f + u


def _norms(x: FloatArray) -> tuple[float, float]:
    """(|x|_2, |x|_1) of a non-negative array, without BLAS (whose threads stall on a busy
    machine): sums of n non-negative terms (the squares by ``einsum``, without a temporary), each
    within n u relative of its value (recursive summation), rounded up by a relative margin at
    least twice that, max(1e-9, 2 n MACHINE_EPSILON) (1e-9 up to n = 2^21)."""
    up = 1.0 + max(1e-9, 2.0 * x.size * MACHINE_EPSILON)
    return math.sqrt(float(np.einsum("i,i->", x, x))) * up, float(np.sum(x)) * up


def _fft_sum_bound(terms: list[tuple[FloatArray, FloatArray]], nf: int) -> float:
    """Worst-case bound on the l2 norm of the error of ``_fft_sum(terms)`` at transform length nf.

    Each transform of length N errs by eps_F relative in l2 [@higham2002accuracy, Thm 24.2]; as
    |F x|_inf <= |x|_1 for non-negative x and |F^-1 v|_2 = |v|_2 / sqrt N, a product x * y errs by
    at most (3 eps_F + u)(|x|_2 |y|_1 + |x|_1 |y|_2) in l2. The complex products and the sum of K
    terms in the frequency domain add (K + 4) u to the factor, and second-order terms a 1% margin.
    """
    weight = 0.0
    for x, y in terms:
        (x2, x1) = _norms(x)
        (y2, y1) = (x2, x1) if y is x else _norms(y)
        weight += x2 * y1 + x1 * y2
    factor = fft_relative_error(nf) + (len(terms) + 4) * UNIT_ROUNDOFF
    return 1.01 * factor * weight


def _fft_sum(terms: list[tuple[FloatArray, FloatArray]], n: int) -> FloatArray:
    """sum_k x_k * y_k for non-negative arrays by one FFT product sum (error: ``_fft_sum_bound``)."""
    nf = next_fast_len(n)
    acc = np.zeros(nf // 2 + 1, dtype=np.complex128)
    for x, y in terms:
        acc += np.fft.rfft(x, nf) * np.fft.rfft(y, nf)
    out: FloatArray = np.fft.irfft(acc, nf)[:n]
    return out


#: the bound of an integer product must stay below this for rounding to recover it exactly
EXACT_BOUND = 0.25


#: widest slice tried (slices of 26 bits keep their integer sums exact in doubles)
MAX_SLICE_BITS = 26


class FFTOperand:
    """One operand x of ``_split_conv``, sliced: x = sum_{k < S} ulp_k H_k + t with H_k integers
    in [0, 2^beta) on the window [lo, hi) where x >= ulp_{S-1}, ulp_k = top 2^{-(k+1) beta} (top a
    power of 2 at least max x), and 0 <= t < ulp_{S-1} everywhere. Every step is exact in
    floating point: scalings by powers of 2, floor, and the remainders r - floor(r / ulp) ulp.
    The last slicing and the slices' norms of every slicing are kept (``_choose_beta`` tries a
    few widths, then ``_split_conv`` reads the chosen one three times)."""

    def __init__(self, x: FloatArray) -> None:
        self.x: FloatArray = x
        self.top = math.ldexp(1.0, math.frexp(float(x.max()))[1])
        self._last: tuple[tuple[int, int], tuple[int, int, float, list[FloatArray]],
                          FloatArray] | None = None
        self._norms: dict[tuple[int, int], list[tuple[float, float]]] = {}

    def _slice(self, beta: int, slices: int) -> tuple[tuple[int, int, float, list[FloatArray]],
                                                       FloatArray]:
        """The window (``window``) and the remainder on it."""
        key = (beta, slices)
        if self._last is not None and self._last[0] == key:
            return self._last[1], self._last[2]
        ulp0 = math.ldexp(self.top, -beta)
        above = self.x >= math.ldexp(self.top, -slices * beta)  # true at max x >= top / 2
        lo, hi = int(np.argmax(above)), self.x.size - int(np.argmax(above[::-1]))
        r = self.x[lo:hi]
        hs = []
        for k in range(slices):
            ulp = math.ldexp(ulp0, -k * beta)
            hk = np.floor(r / ulp)
            hs.append(hk)
            r = r - hk * ulp
        self._last = (key, (lo, hi, ulp0, hs), r)
        return self._last[1], r

    def window(self, beta: int, slices: int) -> tuple[int, int, float, list[FloatArray]]:
        """(lo, hi, ulp0, [H_0, ..., H_{S-1}]) for S = ``slices`` slices of beta bits; [lo, hi)
        runs from the first to the last entry at least ulp_{S-1}."""
        return self._slice(beta, slices)[0]

    def norms(self, beta: int, slices: int) -> list[tuple[float, float]]:
        """``_norms`` of the slices H_k."""
        key = (beta, slices)
        if key not in self._norms:
            self._norms[key] = [_norms(hk) for hk in self.window(beta, slices)[3]]
        return self._norms[key]

    def rest(self, beta: int, slices: int) -> FloatArray:
        """The remainder t (full length)."""
        (lo, hi, _, _), r = self._slice(beta, slices)
        t: FloatArray = self.x.copy()
        t[lo:hi] = r
        return t


def integer_bounds(na: list[tuple[float, float]], nb: list[tuple[float, float]],
                    nfe: int) -> list[float]:
    """Worst-case l2 (hence entrywise) error bounds of the FFT products of the integer slices, by
    diagonal d: sum_{i + j = d} H_i * H_j' (``_fft_sum``'s factor, with at most S terms, and at
    least the 3 of the original two-slice bound), from the slices' norms ``na``, ``nb``
    (``FFTOperand.norms``)."""
    terms = max(3, min(len(na), len(nb)))
    factor = 1.01 * (fft_relative_error(nfe) + (terms + 4) * UNIT_ROUNDOFF)
    out = [0.0] * (len(na) + len(nb) - 1)
    for i, (a2, a1) in enumerate(na):
        for j, (b2, b1) in enumerate(nb):
            out[i + j] += factor * (a2 * b1 + a1 * b2)
    return out


def _choose_beta(oa: FFTOperand, ob: FFTOperand | None, slices: int) -> int:
    """The widest slice (bits) for which the diagonals d < S of the integer products are certified
    exact (error bound <= EXACT_BOUND), found by a few trials."""
    tried: dict[int, float] = {}
    beta = 16
    while beta not in tried:
        wa = oa.window(beta, slices)
        wb = wa if ob is None else ob.window(beta, slices)
        nfe = next_fast_len(wa[3][0].size + wb[3][0].size - 1)
        na = oa.norms(beta, slices)
        bound = max(integer_bounds(na, na if ob is None else ob.norms(beta, slices), nfe)[:slices])
        tried[beta] = bound
        if bound == 0.0:
            step = 4
        elif EXACT_BOUND <= 0.0:
            step = -MAX_SLICE_BITS
        else:
            step = math.floor(math.log2(EXACT_BOUND / bound) / 2)
        beta = min(MAX_SLICE_BITS, max(4, beta + step))
    good = [k for k, v in tried.items() if v <= EXACT_BOUND]
    return max(good) if good else min(tried)


def _remainder_terms(a: FloatArray, b: FloatArray | None, oa: FFTOperand, ob: FFTOperand,
                     beta: int, slices: int) -> list[tuple[FloatArray, FloatArray]]:
    """The full-length products left after the integer slices: with h = a - t (the slices' sum),
    a * b - h * h' = h t' + t b; for a * a, t (2a - t)."""
    ta = oa.rest(beta, slices)
    if b is None:
        # h t + t a = t (2a - t); 2a - t = a + h rounds relatively (u)
        return [(ta, a + (a - ta))]
    return [(a - ta, ob.rest(beta, slices)), (ta, b)]  # a - t = h: exact


def _split_conv(a: FloatArray, b: FloatArray | None, n: int, refine_above: float | None = None,
                max_slices: int = 3) -> tuple[FloatArray, float, float, float]:
    """a * b of non-negative arrays with error-free splitting [@ozaki2012error]: the leading S
    slices of each operand are integer vectors whose products the FFT computes with a certified
    error below 1/4, so rounding returns them exactly; only products of small remainders carry
    round-off, charged by ``_fft_sum``'s bound.

    With h_k = ulp_k H_k and a = sum_k h_k + t (likewise b): a * b = sum_{i, j} h_i h_j' [by
    diagonal d = i + j, each a short FFT, exact for d < S] + h t' + t b [full length]. As
    t < 2^-S beta of the largest entry, the error is about 2^-S beta times that of a plain FFT.
    The slice width beta is the largest for which the diagonals d < S are certified exact.

    S = 2, and one more (up to ``max_slices``) while the remainder products' bound exceeds
    ``refine_above``: their error is then 2^-beta smaller again, for 3 more transforms of the
    windows per slice (a square: 8 with two slices, 11 with three, 14 with four).
    """
    oa = FFTOperand(a)
    ob = None if b is None else FFTOperand(b)
    slices = 2
    beta = _choose_beta(oa, ob, slices)
    terms = _remainder_terms(a, b, oa, oa if ob is None else ob, beta, slices)
    nf = next_fast_len(n)
    err_l2 = _fft_sum_bound(terms, nf)
    while (refine_above is not None and math.sqrt(nf) * err_l2 > refine_above
           and slices < max_slices):
        del terms
        slices += 1
        beta = _choose_beta(oa, ob, slices)
        terms = _remainder_terms(a, b, oa, oa if ob is None else ob, beta, slices)
        err_l2 = _fft_sum_bound(terms, nf)
    lo_a, _, ulp0a, ha = oa.window(beta, slices)
    lo_b, _, ulp0b, hb = (lo_a, 0, ulp0a, ha) if ob is None else ob.window(beta, slices)
    # the integer products on the windows: diagonals of units ulp0 ulp0' 2^{-d beta}
    nw = ha[0].size + hb[0].size - 1
    nfe = next_fast_len(nw)
    na = oa.norms(beta, slices)
    bounds = integer_bounds(na, na if ob is None else ob.norms(beta, slices), nfe)
    fa = [np.fft.rfft(x, nfe) for x in ha]
    fb = fa if ob is None else [np.fft.rfft(x, nfe) for x in hb]
    del ha, hb, oa, ob  # the slices (kept by the operands too)
    unit = ulp0a * ulp0b
    l1 = 0.0
    exact = np.zeros(nw)
    for d, bnd in enumerate(bounds):  # one spectrum at a time (memory)
        pairs = range(max(0, d - slices + 1), min(d, slices - 1) + 1)
        spec = fa[pairs[0]] * fb[d - pairs[0]]
        for i in pairs[1:]:
            spec += fa[i] * fb[d - i]
        v = np.fft.irfft(spec, nfe)[:nw]
        del spec
        r = np.rint(v)
        u_d = math.ldexp(unit, -d * beta)
        if bnd <= EXACT_BOUND and float(np.max(np.abs(v - r))) <= EXACT_BOUND:
            exact += np.maximum(r, 0.0) * u_d  # exact integers times a power of 2
        else:  # not certified exact: keep the float values and charge the bound (l1 <= sqrt N l2)
            exact += v * u_d
            l1 += math.sqrt(nfe) * bnd * u_d
    del fa, fb
    # relative: the diagonals' sum (2 S - 2 roundings), the final addition, and 2a - t
    rel, rem_l1, noise = 2.0 * slices * MACHINE_EPSILON, math.sqrt(nf) * err_l2, err_l2 / math.sqrt(nf)
    out = _fft_sum(terms, n)
    del terms
    out[lo_a + lo_b:lo_a + lo_b + nw] += exact
    return out, rel, l1 + rem_l1, noise


#: A square's far tail (``far_tail_square``) starts after its last entry of at least FAR_LEVEL times
#: its largest, and is split off only where it holds at least FAR_SHARE of the entries (and at
#: least FAR_MIN of them): there its products with itself are read on blocks of FAR_BLOCK positions.
FAR_LEVEL = 2.0 ** -30
FAR_SHARE = 0.5
FAR_MIN = 4096
FAR_BLOCK = 16


def far_tail_square(a: FloatArray, n: int, direct_limit: int, budget: float, refine: bool,
                    max_slices: int, up: bool) -> tuple[FloatArray, float, float, float] | None:
    """The square of a non-negative array a with a far tail (``FAR_LEVEL``), or None where it has
    none: with A1 = a before position P (the far tail's start) and A2 = a from P on,
    a * a = A1 * A1 + 2 A1 * A2 + A2 * A2, each product by ``fft_conv`` (A1 * A1 and A1 * A2 are
    as long as the bulk and the whole array, not twice the whole: the FFTs are about half as long),
    and A2 * A2 read on blocks of FAR_BLOCK positions: each entry of A2 is moved to the top of
    its block (``up``: blocks counted from the last position) or to its bottom (blocks counted
    from P), so every product of two far-tail entries moves up (down) by less than 2 FAR_BLOCK
    positions, and A2 * A2 is the square of the block sums, placed at the blocks' places.

    So this is M(a * a), M a move of the products of pairs of far-tail positions: up, for a
    pessimistic law, whose exact law then becomes M(A * A) for the exact A, which dominates A * A
    (``accountant.pld.grid``, fact 2), with the same error algebra (``convolve``): M moves each
    pair by a map non-decreasing in each position, so the positions whose moved sum is at least
    l form, for each position i of one factor, a tail set of the other's, whose start does not
    increase with i, and the tail-relative and cross-term bounds hold as for A * A. Down, for an
    optimistic law: its profile only falls (fact 2; its total mass is kept), which keeps its
    one-sided bounds (fact 4). The positions stay within [0, n): the blocks' tops are at most
    the last position, their bottoms at least P. Errors: |out - M(a * a)| <= rel M(a * a) + e,
    |e|_1 <= l1, with the pieces' rel (the block sums, non-negative, within ``sum_rounding`` of
    theirs, add twice it), their l1 (twice A1 * A2's) and the two additions' roundings (u of
    each sum: 2 u relative, and 2 u of the pieces' l1). The budget is split: a quarter to each
    of A1 * A1, A2 * A2 and each of the two A1 * A2."""
    size = a.size
    big = np.flatnonzero(a >= float(a.max()) * FAR_LEVEL)
    p = int(big[-1]) + 1 if big.size else 0
    far = size - p
    if p == 0 or far < FAR_MIN or far < FAR_SHARE * size:
        return None
    a1, a2 = a[:p], a[p:]
    share = 0.25 * budget
    o1, r1, e1, n1 = fft_conv(a1, None, 2 * p - 1, direct_limit, share, refine, max_slices)
    o12, r12, e12, n12 = fft_conv(a1, a2, size - 1, direct_limit, share, refine, max_slices)
    k = -(-far // FAR_BLOCK)
    pad = np.zeros(k * FAR_BLOCK - far)
    blocks = (np.concatenate([pad, a2]) if up else np.concatenate([a2, pad])).reshape(k, FAR_BLOCK)
    sums = blocks.sum(axis=1)
    o22, r22, e22, n22 = fft_conv(sums, None, 2 * k - 1, direct_limit, share, refine, max_slices)
    # block j's place: P - pad + (j + 1) FAR_BLOCK - 1 (its top) or P + j FAR_BLOCK (its bottom)
    base = p - pad.size + FAR_BLOCK - 1 if up else p
    out = np.zeros(n)
    out[:2 * p - 1] = o1
    out[p:p + size - 1] += 2.0 * o12
    out[2 * base:2 * base + FAR_BLOCK * (2 * k - 2) + 1:FAR_BLOCK] += o22
    rho = sum_rounding(FAR_BLOCK)
    rel = max(r1, r12, r22 + (2.0 * rho + rho * rho) * (1.0 + r22)) + 2.0 * UNIT_ROUNDOFF
    l1 = (e1 + 2.0 * e12 + e22) * (1.0 + 2.0 * UNIT_ROUNDOFF)
    return out, rel, l1, n1 + 2.0 * n12 + n22


def fft_conv(a: FloatArray, b: FloatArray | None, n: int, direct_limit: int,
              budget: float = 0.0, refine: bool = False,
              max_slices: int = 3, far: int = 0) -> tuple[FloatArray, float, float, float]:
    """Linear convolution a * b (a * a when b is None) of non-negative arrays, with worst-case
    round-off bounds ``(out, rel, l1, typical)``: |out - a * b| <= rel (a * b) + e with |e|_1 <= l1;
    ``typical`` is the root-mean-square size of e's entries (|e|_2 / sqrt N), a noise level that
    only guides where tails are cut.

    Direct summation of m non-negative products errs by at most gamma_m = m u / (1 - m u) relative
    per entry [@higham2002accuracy, Sec. 3.1]: ``rel`` = gamma_m, no absolute part. Larger products
    go by one plain FFT when its worst-case l1 bound is within ``budget``, else by FFT with
    error-free splitting (``_split_conv``; ``refine``: its remainder split again when above the
    budget, which pessimistic laws use: their round-off is otherwise the floor in the tails).
    ``far`` (squares only): +1 (-1) returns ``far_tail_square``'s M(a * a), its far tail's
    products moved up (down), where a has a far tail and the plain FFT is above the budget.
    """
    bb = a if b is None else b
    m = min(a.size, bb.size)
    if not (a.any() and bb.any()):
        return np.zeros(n), 0.0, 0.0, 0.0
    if a.size * bb.size <= direct_limit:
        return np.convolve(a, bb), m * MACHINE_EPSILON / (1.0 - m * MACHINE_EPSILON), 0.0, 0.0
    if budget > 0.0:
        nf = next_fast_len(n)
        err_l2 = _fft_sum_bound([(a, bb)], nf)
        if math.sqrt(nf) * err_l2 <= budget:
            return _fft_sum([(a, bb)], n), 0.0, math.sqrt(nf) * err_l2, err_l2 / math.sqrt(nf)
    if far and b is None:
        split = far_tail_square(a, n, direct_limit, budget, refine, max_slices, far > 0)
        if split is not None:
            return split
    return _split_conv(a, b, n, budget if refine and n <= REFINE_MAX_POINTS else None, max_slices)


def convolve(a: GridLaw, b: GridLaw, tail: float = TAIL_MASS, budget: float = 0.0,
             max_slices: int = 3) -> GridLaw:
    """Law of the sum of independent losses (composition), directly when small, else by FFT (plain
    when its round-off bound is within ``budget``, else with error-free splitting: ``fft_conv``;
    a square with a far tail: ``far_tail_square``, whose moved products stand for a law above the
    exact square (pessimistic) or below it (optimistic), the algebra below unchanged).
    Round-off enters as a relative bound (``rel``) and a worst-case bound on the l1 error added to
    the slack. Negative values are clipped (which moves each towards the true non-negative value).
    """
    if a.h != b.h or a.pessimistic != b.pessimistic:
        raise ValueError("convolve needs laws on the same grid and of the same kind")
    ma, mb = a.masses, b.masses
    n = ma.size + mb.size - 1
    same = a is b
    # a remainder above its budget is split again for pessimistic laws, and for optimistic ones
    # only when more than the default 3 slices are allowed (``PLD.law(precise=True)``)
    out, rel_c, slack_fft, noise = fft_conv(ma, None if same else mb, n,
                                             DIRECT_CONV[a.pessimistic], budget,
                                             a.pessimistic or max_slices > 3, max_slices,
                                             (1 if a.pessimistic else -1) if same else 0)
    floor = noise
    out = np.maximum(out, 0.0)  # moves each entry towards the true, non-negative value
    sum_a, sum_b = float(ma.sum()), float(mb.sum())
    inf = a.inf * (sum_b + b.top_mass + b.inf) + (sum_a + a.top_mass) * b.inf
    # a top atom plus anything finite lies at or below the sum of the tops: put it there
    top_mass = a.top_mass * (sum_b + b.top_mass) + sum_a * b.top_mass
    # Held inputs: a~ = a' + t_a + e_a with a <= ... entrywise |a' - a| <= r_a a, tail-relative
    # t_a (``GridLaw.tail``) and |e_a|_1 <= s_a; the exact laws have mass <= 1. Expanding a~ * b~:
    # a' * b' is within (r_a + r_b + r_a r_b) a * b entrywise; a' * t_b and t_a * b' are
    # tail-relative with t_b (1 + r_a), t_a (1 + r_b) (a' >= 0 integrates t_b's tail bound);
    # t_a * t_b is tail-relative with 2 t_a t_b (n + 2) (|t_b,j| <= 2 t_b M_b(j) and
    # sum_j M_b(j) M_a(l - j) <= (n_b + 2) M_{ab}(l)); the rest is absolute: s_a (1 + r_b),
    # s_b (1 + r_a), s_a s_b, and |t_a|_1 s_b, |t_b|_1 s_a (``tail_l1``). The product's round-off
    # is slack_fft plus an error e within rel_c of the non-negative held product H entrywise: its
    # tail sums are within rel_c H([l, inf]) <= rel_c ((1 + r_in + t_in) M_ab(l) + s_in), a
    # tail-relative error plus at most rel_c s_in at each tail sum, 2 (n + 2) rel_c s_in in l1
    # (clamp the tail sums). Optimistic laws (profile-level one-sided models, no tail part;
    # module docstring, point 4): delta_{a~ x b~} <= (1 + r_a)(1 + r_b) delta_ab + s_a |b~| +
    # (1 + r_a) s_b with |b~| <= 1 + r_b + s_b (the model at eps = -inf), which is r_in and s_in;
    # the product's round-off multiplies by 1 + rel_c and adds slack_fft (clipping negatives only
    # moves entries towards the exact non-negative product).
    # The scalar atoms round within ``sum_rounding`` of their tails. A law with two error models
    # (``GridLaw.alt``) gives the product two: each is valid for the same held product.
    na, nb = ma.size, mb.size
    scalars = sum_rounding(max(na, nb))

    def errors(ea: tuple[float, float, float],
               eb: tuple[float, float, float]) -> tuple[float, float, float]:
        (s_a, r_a, t_a), (s_b, r_b, t_b) = ea, eb
        r_in = r_a + r_b + r_a * r_b
        t_in = t_a * (1 + r_b) + t_b * (1 + r_a) + 2.0 * t_a * t_b * (min(na, nb) + 2)
        s_in = (s_a * (1 + r_b) + s_b * (1 + r_a) + s_a * s_b
                + tail_l1(t_a, na) * s_b + tail_l1(t_b, nb) * s_a)
        if a.pessimistic:
            return (s_in + slack_fft + 2.0 * (n + 2) * rel_c * s_in, r_in,
                    t_in + rel_c * (1 + r_in + t_in) + scalars)
        return (s_in * (1 + rel_c) + slack_fft + rel_c * tail_l1(t_in, n)
                + scalars * (inf + top_mass), r_in * (1 + rel_c) + rel_c, t_in)

    ea, eb = a.error_models, b.error_models
    slack, rel, tail_rel = errors(ea[0], eb[0])
    alt = None if len(ea) + len(eb) == 2 else errors(ea[-1], eb[-1])
    # the grids' shifts add; the sum's rounding moves every point by at most half an ulp of it
    shift = a.shift + b.shift
    lag = a.lag + b.lag + abs(float(Fraction(a.shift) + Fraction(b.shift) - Fraction(shift)))
    # the supports' tops add (rounded up)
    support_top = a.support_top + b.support_top
    if math.isfinite(support_top) and (Fraction(support_top)
                                       < Fraction(a.support_top) + Fraction(b.support_top)):
        support_top = math.nextafter(support_top, math.inf)
    law = GridLaw(a.h, a.offset + b.offset, out, min(inf, 1.0), slack, a.pessimistic, rel,
                  shift, top_mass, a.cut + b.cut, tail_rel, alt=alt, lag=lag,
                  support_top=support_top)
    return truncate(law, tail=tail, floor=8.0 * floor)


def to_grid(law: GridLaw, h: float) -> GridLaw:
    """Bring a law onto a grid of width h, an integer multiple of its own."""
    if law.h == h:
        return law
    factor = round(h / law.h)
    if factor < 1 or not math.isclose(factor * law.h, h, rel_tol=1e-12):
        raise ValueError("grids must be nested (widths in integer ratio)")
    return coarsen(law, factor)
