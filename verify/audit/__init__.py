"""Black-box audits (see ``core``): draw outputs on neighbouring inputs (``sampling``), choose
rejection regions on scores of featurised outputs (``features``, ``scores``, ``regions``), bound
their errors (``stats``) and report (``reports``)."""

from .core import assert_private, audit
from .reports import AuditReport, Finding, TestPoint
from .sampling import MechanismError

__all__ = ["AuditReport", "Finding", "MechanismError", "TestPoint", "assert_private", "audit"]
