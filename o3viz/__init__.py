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
    "split_spans": "o3viz.text.spans",
    "build_graph": "o3viz.analysis.graph",
    "build_outline": "o3viz.analysis.outline",
    "Outline": "o3viz.analysis.outline",
    "search_outline": "o3viz.analysis.outline",
    "graph_to_json": "o3viz.analysis.graph",
    "tree_layout": "o3viz.analysis.graph",
    "summarize": "o3viz.analysis.summary",
    "TraceSummary": "o3viz.analysis.summary",
    # capture and DAA
    "capture": "o3viz.run.capture",
    "CaptureConfig": "o3viz.run.config",
    "DAAConfig": "o3viz.run.config",
    "parse_layers": "o3viz.run.config",
    "resolve_layers": "o3viz.run.config",
    "register_attention": "o3viz.hooks.instrument",
    "Recorder": "o3viz.hooks.instrument",
    "detect_task_type": "o3viz.tasks.kind",
    "relevance": "o3viz.hooks.daa",
    # verification
    "check_claims": "o3viz.verify.claims.check",
    "Claim": "o3viz.verify.claims.check",
    "verify_code": "o3viz.verify.code",
    "verify_many": "o3viz.verify.code",
    "CodeVerdict": "o3viz.verify.code",
    "TestResult": "o3viz.verify.code",
    "CodeTask": "o3viz.verify.code",
    "load_humaneval": "o3viz.verify.code",
    "load_mbppplus": "o3viz.verify.code",
    "describe_isolation": "o3viz.verify.sandbox.run",
    "available_isolation": "o3viz.verify.sandbox.run",
    "solve": "o3viz.run.solve",
    "SolveConfig": "o3viz.run.solve",
    "load_task": "o3viz.tasks.spec",
    "TaskSpec": "o3viz.tasks.spec",
    "choose_action": "o3viz.verify.policy",
    "claims_to_checks": "o3viz.verify.policy",
    "extract_answer": "o3viz.text.answers",
    "answers_equivalent": "o3viz.text.answers",
    # compression
    "compress_context": "o3viz.compress.context",
    "CompressionConfig": "o3viz.compress.context",
    "CompressedContext": "o3viz.compress.context",
    "build_compression_record": "o3viz.compress.context",
    "generate_with_release": "o3viz.compress.release",
    "run_compressed": "o3viz.run.compressed",
    # imports
    "import_trace": "o3viz.importers",
    "detect_format": "o3viz.importers",
    "enrich_trace": "o3viz.importers.enrich",
    # comparison and the app's library
    "compare_traces": "o3viz.analysis.compare",
    "Comparison": "o3viz.analysis.compare",
    "library_rows": "o3viz.app.library",
    "load_files": "o3viz.app.library",
    "load_upload_in_worker": "o3viz.app.library",
    "WorkerJob": "o3viz.app.worker",
    "run_in_worker": "o3viz.app.worker",
    "load_samples": "o3viz.app.library",
    "LibraryEntry": "o3viz.app.library",
    "RunJob": "o3viz.app.library",
    "UPLOAD_TYPES": "o3viz.app.library",
    "bytes_key": "o3viz.app.library",
    "run_name": "o3viz.app.library",
    "samples_dir": "o3viz.paths",
    "home_dir": "o3viz.paths",
    # the persistent trace store
    "Store": "o3viz.app.store",
    "StoreError": "o3viz.app.store",
    "Query": "o3viz.app.query",
    "StoreLibrary": "o3viz.app.library",
    "ImportJob": "o3viz.app.library",
    "store_entry": "o3viz.app.library",
    "stored_entries": "o3viz.app.library",
    "StoredEntry": "o3viz.app.library",
    "store_rows": "o3viz.app.library",
    "STEP_TYPES": "o3viz.app.index",
    "STORE_COLUMNS": "o3viz.app.library",
    "stage_dataset": "o3viz.app.library",
    "import_dataset": "o3viz.importers.parallel",
    "ImportOptions": "o3viz.importers.bulk",
    "export_steps": "o3viz.app.export",
    "dataset_summary": "o3viz.analysis.dataset",
    "RunRequest": "o3viz.run.request",
    "execute": "o3viz.run.request",
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
