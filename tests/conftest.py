"""Shared test fixtures (paths to the project, its samples and ../shared/data) and the rules of the
test tiers (markers model, server, browser, subprocess, and light for none of them: `make check` runs
light). Each test module names its own tiers in a `pytestmark`."""

from __future__ import annotations

import ast
import multiprocessing.process
import os
import subprocess
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
    # A benchmark run inside a test writes its result file here, never into docs/results/.
    monkeypatch.setenv("O3VIZ_RESULTS_DIR", str(tmp_path_factory.mktemp("results")))


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


# Test tiers ----------------------------------------------------------------------------------
# A test's tier lives with the test: a module says `pytestmark = [pytest.mark.model, ...]`, and a test
# that differs from its module carries its own `@pytest.mark.subprocess`. A test with none of the heavy
# markers below is `light`, and `make check` runs the light tier; `pytest -m model` (or server, browser,
# subprocess) runs one tier on its own. Two rules stay here, because they hold for every test and list
# none: a light test that starts a process or builds a model fails and names the marker it needs, and a
# module whose file name says `browser` must be marked `browser` (the name is a promise the mark keeps;
# the name alone puts nothing in a tier).
TIERS = {
    "model": "runs a model: the embedded SmolLM2-135M or a tiny random one",
    "server": "starts or talks to a listening server (Streamlit, transformers serve, a local HTTP stub)",
    "browser": "drives Chromium through Playwright",
    "subprocess": "starts processes: the sandbox, worker processes, the CLI as a program, git",
}


def pytest_configure(config):
    for name, what in TIERS.items():
        config.addinivalue_line("markers", f"{name}: {what}")
    config.addinivalue_line("markers", "light: needs none of model, server, browser, subprocess (make check)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if not any(item.get_closest_marker(t) for t in TIERS):
            item.add_marker("light")


@pytest.fixture(scope="session", autouse=True)
def _math_verify_child_started():
    """Answer grading asks Math-Verify in one child process per test process
    (``o3viz.text.mathverify``): it starts here, before any light test's process guard, so that a
    light test that grades an answer reuses it rather than starting a process of its own."""
    from o3viz.text.mathverify import prestart

    prestart()


def _only_light(config) -> bool:
    return (config.option.markexpr or "").strip() == "light"


@pytest.fixture(autouse=True)
def _browser_modules_are_marked(request):
    """A module named for the browser (test_browser_*.py, *_browser.py) is marked `browser`, so that
    `-m browser` finds every test that drives Chromium."""
    name = request.node.path.name
    if name.startswith("test_") and "browser" in name and request.node.get_closest_marker("browser") is None:
        pytest.fail(
            f"{request.node.nodeid}: its file name says browser: add pytest.mark.browser to the "
            "module's pytestmark",
            pytrace=False,
        )


@pytest.fixture(autouse=True)
def _light_starts_no_process_or_model(request, monkeypatch):
    """Under `-m light` (make check), a light test that starts a process or builds a model fails
    and names the marker it needs, so the fast loop stays fast and its tiers stay true."""
    if request.node.get_closest_marker("light") is None or not _only_light(request.config):
        return

    def refuse(what: str, tier: str):
        def fail(*args, **kwargs):
            pytest.fail(
                f"{request.node.nodeid} {what}: mark it `{tier}` (in the module's pytestmark, or on the test)",
                pytrace=False,
            )

        return fail

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse("starts a process", "subprocess"))
    monkeypatch.setattr(
        multiprocessing.process.BaseProcess, "start", refuse("starts a process", "subprocess")
    )
    from transformers import modeling_utils

    monkeypatch.setattr(modeling_utils.PreTrainedModel, "post_init", refuse("builds a model", "model"))


def _module_tiers(path: Path) -> set[str]:
    """The tiers a test module's own `pytestmark` names, read from its source without importing it."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return set()  # let the import report it
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets):
            marks = node.value.elts if isinstance(node.value, ast.List | ast.Tuple) else [node.value]
            for mark in marks:
                # pytest.mark.model or pytest.mark.timeout(1800)
                attr = mark.func if isinstance(mark, ast.Call) else mark
                if isinstance(attr, ast.Attribute) and attr.attr in TIERS:
                    found.add(attr.attr)
    return found


def pytest_ignore_collect(collection_path, config):
    """Under `-m light` (make check), a module whose `pytestmark` puts all of it in a heavy tier is not
    even imported: collecting it would cost more than the light tests themselves."""
    if (
        not _only_light(config)
        or not collection_path.name.startswith("test_")
        or collection_path.suffix != ".py"
    ):
        return None
    return True if _module_tiers(collection_path) else None
