"""Claim checks on any round with text, however it was made (capture, solve, import, an uploaded
file): arithmetic claims through ``o3viz.verify.claims.check``, turned into trace checks by
``o3viz.verify.policy.claims_to_checks``.
"""

from __future__ import annotations

from o3viz.trace import Check, Round
from o3viz.verify.claims.check import check_text
from o3viz.verify.policy import claims_to_checks


def claim_checks(rnd: Round) -> tuple[list[Check], str]:
    """Claim checks of a round's text by step (by line when it has no steps), and a status:
    ``ok``, or a note on what was left unchecked."""
    spans = [(st.start, st.end) for st in rnd.steps] or None
    report = check_text(rnd.text or "", steps=spans)
    return claims_to_checks(report.claims), report.status


def ensure_claim_checks(trace) -> int:
    """Give every round with text that was never claim-checked (a trace saved by an older
    version, or built by hand) its claim checks; returns how many rounds were checked."""
    done = 0
    for rnd in trace.rounds:
        if not rnd.text or "claim_checker" in rnd.info or any(c.kind == "claim" for c in rnd.checks):
            continue
        checks, rnd.info["claim_checker"] = claim_checks(rnd)
        rnd.checks = checks + rnd.checks
        done += 1
    return done
