"""The verification layer's bookkeeping: turning claim and test results into trace ``Check``s,
a round's overall verdict, and the explicit map from verdicts to optimization actions (the
article's "transition matrix").

Transition matrix (first matching row wins):

=====================================  =================  =========================================
state of the round's checks            action             feedback in the next round's prompt
=====================================  =================  =========================================
last round (``max_rounds`` reached)    stop_max_rounds    none
the reply was cut short (not graded)   revise_cut_short   "it was cut off": shorter, then the answer
every test passes / answer correct     accept             none
a test fails or errors or times out    revise_tests       failing tests with their messages
final answer wrong (reference known)   revise_answer      "the final answer N is wrong" + claims
a claim is wrong                       revise_claims      each wrong claim with the correct value
nothing failed, confidence ≥ τ         accept_confident   none
nothing failed, confidence < τ         recheck            ask to re-derive and check backwards
=====================================  =================  =========================================

A failing check always outranks confidence: the model's own probability is only used when the
verifier found nothing either way (the article's two stopping conditions: a confidence threshold
and a maximum number of steps). A reply cut short (at its token limit or by hand:
``o3viz.verify.cut_short``) is never accepted, whatever its confidence or tests: it holds no
finished answer, so the loop cannot end on it as a success.
"""

from __future__ import annotations

from typing import Any

from o3viz.text.answers import AnswerSpan, answers_equivalent
from o3viz.trace import Check

FAILING = ("fail", "error", "timeout", "wrong")
PASSING = ("pass", "correct")


def claims_to_checks(claims: list[Any]) -> list[Check]:
    """``o3viz.verify.claims.check.Claim`` objects (or their dicts) as trace ``Check(kind="claim")`` records."""
    out = []
    for c in claims:
        d = c.to_dict() if hasattr(c, "to_dict") else dict(c)
        step, computed = d.get("step"), d.get("value", d.get("computed")) or None
        out.append(
            Check(
                kind="claim",
                name=f"{d.get('expression', '')} = {d.get('stated', '')}",
                verdict=d["verdict"],
                message=f"computed {computed or '?'}, stated {d.get('stated', '')}"
                if d["verdict"] == "wrong"
                else "",
                rule=d.get("rule"),
                step=step if isinstance(step, int) and step >= 0 else None,
                span=[int(d["start"]), int(d["end"])] if "start" in d else d.get("span"),
                expression=d.get("expression"),
                stated=d.get("stated"),
                computed=computed,
            )
        )
    return out


def code_verdict_to_checks(verdict: Any) -> list[Check]:
    """A ``CodeVerdict``'s per-test results as trace checks (kind ``test``)."""
    return [
        Check(kind="test", name=r.name, verdict=r.status, message=r.message or "") for r in verdict.results
    ]


def numbers_equal(a: str | None, b: str | None) -> bool:
    """Basic math equivalence of two answers (``o3viz.text.answers.answers_equivalent``)."""
    return a is not None and b is not None and answers_equivalent(a, b)


def answer_check(answer: AnswerSpan | None, reference: str | None, step: int | None = None) -> Check:
    """The final answer against the reference: correct / wrong, or unverifiable without one of them."""
    if answer is None or not reference:
        missing = "no final answer found" if answer is None else "no reference answer"
        return Check(
            kind="answer",
            name="final answer",
            verdict="unverifiable",
            message=missing,
            step=step,
            stated=answer.text if answer else None,
            computed=reference or None,
        )
    ok = answers_equivalent(answer.text, reference)
    return Check(
        kind="answer",
        name=f"final answer {answer.text}",
        verdict="correct" if ok else "wrong",
        message="" if ok else f"expected {reference}",
        rule=f"answer_{answer.method}",
        step=step,
        span=[answer.start, answer.end],
        stated=answer.text,
        computed=reference,
    )


def round_verdict(checks: list[Check]) -> str:
    """``fail`` if any check failed, ``pass`` if some passed and none failed, else ``unverifiable``."""
    if any(c.verdict in FAILING for c in checks):
        return "fail"
    return "pass" if any(c.verdict in PASSING for c in checks) else "unverifiable"


def choose_action(
    checks: list[Check],
    confidence: float | None,
    threshold: float,
    last_round: bool,
    cut_short: str | None = None,
) -> str:
    """The transition matrix above, as code. ``cut_short`` is why the reply was cut short
    (``o3viz.verify.cut_short.cut_short``), None where it ended on its own.

    >>> choose_action([], 0.99, 0.9, False)
    'accept_confident'
    >>> choose_action([], 0.99, 0.9, False, cut_short="stopped at the limit (160 tokens)")
    'revise_cut_short'
    """
    if last_round:
        return "stop_max_rounds"
    if cut_short is not None:  # before accept: a cut reply's passing tests or confidence prove nothing
        return "revise_cut_short"
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
    if action == "revise_cut_short":
        return (
            "Your previous reply was cut off before it finished. Solve it again more briefly, "
            "then state the final answer."
        )
    if action == "recheck":
        return "Check your answer by working backwards from it, then state the final answer again."
    return ""
