"""dpcert verify: white-box certification, black-box audits and the ``dpcert`` command."""

from .audit import AuditReport, TestPoint, assert_private, audit

__all__ = ["AuditReport", "TestPoint", "assert_private", "audit"]
