"""Dynamic Attention Allocation as recorded in a round: what the relevance module computed and how
it moved attention (``DAARecord``), and DAA's ``steer`` mode (``SteerRecord``). Both hang off the
round's ``AttentionRecord`` (``o3viz.trace.attention``).

Shapes: G generated tokens, C context positions (prompt and generated).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from o3viz.trace.codec import (
    check_json_value,
    encode_array,
    fail,
    literal,
    opt,
    opt_array,
    req,
    req_list,
)
from o3viz.trace.parts import Segment

# The DAA modes that write a ``DAARecord`` (``steer`` writes a ``SteerRecord``). What each mode does
# is ``o3viz.run.daa.modes.DAA_MODE_TABLE``, above this layer; a test keeps the two in step.
DAA_RECORD_MODES = ("off", "observe", "allocate")
HEAD_CHOICES = ("all", "list", "auto")


@dataclass(eq=False)
class DAARecord:
    """What the relevance module computed and, in ``allocate`` mode, how it moved attention."""

    mode: str = "off"  # off | observe | allocate
    alpha: float = 0.6
    strength: float = 0.0  # λ (global); per-layer/head values go in ``info``
    task_type: str = "general"
    focus: int = 0  # task focus position f
    relevance: np.ndarray | None = None  # (C,) float16, r_j for every context position
    descriptor_tokens: list[int] = field(default_factory=list)  # positions used for e_task
    before: np.ndarray | None = None  # (G, C) float16, mean rows before allocation (allocate mode)
    info: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {
            "mode": self.mode,
            "alpha": self.alpha,
            "strength": self.strength,
            "task_type": self.task_type,
            "focus": self.focus,
            "descriptor_tokens": list(self.descriptor_tokens),
            "info": self.info,
        }
        for k in ("relevance", "before"):
            if getattr(self, k) is not None:
                d[k] = encode_array(getattr(self, k))
        return d

    @classmethod
    def from_dict(cls, d: Any, path: str) -> DAARecord:
        return cls(
            mode=literal(d, "mode", DAA_RECORD_MODES, path),
            alpha=req(d, "alpha", float, path),
            strength=req(d, "strength", float, path),
            task_type=opt(d, "task_type", str, path, "general"),
            focus=opt(d, "focus", int, path, 0),
            relevance=opt_array(d, "relevance", path, 1),
            descriptor_tokens=req_list(d, "descriptor_tokens", path, int),
            before=opt_array(d, "before", path, 2),
            info=check_json_value(opt(d, "info", dict, path, {}), f"{path}.info"),
        )


@dataclass(eq=False)
class SteerRecord:
    """DAA's ``steer`` mode (PASTA): in ``heads``, attention to prompt keys outside ``spans`` was
    scaled by ``alpha`` and renormalised. ``before`` holds the mean rows as they were unsteered."""

    alpha: float = 0.01
    spans: list[Segment] = field(
        default_factory=list
    )  # the marked spans: chars in the rendered prompt, key tokens
    heads: list[tuple[int, int]] = field(default_factory=list)  # (layer, head) pairs that were steered
    head_choice: str = "all"  # all | list (given by the user) | auto (profiled; why in ``info``)
    before: np.ndarray | None = None  # (G, C) float16: mean rows with the steering bias removed
    info: dict = field(default_factory=dict)

    @property
    def ranges(self) -> list[tuple[int, int]]:
        """The marked key-token ranges ``[token_start, token_end)``."""
        return [(s.token_start, s.token_end) for s in self.spans]

    def to_dict(self) -> dict:
        d: dict[str, Any] = {
            "alpha": self.alpha,
            "spans": [s.to_dict() for s in self.spans],
            "heads": [list(h) for h in self.heads],
            "head_choice": self.head_choice,
            "info": self.info,
        }
        if self.before is not None:
            d["before"] = encode_array(self.before)
        return d

    @classmethod
    def from_dict(cls, d: Any, path: str) -> SteerRecord:
        heads = req_list(d, "heads", path, list)
        if any(len(h) != 2 or not all(type(x) is int for x in h) for h in heads):
            raise fail(f"{path}.heads", "every head is a [layer, head] pair of integers")
        return cls(
            alpha=req(d, "alpha", float, path),
            spans=[
                Segment.from_dict(s, f"{path}.spans[{i}]")
                for i, s in enumerate(req_list(d, "spans", path, dict))
            ],
            heads=[(int(a), int(b)) for a, b in heads],
            head_choice=literal(d, "head_choice", HEAD_CHOICES, path),
            before=opt_array(d, "before", path, 2),
            info=check_json_value(opt(d, "info", dict, path, {}), f"{path}.info"),
        )
