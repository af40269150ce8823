"""Where o3viz finds and keeps things: one place for every folder, each with an environment override.

| folder | override | default |
| --- | --- | --- |
| shared datasets (GSM8K, traces, code tasks) | ``O3VIZ_DATA`` | ``../shared/data`` beside the checkout |
| sample traces | ``O3VIZ_SAMPLES`` | ``sample_traces/`` in the checkout |
| model cache (safetensors conversions) | ``O3VIZ_CACHE`` | ``~/.cache/o3viz`` |
| the persistent trace store | ``O3VIZ_HOME`` | ``$XDG_DATA_HOME/o3viz``, else ``~/.local/share/o3viz`` |

Functions, not constants: each call reads the environment, so tests can point them elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

# the checkout: o3viz/paths.py -> o3viz/ -> repository root
REPO_ROOT = Path(__file__).resolve().parents[1]


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value).expanduser() if value else None


def data_dir() -> Path:
    """The shared datasets: ``$O3VIZ_DATA`` or ``../shared/data`` beside the checkout."""
    return _env_path("O3VIZ_DATA") or REPO_ROOT.parent / "shared" / "data"


def samples_dir() -> Path:
    """The sample traces: ``$O3VIZ_SAMPLES`` or ``sample_traces/`` in the checkout."""
    return _env_path("O3VIZ_SAMPLES") or REPO_ROOT / "sample_traces"


def cache_dir() -> Path:
    """The model cache: ``$O3VIZ_CACHE`` or ``~/.cache/o3viz``."""
    return _env_path("O3VIZ_CACHE") or Path.home() / ".cache" / "o3viz"


def home_dir() -> Path:
    """The trace store: ``$O3VIZ_HOME``, else ``$XDG_DATA_HOME/o3viz``, else ``~/.local/share/o3viz``."""
    explicit = _env_path("O3VIZ_HOME")
    if explicit:
        return explicit
    xdg = _env_path("XDG_DATA_HOME")
    return (xdg or Path.home() / ".local" / "share") / "o3viz"
