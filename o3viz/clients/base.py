"""What every generation client shares: how continuations are sampled (``Sampling``), what a
client is (``Backend``: ``complete(prompt, k, sampling, first)``) and how it fails (``RolloutError``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from o3viz.errors import O3vizError, UsageError

__all__ = ["Backend", "RolloutError", "Sampling"]


class RolloutError(O3vizError, RuntimeError):
    """A rollout backend failed (endpoint down, garbage reply) after its retries."""


@dataclass
class Sampling:
    """How continuations are sampled."""

    max_tokens: int = 256  # new tokens per rollout
    temperature: float = 0.7
    top_p: float = 0.95
    seed: int = 0

    MAX_TOKENS = 200_000  # a rollout longer than this is a typo, not a plan

    def __post_init__(self) -> None:
        """Numbers are checked before any work (a NaN temperature once generated for 15 s, failed
        on save and left a rollout cached under a NaN key): one ``UsageError`` line each."""
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int):
            raise UsageError(f"max tokens must be a whole number, not {self.max_tokens!r}")
        if not 1 <= self.max_tokens <= self.MAX_TOKENS:
            raise UsageError(f"max tokens must be 1-{self.MAX_TOKENS:,}, not {self.max_tokens}")
        if not (math.isfinite(self.temperature) and self.temperature >= 0):  # 0: greedy
            raise UsageError(f"the temperature must be 0 (greedy) or more, not {self.temperature}")
        if not (math.isfinite(self.top_p) and 0 < self.top_p <= 1):
            raise UsageError(f"top-p must be in (0, 1], not {self.top_p}")

    def key(self) -> dict:
        return {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
        }


class Backend(Protocol):
    name: str  # what the cache key and provenance call this backend and model

    def complete(self, prompt: str, k: int, sampling: Sampling, first: int = 0) -> list[str]:
        """``k`` continuations of ``prompt`` (samples ``first .. first+k-1`` of the seed stream)."""
        ...
