"""Long R1-style imports for tests and benchmarks: ``long_r1_text(n)`` strings together real
DeepSeek-R1 sentences (the MATH-500 traces in ``../shared/data/traces/``, the lines of the first
record, then the next, …, repeated as needed) into one ``<think>`` text of ``n`` sentences ending
with a boxed answer, and ``long_r1_trace(n)`` imports it the way the app imports an upload."""

from __future__ import annotations

import json
from pathlib import Path

from o3viz.paths import data_dir

R1_FILE = data_dir() / "traces" / "topology_math500_deepseek_r1.jsonl"


def r1_sentences(path: Path = R1_FILE) -> list[str]:
    """Every line of the thinking of every record in ``path``, in order (lines, not sentences:
    the importer splits them into sentences again)."""
    out: list[str] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            text = rec.get("reasoning_trace") or rec.get("full_response") or ""
            text = text.replace("<think>", " ").replace("</think>", " ")
            out += [ln.strip() for ln in text.splitlines() if ln.strip()]
    return out


def long_r1_text(n: int, path: Path = R1_FILE) -> str:
    """About ``n`` steps of real R1 reasoning, then the answer (see the module docstring)."""
    from o3viz.text.spans import split_spans

    lines, picked, count, k = r1_sentences(path), [], 0, 0
    while count < n - 1:
        ln = lines[k % len(lines)]
        spans = split_spans(ln)
        room = n - 1 - count
        picked.append(ln if len(spans) <= room else ln[: spans[room - 1][1]])
        count += min(len(spans), room)
        k += 1
    return "<think>\n" + "\n".join(picked) + "\n</think>\nThe final answer is $\\boxed{56}$."


def long_r1_trace(n: int, path: Path = R1_FILE):
    """``long_r1_text(n)`` imported as a trace (claims checked, as the app imports it)."""
    from o3viz.importers import import_trace

    return import_trace(long_r1_text(n, path), question="A long R1-style trace (MATH-500 sentences)")
