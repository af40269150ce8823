"""A trace file's bytes and the JSON object they hold: the limits a file must meet, gzip inflation
that stops a bomb at the limit, bounded JSON (``o3viz.trace.safejson``: nesting, values per byte,
integer digits), and the checked atomic write.

Files are untrusted: nothing in one is ever executed (no pickle, no ``torch.load``), and every
problem raises ``TraceError``. This module knows nothing of ``Trace``: the caller passes the
function that builds its object from the JSON (``Trace.from_dict``), so ``o3viz.trace.core`` can
use it and ``o3viz.trace.io`` stays a plain layer above both.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from o3viz.errors import TraceError
from o3viz.trace.files import OutputExistsError, read_bounded, write_atomic
from o3viz.trace.safejson import MAX_NESTING as MAX_NESTING  # re-exported: o3viz.trace.io names it
from o3viz.trace.safejson import loads

MAX_FILE_BYTES = 64 * 1024 * 1024  # compressed or plain, as stored on disk or uploaded
# After decompression. Kept small enough that a gzip bomb is refused in well under a second.
MAX_JSON_BYTES = 128 * 1024 * 1024
SUFFIXES = (".o3trace.json", ".o3trace.json.gz")
_GZIP_MAGIC = b"\x1f\x8b"

T = TypeVar("T")


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


def _decode(data: bytes) -> Any:
    """The JSON value in raw file bytes (plain or gzip), within every limit."""
    if len(data) > MAX_FILE_BYTES:
        raise TraceError(f"(file): {len(data)} bytes exceeds the limit of {MAX_FILE_BYTES} bytes")
    if data[:2] == _GZIP_MAGIC:
        data = _gunzip(data)
    if len(data) > MAX_JSON_BYTES:
        raise TraceError(f"(file): {len(data)} bytes exceeds the limit of {MAX_JSON_BYTES} bytes")
    return loads(data, "(file)")  # bounded: nesting, values per byte, digits per integer


def parse_bytes(data: bytes, build: Callable[[Any], T]) -> T:
    """``build`` (a validating ``from_dict``) applied to the JSON in ``data``; raises ``TraceError``."""
    obj = _decode(data)
    try:
        return build(obj)
    except TraceError:
        raise
    except (
        KeyError,
        IndexError,
        TypeError,
        ValueError,
        AttributeError,
        RecursionError,
        ArithmeticError,
    ) as exc:
        # Defence in depth (ArithmeticError: an OverflowError from a number no check foresaw): validation should have named the field; never let a raw error out.
        raise TraceError(f"(file): malformed trace ({type(exc).__name__}: {exc})") from None


def read_source(source: str | os.PathLike | bytes) -> bytes:
    """A file's bytes from a path (read with the size limit) or from the bytes themselves (an upload)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    return read_bounded(source, MAX_FILE_BYTES)


def json_bytes(d: dict, *, gzipped: bool = False) -> bytes:
    """The file's bytes for a JSON object: compact UTF-8, no NaN, gzip with a fixed mtime."""
    raw = json.dumps(d, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    return gzip.compress(raw, compresslevel=6, mtime=0) if gzipped else raw


def check_limits(data: bytes, build: Callable[[Any], Any]) -> None:
    """Raise ``TraceError`` naming the limit when ``parse_bytes(data, build)`` would refuse these bytes.

    Called before anything is written or handed on, so o3viz never makes a file it cannot read back.
    """
    if len(data) > MAX_FILE_BYTES:
        hint = "" if data[:2] == _GZIP_MAGIC else "; save as .o3trace.json.gz to compress it"
        raise TraceError(
            f"the trace would be {len(data)} bytes, over the file limit MAX_FILE_BYTES = {MAX_FILE_BYTES}{hint}"
        )
    try:
        parse_bytes(data, build)
    except TraceError as exc:
        raise TraceError(f"the trace would not load back: {exc}") from None


def save_dict(
    d: dict, path: str | os.PathLike, build: Callable[[Any], Any], *, overwrite: bool = False
) -> Path:
    """Write ``d`` atomically as a trace file (gzip for ``.gz``), once ``check_limits`` passes;
    refuse to clobber an existing file unless ``overwrite``."""
    path = Path(path)
    if not path.name.endswith(SUFFIXES):
        raise TraceError(f"{path.name}: trace files end in .o3trace.json or .o3trace.json.gz")
    if (path.exists() or path.is_symlink()) and not overwrite:
        # an O3vizError (and still a FileExistsError): a CLI writer that lost a race prints one line
        raise OutputExistsError(f"{path} exists; pass overwrite=True to replace it")
    data = json_bytes(d, gzipped=path.name.endswith(".gz"))
    check_limits(data, build)
    return write_atomic(path, data, overwrite=overwrite)
