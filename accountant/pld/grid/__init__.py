"""The grid engine of the privacy-loss distribution (PLD) accountant.

A privacy-loss law is held in the *Q-world*: the law of L = log(q/p) under Q on the grid
{(offset + i) h}, plus a mass at L = +inf. Its privacy profile is

    delta(eps) = Q(L = inf) + sum_i m_i (1 - e^{eps - l_i})_+.

Two facts carry every soundness argument here [@koskela2020computing; @doroshenko2022connect]:

1. For independent composition, delta_{A x C}(eps) = int delta_A(eps - l) dC(l). Hence if
   delta_U >= delta_A for *all real* eps then delta_{U x C} >= delta_{A x C}, and likewise with
   <=; bounds survive composition, and numerical errors bounded by a uniform ``slack`` on delta
   add up (scaled by the other factor's total mass). FFT round-off enters the slack through a
   worst-case normwise bound (``fft_conv``).
2. delta is pointwise monotone in the loss: moving Q-mass up (to +inf in particular) can only
   increase delta, dropping mass can only decrease it.
3. Errors relative to the upper tails cost delta only relatively (``GridLaw.tail``). By Abel
   summation, with w_i = (1 - e^{eps - l_i})_+ non-decreasing in l_i and in [0, 1], and E_i the
   error's tail sum over positions >= l_i, sum_i e_i w_i = sum_i E_i (w_i - w_{i-1}); so
   |E_i| <= t M_i (M the exact law's tail sums) gives |error of delta(eps)| <= t delta(eps). Such
   errors survive composition: the tail of e * C at l is int E(l - x) dC(x), at most
   t int M(l - x) dC(x) = t M_{A x C}(l). Sources whose tail functions are computed to a relative
   accuracy (``ndtr``) err in this way, so k copies cost k t relative, not an absolute k 8u floor.
4. A lower bound needs only a one-sided bound, and one on the profile: if a held law O~ has
   delta_{O~}(eps) <= (1 + t) delta_A(eps) + s at every real eps (A the exact law it stands for;
   at eps = -inf too, by the limit: |O~| <= (1 + t)|A| + s) and C >= 0 is any measure, then
   delta_{O~ x C}(eps) = int delta_{O~}(eps - l) dC(l) <= (1 + t) delta_{A x C}(eps) + s |C|.
   Applied twice, O~_1 x O~_2 is within t = (1 + t_1)(1 + t_2) - 1 and s = s_1 |O~_2| +
   (1 + t_1) s_2 |A_1| (|A_1| <= 1) of A_1 x A_2, plus the product's round-off. Dropping mass, and
   any re-discretisation whose profile lies below that of its input (the optimistic coarsening),
   keep such a bound. So where a source's errors are relative to its node profiles (tails
   computed to a relative accuracy, roundings of non-negative terms) k copies cost about k t
   relative, not k s absolute (``GridLaw.rel`` of optimistic laws, ``optimistic_from_cells``).

Pessimistic discretisation ("connect the dots" [@doroshenko2022connect]): the content of each grid
cell (g_j, g_{j+1}] is split between its two end points so that its P- and Q-masses are kept; the
split pair is a refinement of the true pair, so it dominates it, and its profile interpolates the
true profile at the nodes (error O(h^2) per mechanism, not O(h) as with rounding up).

Optimistic discretisation: in y = e^eps the profile is convex with slope -P(L > log y), so it lies
above its tangent at the midpoint of each cell (read from the contents of the cell's two halves).
Lowering each node value below the tangents of its two cells and taking the lower convex hull
gives a profile with kinks on the grid only, below the truth everywhere: a grid PLD whose delta is
a lower bound, with an O(h^2) error about half that of connect-the-dots on average. Any tangent
of a cell will do, and so will any mix of the lowerings two tangents ask (the chord is linear in
them): at the bottom of a support a cell mixes in the tangent at its lower node, so that no node
is lowered below the profile's linear part (the hull would lower every node below it: a lost
mass, paid by every composed copy). Computed contents: the lowerings are read from upper bounds
of the halves' excess and deficit, and the node profiles' errors are charged relatively where
the profile allows it (point 4, ``accountant.pld.laws.errors``, ``relative_split``).

Modules: ``law`` (a grid law and its profile), ``cells`` (the seam: the ``Cells`` a loss law hands
the grid), ``construct`` (the pessimistic construction), ``optimistic`` and ``hull`` (the
optimistic one), ``atoms`` (finite losses on the nodes), ``coarsen`` (coarsening and truncation),
``convolve`` (FFT products with certified round-off) and ``composition`` (self-composition and
composition of laws).
"""
