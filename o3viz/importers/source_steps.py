"""A source's own list of steps (ProcessBench's ``steps``, MR-GSM8K's ``model_output_steps``, a
record's ``steps`` field, PRM800K's rated steps) kept as the trace's steps, one to one, so that
a label that names a source step names the same o3viz step.

The steps are joined with a blank line between them; each becomes one o3viz step, its text the
source's (leading and trailing space stripped; an empty step reads ``(empty step)``). Only a step
longer than ``MAX_SOURCE_STEP_CHARS`` (a whole reasoning given as one "step") is split by o3viz's
own rule (lines, then sentences), and each such split is recorded in the trace's info:
``info["source_steps"] = {"count": N, "split": {"3": 5}}`` (source step 3, counted from 0, became
5 o3viz steps). ``source_step_map`` reads that back as each source step's o3viz steps.

>>> text, bounds = step_bounds(["2+3 = 5.", "", "So 5."])
>>> spans, split = source_spans(text, bounds)
>>> [text[a:b] for a, b in spans], split
(['2+3 = 5.', '(empty step)', 'So 5.'], {})
>>> source_step_map({"count": 3, "split": {"1": 2}})
[[0], [1, 2], [3]]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from o3viz.text.spans import split_spans

__all__ = [
    "EMPTY_STEP",
    "MAX_SOURCE_STEP_CHARS",
    "SourceStepCount",
    "join_steps",
    "source_spans",
    "step_bounds",
    "source_step_map",
    "steps_note",
]

STEP_JOIN = "\n\n"  # between two source steps in the trace's text
EMPTY_STEP = "(empty step)"  # an empty source step keeps its place, so later indices still match
MAX_SOURCE_STEP_CHARS = 4_000  # about 1k tokens; ProcessBench's longest step is 1,470 characters


def _clean(steps: list[str]) -> list[str]:
    return [s.strip() or EMPTY_STEP for s in steps]


def join_steps(steps: list[str]) -> str:
    """The trace text of a list of steps (what ``source_spans`` splits back)."""
    return STEP_JOIN.join(_clean(steps))


def step_bounds(steps: list[str]) -> tuple[str, list[tuple[int, int]]]:
    """``(text, bounds)``: the joined text and each source step's ``[start, end)`` in it."""
    bounds, pos = [], 0
    for s in _clean(steps):
        bounds.append((pos, pos + len(s)))
        pos += len(s) + len(STEP_JOIN)
    return join_steps(steps), bounds


def source_spans(text: str, bounds: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], dict[str, int]]:
    """``(spans, split)``: the ``[start, end)`` span of each o3viz step of ``text`` and
    ``{source index: parts}`` for each source step o3viz split (one over the length cap)."""
    spans: list[tuple[int, int]] = []
    split: dict[str, int] = {}
    for i, (a, b) in enumerate(bounds):
        parts = [(a + x, a + y) for x, y in split_spans(text[a:b])] if b - a > MAX_SOURCE_STEP_CHARS else []
        if len(parts) > 1:
            split[str(i)] = len(parts)
            spans += parts
        else:
            spans.append((a, b))
    return spans, split


def source_step_map(info: Mapping[str, Any] | None) -> list[list[int]] | None:
    """Each source step's o3viz step indices, from a trace's ``info["source_steps"]``; None when
    the trace was not built from a list of steps (or the record is malformed)."""
    if not isinstance(info, Mapping):
        return None
    count, split = info.get("count"), info.get("split") or {}
    if type(count) is not int or count < 0 or not isinstance(split, Mapping):
        return None
    out, nxt = [], 0
    for i in range(count):
        parts = split.get(str(i), 1)
        parts = parts if type(parts) is int and parts >= 1 else 1
        out.append(list(range(nxt, nxt + parts)))
        nxt += parts
    return out


def steps_note(info: Mapping[str, Any] | None) -> str:
    """For a summary line: ``the source's 12 steps, one to one`` or ``12 source steps, 1 split by
    o3viz (over 4,000 characters) into 7``; ``""`` for a trace not built from a list of steps."""
    steps = source_step_map(info)
    if steps is None:
        return ""
    split = [len(s) for s in steps if len(s) > 1]
    if not split:
        return f"the source's {len(steps)} steps, one to one"
    return (
        f"{len(steps)} source steps, {len(split)} split by o3viz "
        f"(over {MAX_SOURCE_STEP_CHARS:,} characters) into {sum(split)}"
    )


@dataclass
class SourceStepCount:
    """Running totals over many traces, for an import's summary line."""

    source: int = 0  # source steps read, in traces built from a list of steps
    steps: int = 0  # the o3viz steps they became
    split: int = 0  # source steps o3viz split

    def add(self, info: Mapping[str, Any] | None) -> None:
        steps = source_step_map(info)
        if steps is not None:
            self.source += len(steps)
            self.steps += sum(len(s) for s in steps)
            self.split += sum(len(s) > 1 for s in steps)

    def merge(self, other: SourceStepCount) -> None:
        self.source += other.source
        self.steps += other.steps
        self.split += other.split

    def text(self) -> str:
        """``2,082 source steps kept one to one`` (or how many o3viz split); ``""`` when none."""
        if not self.source:
            return ""
        if not self.split:
            return f"{self.source:,} source steps kept one to one"
        return (
            f"{self.source:,} source steps as {self.steps:,} steps: {self.split:,} split by o3viz "
            f"(over {MAX_SOURCE_STEP_CHARS:,} characters)"
        )
