"""The pieces of a round: tokens and their alternatives, steps, prompt segments, explored
branches, decision points and checks, as dataclasses with ``to_dict``/``from_dict`` that validate
untrusted input (``o3viz.trace.codec``). ``o3viz.trace.core`` assembles them into rounds and traces.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from o3viz.trace.codec import fail, literal, opt, req, req_list

MAX_ALTERNATIVES = 64

StepKind = Literal["step", "self_check", "backtrack", "final"]
StepType = Literal[  # the Thought Anchors categories (o3viz.text.classify)
    "problem_setup",
    "plan_generation",
    "fact_retrieval",
    "active_computation",
    "uncertainty_management",
    "result_consolidation",
    "self_checking",
    "final_answer_emission",
]
CheckKind = Literal["test", "claim", "answer"]
Verdict = Literal["pass", "fail", "error", "timeout", "correct", "wrong", "unverifiable"]
STEP_KINDS: tuple[str, ...] = get_args(StepKind)
STEP_TYPES: tuple[str, ...] = get_args(StepType)
VERDICTS: tuple[str, ...] = get_args(Verdict)
CHECK_KINDS: tuple[str, ...] = get_args(CheckKind)


@dataclass
class Alt:
    """A candidate token with its probability."""

    id: int
    text: str
    prob: float

    def to_dict(self) -> dict:
        return {"id": self.id, "text": self.text, "prob": self.prob}

    @classmethod
    def from_dict(cls, d: Any, path: str) -> Alt:
        return cls(req(d, "id", int, path), req(d, "text", str, path), req(d, "prob", float, path))


@dataclass
class Token:
    """One token: id, its text piece and ``[start, end)`` char offsets into its text.

    Generated tokens carry the chosen token's logprob, the entropy (nats) of the next-token
    distribution and its top-5 alternatives; prompt tokens leave those ``None``/empty.
    """

    id: int
    text: str
    start: int
    end: int
    logprob: float | None = None
    entropy: float | None = None
    top: list[Alt] = field(default_factory=list)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"id": self.id, "text": self.text, "start": self.start, "end": self.end}
        if self.logprob is not None:
            d["logprob"] = self.logprob
        if self.entropy is not None:
            d["entropy"] = self.entropy
        if self.top:
            d["top"] = [a.to_dict() for a in self.top]
        return d

    @classmethod
    def from_dict(cls, d: Any, path: str) -> Token:
        top = opt(d, "top", list, path, [])
        if len(top) > MAX_ALTERNATIVES:
            raise fail(f"{path}.top", f"more than {MAX_ALTERNATIVES} alternatives")
        return cls(
            req(d, "id", int, path),
            req(d, "text", str, path),
            req(d, "start", int, path),
            req(d, "end", int, path),
            opt(d, "logprob", float, path),
            opt(d, "entropy", float, path),
            [Alt.from_dict(a, f"{path}.top[{i}]") for i, a in enumerate(top)],
        )


@dataclass
class Step:
    """A unit of reasoning: ``text[start:end]`` of its round, tokens ``[token_start, token_end)``.

    ``type`` is a Thought Anchors category where known; ``parent`` is the step this one branches
    from (backtracking) or ``None`` for the linear successor of the previous step.
    """

    index: int
    text: str
    start: int
    end: int
    token_start: int = 0
    token_end: int = 0
    kind: StepKind = "step"
    type: StepType | None = None
    parent: int | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_dict(cls, d: Any, path: str) -> Step:
        return cls(
            req(d, "index", int, path),
            req(d, "text", str, path),
            req(d, "start", int, path),
            req(d, "end", int, path),
            opt(d, "token_start", int, path, 0),
            opt(d, "token_end", int, path, 0),
            literal(d, "kind", STEP_KINDS, path, "step"),
            opt(d, "type", str, path),
            opt(d, "parent", int, path),
        )


@dataclass
class Segment:
    """A span of the prompt (``rendered_prompt[start:end]``, tokens ``[token_start, token_end)``)."""

    index: int
    start: int
    end: int
    token_start: int
    token_end: int
    label: str = ""

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: Any, path: str) -> Segment:
        return cls(
            *(req(d, k, int, path) for k in ("index", "start", "end", "token_start", "token_end")),
            opt(d, "label", str, path, ""),
        )


@dataclass
class Branch:
    """A real alternative continuation forced at a decision point (``--explore``)."""

    id: int
    token_index: int  # the decision point's index into the round's tokens
    forced: Alt
    text: str
    mean_logprob: float | None = None
    verdict: str | None = None
    answer: str | None = None

    def to_dict(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if v is not None}
        d["forced"] = self.forced.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: Any, path: str) -> Branch:
        verdict = opt(d, "verdict", str, path)
        if verdict is not None and verdict not in VERDICTS:
            raise fail(f"{path}.verdict", f"unknown verdict {verdict[:30]!r}")
        return cls(
            req(d, "id", int, path),
            req(d, "token_index", int, path),
            Alt.from_dict(req(d, "forced", dict, path), f"{path}.forced"),
            req(d, "text", str, path),
            opt(d, "mean_logprob", float, path),
            verdict,
            opt(d, "answer", str, path),
        )


@dataclass
class DecisionPoint:
    """A generated token where the model hesitated: high entropy or a small top-2 margin."""

    token_index: int
    entropy: float
    margin: float  # p(top1) - p(top2)
    alternatives: list[Alt] = field(default_factory=list)
    branch_ids: list[int] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "token_index": self.token_index,
            "entropy": self.entropy,
            "margin": self.margin,
            "alternatives": [a.to_dict() for a in self.alternatives],
            "branch_ids": list(self.branch_ids),
        }

    @classmethod
    def from_dict(cls, d: Any, path: str) -> DecisionPoint:
        alts = req_list(d, "alternatives", path, dict, MAX_ALTERNATIVES)
        return cls(
            req(d, "token_index", int, path),
            req(d, "entropy", float, path),
            req(d, "margin", float, path),
            [Alt.from_dict(a, f"{path}.alternatives[{i}]") for i, a in enumerate(alts)],
            opt(d, "branch_ids", list, path, []) and req_list(d, "branch_ids", path, int),
        )


@dataclass
class Check:
    """One verdict of the verification layer: a test, an arithmetic claim or the final answer.

    ``span`` is ``[start, end)`` in the round's text and ``step`` the step it sits in, where known.
    """

    kind: CheckKind
    name: str
    verdict: Verdict  # pass/fail/error/timeout (tests), correct/wrong/unverifiable (claims, answer)
    message: str = ""
    rule: str | None = None
    step: int | None = None
    span: list[int] | None = None
    expression: str | None = None
    stated: str | None = None
    computed: str | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_dict(cls, d: Any, path: str) -> Check:
        span = opt(d, "span", list, path)
        if span is not None:
            span = req_list(d, "span", path, int, 2)
            if len(span) != 2:
                raise fail(f"{path}.span", "must be [start, end]")
        return cls(
            literal(d, "kind", CHECK_KINDS, path),
            req(d, "name", str, path),
            literal(d, "verdict", VERDICTS, path),
            opt(d, "message", str, path, ""),
            opt(d, "rule", str, path),
            opt(d, "step", int, path),
            span,
            opt(d, "expression", str, path),
            opt(d, "stated", str, path),
            opt(d, "computed", str, path),
        )
