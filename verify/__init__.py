"""dpcert verify: white-box certification, black-box audits and the ``dpcert`` command."""

from .audit import AuditReport, TestPoint, assert_private, audit
from .certify import Certificate, certify

__all__ = ["AuditReport", "Certificate", "TestPoint", "assert_private", "audit", "certify"]
