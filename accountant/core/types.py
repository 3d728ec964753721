"""Types and constants shared by the three packages, each defined once here."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import NDArray

#: An array of doubles.
FloatArray = NDArray[np.float64]

#: The neighbouring relation of datasets: replace one record by another ("replace"), or add or
#: remove one record ("add_remove").
Adjacency = Literal["replace", "add_remove"]
#: Every adjacency, in a fixed order.
ADJACENCIES: tuple[Adjacency, ...] = ("replace", "add_remove")

#: Machine epsilon of float64, 2^-52: the gap between 1 and the next double.
MACHINE_EPSILON = float(np.finfo(np.float64).eps)
#: The unit roundoff of float64, u = 2^-53: a correctly rounded operation errs by at most u
#: relatively (in the normal range).
UNIT_ROUNDOFF = MACHINE_EPSILON / 2.0
#: The smallest positive double (a subnormal), 2^-1074.
SMALLEST_SUBNORMAL = math.nextafter(0.0, 1.0)

__all__ = ["ADJACENCIES", "MACHINE_EPSILON", "SMALLEST_SUBNORMAL", "UNIT_ROUNDOFF", "Adjacency", "FloatArray"]
