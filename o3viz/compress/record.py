"""The trace's ``CompressionRecord`` from a compression (``o3viz.compress.context``) plus, for a
run with progressive release, the generation-time events and series (``o3viz.compress.release``)."""

from __future__ import annotations

from typing import Any

from o3viz.compress.context import CompressedContext
from o3viz.trace.compression import CompressionEvent, CompressionRecord
from o3viz.trace.core import reproducible


def build_compression_record(
    ctx: CompressedContext,
    events: list[CompressionEvent] | None = None,
    *,
    mode: str = "pointer",
    info: dict | None = None,
    **extra: Any,
) -> CompressionRecord:
    """The trace's ``CompressionRecord`` from a compression (+ generation-time events and series).

    ``extra`` passes optional record fields (``memory_tokens``, ``step_scores``) through.
    """
    cfg = ctx.config
    record_info = {
        "compress_threshold": cfg.compress_threshold,
        "expand_threshold": cfg.expand_threshold,
        "redundancy_weight": cfg.redundancy_weight,
        "min_repeat_tokens": cfg.min_repeat_tokens,
        "score": "w*redundancy + (1-w)*(1-demand)",
        "tokenizer": ctx.tokenizer,
        "pointers": ctx.pointer_table(),
    }
    if not reproducible():  # wall-clock seconds differ run to run (make samples leaves them out)
        record_info["timing"] = {k: round(v, 6) for k, v in ctx.timing.items()}
    record_info.update(info or {})
    return CompressionRecord(
        segments=[s.to_dict() for s in ctx.segments],
        events=list(ctx.events) + list(events or []),
        original_tokens=ctx.original_tokens,
        compressed_tokens=ctx.compressed_tokens,
        mode=mode,
        info=record_info,
        **extra,
    )
