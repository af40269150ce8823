"""Golden-set files (``o3viz labels import``) read a line at a time, and each line a label at a
time. A line longer than ``MAX_PARSED_LINE`` is walked member by member (``json.JSONDecoder.raw_decode``
on each scalar), never parsed whole: ``json.loads`` on an 8 MB line of 186,000 small labels holds
31 bytes per byte of the line at once, the walk holds the line and one label. A repeated ``key``,
``steps``, ``step`` or ``labels`` is refused there (the walk cannot keep only the last).

>>> line = b'{"key": "k", "steps": [{"step": "0:2", "labels": [{"labeller": "ann", "verdict": "wrong"}]}]}'
>>> [(lab.key, lab.step_id, lab.labeller) for lab in golden_labels(line, 1, "g.jsonl")]
[('k', '0:2', 'ann')]
"""

from __future__ import annotations

import json
import os
import re
from array import array
from collections.abc import Iterator

from o3viz.errors import O3vizError, UsageError
from o3viz.store.labels import Label, check_label
from o3viz.trace.bounded import MAX_RECORD_BYTES, read_lines
from o3viz.trace.files import open_regular
from o3viz.trace.ids import parse_step_ref
from o3viz.trace.safejson import DECODER, loads

__all__ = ["MAX_LABEL_FILE_BYTES", "golden_labels", "label_lines"]

MAX_LABEL_FILE_BYTES = 256 << 20
MAX_DEPTH = 64  # nesting of the members a line may carry beside its labels (skipped, never built)
_LABEL_FIELDS = ("labeller", "verdict", "first_error", "type", "note")
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODE = DECODER.raw_decode  # safejson's number guards: no NaN, no 5,000-digit integer
MAX_PARSED_LINE = 64 << 10  # bytes: a line this short is parsed whole (a few MiB at most), faster
MAX_FLAT_LABEL = 4096  # characters: a label object this short, and flat, is decoded whole
# an object with no list or object inside: text outside strings, and strings
_FLAT = re.compile(r'\{[^{}\[\]"]*(?:"(?:[^"\\]|\\.)*"[^{}\[\]"]*)*\}')


class _Cursor:
    """A position in one line's JSON text, read forward one token or scalar at a time."""

    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0

    def peek(self) -> str:
        char = self.text[self.at : self.at + 1]
        if char and char in " \t\n\r":
            self.at = _SPACE.match(self.text, self.at).end()
            char = self.text[self.at : self.at + 1]
        return char

    def take(self, char: str) -> bool:
        if self.peek() != char:
            return False
        self.at += 1
        return True

    def expect(self, char: str) -> None:
        if not self.take(char):
            raise ValueError(f"expected {char!r} at character {self.at}")

    def scalar(self):
        """The text, number, true, false or null here (a list or object is refused, not built)."""
        if self.peek() in ("[", "{"):
            raise ValueError(f"a list or object at character {self.at}, where a value belongs")
        value, self.at = _DECODE(self.text, self.at)
        return value

    def elements(self, open_: str, close: str) -> Iterator[None]:
        """Once per element of the list (or member of the object) here; the caller reads each."""
        self.expect(open_)
        if self.take(close):
            return
        while True:
            yield
            if self.take(close):
                return
            self.expect(",")

    def members(self, wanted: tuple[str, ...] = ()) -> Iterator[str]:
        """The names of the object's members; the caller reads each value. A name of ``wanted``
        given twice is refused (``json.loads`` would keep the last, and the walk sees both)."""
        seen: set[str] = set()
        for _ in self.elements("{", "}"):
            name = self.scalar()
            if not isinstance(name, str):
                raise ValueError(f"a member name that is not text at character {self.at}")
            if name in wanted:
                if name in seen:
                    raise ValueError(f"{name!r} given twice")
                seen.add(name)
            self.expect(":")
            yield name

    def skip(self, depth: int = 0) -> None:
        """Read past the value here without building it."""
        if depth > MAX_DEPTH:
            raise ValueError(f"nested deeper than {MAX_DEPTH}")
        char = self.peek()
        if char == "[":
            for _ in self.elements("[", "]"):
                self.skip(depth + 1)
        elif char == "{":
            for _ in self.members():
                self.skip(depth + 1)
        else:
            self.scalar()


