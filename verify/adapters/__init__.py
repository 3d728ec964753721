"""Third-party mechanisms as auditable samplers: diffprivlib, OpenDP and PyDP.

Each adapter has ``sample(data, rng, size)`` (so ``verify.audit`` draws many outputs per call
without ``vectorised=True``) and ``__call__(data, rng)`` for one output; ``seeded`` says whether the
audit's generator drives the library's noise (diffprivlib: yes; OpenDP and PyDP: no, they draw
from random sources of their own), and ``seeding`` says how, in a sentence the audit report prints
when the outputs do not follow the seed. ``declared(...)`` returns the guarantee the library
declares: a claim to audit, never a fact the audit trusts. The libraries are imported only when an
adapter is built, so ``import verify.adapters`` works without them.
"""

from __future__ import annotations

from .base import Adapter
from .diffprivlib import DiffprivlibMechanism, DiffprivlibTool
from .opendp import OpenDPMeasurement
from .pydp import PyDPAlgorithm, PyDPMechanism

__all__ = ["Adapter", "DiffprivlibMechanism", "DiffprivlibTool", "OpenDPMeasurement", "PyDPAlgorithm",
           "PyDPMechanism"]
