"""Shared test fixtures: paths to the project, its samples and ../shared/data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from o3viz.paths import data_dir, samples_dir

SHARED_DATA = data_dir()
SAMPLES = samples_dir()

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _private_store(tmp_path_factory, monkeypatch):
    """Every test gets its own trace store: the user's real one (~/.local/share/o3viz) is never touched."""
    monkeypatch.setenv("O3VIZ_HOME", str(tmp_path_factory.mktemp("o3viz_home")))


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (it sits beside the project in CI and dev sessions)")
    return SHARED_DATA


def sample_paths() -> list[Path]:
    return sorted(p for p in SAMPLES.glob("*.o3trace.json*"))


@pytest.fixture(scope="module")
def transformers_server(tmp_path_factory):
    """``transformers serve`` of the embedded model on 127.0.0.1 for one test module; yields
    ``(base_url, model_path)`` and stops it when the module ends. Not session-wide: a server left
    running is a child process, and the worker tests check that no child process is left."""
    from o3viz.errors import ModelLoadError
    from o3viz.model import resolve_model
    from o3viz.testing.serve import ServeError, transformers_serve

    try:
        path = resolve_model(None)[0]
    except ModelLoadError as exc:
        pytest.skip(f"embedded model unavailable: {exc}")
    try:
        with transformers_serve(path, tmp_path_factory.mktemp("serve") / "serve.log") as url:
            yield url, path
    except ServeError as exc:
        pytest.fail(str(exc))
