"""The running answer of a round: the answer each step's text states (no model needed, so it works
on every trace, run here or imported), and one series per step that combines it with the answers
of forced-answer probes (``o3viz.trace.answers`` stores both).

What a step *states* (``stated_answer``), first rule that matches:

1. a *strong* answer (``o3viz.text.answers.extract_strong_answer``): ``\\boxed{…}``, ``#### N``,
   "Final answer: …", "the answer is …", a GSM8K line "A: N" — the last one in the step;
2. a *conclusion*: the step's last sentence opens with a concluding word ("So", "Thus",
   "Therefore", "Hence", "Finally", "In total", "That's", "We get", "The total/result …") and
   ends with "= X", "is X" or "equals X" (at most two unit words and a full stop after it), where X
   is answer-shaped: a number, a fraction, a math span (its right-hand side) or a formula written
   without spaces (``\\frac{14}{3}``, ``2^{10}``).

3. the round's *graded* answer: the answer its answer check graded (``round.checks``, kind
   ``answer``, with its span) is stated by the step that holds it, whatever that step's text
   looks like (a final ``\\[ … = 3\\sqrt{13} \\]``), so the running answer ends where grading did.

Nothing else is an answer: a number in the middle of a step ("16 - 3 = 13 eggs left, and …"), a
step that does not conclude ("196 = 14^2", "Step 2: 3*3 = 9") or a question ("is the answer
9?") states none. That keeps intermediate results out of the running answer.

Each stated answer is graded with the same reducer and equivalence as grading
(``o3viz.text.reference.reference_answer``, ``o3viz.text.answers.answers_equivalent``); with no
reference the answers are kept and ``correct`` is None (ungraded).

>>> stated_answer("So for 196 the count is (2+1)*(2+1) = 3*3 = 9.")
('9', 44)
>>> stated_answer("Step 2: 196 = 14^2 = 2^2 * 7^2.") is None
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from o3viz.text.answers import answers_equivalent, extract_strong_answer, normalize_answer
from o3viz.text.reference import reference_answer
from o3viz.trace import Round, Trace
from o3viz.trace.answers import AnswerRecord, clip_answer

__all__ = [
    "STATED",
    "STATED_RULES",
    "RunningStep",
    "add_stated",
    "grade",
    "running_answer",
    "same_answer",
    "stated_answer",
    "stated_record",
]

STATED = "stated"  # the probe name of the stated-answer record
STATED_RULES = "strong+conclusion/1"  # recorded in the record's info; a new rule gets a new version
MAX_SENTENCE_CHARS = 400  # the conclusion rule reads at most this much of a step's end

_STARTS = (
    r"(?:So|Thus|Therefore|Hence|Finally|Overall|Altogether|In total|In conclusion|Which gives|This gives"
    r"|We get|We have|The (?:total|result|sum|product|difference|value|final (?:result|value|count)))\b"
)
_X = (
    r"(?P<x>\$[^$\n]{1,80}\$|\\\([^\n]{1,80}?\\\)|\\\[[^\n]{1,80}?\\\]"
    r"|-?\$?\d[\d,]*(?:\.\d+)?(?:/\d+)?%?|[^\s.,;:!?<>]{0,40}[\d\\][^\s,;:!?<>]{0,40}?)"
)
_TAIL = r"(?:[^\S\n]+[a-z]+){0,2}[^\S\n]*[.!]?\**[^\S\n]*$"
_CONCLUSION = re.compile(
    rf"^\**[^\S\n]*(?:{_STARTS}[^\n]*?(?:=|\bis|\bequals)|(?:That|It|This)(?:'s|’s|\s+is))[^\S\n]*"
    rf"\$?(?:<<[^<>\n]{{0,200}}>>)?[^\S\n]*{_X}{_TAIL}"
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z*\\$])")


def stated_answer(text: str) -> tuple[str, int] | None:
    """The answer ``text`` (one step) states and its offset in ``text``, or None (see the module
    docstring for the rules)."""
    strong = extract_strong_answer(text)
    if strong is not None and strong.text.strip():
        return strong.text.strip(), strong.start
    body = text.rstrip()
    if not body or body.endswith("?"):
        return None
    start = max(body.rfind("\n") + 1, len(body) - MAX_SENTENCE_CHARS)
    last = None
    for last in _SENTENCE.finditer(body, start):  # noqa: B007 (the last sentence break is wanted)
        pass
    start = last.end() if last is not None else start
    m = _CONCLUSION.match(body, start)
    if m is None:
        return None
    x, at = m.group("x"), m.start("x")
    if len(x) > 2 and (x[0] == x[-1] == "$" or x[:2] in ("\\(", "\\[")):  # a math span: its right side
        inner = x[1:-1] if x[0] == "$" else x[2:-2]
        eq = inner.rfind("=")
        rhs = inner[eq + 1 :] if eq >= 0 else inner
        at += (1 if x[0] == "$" else 2) + (eq + 1 if eq >= 0 else 0)
        lead = len(rhs) - len(rhs.lstrip())
        x, at = rhs.strip(), at + lead
    x = x.rstrip(".")
    for close in ("\\)", "\\]", "$"):  # "\\frac{1}{2}$" closes a span the verb sat in: "So $x = …$"
        x = x.removesuffix(close)
    if x.startswith("$"):  # "$18" is 18
        x, at = x[1:], at + 1
    return (x, at) if x else None


def grade(answer: str | None, reference: str | None) -> bool | None:
    """Whether ``answer`` equals ``reference`` (already reduced); None without one of them."""
    if answer is None or not reference:
        return None
    return answers_equivalent(answer, reference)


def stated_record(rnd: Round, reference: str | None, *, graded: bool = True) -> AnswerRecord:
    """The ``stated`` record of ``rnd``: per step, the answer its text states and where, graded
    against ``reference`` (a source's reference: reduced here as grading reduces it);
    ``graded=False`` leaves out rule 3 (the text's own statements only)."""
    ref = reference_answer(reference)
    rec = AnswerRecord(STATED, "stated", info={"rules": STATED_RULES, "reference": ref})
    for st in rnd.steps:
        found = stated_answer(rnd.text[st.start : st.end] or st.text)
        answer = clip_answer(found[0]) if found else None
        rec.answers.append(answer)
        rec.positions.append(st.start + found[1] if found else None)
        rec.correct.append(grade(answer, ref))
    if graded:
        _add_graded(rnd, rec, ref)
    return rec


def _add_graded(rnd: Round, rec: AnswerRecord, ref: str | None) -> None:
    """Rule 3: the graded answer at the step holding its span (the last answer check's)."""
    check = next((c for c in reversed(rnd.checks) if c.kind == "answer" and c.span and c.stated), None)
    if check is None or not rnd.steps:
        return
    at = check.span[0]
    k = next((st.index for st in rnd.steps if st.start <= at < max(st.end, st.start + 1)), None)
    if k is None or not 0 <= k < len(rec.answers) or same_answer(rec.answers[k], check.stated):
        return
    rec.answers[k] = clip_answer(check.stated)
    rec.positions[k] = at
    rec.correct[k] = grade(rec.answers[k], ref)


def add_stated(trace: Trace) -> int:
    """Put a fresh ``stated`` record on every round of ``trace`` (replacing an older one); returns
    how many rounds changed."""
    changed = 0
    for rnd in trace.rounds:
        rec = stated_record(rnd, trace.task.reference)
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
    latest stated answer carried forward (``source`` says which; None: no answer yet)."""

    step: int
    answer: str | None
    correct: bool | None
    source: Literal["stated", "forced"] | None
    stated: str | None = None  # what this step's own text states
    forced: str | None = None  # what the probe answered at this step's end
    p_reference: float | None = None


def running_answer(rnd: Round, reference: str | None = None, probe: str | None = None) -> list[RunningStep]:
    """One ``RunningStep`` per step of ``rnd``, in order. Stated answers come from the round's
    ``stated`` record (computed here when it has none); forced ones from the record named
    ``probe`` (default: the round's first ``forced`` record). Where a step was probed its forced
    answer is the running answer; elsewhere the latest stated answer is carried forward (a step
    that states nothing keeps what was last said), with its grade."""
    stated = next((r for r in rnd.answers if r.probe == STATED), None) or stated_record(rnd, reference)
    forced = next((r for r in rnd.answers if r.kind == "forced" and probe in (None, r.probe)), None)
    out: list[RunningStep] = []
    carried: tuple[str | None, bool | None] = (None, None)
    for i in range(len(rnd.steps)):
        said = stated.answers[i]
        if said is not None:
            carried = (said, stated.correct[i])
        f_ans = forced.answers[i] if forced is not None else None
        p_ref = forced.p_reference[i] if forced is not None and forced.p_reference else None
        if f_ans is not None:
            answer, correct, source = f_ans, forced.correct[i], "forced"  # type: ignore[union-attr]
        else:
            answer, correct = carried
            source = "stated" if answer is not None else None
        out.append(RunningStep(i, answer, correct, source, said, f_ans, p_ref))  # type: ignore[arg-type]
    return out


def same_answer(a: str | None, b: str | None) -> bool:
    """Whether two running answers are the same answer (both None, or equal once normalized)."""
    if a is None or b is None:
        return a is b
    return a == b or normalize_answer(a) == normalize_answer(b)
