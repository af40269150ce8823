"""The ``Claim`` record of the claim checker, its rule and verdict names, and the map from a
character offset to its reasoning step. Kept apart so every claims module can build claims."""

from __future__ import annotations

import bisect
from dataclasses import asdict, dataclass
from typing import Literal, get_args

from o3viz.errors import TraceError
from o3viz.verify.claims.evaluate import Verdict

Rule = Literal[
    "arith_eq",
    "chain_mismatch",
    "calc_annotation",
    "percent_of",
    "fraction_of",
    "rounding",
    "final_answer_mismatch",
    "inconsistent_quantity",
]
VERDICTS: tuple[str, ...] = get_args(Verdict)
RULES: tuple[str, ...] = get_args(Rule)


@dataclass
class Claim:
    """One checked statement. Spans are character offsets into the checked text."""

    start: int  # first character of the statement
    end: int  # one past its last character
    step: int  # index of the reasoning step it sits in
    expression: str  # normalized expression, e.g. "16-3-4"
    stated: str  # the stated result as written, e.g. "$18"
    value: str  # what we compute, exactly ("9", "3.5", "10/3"); "" if we cannot
    verdict: Verdict
    rule: Rule
    note: str = ""  # why a claim is unverifiable when that is worth saying: "too large"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: object, path: str = "claims[i]") -> Claim:
        """Validate an untrusted dict (from a trace file) and build a Claim."""
        if not isinstance(d, dict):
            raise TraceError(f"{path}: expected an object, got {type(d).__name__}")
        out = {}
        for name, typ in (
            ("start", int),
            ("end", int),
            ("step", int),
            ("expression", str),
            ("stated", str),
            ("value", str),
            ("verdict", str),
            ("rule", str),
        ):
            if name not in d:
                raise TraceError(f"{path}.{name}: missing")
            v = d[name]
            if not isinstance(v, typ) or isinstance(v, bool):
                raise TraceError(f"{path}.{name}: expected {typ.__name__}, got {type(v).__name__}")
            out[name] = v
        note = d.get("note", "")
        if not isinstance(note, str):
            raise TraceError(f"{path}.note: expected str, got {type(note).__name__}")
        out["note"] = note[:200]
        if out["start"] < 0 or out["end"] < out["start"]:
            raise TraceError(f"{path}.end: span ({out['start']}, {out['end']}) is not valid")
        if out["step"] < -1:
            raise TraceError(f"{path}.step: must be >= -1, got {out['step']}")
        if out["verdict"] not in VERDICTS:
            raise TraceError(f"{path}.verdict: {out['verdict']!r} is not one of {VERDICTS}")
        if out["rule"] not in RULES:
            raise TraceError(f"{path}.rule: {out['rule']!r} is not a known rule")
        return cls(**out)


class Locator:
    """Maps a character offset to its step index; ``shift`` offsets every query (a chunk of a
    longer text checked on its own). Without ``steps`` each line (ended by ``\\n``) is a step,
    counted lazily from the last query: no per-line list for a text of a million lines."""

    shift: int = 0

    def __init__(self, text: str, steps: list[tuple[int, int]] | None) -> None:
        self.text = text
        self.by_line = steps is None
        self.steps = sorted(steps or [])
        self.starts = [a for a, _ in self.steps]
        self._pos, self._line = 0, 0  # cursor: the line holding offset _pos

    def step_of(self, pos: int) -> int:
        pos += self.shift
        if self.by_line:
            return self._line_of(pos)
        i = bisect.bisect_right(self.starts, pos) - 1
        return i if i >= 0 and pos < max(self.steps[i][1], self.steps[i][0] + 1) else -1

    def _line_of(self, pos: int) -> int:
        if not 0 <= pos < len(self.text):
            return -1
        if pos >= self._pos:
            self._line += self.text.count("\n", self._pos, pos)
        else:
            self._line -= self.text.count("\n", pos, self._pos)
        self._pos = pos
        return self._line
