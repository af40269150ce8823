"""Package boundaries: the public API resolves, and o3viz never imports streamlit."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

import o3viz


def test_every_public_name_resolves():
    for name in o3viz.__all__:
        assert getattr(o3viz, name) is not None, name


def test_each_public_name_is_the_object_its_module_defines():
    """The lazy table is true: ``o3viz.NAME`` is the very object of the module ``_API`` names, and
    ``__all__`` is that table (plus ``__version__``), so ``from o3viz import *`` gives the API."""
    for name, target in o3viz._API.items():
        module, _, attr = target.partition(":")
        assert getattr(o3viz, name) is getattr(importlib.import_module(module), attr or name), name
    assert sorted(o3viz.__all__) == sorted([*o3viz._API, "__version__"])
    namespace: dict = {}
    exec("from o3viz import *", namespace)  # noqa: S102 (the statement itself is what is tested)
    assert set(namespace) - {"__builtins__"} == set(o3viz.__all__)


def test_the_api_has_what_a_notebook_needs_and_leaves_out_internals():
    for name in ("RunRequest", "execute", "Trace", "load_trace", "save_trace", "capture", "solve"):
        assert name in o3viz.__all__
    for name in ("register_format", "list_formats", "import_trace", "build_graph", "Store"):
        assert name in o3viz.__all__
    for name in ("Recorder", "register_attention", "relevance", "parse_trace_bytes", "build_job"):
        assert name not in o3viz.__all__ and not hasattr(o3viz, name), name
    with pytest.raises(AttributeError, match="no attribute 'Recorder'"):
        o3viz.Recorder  # noqa: B018


def test_names_the_pages_import_resolve():
    """The pages import only from ``o3viz`` and ``o3viz.figures``: every name they use resolves."""
    import ast

    from o3viz.paths import REPO_ROOT

    pages = sorted((REPO_ROOT / "pages").glob("*.py")) + [REPO_ROOT / "app.py"]
    for path in pages:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("o3viz"):
                assert node.module in ("o3viz", "o3viz.figures"), f"{path.name} imports {node.module}"
                module = importlib.import_module(node.module)
                listed = set(module.__all__) | (set(o3viz._APP) if module is o3viz else set())
                for alias in node.names:
                    assert getattr(module, alias.name) is not None, f"{path.name}: {alias.name}"
                    assert alias.name in listed, f"{path.name}: {alias.name} is not exported by {node.module}"


def test_the_pages_load_a_model_in_one_place_so_the_app_holds_one_copy():
    """Run and Inspect's "Analyse with the local model" share ``pages/_ui.get_model``'s cached copy."""
    from o3viz.paths import REPO_ROOT

    loaders = [
        p.name
        for p in sorted((REPO_ROOT / "pages").glob("*.py"))
        if "load_model(" in p.read_text(encoding="utf-8")
    ]
    assert loaders == ["_ui.py"]


def test_no_o3viz_module_imports_streamlit():
    # Make streamlit unimportable, then import every module of the package.
    code = (
        "import sys, importlib, pkgutil\n"
        "sys.modules['streamlit'] = None\n"
        "import o3viz\n"
        "names = [m.name for m in pkgutil.walk_packages(o3viz.__path__, 'o3viz.')]\n"
        "for n in names:\n"
        "    if n != 'o3viz.__main__':\n"
        "        importlib.import_module(n)\n"
        "print(len(names))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.strip()) > 30


def test_import_o3viz_stays_light():
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import o3viz, sys; o3viz.Trace; o3viz.build_graph; print('torch' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.stdout.strip() == "False", out.stderr


def test_modules_are_all_importable_in_process():
    for m in pkgutil.walk_packages(o3viz.__path__, "o3viz."):
        if m.name != "o3viz.__main__":
            importlib.import_module(m.name)


def test_capture_and_solve_stay_callable_after_their_modules_are_imported():
    import o3viz.run.capture
    import o3viz.run.solve

    assert callable(o3viz.capture) and callable(o3viz.solve)
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import o3viz.run.capture, o3viz.run.solve, o3viz; o3viz.capture(None, None, '')",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "is not callable" not in out.stderr
