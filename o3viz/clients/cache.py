"""The on-disk rollout cache (``RolloutCache``): JSON-lines files keyed by a hash of (backend, model,
prompt, sampling settings). Samples are appended as they arrive, so an interrupted run resumes
where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from o3viz.clients.base import Sampling

__all__ = ["MAX_CACHE_FILE_BYTES", "RolloutCache"]

MAX_CACHE_FILE_BYTES = 16 << 20


class RolloutCache:
    """Rollouts on disk, one JSON-lines file per (backend, prompt, sampling) hash."""

    def __init__(self, folder: str | os.PathLike | None = None) -> None:
        from o3viz.paths import cache_dir

        self.folder = Path(folder) if folder is not None else cache_dir() / "rollouts"

    def key(self, backend: str, prompt: str, sampling: Sampling) -> str:
        blob = json.dumps({"backend": backend, "prompt": prompt, **sampling.key()}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.jsonl"

    def get(self, key: str) -> list[str]:
        """Cached samples (a damaged trailing line, from a killed run, is dropped)."""
        path = self._path(key)
        if not path.is_file() or path.stat().st_size > MAX_CACHE_FILE_BYTES:
            return []
        out = []
        for line in path.read_text(errors="replace").splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                break
            if not isinstance(item, str):
                break
            out.append(item)
        return out

    def add(self, key: str, texts: list[str]) -> None:
        """Append samples, one line each, flushed and synced before returning."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(key)
        if path.is_file() and path.stat().st_size and not path.read_bytes().endswith(b"\n"):
            good = self.get(key)  # a run killed mid-line: keep the whole lines only
            path.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in good), encoding="utf-8")
        with path.open("a", encoding="utf-8") as f:
            for t in texts:
                f.write(json.dumps(t, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
