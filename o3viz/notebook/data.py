"""The view's data moved to ``o3viz.view.data`` (the trace view's one home); these names stay
importable from here."""

from __future__ import annotations

from o3viz.view.data import (
    MAP_HEIGHT,
    STRIP_HEIGHT,
    compare_view_data,
    episode_data,
    figure_json,
    node_table,
    trace_view_data,
)

__all__ = [
    "MAP_HEIGHT",
    "STRIP_HEIGHT",
    "compare_view_data",
    "episode_data",
    "figure_json",
    "node_table",
    "trace_view_data",
]
