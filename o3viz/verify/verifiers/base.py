"""The one verifier interface: a ``Verifier`` reads a ``Solution`` (a question and its steps, from
a trace's round or a labelled dataset) and returns a ``Judgement``: per step ``ok``, ``wrong`` or
``unsure`` (``None``: not judged), a score where it has one, and provenance. ``add_verdicts`` stores
a verifier's judgements on a trace as ``VerdictRecord``s beside any other verifier's.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from o3viz.trace import Round, Step, Task, Trace
from o3viz.trace.core import timestamp
from o3viz.trace.verdicts import VerdictRecord, clip_name

_FLOAT_MAX = sys.float_info.max


@dataclass
class Solution:
    """What a verifier reads: the question, the steps' texts, and the round they came from (for
    verifiers that read more than text, like the code tests)."""

    question: str
    steps: list[str]
    round: Round | None = None
    task: Task | None = None

    @property
    def text(self) -> str:
        return "\n\n".join(self.steps)

    def spans(self) -> list[tuple[int, int]]:
        """``[start, end)`` of each step in ``text`` (steps joined by a blank line), or the round's
        own step offsets when the solution came from a round."""
        if self.round is not None and self.round.steps:
            return [(st.start, st.end) for st in self.round.steps]
        out, pos = [], 0
        for s in self.steps:
            out.append((pos, pos + len(s)))
            pos += len(s) + 2
        return out

    def as_round(self) -> Round:
        """The round itself, or a round built from the steps (for verifiers that read a round)."""
        if self.round is not None:
            return self.round
        steps = [Step(i, s, a, b) for i, (s, (a, b)) in enumerate(zip(self.steps, self.spans(), strict=True))]
        return Round(text=self.text, steps=steps)


@dataclass
class Judgement:
    """One verifier's verdicts on one solution's steps."""

    verdicts: list[str | None]  # (S,) ok | wrong | unsure | None (not judged)
    scores: list[float | None] = field(default_factory=list)  # (S,) or empty
    info: dict = field(default_factory=dict)  # per-solution details: replies, notes

    @property
    def first_wrong(self) -> int | None:
        return next((i for i, v in enumerate(self.verdicts) if v == "wrong"), None)


@runtime_checkable
class Verifier(Protocol):
    """``name`` (unique within a round's records) and ``provenance`` (kind, model, prompt,
    settings: stored with every record); ``verify`` judges one solution."""

    name: str
    provenance: dict

    def verify(self, sol: Solution) -> Judgement: ...


def verify_all(verifier: Verifier, sols: list[Solution]) -> list[Judgement]:
    """Judge many solutions: through the verifier's own ``verify_many`` (batched) where it has one."""
    many = getattr(verifier, "verify_many", None)
    return list(many(sols)) if many is not None else [verifier.verify(s) for s in sols]


def solution_of(rnd: Round, task: Task | None = None) -> Solution:
    """A round of a trace as a solution: its steps' texts, or its whole text as one step."""
    steps = [rnd.text[st.start : st.end] for st in rnd.steps] if rnd.steps else [rnd.text]
    return Solution(task.question if task else "", steps, rnd, task)


def record_of(verifier: Verifier, judgement: Judgement) -> VerdictRecord:
    """A judgement as the trace stores it, with the verifier's provenance and the time. A score
    that is not a finite number (which no trace file may hold) makes its step ``unsure``, never
    ``ok``, whichever verifier gave it; ``info["note"]`` says so."""
    info = {**verifier.provenance, **judgement.info, "created_at": timestamp()}
    verdicts, scores = list(judgement.verdicts), list(judgement.scores)
    bad = [i for i, x in enumerate(scores) if x is not None and not _finite(x)]
    for i in bad:
        scores[i] = None
        if i < len(verdicts):
            verdicts[i] = "unsure"
    if bad:
        info.setdefault("note", f"score is not a finite number at step {bad[0]}")
    return VerdictRecord(clip_name(verifier.name), verdicts, scores, info)


def _finite(x: object) -> bool:
    """A number a trace file may hold: NaN compares False and an int of any size compares exactly."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and -_FLOAT_MAX <= x <= _FLOAT_MAX


def add_verdicts(trace: Trace, verifier: Verifier, *, redo: bool = False) -> int:
    """Add ``verifier``'s record to every round with steps that has none by that name (``redo``:
    replace it); other verifiers' records are never touched. Returns how many rounds it judged."""
    name = clip_name(verifier.name)  # as the record stores it
    todo = [r for r in trace.rounds if r.steps and (redo or all(v.verifier != name for v in r.verdicts))]
    judged = verify_all(verifier, [solution_of(r, trace.task) for r in todo])
    for rnd, j in zip(todo, judged, strict=True):
        if len(j.verdicts) != len(rnd.steps):
            raise ValueError(
                f"verifier {verifier.name} gave {len(j.verdicts)} verdicts for {len(rnd.steps)} steps"
            )
        rnd.verdicts = [v for v in rnd.verdicts if v.verifier != name] + [record_of(verifier, j)]
    return len(todo)
