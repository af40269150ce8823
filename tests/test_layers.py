"""The layers of ``o3viz/`` hold: no import cycle between its modules, and every import goes down
the layer order of the "How the code is laid out" table in docs/architecture.md (the one place that order is
written). Imports are read with ``ast``: module level and inside functions, relative ones too, and
``from o3viz import NAME`` through the lazy API's table, so a re-export cannot hide an import.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ARCHITECTURE = REPO / "docs" / "architecture.md"  # its "How the code is laid out" table is the layer order
# Free of the order: the test helpers may import any layer, and so may the package's own
# ``__init__`` (the lazy public API) and ``__main__``.
FREE = {"testing", "__init__", "__main__"}

# Known exceptions, each to be fixed: empty since issue 21 landed. A test below fails when an entry
# is no longer found, so the lists cannot rot.
PENDING_CYCLES: list[set[str]] = []
PENDING_ORDER: list[tuple[str, str]] = []
# Branching may import nothing from analysis but these, each to be moved down: resampling from a
# step shares the resampling measure's rollout collection, reader embedding and first sentence.
BRANCH_USES_ANALYSIS = {"o3viz/branch/resample.py"}


@dataclass(frozen=True)
class Import:
    """One import of an o3viz module, where it is written."""

    source: str  # the importing module, "o3viz.trace.io"
    target: str  # the imported module, "o3viz.trace.core"
    where: str  # "o3viz/trace/io.py:19"


def module_files(root: Path) -> dict[str, Path]:
    """Every module under ``root/o3viz`` by dotted name; a package is its ``__init__``."""
    mods = {}
    for path in sorted((root / "o3viz").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return mods


def _lazy_api(root: Path) -> dict[str, str]:
    """``o3viz/__init__.py``'s name -> module tables (``_API``), read without importing."""
    tree = ast.parse((root / "o3viz" / "__init__.py").read_text(encoding="utf-8"))
    table: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign) and isinstance(node.value, ast.Dict):
            for k, v in zip(node.value.keys, node.value.values, strict=True):
                if isinstance(k, ast.Constant) and isinstance(v, ast.Constant):
                    table[k.value] = v.value.partition(":")[0]
    return table


