"""The README and the docs site: short README, every page in the nav, no machine paths, the results
page rendered from the benchmarks' result files, and ``mkdocs build --strict`` passing."""

from __future__ import annotations

import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from benchmarks._results import (
    TRANSCRIBED,
    WRITTEN,
    Figure,
    Result,
    load_results,
    parse_figures,
    recorded,
    write_result,
)

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
sys.path.insert(0, str(REPO / "scripts"))
import render_results  # noqa: E402

# Paths that exist on one machine only; /tmp is allowed where a page is about the sandbox's /tmp.
MACHINE_PATH = re.compile(r"/work/|/home/\w|/root/|/Users/\w|[A-Z]:\\\\")
TMP_PATH = re.compile(r"/tmp/\w")


def _pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "results" not in p.relative_to(DOCS).parts[:-1])


def test_readme_is_short_and_opens_with_the_two_commands():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.encode()) <= 15 * 1024, f"README.md is {len(text.encode())} bytes, over 15 KB"
    assert text.splitlines()[:5] == ["# o3viz", "", "```", "make run", "make test"]
    assert "pip install" in text and "o3viz app" in text


@pytest.mark.parametrize("path", [REPO / "README.md", *_pages()], ids=lambda p: p.name)
def test_no_paths_of_one_machine(path):
    text = path.read_text(encoding="utf-8")
    found = MACHINE_PATH.findall(text) + ([] if path.name == "sandbox.md" else TMP_PATH.findall(text))
    assert not found, f"{path.name} names paths of one machine: {found[:5]}"


def test_every_page_is_in_the_nav_and_every_nav_entry_exists():
    nav = re.findall(r":\s*([\w\-/]+\.md)\s*$", (REPO / "mkdocs.yml").read_text(), re.M)
    pages = {p.relative_to(DOCS).as_posix() for p in _pages()}
    assert set(nav) == pages, f"in the nav only: {set(nav) - pages}; pages only: {pages - set(nav)}"


def test_the_results_page_is_what_the_script_renders_from_the_result_files():
    rendered = render_results.render(load_results())
    page = (DOCS / "results.md").read_text(encoding="utf-8")
    assert page == rendered, "docs/results.md is out of date: run python scripts/render_results.py"


def test_every_result_file_says_when_where_and_how_it_was_measured():
    results = load_results()
    assert results, "docs/results/ holds no result file"
    for r in results:
        assert r.date and r.command and r.machine and r.load_average, r
        assert r.provenance == WRITTEN or r.provenance.startswith(TRANSCRIBED), r.provenance
        assert r.commit or r.provenance.startswith(TRANSCRIBED), f"{r.benchmark} {r.date}: no commit"
        assert r.figures or r.tables, f"{r.benchmark} {r.date}: no figure"


def test_a_new_result_file_changes_the_rendered_page(tmp_path):
    first = Result("toy", "Toy", "2026-01-01", "python -m benchmarks toy", "abc", "m", "1.0", WRITTEN)
    first.figures = [Figure("a_vs_b", "0.5", "b")]
    write_result(first, tmp_path)
    before = render_results.render(load_results(tmp_path))
    second = Result("toy", "Toy", "2026-01-02", "python -m benchmarks toy", "abd", "m", "1.0", WRITTEN)
    second.figures = [Figure("a_vs_b", "0.7", "b")]
    write_result(second, tmp_path)
    after = render_results.render(load_results(tmp_path))
    assert before != after and after.index("2026-01-02") < after.index("2026-01-01")
    assert "| a_vs_b | 0.7 | b |" in after and "| a_vs_b | 0.5 | b |" in after


def test_figure_lines_are_parsed_with_their_baselines():
    out = "loading...\ncapture_vs_plain: 0.96\npeak_rss_mb: 497\nnot a figure line\npeak_rss_mb: 498\n"
    figs = parse_figures(out, {"peak_rss_mb": "the loaded model"}, {"capture_vs_plain": "<= 1.10"})
    assert [(f.name, f.value, f.baseline, f.goal) for f in figs] == [
        ("capture_vs_plain", "0.96", "plain", "<= 1.10"),
        ("peak_rss_mb", "498", "the loaded model", None),
    ]


def test_every_benchmark_writes_a_result_file():
    from benchmarks.__main__ import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name, parser in sub.choices.items():
        func = parser.get_default("func")
        assert func.__qualname__.startswith("recorded."), f"benchmark {name} does not record its run"


@pytest.mark.subprocess  # git, for the commit
def test_a_benchmark_run_writes_its_figures_to_a_result_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("O3VIZ_RESULTS_DIR", str(tmp_path))
    toy = types.ModuleType("toy", "A toy benchmark.")
    toy.run = lambda args: print("x_vs_y: 1.25\nsteps: 7") or 0
    toy.BASELINES = {"steps": "none"}
    assert recorded("toy", toy, ["toy", "--fast"])(types.SimpleNamespace()) == 0
    assert "x_vs_y: 1.25" in capsys.readouterr().out  # still printed
    (r,) = load_results(tmp_path)
    assert (r.benchmark, r.title, r.command, r.provenance) == (
        "toy",
        "A toy benchmark",
        "python -m benchmarks toy --fast",
        WRITTEN,
    )
    assert [(f.name, f.value, f.baseline) for f in r.figures] == [
        ("x_vs_y", "1.25", "y"),
        ("steps", "7", "none"),
    ]
    assert re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", r.commit or "")
    assert "CPU cores" in r.machine and "before" in r.load_average


@pytest.mark.subprocess
def test_the_docs_site_builds_with_strict(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").is_file()


def test_every_tier_mark_in_the_tests_is_a_tier_the_conftest_declares():
    """Tiers live with the tests (a module's pytestmark, a test's own mark), never in a table in
    the conftest; a mark the conftest does not know (a typo such as `modle`) would drop
    its tests into `light` unseen, so every mark the tests use is a tier or a known pytest mark."""
    from tests import conftest

    assert set(conftest.TIERS) == {"model", "server", "browser", "subprocess"}
    assert not hasattr(conftest, "MODULES") and not hasattr(conftest, "TESTS")
    known = set(conftest.TIERS) | {"light", "slow", "timeout", "skip", "skipif", "xfail", "parametrize"}
    unknown = {
        f"{p.relative_to(REPO).as_posix()}: pytest.mark.{name}"
        for p in (REPO / "tests").rglob("*.py")
        for name in re.findall(r"pytest\.mark\.(\w+)", p.read_text(encoding="utf-8"))
        if name not in known
    }
    assert not unknown, f"not a tier (tests/conftest.py TIERS) nor a known pytest mark: {sorted(unknown)}"


def test_the_readme_installs_cpu_torch_before_o3viz():
    """``pip install .`` alone brings a 6 GB venv of CUDA wheels on a CPU machine: the README's
    pip steps name the CPU build of torch first (issue 63, item 9)."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    first_o3viz = next(i for i, ln in enumerate(lines) if ln.startswith("pip install ."))
    torch = [i for i, ln in enumerate(lines) if ln.startswith("pip install torch==") and "CPU" in ln]
    assert torch and torch[0] < first_o3viz
