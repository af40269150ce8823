"""The running-answer lane under the reasoning map and the episode overview: when did it know?

Plain data in (``AnswerLane``: per step the answer its text states, the answer a probe forced,
whether each is right, the probability of the reference; marks where the running answer was
first right, each loss, each regain, and its final value), drawn by ``o3viz.figures.map_answers`` on a row of its
own that shares the map's x axis, so every mark sits under its step. Right is the verdict green, wrong
the verdict red and an answer without a reference the ungraded grey, on every page; shapes differ
too (● stated, ◆ forced; ▲ first right or regained, ▼ lost, ■ final). The probability of the
reference is a thin line on its own 0–1 axis, where it was probed. A forced answer from a model
other than the trace's says so in its hover and in the lane's legend. A turn that rests on an
uncertain reading of the text (``o3viz.analysis.answer_reading``) is drawn faint and says so on hover;
the dataset figures do not count it.

``lane_of(trace)`` builds the lane from ``o3viz.analysis.running_answer``: the stated answers
are computed when the trace has none stored, so every trace, imported or run here, has a lane.

>>> from o3viz.trace import Round, Step, Task, Trace
>>> texts = ["So x = 4.", "So x = 5 instead.", "So the answer is 4."]
>>> steps, at = [], 0
>>> for i, t in enumerate(texts):
...     steps.append(Step(index=i, start=at, end=at + len(t), text=t)); at += len(t) + 1
>>> lane = lane_of(Trace(Task("q", reference="4"), [Round(text=" ".join(texts), steps=steps)]))
>>> [(m.kind, m.step) for m in lane.marks]
[('first_correct', 'step:0:0'), ('loss', 'step:0:1'), ('regain', 'step:0:2'), ('final', 'step:0:2')]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from o3viz.analysis.running_answer import confidences, current_stated, running_answer
from o3viz.figures._style import clip_label, readable
from o3viz.trace import Trace
from o3viz.trace.ids import make_id

MarkKind = Literal["first_correct", "loss", "regain", "final"]
OVERVIEW_POINTS = 60  # answers an overview draws per source at most (``changes``)

__all__ = ["AnswerLane", "LaneMark", "LanePoint", "answer_facts", "changes", "lane_marks", "lane_of"]


@dataclass(frozen=True)
class LanePoint:
    """One step's answers: ``step`` is its node id (``step:R:I``), placed at its step's x."""

    step: str
    stated: str | None = None  # what the step's text states
    stated_correct: bool | None = None  # None: no reference (ungraded)
    forced: str | None = None  # what a probe answered when made to answer after the step
    forced_correct: bool | None = None
    p_reference: float | None = None  # probability of the reference under the probe's suffix
    stated_source: str = ""  # for the hover: "stated in step 14"
    forced_source: str = ""  # "forced after step 14 by SmolLM2 (not the trace's model)"


@dataclass(frozen=True)
class LaneMark:
    """A turn of the running answer at step ``step``: first right, lost, right again, or final."""

    kind: MarkKind
    step: str
    answer: str | None
    correct: bool | None
    uncertain: bool = False  # it rests on an uncertain reading (not counted in the dataset figures)


@dataclass
class AnswerLane:
    """A trace's running answer, per step, and its marks (see the module docstring)."""

    points: list[LanePoint] = field(default_factory=list)
    marks: list[LaneMark] = field(default_factory=list)
    reference: str | None = None  # the reference answer, as graded (None: ungraded)
    forced_by: str | None = None  # the model that forced answers, where a probe ran
    other_model: bool = False  # that model is not the one that wrote the trace

    @property
    def has_forced(self) -> bool:
        return any(p.forced is not None for p in self.points)

    @property
    def has_p_reference(self) -> bool:
        return any(p.p_reference is not None for p in self.points)

    def mark(self, kind: MarkKind) -> LaneMark | None:
        """The first mark of ``kind``, or None."""
        return next((m for m in self.marks if m.kind == kind), None)


def lane_marks(series: Sequence[tuple]) -> list[LaneMark]:
    """The marks of a running answer given as (step id, answer, correct[, confident]) per step, in
    order: the first right step, each right → wrong (a loss) and wrong → right after it (a regain),
    counted over graded steps, and the final answer at the last step. A mark whose answer, or the
    graded answer before it, was not read with confidence is ``uncertain`` (the dataset figures
    count only the others: ``o3viz.analysis.running_answer.RULE``).

    >>> s = [("a", None, None), ("b", "5", False), ("c", "4", True), ("d", "5", False), ("e", "4", True)]
    >>> [(m.kind, m.step) for m in lane_marks(s)]
    [('first_correct', 'c'), ('loss', 'd'), ('regain', 'e'), ('final', 'e')]
    """
    out: list[LaneMark] = []
    prev: bool | None = None
    prev_sure = seen_right = False
    for step, answer, correct, *rest in series:
        sure = rest[0] if rest else True
        if correct is True and not seen_right:
            out.append(LaneMark("first_correct", step, answer, True, not sure))
            seen_right = True
        elif correct is False and prev is True:
            out.append(LaneMark("loss", step, answer, False, not (sure and prev_sure)))
        elif correct is True and prev is False and seen_right:
            out.append(LaneMark("regain", step, answer, True, not (sure and prev_sure)))
        if correct is not None:
            prev, prev_sure = correct, sure
    if series and series[-1][1] is not None:
        step, answer, correct, *rest = series[-1]
        out.append(LaneMark("final", step, answer, correct, not (rest[0] if rest else True)))
    return out


