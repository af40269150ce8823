"""Node ids: the one place they are built and read. A node of a trace is named ``KIND:R:I`` (a
step, a check, a decision point or a context segment of round R), ``round:R`` or ``task``. The
graph, the outline, the figures, the pages and the URL (``?node=``) all use these names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

NodeKind = Literal["task", "round", "step", "check", "decision", "seg"]
KINDS: tuple[str, ...] = ("task", "round", "step", "check", "decision", "seg")
MAX_ID_CHARS = 64  # a longer string (e.g. a hostile ``?node=``) is not an id


@dataclass(frozen=True)
class NodeId:
    kind: NodeKind
    round: int | None = None
    index: int | None = None


def make_id(kind: NodeKind, round: int | None = None, index: int | None = None) -> str:
    """The id of a node.

    >>> make_id("step", 0, 3)
    'step:0:3'
    >>> make_id("round", 2)
    'round:2'
    >>> make_id("task")
    'task'
    """
    if kind == "task":
        return "task"
    if kind == "round":
        return f"round:{int(round)}"
    return f"{kind}:{int(round)}:{int(index)}"


def parse_id(node: str | None) -> NodeId | None:
    """The parts of a node id, or None for anything that is not one (no exception).

    >>> parse_id("step:0:3")
    NodeId(kind='step', round=0, index=3)
    >>> parse_id("round:1")
    NodeId(kind='round', round=1, index=None)
    >>> parse_id("step:x:3") is None, parse_id("") is None, parse_id(None) is None
    (True, True, True)
    """
    if not isinstance(node, str) or not node or len(node) > MAX_ID_CHARS:
        return None
    parts = node.split(":")
    kind = parts[0]
    if kind not in KINDS or not all(p.isascii() and p.isdigit() for p in parts[1:]):
        return None
    want = {"task": 1, "round": 2}.get(kind, 3)
    if len(parts) != want:
        return None
    nums = [int(p) for p in parts[1:]] + [None, None]
    return NodeId(kind, nums[0], nums[1])  # type: ignore[arg-type]
