"""Every session-state key is declared once, with its default, in ``pages/common/state.py``: the test
reads the sources of ``app.py`` and ``pages/`` (``ast``) and fails on a key that a page reads or
writes without declaring it, and on a declared key that nothing uses. A widget's own ``key=`` is
Streamlit's to manage and counts as declared by that widget."""

from __future__ import annotations

import ast
from pathlib import Path

from o3viz.paths import REPO_ROOT
from pages.common.state import STATE

SOURCES = [REPO_ROOT / "app.py", *sorted((REPO_ROOT / "pages").rglob("*.py"))]
METHODS = {"get", "pop", "setdefault"}  # st.session_state.METHOD(KEY, ...)
DECLARATION = REPO_ROOT / "pages" / "common" / "state.py"


def _is_state(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "session_state"


def _key(node: ast.AST) -> str | None:
    """A key as written: a string, or an f-string's template (``f"map_search_{key}"``); None for a
    variable (a helper's parameter: its callers' literal keys are what is checked)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return ast.unparse(node)
    return None


def state_keys(tree: ast.AST) -> set[str]:
    """Keys used through ``st.session_state``: attributes, subscripts, get/pop/setdefault, ``in``,
    and ``take(KEY)`` (pages/common/state.py's read-once)."""
    found: set[str | None] = set()
    calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and _is_state(n.value) and id(n) not in calls:
            found.add(n.attr)
        elif isinstance(n, ast.Subscript) and _is_state(n.value):
            found.add(_key(n.slice))
        elif isinstance(n, ast.Call) and n.args:
            f = n.func
            if isinstance(f, ast.Attribute) and _is_state(f.value) and f.attr in METHODS:
                found.add(_key(n.args[0]))
            elif isinstance(f, ast.Name) and f.id == "take":
                found.add(_key(n.args[0]))
        elif isinstance(n, ast.Compare) and any(_is_state(c) for c in n.comparators):
            found.add(_key(n.left))
    return {k for k in found if k is not None}


def widget_keys(tree: ast.AST) -> set[str]:
    return {
        k
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        for kw in n.keywords
        if kw.arg == "key" and (k := _key(kw.value))
    }


def _scan(paths) -> tuple[dict[str, set[str]], set[str]]:
    used, widgets = {}, set()
    for p in paths:
        tree = ast.parse(p.read_text(), str(p))
        used[p.relative_to(REPO_ROOT).as_posix()] = state_keys(tree)
        widgets |= widget_keys(tree)
    return used, widgets


def test_every_session_state_key_a_page_uses_is_declared_once_with_its_default():
    used, widgets = _scan(SOURCES)
    undeclared = {
        f"{page}: {key}"
        for page, keys in used.items()
        for key in keys
        if key not in STATE and key not in widgets
    }
    assert not undeclared, f"declare these in pages/common/state.py (STATE): {sorted(undeclared)}"
    assert "library" in STATE and STATE["runs"] == 0  # what require_router and the Run page rely on


def test_every_declared_key_is_used_by_some_page():
    used, _ = _scan([p for p in SOURCES if p != DECLARATION])
    everywhere = set().union(*used.values())
    unused = set(STATE) - everywhere
    assert not unused, f"declared in pages/common/state.py but used nowhere: {sorted(unused)}"


def test_the_scan_finds_every_way_of_using_a_key():
    """The scan itself can fail: each way a page touches state is seen (else the tests above pass
    vacuously)."""
    src = """
st.session_state.a = 1
st.session_state["b"]
st.session_state.get("c")
st.session_state.pop("d", None)
st.session_state.setdefault("e", {})
"f" in st.session_state
take("g")
st.session_state[f"h_{x}"]
st.session_state[variable]
st.session_state.get("ok_widget")
st.text_input("x", key="ok_widget")
"""
    tree = ast.parse(src)
    assert state_keys(tree) == {"a", "b", "c", "d", "e", "f", "g", "f'h_{x}'", "ok_widget"}
    assert widget_keys(tree) == {"ok_widget"}
    assert Path(DECLARATION).is_file()
