"""What an imported trace *is*, apart from how it came in: its content identity (``content_id``),
by which the store recognises one record imported twice (by the CLI and by an upload)."""

from __future__ import annotations

import hashlib
import json

from o3viz.trace.core import Trace


def content_id(trace: Trace) -> str:
    """What an imported trace *is*, apart from how it came in (file name, record number, format,
    time): its question, text, reference, model and the source's grade, hashed (16 hex). The store
    recognises a record imported twice (by the CLI and by an upload) by it."""
    what = [
        trace.task.question,
        trace.task.reference,
        trace.info.get("reference_text"),
        [r.text for r in trace.rounds],
        [[s.text for s in r.steps] for r in trace.rounds],  # a copy re-split into other steps differs
        trace.provenance.model_id,
        trace.info.get("file_is_correct"),
        # the ids the source itself gives (two samples or epochs may say the same words)
        {
            k: v
            for k, v in (trace.info.get("source_info") or {}).items()
            if k in ("item_id", "sample_id", "epoch")
        },
    ]
    return hashlib.sha256(json.dumps(what, ensure_ascii=False).encode()).hexdigest()[:16]
