"""Dominating pairs, one module per privacy-loss model (``base`` holds the ``Pair`` interface and
its serialisation registry). A new model is one new module: its ``Pair`` and, when no generic law
fits, its ``LossDirection`` (see ``logistic`` for a complete example)."""
