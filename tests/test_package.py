"""Package boundaries: the public API resolves, and o3viz never imports streamlit."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

import o3viz

pytestmark = [pytest.mark.subprocess]


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


PAGE_SOURCES = (
    "o3viz.app",
    "o3viz.app.running",
    "o3viz.app.sampling",
    "o3viz.figures",
)  # the typed facades the pages use


def _page_files():
    from o3viz.paths import REPO_ROOT

    return sorted((REPO_ROOT / "pages").rglob("*.py")) + [REPO_ROOT / "app.py"]


def test_pages_import_real_names_from_the_typed_facades():
    """The pages import from ``o3viz.app`` (light), ``o3viz.app.running`` (what runs a model),
    ``o3viz.app.sampling`` (the sample tree, whose statistics import torch) and
    ``o3viz.figures``, by real imports an editor can follow, never through ``o3viz``'s lazy table;
    the one exception is the model loader, imported inside ``get_model``. Every name resolves and
    is listed in its facade's ``__all__``."""
    import ast

    for path in _page_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("o3viz"):
                if node.module == "o3viz.model":
                    assert [a.name for a in node.names] == ["load_model"] and node.col_offset > 0, path
                    continue
                assert node.module in PAGE_SOURCES, f"{path.name} imports {node.module}"
                module = importlib.import_module(node.module)
                for alias in node.names:
                    assert getattr(module, alias.name) is not None, f"{path.name}: {alias.name}"
                    assert alias.name in module.__all__, f"{path.name}: {alias.name} is not in {node.module}"


def test_the_app_facade_is_light_and_lists_what_it_imports():
    """``o3viz.app`` loads neither torch nor transformers (the Library opens without them), and its
    ``__all__`` is exactly what it imports."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, o3viz.app; print('torch' in sys.modules, 'transformers' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.stdout.split() == ["False", "False"], out.stderr
    import o3viz.app
    import o3viz.app.running

    for facade in (o3viz.app, o3viz.app.running):
        for name in facade.__all__:
            assert hasattr(facade, name), (facade.__name__, name)


def test_pages_have_rooms_and_no_view_reaches_into_another():
    """Seven pages as files, the Inspect views in ``pages/inspect_views/``, the shared helpers in
    ``pages/common/``; no page file imports another module's ``_private`` name."""
    import ast

    from o3viz.paths import REPO_ROOT

    root = REPO_ROOT / "pages"
    assert {p.name for p in root.glob("*.py")} == {
        "library.py",
        "run.py",
        "inspect.py",
        "compare.py",
        "samples.py",
        "dataset.py",
        "labels.py",
    }
    assert (root / "inspect_views" / "map.py").exists() and (root / "common" / "ui.py").exists()
    for path in _page_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pages"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, f"{path.relative_to(REPO_ROOT)} imports {private} from {node.module}"


def test_the_samples_facade_and_the_tree_load_no_torch():
    """The Samples page's facade (``o3viz.app.sampling``) and the tree it draws read no model: the
    page opens a stored set without loading torch (its intervals are ``o3viz.analysis.proportions``,
    and drawing more samples imports the model's parts only when asked)."""
    code = "import sys, o3viz.app.sampling, o3viz.samples.tree; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["False"], out.stderr


def test_the_pages_load_a_model_in_one_place_so_the_app_holds_one_copy():
    """Run and Inspect's "Analyse with the local model" share ``pages/common/ui.get_model``'s cached copy."""
    loaders = [p.name for p in _page_files() if "load_model(" in p.read_text(encoding="utf-8")]
    assert loaders == ["ui.py"]


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


