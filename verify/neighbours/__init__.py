"""Neighbour search: which pairs of inputs to audit.

``AdaptiveSearch`` (``adaptive``) starts from structured candidates and moves toward pairs with a
larger estimated loss, on exploration draws of its own; its search space lives in ``space``, the
geometry of vector query answers (pairs within a norm ball of the sensitivity) in ``answers`` and the
smooth surrogate of its DP-Finder-style phase in ``surrogate``. ``PatternSearch`` and
``RandomSearch`` (``fixed``) do not adapt: StatDP's input patterns for a vector of query answers
[@ding2018detecting, Table 1] and random neighbouring datasets from a declared domain under
replace-one or add/remove-one adjacency. All have ``pairs(rng)`` and can be passed to
``verify.audit`` as ``neighbours``; the audit screens all pairs on its selection half and spends its
error budget only on the most promising.
"""

from __future__ import annotations

from .adaptive import ANTIPODAL_FRACTIONS, SURROGATE_QUANTILES, AdaptiveSearch, SearchMethod
from .answers import ANSWER_NORMS, MAX_AXES, MOVE_WEIGHTS, RADIUS_MARGIN, AnswerBall, AnswerNorm, norm_of
from .fixed import (
    MAX_N,
    Estimator,
    FloatPair,
    PatternSearch,
    RandomSearch,
    check_adjacency,
    check_domain,
    statdp_patterns,
)
from .space import MAX_RECORDS, SearchAdjacency, SearchSpace

__all__ = [
    "ANSWER_NORMS",
    "ANTIPODAL_FRACTIONS",
    "MAX_AXES",
    "MAX_N",
    "MAX_RECORDS",
    "MOVE_WEIGHTS",
    "RADIUS_MARGIN",
    "SURROGATE_QUANTILES",
    "AdaptiveSearch",
    "AnswerBall",
    "AnswerNorm",
    "Estimator",
    "FloatPair",
    "PatternSearch",
    "RandomSearch",
    "SearchAdjacency",
    "SearchMethod",
    "SearchSpace",
    "check_adjacency",
    "check_domain",
    "norm_of",
    "statdp_patterns",
]
