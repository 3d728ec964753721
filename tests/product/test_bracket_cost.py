"""The timers of ``benchmarks.bracket_cost``: they see every law and operation of a bracket, change no
result, and leave the accountant as they found it."""

from __future__ import annotations

import pytest

from accountant import GDP, PLD, compose, subsample
from benchmarks.bracket_cost import PATCHED, Timers


def _pld() -> PLD:
    # DP-SGD with enough steps for coarsenings and products, and a far tail in its fine squares
    pld = compose([subsample(GDP(1.0 / 0.9), rate=0.01, scheme="poisson")] * 300)
    assert isinstance(pld, PLD)
    return pld


def test_timed_bracket_is_the_untimed_one_and_every_part_is_seen() -> None:
    untimed = _pld().epsilon_bracket(1e-5)
    originals = [getattr(owner, name) for owner, name in PATCHED]
    timers = Timers()
    with timers.installed():
        timed = _pld().epsilon_bracket(1e-5)
    assert timed == untimed
    assert [getattr(owner, name) for owner, name in PATCHED] == originals
    s = timers.seconds
    for law in ("pessimistic", "optimistic"):
        assert s[(law, "")] > 0.0 and s[(law, "squares")] > 0.0 and s[(law, "coarsen")] > 0.0
        # a law's parts lie within it, and the cross products within its squarings
        assert s[(law, "composition")] <= s[(law, "")]
        assert s[(law, "squares")] + s[(law, "products")] + s[(law, "coarsen")] <= s[(law, "composition")]
        assert s[(law, "cross")] <= s[(law, "squares")]
    assert s[("pessimistic", "cross")] > 0.0


def test_timers_are_removed_when_the_bracket_raises() -> None:
    originals = [getattr(owner, name) for owner, name in PATCHED]
    timers = Timers()
    with pytest.raises(KeyError), timers.installed():
        assert not any(getattr(owner, name) is old
                       for (owner, name), old in zip(PATCHED, originals, strict=True))
        raise KeyError("stop")
    assert [getattr(owner, name) for owner, name in PATCHED] == originals
