"""Branches in the trace file (schema 3): a branch trace's ``parent`` (which trace and step it
forked from, how, and with what text) and a trace's list of its own ``branches``.

A branch is a full trace: ``edit`` continues the prompt, the steps before the fork and the edited
step; ``resample`` holds K continuations from the prefix before the step, one round each.

>>> p = BranchParent("ab12cd34ef56ab12", "0:2", "edit", edited="So 42 muffins.")
>>> BranchParent.from_dict(p.to_dict(), "parent") == p
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from o3viz.trace.codec import check_json_value, fail, literal, opt, req

BranchKind = Literal["edit", "resample"]
BRANCH_KINDS: tuple[str, ...] = get_args(BranchKind)
MAX_BRANCHES = 1024  # links one trace may list
MAX_LABEL_CHARS = 80


@dataclass
class BranchParent:
    """Where a branch came from: the parent's content key and the fork step ``R:I``."""

    key: str  # the parent trace's content key ("" when the parent was never stored)
    step: str  # the fork step, "R:I" (round R, step I of the parent)
    kind: BranchKind
    edited: str | None = None  # the step's new text (``edit``); None for ``resample``
    original: str | None = None  # the step's text in the parent
    prefix_chars: int = 0  # characters of the parent's reply kept before the fork step
    info: dict = field(default_factory=dict)  # how it was continued: backend, proxy, tries, until

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_dict(cls, d: Any, path: str) -> BranchParent:
        if not isinstance(d, dict):
            raise fail(path, "must be an object")
        return cls(
            req(d, "key", str, path),
            req(d, "step", str, path),
            literal(d, "kind", BRANCH_KINDS, path),  # type: ignore[arg-type]
            opt(d, "edited", str, path),
            opt(d, "original", str, path),
            opt(d, "prefix_chars", int, path, 0),
            check_json_value(opt(d, "info", dict, path, {}), f"{path}.info"),
        )


@dataclass
class BranchLink:
    """One branch a trace lists: its key, fork step, kind, a short label, and how it ended."""

    key: str
    step: str  # "R:I" of this trace
    kind: BranchKind
    label: str = ""  # at most ``MAX_LABEL_CHARS``
    answer: str | None = None  # the branch's final answer
    verdict: str | None = None  # the branch's final verdict (pass | fail | unverifiable)

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_dict(cls, d: Any, path: str) -> BranchLink:
        if not isinstance(d, dict):
            raise fail(path, "must be an object")
        return cls(
            req(d, "key", str, path),
            req(d, "step", str, path),
            literal(d, "kind", BRANCH_KINDS, path),  # type: ignore[arg-type]
            opt(d, "label", str, path, "")[:MAX_LABEL_CHARS],
            opt(d, "answer", str, path),
            opt(d, "verdict", str, path),
        )


def parent_of(d: dict) -> BranchParent | None:
    """A trace dict's ``parent`` (None when absent)."""
    return None if d.get("parent") is None else BranchParent.from_dict(d["parent"], "parent")


def links_of(d: dict) -> list[BranchLink]:
    """A trace dict's ``branches`` list, bounded."""
    items = opt(d, "branches", list, "", [])
    if len(items) > MAX_BRANCHES:
        raise fail("branches", f"has {len(items)} items, more than the limit {MAX_BRANCHES}")
    return [BranchLink.from_dict(x, f"branches[{i}]") for i, x in enumerate(items)]
