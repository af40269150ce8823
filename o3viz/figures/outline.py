"""The outline beside the reasoning map: plain rows (rounds → steps → checks, then each round's
answer) for an indented, collapsible list, coloured with the map's palette. Text stays text: the
page's list renders every field with ``textContent``, never as HTML.

>>> from o3viz.trace import Round, Step, Task, Trace
>>> from o3viz.analysis.outline import build_outline
>>> t = Trace(Task("2+2?"), [Round(text="2+2=4.", steps=[Step(0, "2+2=4.", 0, 6)], answer="4")])
>>> [(r["id"], r["depth"]) for r in outline_items(build_outline(t))]
[('round:0', 0), ('step:0:0', 1), ('answer:0', 1)]
"""

from __future__ import annotations

from o3viz.analysis.outline import Outline, OutlineCheck, OutlineStep
from o3viz.figures._style import STEP_TYPE_COLORS, STEP_TYPE_LABELS, VERDICT_COLORS, clip_label, readable

TEXT_CHARS = 110


def _check_row(c: OutlineCheck, depth: int) -> dict:
    return {
        "id": c.id,
        "depth": depth,
        "kind": "check",
        "text": clip_label(f"{c.name}: {c.message}" if c.message else c.name, TEXT_CHARS),
        "chip": c.verdict,
        "color": VERDICT_COLORS.get(c.verdict, "#9ca3af"),
        "title": f"{c.kind} {c.name}: {c.verdict}. {c.message}"[:600],
    }


def _step_row(s: OutlineStep) -> dict:
    marks = {"backtrack": f"↩ {s.parent}" if s.parent is not None else "↩", "self_check": "◆", "final": "★"}
    passed = sum(c.verdict in ("pass", "correct") for c in s.checks)
    failed = sum(c.verdict in ("fail", "wrong", "error", "timeout") for c in s.checks)
    return {
        "id": s.id,
        "depth": 1,
        "kind": "step",
        "index": s.index,
        "text": clip_label(readable(s.text), TEXT_CHARS),
        "type": STEP_TYPE_LABELS.get(s.type, s.type),
        "color": STEP_TYPE_COLORS.get(s.type, "#BBBBBB"),
        "mark": marks.get(s.kind, ""),
        "chip": " ".join(x for x in (f"✓{passed}" if passed else "", f"✗{failed}" if failed else "") if x),
        "title": s.text[:600],
    }


def outline_items(outline: Outline) -> list[dict]:
    """One dict per row, in reading order; ``depth`` 0 is a round (a collapsible group)."""
    rows: list[dict] = []
    for r in outline.rounds:
        verdict = r.verdict or "no verdict"
        rows.append(
            {
                "id": r.id,
                "depth": 0,
                "kind": "round",
                "text": f"Round {r.index} · {len(r.steps)} step{'s' if len(r.steps) != 1 else ''}",
                "chip": verdict,
                "color": VERDICT_COLORS.get(verdict, "#64748b"),
                "title": (r.feedback or "")[:600],
            }
        )
        for s in r.steps:
            rows.append(_step_row(s))
            rows += [_check_row(c, 2) for c in s.checks]
        rows += [_check_row(c, 1) for c in r.checks]
        if r.answer is not None:
            rows.append(
                {
                    "id": r.answer_id,
                    "depth": 1,
                    "kind": "answer",
                    "text": "answer: " + clip_label(readable(r.answer), TEXT_CHARS - 8),
                    "chip": verdict,
                    "color": VERDICT_COLORS.get(verdict, "#64748b"),
                    "title": r.answer[:600],
                }
            )
    return rows
