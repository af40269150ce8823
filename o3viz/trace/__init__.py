"""The trace file: dataclasses, validation, and atomic save / safe load."""

from o3viz.trace.attention import AttentionRecord, DAARecord, SteerRecord
from o3viz.trace.compression import CompressionEvent, CompressionRecord
from o3viz.trace.core import (
    SCHEMA_VERSION,
    Alt,
    Branch,
    Check,
    DecisionPoint,
    Provenance,
    Round,
    Segment,
    Step,
    Task,
    Token,
    Trace,
)
from o3viz.trace.io import MAX_FILE_BYTES, MAX_JSON_BYTES, MAX_NESTING, load_trace, save_trace, trace_bytes

__all__ = [
    "SCHEMA_VERSION",
    "MAX_FILE_BYTES",
    "MAX_JSON_BYTES",
    "MAX_NESTING",
    "Alt",
    "AttentionRecord",
    "Branch",
    "Check",
    "CompressionEvent",
    "CompressionRecord",
    "DAARecord",
    "DecisionPoint",
    "Provenance",
    "Round",
    "Segment",
    "Step",
    "SteerRecord",
    "Task",
    "Token",
    "Trace",
    "load_trace",
    "save_trace",
    "trace_bytes",
]
