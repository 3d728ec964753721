"""The notions of privacy: guarantee types (pure, approximate, Gaussian, f-DP, Renyi, zCDP),
trade-off curves (closed forms, piecewise-linear, finite loss laws, the discrete Gaussian), the
named conversions between notions, and the ordering ``implies(g, target)``."""
