"""Lossless pointers: the pointer syntax, escaping, near-duplicate edits (difflib opcodes over
word/character pieces), and ``expand_text``, which rebuilds the original from the compressed text
and the pointer table alone.

- ``⟦=§12⟧``: an exact copy of segment 12;
- ``⟦=§12-15⟧``: an exact copy of segments 12 to 15 and the text between them;
- ``⟦~§12⟧``: a near-duplicate of segment 12, whose edit is the next ``near`` entry of the table;
- a literal ``⟦`` is written ``⟦⟦``, so input that already holds pointer syntax round-trips.
"""

from __future__ import annotations

import bisect
import difflib
import re
from dataclasses import dataclass, field
from typing import Protocol

from o3viz.errors import UsageError

POINTER_OPEN, POINTER_CLOSE = "⟦", "⟧"
_POINTER = re.compile(r"⟦⟦|⟦([=~])§(\d+)(?:-(\d+))?⟧")
_PIECE = re.compile(r"\w+|\W", re.S)  # edit granularity: words and single other characters


class HasSpan(Protocol):
    start: int
    end: int


@dataclass
class Pointer:
    """A pointer-table entry: segments ``segment .. segment+count-1`` are written as one pointer to
    ``source .. source+count-1`` (``count`` > 1 only for exact runs)."""

    segment: int
    source: int
    kind: str  # exact | near
    edit: list[tuple[str, int, int, str]] = field(default_factory=list)  # non-equal difflib opcodes
    count: int = 1

    def to_dict(self) -> dict:
        return {
            "segment": self.segment,
            "source": self.source,
            "kind": self.kind,
            "edit": [list(op) for op in self.edit],
            "count": self.count,
        }


class _Chunks:
    """An append-only string with O(log n) slicing, for resolving pointers while expanding."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.starts: list[int] = []
        self.length = 0

    def append(self, s: str) -> None:
        if s:
            self.parts.append(s)
            self.starts.append(self.length)
            self.length += len(s)

    def slice(self, a: int, b: int) -> str:
        if not 0 <= a <= b <= self.length:
            raise UsageError(f"pointer refers to text [{a}, {b}) that is not expanded yet")
        i = max(bisect.bisect_right(self.starts, a) - 1, 0)
        out = []
        while i < len(self.parts) and self.starts[i] < b:
            p, s = self.parts[i], self.starts[i]
            out.append(p[max(a - s, 0) : b - s])
            i += 1
        return "".join(out)


def apply_edit(source: str, edit: list[tuple[str, int, int, str]]) -> str:
    """Rebuild a near-duplicate from its source text and its non-equal opcodes."""
    pieces = _PIECE.findall(source)
    out, pos = [], 0
    for _tag, i1, i2, text in edit:
        out.extend(pieces[pos:i1])
        out.append(text)
        pos = i2
    out.extend(pieces[pos:])
    return "".join(out)


def make_edit(source: str, copy: str) -> list[tuple[str, int, int, str]]:
    """Non-equal opcodes turning ``source`` into ``copy`` (piece indices, replacement text)."""
    a, b = _PIECE.findall(source), _PIECE.findall(copy)
    ops = difflib.SequenceMatcher(None, a, b).get_opcodes()  # any opcodes are lossless
    return [(tag, i1, i2, "".join(b[j1:j2])) for tag, i1, i2, j1, j2 in ops if tag != "equal"]


def expand_text(text: str, segments: list[HasSpan], pointers: list[Pointer]) -> str:
    """Undo escaping and replace every pointer by its source (and edit)."""
    out, pos = _Chunks(), 0
    near = iter([p for p in pointers if p.kind == "near"])
    for m in _POINTER.finditer(text):
        out.append(text[pos : m.start()])
        pos = m.end()
        if m.group(1) is None:
            out.append(POINTER_OPEN)
            continue
        n = int(m.group(2))
        last = int(m.group(3)) if m.group(3) else n  # ⟦=§12-15⟧: segments 12..15 with their gaps
        if not n <= last < len(segments):
            raise UsageError(f"pointer {m.group()} refers to segments outside 0..{len(segments) - 1}")
        src = out.slice(segments[n].start, segments[last].end)
        if m.group(1) == "=":
            out.append(src)
        else:
            p = next(near, None)
            if p is None:
                raise UsageError(f"pointer {m.group()} has no edit in the pointer table")
            out.append(apply_edit(src, p.edit))
    out.append(text[pos:])
    return "".join(out.parts)


def escape(text: str) -> str:
    return text.replace(POINTER_OPEN, POINTER_OPEN * 2)