def _model_name(model: object) -> str:
    return clip_label(str(model or "a model").rstrip("/").rsplit("/", 1)[-1], 32)


def lane_of(trace: Trace, probe: str | None = None) -> AnswerLane | None:
    """The lane of ``trace``'s rounds: stated answers (stored, or computed here), the forced ones
    of ``probe`` (default: each round's first forced record) and the marks of each round's running
    answer (``o3viz.analysis.running_answer``; the final round's first right step is the
    ``first_correct_step`` of ``o3viz.analysis.answer_figures``). None for a trace without steps."""
    if not any(r.steps for r in trace.rounds):
        return None
    lane = AnswerLane()
    ref, question = trace.task.reference, trace.task.question
    for rnd in trace.rounds:
        stated = current_stated(rnd, ref, question)
        how = confidences(stated)
        lane.reference = lane.reference or stated.info.get("reference") or None
        forced = next((r for r in rnd.answers if r.kind == "forced" and probe in (None, r.probe)), None)
        by = ""
        if forced is not None:
            lane.forced_by = _model_name(forced.info.get("model") or forced.probe)
            lane.other_model = lane.other_model or bool(forced.info.get("other_model"))
            by = f" by {lane.forced_by}" + (
                " (not the trace's model)" if forced.info.get("other_model") else ""
            )
        series = running_answer(rnd, ref, probe, question)
        for k, (st, run) in enumerate(zip(rnd.steps, series, strict=True)):
            sid = make_id("step", rnd.index, st.index)
            f_ok = forced.correct[k] if forced is not None and run.forced is not None else None
            if run.stated is None and run.forced is None and run.p_reference is None:
                continue
            lane.points.append(
                LanePoint(
                    sid, run.stated, stated.correct[k], run.forced, f_ok, run.p_reference,
                    f"stated in step {st.index}" + (" (an uncertain reading)" if how[k] == "uncertain" else ""),
                    f"forced after step {st.index}{by}",
                )
            )  # fmt: skip
        lane.marks += lane_marks(
            [
                (make_id("step", rnd.index, st.index), s.answer, s.correct, s.confident)
                for st, s in zip(rnd.steps, series, strict=True)
            ]
        )
    return lane


def answer_facts(lane: AnswerLane | None) -> dict[str, list[str]]:
    """The details panel's lines on each step's answers, by step id: what its text states and what
    the probe answered after it, each with its grade (and who forced it).

    >>> answer_facts(AnswerLane([LanePoint("step:0:3", "42", True, stated_source="stated in step 3")]))
    {'step:0:3': ['stated in step 3: 42 · right']}
    """
    word = {True: "right", False: "wrong", None: "ungraded"}
    out: dict[str, list[str]] = {}
    for p in lane.points if lane is not None else []:
        lines = []
        if p.stated is not None:
            lines.append(
                f"{p.stated_source}: {clip_label(readable(p.stated), 80)} · {word[p.stated_correct]}"
            )
        if p.forced is not None:
            lines.append(
                f"{p.forced_source}: {clip_label(readable(p.forced), 80)} · {word[p.forced_correct]}"
            )
        if p.p_reference is not None:
            lines.append(f"p(reference) after this step: {p.p_reference:.2f}")
        out[p.step] = lines
    return out


def changes(points: Sequence[LanePoint], source: str, cap: int = OVERVIEW_POINTS) -> list[LanePoint]:
    """The points where ``source``'s grade turns (right ↔ wrong; for ungraded answers, where the
    answer changes), at most ``cap`` of them, evenly spread: what an overview of thousands of steps
    draws, so a repeated answer is one mark, not hundreds.

    >>> pts = [LanePoint("a", "4", True), LanePoint("b", "4", True), LanePoint("c", "5", False)]
    >>> [p.step for p in changes(pts, "stated")]
    ['a', 'c']
    """
    out, last = [], object()
    for p in points:
        answer, correct = getattr(p, source), getattr(p, f"{source}_correct")
        said = correct if correct is not None else answer
        if answer is not None and said != last:
            out.append(p)
            last = said
    if len(out) > cap:
        out = [out[round(k * (len(out) - 1) / (cap - 1))] for k in range(cap)]
    return out
