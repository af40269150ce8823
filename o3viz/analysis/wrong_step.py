"""Where the reasoning went wrong.

- ``first_wrong_step``: the first step of a trace's final round where a check failed (a wrong
  arithmetic claim, a failing test or other check tied to a step). Only a failed check makes a step
  "wrong": the map and the outline mark it, Inspect's header names it.
- ``reference_last_held``: for a wrong final answer with a known reference, the last step that still
  stated the reference. It is a heuristic, never a finding: a later step can be true (R1's MATH-500
  record 18 drops 28 around step 572, and step 573, "That also sums to 180.", is right), so it is
  shown as what it is, "the running answer stopped matching the reference after step N".

>>> from o3viz.trace import Check, Round, Step, Task, Trace
>>> steps = [Step(index=i, start=0, end=1, text=t) for i, t in enumerate(["2+2 = 4", "4*3 = 13", "so 13"])]
>>> rnd = Round(index=0, steps=steps, checks=[Check(kind="claim", name="4*3 = 13", verdict="wrong", step=1)])
>>> first_wrong_step(Trace(task=Task(question="q"), rounds=[rnd])).step
1
>>> rnd.checks = [Check(kind="answer", name="final answer 13", verdict="wrong", step=2)]
>>> t = Trace(task=Task(question="q", reference="4"), rounds=[rnd])
>>> first_wrong_step(t) is None, reference_last_held(t).step
(True, 1)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from o3viz.text.answers import answers_equivalent
from o3viz.trace import Trace

FAILING = ("wrong", "fail", "error", "timeout")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


@dataclass
class FirstWrong:
    """The first wrong step of a round and why it is wrong (one line a user reads)."""

    round: int
    step: int
    reason: str  # e.g. "a wrong claim: 24+42 = 68 (computed 66)"

    @property
    def node(self) -> str:
        from o3viz.trace.ids import make_id

        return make_id("step", self.round, self.step)


def _states(text: str, reference: str) -> bool:
    """Whether a step's text states the reference (as written, or as one of its numbers)."""
    if reference in text:
        return True
    return any(answers_equivalent(m.group().replace(",", ""), reference) for m in _NUMBER.finditer(text))


@dataclass
class ReferenceHeld:
    """The last step of a round that still stated the reference, in a round whose final answer is
    wrong (a heuristic: no check failed there)."""

    round: int
    step: int  # the last step stating the reference
    reference: str

    @property
    def line(self) -> str:
        return (
            f"the running answer stopped matching the reference {self.reference} after step {self.step} "
            "(a heuristic: no check failed there)"
        )

    @property
    def node(self) -> str:
        from o3viz.trace.ids import make_id

        return make_id("step", self.round, self.step)


def reference_last_held(trace: Trace) -> ReferenceHeld | None:
    """Where the final round last stated the reference, when its final answer is wrong and a later
    step exists; None otherwise."""
    if not trace.rounds or not trace.final.steps or not trace.task.reference:
        return None
    rnd, reference = trace.final, trace.task.reference
    answer = next((c for c in reversed(rnd.checks) if c.kind == "answer"), None)
    if answer is None or answer.verdict != "wrong":
        return None
    last = next((st.index for st in reversed(rnd.steps) if _states(st.text, reference)), None)
    if last is None or last + 1 >= len(rnd.steps):
        return None
    return ReferenceHeld(rnd.index, last, reference)


def first_wrong_step(trace: Trace) -> FirstWrong | None:
    """The final round's first step where a check failed (the answer check aside), or None."""
    if not trace.rounds or not trace.final.steps:
        return None
    rnd = trace.final
    found: list[tuple[int, str]] = []
    for c in rnd.checks:
        if c.step is None or c.verdict not in FAILING or c.kind == "answer":
            continue
        why = f"a wrong claim: {c.name}" if c.kind == "claim" else f"a failing {c.kind} check: {c.name}"
        found.append((c.step, why + (f" ({c.message})" if c.message else "")))
    if not found:
        return None
    step, reason = min(found, key=lambda f: f[0])
    return FirstWrong(round=rnd.index, step=step, reason=reason)
