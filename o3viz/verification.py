"""The verification layer's bookkeeping: turning claim and test results into trace ``Check``s,
a round's overall verdict, and the explicit map from verdicts to optimization actions (the
article's "transition matrix").

Transition matrix (first matching row wins):

=====================================  =================  =========================================
state of the round's checks            action             feedback in the next round's prompt
=====================================  =================  =========================================
last round (``max_rounds`` reached)    stop_max_rounds    none
every test passes / answer correct     accept             none
a test fails or errors or times out    revise_tests       failing tests with their messages
final answer wrong (reference known)   revise_answer      "the final answer N is wrong" + claims
a claim is wrong                       revise_claims      each wrong claim with the correct value
nothing failed, confidence ≥ τ         accept_confident   none
nothing failed, confidence < τ         recheck            ask to re-derive and check backwards
=====================================  =================  =========================================

A failing check always outranks confidence: the model's own probability is only used when the
verifier found nothing either way (the article's two stopping conditions: a confidence threshold
and a maximum number of steps).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from o3viz.trace import Check

FAILING = ("fail", "error", "timeout", "wrong")
PASSING = ("pass", "correct")
_NUMBER = re.compile(r"-?\$?\d[\d,]*(?:\.\d+)?")
_ANSWER_CUE = re.compile(r"(?:answer is|answer:|####|\\boxed\{)\s*\$?\s*(-?[\d,]*\.?\d+)", re.I)


def claims_to_checks(claims: list[Any]) -> list[Check]:
    """``o3viz.claims.Claim`` objects as trace checks (kind ``claim``)."""
    return [
        Check(
            kind="claim",
            name=f"{c.expression} = {c.stated}",
            verdict=c.verdict,
            rule=c.rule,
            step=c.step if c.step >= 0 else None,
            span=[c.start, c.end],
            expression=c.expression,
            stated=c.stated,
            computed=c.value or None,
            message="" if c.verdict != "wrong" else f"computed {c.value}, stated {c.stated}",
        )
        for c in claims
    ]


def code_verdict_to_checks(verdict: Any) -> list[Check]:
    """A ``CodeVerdict``'s per-test results as trace checks (kind ``test``)."""
    return [
        Check(kind="test", name=r.name, verdict=r.status, message=r.message or "") for r in verdict.results
    ]


def final_number(text: str) -> str | None:
    """The final answer of a math text: after "The answer is"/"####"/\\boxed, else the last number."""
    cues = _ANSWER_CUE.findall(text)
    if cues:
        return cues[-1].replace(",", "")
    nums = _NUMBER.findall(text)
    return nums[-1].replace(",", "").replace("$", "") if nums else None


def numbers_equal(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return False
    try:
        return Fraction(a.replace(",", "")) == Fraction(b.replace(",", ""))
    except (ValueError, ZeroDivisionError):
        return a.strip() == b.strip()


def answer_check(answer: str | None, reference: str | None) -> Check | None:
    """The final answer against a known reference; None when there is no reference."""
    if reference is None:
        return None
    if answer is None:
        return Check("answer", "final answer", "wrong", message="no final answer found")
    ok = numbers_equal(answer, reference)
    return Check(
        "answer",
        f"final answer {answer}",
        "correct" if ok else "wrong",
        message="" if ok else f"expected {reference}",
        stated=answer,
        computed=reference,
    )


def round_verdict(checks: list[Check]) -> str:
    """``fail`` if any check failed, ``pass`` if some passed and none failed, else ``unverifiable``."""
    if any(c.verdict in FAILING for c in checks):
        return "fail"
    return "pass" if any(c.verdict in PASSING for c in checks) else "unverifiable"


def choose_action(checks: list[Check], confidence: float | None, threshold: float, last_round: bool) -> str:
    """The transition matrix above, as code."""
    if last_round:
        return "stop_max_rounds"
    if any(c.kind == "test" and c.verdict in FAILING for c in checks):
        return "revise_tests"
    if any(c.kind == "answer" and c.verdict == "wrong" for c in checks):
        return "revise_answer"
    if any(c.kind == "claim" and c.verdict == "wrong" for c in checks):
        return "revise_claims"
    if any(c.verdict in PASSING for c in checks if c.kind in ("test", "answer")):
        return "accept"
    return "accept_confident" if (confidence or 0.0) >= threshold else "recheck"


STOP_ACTIONS = ("accept", "accept_confident", "stop_max_rounds")


def feedback_for(action: str, checks: list[Check], answer: str | None, max_items: int = 4) -> str:
    """The optimization layer's feedback text for ``action`` (empty when the loop stops)."""
    if action == "revise_tests":
        bad = [c for c in checks if c.kind == "test" and c.verdict in FAILING][:max_items]
        lines = [f"- {c.name}: {c.verdict}" + (f" ({c.message[:200]})" if c.message else "") for c in bad]
        return "Your code failed these tests:\n" + "\n".join(lines)
    if action in ("revise_answer", "revise_claims"):
        lines = [] if action == "revise_claims" else [f"Your final answer {answer} is wrong."]
        for c in [c for c in checks if c.kind == "claim" and c.verdict == "wrong"][:max_items]:
            lines.append(f"- You wrote {c.expression} = {c.stated}, but {c.expression} = {c.computed}.")
        return "\n".join(lines) or "Your final answer is wrong."
    if action == "recheck":
        return "Check your answer by working backwards from it, then state the final answer again."
    return ""