def _events(text: str) -> Iterator[tuple[str, object]]:
    """In the order of the text: ``("key", value)``; per step ``("step_id", "R:I")``, ``("label",
    fields)`` for each of its labels, and ``("end", "R:I")`` at its end. Other members are read
    past, never built."""
    cur, found = _Cursor(text), set()
    for name in cur.members(("key", "steps")):
        found.add(name)
        if name == "key":
            yield "key", cur.scalar()
        elif name == "steps":
            for _ in cur.elements("[", "]"):
                yield from _step_events(cur)
        else:
            cur.skip()
    if cur.peek():
        raise ValueError(f"extra data at character {cur.at}")
    for name in ("key", "steps"):
        if name not in found:
            raise KeyError(name)


def _step_events(cur: _Cursor) -> Iterator[tuple[str, object]]:
    step, found = None, set()
    for name in cur.members(("step", "labels")):
        found.add(name)
        if name == "step":
            step = cur.scalar()
            yield "step_id", step
        elif name == "labels":
            for _ in cur.elements("[", "]"):
                yield "label", _label_fields(cur)
        else:
            cur.skip()
    for name in ("step", "labels"):
        if name not in found:
            raise KeyError(name)
    yield "end", step


def _label_fields(cur: _Cursor) -> dict:
    """A label's fields; a short object with no list or object inside is decoded in one call."""
    cur.peek()
    if _FLAT.match(cur.text, cur.at, cur.at + MAX_FLAT_LABEL):
        value, cur.at = _DECODE(cur.text, cur.at)
        return {k: v for k, v in value.items() if k in _LABEL_FIELDS}
    fields = {}
    for name in cur.members(_LABEL_FIELDS):
        if name in _LABEL_FIELDS:
            fields[name] = cur.scalar()
        else:
            cur.skip()
    return fields


def _step_id(value) -> tuple[int, int]:
    node = parse_step_ref(value)
    if node is None:
        raise ValueError(f"step {str(value)[:20]!r} is not R:I")
    return node.round, node.index  # type: ignore[return-value]


def golden_labels(line: bytes, n: int, where: str) -> Iterator[Label]:
    """The labels of one golden-set line (``export_labels``), each checked; else one line."""
    try:
        text = line.decode(json.detect_encoding(line), "surrogatepass")
        yield from (_parsed_labels(loads(text, "JSON")) if len(line) <= MAX_PARSED_LINE else _labels(text))
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError, O3vizError) as exc:
        raise UsageError(f"{where} line {n}: not a golden-set record ({str(exc)[:80]})") from None


def _labels(text: str) -> Iterator[Label]:
    """One walk while each label's key and step come before it (as ``export_labels`` writes
    them); from the first that does not, a walk for the key and step ids, then one for the rest."""
    key, step, done = None, None, 0
    for kind, value in _events(text):
        if kind == "key":
            key = str(value)
        elif kind in ("step_id", "end"):
            step = _step_id(value) if kind == "step_id" else None
        elif key is None or step is None:
            break
        else:
            yield _label(key, step, value)
            done += 1
    else:
        return
    steps = array("q")  # round, index of each step, in order
    for kind, value in _events(text):
        if kind == "key":
            key = str(value)
        elif kind == "end":
            steps.extend(_step_id(value))
    at, seen = 0, 0
    for kind, value in _events(text):
        if kind == "end":
            at += 2
        elif kind == "label":
            seen += 1
            if seen > done:
                yield _label(key, (steps[at], steps[at + 1]), value)


def _parsed_labels(rec: dict) -> Iterator[Label]:
    """The labels of a short line parsed whole (``json.loads``: a repeated name keeps its last)."""
    key = str(_scalar(rec["key"]))
    for st in rec["steps"]:
        step = _step_id(_scalar(st["step"]))
        for fields in st["labels"]:
            yield _label(key, step, fields)


def _scalar(value):
    if isinstance(value, list | dict):
        raise ValueError("a list or object where a value belongs")
    return value


def _label(key, step: tuple[int, int], fields: dict) -> Label:
    fields = {k: _scalar(v) for k, v in fields.items() if k in _LABEL_FIELDS}
    return check_label(Label(key, *step, str(fields["labeller"]), str(fields["verdict"]),
                             bool(fields.get("first_error")), fields.get("type"), str(fields.get("note") or "")))  # fmt: skip


def label_lines(path: str | os.PathLike) -> Iterator[tuple[int, bytes]]:
    """``(n, line)`` per non-blank line of a golden-set file; a line over the record limit is one
    ``UsageError`` line."""
    where = os.fspath(path)
    with open_regular(path, MAX_LABEL_FILE_BYTES, "the label file limit") as f:
        for n, line, problem in read_lines(f, MAX_RECORD_BYTES):
            if problem is not None:
                raise UsageError(f"{where} line {n}: {problem}")
            if line.strip():
                yield n, line
