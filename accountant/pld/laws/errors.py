"""Error bounds of a continuous source's discretisations (pessimistic, and optimistic at the end).

A ``TailDirection`` computes the four tails Q(L <= g), Q(L > g), P(L <= g), P(L > g) at the nodes
g_j and differences them into cell masses q_c; ``from_cells`` splits each cell between its two
nodes, b_c sent up.

The split. Connect-the-dots [@doroshenko2022connect] sends b = x / (1 - e^{-h}) up, with
x = int_cell (1 - e^{g - l}) dQ(l) = q - e^g p. Computed as that difference, x cancels: its error
is u times the tail at the node, not u x, and dividing by 1 - e^{-h} ~ h amplifies it (measured
on DP-SGD sources at h 1.4e-5: 1.9e-5 relative to b; worst case about 1e-13 on delta per source).
Any b' >= b is sound instead (moving Q-mass up only raises delta, point 2 of ``accountant.pld.grid``), so the
split used is an *upper bound* of b with no cancellation (``up_share``): where the density f of L
under Q has (log f)' <= A on the cell, the cell's conditional law is dominated in likelihood
ratio, hence stochastically, by the law of density proportional to e^{A t} on the cell, and
1 - e^{g - l} is increasing, so b / q <= beta(A h, h) (closed form). The reference law of the
bounds below is the one with that split and the exact q: it dominates connect-the-dots, and it
exceeds it by O(h^3) per cell (A and (log f)' differ by O(h) on the cell), a higher order than
connect-the-dots' own O(h^2). A direction that declares no such slope bound rounds the
differenced x up by its rigorous error bound instead (``cell_errors``).

The held tail sum at node j is then

    M~_j = sum_{c >= j} q~_c + q_above~ + b~_{j-1} + (atoms at or above node j),

and the cell masses telescope: sum_{c >= j} q~_c + q_above~ = sq~_j up to the rounding of each
difference (where the upper tail is differenced), so its error is that of one computed tail, which
is *relative* to the tail (``tail_accuracy``: ``ndtr`` and the closed forms are relative-accurate,
argument rounding included); b~_{j-1} = min(q~ beta, q~) errs by at most the cell's q error. The
bound TB_j on |M~_j - M_j| is computed entry by entry, and the source's tail coefficient is
t = max_j TB_j / (M~_j - TB_j), capped at ``TAIL_CAP``; where a node exceeds t M_j, the excess
X_j goes to the absolute slack: clamping the error's tail sums to +-X_j leaves a measure of l1 norm
at most 2 sum_j X_j [``accountant.pld.grid`` docstring, point 3]. The absolute charge kept as the
fallback is max_j TB_j: by Abel summation an error whose tail sums are at most E in modulus moves
delta(eps) by at most E, at every eps.

The optimistic law reads the contents of half cells: its profile at the nodes is that of the
connect-the-dots masses of the contents, lowered by amounts read from single half cells
(``accountant.pld.grid.law``). Both err, and by u times the tails, not u times the cells: the node profiles
telescope to sq~_j - e^{g_j} sp~_j plus computable complement defects (``optimistic_node_error``;
for a subsampled pair the base's errors cancel in that difference but for a factor r), and the
lowerings are taken from upper bounds of each half's excess and deficit, by the slope bounds
(``up_share``, ``deficit_share``) or the computed values rounded up, so they carry no error term.
The node errors are bounded node by node: they are relative to the tails, which are relative
to the node profile up to the profile's cancellation (Q(L > g) against e^g P(L > g)), so the
construction charges them relatively to the profile where it is at least OPT_REL_REF and
absolutely below (``relative_split``; ``accountant.pld.grid`` point 4: k copies then cost k t
relative on delta, where an absolute charge per node cost k times its maximum).

"""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from accountant.core.rounding import LIBM_REL
from accountant.core.types import UNIT_ROUNDOFF, FloatArray
from accountant.pld.grid.law import GridLaw

#: Largest tail coefficient a source may carry (k copies cost about k * TAIL_CAP relative on delta;
#: a composed law also carries the absolute charge, ``GridLaw.alt``, and each delta uses the
#: smaller of the two); a node whose bound exceeds it is charged to the absolute slack instead.
TAIL_CAP = 1e-6


