"""Shared test configuration."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import mpmath
import pytest


@pytest.fixture(autouse=True)
def _mpmath_precision_restored() -> Iterator[None]:
    """A test that sets mpmath's global precision must not change the next test's references."""
    saved = mpmath.mp.prec
    yield
    mpmath.mp.prec = saved


@pytest.fixture(scope="module")
def dp() -> Any:
    """OpenDP's prelude with contrib features enabled (the test is skipped where it is absent)."""
    dp = pytest.importorskip("opendp.prelude", reason="OpenDP is not installed")
    dp.enable_features("contrib")
    return dp


@pytest.fixture(scope="module")
def space(dp: Any) -> tuple[Any, Any]:
    """OpenDP's float scalar input space: (non-NaN float atoms, absolute distance)."""
    return dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
