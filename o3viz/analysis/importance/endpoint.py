"""Moved to ``o3viz.clients.post`` (the generation clients sit below analysis, branching and the
verifiers); this module re-exports its old names so existing imports keep working."""

from __future__ import annotations

from o3viz.clients.post import MAX_REDIRECTS, EndpointError, Reply, origin, post

__all__ = ["MAX_REDIRECTS", "EndpointError", "Reply", "origin", "post"]