#: Absolute error allowed to every computed tail besides its declared accuracy: relative accuracy
#: holds in the normal range only. Below it a tail may be subnormal or flushed to 0 (``ndtr`` errs
#: there by at most 3 subnormal ulp, and returns 0 below Phi(z) ~ 2.5e-324; a library ndtr may flush
#: sooner: scipy's returns 0 for z < -37.68, where Phi(z) is up to 2.4e-310), an error below the
#: smallest normal double; mixing such tails with weights summing to at most 1 keeps it below 4
#: times that.
#: e^g times it matters where g > 690: a P-tail flushed inside a cell made p = the whole tail.
UNDERFLOW = 4.0 * sys.float_info.min


def product_error(j: FloatArray, h: float) -> FloatArray:
    """|j h - fl(j h)| exactly, for integers j (as doubles) and a double h: Dekker's product with
    Veltkamp's splitting [@dekker1971floating], exact barring overflow and underflow."""
    def split(a: FloatArray) -> tuple[FloatArray, FloatArray]:
        c = 134217729.0 * a  # 2^27 + 1
        hi = c - (c - a)
        return hi, a - hi

    jh, jl = split(np.asarray(j, dtype=np.float64))
    hh, hl = split(np.full(1, h))
    p = j * h
    err = ((jh * hh - p) + jh * hl + jl * hh) + jl * hl
    return np.asarray(np.abs(err), dtype=np.float64)


def ndtr_accuracy(z: FloatArray, dz: FloatArray, own_value: bool = False,
                  symmetric: FloatArray | None = None) -> FloatArray:
    """Relative error bound, relative to the computed value, of ``accountant.core.normal.ndtr``
    evaluated at a computed argument within dz of the exact z (of Phi(z) and of Phi(-z) alike): its
    own error (measured against mpmath: at most 6.6 u down to z = -37.5, tests/accountant/core/
    test_normal.py; charged (2 z^2 + 16) u, a charge fitted to scipy's ndtr, which errs by up to
    2.1 z^2 u, and kept: tests/accountant/pld/test_pld_tails.py checks that it covers ndtr) and the
    argument's,
    |log Phi(z + d) - log Phi(z)| <= d (|z| + d + 1) (the log-derivative phi/Phi is at most |z| + 1
    [@birnbaum1942inequality]). With ``own_value``, the bound of Phi(z) alone: for z >= 0 its own
    error is charged 16 u (measured: at most 1.7 u on [0, 40]), and where z - d >= 0 the
    log-derivative over the interval is also at most 2 phi(z - d) (phi/Phi <= 2 phi on t >= 0,
    decreasing), so a value near 1 hardly moves with its argument. ``symmetric`` (with
    ``own_value``, z and dz of one shape): ndtr_accuracy(z, dz), already computed; both bounds are
    the same expression wherever z < 0 (or NaN: there z - dz < 0 unless dz <= 0, where the slope
    is unused), so only the entries z >= 0 are evaluated."""
    if own_value and symmetric is not None:
        redo = z >= 0.0
        out = np.array(symmetric, dtype=np.float64)
        if redo.any():
            out[redo] = ndtr_accuracy(z[redo], dz[redo], own_value=True)
        return out
    az = np.abs(z)
    own = (2.0 * az * az + 16.0) * UNIT_ROUNDOFF
    with np.errstate(invalid="ignore", over="ignore"):
        slope = az + dz + 1.0
        if own_value:
            own = np.where(z >= 0.0, 16.0 * UNIT_ROUNDOFF, own)
            low = z - dz
            near_one = 2.0 * np.exp(-0.5 * low ** 2) / math.sqrt(2.0 * math.pi) * 1.01
            slope = np.where(low >= 0.0, np.minimum(slope, near_one), slope)
        arg = np.where(dz > 0, dz * slope, 0.0)
        rel = np.expm1(arg) * 1.01 + own
        rel = rel / np.maximum(1.0 - rel, 0.0)  # relative to the computed value
    return np.asarray(np.where(np.isfinite(z), rel, 8.0 * UNIT_ROUNDOFF), dtype=np.float64)


