"""Shared test configuration."""

from __future__ import annotations

from collections.abc import Iterator

import mpmath
import pytest


@pytest.fixture(autouse=True)
def _mpmath_precision_restored() -> Iterator[None]:
    """A test that sets mpmath's global precision must not change the next test's references."""
    saved = mpmath.mp.prec
    yield
    mpmath.mp.prec = saved
