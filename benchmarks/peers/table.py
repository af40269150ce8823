"""The peers figures as one markdown table (a row per tool), for the README:
``python -m benchmarks peers --table A.csv [B.csv ...]`` prints it from saved CSVs without running
anything. A cell that was not measured shows "not run"; one that was stopped or unavailable
shows "stopped" or "n/a", and the reasons follow the table as a list."""

from __future__ import annotations

import re

from benchmarks.peers.driver import Figure
from benchmarks.peers.tools import TOOLS

_KINDS = (("time_vs_plain", "×"), ("peak_mb", " MB"), ("size_mb", " MB"))
DEFAULT_LENGTHS = ((64, 256, 1024), (1024, 4096, 8192), (512,))  # the grid, always shown


def _cell(fig: Figure | None, suffix: str) -> str:
    if fig is None:
        return "not run"
    if fig.value == "unavailable":
        return "n/a"
    if fig.value == "stopped":
        return "stopped"
    return f"{fig.value}{suffix}"


def _lengths(figures: list[Figure], kind: str) -> list[int]:
    pat = re.compile(rf"^{kind}_.+_(\d+)$")
    return sorted({int(m.group(1)) for f in figures if (m := pat.match(f.figure))})


def markdown_table(figures: list[Figure]) -> str:
    """One row per tool, columns for the issue's lengths and any others measured; later figures
    win over earlier ones."""
    by_name = {f.figure: f for f in figures}
    tools = list(TOOLS)  # every tool gets a row: one that never ran says so
    times, peaks, sizes = (
        sorted(set(_lengths(figures, k)) | set(default))
        for (k, _), default in zip(_KINDS, DEFAULT_LENGTHS, strict=True)
    )
    head = (
        ["tool"]
        + [f"time vs plain, {n} tokens" for n in times]
        + [f"peak above model, {n} tokens" for n in peaks]
        + ["longest within cap (tokens)"]
        + [f"saved, {n} tokens" for n in sizes]
        + ["loads back"]
    )
    rows = [head, ["---"] * len(head)]
    for t in tools:
        row = [t.label]
        row += [_cell(by_name.get(f"time_vs_plain_{t.name}_{n}"), "×") for n in times]
        row += [_cell(by_name.get(f"peak_mb_{t.name}_{n}"), " MB") for n in peaks]
        row.append(_cell(by_name.get(f"longest_within_cap_{t.name}"), ""))
        row += [_cell(by_name.get(f"size_mb_{t.name}_{n}"), " MB") for n in sizes]
        row.append(" / ".join(_cell(by_name.get(f"loads_back_{t.name}_{n}"), "") for n in sizes) or "not run")
        rows.append(row)
    lines = ["| " + " | ".join(r) + " |" for r in rows]
    notes = [
        f"- `{f.figure}`: " + (f.detail if f.detail.startswith(f.value) else f"{f.value}: {f.detail}")
        for f in figures
        if f.detail and (f.value in ("unavailable", "stopped", "none") or f.figure.startswith("longest_"))
    ]
    return "\n".join(lines + ([""] + notes if notes else []))
