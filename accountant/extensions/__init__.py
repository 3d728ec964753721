"""Plug-in notions and bridges, registered into the accountant without editing it: Bayesian
coordinate DP (``bcdp``), bounded range (``bounded_range``), and dp_accounting events and an
Opacus-style accountant (``interop``)."""
