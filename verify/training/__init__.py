"""Audits of training runs: lower bounds on a run's privacy from canaries inserted with a recorded
coin each (``one_run``: the tests of ``steinke`` and ``fdp``, certified numerics), a harness that
inserts the canaries, trains and scores (``harness``), and audit targets (``targets``)."""

from .harness import CanaryAuditReport, alignment_score, canary_audit, loss_score
from .one_run import GuessTest, OneRunReport, default_guesses, one_run_audit
from .targets import VARIANTS, GradientCanarySGD, Variant, dpsgd_canaries

__all__ = [
    "VARIANTS",
    "CanaryAuditReport",
    "GradientCanarySGD",
    "GuessTest",
    "OneRunReport",
    "Variant",
    "alignment_score",
    "canary_audit",
    "default_guesses",
    "dpsgd_canaries",
    "loss_score",
    "one_run_audit",
]
