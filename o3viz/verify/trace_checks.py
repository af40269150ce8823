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


# What each check tested, in words: the badge says what the verdict means for *this* rule, so a
# final answer that merely agrees with the chain before it never wears "correct".
_TESTED = {
    "final_answer_mismatch": (
        "consistent with the arithmetic chain",
        "contradicts the last result before it",
    ),
    "inconsistent_quantity": ("one value for the quantity", "one quantity stated with two values"),
    "chain_mismatch": ("both sides of the chain agree", "the two sides of the chain disagree"),
    "rounding": ("the arithmetic holds after rounding", "the arithmetic is wrong"),
}
_BADGE = {"correct": "holds", "wrong": "wrong", "pass": "pass", "fail": "fail"}


def check_label(check) -> tuple[str, str]:
    """(badge word, what the check tested) for one check, e.g. ``("consistent", "consistent with
    the arithmetic chain")`` for a final answer that agrees with the last result before it."""
    v, rule = check.verdict, getattr(check, "rule", None) or ""  # a Check, or an outline's check
    if v in ("unverifiable", "error", "timeout"):
        return v if v != "unverifiable" else "unchecked", {
            "unverifiable": "could not be checked",
            "error": "the test raised an error",
            "timeout": "the test ran out of time",
        }[v]
    if check.kind == "answer":
        return (
            ("correct", "matches the reference")
            if v == "correct"
            else ("wrong", "differs from the reference")
        )
    if check.kind == "test":
        return v, f"test {'passed' if v == 'pass' else 'failed'}"
    if check.kind == "claim":
        right, wrong = _TESTED.get(rule, ("the arithmetic holds", "the arithmetic is wrong"))
        if v == "correct":
            return ("consistent" if rule == "final_answer_mismatch" else "holds"), right
        return "wrong", wrong
    return _BADGE.get(v, v), v
