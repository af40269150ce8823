"""Reading and writing trace files (``.o3trace.json`` or ``.o3trace.json.gz``).

Files are untrusted: ``load_trace`` checks the size before reading, stops a gzip bomb at the limit
without expanding it, bounds nesting, values per byte and integer digits (``o3viz.trace.safejson``),
and validates every field through ``Trace.from_dict``. Any
problem raises ``TraceError``; nothing in a file is ever executed (no pickle, no ``torch.load``).
``save_trace`` first checks that ``load_trace`` would accept the bytes (``check_trace_limits``,
naming the limit), then writes atomically through ``o3viz.trace.files.write_atomic``.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from pathlib import Path

from o3viz.errors import TraceError
from o3viz.trace.core import Trace
from o3viz.trace.safejson import MAX_NESTING as MAX_NESTING  # re-exported by o3viz.trace
from o3viz.trace.safejson import loads

MAX_FILE_BYTES = 64 * 1024 * 1024  # compressed or plain, as stored on disk or uploaded
# After decompression. Kept small enough that a gzip bomb is refused in well under a second.
MAX_JSON_BYTES = 128 * 1024 * 1024
SUFFIXES = (".o3trace.json", ".o3trace.json.gz")
_GZIP_MAGIC = b"\x1f\x8b"


def _gunzip(data: bytes) -> bytes:
    """Inflate every gzip member, stopping as soon as the output passes ``MAX_JSON_BYTES``."""
    parts: list[bytes] = []
    total, rest = 0, data
    try:
        while rest:
            d = zlib.decompressobj(wbits=31)
            chunk = rest
            while chunk:
                part = d.decompress(chunk, MAX_JSON_BYTES + 1 - total)
                parts.append(part)
                total += len(part)
                if total > MAX_JSON_BYTES:  # a bomb is never expanded fully
                    raise TraceError(f"(file): decompresses to more than the limit of {MAX_JSON_BYTES} bytes")
                chunk = d.unconsumed_tail
            if not d.eof:
                raise TraceError("(file): not a valid gzip stream (truncated)")
            rest = d.unused_data.lstrip(b"\0")
    except zlib.error as exc:
        raise TraceError(f"(file): not a valid gzip stream ({exc})") from None
    return b"".join(parts)


def parse_trace_bytes(data: bytes) -> Trace:
    """Validate and decode a trace from raw file bytes (plain or gzip)."""
    if len(data) > MAX_FILE_BYTES:
        raise TraceError(f"(file): {len(data)} bytes exceeds the limit of {MAX_FILE_BYTES} bytes")
    if data[:2] == _GZIP_MAGIC:
        data = _gunzip(data)
    if len(data) > MAX_JSON_BYTES:
        raise TraceError(f"(file): {len(data)} bytes exceeds the limit of {MAX_JSON_BYTES} bytes")
    obj = loads(data, "(file)")  # bounded: nesting, values per byte, digits per integer
    try:
        return Trace.from_dict(obj)
    except TraceError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, RecursionError) as exc:
        # Defence in depth: validation should have named the field; never let a raw error out.
        raise TraceError(f"(file): malformed trace ({type(exc).__name__}: {exc})") from None


def load_trace(source: str | os.PathLike | bytes) -> Trace:
    """A trace from a path or from the file's bytes (an upload). Raises ``TraceError``."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return parse_trace_bytes(bytes(source))
    from o3viz.trace.files import read_bounded

    return parse_trace_bytes(read_bounded(source, MAX_FILE_BYTES))


def trace_bytes(trace: Trace, *, gzipped: bool = False) -> bytes:
    """The file's bytes (what ``save_trace`` writes and the app's download button serves)."""
    raw = json.dumps(trace.to_dict(), ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    return gzip.compress(raw, compresslevel=6, mtime=0) if gzipped else raw


def check_trace_limits(data: bytes) -> None:
    """Raise ``TraceError`` naming the limit when ``load_trace`` would refuse these file bytes.

    Called before anything is written or handed on, so o3viz never makes a file it cannot read back.
    """
    if len(data) > MAX_FILE_BYTES:
        hint = "" if data[:2] == _GZIP_MAGIC else "; save as .o3trace.json.gz to compress it"
        raise TraceError(
            f"the trace would be {len(data)} bytes, over the file limit MAX_FILE_BYTES = {MAX_FILE_BYTES}{hint}"
        )
    try:
        parse_trace_bytes(data)
    except TraceError as exc:
        raise TraceError(f"the trace would not load back: {exc}") from None


def save_trace(trace: Trace, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Write atomically; refuse to clobber an existing file unless ``overwrite``."""
    path = Path(path)
    if not path.name.endswith(SUFFIXES):
        raise TraceError(f"{path.name}: trace files end in .o3trace.json or .o3trace.json.gz")
    from o3viz.trace.files import OutputExistsError, write_atomic

    if (path.exists() or path.is_symlink()) and not overwrite:
        # an O3vizError (and still a FileExistsError): a CLI writer that lost a race prints one line
        raise OutputExistsError(f"{path} exists; pass overwrite=True to replace it")
    data = trace_bytes(trace, gzipped=path.name.endswith(".gz"))
    check_trace_limits(data)

    return write_atomic(path, data, overwrite=overwrite)
