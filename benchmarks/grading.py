"""Grading at the field's level: agreement with Math-Verify's own test cases, and the speed of bulk grading.

Figures (issue 63, finding 2):

- ``math_verify_cases_agreement``: o3viz's grade (``o3viz.text.reference.grade_text``) against the
  expected verdict of each of the 223 cases of Math-Verify's test suite
  (``../shared/data/grading/math_verify_cases.json``); goal ≥ 0.95. These cases are the development
  set: the extraction rules were written while reading them, so this is a development figure.
- ``math_verify_cases_ms_per_pair``: the same 223 grades, uncached, per pair (most reach Math-Verify
  in its child process);
- ``gsm8k_pairs``, ``gsm8k_parsed``: GSM8K model solutions' answers against their references (plain
  numbers), and how many of those comparisons reached the Math-Verify child (goal 0: the fast path);
- ``gsm8k_grade_vs_basic``: grading those pairs uncached against the comparison before Math-Verify
  (normalize, then the evaluator: ``equivalence._basic_equivalent``) in this run; ``…_cached_vs_basic``
  with the verdict cache warm.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from o3viz.paths import data_dir
from o3viz.text import equivalence, mathverify
from o3viz.text.answers import extract_answer
from o3viz.text.reference import grade_text, reference_answer

BASELINES = {
    "gsm8k_grade_vs_basic": "the comparison before Math-Verify (this normalize_answer + the evaluator), same pairs, same run",
    "gsm8k_grade_cached_vs_basic": "the comparison before Math-Verify (this normalize_answer + the evaluator), same pairs, same run",
}
GOALS = {"math_verify_cases_agreement": "≥ 0.95", "gsm8k_parsed": "0", "gsm8k_grade_vs_basic": "≤ 2"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, default=data_dir(), help="the shared data folder")
    parser.add_argument(
        "--repeats", type=int, default=5, help="timed passes over the GSM8K pairs (best kept)"
    )


def run_cases(data: Path) -> None:
    cases = json.loads((data / "grading" / "math_verify_cases.json").read_text(encoding="utf-8"))["cases"]
    equivalence._equivalent.cache_clear()
    equivalence._constant.cache_clear()
    mathverify.prestart()
    grade_text("$\\{1\\}$", "$\\{1\\}$")  # the child's start is not a grading cost
    t0 = time.perf_counter()
    agree = sum(bool(grade_text(c["pred"], c["gold"])) == bool(c["expected"]) for c in cases)
    t1 = time.perf_counter()
    assert len(cases) == 223, f"{len(cases)} cases, expected 223"
    print(f"math_verify_cases_agreement: {agree / len(cases):.4f} ({agree} of {len(cases)})")
    print(f"math_verify_cases_ms_per_pair: {1000 * (t1 - t0) / len(cases):.1f}")


def gsm8k_pairs(data: Path) -> list[tuple[str, str]]:
    pairs = []
    for line in (
        (data / "gsm8k" / "gsm8k_example_model_solutions.jsonl").read_text(encoding="utf-8").splitlines()
    ):
        rec = json.loads(line)
        ref = reference_answer(rec["ground_truth"])
        for sub in rec.values():
            if isinstance(sub, dict) and isinstance(sub.get("solution"), str) and ref is not None:
                found = extract_answer(sub["solution"])
                if found is not None:
                    pairs.append((found.text, ref))
    return pairs


def _best(fn, pairs: list[tuple[str, str]], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        equivalence._equivalent.cache_clear()
        equivalence._constant.cache_clear()
        t0 = time.perf_counter()
        for a, b in pairs:
            fn(a, b)
        best = min(best, time.perf_counter() - t0)
    return best


def run_gsm8k(data: Path, repeats: int) -> None:
    pairs = gsm8k_pairs(data)
    assert len(pairs) > 5000, f"{len(pairs)} GSM8K pairs: the file was not read"
    norm = equivalence.normalize_answer
    basic = _best(lambda a, b: equivalence._basic_equivalent(norm(a), norm(b)), pairs, repeats)
    before = mathverify.status().requests
    new = _best(lambda a, b: equivalence._equivalent.__wrapped__(a.strip(), b.strip()), pairs, repeats)
    parsed = (mathverify.status().requests - before) // repeats
    equivalence._equivalent.cache_clear()
    for a, b in pairs:  # warm the cache once
        equivalence.answers_equivalent(a, b)
    t0 = time.perf_counter()
    for a, b in pairs:
        equivalence.answers_equivalent(a, b)
    cached = time.perf_counter() - t0
    print(f"gsm8k_pairs: {len(pairs)}")
    print(f"gsm8k_parsed: {parsed}")
    print(f"gsm8k_basic_ms: {1000 * basic:.1f}")
    print(f"gsm8k_grade_ms: {1000 * new:.1f}")
    print(f"gsm8k_grade_vs_basic: {new / basic:.2f}")
    print(f"gsm8k_grade_cached_vs_basic: {cached / basic:.2f}")


def run(args: argparse.Namespace) -> int:
    print(f"load_average_1min: {os.getloadavg()[0]:.2f}")
    run_gsm8k(args.data, args.repeats)
    run_cases(args.data)
    print(f"load_average_1min_after: {os.getloadavg()[0]:.2f}")
    return 0
