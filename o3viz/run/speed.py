"""This machine's measured generation speed, for the time a branch or a resampling shows before it
starts.

Each local branch (and each local resampling for importance) records how many new tokens it made and how long that took, by kind ("edit": one
full capture with the trace's settings; "resample": K continuations decoded as a batch) and model,
in ``speed.json`` in the user's o3viz home (the last ``KEEP`` runs of each). An estimate is the
median of those; before any run of that kind, it is ``None`` and the cost line says the time is
not yet measured rather than guessing from a constant.

>>> log = SpeedLog("/nonexistent/speed.json")
>>> log.tokens_per_s("local:m", "edit") is None
True
"""

from __future__ import annotations

import json
import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

SpeedKind = Literal["edit", "resample"]
KEEP = 8  # recent measurements kept per (model, kind)
MAX_FILE_BYTES = 1 << 20


@dataclass
class SpeedLog:
    """Measured tokens per second, per model and kind, in one small JSON file."""

    path: str | os.PathLike | None = None

    def __post_init__(self) -> None:
        if self.path is None:
            from o3viz.paths import home_dir

            self.path = home_dir() / "speed.json"
        self.path = Path(self.path)

    def _read(self) -> dict:
        try:
            if self.path.stat().st_size > MAX_FILE_BYTES:
                return {}
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def record(self, model: str, kind: SpeedKind, tokens: int, seconds: float) -> None:
        """Add one measurement (ignored when either is not positive); written atomically."""
        if tokens <= 0 or not seconds > 0:
            return
        data = self._read()
        key = f"{kind} {model}"
        runs = [x for x in data.get(key, []) if isinstance(x, int | float) and x > 0]
        data[key] = ([*runs, tokens / seconds])[-KEEP:]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.path)

    def tokens_per_s(self, model: str, kind: SpeedKind) -> float | None:
        """The median of the recent measurements; None before the first. ``model`` ending in
        ``*`` takes every model it starts (``local:*``: any local model, before one is loaded)."""
        data = self._read()
        keys = (
            [k for k in data if k.startswith(f"{kind} {model[:-1]}")]
            if model.endswith("*")
            else [f"{kind} {model}"]
        )
        runs = [x for k in keys for x in data.get(k, []) if isinstance(x, int | float) and x > 0]
        return float(statistics.median(runs)) if runs else None