def _tilted_mean(alpha: FloatArray) -> tuple[FloatArray, FloatArray]:
    """mu(a) = 1 / (1 - e^{-a}) - 1 / a, the mean of the law of density proportional to e^{a u} on
    (0, 1) (1/2 at a = 0), and a bound on its evaluation error. Near 0 by its series
    1/2 + a/12 - a^3/720 + a^5/30240 - a^7/1209600 (Bernoulli numbers; the next term is below
    2.1e-8 |a|^9 < 1e-17 for |a| < 0.1), elsewhere directly: the two terms are at most 10.5 in
    modulus there, so the difference errs by less than 128 u."""
    a = np.asarray(alpha, dtype=np.float64)
    small = np.abs(a) < 0.1
    a2 = a * a
    series = 0.5 + a * (1.0 / 12 + a2 * (-1.0 / 720 + a2 * (1.0 / 30240 - a2 / 1209600)))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        direct = 1.0 / -np.expm1(-a) - 1.0 / a
    mu = np.where(small, series, direct)
    return (np.asarray(np.where(np.isnan(mu), 1.0, mu), dtype=np.float64),
            np.where(small, 4.0 * UNIT_ROUNDOFF + 1e-17, 128.0 * UNIT_ROUNDOFF))


def up_share(slope: FloatArray, h: float) -> FloatArray:
    """Upper bound of b / q, the share of a cell's Q-mass that connect-the-dots sends up, for a
    cell of width h on which the density f of L under Q has (log f)' <= ``slope`` (module
    docstring). For the law of density proportional to e^{A t} on (0, h), with M(c) = int_0^h
    e^{c t} dt: E[1 - e^{-t}] = 1 - M(A - 1) / M(A) = 1 - e^{-D}, D = log M(A) - log M(A - 1) =
    int_{(A-1)h}^{Ah} mu(a) da (d/dc log M(c) = h mu(c h), ``_tilted_mean``). D is taken by the
    midpoint rule, whose error is at most h^3 max|mu''| / 24 <= h^3 / 1000 (mu'' = L''(a/2) / 8
    with Langevin's L, |L''| < 0.11). Rounding: a error 2u|a| moves mu by at most 1/12 of it
    (0 <= mu' <= 1/12); the rest rounds relatively: two expm1 (LIBM_REL each), the quotient and
    the product. Slope +inf gives 1."""
    alpha = (np.asarray(slope, dtype=np.float64) - 0.5) * h
    mu, err = _tilted_mean(alpha)
    with np.errstate(invalid="ignore"):
        mu_up = mu + err + np.where(np.isfinite(alpha), UNIT_ROUNDOFF * np.abs(alpha) / 6.0, 0.0)
    d_up = h * np.minimum(mu_up, 1.0) * (1.0 + 2.0 * UNIT_ROUNDOFF) + h ** 3 / 1000.0
    share = -np.expm1(-d_up) / -math.expm1(-h) * (1.0 + 2.0 * LIBM_REL + 4.0 * UNIT_ROUNDOFF)
    return np.asarray(np.clip(share, 0.0, 1.0), dtype=np.float64)


def deficit_share(slope: FloatArray, w: float) -> FloatArray:
    """Upper bound of E[e^{w - t}] - 1 for the position t in (0, w) of the Q-mass of a half cell
    of width w on which (log f)' >= ``slope``: the cell's upper deficit e^w pn - q per unit q,
    the amount by which the optimistic construction lowers the node above (``accountant.pld.grid.law``). The
    conditional law dominates, in likelihood ratio, hence stochastically, the law of density
    proportional to e^{a t} on (0, w), and e^{w - t} decreases, so the share is at most
    e^{w - D} - 1 with D = log M(a) - log M(a - 1) as in ``up_share``, taken from below (midpoint
    rule and its h^3/1000, every rounding padded; expm1's LIBM_REL). Slope -inf (or NaN) gives
    e^w - 1, the most."""
    a = np.asarray(slope, dtype=np.float64)
    alpha = np.where(np.isnan(a), -np.inf, a - 0.5) * w
    mu, err = _tilted_mean(alpha)
    with np.errstate(invalid="ignore"):
        mu_lo = mu - err - np.where(np.isfinite(alpha), UNIT_ROUNDOFF * np.abs(alpha) / 6.0, 0.0)
    mu_lo = np.where(np.isnan(a), 0.0, mu_lo)
    d_lo = w * np.clip(mu_lo, 0.0, 1.0) * (1.0 - 2.0 * UNIT_ROUNDOFF) - w ** 3 / 1000.0
    share = np.expm1(np.clip(w - d_lo, 0.0, w)) * (1.0 + LIBM_REL + 4.0 * UNIT_ROUNDOFF)
    return np.asarray(share, dtype=np.float64)


