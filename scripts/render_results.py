"""Render ``docs/results.md`` from the result files in ``docs/results/`` (one per benchmark run).

    python scripts/render_results.py            # rewrite docs/results.md
    python scripts/render_results.py --check    # exit 1 if docs/results.md is not what this renders

The page is never edited by hand: a benchmark run writes a JSON file (``benchmarks._results``), and
this script lays every file out, one section per benchmark, newest run first.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._results import RESULTS_DIR, Result, load_results  # noqa: E402

PAGE = RESULTS_DIR.parent / "results.md"
# Sections in reading order, with their titles; a benchmark not named here follows, alphabetically,
# under its newest run's title.
SECTIONS = {
    "capture": "Capture and DAA",
    "long_capture": "Capture at long lengths",
    "daa": "DAA on GSM8K",
    "peers": "Against the peers",
    "internals": "Inside the layers: routing and the logit lens",
    "claims": "Claim checks",
    "sandbox": "The code sandbox",
    "verify": "The verify loop",
    "compress": "Compression",
    "release": "KV-cache release in runs",
    "import": "Imports",
    "import_scaling": "Import scaling",
    "ui": "The app",
    "compare": "Compare at scale",
    "trace_io": "Hostile trace files",
    "model": "Model loading",
    "importance": "Step importance",
    "branch": "Branching",
    "steer": "Steering",
    "library": "The trace store",
    "resample_dataset": "Dataset-wide resampling",
    "paired": "Paired comparison of two datasets",
}
HEAD = """# Results

Every figure on this page comes from a result file in `docs/results/`, one JSON file per
benchmark run with its date, command, git commit, machine and load average. `python -m benchmarks
NAME` writes one (`--no-record` does not) and renders this page again from all of them
(`python scripts/render_results.py` does the same by hand), and `tests/test_docs.py` fails when the page and the files disagree. Speed figures are
ratios against a baseline measured in the same run, because the development machine (2 CPU cores,
no GPU) is shared and its load moves absolute times. Runs marked *transcribed* were taken before
the result files existed; their figures were copied once from the notes of those runs, with the
command, date and load those notes gave.

"""


def _cell(value) -> str:
    return str(value if value is not None else "").replace("|", "\\|").replace("\n", " ")


def _table(columns: list[str], rows: list[list]) -> list[str]:
    out = ["| " + " | ".join(_cell(c) for c in columns) + " |", "|" + " --- |" * len(columns)]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out + [""]


def render_run(r: Result, section_title: str) -> list[str]:
    """One run: what was run where, its figures, its tables and its notes."""
    kind = "transcribed" if r.provenance.startswith("transcribed") else "recorded"
    lines = [f"### {r.date}, {kind}", ""]
    if r.title != section_title:
        lines += [f"**{r.title}.**", ""]
    lines += [f"- command: `{r.command}`", f"- machine: {r.machine}", f"- load average: {r.load_average}"]
    lines += [f"- commit: `{r.commit}`" if r.commit else f"- commit: none ({r.provenance})", ""]
    if r.figures:
        with_note = any(f.note for f in r.figures)
        cols = ["figure", "value", "baseline", "goal"] + (["note"] if with_note else [])
        rows = [
            [f.name, f.value, f.baseline or "", f.goal or ""] + ([f.note or ""] if with_note else [])
            for f in r.figures
        ]
        lines += _table(cols, rows)
    for t in r.tables:
        if t.get("title"):
            lines += [t["title"], ""]
        lines += _table(t["columns"], t["rows"])
    for note in r.notes:
        lines += [note, ""]
    return lines


def render(results: list[Result]) -> str:
    by_bench: dict[str, list[Result]] = {}
    for r in results:
        by_bench.setdefault(r.benchmark, []).append(r)
    names = [n for n in SECTIONS if n in by_bench] + sorted(set(by_bench) - set(SECTIONS))
    lines = [HEAD.rstrip(), ""]
    for name in names:
        runs = sorted(by_bench[name], key=lambda r: r.date, reverse=True)
        title = SECTIONS.get(name, runs[0].title)
        lines += [f"## {title} {{#{name.replace('_', '-')}}}", "", f"`python -m benchmarks {name}`", ""]
        for r in runs:
            lines += render_run(r, title)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is out of date")
    args = parser.parse_args(argv)
    text = render(load_results())
    if args.check:
        if not PAGE.is_file() or PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is out of date: run python scripts/render_results.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
