"""dpcert verify: white-box certification, black-box audits and the ``dpcert`` command."""

from __future__ import annotations

from typing import TYPE_CHECKING

from accountant.core.lazy import lazy_exports

if TYPE_CHECKING:  # the exports, imported on first use (see accountant.lazy)
    from .audit import (
        AuditPlan,
        AuditReport,
        Finding,
        MechanismError,
        TestPoint,
        assert_private,
        audit,
        audit_power,
        plan_audit,
        samples_needed,
    )
    from .certify import Certificate, certify
    from .neighbours import AdaptiveSearch, PatternSearch, RandomSearch, statdp_patterns
    from .protocols import (
        AdaptiveNeighbourSearch,
        Auditable,
        DeclaredMechanism,
        Neighbours,
        NeighbourSearch,
        SampledMechanism,
    )

__all__ = [
    "AdaptiveNeighbourSearch",
    "AdaptiveSearch",
    "AuditPlan",
    "AuditReport",
    "Auditable",
    "Certificate",
    "DeclaredMechanism",
    "Finding",
    "MechanismError",
    "NeighbourSearch",
    "Neighbours",
    "PatternSearch",
    "RandomSearch",
    "SampledMechanism",
    "TestPoint",
    "assert_private",
    "audit",
    "audit_power",
    "certify",
    "plan_audit",
    "samples_needed",
    "statdp_patterns",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
