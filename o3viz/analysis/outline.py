"""The reasoning outline: what happened in a trace as rounds → steps → checks, the one model behind
Inspect's reasoning map, its outline list and Compare's side-by-side maps.

Each step carries its Thought Anchors type (the trace's own, or ``o3viz.text.classify`` when the
trace has none, flagged ``inferred``), its kind (step, backtrack, self_check, final), the step it
branches from, the checks that judged it and, when the trace has them, an importance score and the
steps it depends on. Those two come from a later analysis (``Step.importance``,
``Step.depends_on``) and are read defensively: a missing, non-numeric or out-of-range value is
treated as absent, never as an error.

Ids are the run graph's (``o3viz.analysis.graph``): ``round:R``, ``step:R:I``, ``check:R:J``,
``answer:R``, so a selection means the same node in the map, the outline and the details.

>>> from o3viz.trace import Round, Step, Task, Trace
>>> t = Trace(Task("2+2?"), [Round(text="2+2=4.", steps=[Step(0, "2+2=4.", 0, 6)], answer="4")])
>>> o = build_outline(t)
>>> [s.id for s in o.rounds[0].steps], o.rounds[0].steps[0].type
(['step:0:0'], 'active_computation')
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

from o3viz.text.classify import TYPES, classify_step
from o3viz.trace import Round, Trace
from o3viz.trace.ids import make_id
from o3viz.trace.importance import step_view

UNTYPED = "untyped"
GOOD = ("pass", "correct")
BAD = ("fail", "wrong", "error", "timeout")


@dataclass
class OutlineCheck:
    id: str  # check:R:J
    name: str
    verdict: str
    kind: str  # test | claim | answer
    message: str = ""
    step: int | None = None  # the step it judged, where known


@dataclass
class OutlineStep:
    id: str  # step:R:I
    round: int
    index: int
    text: str
    type: str  # a Thought Anchors type (o3viz.text.classify.TYPES) or "untyped"
    kind: str = "step"  # step | backtrack | self_check | final
    parent: int | None = None  # the step a backtrack branches from
    inferred: bool = False  # type classified here, not recorded in the trace
    importance: float | None = None  # 0..1 where the trace has it
    depends_on: list[int] = field(default_factory=list)
    confidence: float | None = None  # mean token probability, where tokens were recorded
    decision_points: int = 0
    checks: list[OutlineCheck] = field(default_factory=list)

    @property
    def verdict(self) -> str | None:
        """The worst verdict of the step's checks (fail beats pass), or None."""
        verdicts = [c.verdict for c in self.checks]
        return next((v for v in (*BAD, *GOOD) if v in verdicts), None)


@dataclass
class OutlineRound:
    id: str  # round:R
    index: int
    verdict: str | None
    answer: str | None
    action: str | None
    feedback: str | None
    steps: list[OutlineStep] = field(default_factory=list)
    checks: list[OutlineCheck] = field(default_factory=list)  # checks not tied to one step

    @property
    def answer_id(self) -> str:
        return make_id("answer", self.index)


@dataclass
class Outline:
    question: str
    answer: str | None
    verdict: str | None
    rounds: list[OutlineRound] = field(default_factory=list)

    @property
    def steps(self) -> list[OutlineStep]:
        return [s for r in self.rounds for s in r.steps]

    @property
    def has_importance(self) -> bool:
        return any(s.importance is not None for s in self.steps)

    @property
    def has_dependencies(self) -> bool:
        return any(s.depends_on for s in self.steps)

    def types(self) -> list[str]:
        """The step types present, in Thought Anchors order (``untyped`` last)."""
        present = {s.type for s in self.steps}
        return [t for t in (*TYPES, UNTYPED) if t in present]

    def label(self, node: str, n: int = 60) -> str:
        """``id · text`` for pick lists (one line, at most ``n`` characters of text)."""
        item = self.find(node)
        if isinstance(item, OutlineRound):
            text = item.answer if node == item.answer_id else f"round {item.index} ({item.verdict or '—'})"
        else:
            text = getattr(item, "text", None) or getattr(item, "name", "")
        text = " ".join(str(text or "").split())
        return f"{node} · {text[: n - 1]}…" if len(text) > n else f"{node} · {text}"

    def find(self, node: str) -> OutlineStep | OutlineCheck | OutlineRound | None:
        """The item with id ``node``; an ``answer:R`` id finds its round."""
        for r in self.rounds:
            if node in (r.id, r.answer_id):
                return r if node == r.id or r.answer is not None else None
            for s in r.steps:
                if s.id == node:
                    return s
                hit = next((c for c in s.checks if c.id == node), None)
                if hit is not None:
                    return hit
            hit = next((c for c in r.checks if c.id == node), None)
            if hit is not None:
                return hit
        return None


