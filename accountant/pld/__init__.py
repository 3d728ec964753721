"""The privacy-loss-distribution engine.

- ``distribution``: the ``PLD`` guarantee (pairs and their counts, evaluated lazily on a grid with
  a pessimistic and an optimistic discretisation: certified brackets), ``pld_from_guarantee``;
- ``refinement``: the lower end of a bracket read on optimistic laws refined while it is wider than
  tol (shared by ``delta_bracket`` and ``epsilon_bracket``);
- ``subsampling``: amplification by subsampling on dominating pairs;
- ``incremental``: composition on a grid fixed in advance (the ledger's running budget);
- ``laplace_profile``: the exact profile of one Laplace pair composed with itself, enclosed without a
  grid (a ``PLD`` of such a composition answers from it);
- ``models``: one dominating pair per privacy-loss model, one file each;
- ``laws``: the loss laws by kind (tail, finite, subsampled, symmetric) and their error bounds;
- ``grid``: the discretisation seam (``Cells``), the optimistic construction, coarsening and the
  FFT convolution with certified round-off.
"""
