"""o3viz: capture a language model's reasoning as it happens (attention allocation, verification
verdicts, compression decisions), check it, and show it.

The public API (``__all__``) is re-exported here; figure builders are in ``o3viz.figures``. Names
load lazily (PEP 562) so that ``import o3viz`` stays light: the app's Library and Inspect pages
never import torch. In a notebook::

    import o3viz
    model, tok = o3viz.load_model()  # the embedded SmolLM2-135M-Instruct
    trace = o3viz.execute(model, tok, o3viz.RunRequest(prompt="What is 17*23?", rounds=2))
    trace.save("run.o3trace.json.gz")
    graph = o3viz.build_graph(trace)
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# The public API (``__all__``): name -> module that defines it. What a notebook user and the
# pages need; the figure builders are in ``o3viz.figures``. Internals (the recorder, attention
# registration, graph serialisation, codec helpers) stay in their modules.
_API: dict[str, str] = {
    # errors
    "O3vizError": "o3viz.errors",
    "UsageError": "o3viz.errors",
    "TraceError": "o3viz.errors",
    "ModelLoadError": "o3viz.errors",
    # the trace: one file, versioned
    "Trace": "o3viz.trace",
    "Round": "o3viz.trace",
    "Task": "o3viz.trace",
    "Step": "o3viz.trace",
    "Token": "o3viz.trace",
    "Check": "o3viz.trace",
    "AttentionRecord": "o3viz.trace",
    "CompressionRecord": "o3viz.trace",
    "SCHEMA_VERSION": "o3viz.trace",
    "load_trace": "o3viz.trace",
    "save_trace": "o3viz.trace",
    "trace_bytes": "o3viz.trace",
    # running the model
    "load_model": "o3viz.model",
    "RunRequest": "o3viz.run.request",
    "execute": "o3viz.run.dispatch",
    "capture": "o3viz.run.capture",
    "solve": "o3viz.run.solve",
    "CaptureConfig": "o3viz.run.config",
    "DAAConfig": "o3viz.run.config",
    "SteerSpan": "o3viz.run.config",
    "parse_layers": "o3viz.run.config",
    "load_task": "o3viz.tasks.spec",
    # verification
    "check_claims": "o3viz.verify.claims.check",
    "verify_code": "o3viz.verify.code",
    "CodeVerdict": "o3viz.verify.code",
    "extract_answer": "o3viz.text.answers",
    # compression
    "compress_context": "o3viz.compress.context",
    "CompressionConfig": "o3viz.compress.context",
    "run_compressed": "o3viz.run.dispatch",
    # importing other models' reasoning
    "import_trace": "o3viz.importers",
    "register_format": "o3viz.importers",
    "list_formats": "o3viz.importers",
    "enrich_trace": "o3viz.importers.enrich",
    # notebooks: the reasoning map, outline and details as one view (a widget where anywidget is)
    "show": "o3viz.notebook",
    "save_view": "o3viz.notebook",
    # the persistent trace store (files + SQLite index) and analysis
    "Store": "o3viz.store.store",
    "Query": "o3viz.store.query",
    "build_graph": "o3viz.analysis.graph",
    "compare_traces": "o3viz.analysis.compare",
    "summarize": "o3viz.analysis.summary",
}

# What the app's pages use besides the API: the session library, background workers, the outline
# and the sandbox note. They resolve like the API (pages import only from ``o3viz``) but are not
# in ``__all__``: they serve the app, and they change with it.
_APP: dict[str, str] = {
    "LibraryEntry": "o3viz.app.library",
    "RunJob": "o3viz.app.jobs",
    "TraceJob": "o3viz.app.jobs",
    "BranchJob": "o3viz.app.jobs",
    "Progress": "o3viz.app.jobs",
    "UPLOAD_TYPES": "o3viz.app.library",
    "content_key": "o3viz.store.store",
    "run_name": "o3viz.app.library",
    "load_files": "o3viz.app.library",
    "take_upload_in_worker": "o3viz.app.uploads",
    "Upload": "o3viz.app.uploads",
    "WorkerJob": "o3viz.app.worker",
    "run_in_worker": "o3viz.app.worker",
    "samples_dir": "o3viz.paths",
    "build_outline": "o3viz.analysis.outline",
    "search_outline": "o3viz.analysis.outline",
    "Outline": "o3viz.analysis.outline",
    "OVERVIEW_FROM": "o3viz.analysis.episodes",
    "find_episodes": "o3viz.analysis.episodes",
    "episode_of": "o3viz.analysis.episodes",
    "episode_outline": "o3viz.analysis.episodes",
    "first_wrong_step": "o3viz.analysis.wrong_step",
    "GRADES": "o3viz.analysis.dataset",
    "OUTLIER_RULE": "o3viz.analysis.dataset",
    "rate_text": "o3viz.analysis.dataset",
    "same_question": "o3viz.analysis.compare",
    "shown_delta": "o3viz.analysis.compare",
    "proxy_line": "o3viz.analysis.provenance",
    "disagreement_line": "o3viz.analysis.provenance",
    "grading": "o3viz.analysis.provenance",
    "limit_line": "o3viz.analysis.provenance",
    "stopped_at_limit": "o3viz.analysis.provenance",
    "trace_label": "o3viz.analysis.provenance",
    "check_label": "o3viz.verify.trace_checks",
    "MAX_PAGE": "o3viz.store.query",
    "available_isolation": "o3viz.verify.sandbox.run",
    "describe_isolation": "o3viz.verify.sandbox.run",
    "home_dir": "o3viz.paths",
    "one_line": "o3viz.errors",
    "make_id": "o3viz.trace.ids",
    "parse_id": "o3viz.trace.ids",
    # the persistent trace store
    "StoreError": "o3viz.store.store",
    "ensure_samples": "o3viz.store.repair",
    # people's step labels, golden sets and agreement
    "Label": "o3viz.store.labels",
    "VERDICTS": "o3viz.store.labels",
    "add_labels": "o3viz.store.labels",
    "label_count": "o3viz.store.labels",
    "labels_on": "o3viz.store.golden",
    "label_queue": "o3viz.store.golden",
    "dataset_agreement": "o3viz.store.golden",
    "export_labels": "o3viz.store.golden",
    "reindex": "o3viz.store.repair",
    "ReindexReport": "o3viz.store.repair",
    "StoreLibrary": "o3viz.app.library",
    "ImportJob": "o3viz.app.jobs",
    "store_entry": "o3viz.app.library",
    "stored_entries": "o3viz.app.library",
    "StoredEntry": "o3viz.app.library",
    "store_rows": "o3viz.app.library",
    "display_name": "o3viz.app.library",
    "STEP_TYPES": "o3viz.store.index",
    "STORE_COLUMNS": "o3viz.app.library",
    "stage_dataset": "o3viz.app.uploads",
    "import_dataset": "o3viz.importers.parallel",
    "ImportOptions": "o3viz.importers.bulk",
    "export_steps": "o3viz.store.export",
    "dataset_summary": "o3viz.analysis.dataset",
    "DATASET_COLUMNS": "o3viz.analysis.dataset:COLUMNS",
    "dataset_frame": "o3viz.analysis.dataset:frame",
    "select_rows": "o3viz.analysis.dataset:select",
    "select_frame": "o3viz.store.columnar",
    # step importance (Thought Anchors measures)
    "analyse_locally": "o3viz.analysis.importance",
    "agreement": "o3viz.analysis.importance",
    "LocalResample": "o3viz.analysis.importance",
    "Sampling": "o3viz.analysis.importance",
    "RolloutCache": "o3viz.analysis.importance",
    # branching a trace at a step
    "Continuer": "o3viz.branch",
    "BranchCost": "o3viz.branch",
    "edit_and_continue": "o3viz.branch",
    "resample_from": "o3viz.branch",
    "resample_until": "o3viz.branch",
    "rollout_branch": "o3viz.branch",
    "MAX_EDIT_CHARS": "o3viz.branch",
    "branches_of": "o3viz.branch",
    "add_branch": "o3viz.branch",
    "aligned_importance": "o3viz.analysis.importance.align",
    "importance_source": "o3viz.analysis.importance.align",
    "explain_load_error": "o3viz.app.messages",
    # attention steering (DAA's steer mode)
    "prompt_sentences": "o3viz.run.steer_spans",
    "check_spans": "o3viz.run.steer_spans",
    "parse_steer_heads": "o3viz.hooks.steer",
    "steering_pair": "o3viz.analysis.steering",
}
_EXPORTS: dict[str, str] = {**_API, **_APP}

__all__ = sorted(_API) + ["__version__"]


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'o3viz' has no attribute {name!r}")
    module, _, attr = target.partition(":")  # "module:attr" exports a name under another name
    value = getattr(importlib.import_module(module), attr or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(_EXPORTS) + ["__version__"]


def _trace_display(trace) -> dict:
    """A Trace's notebook display: the view of ``o3viz.show`` (imported only when shown)."""
    from o3viz.notebook import trace_bundle

    return trace_bundle(trace)


def _register_display() -> None:
    from o3viz.trace.core import register_display

    register_display(_trace_display)


_register_display()  # last: the lazy API above is in place before the trace layer loads
