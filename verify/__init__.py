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
        power_ceiling,
        samples_needed,
        tradeoff_fixed_point,
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
    from .training import (
        CanaryAuditReport,
        GuessTest,
        OneRunReport,
        alignment_score,
        canary_audit,
        loss_score,
        one_run_audit,
    )

__all__ = [
    "AdaptiveNeighbourSearch",
    "AdaptiveSearch",
    "AuditPlan",
    "AuditReport",
    "Auditable",
    "CanaryAuditReport",
    "Certificate",
    "DeclaredMechanism",
    "Finding",
    "GuessTest",
    "MechanismError",
    "NeighbourSearch",
    "Neighbours",
    "OneRunReport",
    "PatternSearch",
    "RandomSearch",
    "SampledMechanism",
    "TestPoint",
    "alignment_score",
    "assert_private",
    "audit",
    "audit_power",
    "canary_audit",
    "certify",
    "loss_score",
    "one_run_audit",
    "plan_audit",
    "power_ceiling",
    "samples_needed",
    "statdp_patterns",
    "tradeoff_fixed_point",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
