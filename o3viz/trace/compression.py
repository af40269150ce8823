"""Compression data of a run: the segments of the context, the pointer table, and every
compress / expand / release event with its step, segment, score and reason (the compression map).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from o3viz.trace.codec import check_json_value, fail, literal, opt, req, req_list

SEGMENT_STATES = ("kept", "compressed", "expanded", "released")
EVENT_KINDS = ("compress", "expand", "release", "restore")


@dataclass
class CompressionEvent:
    """One decision of the context manager."""

    step: int  # generation step (token index) at which it happened; -1 = before the model
    segment: int
    kind: str  # compress | expand | release | restore
    score: float
    reason: str = ""

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: Any, path: str) -> CompressionEvent:
        return cls(
            req(d, "step", int, path),
            req(d, "segment", int, path),
            literal(d, "kind", EVENT_KINDS, path),
            req(d, "score", float, path),
            opt(d, "reason", str, path, ""),
        )


@dataclass
class CompressionRecord:
    """Everything the compression map needs. Filled by ``o3viz.compress.context``."""

    segments: list[dict] = field(
        default_factory=list
    )  # per segment: index, start, end, tokens, redundancy, score, state, pointer_to
    events: list[CompressionEvent] = field(default_factory=list)
    original_tokens: int = 0
    compressed_tokens: int = 0
    mode: str = "pointer"  # pointer | pointer+eviction | pointer+reprefill
    info: dict = field(default_factory=dict)
    # optional, filled by progressive release (o3viz.compress.release); None when there was no generation
    memory_tokens: list[int] | None = None  # (G,) KV-cache entries after each generation step
    step_scores: list[list[float]] | None = None  # (G, S) each segment's score at each step

    @property
    def ratio(self) -> float:
        return self.compressed_tokens / self.original_tokens if self.original_tokens else 1.0

    def to_dict(self) -> dict:
        d = {
            "segments": self.segments,
            "events": [e.to_dict() for e in self.events],
            "original_tokens": self.original_tokens,
            "compressed_tokens": self.compressed_tokens,
            "mode": self.mode,
            "info": self.info,
        }
        if self.memory_tokens is not None:
            d["memory_tokens"] = self.memory_tokens
        if self.step_scores is not None:
            d["step_scores"] = self.step_scores
        return d

    @classmethod
    def from_dict(cls, d: Any, path: str) -> CompressionRecord:
        segs = req_list(d, "segments", path, dict, 1_000_000)
        evs = req_list(d, "events", path, dict, 10_000_000)
        return cls(
            segments=[check_json_value(s, f"{path}.segments[{i}]") for i, s in enumerate(segs)],
            events=[CompressionEvent.from_dict(e, f"{path}.events[{i}]") for i, e in enumerate(evs)],
            original_tokens=req(d, "original_tokens", int, path),
            compressed_tokens=req(d, "compressed_tokens", int, path),
            mode=opt(d, "mode", str, path, "pointer"),
            info=check_json_value(opt(d, "info", dict, path, {}), f"{path}.info"),
            memory_tokens=_opt_ints(d, "memory_tokens", path),
            step_scores=_opt_matrix(d, "step_scores", path),
        )


def _opt_ints(d: dict, key: str, path: str) -> list[int] | None:
    if d.get(key) is None:
        return None
    return req_list(d, key, path, int, 10_000_000)


def _opt_matrix(d: dict, key: str, path: str) -> list[list[float]] | None:
    """A list of equal-length rows of finite numbers, or None."""
    if d.get(key) is None:
        return None
    rows = req_list(d, key, path, list, 1_000_000)
    out = [req_list({key: r}, key, f"{path}.{key}[{i}]", float, 1_000_000) for i, r in enumerate(rows)]
    if len({len(r) for r in out}) > 1:
        raise fail(f"{path}.{key}", "rows have different lengths")
    return out
