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
    # capture and DAA
    "capture": "o3viz.capture",
    "CaptureConfig": "o3viz.capture",
    "DAAConfig": "o3viz.capture",
    "resolve_layers": "o3viz.capture",
    "register_attention": "o3viz.instrument",
    "Recorder": "o3viz.instrument",
    "detect_task_type": "o3viz.daa",
    "relevance": "o3viz.daa",
    # verification
    "check_claims": "o3viz.claims",
    "Claim": "o3viz.claims",
    "verify_code": "o3viz.codeverify",
    "verify_many": "o3viz.codeverify",
    "CodeVerdict": "o3viz.codeverify",
    "TestResult": "o3viz.codeverify",
    "CodeTask": "o3viz.codeverify",
    "load_humaneval": "o3viz.codeverify",
    "load_mbppplus": "o3viz.codeverify",
    "describe_isolation": "o3viz.sandbox",
    "available_isolation": "o3viz.sandbox",
    "solve": "o3viz.solve",
    "SolveConfig": "o3viz.solve",
    "load_task": "o3viz.tasks",
    "TaskSpec": "o3viz.tasks",
    "choose_action": "o3viz.verification",
    "claims_to_checks": "o3viz.verification",
    "extract_answer": "o3viz.answers",
    "answers_equivalent": "o3viz.answers",
    # compression
    "compress_context": "o3viz.compress",
    "CompressionConfig": "o3viz.compress",
    "CompressedContext": "o3viz.compress",
    "build_compression_record": "o3viz.compress",
    "generate_with_release": "o3viz.memory",
    "run_compressed": "o3viz.compress_run",
    # imports
    "import_trace": "o3viz.importers",
    "detect_format": "o3viz.importers",
    "enrich_trace": "o3viz.importers.enrich",
    # comparison and the app's library
    "compare_traces": "o3viz.compare",
    "Comparison": "o3viz.compare",
    "library_rows": "o3viz.library",
    "load_files": "o3viz.library",
    "load_samples": "o3viz.library",
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
