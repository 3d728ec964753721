"""The loss-law interface: one ordered dominating pair (P, Q) able to put the law of L = log(q/p) under Q
on the PLD grid, pessimistically (delta never below the truth) or optimistically.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Literal

from accountant.pld.grid.law import SOURCE_TAIL, GridLaw

Direction = Literal["remove", "add"]


class LossDirection(ABC):
    """One ordered dominating pair (P, Q), able to discretise the law of L = log(q/p) under Q."""

    @abstractmethod
    def discretize(self, h: float, pessimistic: bool, tail: float = SOURCE_TAIL) -> GridLaw:
        """Grid law on width h: pessimistic (delta never below the truth) or optimistic; a
        continuous law is cut where its tails have Q-mass ``tail`` (pessimistically moved to
        +inf or up, optimistically dropped)."""

    def atoms(self) -> tuple[float, ...]:
        """Finite loss values carrying an atom, used to align the grid with them."""
        return ()

    def continuous_mass(self) -> float:
        """Q-mass of L off its finite atoms (``atoms``): what a grid aligned with the atoms
        discretises with an error (it only guides the choice of the grid)."""
        return 1.0

    @abstractmethod
    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        """Interval outside of which L has Q-mass at most ``tail`` on each side."""

    def subsampled(self, rate: float, poisson: bool) -> tuple[LossDirection, LossDirection | None]:
        """The loss law(s) of this pair's mechanism run on a subsample of rate ``rate``, as
        (remove, add) with add None for one symmetric law: Poisson sampling gives the remove pair
        (P, (1-r)P + rQ) and the add pair ((1-r)P + rQ, P) [@zhu2022optimal, Thm 11]; sampling
        without replacement the symmetric pair of C_r(f) [@dong2022gaussian, Thm 4.2]. A law
        that can be subsampled provides it; by default it cannot."""
        raise TypeError(f"cannot subsample a pair of type {type(self).__name__}")
