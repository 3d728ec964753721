"""The PLD grid: laws on the nodes {shift + j h} (``law``), built from the cells a loss law hands
over (``cells``, ``construct``, ``optimistic``, ``atoms``, ``hull``), coarsened and truncated on the
safe side (``coarsen``), convolved with certified round-off (``convolve``) and composed
(``composition``)."""