def scaled_p(g: FloatArray, p: FloatArray,
             eg: FloatArray | None = None) -> tuple[FloatArray, FloatArray]:
    """e^g p for cells' P-masses p (negative ones as 0) at their lower nodes g (computed within
    u |g| of the exact ones), and a bound on its error: p e^g where e^g is finite (LIBM_REL for
    exp, 2u for the product, and e^g's sensitivity to g's rounding), else exp(g + log p) (the
    argument errs by u |g|, log's LIBM_REL |log p| and the sum's u (|g| + |log p|), exp adds
    LIBM_REL). ``eg``: exp(min(g, 700)) when already computed (``capped_exp``)."""
    pc = np.maximum(p, 0.0)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        pn = pc * (capped_exp(g) if eg is None else eg)
        rounding = LIBM_REL + 2.0 * UNIT_ROUNDOFF + 2.0 * UNIT_ROUNDOFF * np.abs(g)
        far = ~(g < 700.0)  # log space (NaN included), evaluated there only
        if far.any():
            gf, pf = g[far], pc[far]
            pn[far] = np.exp(gf + np.log(pf))
            rounding[far] = (LIBM_REL + 2.0 * UNIT_ROUNDOFF) * (np.abs(gf)
                                                    + np.abs(np.log(np.maximum(pf, 1e-300))) + 2.0)
        rounding = rounding * pn
    return (np.asarray(pn, dtype=np.float64),
            np.asarray(np.where(np.isnan(rounding), np.inf, rounding), dtype=np.float64))


def capped_exp(g: FloatArray) -> FloatArray:
    """exp(min(g, 700)), the factor ``scaled_p`` multiplies by (finite: log space above 700)."""
    return np.asarray(np.exp(np.minimum(g, 700.0)), dtype=np.float64)


def scaled_up(g: FloatArray, a: FloatArray, eg: FloatArray | None = None) -> FloatArray:
    """Upper bound of e^g a for a >= 0 at nodes g (``scaled_p`` and its rounding; ``eg`` as
    there)."""
    value, rounding = scaled_p(g, a, eg)
    return np.asarray(value + rounding, dtype=np.float64)


class CellErrors(NamedTuple):
    """Entrywise error bounds of a source's tails at the nodes and of its cells."""

    dsq: FloatArray  # the upper and lower Q-tails' errors at the nodes
    dfq: FloatArray
    d_cell: FloatArray  # a cell's q error from its two tails
    round_q: FloatArray  # q's rounding and clip at 0
    dx: FloatArray  # x = q - e^g p as differenced, before its clip to [0, q]
    dsp: FloatArray  # the upper and lower P-tails' errors at the nodes
    dfp: FloatArray
    round_p: FloatArray  # p's rounding and clip at 0
    pn_round: FloatArray  # the rounding of e^g p, computed as exp(g + log p)
    pn: FloatArray  # e^g p itself as computed (``scaled_p``), before any clip


