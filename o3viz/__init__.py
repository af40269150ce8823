"""o3viz: capture a language model's reasoning as it happens (attention allocation, verification
verdicts, compression decisions), check it, and show it.

The public API is re-exported here. Names load lazily (PEP 562) so that ``import o3viz`` stays
light: the app's Library and Inspect pages never import torch.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # errors
    "O3vizError": "o3viz.errors",
    "TraceError": "o3viz.errors",
    "ModelLoadError": "o3viz.errors",
    "UsageError": "o3viz.errors",
    # the trace
    "Trace": "o3viz.trace",
    "Round": "o3viz.trace",
    "Task": "o3viz.trace",
    "Token": "o3viz.trace",
    "Alt": "o3viz.trace",
    "Step": "o3viz.trace",
    "Segment": "o3viz.trace",
    "Branch": "o3viz.trace",
    "DecisionPoint": "o3viz.trace",
    "Check": "o3viz.trace",
    "Provenance": "o3viz.trace",
    "AttentionRecord": "o3viz.trace",
    "DAARecord": "o3viz.trace",
    "CompressionRecord": "o3viz.trace",
    "CompressionEvent": "o3viz.trace",
    "SCHEMA_VERSION": "o3viz.trace",
    "load_trace": "o3viz.trace",
    "save_trace": "o3viz.trace",
    "trace_bytes": "o3viz.trace",
    # models, steps, graph
    "load_model": "o3viz.model",
    "DEFAULT_MODEL_ID": "o3viz.model",
    "split_spans": "o3viz.steps",
    "build_graph": "o3viz.graph",
    "graph_to_json": "o3viz.graph",
    "tree_layout": "o3viz.graph",
    "summarize": "o3viz.summary",
    "TraceSummary": "o3viz.summary",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'o3viz' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
