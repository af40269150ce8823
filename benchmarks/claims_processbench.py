"""Claim checker on ProcessBench: first flags on correct steps, correct solutions flagged, recall.

ProcessBench (``../shared/data/process_labels/processbench_{gsm8k,math}.json``) is a JSON list of
solutions written by recent models in competition LaTeX, each a list of ``steps`` with ``label``,
the index of the first wrong step (-1: every step is correct). The file is read directly here, and
each solution's steps are checked as one text, a step per source step.

Each split is cut in two halves by the SHA-1 of the problem text (even last byte: ``development``,
the only half readings were tuned on; odd: ``held_out``, measured once at the end). Per split and
half:

- ``*_first_flags_on_correct_steps``: of the solutions with a ``wrong`` claim, those whose first
  one sits on a step labelled correct (before the labelled first wrong step, or anywhere in an
  all-correct solution). Goal: at most 5%. A first flag after the labelled step is neither
  (ProcessBench labels no step after the first wrong one).
- ``*_correct_solutions_flagged``: all-correct solutions (label -1) holding a ``wrong`` claim.
  Goal: at most 1%.
- ``*_wrong_step_recall``: solutions with a labelled wrong step where that step holds a ``wrong``
  claim (most wrong steps are wrong reasoning, not wrong arithmetic, so this stays low).
- ``load_average_1min`` before and after (``os.getloadavg``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from o3viz.errors import UsageError
from o3viz.paths import data_dir
from o3viz.verify.claims.check import check_claims

SPLITS = ("gsm8k", "math")
HALVES = ("development", "held_out")
GOALS = {
    f"{s}_{h}_{f}": g
    for s in SPLITS
    for h in HALVES
    for f, g in (("first_flags_on_correct_steps", "<= 0.05"), ("correct_solutions_flagged", "<= 0.01"))
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, default=data_dir(), help="shared data folder")
    parser.add_argument("--half", choices=HALVES, default=None, help="only this half (default: both)")
    parser.add_argument("--show", action="store_true", help="print every first flag on a correct step")


def load_split(data: Path, split: str) -> list[dict]:
    path = data / "process_labels" / f"processbench_{split}.json"
    if not path.exists():
        raise UsageError(f"ProcessBench {split} not found at {path}; pass --data")
    items = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(items, list):
        raise UsageError(f"{path}: expected a JSON list of solutions")
    return items


def half_of(item: dict) -> str:
    """``development`` when the SHA-1 of the problem text ends in an even byte, else ``held_out``."""
    digest = hashlib.sha1(str(item.get("problem", "")).encode("utf-8")).digest()
    return HALVES[digest[-1] % 2]


def flagged_claims(steps: list[str]) -> list:
    """The ``wrong`` claims of the steps checked as one text (one step per source step)."""
    text, ranges, pos = "", [], 0
    for s in steps:
        ranges.append((pos, pos + len(s)))
        text += s + "\n"
        pos += len(s) + 1
    return [c for c in check_claims(text, steps=ranges) if c.verdict == "wrong"]


@dataclass
class Tally:
    solutions: int = 0
    first_flags: int = 0  # solutions with a wrong claim
    on_correct: int = 0  # of them, the first on a step labelled correct
    on_label: int = 0  # of them, the first on the labelled first wrong step
    clean: int = 0  # all-correct solutions
    clean_flagged: int = 0
    errors: int = 0  # solutions with a labelled wrong step
    errors_flagged: int = 0  # of them, that step holds a wrong claim
    shown: list[str] = field(default_factory=list)


def tally(items: list[dict], show: bool = False) -> Tally:
    t = Tally()
    for item in items:
        steps, label = [str(s) for s in item["steps"]], int(item["label"])
        flags = flagged_claims(steps)
        steps_flagged = sorted({c.step for c in flags})
        t.solutions += 1
        t.clean += label < 0
        t.errors += label >= 0
        if not steps_flagged:
            continue
        first = steps_flagged[0]
        t.first_flags += 1
        t.clean_flagged += label < 0
        t.errors_flagged += label >= 0 and label in steps_flagged
        t.on_label += first == label
        if label < 0 or first < label:
            t.on_correct += 1
            if show:
                c = next(c for c in flags if c.step == first)
                t.shown.append(
                    f"{item.get('id', '?')} step {first} (label {label}): {c.rule} "
                    f"{c.expression!r} stated {c.stated!r} value {c.value!r}"
                )
    return t


def _rate(a: int, b: int) -> str:
    return f"{a / b:.4f}" if b else "nan"


def report(name: str, t: Tally) -> None:
    print(f"{name}_solutions: {t.solutions}")
    print(
        f"{name}_first_flags_on_correct_steps: {_rate(t.on_correct, t.first_flags)}  "
        f"({t.on_correct} of {t.first_flags} first flags; {t.on_label} on the labelled wrong step)"
    )
    print(
        f"{name}_correct_solutions_flagged: {_rate(t.clean_flagged, t.clean)}  ({t.clean_flagged} of {t.clean})"
    )
    print(
        f"{name}_wrong_step_recall: {_rate(t.errors_flagged, t.errors)}  ({t.errors_flagged} of {t.errors})"
    )
    for line in t.shown:
        print(f"  {line}")


def run(args: argparse.Namespace) -> int:
    print(f"load_average_1min: {os.getloadavg()[0]:.2f}")
    for split in SPLITS:
        items = load_split(args.data, split)
        for half in HALVES:
            if args.half in (None, half):
                report(f"{split}_{half}", tally([i for i in items if half_of(i) == half], args.show))
    print(f"load_average_1min_after: {os.getloadavg()[0]:.2f}")
    return 0


def notes(output: str) -> list[str]:
    return [
        "Halves by the SHA-1 of the problem text (even last byte: development, where readings were "
        "tuned; odd: held out). A development figure is not a held-out one."
    ]


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    add_arguments(p)
    raise SystemExit(run(p.parse_args()))
