"""dpcert verify: white-box certification, black-box audits and the ``dpcert`` command."""

from ._sampling import MechanismError
from .audit import AuditReport, TestPoint, assert_private, audit
from .certify import Certificate, certify
from .neighbours import PatternSearch, RandomSearch, statdp_patterns

__all__ = [
    "AuditReport",
    "Certificate",
    "MechanismError",
    "PatternSearch",
    "RandomSearch",
    "TestPoint",
    "assert_private",
    "audit",
    "certify",
    "statdp_patterns",
]
