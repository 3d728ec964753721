"""What certification and audits read off a claim besides its ordering."""

from __future__ import annotations

from accountant import ApproxDP, Guarantee


def claim_delta(claim: Guarantee) -> float:
    """The delta a claim is stated at: an (eps, delta) claim's delta, else 0."""
    return claim.delta_ if isinstance(claim, ApproxDP) else 0.0
