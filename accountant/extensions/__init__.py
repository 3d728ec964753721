"""Plug-in notions and bridges, registered into the accountant without editing it: Bayesian
coordinate DP (``bcdp``), bounded range (``bounded_range``), dp_accounting events and an
Opacus-style accountant (``interop``), and OpenDP measurements' privacy maps (``opendp``)."""
