"""The node data a pessimistic source hands to the optimistic source of the same direction on twice
its width (``accountant.pld.laws.tail``): every entry depends on its own node or cell alone, so the
data read from the longer run equal those computed on the run itself, and the optimistic law built
from the handed data is the same law, bit for bit, as one built from scratch."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accountant.pld.grid.law import GridLaw
from accountant.pld.laws import tail as T
from accountant.pld.laws.subsampled import SubsampledTailDirection
from accountant.pld.laws.tail import TailDirection
from accountant.pld.models.gaussian import GaussianDirection
from accountant.pld.models.laplace import LaplaceDirection


def make(kind: str) -> TailDirection:
    if kind == "gaussian":
        return GaussianDirection(1.3)
    if kind == "laplace":
        return LaplaceDirection(0.8)
    base = GaussianDirection(1.0 / 1.1)
    return SubsampledTailDirection(base, 0.004, "add" if kind == "add" else "remove")


KINDS = ["gaussian", "laplace", "remove", "add"]


def same_law(a: GridLaw, b: GridLaw) -> None:
    assert (a.h, a.offset, a.inf, a.shift, a.lag) == (b.h, b.offset, b.inf, b.shift, b.lag)
    assert np.array_equal(a.masses, b.masses)
    assert a.error_models == b.error_models


@pytest.mark.parametrize("kind", KINDS)
def test_a_run_of_nodes_reads_the_values_of_a_longer_run(kind: str) -> None:
    d = make(kind)
    w = 1e-3
    full = d._node_data(-40, 900, w)
    d._forget()
    part = full.nodes(17, 613)
    alone = d._node_data(-40 + 17, -40 + 613, w)
    d._forget()
    assert part.start == alone.start and part.w == alone.w
    for x, y in zip([part.g, part.dg, *part.tails, *part.errors],
                    [alone.g, alone.dg, *alone.tails, *alone.errors], strict=True):
        assert x.shape == y.shape and np.array_equal(x, y, equal_nan=True)
    assert (part.slopes is None) == (alone.slopes is None)
    if part.slopes is not None and alone.slopes is not None:
        for x, y in zip(part.slopes, alone.slopes, strict=True):
            assert np.array_equal(x, y, equal_nan=True)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("h", [1e-3, 3.7e-4])
def test_the_optimistic_law_from_handed_data_is_the_same_law(kind: str, h: float) -> None:
    tail = 1e-17
    handed = make(kind)
    pess = handed.discretize(h, True, tail)
    assert T._HANDOFF and T._HANDOFF[-1][0] is handed
    opt = handed.discretize(2.0 * h, False, tail)
    assert all(owner is not handed for owner, _, _ in T._HANDOFF)  # read once, then dropped
    fresh = make(kind)  # an equal direction that never handed anything
    T._HANDOFF.clear()
    same_law(opt, fresh.discretize(2.0 * h, False, tail))
    same_law(pess, make(kind).discretize(h, True, tail))
    assert not handed.__dict__.get("_memo") and not handed.__dict__.get("_base_tails")


def test_an_optimistic_law_of_another_width_or_direction_computes_its_own() -> None:
    a, b = make("remove"), make("add")
    a.discretize(1e-3, True, 1e-17)
    b.discretize(1e-3, True, 1e-17)
    kept = [owner for owner, _, _ in T._HANDOFF]
    assert kept == [a, b] and len(kept) == T.HANDOFF_KEPT
    same_law(a.discretize(4e-3, False, 1e-17), make("remove").discretize(4e-3, False, 1e-17))
    assert [owner for owner, _, _ in T._HANDOFF] == [a, b]  # not read: another width
    c = make("gaussian")
    c.discretize(1e-3, True, 1e-17)
    assert [owner for owner, _, _ in T._HANDOFF] == [b, c]  # the oldest dropped
    T._HANDOFF.clear()
    assert math.isfinite(a.discretize(2e-3, False, 1e-17).slack)
