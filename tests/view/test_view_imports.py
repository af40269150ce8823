"""The trace view (``o3viz/view/``) and its notebook host (``o3viz/notebook/``) use only other
modules' public names (issue 52): no ``from x import _name``, and no name from a private module
(``o3viz.figures._style``). What the view needs of ``o3viz.figures`` is public there. Read with
``ast``, imports inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECKED = ("o3viz/view", "o3viz/notebook")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(path: Path, package: str) -> list[str]:
    """Each import in ``path`` (a module of ``package``) of an underscore-prefixed name, or of any
    name from a module whose dotted path has an underscore-prefixed part, as ``file:line: what``."""
    bad, where = [], "/".join(path.parts[-3:])  # o3viz/view/data.py
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names if any(_private(p) for p in a.name.split("."))]
            bad += [f"{where}:{node.lineno}: import {n}" for n in names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # relative: each dot one package up from this module's package
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(parts + ([node.module] if node.module else []))
            if any(_private(p) for p in module.split(".")):
                bad.append(f"{where}:{node.lineno}: from {module} (a private module)")
            bad += [f"{where}:{node.lineno}: {a.name} from {module}" for a in node.names if _private(a.name)]
    return bad


def _modules(root: Path) -> list[tuple[Path, str]]:
    out = []
    for folder in CHECKED:
        for path in sorted((root / folder).rglob("*.py")):
            out.append((path, ".".join(path.parent.relative_to(root).parts)))
    return out


def test_the_view_and_the_notebook_import_no_private_name_of_another_module():
    found = [b for path, package in _modules(REPO) for b in private_imports(path, package)]
    assert not found, "import public names (make the name public where it belongs):\n" + "\n".join(found)
    assert len(_modules(REPO)) >= 8  # the view's modules and the notebook's, not an empty glob


def test_the_check_finds_each_form_of_a_private_import(tmp_path):
    src = tmp_path / "o3viz" / "view" / "bad.py"
    src.parent.mkdir(parents=True)
    src.write_text(
        "from __future__ import annotations\n"
        "from o3viz.figures._style import VERDICT_COLORS\n"
        "from o3viz.figures.outline import _step_row, step_item\n"
        "import o3viz.figures._style\n"
        "from ._private import x\n"
        "from . import _page\n"
        "from o3viz import __version__\n"
        "def f():\n"
        "    from o3viz.figures.episode_map import _span\n",
        encoding="utf-8",
    )
    found = private_imports(src, "o3viz.view")
    assert [b.split(":")[1] for b in found] == ["2", "3", "4", "5", "6", "9"], found
    assert "_step_row from o3viz.figures.outline" in found[1] and "o3viz.view._private" in found[3]
