"""Package boundaries: the public API resolves, and o3viz never imports streamlit."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import o3viz


def test_every_public_name_resolves():
    for name in o3viz.__all__:
        assert getattr(o3viz, name) is not None, name


def test_public_api_is_small_and_leaves_out_internals():
    assert 30 <= len(o3viz.__all__) <= 41
    for name in ("Recorder", "register_attention", "graph_to_json", "tree_layout", "relevance"):
        assert name not in o3viz.__all__ and not hasattr(o3viz, name), name
    for name in ("RunRequest", "execute", "Trace", "load_trace", "save_trace", "capture", "solve"):
        assert name in o3viz.__all__


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
                for alias in node.names:
                    assert getattr(module, alias.name) is not None, f"{path.name}: {alias.name}"


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
