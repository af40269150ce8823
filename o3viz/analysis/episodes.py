"""Episodes: runs of steps between the points where the reasoning turns, the overview level of a
long trace (the reasoning map and the outline open on them above ``OVERVIEW_FROM`` steps).

A step **turns** the reasoning when the step tree or the step classifier says so
(``o3viz.text.classify``; no new text matching here): it is a backtrack ("Wait", "Actually",
"Alternatively", …: kind ``backtrack``), a verification (kind ``self_check``), or it opens a run of
doubt ("Hmm", a question: type ``uncertainty_management``) or of checking ("Let me check": type
``self_checking``) after steps of another type. An episode starts at a turn once the episode before
it has at least ``min_steps`` steps, so that a trace splits into at most about ``MAX_EPISODES``
episodes per round however long it is; episodes never span rounds. One pass over the steps.

>>> from o3viz.trace import Round, Step, Task, Trace
>>> from o3viz.analysis.outline import build_outline
>>> texts = ["We need x.", "x = 2 + 3 = 5.", "So x = 5.", "Wait, is that right?",
...          "Let me check: 2 + 3 = 5.", "Yes.", "The answer is \\\\boxed{5}."]
>>> steps, pos = [], 0
>>> for i, t in enumerate(texts):
...     steps.append(Step(i, t, pos, pos + len(t))); pos += len(t) + 1
>>> eps = find_episodes(build_outline(Trace(Task("x?"), [Round(text=" ".join(texts), steps=steps)])), 2)
>>> [(e.start, e.end, e.opens_with) for e in eps]
[(0, 2, 'start'), (3, 6, 'doubt')]
>>> eps[1].has_self_check, eps[1].answer
(True, '5')
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from o3viz.analysis.outline import BAD, GOOD, Outline, OutlineRound, OutlineStep
from o3viz.text.answers import extract_strong_answer

OVERVIEW_FROM = 150  # steps: above this the map and the outline open on episodes
MAX_EPISODES = 48  # per round, about: what an overview 600-1000 px wide can show apart
MIN_STEPS = 3  # an episode shorter than this is part of the one before it
_RUN_TYPES = {"uncertainty_management": "doubt", "self_checking": "self_check"}


@dataclass
class Episode:
    """Steps ``start``..``end`` (inclusive step indices) of round ``round``; ``lo:hi`` slices the
    round's outline steps. ``types`` counts the step types, most frequent first."""

    index: int  # 0-based, over the whole trace
    round: int  # the round's index
    lo: int  # position of the first step in the round's step list
    hi: int  # one past the last
    start: int  # the first step's index
    end: int  # the last step's index
    opens_with: str  # start | backtrack | self_check | doubt: why the reasoning turned here
    types: list[tuple[str, int]] = field(default_factory=list)
    backtracks: int = 0  # steps of kind backtrack
    self_checks: int = 0  # self-check steps (kind self_check or type self_checking)
    wrong: int = 0  # failed checks on its steps (wrong claims, failed tests)
    passed: int = 0  # passed checks on its steps
    first_wrong: int | None = None  # index of its first step with a failed check
    answer: str | None = None  # the answer it states ("\\boxed{}", "the answer is …"), if any
    final: bool = False  # it holds the step with the round's final answer

    @property
    def id(self) -> str:
        return f"episode:{self.index}"

    @property
    def length(self) -> int:
        return self.hi - self.lo

    @property
    def dominant(self) -> str:
        return self.types[0][0] if self.types else "untyped"

    @property
    def has_wrong(self) -> bool:
        return self.wrong > 0

    @property
    def has_self_check(self) -> bool:
        return self.self_checks > 0

    @property
    def has_backtrack(self) -> bool:
        return self.backtracks > 0


def turn_of(step: OutlineStep, prev: OutlineStep | None) -> str | None:
    """Why ``step`` turns the reasoning (backtrack, self_check, doubt), or None."""
    if step.kind in ("backtrack", "self_check"):
        return step.kind
    run = _RUN_TYPES.get(step.type)
    if run is not None and (prev is None or prev.type != step.type):
        return run
    return None


def _summarise(ep: Episode, steps: list[OutlineStep]) -> Episode:
    ep.types = Counter(s.type for s in steps).most_common()
    for s in steps:
        ep.backtracks += s.kind == "backtrack"
        ep.self_checks += s.kind == "self_check" or s.type == "self_checking"
        bad = sum(c.verdict in BAD for c in s.checks)
        ep.wrong += bad
        ep.passed += sum(c.verdict in GOOD for c in s.checks)
        if bad and ep.first_wrong is None:
            ep.first_wrong = s.index
        ep.final = ep.final or s.kind == "final"
        if s.type == "final_answer_emission" or s.kind == "final":
            hit = extract_strong_answer(s.text[:4000])  # bounded: one step's text, once
            ep.answer = hit.text if hit is not None else ep.answer
    return ep


def find_episodes(outline: Outline, min_steps: int | None = None) -> list[Episode]:
    """The episodes of every round of ``outline``, in order (rules in the module docstring).
    ``min_steps`` defaults to ``max(MIN_STEPS, ceil(round steps / MAX_EPISODES))``."""
    out: list[Episode] = []
    for r in outline.rounds:
        steps = r.steps
        least = min_steps or max(MIN_STEPS, math.ceil(len(steps) / MAX_EPISODES))
        cuts, why = [0], ["start"]
        for k in range(1, len(steps)):
            turn = turn_of(steps[k], steps[k - 1])
            if turn is not None and k - cuts[-1] >= least:
                cuts.append(k)
                why.append(turn)
        if steps and len(cuts) > 1 and len(steps) - cuts[-1] < least:
            cuts.pop()  # a short tail belongs to the episode before it
            why.pop()
        for lo, hi, reason in zip(cuts, [*cuts[1:], len(steps)], why, strict=True):
            if hi <= lo:
                continue
            ep = Episode(len(out), r.index, lo, hi, steps[lo].index, steps[hi - 1].index, reason)
            out.append(_summarise(ep, steps[lo:hi]))
    return out


def episode_of(episodes: list[Episode], round_index: int, step_index: int) -> Episode | None:
    """The episode holding step ``step_index`` of round ``round_index``, or None."""
    for ep in episodes:
        if ep.round == round_index and ep.start <= step_index <= ep.end:
            return ep
    return None


def episode_outline(outline: Outline, ep: Episode) -> Outline:
    """The outline of one episode: its round with only its steps (and their checks); the round's
    answer and whole-round checks only where the episode ends the round."""
    r = next(x for x in outline.rounds if x.index == ep.round)
    last = ep.hi == len(r.steps)
    sub = OutlineRound(
        r.id,
        r.index,
        r.verdict,
        r.answer if last else None,
        r.action,
        r.feedback,
        steps=r.steps[ep.lo : ep.hi],
        checks=r.checks if last else [],
    )
    return Outline(outline.question, outline.answer, outline.verdict, [sub])
