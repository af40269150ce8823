"""No module over 400 lines (issue 52): every ``.py`` under ``o3viz/``, ``pages/`` and
``benchmarks/``, ``app.py``, and every ``.js`` under ``o3viz/`` and ``pages/``. A module that grows
past the limit is split by what it owns, not trimmed to fit.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 400
PY_ROOTS = ("o3viz", "pages", "benchmarks")
JS_ROOTS = ("o3viz", "pages")
FILES = ("app.py",)

# Known exceptions, each being split now; the number is its line count when it was listed, and it
# may only shrink. A test below fails when an entry is at or under the limit (or gone), so the list
# cannot go stale: remove the entry once its file is split, and the list is empty for good.
PENDING: dict[str, int] = {}


def _skipped(path: Path) -> bool:
    return any(part.startswith(".") or part in ("__pycache__", "node_modules") for part in path.parts)


def checked_files(root: Path = REPO) -> list[str]:
    """Every file the limit holds for, relative to ``root``, sorted."""
    found = {root / f for f in FILES if (root / f).is_file()}
    for folders, suffix in ((PY_ROOTS, "*.py"), (JS_ROOTS, "*.js")):
        for folder in folders:
            found.update(p for p in (root / folder).rglob(suffix) if p.is_file())
    return sorted(p.relative_to(root).as_posix() for p in found if not _skipped(p.relative_to(root)))


def line_count(path: Path) -> int:
    """Lines as ``wc -l`` counts them, give or take a last line without a newline."""
    return len(path.read_text(encoding="utf-8").splitlines())


def oversized(root: Path = REPO) -> dict[str, int]:
    sizes = {f: line_count(root / f) for f in checked_files(root)}
    return {f: n for f, n in sizes.items() if n > MAX_LINES}


def test_no_module_is_over_the_limit():
    over = {f: n for f, n in oversized().items() if f not in PENDING}
    assert not over, f"over {MAX_LINES} lines: split each by what it owns:\n" + "\n".join(
        f"  {f}: {n} lines" for f, n in sorted(over.items())
    )


def test_a_pending_module_only_shrinks():
    sizes = {f: line_count(REPO / f) for f in PENDING if (REPO / f).is_file()}
    grown = {f: (n, PENDING[f]) for f, n in sizes.items() if n > PENDING[f]}
    assert not grown, "a module on the PENDING list grew; split it instead:\n" + "\n".join(
        f"  {f}: {n} lines, listed at {was}" for f, (n, was) in sorted(grown.items())
    )


def test_the_pending_list_is_not_stale():
    over = oversized()
    done = sorted(f for f in PENDING if f not in over)
    assert not done, (
        f"now at most {MAX_LINES} lines (or gone): remove from PENDING in tests/test_module_sizes.py: "
        + ", ".join(done)
    )


def test_the_check_sees_the_files_and_can_fail(tmp_path):
    assert {"app.py", "o3viz/store/store.py", "benchmarks/long_capture.py"} <= set(checked_files())
    assert any(f.endswith(".js") and f.startswith("pages/") for f in checked_files())
    (tmp_path / "o3viz" / "sub").mkdir(parents=True)
    (tmp_path / "pages").mkdir()
    (tmp_path / "o3viz" / "sub" / "big.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "o3viz" / "sub" / "fits.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "pages" / "big.js").write_text("let x;\n" * (MAX_LINES + 1))
    (tmp_path / "pages" / "__pycache__").mkdir()
    (tmp_path / "pages" / "__pycache__" / "big.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert oversized(tmp_path) == {"o3viz/sub/big.py": MAX_LINES + 1, "pages/big.js": MAX_LINES + 1}
