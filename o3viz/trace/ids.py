"""Node ids: the one place they are built and read. A node of a trace is named ``KIND:R:I`` (a
step, a check, a decision point ``dp`` at generated token I, a context segment or an explored
branch of round R), ``alt:R:T:K`` (the K-th alternative at the decision point on token T),
``round:R`` / ``answer:R``, ``comp:E`` (compression event E) or ``task``. The graph, the
outline, the figures, the pages and the URL (``?node=``) all use these names. A step is also
written ``R:I`` on its own (``step_ref``): the CLI's ``--step``, label files and a branch's parent
take it that way, and ``parse_step_ref`` reads either form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

NodeKind = Literal["task", "round", "answer", "comp", "step", "check", "dp", "seg", "branch", "alt"]
# How many numbers follow each kind in an id.
_ARITY: dict[str, int] = {"task": 0, "round": 1, "answer": 1, "comp": 1, "alt": 3}
_ARITY |= dict.fromkeys(("step", "check", "dp", "seg", "branch"), 2)
KINDS: tuple[str, ...] = tuple(_ARITY)
MAX_ID_CHARS = 64  # a longer string (e.g. a hostile ``?node=``) is not an id


@dataclass(frozen=True)
class NodeId:
    kind: NodeKind
    round: int | None = None  # R; None for ``task`` and ``comp``
    index: int | None = None  # I: the step, check, segment or branch; a decision's token; comp's event
    alt: int | None = None  # K, for ``alt`` only

    @property
    def id(self) -> str:
        """The id these parts name (``parse_id``'s inverse).

        >>> parse_id("step:0:3").id, parse_id("comp:2").id
        ('step:0:3', 'comp:2')
        """
        return make_id(self.kind, self.round, self.index, self.alt)


def make_id(
    kind: NodeKind, round: int | None = None, index: int | None = None, alt: int | None = None
) -> str:
    """The id of a node.

    >>> make_id("step", 0, 3)
    'step:0:3'
    >>> make_id("round", 2), make_id("task"), make_id("comp", index=4), make_id("alt", 1, 7, 0)
    ('round:2', 'task', 'comp:4', 'alt:1:7:0')
    """
    if kind not in _ARITY:
        raise ValueError(f"unknown node kind {kind!r}; one of {', '.join(KINDS)}")
    nums = {0: [], 1: [index if kind == "comp" else round], 2: [round, index], 3: [round, index, alt]}
    return ":".join([kind, *(str(int(n)) for n in nums[_ARITY[kind]])])  # int(None) raises: a part is missing


def parse_id(node: str | None) -> NodeId | None:
    """The parts of a node id, or None for anything that is not one (no exception).

    >>> parse_id("step:0:3")
    NodeId(kind='step', round=0, index=3, alt=None)
    >>> parse_id("round:1")
    NodeId(kind='round', round=1, index=None, alt=None)
    >>> parse_id("comp:2").index, parse_id("alt:0:5:1").alt
    (2, 1)
    >>> parse_id("step:x:3") is None, parse_id("") is None, parse_id(None) is None
    (True, True, True)
    """
    if not isinstance(node, str) or not node or len(node) > MAX_ID_CHARS:
        return None
    kind, *parts = node.split(":")
    if kind not in _ARITY or len(parts) != _ARITY[kind]:
        return None
    if not all(p.isascii() and p.isdigit() for p in parts):
        return None
    nums = [int(p) for p in parts]
    if kind == "comp":
        return NodeId("comp", None, nums[0])
    return NodeId(kind, *nums)  # type: ignore[arg-type]


def step_ref(round: int, index: int) -> str:
    """``R:I``: step ``index`` of round ``round`` as the CLI, label files and branches write it.

    >>> step_ref(0, 3)
    '0:3'
    """
    return make_id("step", round, index).removeprefix("step:")


def parse_step_ref(text: object) -> NodeId | None:
    """The step named by ``R:I`` or by its node id ``step:R:I``, or None for anything else (no
    exception, as ``parse_id``).

    >>> parse_step_ref("0:3"), parse_step_ref("step:1:4").id, parse_step_ref("round:1")
    (NodeId(kind='step', round=0, index=3, alt=None), 'step:1:4', None)
    """
    if not isinstance(text, str):
        return None
    node = parse_id(text if text.startswith("step:") else "step:" + text)
    return node if node is not None and node.kind == "step" else None


def parse_index(raw: object, n: int) -> int | None:
    """A position in ``[0, n)`` from a URL value (``?episode=3``), or None for anything else: not
    only ASCII digits (``"²"`` is a digit to ``str.isdigit`` but not to ``int``), too long, or out of
    range. Never an exception, as ``parse_id``.

    >>> parse_index("3", 5), parse_index("²", 5), parse_index("9" * 5000, 5), parse_index("5", 5)
    (3, None, None, None)
    """
    if not isinstance(raw, str) or not 0 < len(raw) <= MAX_ID_CHARS or not (raw.isascii() and raw.isdigit()):
        return None
    k = int(raw)
    return k if k < n else None
