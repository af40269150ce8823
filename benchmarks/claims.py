"""Arithmetic claim checker: false alarms, planted errors caught, and human-labelled steps.

False alarms on GSM8K's references and detection of planted errors are each measured on a
development half (even GSM8K line numbers, the only half rules may be tuned on) and a
held-out half (odd line numbers); step-level measures on human-labelled steps (MR-GSM8K first
errors, PRM800K ratings); and the final-answer extractor's agreement with ``ground_truth`` on the
110 MATH-500 records of ``traces/``.

- ``false_alarm_rate``: share of claims found in the 1,319 GSM8K reference solutions (annotated
  and with ``<<...>>`` stripped) that the checker calls ``wrong``. References are taken as correct.
- ``detection_rate``: one stated result per solution is altered in the *stripped* text (off by
  one, two digits swapped, or the result of a wrong operator); caught when a ``wrong`` claim
  overlaps the altered number. Alterations come from the annotations, not from the checker.
- Step labels, per split (``development_*``: even positions, tune here; ``held_out_*``: odd
  positions, the headline; ``--steps-only`` prints only these, with ``os.getloadavg``):
  ``*_false_alarm_rate``: correct steps holding a ``wrong`` claim (MR-GSM8K: steps before the
  labelled first error; PRM800K: steps rated +1, each checked after its path so far);
  ``*_first_error_precision``: of solutions with a first ``wrong`` flag, the share where it sits
  on the labelled first-error step (MR-GSM8K) or on a step rated -1 (PRM800K: a solution is a
  rated step with its path so far); ``*_correct_solutions_flagged``: PRM800K paths that end in a
  solution with no step rated -1, GPT-3 GSM8K solutions with a correct answer, and GSM8K
  references, holding a ``wrong`` claim; ``*_error_steps_flagged``: labelled wrong steps holding
  one (informational). MR-GSM8K items and PRM800K problems are split by position in the file.
- ``answers_*``: ``o3viz.text.answers`` on the MATH-500 records (R1 and distills, Thought
  Anchors), read as the importer reads them (answer part before ``<think>``), against
  ``ground_truth`` by ``answers_equivalent``; every disagreement is listed.
- ``*_gpt3_*_solutions_flagged``: share of GPT-3's GSM8K solutions (labelled correct / incorrect
  at the solution level only) holding a ``wrong`` claim (a correct final answer can still follow
  a real slip, so the first figure is not a pure false-alarm rate).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from o3viz.errors import UsageError
from o3viz.paths import data_dir
from o3viz.text.answers import answer_in_regions, answers_equivalent
from o3viz.verify.claims.check import Claim, check_claims
from o3viz.verify.claims.evaluate import evaluate
from o3viz.verify.claims.parse import parse_expression
from o3viz.verify.claims.text import normalize_text

DATA = data_dir()
_ANNOT = re.compile(r"<<([^<>]*)>>(\$?)(-?\d[\d,]*(?:\.\d+)?)?")
KINDS = ("off_by_one", "digit_swap", "wrong_operator")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=0, help="seed for the planted alterations")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N solutions")
    parser.add_argument("--data", type=Path, default=DATA, help="shared data folder")
    parser.add_argument(
        "--steps-only", action="store_true", help="only the step-label figures (MR-GSM8K, PRM800K) per split"
    )


def load_gsm8k(data: Path, limit: int | None = None) -> list[str]:
    path = data / "gsm8k" / "gsm8k_test.jsonl"
    if not path.exists():
        raise UsageError(f"GSM8K data not found at {path}; pass --data")
    lines = path.read_text(encoding="utf-8").splitlines()[:limit]
    return [json.loads(line)["answer"] for line in lines if line.strip()]


def strip_annotations(answer: str) -> tuple[str, list[tuple[int, int, str]]]:
    """Text without ``<<...>>`` plus, per annotation with a visible result, (start, end, expr)."""
    out, spots, pos, shift = [], [], 0, 0
    for m in _ANNOT.finditer(answer):
        out.append(answer[pos : m.start()])
        shift += m.end(1) + 2 - m.start()
        if m.group(3):
            start = m.start(3) - shift
            spots.append((start, start + len(m.group(3)), m.group(1).rpartition("=")[0]))
        pos = m.end(1) + 2
    out.append(answer[pos:])
    return "".join(out), spots


def count_false_alarms(texts: list[str]) -> tuple[int, int]:
    """(claims, wrong claims) over ``texts``."""
    total = wrong = 0
    for t in texts:
        claims = check_claims(t)
        total += len(claims)
        wrong += sum(c.verdict == "wrong" for c in claims)
    return total, wrong


def alter(number: str, expr: str, kind: str, rng: random.Random) -> str | None:
    """The altered stated result, or None when this kind cannot change this number."""
    value = Fraction(number.replace(",", ""))
    if kind == "off_by_one":
        new = value + rng.choice((-1, 1)) if value >= 1 else value + 1
    elif kind == "digit_swap":
        digits = number.replace(",", "")
        pairs = [
            i
            for i in range(len(digits) - 1)
            if digits[i] != digits[i + 1]
            and (digits[i] + digits[i + 1]).isdigit()
            and not (i == 0 and digits[1] == "0")
        ]
        if not pairs:
            return None
        i = rng.choice(pairs)
        new = Fraction(digits[:i] + digits[i + 1] + digits[i] + digits[i + 2 :])
    else:
        new = _wrong_operator(expr, rng)
        if new is None or new == value:
            return None
    return _format_like(new, number)


def _wrong_operator(expr: str, rng: random.Random) -> Fraction | None:
    ops = [i for i, ch in enumerate(expr) if ch in "+-*/" and i > 0 and expr[i - 1] not in "+-*/("]
    if not ops:
        return None
    i = rng.choice(ops)
    new_op = rng.choice([o for o in "+-*/" if o != expr[i]])
    run = parse_expression(normalize_text(expr[:i] + new_op + expr[i + 1 :]).text)
    val = evaluate(run.items) if run and not run.symbolic else None
    return val if isinstance(val, Fraction) else None


def _format_like(value: Fraction, like: str) -> str:
    decimals = len(like.split(".", 1)[1]) if "." in like else 0
    if value.denominator != 1 and decimals == 0:
        decimals = 2
    text = f"{float(value):,.{decimals}f}" if "," in like else f"{float(value):.{decimals}f}"
    return text


def measure_detection(answers: list[str], seed: int) -> dict[str, tuple[int, int]]:
    """Per kind: (caught, planted)."""
    rng = random.Random(seed)
    counts = {k: [0, 0] for k in KINDS}
    for answer in answers:
        text, spots = strip_annotations(answer)
        if not spots:
            continue
        for kind in KINDS:
            start, end, expr = rng.choice(spots)
            new = alter(text[start:end], expr, kind, rng)
            if new is None:
                continue
            altered = text[:start] + new + text[end:]
            claims = check_claims(altered)
            counts[kind][1] += 1
            counts[kind][0] += any(_overlaps(c, start, start + len(new)) for c in claims)
    return {k: (c, n) for k, (c, n) in counts.items()}


def _overlaps(c: Claim, start: int, end: int) -> bool:
    return c.verdict == "wrong" and c.start < end and c.end > start


@dataclass
class StepTally:
    """Step-label figures of one split: (a) false alarms on correct steps, (b) first-error
    precision, (c) entirely-correct solutions flagged, and first-error recall (informational)."""

    correct_steps: int = 0  # steps labelled correct
    correct_flagged: int = 0  # of them, holding a ``wrong`` claim
    first_flagged: int = 0  # solutions whose first ``wrong`` flag exists
    first_on_error: int = 0  # of them, where it sits on a labelled wrong step
    clean: int = 0  # solutions labelled entirely correct
    clean_flagged: int = 0  # of them, holding a ``wrong`` claim anywhere
    errors: int = 0  # labelled (first-)error steps
    errors_flagged: int = 0  # of them, holding a ``wrong`` claim


def wrong_steps(steps: list[str]) -> list[int]:
    """Sorted indices of the steps holding a ``wrong`` claim, the steps checked as one text."""
    text, ranges, pos = "", [], 0
    for s in steps:
        ranges.append((pos, pos + len(s)))
        text += s + "\n"
        pos += len(s) + 1
    return sorted({c.step for c in check_claims(text, steps=ranges) if c.verdict == "wrong"})


def load_mr_gsm8k(data: Path) -> list[tuple[list[str], int]] | None:
    """(steps, first-error step counted from 0) of each MR-GSM8K item with a usable label."""
    path = data / "process_labels" / "mr_gsm8k_claude_eval_results.json"
    if not path.exists():
        return None
    out = []
    for item in json.loads(path.read_text(encoding="utf-8")):
        steps, first = item["model_output_steps"], item["model_output_solution_first_error_step"]
        if isinstance(first, int) and 1 <= first <= len(steps):
            out.append((steps, first - 1))
    return out


def tally_mr_gsm8k(items: list[tuple[list[str], int]]) -> StepTally:
    """Every solution is wrong: steps before the first error are the correct ones."""
    t = StepTally()
    for steps, first in items:
        flags = wrong_steps(steps)
        t.correct_steps += first
        t.correct_flagged += sum(1 for i in flags if i < first)
        t.errors += 1
        t.errors_flagged += first in flags
        if flags:
            t.first_flagged += 1
            t.first_on_error += flags[0] == first
    return t


def load_prm800k(data: Path) -> list[list[dict]] | None:
    """The PRM800K phase-1 rows grouped by problem, problems in file order. Each problem is one
    path of preferred steps (rated +1, or unrated where a person wrote it) with rated alternatives."""
    path = data / "process_labels" / "prm800k_phase1_test_stepwise_critic.jsonl.gz"
    if not path.exists():
        return None
    problems: dict[str, list[dict]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            problems.setdefault(row["instruction"], []).append(row)
    return list(problems.values())


def tally_prm800k(problems: list[list[dict]]) -> StepTally:
    """A rated step is checked after its own prefix (the path so far) and forms a solution with
    it: a first flag is on target when it lands on that step and the step is rated -1. A path
    that ends in a solution step with no step rated -1 is an entirely-correct solution."""
    t = StepTally()
    for rows in problems:
        for row in rows:
            rating = None if row.get("rating") is None else int(row["rating"])
            if rating is None:
                continue
            steps = [*row["responses"], str(row["next_response"])]
            flags, last = wrong_steps(steps), len(steps) - 1
            t.correct_steps += rating == 1
            t.correct_flagged += rating == 1 and last in flags
            t.errors += rating == -1
            t.errors_flagged += rating == -1 and last in flags
            if flags:
                t.first_flagged += 1
                t.first_on_error += flags[0] == last and rating == -1
        end = next((r for r in rows if r["is_solution"] and r["is_preferred_response"]), None)
        if end is not None:
            t.clean += 1
            t.clean_flagged += bool(wrong_steps([*end["responses"], str(end["next_response"])]))
    return t


def _report_steps(split: str, name: str, t: StepTally) -> None:
    p = f"{split}_{name}"
    print(
        f"{p}_false_alarm_rate: {_rate(t.correct_flagged, t.correct_steps)}  "
        f"({t.correct_flagged} of {t.correct_steps} correct steps hold a wrong claim)"
    )
    print(
        f"{p}_first_error_precision: {_rate(t.first_on_error, t.first_flagged)}  "
        f"({t.first_on_error} of {t.first_flagged} first flags on a labelled wrong step)"
    )
    if t.clean:
        print(
            f"{p}_correct_solutions_flagged: {_rate(t.clean_flagged, t.clean)}  "
            f"({t.clean_flagged} of {t.clean})"
        )
    print(f"{p}_error_steps_flagged: {_rate(t.errors_flagged, t.errors)}  ({t.errors_flagged} of {t.errors})")


def run_steps(data: Path) -> None:
    """The step-label figures per split: development (tune here) and held_out (the headline)."""
    mr, prm = load_mr_gsm8k(data), load_prm800k(data)
    path = data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"
    keys = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")
    rows = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    models = [[json.loads(line)[k] for k in keys] for line in rows]
    refs = load_gsm8k(data) if (data / "gsm8k" / "gsm8k_test.jsonl").exists() else []
    print(f"load_average_1min: {os.getloadavg()[0]:.2f}")
    for split in ("development", "held_out"):
        if mr is not None:
            _report_steps(split, "mr_gsm8k", tally_mr_gsm8k(halves(mr)[split]))
        if prm is not None:
            _report_steps(split, "prm800k", tally_prm800k(halves(prm)[split]))
        for label, correct in (("correct_solutions", True), ("incorrect_solutions", False)):
            sols = [s["solution"] for row in halves(models)[split] for s in row if s["is_correct"] == correct]
            hit = sum(any(c.verdict == "wrong" for c in check_claims(s)) for s in sols)
            print(f"{split}_gpt3_{label}_flagged: {_rate(hit, len(sols))}  ({hit} of {len(sols)})")
        part = halves(refs)[split]
        flagged = sum(any(c.verdict == "wrong" for c in check_claims(strip_annotations(a)[0])) for a in part)
        print(
            f"{split}_gsm8k_references_correct_solutions_flagged: {_rate(flagged, len(part))}  ({flagged} of {len(part)})"
        )
    print(f"load_average_1min_after: {os.getloadavg()[0]:.2f}")


def _rate(a: int, b: int) -> str:
    return f"{a / b:.4f}" if b else "nan"


def halves(items: list) -> dict[str, list]:
    """``development`` (even positions, 0-based) and ``held_out`` (odd positions)."""
    return {"development": items[0::2], "held_out": items[1::2]}


def math500_records(data: Path) -> list[tuple[str, str, str, bool | None]]:
    """(id, full text, ground truth, the file's is_correct) of every MATH-500 record in
    ``traces/`` with a text and a ground truth."""
    out = []
    for path in sorted((data / "traces").glob("topology_*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            rid = f"{path.stem}:{row['item_id']}"
            out.append((rid, row["full_response"], str(row["ground_truth"]), row.get("is_correct")))
    ta = data / "traces" / "thought_anchors_math_base_solutions.jsonl"
    if ta.exists():
        for line in ta.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            sol, truth = row.get("base_solution") or {}, (row.get("problem") or {}).get("gt_answer")
            if sol.get("full_cot") and truth is not None:
                rid = f"thought_anchors:{row['model']}:{row['problem_id']}:{row['condition']}"
                out.append((rid, sol["full_cot"], str(truth), sol.get("is_correct")))
    return out


def measure_answers(data: Path) -> tuple[int, int, list[tuple[str, str, str, str, object]]]:
    """(records, records where our verdict matches the file's is_correct, disagreements with
    ground truth as (id, extracted, method, ground truth, file's is_correct))."""
    records = math500_records(data)
    wrong, agree_label = [], 0
    for rid, text, truth, label in records:
        cut = text.find("</think>")
        regions = (
            {"thinking": [0, cut], "answer": [cut + 8, len(text)]} if cut >= 0 else {"answer": [0, len(text)]}
        )
        found = answer_in_regions(text, regions, "math")
        same = found is not None and answers_equivalent(found.text, truth)
        agree_label += label is not None and same == bool(label)
        if not same:
            wrong.append(
                (rid, found.text if found else "(none)", found.method if found else "-", truth, label)
            )
    return len(records), agree_label, wrong


def _report_half(name: str, answers: list[str], seed: int) -> None:
    stripped = [strip_annotations(a)[0] for a in answers]
    n_ann, w_ann = count_false_alarms(answers)
    n_str, w_str = count_false_alarms(stripped)
    print(f"{name}_solutions: {len(answers)}")
    print(
        f"{name}_false_alarm_rate: {_rate(w_ann + w_str, n_ann + n_str)}  ({w_ann + w_str} of {n_ann + n_str} claims)"
    )
    print(f"{name}_false_alarm_rate_annotated: {_rate(w_ann, n_ann)}")
    print(f"{name}_false_alarm_rate_stripped: {_rate(w_str, n_str)}")
    det = measure_detection(answers, seed)
    caught, planted = sum(c for c, _ in det.values()), sum(n for _, n in det.values())
    print(f"{name}_detection_rate: {_rate(caught, planted)}  ({caught} of {planted} planted)")
    for kind, (c, n) in det.items():
        print(f"{name}_detection_rate_{kind}: {_rate(c, n)}  ({c} of {n})")


def run(args: argparse.Namespace) -> int:
    if args.steps_only:
        run_steps(args.data)
        return 0
    answers = load_gsm8k(args.data, args.limit)
    t0 = time.perf_counter()
    count_false_alarms(answers[:200])
    t1 = time.perf_counter()
    for text in answers[:200]:  # baseline for the speed ratio: normalization alone
        normalize_text(text)
    t2 = time.perf_counter()
    print(f"check_time_vs_normalize_only: {(t1 - t0) / max(t2 - t1, 1e-9):.1f}")
    for name, part in halves(answers).items():  # development: rules may be tuned; held_out: not
        _report_half(name, part, args.seed)
    if args.limit is None:
        run_steps(args.data)
    n, agree_label, wrong = measure_answers(args.data)
    print(f"answers_math500_agreement: {_rate(n - len(wrong), n)}  ({n - len(wrong)} of {n})")
    print(f"answers_verdict_matches_file_is_correct: {_rate(agree_label, n)}  ({agree_label} of {n})")
    for rid, got, method, truth, label in wrong:
        print(
            f"answers_disagreement: {rid}  extracted={got[:60]!r} ({method})  "
            f"ground_truth={truth[:60]!r}  file_is_correct={label}"
        )
    return 0


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    add_arguments(p)
    raise SystemExit(run(p.parse_args()))
