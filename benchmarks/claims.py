"""Arithmetic claim checker on GSM8K: false alarms on references, detection of planted errors,
each on a development half (even GSM8K line numbers, the only half rules may be tuned on) and a
held-out half (odd line numbers); step-level measures on human-labelled steps (MR-GSM8K first
errors, PRM800K ratings); and the final-answer extractor's agreement with ``ground_truth`` on the
110 MATH-500 records of ``traces/``.

- ``false_alarm_rate``: share of claims found in the 1,319 GSM8K reference solutions (annotated
  and with ``<<...>>`` stripped) that the checker calls ``wrong``. References are taken as correct.
- ``detection_rate``: one stated result per solution is altered in the *stripped* text (off by
  one, two digits swapped, or the result of a wrong operator); caught when a ``wrong`` claim
  overlaps the altered number. Alterations come from the annotations, not from the checker.
- ``mr_gsm8k_*``: on MR-GSM8K's real wrong solutions, how many human-labelled first-error steps
  hold a ``wrong`` claim (informational), and how many earlier steps do (false alarms).
- ``prm800k_*``: PRM800K phase-1 test steps rated -1 (wrong) holding a ``wrong`` claim, and
  steps rated +1 (correct) holding one (false alarms); each step is checked on its own.
- ``answers_*``: ``o3viz.text.answers`` on the MATH-500 records (R1 and distills, Thought
  Anchors), read as the importer reads them (answer part before ``<think>``), against
  ``ground_truth`` by ``answers_equivalent``; every disagreement is listed.
- ``model_solutions_flagged_*``: share of GPT-3's GSM8K solutions (labelled correct / incorrect
  at the solution level only) holding at least one ``wrong`` claim (informational; a correct
  final answer can still follow a real slip, so the first figure is not a pure false-alarm rate).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import time
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


def measure_mr_gsm8k(data: Path) -> tuple[int, int, int, int] | None:
    """(first-error steps flagged, first-error steps, earlier steps flagged, earlier steps)."""
    path = data / "process_labels" / "mr_gsm8k_claude_eval_results.json"
    if not path.exists():
        return None
    hit = total = early_hit = early = 0
    for item in json.loads(path.read_text(encoding="utf-8")):
        steps, first = item["model_output_steps"], item["model_output_solution_first_error_step"]
        if not isinstance(first, int) or not 1 <= first <= len(steps):
            continue
        text, ranges, pos = "", [], 0
        for s in steps:
            ranges.append((pos, pos + len(s)))
            text += s + "\n"
            pos += len(s) + 1
        flagged = {c.step for c in check_claims(text, steps=ranges) if c.verdict == "wrong"}
        total += 1
        hit += (first - 1) in flagged
        early += first - 1
        early_hit += sum(1 for i in range(first - 1) if i in flagged)
    return hit, total, early_hit, early


def measure_model_solutions(data: Path) -> tuple[int, int, int, int] | None:
    """(incorrect flagged, incorrect, correct flagged, correct) over GPT-3's GSM8K solutions."""
    path = data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"
    if not path.exists():
        return None
    counts = {True: [0, 0], False: [0, 0]}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for key in ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"):
            sol = row[key]
            tally = counts[bool(sol["is_correct"])]
            tally[1] += 1
            tally[0] += any(c.verdict == "wrong" for c in check_claims(sol["solution"]))
    return counts[False][0], counts[False][1], counts[True][0], counts[True][1]


def _rate(a: int, b: int) -> str:
    return f"{a / b:.4f}" if b else "nan"


def halves(items: list) -> dict[str, list]:
    """``development`` (even positions, 0-based) and ``held_out`` (odd positions)."""
    return {"development": items[0::2], "held_out": items[1::2]}


def measure_prm800k(data: Path) -> tuple[int, int, int, int] | None:
    """(wrong-rated steps flagged, wrong-rated steps, correct-rated steps flagged, correct-rated)."""
    path = data / "process_labels" / "prm800k_phase1_test_stepwise_critic.jsonl.gz"
    if not path.exists():
        return None
    counts = {-1: [0, 0], 1: [0, 0]}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            rating = row.get("rating")
            if rating not in (-1, 1, "-1", "1"):
                continue
            tally = counts[int(rating)]
            tally[1] += 1
            tally[0] += any(c.verdict == "wrong" for c in check_claims(str(row.get("next_response", ""))))
    return counts[-1][0], counts[-1][1], counts[1][0], counts[1][1]


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
    mr = measure_mr_gsm8k(args.data)
    if mr is not None:
        hit, total, early_hit, early = mr
        print(f"mr_gsm8k_first_error_steps_flagged: {_rate(hit, total)}  ({hit} of {total})")
        print(f"mr_gsm8k_earlier_steps_flagged: {_rate(early_hit, early)}  ({early_hit} of {early})")
    prm = measure_prm800k(args.data) if args.limit is None else None
    if prm is not None:
        print(f"prm800k_wrong_steps_flagged: {_rate(prm[0], prm[1])}  ({prm[0]} of {prm[1]})")
        print(f"prm800k_correct_steps_flagged: {_rate(prm[2], prm[3])}  ({prm[2]} of {prm[3]})")
    ms = measure_model_solutions(args.data) if args.limit is None else None
    if ms is not None:
        print(f"model_solutions_flagged_incorrect: {_rate(ms[0], ms[1])}")
        print(f"model_solutions_flagged_correct: {_rate(ms[2], ms[3])}")
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
