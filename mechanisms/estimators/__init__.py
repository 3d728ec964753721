"""Estimators: statistical mechanisms built on the noise and selection layers.

Each estimator is a ``Mechanism`` (``guarantee()``, ``sample(data, rng, size=None)``) declared with
its sensitivity and the guarantee its paper proves; the modules cite their source in
``docs/references.bib``.
"""

__all__: list[str] = []
