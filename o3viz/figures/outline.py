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

from o3viz.analysis.episodes import Episode
from o3viz.analysis.outline import Outline, OutlineCheck, OutlineStep
from o3viz.figures._style import STEP_TYPE_COLORS, STEP_TYPE_LABELS, VERDICT_COLORS, clip_label, readable

TEXT_CHARS = 110


def check_item(c: OutlineCheck, depth: int) -> dict:
    """The outline's row of one check, ``depth`` levels in."""
    return {
        "id": c.id,
        "depth": depth,
        "kind": "check",
        "text": clip_label(f"{c.name}: {c.message}" if c.message else c.name, TEXT_CHARS),
        "chip": c.verdict,
        "color": VERDICT_COLORS.get(c.verdict, "#9ca3af"),
        "title": f"{c.kind} {c.name}: {c.verdict}. {c.message}"[:600],
    }


def step_item(s: OutlineStep, depth: int = 1, first_wrong: str | None = None) -> dict:
    """The outline's row of one step: its type's colour, its kind's mark and a chip counting its
    checks (and saying "first wrong" where it is the step ``first_wrong``)."""
    marks = {"backtrack": f"↩ {s.parent}" if s.parent is not None else "↩", "self_check": "◆", "final": "★"}
    passed = sum(c.verdict in ("pass", "correct") for c in s.checks)
    failed = sum(c.verdict in ("fail", "wrong", "error", "timeout") for c in s.checks)
    return {
        "id": s.id,
        "depth": depth,
        "kind": "step",
        "index": s.index,
        "text": clip_label(readable(s.text), TEXT_CHARS),
        "type": STEP_TYPE_LABELS.get(s.type, s.type),
        "color": STEP_TYPE_COLORS.get(s.type, "#BBBBBB"),
        "mark": marks.get(s.kind, ""),
        "chip": " ".join(
            x
            for x in (
                "first wrong" if s.id == first_wrong else "",
                f"✓{passed}" if passed else "",
                f"✗{failed}" if failed else "",
            )
            if x
        ),
        "title": s.text[:600],
    }


def episode_item(ep: Episode, first: OutlineStep, is_open: bool) -> dict:
    """The outline's row of one episode of a long trace (``first``: its first step)."""
    marks = [f"↩{ep.backtracks}" if ep.backtracks else "", "◆" if ep.self_checks else ""]
    return {
        "id": ep.id,
        "depth": 1,
        "kind": "episode",
        "index": ep.index,
        "open": is_open,
        "text": clip_label(readable(first.text), TEXT_CHARS),
        "type": f"{ep.start}–{ep.end}",
        "color": STEP_TYPE_COLORS.get(ep.dominant, "#BBBBBB"),
        "mark": " ".join(m for m in marks if m),
        "chip": f"✗{ep.wrong}" if ep.wrong else (f"= {clip_label(ep.answer, 8)}" if ep.answer else ""),
        "chip_color": VERDICT_COLORS["fail"] if ep.wrong else "#475569",
        "title": f"Episode {ep.index}: steps {ep.start}–{ep.end} ({ep.length}), mostly "
        f"{STEP_TYPE_LABELS.get(ep.dominant, ep.dominant)}. Click to open its steps.",
    }


def round_items(r, steps_rows: list[dict]) -> list[dict]:
    """A round's rows: its head, ``steps_rows`` (what it holds), then its answer."""
    verdict = r.verdict or "no verdict"
    head = {
        "id": r.id,
        "depth": 0,
        "kind": "round",
        "text": f"Round {r.index} · {len(r.steps)} step{'s' if len(r.steps) != 1 else ''}",
        "chip": verdict,
        "color": VERDICT_COLORS.get(verdict, "#64748b"),
        "title": (r.feedback or "")[:600],
    }
    tail = []
    if r.answer is not None:
        tail.append(
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
    return [head, *steps_rows, *tail]


def episode_items(
    outline: Outline, episodes: list[Episode], open_index: int | None, first_wrong: str | None = None
) -> list[dict]:
    """The outline of a long trace: rounds → episodes, and only the open episode's steps and
    checks (so 5,000 steps make about fifty rows, plus the open episode's)."""
    rows: list[dict] = []
    for r in outline.rounds:
        body: list[dict] = []
        for ep in (e for e in episodes if e.round == r.index):
            body.append(episode_item(ep, r.steps[ep.lo], ep.index == open_index))
            if ep.index == open_index:
                for s in r.steps[ep.lo : ep.hi]:
                    body.append(step_item(s, 2, first_wrong))
                    body += [check_item(c, 3) for c in s.checks]
        body += [check_item(c, 1) for c in r.checks]
        rows += round_items(r, body)
    return rows


def outline_items(outline: Outline, first_wrong: str | None = None) -> list[dict]:
    """One dict per row, in reading order; ``depth`` 0 is a round (a collapsible group). The step
    ``first_wrong`` (an id) says so in its chip."""
    rows: list[dict] = []
    for r in outline.rounds:
        body: list[dict] = []
        for s in r.steps:
            body.append(step_item(s, 1, first_wrong))
            body += [check_item(c, 2) for c in s.checks]
        body += [check_item(c, 1) for c in r.checks]
        rows += round_items(r, body)
    return rows
