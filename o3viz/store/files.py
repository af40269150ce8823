"""The store's folder of trace files: where a key's trace and metadata live, and writing and
reading them. A trace is named by the sha256 of its gzip bytes (``content_key``), so the same trace
is the same file; its metadata is written first, so a trace file always has its metadata.

Writes are atomic (``write_atomic``); reads are bounded and never follow a link (``read_bounded``).
Nothing here touches the index (``o3viz.store.schema``): the rows are ``o3viz.store.store``'s."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from o3viz.errors import O3vizError
from o3viz.store.errors import guard
from o3viz.store.meta import MAX_META_BYTES, check_meta
from o3viz.trace.files import read_bounded, write_atomic
from o3viz.trace.io import MAX_FILE_BYTES
from o3viz.trace.safejson import loads

SUFFIX = ".o3trace.json.gz"
META_SUFFIX = ".meta.json"


def content_key(data: bytes) -> str:
    """The key (and file name) of a stored file: the sha256 of its bytes, 16 hex digits."""
    return hashlib.sha256(data).hexdigest()[:16]


class TraceFolder:
    """The files of the store at ``root``: ``root/traces/ab/ab12…ef{SUFFIX}`` and its
    ``{META_SUFFIX}``. Failures of ``write_encoded`` are one-line ``StoreError``s; the other writes
    leave that to the caller, whose message says what it was doing."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.dir = root / "traces"

    def path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}{SUFFIX}"

    def meta_path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}{META_SUFFIX}"

    def write_encoded(self, data: bytes, meta: dict, *, durable: bool = True) -> tuple[str, dict]:
        """Write a trace file's gzip bytes (already validated: a parsed trace's) and its metadata;
        return the key and the metadata now stored (an earlier copy's, when the trace was there)."""
        key = content_key(data)
        meta = check_meta({"added_at": time.time(), **meta}, "metadata")  # only typed fields reach the index
        with guard(self.root, "writing a trace"):
            path = self.path(key)
            if not path.exists():
                self.write_meta(key, meta, durable=durable)
                # the trace last: a trace file always has its metadata; same key, same bytes, so a
                # concurrent writer of the same trace replaces it with an identical file
                write_atomic(path, data, overwrite=True, durable=durable)
            elif self.meta_path(key).exists():
                try:
                    meta = self.read_meta(key)
                except O3vizError:  # a damaged metadata file: this writer's metadata replaces it
                    self.write_meta(key, meta, durable=durable)
        return key, meta

    def write_meta(self, key: str, meta: dict, *, durable: bool = True) -> None:
        """Replace ``key``'s metadata file with ``meta`` as it is (the caller validated it)."""
        data = json.dumps(meta, sort_keys=True).encode()
        write_atomic(self.meta_path(key), data, overwrite=True, durable=durable)

    def read_meta(self, key: str) -> dict:
        """The trace's metadata, validated (``o3viz.store.meta``); ``{}`` when it has none. A file
        that is not a regular file, too big, not JSON, or holds a wrong type: one-line ``TraceError``."""
        path = self.meta_path(key)
        if not path.exists() and not path.is_symlink():
            return {}
        data = read_bounded(path, MAX_META_BYTES, follow_symlinks=False)
        return check_meta(loads(data, path.name), path.name)

    def read_file(self, key: str) -> bytes:
        """A stored trace file's bytes: a regular file (never a link) of at most ``MAX_FILE_BYTES``."""
        return read_bounded(self.path(key), MAX_FILE_BYTES, follow_symlinks=False)

    def remove(self, key: str) -> None:
        """Remove ``key``'s trace and metadata files (either may be gone already)."""
        self.path(key).unlink(missing_ok=True)
        self.meta_path(key).unlink(missing_ok=True)

    def keys(self) -> set[str]:
        """The keys of the trace files in the folder (temp files, named with a dot, left out)."""
        if not self.dir.is_dir():
            return set()
        return {p.name[: -len(SUFFIX)] for p in self.dir.glob(f"*/*{SUFFIX}") if not p.name.startswith(".")}
