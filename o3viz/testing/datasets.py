"""Small reasoning datasets written as JSONL for tests and benchmarks: R1-style records
(``problem``, ``full_response`` with ``<think>``, ``ground_truth``, ``is_correct``, ``model_name``)
with varied lengths, backtracks, self-checks and arithmetic (some of it wrong), plus the hostile
lines a whole-dataset import must reject one by one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

MODELS = ("r1-small", "r1-large")
HUGE_RECORD_BYTES = 17 * 1024 * 1024  # just over o3viz.importers.bulk.MAX_RECORD_BYTES


def reasoning_record(i: int, rng: np.random.Generator) -> dict:
    """One record: a sum question, a thinking trace of 3–12 steps and a boxed answer."""
    a, b = int(rng.integers(2, 90)), int(rng.integers(2, 90))
    steps = [f"We need the total of {a} and {b} apples."]
    for k in range(int(rng.integers(1, 10))):
        x, y = int(rng.integers(1, 50)), int(rng.integers(1, 50))
        wrong = rng.random() < 0.15
        steps.append(f"Step {k}: {x} + {y} = {x + y + (1 if wrong else 0)}.")
        if rng.random() < 0.2:
            steps.append("Wait, let me reconsider that sum.")
        if rng.random() < 0.2:
            steps.append("Let me check: that seems right.")
    correct = bool(rng.random() < 0.6)
    answer = a + b if correct else a + b + 1
    steps.append(f"So {a} + {b} = {answer}.")
    return {
        "problem": f"Problem {i}: Tom has {a} apples and gets {b} more. How many apples does he have?",
        "full_response": "<think>\n" + "\n\n".join(steps) + f"\n</think>\nThe answer is \\boxed{{{answer}}}.",
        "ground_truth": str(a + b),
        "is_correct": correct,
        "model_name": MODELS[i % len(MODELS)],
    }


def write_reasoning_jsonl(path: str | Path, n: int, *, seed: int = 0, start: int = 0) -> Path:
    """``n`` records, one per line (record ``i`` is the same for a given seed and index)."""
    path = Path(path)
    with path.open("w", encoding="utf-8") as f:
        for i in range(start, start + n):
            f.write(json.dumps(reasoning_record(i, np.random.default_rng([seed, i]))) + "\n")
    return path


def hostile_lines() -> dict[str, bytes]:
    """Lines a dataset import must reject with their line number, each without a newline."""
    return {
        "huge": b'{"full_response": "' + b"x" * HUGE_RECORD_BYTES + b'"}',
        "deep": b"[" * 100_000 + b"]" * 100_000,
        "binary": b"\x00\x01\x02\xff\xfe binary \x00",
        "not_utf8": b'{"full_response": "caf\xe9 \xff"}',
        "broken": b'{"full_response": "unterminated',
        "not_an_object": b"42",
        "no_text": b'{"unrelated": {"nested": [1, 2, 3]}}',
        "huge_number": b'{"full_response": ' + b"9" * 100_000 + b"}",
    }