def cell_errors(g: FloatArray, tails: tuple[FloatArray, ...],
                accuracy: tuple[FloatArray, FloatArray]) -> CellErrors:
    """Entrywise error bounds of a source's cells, from ``accuracy`` = (rel, abs) with
    |T~ - T| <= rel T~ + abs for each of the tails (fq, sq, fp, sp) at the nodes g where T~ is
    normal, and UNDERFLOW more for tails below the normal range."""
    fq, sq, fp, sp = tails
    rel, ab = accuracy

    def err(t: FloatArray) -> FloatArray:
        # |T~ - T| <= rel T~ + abs + UNDERFLOW; always |T~ - T| <= 1 + T~ (T is a probability)
        with np.errstate(over="ignore", invalid="ignore"):
            bound = rel * np.abs(t) + ab + UNDERFLOW
        return np.asarray(np.minimum(np.where(np.isnan(bound), np.inf, bound), 1.0 + np.abs(t)),
                          dtype=np.float64)

    dsq, dfq, dsp, dfp = err(sq), err(fq), err(sp), err(fp)
    upper = sq[:-1] <= 0.5
    q_hat = np.where(upper, sq[:-1] - sq[1:], fq[1:] - fq[:-1])
    # entrywise: difference of two tails; the rounding of the difference; the clip at 0
    d_cell = np.where(upper, dsq[:-1] + dsq[1:], dfq[:-1] + dfq[1:])
    round_q = UNIT_ROUNDOFF * np.abs(q_hat) + np.maximum(-q_hat, 0.0)
    p_hat = np.where(sp[:-1] <= 0.5, sp[:-1] - sp[1:], fp[1:] - fp[:-1])
    round_p = UNIT_ROUNDOFF * np.abs(p_hat) + np.maximum(-p_hat, 0.0)
    dp = np.where(sp[:-1] <= 0.5, dsp[:-1] + dsp[1:], dfp[:-1] + dfp[1:]) + round_p
    gl = g[:-1]
    pn, pn_round = scaled_p(gl, p_hat)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        # e^g p: its rounding and e^g times p's error
        dpn = np.exp(gl + np.log(dp)) * (1.0 + 1e-6) + pn_round
    # x = q - e^g p: both errors, the clip of e^g p to [q e^{-h}, q] (within q's error) and the
    # subtraction's rounding
    dq = d_cell + round_q
    dx = (np.where(np.isfinite(dpn), dpn, np.inf) + 2.0 * dq) * (1.0 + 1e-6) + 2.0 * UNIT_ROUNDOFF * (
        np.abs(q_hat) + np.where(np.isfinite(pn), pn, 0.0))
    return CellErrors(dsq, dfq, d_cell, round_q, dx, dsp, dfp, round_p, pn_round, pn)


def telescoped_errors(upper: npt.NDArray[np.bool_], d_up: FloatArray, d_low: FloatArray,
                      cell_extra: FloatArray) -> FloatArray:
    """Bounds on the error of sum_{c >= j} m~_c + (the upper tail beyond the last node) (+ the
    lower tail at the first node, at j = 0) at each node j, for cells m~_c differenced from one
    law's computed tails at the nodes: its upper tail (error d_up) where ``upper``, else its lower
    tail (d_low); ``cell_extra`` the cells' other entrywise errors. The sum telescopes: it errs by
    one tail's error at node j, at each node k > j where the branch changes, and at the top
    unless the last cell is upper (the upper tail beyond cancels it)."""
    switch = np.concatenate([[0.0], np.where(upper[1:] != upper[:-1], d_up[1:-1] + d_low[1:-1],
                                             0.0),
                             [0.0 if upper[-1] else d_up[-1] + d_low[-1]]])
    after = np.concatenate([np.cumsum(switch[::-1])[::-1][1:], [0.0]])  # nodes k > j
    start = np.concatenate([np.where(upper, d_up[:-1], d_low[:-1]), [d_up[-1]]])
    tq = start + after + np.concatenate([np.cumsum(cell_extra[::-1])[::-1], [0.0]])
    tq[0] += d_low[0]
    return np.asarray(tq, dtype=np.float64)