def search_outline(outline: Outline, query: str, limit: int = 50) -> list[str]:
    """Ids of steps, checks and answers whose text or id contains ``query`` (case-insensitive)."""
    q = query.strip().lower()
    out: list[str] = []
    if not q:
        return out
    for r in outline.rounds:
        items = [(s.id, s.text) for s in r.steps]
        items += [(c.id, f"{c.name} {c.message}") for s in r.steps for c in s.checks]
        items += [(c.id, f"{c.name} {c.message}") for c in r.checks]
        items += [(r.answer_id, r.answer or "")] if r.answer is not None else []
        out += [i for i, text in items if q in i or q in text.lower()]
    return out[:limit]


def _importance(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value) if 0.0 <= value <= 1.0 else None


def _depends(value, index: int) -> list[int]:
    if not isinstance(value, list | tuple):
        return []
    return sorted(
        {int(d) for d in value if isinstance(d, int) and not isinstance(d, bool) and 0 <= d < index}
    )


def _confidence(rnd: Round, t0: int, t1: int) -> float | None:
    probs = [math.exp(t.logprob) for t in rnd.tokens[t0:t1] if t.logprob is not None]
    return sum(probs) / len(probs) if probs else None


def _round(rnd: Round) -> OutlineRound:
    out = OutlineRound(
        make_id("round", rnd.index), rnd.index, rnd.verdict, rnd.answer, rnd.action, rnd.feedback
    )
    n, indices = len(rnd.steps), {s.index for s in rnd.steps}
    dps = sorted(dp.token_index for dp in rnd.decision_points)
    imp, deps = step_view(rnd.importance, n)  # the round's importance records, scaled to [0, 1]
    for k, s in enumerate(rnd.steps):
        recorded = s.type if s.type in TYPES else None
        out.steps.append(
            OutlineStep(
                make_id("step", rnd.index, s.index),
                rnd.index,
                s.index,
                s.text,
                recorded or (classify_step(s.text, s.index, n) if s.text.strip() else UNTYPED),
                s.kind,
                s.parent if s.parent in indices else None,
                inferred=recorded is None,
                importance=_importance(imp[k]),
                depends_on=[d for d in _depends(deps[k], s.index) if d in indices],
                confidence=_confidence(rnd, s.token_start, s.token_end),
                decision_points=bisect.bisect_left(dps, s.token_end) - bisect.bisect_left(dps, s.token_start),
            )
        )
    by_index = {s.index: s for s in out.steps}
    for j, c in enumerate(rnd.checks):
        oc = OutlineCheck(make_id("check", rnd.index, j), c.name, c.verdict, c.kind, c.message, c.step)
        (by_index[c.step].checks if c.step in by_index else out.checks).append(oc)
    return out


def build_outline(trace: Trace) -> Outline:
    """Rounds → steps → checks of ``trace`` (see the module docstring)."""
    final = trace.final if trace.rounds else None
    return Outline(
        trace.task.question,
        final.answer if final else None,
        final.verdict if final else None,
        [_round(r) for r in trace.rounds],
    )
