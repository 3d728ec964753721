"""Shared test support: independent references (``references``, ``tails``), the libm error model
(``libm``), estimator and audit fixtures. Imported by tests and benchmarks; no test imports
another test module."""