def _targets(node: ast.Import | ast.ImportFrom, package: str, mods: dict, api: dict) -> list[str]:
    """The o3viz modules one import statement names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in mods]
    base = node.module or ""
    if node.level:  # relative: ``from . import x`` is the package itself, each dot one level up
        parts = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join(parts + ([node.module] if node.module else []))
    found = [base] if base in mods else []
    for alias in node.names:
        name = f"{base}.{alias.name}"
        if name in mods:
            found.append(name)
        elif base == "o3viz" and alias.name in api:
            found.append(api[alias.name])
    return found


def read_imports(root: Path) -> list[Import]:
    """Every import between o3viz modules, module level or not."""
    mods, api = module_files(root), _lazy_api(root)
    out = []
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _targets(node, package, mods, api):
                    if target != name:
                        out.append(Import(name, target, f"{rel}:{node.lineno}"))
    return out


def private_imports(root: Path) -> list[Import]:
    """``from o3viz.x.y import _name`` written in a module of another package than ``o3viz.x.y``'s:
    a private name is its package's own, so another package reaching for it is a seam that slipped.
    (``target`` is "module:_name".)"""
    mods = module_files(root)
    out = []
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = _targets(ast.ImportFrom(module=node.module, names=[], level=node.level), package, mods, {})
            if not base:
                continue
            owner = base[0] if mods[base[0]].name == "__init__.py" else base[0].rpartition(".")[0]
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and owner != package and f"{base[0]}.{alias.name}" not in mods:
                    out.append(Import(name, f"{base[0]}:{alias.name}", f"{rel}:{node.lineno}"))
    return out


def cycles(imports: list[Import]) -> list[set[str]]:
    """The strongly connected groups of more than one module (Tarjan, iteratively)."""
    graph: dict[str, list[str]] = {}
    for imp in imports:
        graph.setdefault(imp.source, []).append(imp.target)
        graph.setdefault(imp.target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    group = set()
                    while True:
                        u = stack.pop()
                        on_stack.discard(u)
                        group.add(u)
                        if u == v:
                            break
                    if len(group) > 1:
                        groups.append(group)
            elif w not in index:
                index[w] = low[w] = len(index)
                stack.append(w)
                on_stack.add(w)
                work.append((w, iter(graph[w])))
            elif w in on_stack:
                low[v] = min(low[v], index[w])
    return groups


def layer_order(page: Path) -> dict[str, int]:
    """Top-level o3viz package or module -> its row in the "How the code is laid out"
    table (0 is the lowest layer). Rows name ``o3viz/trace/`` or ``o3viz/errors.py`` in backticks."""
    text = page.read_text(encoding="utf-8")
    section = text.split("## How the code is laid out", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("| `")]
    rank = {}
    for i, row in enumerate(rows):
        for path in re.findall(r"`o3viz/([A-Za-z_]+)(?:/|\.py)`", row.split("|")[1]):
            rank[path] = i
    return rank


def order_violations(imports: list[Import], rank: dict[str, int]) -> list[tuple[Import, str]]:
    """Imports that go up the order (or into o3viz/testing), each with what is wrong."""
    bad = []
    for imp in imports:
        src, dst = imp.source.split("."), imp.target.split(".")
        if len(src) < 2 or src[1] in FREE or len(dst) < 2:
            continue  # the free modules, and ``o3viz`` itself (only ``__version__``) as a target
        if dst[1] == "testing":
            bad.append((imp, "the library never imports the test helpers"))
        elif rank.get(dst[1], -1) > rank.get(src[1], -1):
            bad.append(
                (imp, f"{src[1]} (layer {rank.get(src[1])}) is below {dst[1]} (layer {rank.get(dst[1])})")
            )
    return bad


def _cycle_report(group: set[str], imports: list[Import]) -> str:
    edges = [f"  {i.where}: {i.source} imports {i.target}" for i in imports if {i.source, i.target} <= group]
    return "cycle between " + ", ".join(sorted(group)) + ":\n" + "\n".join(edges)


def _tops(root: Path) -> set[str]:
    return {name.split(".")[1] for name in module_files(root) if name.count(".") >= 1} - FREE


# The real tree ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    return read_imports(REPO)


def test_no_import_cycle_between_o3viz_modules(imports):
    found = [g for g in cycles(imports) if g not in PENDING_CYCLES]
    if found:
        pytest.fail("\n".join(_cycle_report(g, imports) for g in found), pytrace=False)


def test_every_import_goes_down_the_documented_layer_order(imports):
    rank = layer_order(ARCHITECTURE)
    bad = [
        (i, why)
        for i, why in order_violations(imports, rank)
        if (i.where.split(":")[0], i.target) not in PENDING_ORDER
    ]
    if bad:
        pytest.fail(
            "\n".join(f"{i.where}: {i.source} imports {i.target}: {why}" for i, why in bad), pytrace=False
        )


def test_every_o3viz_package_has_a_row_in_the_layer_table():
    missing = _tops(REPO) - set(layer_order(ARCHITECTURE))
    assert not missing, (
        f"add a row for {sorted(missing)} to the 'How the code is laid out' table in docs/architecture.md"
    )


def test_every_pending_entry_is_still_needed(imports):
    """A fixed cycle or import must leave the PENDING lists, so they never hide a new one."""
    groups = cycles(imports)
    stale = [sorted(p) for p in PENDING_CYCLES if p not in groups]
    found = {
        (i.where.split(":")[0], i.target) for i, _ in order_violations(imports, layer_order(ARCHITECTURE))
    }
    stale += [list(p) for p in PENDING_ORDER if p not in found]
    assert not stale, f"no longer found, remove from PENDING_CYCLES / PENDING_ORDER: {stale}"


def test_no_module_imports_a_private_name_from_another_package():
    """``app/uploads.py`` once read ``importers.bulk._open``: a name another package needs is
    public in the package that owns it."""
    bad = private_imports(REPO)
    assert not bad, "\n".join(f"{i.where}: {i.source} imports {i.target}" for i in bad)


def test_branching_never_reaches_up_into_analysis(imports):
    """``branch/continuation.py`` once took ``rollout_prompt`` from ``analysis/importance``: the
    prompt a rollout continues from belongs to the run's prompt side (``run/prompt.py``), below
    both. What is left is listed in ``BRANCH_USES_ANALYSIS`` and must leave it once moved."""
    up = {
        i.where.split(":")[0]
        for i in imports
        if i.source.startswith("o3viz.branch.") and i.target.startswith("o3viz.analysis")
    }
    assert up == BRANCH_USES_ANALYSIS, f"branch imports analysis from {sorted(up - BRANCH_USES_ANALYSIS)}"


# The checker can fail -------------------------------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_a_cycle_through_a_function_level_import_is_found_and_named(tmp_path):
    root = _tree(
        tmp_path,
        {
            "o3viz/__init__.py": "",
            "o3viz/trace/__init__.py": "",
            "o3viz/trace/core.py": "def f():\n    from o3viz.trace.io import g\n",
            "o3viz/trace/io.py": "from .core import f\n",
        },
    )
    imps = read_imports(root)
    assert cycles(imps) == [{"o3viz.trace.core", "o3viz.trace.io"}]
    report = _cycle_report(cycles(imps)[0], imps)
    assert "o3viz/trace/core.py:2" in report and "o3viz/trace/io.py:1" in report


def test_an_import_up_the_order_is_found_with_its_line(tmp_path):
    page = "# Architecture\n\n## How the code is laid out\n\n| folder | owns |\n| --- | --- |\n"
    page += "| `o3viz/trace/` | x |\n| `o3viz/run/` | y |\n| `o3viz/testing/` | z |\n"
    root = _tree(
        tmp_path,
        {
            "docs/architecture.md": page,
            "o3viz/__init__.py": '_API = {"capture": "o3viz.run.capture:capture"}\n',
            "o3viz/trace/__init__.py": "",
            "o3viz/trace/a.py": "import os\n\ndef f():\n    from o3viz import capture\n",
            "o3viz/trace/b.py": "from ..testing import builders\n",
            "o3viz/run/__init__.py": "",
            "o3viz/run/capture.py": "from o3viz.trace import a\n",
            "o3viz/testing/__init__.py": "",
            "o3viz/testing/builders.py": "from o3viz.run import capture\n",
        },
    )
    bad = order_violations(read_imports(root), layer_order(root / "docs" / "architecture.md"))
    assert sorted((i.where, i.target) for i, _ in bad) == [
        ("o3viz/trace/a.py:4", "o3viz.run.capture"),
        ("o3viz/trace/b.py:1", "o3viz.testing"),
        ("o3viz/trace/b.py:1", "o3viz.testing.builders"),
    ]


def test_the_generation_clients_sit_below_everything_that_asks_a_model():
    """Analysis, branching and the verifiers build the client they need from ``o3viz/clients/``;
    none is handed a callback from a layer above it."""
    rank = layer_order(ARCHITECTURE)
    assert all(rank["clients"] < rank[user] for user in ("analysis", "branch", "verify")), rank


def test_a_private_name_from_another_package_is_found_and_a_sibling_is_not(tmp_path):
    root = _tree(
        tmp_path,
        {
            "o3viz/__init__.py": "",
            "o3viz/importers/__init__.py": "",
            "o3viz/importers/bulk.py": "def _open(p):\n    pass\n",
            "o3viz/importers/parquet.py": "from .bulk import _open\n",
            "o3viz/app/__init__.py": "",
            "o3viz/app/uploads.py": "def f():\n    from o3viz.importers.bulk import MAX, _open\n",
        },
    )
    found = [(i.where, i.target) for i in private_imports(root)]
    assert found == [("o3viz/app/uploads.py:2", "o3viz.importers.bulk:_open")]
