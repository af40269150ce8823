"""Checks on an imported round: arithmetic claims (through ``o3viz.claims`` when it is installed)
and the final answer against the reference. ``claims_to_checks`` is reusable by any producer of
rounds.
"""

from __future__ import annotations

from typing import Any

from o3viz.importers.answers import AnswerSpan, answers_equivalent
from o3viz.trace import Check, Round


def claims_to_checks(claims: list[Any]) -> list[Check]:
    """``o3viz.claims.Claim`` objects (or their dicts) as trace ``Check(kind="claim")`` records."""
    out = []
    for c in claims:
        d = c.to_dict() if hasattr(c, "to_dict") else dict(c)
        step = d.get("step")
        out.append(
            Check(
                kind="claim",
                name=f"{d.get('expression', '')} = {d.get('stated', '')}",
                verdict=d["verdict"],
                message=f"computed {d.get('value') or d.get('computed') or '?'}",
                rule=d.get("rule"),
                step=step if isinstance(step, int) and step >= 0 else None,
                span=[int(d["start"]), int(d["end"])] if "start" in d else d.get("span"),
                expression=d.get("expression"),
                stated=d.get("stated"),
                computed=d.get("value", d.get("computed")) or None,
            )
        )
    return out


def claim_checks(rnd: Round) -> tuple[list[Check], str]:
    """Claim checks of a round's text by step, and a status: ``ok``, or why none were run."""
    try:
        from o3viz.claims import check_claims
    except ImportError as exc:  # the claim checker is an optional part of the package
        return [], f"claim checker unavailable ({exc})"
    spans = [(st.start, st.end) for st in rnd.steps]
    return claims_to_checks(check_claims(mask_digitless(rnd.text, spans), steps=spans)), "ok"


def mask_digitless(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with every step that holds no digit blanked to spaces (newlines kept, so offsets and
    lines stay put). Arithmetic claims need numbers; skipping prose makes long traces 1.5x faster."""
    parts, pos = [], 0
    for s, e in spans:
        chunk = text[s:e]
        if not any(c.isdigit() for c in chunk):
            parts += [text[pos:s], "".join("\n" if c == "\n" else " " for c in chunk)]
            pos = e
    parts.append(text[pos:])
    return "".join(parts)


def answer_check(answer: AnswerSpan | None, reference: str | None, step: int | None) -> Check:
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
    verdict = "correct" if answers_equivalent(answer.text, reference) else "wrong"
    return Check(
        kind="answer",
        name="final answer",
        verdict=verdict,
        message=f"answer {answer.text!r} ({answer.method}) vs reference {reference!r}",
        rule=f"answer_{answer.method}",
        step=step,
        span=[answer.start, answer.end],
        stated=answer.text,
        computed=reference,
    )
