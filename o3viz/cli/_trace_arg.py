"""The one reading of a command's TRACE argument: a trace file, or a key of the trace store (or a
unique prefix of at least 4 characters), so every command that takes a trace takes what
``o3viz import`` and ``o3viz library list`` print. A key whose trace was replaced (verified, given
its running answer or its importance) opens the trace that replaced it, saying so in one line
(``o3viz.store.successors``)."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from o3viz.errors import UsageError
from o3viz.trace import Trace

_KEY = re.compile(r"[0-9a-f]{4,16}")
TRACE_HELP = "a trace file (.o3trace.json[.gz]) or a store key (o3viz library list shows them)"


@dataclass
class TraceSource:
    """A loaded trace and where it came from: a file (``path``) or the store (``key``)."""

    trace: Trace
    name: str  # what messages call it: the file's name or "store key K"
    path: Path | None = None
    key: str | None = None
    file_bytes: int | None = None


def resolve_key(store, prefix: str) -> str:
    """The one stored key that ``prefix`` (at least 4 characters) names, a replaced key naming the
    trace that replaced it (said on stderr); else ``UsageError``."""
    from o3viz.store.successors import resolve_key as resolve

    found = resolve(store, prefix)
    if found.note:
        print(found.note, file=sys.stderr)
    return found.key


def open_trace(arg: str | Path, store=None) -> TraceSource:
    """Load the trace ``arg`` names: the file when there is one, else the stored trace whose key
    starts with ``arg``. One ``UsageError`` line when it is neither."""
    from o3viz.trace.files import read_bounded
    from o3viz.trace.io import MAX_FILE_BYTES, parse_trace_bytes

    path = Path(arg)
    if path.exists() or path.is_symlink():  # a FIFO or a device is refused by the read, in one line
        data = read_bounded(path, MAX_FILE_BYTES)
        return TraceSource(parse_trace_bytes(data), path.name, path, file_bytes=len(data))
    text = str(arg)
    if not _KEY.fullmatch(text):
        raise UsageError(f"{text}: no such file (nor a store key: keys are 4 to 16 hex digits)")
    if store is None:
        from o3viz.store.store import Store

        store = Store()
    try:
        key = resolve_key(store, text)
    except UsageError as exc:
        raise UsageError(
            f"{text}: no such file, and {str(exc).split(': ', 1)[-1]} in the store at {store.root}"
        ) from None
    data = store.read_file(key)
    return TraceSource(parse_trace_bytes(data), f"store key {key}", key=key, file_bytes=len(data))
