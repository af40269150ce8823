"""Keys that keep opening after their trace is replaced, and the one reading of a key a user names.

A trace's key is the hash of its bytes, so verifying it, giving it its running answer or its
importance stores it again under a new key (``o3viz.store.replace``). The new copy's metadata lists
every key it replaced (``replaces``, oldest first), and its index row keeps that list. Each copy
carries the whole chain of its original, so an old key resolves to the newest copy in one step, and
deleting a trace takes its record with it. ``resolve_key`` reads a key, a unique prefix of one (at
least 4 characters) or a replaced key, and says which it was: the CLI's TRACE argument, the app's
trace links and ``o3viz.load_trace`` all read keys through it.

>>> successor_meta({"dataset": "d", "replaces": "aaaaaaaaaaaaaaaa"}, "bbbbbbbbbbbbbbbb")["replaces"]
'aaaaaaaaaaaaaaaa,bbbbbbbbbbbbbbbb'
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from o3viz.errors import TraceError, UsageError
from o3viz.store.store import Store
from o3viz.trace import Trace

__all__ = [
    "MAX_REPLACED",
    "Resolved",
    "load_trace",
    "replaced_keys",
    "resolve_key",
    "successor",
    "successor_meta",
]

MAX_REPLACED = 256  # keys one trace remembers replacing (the oldest are dropped beyond: 4 KB of metadata)
MAX_MATCHES = 50  # rows whose replaced keys a prefix is looked up in
_KEY = re.compile(r"[0-9a-f]{16}")
_PREFIX = re.compile(r"[0-9a-f]{4,16}")


@dataclass(frozen=True)
class Resolved:
    """The stored trace a named key opens (``key``), and the replaced key it was found by."""

    key: str
    replaced: str | None = None  # the old key the name matched, when its trace was replaced

    @property
    def note(self) -> str | None:
        """The one line that says the key was replaced, or None."""
        if self.replaced is None:
            return None
        return f"key {self.replaced} was replaced by {self.key}; opening {self.key}"


def replaced_keys(meta: dict) -> list[str]:
    """The keys a trace's metadata says it replaced, oldest first (anything else in the field is
    not a key and is left out: the file is anyone's to edit)."""
    raw = meta.get("replaces")
    return [k for k in raw.split(",") if _KEY.fullmatch(k)] if isinstance(raw, str) else []


def successor_meta(meta: dict, old: str) -> dict:
    """The metadata of the copy that replaces trace ``old`` (whose metadata is ``meta``): the same,
    with ``old`` added to the keys it replaced (at most ``MAX_REPLACED``, the newest kept)."""
    chain = [k for k in replaced_keys(meta) if k != old] + [old]
    return {**meta, "replaces": ",".join(chain[-MAX_REPLACED:])}


def resolve_key(store: Store, prefix: str) -> Resolved:
    """The one stored trace that ``prefix`` (at least 4 characters) names: the trace whose key
    starts with it, else the trace that replaced the one whose key did. One ``UsageError`` line
    otherwise."""
    if len(prefix) < 4:
        raise UsageError(f"{prefix!r}: give at least 4 characters of a key")
    with store.guard("looking up a key"):
        found = store.conn.execute(
            "SELECT key FROM traces WHERE key >= ? AND key < ? LIMIT 2", (prefix, prefix + "g")
        ).fetchall()
    if len(found) > 1:
        raise UsageError(f"{prefix!r}: more than one trace has that key")
    if found:
        return Resolved(found[0][0])
    via = _replaced(store, prefix) if _PREFIX.fullmatch(prefix) else {}
    if len(via) > 1:
        raise UsageError(f"{prefix!r}: more than one trace has that key")
    if not via:
        raise UsageError(f"{prefix!r}: no trace has that key")
    ((key, old),) = via.items()
    return Resolved(key, old)


def successor(store: Store, key: str) -> Resolved | None:
    """The trace that replaced trace ``key`` (a whole key no stored trace has: a link, a note),
    or None. For the app's trace links, which name whole keys."""
    if not _KEY.fullmatch(key):
        return None
    via = _replaced(store, key)
    return Resolved(*next(iter(via.items()))) if len(via) == 1 else None


def _replaced(store: Store, prefix: str) -> dict[str, str]:
    """Trace key -> the key it replaced that starts with ``prefix`` (a hex prefix, so it holds no
    LIKE wildcard); a scan of the ``replaces`` column, only when no stored key matched."""
    with store.guard("looking up a replaced key"):
        rows = store.conn.execute(
            "SELECT key, replaces FROM traces WHERE replaces LIKE ? LIMIT ?", (f"%{prefix}%", MAX_MATCHES)
        ).fetchall()
    out: dict[str, str] = {}
    for key, replaces in rows:
        old = [k for k in replaced_keys({"replaces": replaces}) if k.startswith(prefix)]
        if old:
            out[key] = old[-1]
    return out


def load_trace(source: str | os.PathLike | bytes, store: Store | None = None) -> Trace:
    """A trace from a file, the file's bytes, or a key of the trace store (``store``, default the
    user's; a prefix or a replaced key as every CLI command takes, saying so in one line on stderr
    when the key was replaced). Raises ``TraceError``."""
    from o3viz.trace.io import load_trace as load_file
    from o3viz.trace.io import parse_trace_bytes

    if isinstance(source, bytes | bytearray):
        return load_file(bytes(source))
    path = Path(source)
    text = os.fspath(source)
    if path.exists() or path.is_symlink() or not _PREFIX.fullmatch(text):
        return load_file(source)
    store = Store() if store is None else store
    try:
        found = resolve_key(store, text)
    except UsageError as exc:
        why = str(exc).split(": ", 1)[-1]
        raise TraceError(f"{text}: no such file, and {why} in the store at {store.root}") from None
    if found.note:
        print(found.note, file=sys.stderr)
    return parse_trace_bytes(store.read_file(found.key))  # a private copy: the caller may change it
