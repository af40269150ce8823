"""The running answer of a round: the answer each step's text states (no model needed, so it works
on every trace, run here or imported), and one series per step that combines it with the answers
of forced-answer probes (``o3viz.trace.answers`` stores both).

What a step *states* is an answer to the question, never an intermediate result
(``o3viz.analysis.answer_reading.read_step`` has the rules), and each reading carries how sure it
is, first rule that matches:

1. ``marked``: the step marks it (``\\boxed{…}``, ``#### N``, "Final answer: …", "the answer is
   …"), unless what it took is a bare delimiter or a verdict word ("the answer is correct");
2. a *conclusion* ("So/Thus/Therefore … <subject> = X" or "… is X", X answer-shaped): ``concluded``
   where its subject is what the question asks about, ``uncertain`` where the subject says nothing
   ("That's 9") or the question names nothing; no answer where the subject names another quantity
   ("So angle at E is 90 degrees" when the question asks for DE) or X is written in the unknown;
3. ``marked``: the round's *graded* answer (``round.checks``, kind ``answer``, with its span) is
   stated by the step that holds it, so the running answer ends where grading did.

The record keeps each step's reading in ``info["confidence"]`` (``marked``, ``concluded``,
``uncertain`` or null). ``RULE`` is the one-line statement the pages show: the dataset figures
count a flip only between two answers read with confidence (marked or concluded; a forced answer
always is); a flip that rests on an uncertain reading is counted apart and drawn as such.

Each stated answer is graded with the same reducer and equivalence as grading
(``o3viz.text.reference.reference_answer``, ``o3viz.text.answers.answers_equivalent``); with no
reference the answers are kept and ``correct`` is None (ungraded).

>>> stated_answer("So for 196 the count is (2+1)*(2+1) = 3*3 = 9.", "How many divisors does 196 have?")
('9', 44)
>>> stated_answer("Step 2: 196 = 14^2 = 2^2 * 7^2.") is None
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from o3viz.analysis.answer_reading import CONFIDENT, Confidence, question_target, read_step
from o3viz.text.answers import answers_equivalent, normalize_answer
from o3viz.text.reference import reference_answer
from o3viz.trace import Round, Trace
from o3viz.trace.answers import AnswerRecord, clip_answer

__all__ = [
    "RULE",
    "STATED",
    "STATED_RULES",
    "RunningStep",
    "add_stated",
    "confidences",
    "current_stated",
    "grade",
    "running_answer",
    "same_answer",
    "stated_answer",
    "stated_record",
]

STATED = "stated"  # the probe name of the stated-answer record
STATED_RULES = "marked+question-conclusion/2"  # recorded in the record's info; a new rule gets a new version
RULE = (
    'A step states an answer when it marks one (boxed, "the answer is") or concludes about what '
    "the question asks; flips are counted only between answers read with confidence."
)


def stated_answer(text: str, question: str | None = None) -> tuple[str, int] | None:
    """The answer ``text`` (one step) states and its offset in ``text``, or None (see
    ``o3viz.analysis.answer_reading.read_step``; ``question``: what the round answers)."""
    found = read_step(text, question_target(question))
    return (found.text, found.start) if found is not None else None


def grade(answer: str | None, reference: str | None) -> bool | None:
    """Whether ``answer`` equals ``reference`` (already reduced); None without one of them."""
    if answer is None or not reference:
        return None
    return answers_equivalent(answer, reference)


def stated_record(
    rnd: Round, reference: str | None, *, graded: bool = True, question: str | None = None
) -> AnswerRecord:
    """The ``stated`` record of ``rnd``: per step, the answer its text states, where, and how it
    was read (``info["confidence"]``), graded against ``reference`` (a source's reference: reduced
    here as grading reduces it); ``question``: what the round answers (without it no conclusion
    is more than uncertain); ``graded=False`` leaves out rule 3 (the text's own statements only)."""
    ref = reference_answer(reference)
    target = question_target(question)
    confidence: list[Confidence | None] = []
    rec = AnswerRecord(
        STATED, "stated", info={"rules": STATED_RULES, "reference": ref, "confidence": confidence}
    )
    for st in rnd.steps:
        found = read_step(rnd.text[st.start : st.end] or st.text, target)
        answer = clip_answer(found.text) if found else None
        rec.answers.append(answer)
        rec.positions.append(st.start + found.start if found else None)
        rec.correct.append(grade(answer, ref))
        confidence.append(found.confidence if found else None)
    if graded:
        _add_graded(rnd, rec, ref)
    return rec


def _add_graded(rnd: Round, rec: AnswerRecord, ref: str | None) -> None:
    """Rule 3: the graded answer at the step holding its span (the last answer check's), marked."""
    check = next((c for c in reversed(rnd.checks) if c.kind == "answer" and c.span and c.stated), None)
    if check is None or not rnd.steps:
        return
    at = check.span[0]
    k = next((st.index for st in rnd.steps if st.start <= at < max(st.end, st.start + 1)), None)
    if k is None or not 0 <= k < len(rec.answers):
        return
    rec.info["confidence"][k] = "marked"
    if same_answer(rec.answers[k], check.stated):
        return
    rec.answers[k] = clip_answer(check.stated)
    rec.positions[k] = at
    rec.correct[k] = grade(rec.answers[k], ref)


def confidences(rec: AnswerRecord) -> list[str | None]:
    """Per step, how ``rec``'s answer was read: a forced record's answers are all marked (a probe
    asked for the answer); a stated record of an older rule, without readings, reads uncertain."""
    if rec.kind == "forced":
        return ["marked" if a is not None else None for a in rec.answers]
    got = rec.info.get("confidence")
    if isinstance(got, list) and len(got) == len(rec.answers) and rec.info.get("rules") == STATED_RULES:
        return [c if c in ("marked", "concluded", "uncertain") else None for c in got]
    return ["uncertain" if a is not None else None for a in rec.answers]


def add_stated(trace: Trace) -> int:
    """Put a fresh ``stated`` record on every round of ``trace`` (replacing an older one); returns
    how many rounds changed."""
    changed = 0
    for rnd in trace.rounds:
        rec = stated_record(rnd, trace.task.reference, question=trace.task.question)
        old = next((i for i, r in enumerate(rnd.answers) if r.probe == STATED), None)
        if old is None:
            rnd.answers.insert(0, rec)
        elif rnd.answers[old] != rec:
            rnd.answers[old] = rec
        else:
            continue
        changed += 1
    return changed


@dataclass
class RunningStep:
    """The running answer after one step: the forced answer where the step was probed, else the
    latest stated answer carried forward (``source`` says which; None: no answer yet), and how
    that answer was read (``confidence``; a forced answer is ``marked``)."""

    step: int
    answer: str | None
    correct: bool | None
    source: Literal["stated", "forced"] | None
    stated: str | None = None  # what this step's own text states
    forced: str | None = None  # what the probe answered at this step's end
    p_reference: float | None = None
    confidence: Confidence | None = None  # of ``answer``: marked, concluded or uncertain

    @property
    def confident(self) -> bool:
        """Whether ``answer`` was read with confidence (marked or concluded): flips count here."""
        return self.confidence in CONFIDENT


def current_stated(rnd: Round, reference: str | None = None, question: str | None = None) -> AnswerRecord:
    """``rnd``'s ``stated`` record when it was made by the current rules (``STATED_RULES``), else
    one made here (an older record's readings are not carried over)."""
    stored = next((r for r in rnd.answers if r.probe == STATED), None)
    if stored is not None and stored.info.get("rules") == STATED_RULES:
        return stored
    return stated_record(rnd, reference, question=question)


def running_answer(
    rnd: Round, reference: str | None = None, probe: str | None = None, question: str | None = None
) -> list[RunningStep]:
    """One ``RunningStep`` per step of ``rnd``, in order. Stated answers come from the round's
    ``stated`` record (``current_stated``); forced ones from the record named ``probe``
    (default: the round's first ``forced`` record). Where a step was probed its forced answer is
    the running answer; elsewhere the latest stated answer is carried forward (a step that states
    nothing keeps what was last said), with its grade and reading."""
    stated = current_stated(rnd, reference, question)
    conf = confidences(stated)
    forced = next((r for r in rnd.answers if r.kind == "forced" and probe in (None, r.probe)), None)
    out: list[RunningStep] = []
    carried: tuple[str | None, bool | None, Confidence | None] = (None, None, None)
    for i in range(len(rnd.steps)):
        said = stated.answers[i]
        if said is not None:
            carried = (said, stated.correct[i], conf[i])  # type: ignore[assignment]
        f_ans = forced.answers[i] if forced is not None else None
        p_ref = forced.p_reference[i] if forced is not None and forced.p_reference else None
        if f_ans is not None:
            answer, correct, source, how = f_ans, forced.correct[i], "forced", "marked"  # type: ignore[union-attr]
        else:
            answer, correct, how = carried
            source = "stated" if answer is not None else None
        out.append(RunningStep(i, answer, correct, source, said, f_ans, p_ref, how))  # type: ignore[arg-type]
    return out


def same_answer(a: str | None, b: str | None) -> bool:
    """Whether two running answers are the same answer (both None, or equal once normalized)."""
    if a is None or b is None:
        return a is b
    return a == b or normalize_answer(a) == normalize_answer(b)