def _pyproject() -> dict:
    import tomllib

    from o3viz.paths import REPO_ROOT

    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_requirements_pin_every_declared_dependency_within_its_range():
    """requirements.txt (what make installs) and pyproject.toml (what pip installs) cannot drift: each
    declared dependency, extras included, is pinned with ``==`` in requirements.txt to a version
    inside its declared range, and requirements.txt holds nothing pyproject does not declare."""
    from packaging.requirements import Requirement

    from o3viz.paths import REPO_ROOT

    project = _pyproject()["project"]
    declared = [Requirement(r) for r in project["dependencies"]]
    for reqs in project["optional-dependencies"].values():
        declared += [Requirement(r) for r in reqs if not r.startswith("o3viz[")]
    pins = {}
    for line in (REPO_ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            req = Requirement(line)
            (spec,) = req.specifier  # exactly one ``==`` pin
            assert spec.operator == "==", f"requirements.txt: {line} is not pinned with =="
            pins[req.name.lower()] = spec.version
    assert {r.name.lower() for r in declared} == set(pins), (
        "declare in pyproject.toml what requirements.txt pins"
    )
    for r in declared:
        assert r.specifier.contains(pins[r.name.lower()], prereleases=True), (
            f"{r.name}=={pins[r.name.lower()]} is outside {r}"
        )
    assert any(r.name == "torch" and not any(s.operator == "==" for s in r.specifier) for r in declared)


def test_the_wheel_lists_every_o3viz_package_and_the_app():
    """pyproject.toml lists the packages explicitly (the app is mapped from the top level), so a new
    o3viz folder must be added there or the wheel would ship without it."""
    from o3viz.paths import REPO_ROOT

    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(REPO_ROOT).parts) for p in (REPO_ROOT / "o3viz").rglob("__init__.py")
    }
    assert found <= listed, f"add to pyproject.toml [tool.setuptools] packages: {sorted(found - listed)}"
    app = {"o3viz_app", "o3viz_app.pages", "o3viz_app.pages.common", "o3viz_app.pages.inspect_views"}
    assert app <= listed
    pages = {
        "o3viz_app." + ".".join(p.relative_to(REPO_ROOT).parts)
        for p in (REPO_ROOT / "pages").rglob("*")
        if p.is_dir() and p.name != "__pycache__"
    }
    assert pages <= listed, f"add the new pages folder to pyproject.toml: {sorted(pages - listed)}"


def test_the_wheel_ships_every_data_file_of_the_library():
    """Each file under ``o3viz/`` that is not Python (the trace view's script and styles in
    ``o3viz/view/static/``, the task samples) is matched by a package-data glob of the package it
    sits in, so the wheel carries it: a file moved to another package needs its glob moved too."""
    from fnmatch import fnmatch

    from o3viz.paths import REPO_ROOT

    setup = _pyproject()["tool"]["setuptools"]
    packages, data = setup["packages"], setup["package-data"]
    files = [
        p
        for p in (REPO_ROOT / "o3viz").rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    ]
    assert any(p.name == "view.js" for p in files)  # the walk sees the view's static files
    unshipped = []
    for path in files:
        rel = path.relative_to(REPO_ROOT)
        owners = [
            k
            for k in packages
            if k.startswith("o3viz") and rel.parts[: k.count(".") + 1] == tuple(k.split("."))
        ]
        package = max(owners, key=len)  # the innermost listed package holding the file
        inside = "/".join(rel.parts[package.count(".") + 1 :])
        if not any(fnmatch(inside, glob) for glob in data.get(package, [])):
            unshipped.append(f"{rel} (package-data of {package})")
    assert not unshipped, f"add to pyproject.toml [tool.setuptools.package-data]: {unshipped}"


def test_every_data_folder_is_a_listed_package():
    """setuptools warns at every install ("Package 'o3viz.view.static' is absent from the `packages`
    configuration", three large warnings on each ``make run``) about package data kept in a folder
    that is not itself a listed package: each data folder is one, with its own package-data key."""
    tool = _pyproject()["tool"]["setuptools"]
    packages = set(tool["packages"])
    for pkg, globs in tool["package-data"].items():
        assert pkg in packages, pkg
        nested = [g for g in globs if "/" in g and not g.startswith(".streamlit/")]
        assert not nested, f"{pkg}: {nested} sit in a folder that is not a listed package"
