"""Loss laws by kind: the ``LossDirection`` interface (``base``), laws given by their tails
(``tail``) and their error bounds (``errors``), finite laws (``finite``), and the subsampled and
symmetrised transforms of continuous laws (``subsampled``, ``symmetric``)."""
