"""Where o3viz finds and keeps things: one place for every folder, each with an environment override.

| folder | override | default |
| --- | --- | --- |
| shared datasets (GSM8K, traces, code tasks) | ``O3VIZ_DATA`` | ``../shared/data`` beside the checkout |
| sample traces | ``O3VIZ_SAMPLES`` | ``sample_traces/`` in the checkout, else the ones the wheel ships |
| the Streamlit app (``app.py``, ``pages/``) | | the checkout, else the installed ``o3viz_app`` package |
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


def app_dir() -> Path:
    """The folder holding the Streamlit app (``app.py``, ``pages/``, ``.streamlit/``): the checkout
    when o3viz runs from one, else the ``o3viz_app`` package a wheel installs beside ``o3viz``."""
    if (REPO_ROOT / "app.py").is_file() and (REPO_ROOT / "pages").is_dir():
        return REPO_ROOT
    installed = Path(__file__).resolve().parents[1] / "o3viz_app"  # site-packages/o3viz_app
    if (installed / "app.py").is_file():
        return installed
    import importlib.util  # an editable install maps o3viz_app elsewhere

    spec = importlib.util.find_spec("o3viz_app")
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else REPO_ROOT


def samples_dir() -> Path:
    """The sample traces: ``$O3VIZ_SAMPLES``, else ``sample_traces/`` beside the app (the checkout's,
    or the copy the wheel ships)."""
    return _env_path("O3VIZ_SAMPLES") or app_dir() / "sample_traces"


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
