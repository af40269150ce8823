"""Result files: every ``python -m benchmarks NAME`` run writes its figures as one JSON file.

A benchmark prints one ``name: value`` line per figure. ``recorded(name, run)`` wraps its ``run``:
it passes every printed line through, keeps the figure lines, and writes
``docs/results/NAME/<UTC time>.json`` with the date, the command, the git commit, the machine and
the load average before and after, then re-renders ``docs/results.md`` from all of them
(``scripts/render_results.py``); nobody copies a figure by hand.

A figure's baseline is what it is measured against: ``X_vs_Y`` is against ``Y`` (measured in the
same run), or the benchmark module says so in ``BASELINES = {"figure": "what"}``. ``GOALS`` works
the same way for the goal a figure is held to. ``X_over_Y`` reads as ``X_vs_Y``.
"""

from __future__ import annotations

import io
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

SCHEMA = 1
REPO = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO / "docs" / "results"
TRANSCRIBED = "transcribed from earlier runs"
WRITTEN = "written by the benchmark run"
_FIGURE = re.compile(r"^([A-Za-z][A-Za-z0-9_.\-]*): (\S.*)$")


@dataclass
class Figure:
    name: str
    value: str
    baseline: str | None = None  # what the figure is measured against, in the same run
    goal: str | None = None
    note: str | None = None


@dataclass
class Result:
    benchmark: str  # the NAME of ``python -m benchmarks NAME``
    title: str
    date: str  # UTC, ISO 8601 (a transcribed run may give only the day)
    command: str
    commit: str | None  # git HEAD, "+dirty" when the tree had changes; None when transcribed
    machine: str
    load_average: str  # as measured ("1.52 before, 1.87 after") or as the run's notes gave it
    provenance: str  # WRITTEN or TRANSCRIBED
    figures: list[Figure] = field(default_factory=list)
    tables: list[dict] = field(default_factory=list)  # {"title", "columns": [...], "rows": [[...]]}
    notes: list[str] = field(default_factory=list)  # markdown paragraphs
    schema: int = SCHEMA

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, ensure_ascii=False) + "\n"


def load_result(path: Path) -> Result:
    """One result file; a file that is not one raises ValueError naming the path."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        figures = [Figure(**f) for f in data.pop("figures", [])]
        return Result(figures=figures, **data)
    except (OSError, ValueError, TypeError) as exc:
        raise ValueError(f"{path}: not a benchmark result file ({exc})") from exc


def load_results(folder: Path = RESULTS_DIR) -> list[Result]:
    return [load_result(p) for p in sorted(folder.rglob("*.json"))]


def parse_figures(text: str, baselines: dict[str, str], goals: dict[str, str]) -> list[Figure]:
    """The ``name: value`` lines of a benchmark's output, in order (a repeated name: the last)."""
    found: dict[str, Figure] = {}
    for line in text.splitlines():
        m = _FIGURE.match(line.strip())
        if not m:
            continue
        name, value = m.groups()
        base = baselines.get(name)
        for word in ("_vs_", "_over_"):
            if base is None and word in name:
                base = name.split(word, 1)[1]
        found[name] = Figure(name, value, base, goals.get(name))
    return list(found.values())


def git_commit(repo: Path = REPO) -> str | None:
    try:
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def describe_machine() -> str:
    """CPU cores, memory, GPU-less or not, Python and the libraries the figures depend on."""
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split("MemTotal:", 1)[1].split()[0])
        mem = f", {kb / 2**20:.0f} GiB"
    except (OSError, IndexError, ValueError):
        pass
    libs = []
    for lib in ("torch", "transformers"):
        try:
            libs.append(f"{lib} {metadata.version(lib)}")
        except metadata.PackageNotFoundError:
            pass
    py = platform.python_version()
    return f"{os.cpu_count()} CPU cores{mem}, {platform.machine()}, Python {py}, " + ", ".join(libs)


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "unknown"


class _Tee(io.TextIOBase):
    """Writes through to the real stdout and keeps a copy."""

    def __init__(self, out):
        self.out, self.kept = out, io.StringIO()

    def write(self, s: str) -> int:
        self.kept.write(s)
        return self.out.write(s)

    def flush(self) -> None:
        self.out.flush()


def results_dir() -> Path:
    """``$O3VIZ_RESULTS_DIR``, else the checkout's ``docs/results``."""
    return Path(os.environ.get("O3VIZ_RESULTS_DIR") or RESULTS_DIR)


def write_result(result: Result, folder: Path | None = None) -> Path:
    """``folder/BENCHMARK/<date>.json``, written atomically; never overwrites an earlier run."""
    folder = (folder or results_dir()) / result.benchmark
    folder.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^0-9A-Za-z]+", "-", result.date).strip("-")
    path, n = folder / f"{stem}.json", 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{n}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(result.to_json(), encoding="utf-8")
    os.replace(tmp, path)
    return path


def render_page() -> None:
    """Rewrite docs/results.md from the result files (``scripts/render_results.py``)."""
    scripts = str(REPO / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    import render_results

    render_results.main([])


def recorded(name: str, module, argv: list[str] | None = None) -> Callable:
    """``module.run`` that also writes the run's figures as a result file (``--no-record``: not)."""

    def run(args) -> int:
        if getattr(args, "no_record", False):
            return module.run(args)
        load_before, started = _load(), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        tee = _Tee(sys.stdout)
        real, sys.stdout = sys.stdout, tee
        try:
            code = module.run(args)
        finally:
            sys.stdout = real
        figures = parse_figures(
            tee.kept.getvalue(), getattr(module, "BASELINES", {}), getattr(module, "GOALS", {})
        )
        if code in (0, None) and figures:
            doc = (module.__doc__ or name).strip().splitlines()[0].rstrip(".")
            result = Result(
                benchmark=name,
                title=doc,
                date=started,
                command="python -m benchmarks " + " ".join(argv if argv is not None else sys.argv[1:]),
                commit=git_commit(),
                machine=describe_machine(),
                load_average=f"{load_before} before, {_load()} after (1 min)",
                provenance=WRITTEN,
                figures=figures,
                notes=module.notes(tee.kept.getvalue()) if hasattr(module, "notes") else [],
            )
            print(f"result file: {write_result(result)}", file=sys.stderr)
            if results_dir().resolve() == RESULTS_DIR.resolve():
                render_page()
        return code

    return run
