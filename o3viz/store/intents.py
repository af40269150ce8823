"""A replace's intent on disk, so a process killed halfway through ``o3viz.store.replace`` leaves
something ``reindex`` can finish: ``replacing/<old>.json`` in the store folder says which trace is
being replaced by which copy, with the metadata each ends with and the branches that move.

The writer creates the file (whole, fsynced) before it changes anything, holds an exclusive
``flock`` on it while it works, and removes it when done. ``pending`` yields only intents whose
writer is gone (the lock is free: a killed process's locks go with it), so a reindex never
finishes a replace that is still running. One intent per trace: a second replace of a trace whose
intent is on disk is refused until ``reindex`` has finished the first.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from o3viz.errors import O3vizError, TraceError
from o3viz.store.errors import StoreError
from o3viz.store.meta import check_meta
from o3viz.store.store import Store
from o3viz.trace.safejson import loads

__all__ = ["FOLDER", "Held", "Intent", "begin", "pending"]

FOLDER = "replacing"
MAX_INTENT_BYTES = 1 << 20  # an intent is a few hundred bytes; its branch list is bounded below
MAX_MOVED = 100_000
_KEY = re.compile(r"[0-9a-f]{16}")


@dataclass
class Intent:
    """Trace ``old`` being replaced by its copy ``new``: what each holds once it is done."""

    old: str
    new: str
    meta: dict  # the copy's metadata (its dataset fields and the keys it replaced)
    keep_old: bool = False  # a branch's file names the original: it stays, out of its dataset
    old_meta: dict = field(default_factory=dict)  # the kept original's metadata
    moved: list[str] = field(default_factory=list)  # branches whose parent becomes the copy

    def to_bytes(self) -> bytes:
        return json.dumps(self.__dict__, sort_keys=True).encode()

    @classmethod
    def parse(cls, data: bytes, where: str) -> Intent:
        """An intent from its file's bytes; one ``TraceError`` line for anything else (the store
        folder is anyone's to edit)."""
        d = loads(data, where)
        if not isinstance(d, dict):
            raise TraceError(f"{where}: not a JSON object")
        if not isinstance(d.get("moved", []), list) or not isinstance(d.get("keep_old", False), bool):
            raise TraceError(f"{where}: moved must be a list and keep_old true or false")
        keys = [d.get("old"), d.get("new"), *d.get("moved", [])]
        if len(keys) > MAX_MOVED or not all(isinstance(k, str) and _KEY.fullmatch(k) for k in keys):
            raise TraceError(f"{where}: its keys are not trace keys")
        return cls(
            d["old"],
            d["new"],
            check_meta(d.get("meta", {}), where),
            d.get("keep_old", False),
            check_meta(d.get("old_meta", {}), where),
            list(d.get("moved") or []),
        )


class Held:
    """An intent this process wrote and holds locked: ``done`` removes it, ``close`` (after a
    failure) leaves it on disk for ``reindex``."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path, self.fd = path, fd

    def done(self) -> None:
        self.path.unlink(missing_ok=True)  # while still locked: no reindex can take it meanwhile
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing releases the lock
            self.fd = -1


def _busy(old: str) -> StoreError:
    return StoreError(
        f"trace {old} is being replaced by another process, or a replace of it was cut short; "
        "run `o3viz library reindex` (it finishes a cut-short replace) and try again"
    )


def begin(store: Store, intent: Intent) -> Held:
    """Write ``intent`` (whole and on disk before the caller changes anything) and hold it locked."""
    folder = store.root / FOLDER
    path = folder / f"{intent.old}.json"
    with store.guard("recording a replace"):
        folder.mkdir(parents=True, exist_ok=True)
        if path.exists():
            raise _busy(intent.old)
        fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=folder)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # the lock travels with the file to its final name
            view = memoryview(intent.to_bytes())
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
            try:
                os.link(tmp, path)  # refuses an existing name: two writers of one trace, one wins
            except FileExistsError:
                raise _busy(intent.old) from None
            _sync_folder(folder)
        except BaseException:
            os.close(fd)
            raise
        finally:
            Path(tmp).unlink(missing_ok=True)
    return Held(path, fd)


def _sync_folder(folder: Path) -> None:
    """The new name on disk too (a power cut must not lose an intent whose replace went on)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def pending(store: Store) -> Iterator[tuple[Held, Intent | None, str | None]]:
    """Each intent whose writer is gone, locked by this process: (held, intent, None), or (held,
    None, error line) for a file that is not an intent. The caller calls ``done`` or ``close``."""
    folder = store.root / FOLDER
    if not folder.is_dir():
        return
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):  # a writer's temp file: its own, or a killed one's
            _drop_orphan(path)
            continue
        held = _take(path)
        if held is None:
            continue
        try:
            data = os.pread(held.fd, MAX_INTENT_BYTES + 1, 0)
            if len(data) > MAX_INTENT_BYTES:
                raise TraceError(f"{path.name}: larger than {MAX_INTENT_BYTES} bytes")
            yield held, Intent.parse(data, path.name), None
        except (O3vizError, OSError) as exc:
            yield held, None, f"{path.name}: {exc}"


def _take(path: Path) -> Held | None:
    """``path`` opened and locked, when no live writer holds it and it is still the file of that
    name (a writer may remove it between our open and our lock); else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_ino != os.stat(path, follow_symlinks=False).st_ino:
            raise FileNotFoundError(path)
    except OSError:  # held by a live writer, or gone meanwhile
        os.close(fd)
        return None
    return Held(path, fd)


def _drop_orphan(path: Path) -> None:
    """Remove a temp file no live writer holds."""
    held = _take(path)
    if held is not None:
        with contextlib.suppress(OSError):
            held.done()
