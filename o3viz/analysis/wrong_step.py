"""Where the reasoning went wrong: the first wrong step of a trace's final round, from three kinds
of evidence, earliest first: a wrong arithmetic claim, a failing check tied to a step, or (for a
wrong final answer with a known reference) the step after the last one that still stated the
reference. The map and the outline mark it; Inspect's header names it.

>>> from o3viz.trace import Check, Round, Step, Task, Trace
>>> steps = [Step(index=i, start=0, end=1, text=t) for i, t in enumerate(["2+2 = 4", "4*3 = 13", "so 13"])]
>>> rnd = Round(index=0, steps=steps, checks=[Check(kind="claim", name="4*3 = 13", verdict="wrong", step=1)])
>>> first_wrong_step(Trace(task=Task(question="q"), rounds=[rnd])).step
1
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from o3viz.text.answers import answers_equivalent
from o3viz.trace import Round, Trace

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


def _after_reference(rnd: Round, reference: str) -> tuple[int, str] | None:
    """The step after the last one that stated the reference, when a later step exists."""
    last = next((st.index for st in reversed(rnd.steps) if _states(st.text, reference)), None)
    if last is None or last + 1 >= len(rnd.steps):
        return None
    return last + 1, f"the answer no longer matches the reference {reference} after step {last}"


def first_wrong_step(trace: Trace) -> FirstWrong | None:
    """The final round's first wrong step (see the module docstring), or None."""
    if not trace.rounds or not trace.final.steps:
        return None
    rnd = trace.final
    found: list[tuple[int, str]] = []
    for c in rnd.checks:
        if c.step is None or c.verdict not in FAILING or c.kind == "answer":
            continue
        why = f"a wrong claim: {c.name}" if c.kind == "claim" else f"a failing {c.kind} check: {c.name}"
        found.append((c.step, why + (f" ({c.message})" if c.message else "")))
    answer = next((c for c in reversed(rnd.checks) if c.kind == "answer"), None)
    reference = trace.task.reference
    if reference and answer is not None and answer.verdict == "wrong":
        after = _after_reference(rnd, reference)
        if after is not None:
            found.append(after)
    if not found:
        return None
    step, reason = min(found, key=lambda f: f[0])
    return FirstWrong(round=rnd.index, step=step, reason=reason)
