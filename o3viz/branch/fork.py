"""Where a branch leaves its parent: the fork step ``R:I``, the reply before it, the request that
continues it with the parent's own settings, and what a branch will cost before it starts.

The reply before step I of round R is the round's text up to the step's start, after the reply
prefix the round itself continued (a branch of a branch). A local continuation renders the round's
prompt and forces that text (plus the edited step) as the reply's opening (``RunRequest.prefix``);
a rollout backend is sent the rendered prompt followed by it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from o3viz.errors import UsageError
from o3viz.run.config import CaptureConfig, DAAConfig, SteerSpan
from o3viz.run.request import RunRequest
from o3viz.run.speed import SpeedKind, SpeedLog
from o3viz.trace import Round, Step, Trace
from o3viz.trace.ids import parse_step_ref, step_ref

MAX_EDIT_CHARS = 4000
CHARS_PER_TOKEN = 4  # an import without tokens: its remaining characters over this
MIN_BUDGET, MAX_BUDGET = 16, 4096  # the default budget's bounds, in new tokens
TASK_SOURCES = ("gsm8k", "humaneval", "mbppplus")  # tasks ``RunRequest.task_id`` can load again


@dataclass
class Fork:
    """Step ``index`` of round ``round`` of ``trace``, and the reply that comes before it."""

    trace: Trace
    round: int
    index: int

    @property
    def step_id(self) -> str:
        return step_ref(self.round, self.index)

    @property
    def rnd(self) -> Round:
        return self.trace.rounds[self.round]

    @property
    def step(self) -> Step:
        return self.rnd.steps[self.index]

    @property
    def own_prefix(self) -> str:
        """The reply prefix this round itself was continued from (a branch); "" otherwise."""
        n = int(self.rnd.info.get("reply_prefix_chars") or 0)
        return self.rnd.rendered_prompt[-n:] if 0 < n <= len(self.rnd.rendered_prompt) else ""

    @property
    def before(self) -> str:
        """The reply up to the fork step (without it)."""
        return self.own_prefix + self.rnd.text[: self.step.start]

    @property
    def prompt(self) -> str:
        """The user-visible prompt of the round (the question for an import)."""
        return self.rnd.prompt or self.trace.task.question or ""

    @property
    def remaining_tokens(self) -> int:
        """The parent's remaining length: its tokens from the fork step to the end of the round
        (an import without tokens: its remaining characters / ``CHARS_PER_TOKEN``)."""
        if self.rnd.tokens:
            return sum(t.start >= self.step.start for t in self.rnd.tokens)
        return -(-len(self.rnd.text[self.step.start :]) // CHARS_PER_TOKEN)

    @property
    def default_budget(self) -> int:
        """A branch's default new tokens: the parent's remaining length (the edited step replaces
        the fork step, so the branch has the room the parent took from there), within bounds.

        >>> from o3viz.testing.builders import small_trace
        >>> t = small_trace()
        >>> find_fork(t, "0:1").default_budget == max(MIN_BUDGET, find_fork(t, "0:1").remaining_tokens)
        True
        """
        return max(MIN_BUDGET, min(MAX_BUDGET, self.remaining_tokens))

    def prefix_steps(self) -> list[list]:
        """The parent's steps before the fork as ``[index, start, end]`` in ``before`` (numbered as
        in the parent), so a branch can show its inherited prefix without the parent at hand."""
        off = len(self.own_prefix)
        return [[s.index, s.start + off, s.end + off] for s in self.rnd.steps[: self.index]]


def find_fork(trace: Trace, step: str) -> Fork:
    """The fork at ``step`` ("R:I", as ``o3viz.trace.ids.parse_step_ref`` reads it), or one
    ``UsageError`` line.

    >>> from o3viz.testing.builders import small_trace
    >>> find_fork(small_trace(), "0:1").step_id
    '0:1'
    >>> find_fork(small_trace(), "0:99")
    Traceback (most recent call last):
    ...
    o3viz.errors.UsageError: --step 0:99: round 0 has 2 steps (0:0 to 0:1)
    """
    node = parse_step_ref(step)
    if node is None:
        raise UsageError(f"--step {step!r} is not a step id; write it R:I, e.g. 0:2")
    if not (trace.task.question or "").strip() and not any(r.prompt.strip() for r in trace.rounds):
        raise UsageError("the trace has no prompt to continue from (its task question is empty)")
    if not 0 <= node.round < len(trace.rounds):
        raise UsageError(
            f"--step {step}: the trace has {len(trace.rounds)} round(s) (0 to {len(trace.rounds) - 1})"
        )
    steps = trace.rounds[node.round].steps
    if not 0 <= node.index < len(steps):
        last = f" ({step_ref(node.round, 0)} to {step_ref(node.round, len(steps) - 1)})" if steps else ""
        raise UsageError(f"--step {step}: round {node.round} has {len(steps)} steps{last}")
    return Fork(trace, node.round, node.index)


def check_edit(text: str | None) -> str:
    """The edited step's text, or one ``UsageError`` line (empty, or over ``MAX_EDIT_CHARS``)."""
    if text is None or not text.strip():
        raise UsageError("the edited step is empty; write the text the step should say")
    if len(text) > MAX_EDIT_CHARS:
        raise UsageError(
            f"the edited step has {len(text):,} characters, over the limit of {MAX_EDIT_CHARS:,}"
        )
    return text


