"""Reading and writing trace files (``.o3trace.json`` or ``.o3trace.json.gz``): the functions the
rest of o3viz calls, over ``Trace`` and ``o3viz.trace.jsonfile``.

Files are untrusted: ``load_trace`` checks the size before reading, stops a gzip bomb at the limit
without expanding it, bounds nesting, and validates every field through ``Trace.from_dict``. Any
problem raises ``TraceError``; nothing in a file is ever executed (no pickle, no ``torch.load``).
``save_trace`` first checks that ``load_trace`` would accept the bytes (``check_trace_limits``,
naming the limit), then writes atomically through ``o3viz.trace.files.write_atomic``.
"""

from __future__ import annotations

import os
from pathlib import Path

from o3viz.trace.core import Trace
from o3viz.trace.jsonfile import (  # noqa: F401 (re-exported: callers import the limits from here)
    MAX_FILE_BYTES,
    MAX_JSON_BYTES,
    MAX_NESTING,
    SUFFIXES,
    check_limits,
    json_bytes,
    parse_bytes,
)


def parse_trace_bytes(data: bytes) -> Trace:
    """Validate and decode a trace from raw file bytes (plain or gzip)."""
    return parse_bytes(data, Trace.from_dict)


def load_trace(source: str | os.PathLike | bytes) -> Trace:
    """A trace from a path or from the file's bytes (an upload). Raises ``TraceError``."""
    return Trace.load(source)


def trace_bytes(trace: Trace, *, gzipped: bool = False) -> bytes:
    """The file's bytes (what ``save_trace`` writes and the app's download button serves)."""
    return json_bytes(trace.to_dict(), gzipped=gzipped)


def check_trace_limits(data: bytes) -> None:
    """Raise ``TraceError`` naming the limit when ``load_trace`` would refuse these file bytes.

    Called before anything is written or handed on, so o3viz never makes a file it cannot read back.
    """
    check_limits(data, Trace.from_dict)


def save_trace(trace: Trace, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Write atomically; refuse to clobber an existing file unless ``overwrite``."""
    return trace.save(path, overwrite=overwrite)
