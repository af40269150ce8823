"""The running answer of a round as stored on it (schema version 5, ``rounds[].answers[]``): one
record per source of answers, side by side, each with its provenance, so a forced-answer probe
never overwrites the answers the text states (``o3viz.analysis.running_answer`` makes the
``stated`` record; ``o3viz.answers.probes`` the forced ones).

- ``probe``: a name unique within the round: ``stated``, or a probe's name such as
  ``forced:local:SmolLM2-135M-Instruct``;
- ``kind``: ``stated`` (what the step's text says) or ``forced`` (what a model answered when made
  to answer at the end of the step);
- ``answers``: per step of the round, in step order, the answer (cut to ``MAX_ANSWER_CHARS``) or
  ``null`` (none stated, or not probed there);
- ``positions``: per step, the character offset in the round's text of the stated answer, or of
  the step boundary probed, or ``null``;
- ``correct``: per step, whether the answer equals the reference (``null``: no answer, or no
  reference: ungraded);
- ``p_reference``: per step, the probability of the reference answer under the probe's suffix, in
  [0, 1], or ``null``; empty when the record has none (stated answers, an endpoint without
  logprobs);
- ``info``: provenance (model, suffix, trace_model, ``other_model``: probed by a model other than
  the one that wrote the trace, every, reference, when, logprobs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from o3viz.trace.codec import check_json_value, fail, literal, number, opt, req, req_list
from o3viz.trace.verdicts import clip_name

AnswerKind = Literal["stated", "forced"]
ANSWER_KINDS: tuple[str, ...] = get_args(AnswerKind)
MAX_ANSWER_RECORDS = 16  # sources of answers per round (stated + probes)
MAX_ANSWER_CHARS = 200  # one answer, as read and as written

__all__ = [
    "ANSWER_KINDS",
    "MAX_ANSWER_CHARS",
    "MAX_ANSWER_RECORDS",
    "AnswerRecord",
    "answer_list",
    "clip_answer",
]


def clip_answer(text: str | None) -> str | None:
    """``text`` cut to ``MAX_ANSWER_CHARS`` (ending in "…"); None stays None.

    >>> clip_answer("42"), len(clip_answer("9" * 10_000)), clip_answer(None)
    ('42', 200, None)
    """
    if text is None:
        return None
    return text if len(text) <= MAX_ANSWER_CHARS else text[: MAX_ANSWER_CHARS - 1] + "…"


@dataclass(eq=False)
class AnswerRecord:
    """One source's answers on one round's steps (see the module docstring)."""

    probe: str
    kind: AnswerKind = "stated"
    answers: list[str | None] = field(default_factory=list)  # (S,)
    positions: list[int | None] = field(default_factory=list)  # (S,) char offsets in round.text
    correct: list[bool | None] = field(default_factory=list)  # (S,)
    p_reference: list[float | None] = field(default_factory=list)  # (S,) or empty
    info: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"probe": self.probe, "kind": self.kind, "answers": list(self.answers)}
        d["positions"] = list(self.positions)
        d["correct"] = list(self.correct)
        if self.p_reference:
            d["p_reference"] = list(self.p_reference)
        d["info"] = self.info
        return d

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AnswerRecord) and self.to_dict() == other.to_dict()

    @classmethod
    def from_dict(cls, d: Any, path: str, n_steps: int, n_chars: int) -> AnswerRecord:
        if not isinstance(d, dict):
            raise fail(path, "must be an object")
        rec = cls(clip_name(req(d, "probe", str, path)), literal(d, "kind", ANSWER_KINDS, path))  # type: ignore[arg-type]
        rec.answers = [clip_answer(a) for a in _per_step(d, "answers", path, n_steps, str)]
        rec.positions = _per_step(d, "positions", path, n_steps, int)
        for i, p in enumerate(rec.positions):
            if p is not None and not 0 <= p <= n_chars:
                raise fail(
                    f"{path}.positions[{i}]", f"{p} lies outside the round's text ({n_chars} characters)"
                )
        rec.correct = _per_step(d, "correct", path, n_steps, bool)
        probs = opt(d, "p_reference", list, path, [])
        if probs and len(probs) != n_steps:
            raise fail(f"{path}.p_reference", f"has {len(probs)} items; the round has {n_steps} steps")
        for i, p in enumerate(probs):
            value = None if p is None else number(p, f"{path}.p_reference[{i}]")
            if value is not None and not 0.0 <= value <= 1.0:
                raise fail(f"{path}.p_reference[{i}]", "must lie in [0, 1]")
            rec.p_reference.append(value)
        rec.info = check_json_value(opt(d, "info", dict, path, {}), f"{path}.info")
        return rec


def _per_step(d: dict, key: str, path: str, n_steps: int, typ: type) -> list:
    """``d[key]``: one value of ``typ`` or ``null`` per step."""
    items = req_list(d, key, path, None, n_steps)
    if len(items) != n_steps:
        raise fail(f"{path}.{key}", f"has {len(items)} items; the round has {n_steps} steps")
    for i, v in enumerate(items):
        bad = v is not None and (not isinstance(v, typ) or (typ is int and isinstance(v, bool)))
        if bad:
            raise fail(f"{path}.{key}[{i}]", f"must be {typ.__name__} or null")
    return list(items)


def answer_list(d: dict, path: str, n_steps: int, n_chars: int) -> list[AnswerRecord]:
    """A round's ``answers`` records, validated; probe names must be unique within the round."""
    items = req_list(d, "answers", path, dict, MAX_ANSWER_RECORDS) if d.get("answers") is not None else []
    out = [AnswerRecord.from_dict(x, f"{path}.answers[{i}]", n_steps, n_chars) for i, x in enumerate(items)]
    names = [r.probe for r in out]
    if len(set(names)) != len(names):
        raise fail(f"{path}.answers", "names a probe twice")
    return out