def _complement_sums(f: FloatArray, s: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(K, bound on K's rounding) at each node j, K_j = sum_{c >= j} m^_c - s~_j for the cells m^
    differenced as in ``cell_errors`` from one law's computed tails (f~, s~) at the nodes (the
    upper tail where s~ <= 1/2): a lower cell's f~_{c+1} - f~_c is s~_c - s~_{c+1} + C_{c+1} - C_c
    with C = f~ + s~, so K_j = -s~_N + sum_{lower c >= j} (C_{c+1} - C_c), computed from the
    rounded C (their errors u C telescope within each run of lower cells: 2 u C per run end)."""
    lower = ~(s[:-1] <= 0.5)
    c = f + s
    e = np.where(lower, c[1:] - c[:-1], 0.0)
    k = np.concatenate([np.cumsum(e[::-1])[::-1], [0.0]]) - s[-1]
    ends = np.concatenate([[0.0], np.where(lower[1:] != lower[:-1], np.abs(c[1:-1]), 0.0),
                           [np.abs(c[-1]) if lower[-1] else 0.0]])
    after = np.concatenate([np.cumsum(ends[::-1])[::-1][1:], [0.0]])
    at_j = np.concatenate([np.where(lower, np.abs(c[:-1]), 0.0), [0.0]])
    err = (UNIT_ROUNDOFF * (at_j + after + 2.0 * abs(float(s[-1])))
           + (e.size + 4.0) * UNIT_ROUNDOFF * np.concatenate([np.cumsum(np.abs(e)[::-1])[::-1], [0.0]]))
    return np.asarray(k, dtype=np.float64), np.asarray(err, dtype=np.float64)


def optimistic_node_error(g: FloatArray, tails: tuple[FloatArray, ...], errors: CellErrors,
                          q: FloatArray, moved: FloatArray, profile: FloatArray,
                          q_tail_error: float) -> tuple[FloatArray, float]:
    """Upper bounds of D~_j - D_j at the nodes g_j of a source's cells, D the exact profile
    Q(L > g_j) - e^{g_j} P(L > g_j) and D~ that of the connect-the-dots masses of the computed
    contents (q~, e^g p~ clipped, x~ = q~ - e^g p~), whose content above the last node is dropped
    (an optimistic law). At node j, D~_j = sum_{c >= j} q~_c - sum_{c >= j} e^{g_j - g_c}
    (e^{g_c} p~_c), and both sums telescope to the tails at node j (``_complement_sums``):
    D~_j = sq~_j - e^{g_j} sp~_j + K^Q_j - e^{g_j} K^P_j + roundings, so it errs by ``profile``
    (a bound on |sq~ - e^g sp~ - D| at the nodes, the direction's ``profile_error``, where the
    tails' errors may cancel), the computed K's, and the roundings: of the differences (round_q,
    round_p), of e^g p (weights e^{g_j - g_c} <= 1), the clips' moves ``moved`` and x's
    subtraction (u q). The lowerings are bounded separately (``accountant.pld.grid.law``). Also returned: a
    bound of the cells' total Q-mass minus Q(L > g_0), the same telescoped sum's Q part at j = 0
    (the profile at y = e^eps = 0), with ``q_tail_error`` the error bound of sq~_0 (the
    direction's own, ``tail_errors``: near 1 it is far below the generic one). The construction
    states these errors relative to the node profiles where it can (``relative_split``)."""
    fq, sq, fp, sp = tails
    kq, kq_err = _complement_sums(fq, sq)
    kp, kp_err = _complement_sums(fp, sp)

    def rev(a: FloatArray) -> FloatArray:
        return np.concatenate([np.cumsum(a[::-1])[::-1], [0.0]])

    # e^g times each P-side term, in log space above g = 700 (``scaled_p``): e^g overflows there
    # while the terms are tiny (flushed P-tails)
    eg = capped_exp(g)  # read by the three scalings below
    ekp, ekp_round = scaled_p(g, np.abs(kp), eg)
    with np.errstate(over="ignore", invalid="ignore"):
        # summed in place, term by term from the left (the arrays are large)
        node = profile + (kq - np.sign(kp) * ekp)
        node += 4.0 * UNIT_ROUNDOFF * (np.abs(kq) + ekp)
        del ekp
        node += ekp_round
        node += kq_err
        node += scaled_up(g, kp_err, eg)
        node += rev(errors.round_q + UNIT_ROUNDOFF * q)
        node += scaled_up(g, rev(errors.round_p), eg)
        del eg
        node += rev(errors.pn_round + moved)
        node *= 1.0 + 1e-9
    total = (float(q_tail_error + kq[0] + 4.0 * UNIT_ROUNDOFF * abs(kq[0]) + kq_err[0])
             + float(np.sum(errors.round_q))) * (1.0 + 1e-9)
    return (np.asarray(np.where(np.isnan(node), np.inf, node), dtype=np.float64),
            total if math.isfinite(total) else math.inf)


def source_tail_law(law: GridLaw, tails: tuple[FloatArray, ...], errors: CellErrors,
                    cells_q: FloatArray, cells_atoms: FloatArray,
                    node_atoms: FloatArray) -> GridLaw:
    """The pessimistic ``law`` of a tail source with its error bounds (module docstring): stated
    tail-relatively (``tail``, excess in ``slack``), with the absolute charge max_j TB_j kept as
    ``fallback_slack``, or that absolute charge alone when it is the smaller. ``tails`` = (fq, sq,
    fp, sp) at the nodes, ``errors`` their and the cells' error bounds (``cell_errors``);
    ``cells_q`` the cell masses differenced from the tails (before atoms), ``cells_atoms`` /
    ``node_atoms`` the atoms' Q-masses deposited in cells and on nodes (never moved down: an
    atom's place is rounded up, ``deposit_atoms``, and the law's ``lag`` covers those put on a
    node below them). The split b~ sent up is an upper bound of connect-the-dots'
    (``up_share``, or x rounded up by ``cell_errors``) computed as min(s q~, q~) for a factor
    s >= 0 (or from the atoms' x at their rounded-up places), so against the reference law
    (exact q, same split) it errs by at most the cell's q error and its rounding."""
    n = cells_q.size  # cells; n + 1 nodes
    assert law.masses.size <= n + 1
    dq = errors.d_cell + errors.round_q + 8.0 * UNIT_ROUNDOFF * cells_atoms
    q_held = cells_q + cells_atoms
    b_err = np.minimum((dq + 8.0 * UNIT_ROUNDOFF * q_held) * (1.0 + 1e-6)
                       + 16.0 * UNIT_ROUNDOFF * cells_atoms, q_held + dq)
    # tail sums of the cells' errors, telescoped (``telescoped_errors``); q_below on node 0
    tq = telescoped_errors(tails[1][:-1] <= 0.5, errors.dsq, errors.dfq,
                           errors.round_q + 8.0 * UNIT_ROUNDOFF * cells_atoms)
    node_rev = np.cumsum(node_atoms[::-1])[::-1]
    masses = np.concatenate([law.masses, np.zeros(n + 1 - law.masses.size)])  # trailing empty
    held = np.cumsum(masses[::-1])[::-1] + law.inf
    tb = tq + np.concatenate([[0.0], b_err]) + 8.0 * UNIT_ROUNDOFF * node_rev + 8.0 * UNIT_ROUNDOFF * held
    tb = np.append(tb, errors.dsq[-1] + 8.0 * UNIT_ROUNDOFF * law.inf)  # the atom at +inf
    held = np.append(held, law.inf)
    absolute = float(tb.max()) * (1.0 + 1e-9)
    # M_j >= M~_j - TB_j, with M~_j the exact tail sum of the held masses: the computed one
    # (a cumulated sum of at most n + 2 non-negative terms, then the atom) is within (n + 3) UNIT_ROUNDOFF of
    # it, and the product and the difference round within UNIT_ROUNDOFF each
    t, excess = tail_split(tb, held * (1.0 - (n + 8) * UNIT_ROUNDOFF) - tb)
    slack = 2.0 * float(excess.sum()) * (1.0 + 1e-9)
    if not slack < absolute:
        return replace(law, slack=absolute)
    return replace(law, slack=slack, tail=law.tail + t, fallback_slack=absolute)


def tail_split(tb: FloatArray, low: FloatArray) -> tuple[float, FloatArray]:
    """(t, X) with TB_j <= t low_j + X_j at every node in exact arithmetic, for bounds TB_j >= 0
    and lower bounds low_j of the exact tail sums: t = max_j TB_j / low_j over the nodes with
    low_j > 0, capped at TAIL_CAP, and X_j >= 0 the excess (all of TB_j where low_j <= 0). The
    quotient may round down (by u: about 1e-32 of a node's bound was dropped at the node
    attaining t), so t is raised by 4 u over it, and X_j is computed from t low_j taken 3 u low
    (so at most its exact value), the difference rounded up by 4 u, and 4 subnormal ulp where a
    product underflows."""
    pos = low > 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = np.where(pos, tb / low, 0.0)
        t = min(TAIL_CAP, float(ratio.max()) * (1.0 + 4.0 * UNIT_ROUNDOFF))
        under = t * (low * (1.0 - 4.0 * UNIT_ROUNDOFF))
    excess = np.where(pos, np.maximum(tb - under, 0.0) * (1.0 + 4.0 * UNIT_ROUNDOFF) + 4.0 * math.ulp(0.0),
                      tb)
    return t, np.asarray(excess, dtype=np.float64)
