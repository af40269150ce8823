"""Two systems of GSM8K's example model solutions as two datasets, for the paired comparison's tests,
browser test and benchmark: ``system_files`` writes one JSONL file per system (the question, the
reference and that system's graded solution), ``expected`` counts the 2×2 table straight from the
source file, without o3viz, to check the comparison against.
"""

from __future__ import annotations

import json
from pathlib import Path

SYSTEMS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")


def _records(src: Path, limit: int | None) -> list[dict]:
    out = []
    with open(src, encoding="utf-8") as f:
        for line in f:
            if limit is not None and len(out) >= limit:
                break
            if line.strip():
                out.append(json.loads(line))
    return out


def system_files(src: Path, systems: tuple[str, ...], out_dir: Path, limit: int | None = None) -> list[Path]:
    """One JSONL file per system in ``out_dir`` (named after it), records in the source's order."""
    recs = _records(src, limit)
    paths = []
    for s in systems:
        path = out_dir / f"gsm8k_{s}.jsonl"
        lines = [
            json.dumps(
                {"question": r["question"], "ground_truth": r["ground_truth"], "model": s, **r[s]},
                ensure_ascii=False,
            )
            for r in recs
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def expected(src: Path, a: str, b: str, limit: int | None = None) -> dict:
    """The 2×2 table of systems ``a`` and ``b`` by the file's own ``is_correct``, and the questions
    that flipped (A only right, B only right), counted directly from the file."""
    recs = _records(src, limit)
    t = {"both": 0, "a_only": 0, "b_only": 0, "neither": 0}
    flips: dict[str, list[str]] = {"a_only": [], "b_only": []}
    for r in recs:
        ca, cb = bool(r[a]["is_correct"]), bool(r[b]["is_correct"])
        cell = "both" if ca and cb else "a_only" if ca else "b_only" if cb else "neither"
        t[cell] += 1
        if cell in flips:
            flips[cell].append(r["question"])
    n = len(recs)
    return {
        **t,
        "n": n,
        "accuracy_a": (t["both"] + t["a_only"]) / n,
        "accuracy_b": (t["both"] + t["b_only"]) / n,
        "flips": flips,
    }
