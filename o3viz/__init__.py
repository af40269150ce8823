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

__version__ = "0.2.0"

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
    "load_trace": "o3viz.store.successors",  # a file, its bytes, or a store key (as the CLI takes)
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

_EXPORTS: dict[str, str] = dict(_API)

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
