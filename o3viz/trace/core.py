"""The trace: one run's record (task, rounds of generation, verification, attention, compression,
provenance) as dataclasses, with ``to_dict``/``from_dict`` that validate untrusted input.

A trace is a list of rounds. A plain ``capture`` run has one round; ``solve`` adds a round per
revision; an import has one round whose text is the imported thinking. ``Trace.text``,
``Trace.tokens``, ``Trace.steps`` and ``Trace.attention`` are the final round's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from o3viz.trace.answers import AnswerRecord, answer_list
from o3viz.trace.attention import AttentionRecord
from o3viz.trace.branching import BranchLink, BranchParent, links_of, parent_of
from o3viz.trace.codec import (
    MAX_TOTAL_STEPS,
    check_json_value,
    check_total,
    fail,
    literal,
    opt,
    req,
    req_list,
)
from o3viz.trace.compression import CompressionRecord
from o3viz.trace.importance import ImportanceRecord, importance_list
from o3viz.trace.jsonfile import parse_bytes, read_source, save_dict
from o3viz.trace.layer_records import InternalsRecord
from o3viz.trace.migrate import migrate
from o3viz.trace.parts import Alt, Branch, Check, DecisionPoint, Segment, Step, Token
from o3viz.trace.verdicts import VerdictRecord, verdict_list

__all__ = [  # the pieces of a round live in o3viz.trace.parts; they are re-exported for Round's users
    "SCHEMA_VERSION",
    "TASK_KINDS",
    "Alt",
    "Branch",
    "Check",
    "DecisionPoint",
    "Provenance",
    "Round",
    "Segment",
    "Step",
    "Task",
    "TaskKind",
    "Token",
    "Trace",
    "timestamp",
]

# 2: optional rounds[].importance and rounds[].internals; 3: optional parent and branches (a branch
# trace and the branches a trace lists, o3viz.trace.branching); 4: optional rounds[].verdicts (step
# verdicts of pluggable verifiers, o3viz.trace.verdicts); 5: optional rounds[].answers (the running
# answer: stated and forced answers per step, o3viz.trace.answers); older files migrate on load
SCHEMA_VERSION = 5
MAX_TOKENS = 200_000  # per round, generated or prompt
MAX_STEPS = 50_000
MAX_ROUNDS = 64

TaskKind = Literal["math", "code", "general"]
RoundVerdict = Literal["pass", "fail", "unverifiable"]
TASK_KINDS: tuple[str, ...] = get_args(TaskKind)


def _objs(d: dict, key: str, path: str, cls: Any, max_len: int) -> list:
    items = opt(d, key, list, path, [])
    if len(items) > max_len:
        raise fail(f"{path}.{key}", f"has {len(items)} items, more than the limit {max_len}")
    return [cls.from_dict(x, f"{path}.{key}[{i}]") for i, x in enumerate(items)]


@dataclass(eq=False)
class Round:
    """One pass of the base layer (an attempt), with what the verification layer said about it."""

    index: int = 0
    prompt: str = ""  # the user-visible prompt of this round (a revision prompt after round 0)
    rendered_prompt: str = ""  # what the model saw, after the chat template
    prompt_tokens: list[Token] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    text: str = ""  # generated (or imported) text
    tokens: list[Token] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    decision_points: list[DecisionPoint] = field(default_factory=list)
    branches: list[Branch] = field(default_factory=list)
    attention: AttentionRecord | None = None
    checks: list[Check] = field(default_factory=list)
    answer: str | None = None
    verdict: RoundVerdict | None = None  # for the round as a whole
    confidence: float | None = None  # mean probability of the answer's tokens
    action: str | None = None  # what the optimization layer did next (see o3viz.run.solve)
    feedback: str | None = None  # the feedback that produced the next round
    info: dict = field(default_factory=dict)
    internals: InternalsRecord | None = None  # MoE routing and the logit lens (optional)
    importance: list[ImportanceRecord] = field(default_factory=list)  # one per method or source
    verdicts: list[VerdictRecord] = field(default_factory=list)  # one per verifier, side by side
    answers: list[AnswerRecord] = field(default_factory=list)  # stated, then one per probe

    _LISTS = (
        ("prompt_tokens", Token, MAX_TOKENS),
        ("segments", Segment, MAX_STEPS),
        ("tokens", Token, MAX_TOKENS),
        ("steps", Step, MAX_STEPS),
        ("decision_points", DecisionPoint, MAX_TOKENS),
        ("branches", Branch, 1024),
        ("checks", Check, MAX_STEPS),
    )
    _STRS = ("prompt", "rendered_prompt", "text")
    _OPTS = (("answer", str), ("verdict", str), ("confidence", float), ("action", str), ("feedback", str))

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"index": self.index}
        d.update({k: getattr(self, k) for k in self._STRS})
        d.update({k: [x.to_dict() for x in getattr(self, k)] for k, _, _ in self._LISTS})
        d.update({k: getattr(self, k) for k, _ in self._OPTS if getattr(self, k) is not None})
        if self.attention is not None:
            d["attention"] = self.attention.to_dict()
        if self.internals is not None:
            d["internals"] = self.internals.to_dict()
        d["info"] = self.info
        if self.importance:
            d["importance"] = [x.to_dict() for x in self.importance]
        if self.verdicts:
            d["verdicts"] = [x.to_dict() for x in self.verdicts]
        if self.answers:
            d["answers"] = [x.to_dict() for x in self.answers]
        return d

    @classmethod
    def from_dict(cls, d: Any, path: str) -> Round:
        r = cls(index=req(d, "index", int, path))
        for k in cls._STRS:
            setattr(r, k, opt(d, k, str, path, ""))
        for k, typ, limit in cls._LISTS:
            setattr(r, k, _objs(d, k, path, typ, limit))
        for k, typ in cls._OPTS:
            setattr(r, k, opt(d, k, typ, path))
        if d.get("attention") is not None:
            r.attention = AttentionRecord.from_dict(req(d, "attention", dict, path), f"{path}.attention")
            r.attention.check_tokens(len(r.tokens), len(r.prompt_tokens), f"{path}.attention")
        if d.get("internals") is not None:
            r.internals = InternalsRecord.from_dict(req(d, "internals", dict, path), f"{path}.internals")
            r.internals.check_tokens(len(r.tokens), len(r.prompt_tokens), f"{path}.internals")
        r.info = check_json_value(opt(d, "info", dict, path, {}), f"{path}.info")
        r.importance = importance_list(d, path, len(r.steps))
        r.verdicts = verdict_list(d, path, len(r.steps))
        r.answers = answer_list(d, path, len(r.steps), len(r.text))
        _check_offsets(r, path)
        return r


def _check_offsets(r: Round, path: str) -> None:
    """Offsets must point inside their texts, so consumers can slice without IndexError."""
    for name, items, text in (
        ("tokens", r.tokens, r.text),
        ("prompt_tokens", r.prompt_tokens, r.rendered_prompt),
        ("steps", r.steps, r.text),
        ("segments", r.segments, r.rendered_prompt),
    ):
        for i, x in enumerate(items):
            if not 0 <= x.start <= x.end <= len(text):
                raise fail(f"{path}.{name}[{i}]", f"offsets [{x.start}, {x.end}) lie outside the text")
    n = len(r.tokens)
    for i, s in enumerate(r.steps):
        if not 0 <= s.token_start <= s.token_end <= max(n, s.token_end if n == 0 else n):
            raise fail(f"{path}.steps[{i}]", "token range lies outside the tokens")
    for i, p in enumerate(r.decision_points):
        if not 0 <= p.token_index < max(n, 1):
            raise fail(f"{path}.decision_points[{i}].token_index", "lies outside the tokens")


@dataclass
class Task:
    """What the run was asked: a free prompt or a task from a named source (``gsm8k:12``)."""

    question: str
    kind: TaskKind = "general"
    source: str = "prompt"  # prompt | gsm8k | humaneval | mbppplus | import
    id: str | None = None
    reference: str | None = None  # the known answer, where there is one

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_dict(cls, d: Any, path: str) -> Task:
        return cls(
            req(d, "question", str, path),
            literal(d, "kind", TASK_KINDS, path, "general"),
            opt(d, "source", str, path, "prompt"),
            opt(d, "id", str, path),
            opt(d, "reference", str, path),
        )


def reproducible() -> bool:
    """True when ``SOURCE_DATE_EPOCH`` is set (``make samples``): files then leave out wall-clock
    fields (timings, elapsed seconds) so a rerun writes the same bytes."""
    return bool(os.environ.get("SOURCE_DATE_EPOCH"))


def timestamp() -> str:
    """Now in UTC (ISO 8601), or ``SOURCE_DATE_EPOCH`` when set, so sample files are reproducible."""
    from datetime import UTC, datetime

    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = datetime.fromtimestamp(int(epoch), UTC) if epoch and epoch.isdigit() else datetime.now(UTC)
    return when.isoformat(timespec="seconds")


@dataclass
class Provenance:
    """Where a trace came from: enough to reproduce or at least to know what produced it."""

    model_id: str = ""
    revision: str | None = None  # a hub revision or a content hash of the weights file
    dtype: str | None = None
    attn_implementation: str | None = None
    device: str | None = None
    library_versions: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    seed: int | None = None
    created_at: str | None = None
    finished_at: str | None = None
    source: dict = field(default_factory=dict)  # imports: file, record, format, source model, licence

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_dict(cls, d: Any, path: str) -> Provenance:
        strs = {
            k: opt(d, k, str, path)
            for k in ("revision", "dtype", "attn_implementation", "device", "created_at", "finished_at")
        }
        dicts = {
            k: check_json_value(opt(d, k, dict, path, {}), f"{path}.{k}")
            for k in ("library_versions", "settings", "source")
        }
        return cls(
            model_id=opt(d, "model_id", str, path, ""), seed=opt(d, "seed", int, path), **strs, **dicts
        )


_DISPLAY: list = []  # how a Trace shows itself in a notebook; set by ``register_display``


def register_display(bundle) -> None:
    """Make ``bundle(trace) -> dict`` (a mime bundle) how a ``Trace`` displays itself as a
    notebook cell's last expression. The package's ``__init__`` registers the notebook view, a
    layer this one must not import."""
    _DISPLAY[:] = [bundle]


@dataclass(eq=False)
class Trace:
    """The single source of truth for one run; ``save``/``load`` (and ``o3viz.trace.io``) read and
    write its file through ``o3viz.trace.jsonfile``."""

    task: Task
    rounds: list[Round] = field(default_factory=list)
    provenance: Provenance = field(default_factory=Provenance)
    compression: CompressionRecord | None = None
    info: dict = field(default_factory=dict)
    parent: BranchParent | None = None  # a branch: the trace and step it forked from
    branches: list[BranchLink] = field(default_factory=list)  # branches made from this trace
    schema_version: int = SCHEMA_VERSION

    @property
    def final(self) -> Round:
        """The last round; a fresh empty ``Round`` (not added: reading never changes the trace)
        when there is none."""
        return self.rounds[-1] if self.rounds else Round()

    @property
    def text(self) -> str:
        return self.final.text

    @property
    def tokens(self) -> list[Token]:
        return self.final.tokens

    @property
    def steps(self) -> list[Step]:
        return self.final.steps

    @property
    def attention(self) -> AttentionRecord | None:
        return self.final.attention

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Trace) and self.to_dict() == other.to_dict()

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict | None:
        return _DISPLAY[0](self) if _DISPLAY else None

    def _repr_html_(self) -> str | None:
        return (self._repr_mimebundle_() or {}).get("text/html")

    def save(self, path: str | os.PathLike, overwrite: bool = False) -> Path:
        """Write atomically; refuses to overwrite unless asked (see ``o3viz.trace.jsonfile``)."""
        return save_dict(self.to_dict(), path, Trace.from_dict, overwrite=overwrite)

    @staticmethod
    def load(source: str | os.PathLike | bytes) -> Trace:
        """The exact inverse of ``save``; raises ``TraceError`` on any bad input."""
        return parse_bytes(read_source(source), Trace.from_dict)

    def to_dict(self) -> dict:
        d = {
            "schema_version": self.schema_version,
            "task": self.task.to_dict(),
            "provenance": self.provenance.to_dict(),
            "rounds": [r.to_dict() for r in self.rounds],
            "info": self.info,
        }
        if self.compression is not None:
            d["compression"] = self.compression.to_dict()
        if self.parent is not None:
            d["parent"] = self.parent.to_dict()
        if self.branches:
            d["branches"] = [b.to_dict() for b in self.branches]
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Trace:
        if not isinstance(d, dict):
            raise fail("(top level)", "must be a JSON object")
        version = req(d, "schema_version", int, "")
        if version != SCHEMA_VERSION:
            d = migrate(d, version, SCHEMA_VERSION)
        rounds = req_list(d, "rounds", "", dict, MAX_ROUNDS)
        check_total(rounds, "steps", MAX_TOTAL_STEPS, "steps")  # before any round is built
        comp = d.get("compression")
        return cls(
            task=Task.from_dict(req(d, "task", dict, ""), "task"),
            rounds=[Round.from_dict(r, f"rounds[{i}]") for i, r in enumerate(rounds)],
            provenance=Provenance.from_dict(req(d, "provenance", dict, ""), "provenance"),
            compression=None if comp is None else CompressionRecord.from_dict(comp, "compression"),
            info=check_json_value(opt(d, "info", dict, "", {}), "info"),
            parent=parent_of(d),
            branches=links_of(d),
        )
