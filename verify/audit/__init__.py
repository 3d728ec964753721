"""Black-box audits (see ``core``): draw outputs on neighbouring inputs (``sampling``), choose
rejection regions on scores of featurised outputs (``features``, ``scores``, ``regions``), bound
their errors (``stats``) and report (``reports``); plan the draws an audit needs (``power``)."""

from .core import assert_private, audit
from .power import AuditPlan, audit_power, plan_audit, power_ceiling, samples_needed, tradeoff_fixed_point
from .reports import AuditReport, Finding, TestPoint
from .sampling import MechanismError

__all__ = ["AuditPlan", "AuditReport", "Finding", "MechanismError", "TestPoint", "assert_private", "audit",
           "audit_power", "plan_audit", "power_ceiling", "samples_needed", "tradeoff_fixed_point"]
