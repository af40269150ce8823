"""When did it know: the per-trace figures of a running answer (``o3viz.analysis.running_answer``)
and the refinement that finds the first correct point from a few probes.

Positions are where a step *ends* (stopping there keeps the step): a fraction of the round's
generated tokens, or of its characters when the round has no tokens (an import). Token counts of
an import without tokens are estimated from its source's token count in proportion to the
characters (``tokens_estimated``), or left None when the source gives none.

Flips and the convergence point count only answers read with confidence (marked or concluded:
``o3viz.analysis.running_answer.RULE``); a flip that rests on an uncertain reading is counted in
``flips_uncertain`` instead. The first correct point takes any reading.

>>> from o3viz.trace import Round, Step, Task, Trace
>>> texts = ["So x = 4.", "So x = 5 instead.", "Check: 2+3 = 5", "So the answer is 4."]
>>> steps, at = [], 0
>>> for i, t in enumerate(texts):
...     steps.append(Step(index=i, start=at, end=at + len(t), text=t)); at += len(t) + 1
>>> rnd = Round(text=" ".join(texts), steps=steps)
>>> f = trace_answer_figures(Trace(task=Task(question="What is x?", reference="4"), rounds=[rnd]))
>>> f.first_correct_step, f.convergence_step, f.flips_right_to_wrong, f.flips_wrong_to_right
('step:0:0', 'step:0:3', 1, 1)
>>> f.overthinking, f.final_correct, f.flips_uncertain
('harmless', True, 0)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Literal, TypeVar

from o3viz.analysis.running_answer import RunningStep, running_answer, same_answer
from o3viz.trace import Round, Trace
from o3viz.trace.ids import make_id

__all__ = [
    "EARLY_BEFORE",
    "AnswerFigures",
    "Overthinking",
    "answer_figures",
    "first_correct",
    "refine_first_correct",
    "trace_answer_figures",
]

Overthinking = Literal["none", "harmless", "harmful"]
EARLY_BEFORE = 0.9  # a first correct point before the final 10% of the round is "early"
R = TypeVar("R")


@dataclass
class AnswerFigures:
    """What a round's running answer says about when the model knew (see the module docstring)."""

    round: int = 0
    n_steps: int = 0  # steps of the round
    unit: Literal["tokens", "chars"] = "tokens"  # what the fractions are fractions of
    first_correct_step: str | None = None  # step id (o3viz.trace.ids) where the answer is first right
    first_correct_fraction: float | None = None
    convergence_step: str | None = None  # where the running answer last changed
    convergence_fraction: float | None = None
    flips_right_to_wrong: int = 0  # between answers read with confidence (running_answer.RULE)
    flips_wrong_to_right: int = 0
    flips_uncertain: int = 0  # further flips that rest on an uncertain reading (not counted above)
    tokens_after_first_correct: int | None = None  # = saved_at_first_correct
    saved_at_first_correct: int | None = None  # tokens that stopping at the first correct point saves
    saved_at_convergence: int | None = None
    right_at_convergence: bool | None = None
    tokens_estimated: bool = False  # token counts estimated from characters (an import, no tokens)
    overthinking: Overthinking = "none"
    final_correct: bool | None = None  # the running answer after the last step

    @property
    def flips(self) -> int:
        return self.flips_right_to_wrong + self.flips_wrong_to_right

    @property
    def early_correct(self) -> bool:
        """A first correct point before the final 10% (``EARLY_BEFORE``) of the round."""
        return self.first_correct_fraction is not None and self.first_correct_fraction < EARLY_BEFORE

    def to_dict(self) -> dict:
        return {**asdict(self), "flips": self.flips, "early_correct": self.early_correct}


def first_correct(series: Sequence[bool | None]) -> int | None:
    """The first index whose answer is right, or None."""
    return next((i for i, c in enumerate(series) if c is True), None)


def _ends(rnd: Round) -> tuple[list[int], int, Literal["tokens", "chars"]]:
    """Each step's end and the round's total, in tokens when it has them, else characters."""
    if rnd.tokens and any(st.token_end for st in rnd.steps):
        return [st.token_end for st in rnd.steps], len(rnd.tokens), "tokens"
    return [st.end for st in rnd.steps], len(rnd.text), "chars"


def _flips(verdicts: list[bool | None]) -> tuple[int, int]:
    """(right → wrong, wrong → right) between neighbours of ``verdicts``."""
    pairs = list(zip(verdicts, verdicts[1:], strict=False))
    return sum(bool(a and not b) for a, b in pairs), sum(bool(b and not a) for a, b in pairs)


