"""Moved to ``o3viz.clients`` (the generation clients sit below analysis, branching and the
verifiers); this module re-exports its old names so existing imports keep working."""

from __future__ import annotations

from o3viz.clients.base import Backend, RolloutError, Sampling
from o3viz.clients.cache import MAX_CACHE_FILE_BYTES, RolloutCache
from o3viz.clients.endpoint import MAX_RESPONSE_BYTES, OpenAIBackend
from o3viz.clients.local import LocalBackend, generate_shared_prefix

__all__ = [
    "MAX_CACHE_FILE_BYTES",
    "MAX_RESPONSE_BYTES",
    "Backend",
    "LocalBackend",
    "OpenAIBackend",
    "RolloutCache",
    "RolloutError",
    "Sampling",
    "generate_shared_prefix",
]
