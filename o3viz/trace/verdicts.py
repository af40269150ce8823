"""Step verdicts of pluggable verifiers as stored on a round (schema version 4,
``rounds[].verdicts[]``): one record per verifier, side by side, each with its provenance, so a
PRM's verdicts never overwrite the claim checker's (``o3viz.verify.verifiers`` makes them).

- ``verifier``: a name unique within the round (the registry name, or ``prm:<model>``);
- ``verdicts``: one of ``ok``, ``wrong``, ``unsure`` (or ``null``: not judged) per step of the
  round, in step order, so ``verdicts[i]`` belongs to ``round.steps[i]``;
- ``scores``: the verifier's number per step where it has one (a PRM's probability that the step
  is right), else empty;
- ``first_wrong``: the first step judged ``wrong``, or ``null`` when none is;
- ``info``: provenance (kind, model, revision, prompt, device, settings, when).

The view copies ``verifier`` and ``info.kind`` into every step's details, so on read both are cut
to ``MAX_NAME_CHARS`` (ending in "…") with control characters made spaces (``clip_name``), as a
branch label is cut; ``info.kind`` must be a string.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from o3viz.trace.codec import check_json_value, fail, number, opt, req, req_list

StepVerdict = Literal["ok", "wrong", "unsure"]
STEP_VERDICTS: tuple[str, ...] = get_args(StepVerdict)
MAX_VERDICT_RECORDS = 32  # verifiers per round
MAX_NAME_CHARS = 200  # a verifier's name and its info.kind, as read and as written
_CONTROLS = dict.fromkeys([*range(32), 127, *range(128, 160)], " ")


def clip_name(name: str) -> str:
    """``name`` on one line (control characters made spaces) and at most ``MAX_NAME_CHARS``
    long, cut with "…"; bounded work whatever its length.

    >>> clip_name("prm:m\\x1b[2J\\nx"), len(clip_name("n" * 131_072))
    ('prm:m [2J x', 200)
    """
    cut = name[: MAX_NAME_CHARS + 1].translate(_CONTROLS)
    return cut if len(cut) <= MAX_NAME_CHARS else cut[: MAX_NAME_CHARS - 1] + "…"


@dataclass(eq=False)
class VerdictRecord:
    """One verifier's verdicts on one round's steps (see the module docstring)."""

    verifier: str
    verdicts: list[str | None] = field(default_factory=list)  # (S,) ok | wrong | unsure | None
    scores: list[float | None] = field(default_factory=list)  # (S,) or empty
    info: dict = field(default_factory=dict)

    @property
    def first_wrong(self) -> int | None:
        return next((i for i, v in enumerate(self.verdicts) if v == "wrong"), None)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"verifier": self.verifier, "verdicts": list(self.verdicts)}
        if self.scores:
            d["scores"] = list(self.scores)
        d["first_wrong"] = self.first_wrong
        d["info"] = self.info
        return d

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VerdictRecord) and self.to_dict() == other.to_dict()

    @classmethod
    def from_dict(cls, d: Any, path: str, n_steps: int) -> VerdictRecord:
        if not isinstance(d, dict):
            raise fail(path, "must be an object")
        rec = cls(clip_name(req(d, "verifier", str, path)))
        items = req_list(d, "verdicts", path, None, n_steps)
        if len(items) != n_steps:
            raise fail(f"{path}.verdicts", f"has {len(items)} items; the round has {n_steps} steps")
        for i, v in enumerate(items):
            if v is not None and v not in STEP_VERDICTS:
                raise fail(f"{path}.verdicts[{i}]", f"must be one of {', '.join(STEP_VERDICTS)} or null")
            rec.verdicts.append(v)
        scores = opt(d, "scores", list, path, [])
        if scores and len(scores) != n_steps:
            raise fail(f"{path}.scores", f"has {len(scores)} items; the round has {n_steps} steps")
        rec.scores = [None if s is None else number(s, f"{path}.scores[{i}]") for i, s in enumerate(scores)]
        if d.get("first_wrong", rec.first_wrong) != rec.first_wrong:
            raise fail(f"{path}.first_wrong", "disagrees with the verdicts")
        rec.info = check_json_value(opt(d, "info", dict, path, {}), f"{path}.info")
        if rec.info.get("kind") is not None:
            rec.info["kind"] = clip_name(req(rec.info, "kind", str, f"{path}.info"))
        return rec


def verdict_list(d: dict, path: str, n_steps: int) -> list[VerdictRecord]:
    """A round's ``verdicts`` records, validated; names must be unique within the round."""
    items = req_list(d, "verdicts", path, dict, MAX_VERDICT_RECORDS) if d.get("verdicts") is not None else []
    out = [VerdictRecord.from_dict(x, f"{path}.verdicts[{i}]", n_steps) for i, x in enumerate(items)]
    names = [r.verifier for r in out]
    if len(set(names)) != len(names):
        raise fail(f"{path}.verdicts", "names a verifier twice")
    return out