def answer_figures(
    rnd: Round, series: list[RunningStep], *, source_tokens: int | None = None
) -> AnswerFigures:
    """The figures of ``series`` (``running_answer(rnd, …)``); ``source_tokens``: the round's
    token count as its source gives it, used to estimate token counts when it has no tokens."""
    ends, total, unit = _ends(rnd)
    out = AnswerFigures(round=rnd.index, n_steps=len(series), unit=unit)
    if not series or total <= 0:
        return out
    scale, estimated = 1.0, False
    if unit == "chars":
        scale, estimated = (source_tokens / total, True) if source_tokens else (0.0, False)
    out.tokens_estimated = estimated

    def saved(i: int) -> int | None:
        left = total - ends[i]
        return left if unit == "tokens" else round(left * scale) if estimated else None

    sure = _flips([s.correct for s in series if s.correct is not None and s.confident])
    every = _flips([s.correct for s in series if s.correct is not None])
    out.flips_right_to_wrong, out.flips_wrong_to_right = sure
    out.flips_uncertain = max(0, every[0] - sure[0]) + max(0, every[1] - sure[1])
    out.final_correct = series[-1].correct
    first = first_correct([s.correct for s in series])
    if first is not None:
        out.first_correct_step = make_id("step", rnd.index, first)
        out.first_correct_fraction = ends[first] / total
        out.tokens_after_first_correct = out.saved_at_first_correct = saved(first)
        if first < len(series) - 1 and ends[first] < total:
            out.overthinking = "harmless" if out.final_correct else "harmful"
    changes, last = [], None
    for s in series:  # the running answer read with confidence: where it last changed
        if s.answer is not None and s.confident:
            if last is None or not same_answer(last, s.answer):
                changes.append(s.step)
            last = s.answer
    if changes:
        conv = changes[-1]
        out.convergence_step = make_id("step", rnd.index, conv)
        out.convergence_fraction = ends[conv] / total
        out.saved_at_convergence = saved(conv)
        out.right_at_convergence = series[conv].correct
    return out


def trace_answer_figures(trace: Trace, probe: str | None = None) -> AnswerFigures:
    """The figures of the final round's running answer (stated answers, plus the forced ones of
    ``probe`` or the round's first forced record where it was probed)."""
    if not trace.rounds:
        return AnswerFigures()
    rnd = trace.final
    series = running_answer(rnd, trace.task.reference, probe, trace.task.question)
    given = (trace.info.get("source_info") or {}).get("generated_tokens")
    ok = isinstance(given, int) and not isinstance(given, bool) and given > 0 and len(trace.rounds) == 1
    return answer_figures(rnd, series, source_tokens=given if ok else None)


def refine_first_correct(
    n: int,
    probe: Callable[[list[int]], Sequence[R]],
    right: Callable[[R], bool | None],
    every: int = 1,
) -> dict[int, R]:
    """Probe boundaries ``0..n-1`` every ``every``-th (and the last); then every boundary before
    the first right one of those (any of them could be right first: a right answer can come and
    go between two wrong probes, as stated answers on real R1 traces do), and, after it, every
    boundary between two neighbouring probes whose verdicts differ (each flip, located exactly).
    Returns every boundary probed with its result; ``probe(boundaries)`` answers a list of
    boundaries in one call, and no boundary is probed twice.

    The first right boundary probed is therefore exactly the first correct point of probing every
    boundary; what is saved is the probes after it, where only flips are looked for.

    >>> truth = [False] * 7 + [True] * 5
    >>> got = refine_first_correct(12, lambda bs: [truth[b] for b in bs], bool, every=4)
    >>> min(b for b, r in got.items() if r) == first_correct(truth) == 7, len(got) < 12
    (True, True)
    """
    if n <= 0:
        return {}
    every = max(1, int(every))
    grid = sorted({*range(0, n, every), n - 1})
    results: dict[int, R] = dict(zip(grid, probe(grid), strict=True))
    verdicts = {b: right(r) for b, r in results.items()}
    first = next((b for b in grid if verdicts[b] is True), n)
    gaps: list[int] = list(range(first))
    for a, b in zip(grid, grid[1:], strict=False):
        if a >= first and verdicts[a] != verdicts[b]:
            gaps.extend(range(a + 1, b))
    gaps = sorted(set(gaps) - set(results))
    if gaps:
        results.update(zip(gaps, probe(gaps), strict=True))
    return results