def _config(cls, data: Any):
    """``cls`` from a provenance dict, keeping the fields ``cls`` knows (lists back to tuples)."""
    if not isinstance(data, dict):
        return cls()
    names = {f.name for f in dataclasses.fields(cls)}
    kept = {k: tuple(v) if isinstance(v, list) and k == "moefy" else v for k, v in data.items() if k in names}
    try:
        return cls(**kept)
    except TypeError:
        return cls()


def _daa_config(data: Any) -> DAAConfig:
    """The parent's DAA settings, steering included: JSON turned the spans into dicts and the
    heads into lists, which ``DAAConfig`` takes back as ``SteerSpan``s and ``(layer, head)``s."""
    daa = _config(DAAConfig, data)
    spans = tuple(SteerSpan(**x) if isinstance(x, dict) else x for x in daa.spans or ())
    heads = daa.steer_heads
    if isinstance(heads, list):
        heads = [tuple(h) for h in heads]
    return dataclasses.replace(daa, spans=spans, steer_heads=heads)


def request_from_trace(fork: Fork, prefix: str, max_new_tokens: int | None = None) -> RunRequest:
    """The parent's run settings rebuilt as a ``RunRequest`` that continues ``prefix``: capture,
    DAA, decoding, the verify loop (its rounds, a task's checks) where the parent used it. Not
    kept: explore (a branch is itself the alternative) and compression (a prefix is not
    compressed)."""
    s = fork.trace.provenance.settings or {}
    task = fork.trace.task
    rounds = s.get("max_rounds") or (s.get("solve") or {}).get("max_rounds")
    from_task = task.source in TASK_SOURCES and bool(task.id) and fork.round == 0
    req = RunRequest(
        prompt=None if from_task else fork.prompt,
        task_id=task.id if from_task else None,
        prefix=prefix,
        max_new_tokens=int(max_new_tokens or fork.default_budget),
        capture=_config(CaptureConfig, s.get("capture")),
        daa=_daa_config(s.get("daa")),
        seed=int(s.get("seed") or 0),
        do_sample=bool(s.get("do_sample", False)),
        temperature=float(s.get("temperature") or 1.0),
        rounds=int(rounds) if isinstance(rounds, int) and rounds > 0 else (1 if not from_task else None),
        confidence_threshold=float(s.get("confidence_threshold", 0.9)),
        timeout_s=float(s.get("timeout_s", 10.0)),
    )
    req.validate()
    return req


@dataclass
class BranchCost:
    """What a branch costs before it starts: continuations × new tokens, and a time estimate from
    this machine's measured speed (``o3viz.run.speed``; None before the first measurement)."""

    continuations: int
    max_new_tokens: int  # per continuation
    tokens_per_s: float | None = None  # measured here, for this kind of branch and model

    @property
    def tokens(self) -> int:
        return self.continuations * self.max_new_tokens

    @property
    def seconds(self) -> float | None:
        return self.tokens / self.tokens_per_s if self.tokens_per_s else None

    def line(self) -> str:
        """
        >>> BranchCost(8, 128, 20.0).line()
        '8 continuations × 128 new tokens = at most 1,024 tokens, about 51 s at 20 tokens/s measured here'
        >>> BranchCost(1, 96).line()
        '1 continuation × 96 new tokens = at most 96 tokens; time not measured here yet (the first branch measures it)'
        """
        what = "continuation" if self.continuations == 1 else "continuations"
        head = (
            f"{self.continuations} {what} × {self.max_new_tokens} new tokens = at most {self.tokens:,} tokens"
        )
        if self.seconds is None:
            return head + "; time not measured here yet (the first branch measures it)"
        return f"{head}, about {self.seconds:.0f} s at {self.tokens_per_s:.3g} tokens/s measured here"


def measured_cost(
    continuations: int, max_new_tokens: int, model: str, kind: SpeedKind, log: SpeedLog | None = None
) -> BranchCost:
    """A ``BranchCost`` timed by this machine's recent ``kind`` branches of ``model``."""
    return BranchCost(continuations, max_new_tokens, (log or SpeedLog()).tokens_per_s(model, kind))
