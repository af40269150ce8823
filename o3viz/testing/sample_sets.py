"""Sample traces made from text, for the sample-set tests, doctests and benchmarks: each text goes
through the importers' one text → trace path, so its steps, answer and grade are the real ones."""

from __future__ import annotations

import numpy as np

from o3viz.importers.build import build_trace
from o3viz.importers.formats import Imported
from o3viz.trace import Trace

QUESTION = "A baker has 12 trays of 4 muffins and sells 30 muffins. How many muffins are left?"
REFERENCE = "18"


def text_sample(
    text: str, question: str = QUESTION, reference: str | None = REFERENCE, model: str = ""
) -> Trace:
    """One sample: ``text`` as the reply to ``question``, graded against ``reference``."""
    imp = Imported("sample", text, question=question, reference=reference, source_model=model or None)
    return build_trace(imp, claims=False)


def split_set(n_right: int = 6, n_wrong: int = 6, tail: int = 0) -> list[Trace]:
    """A constructed set whose split is known: every sample shares two opening steps, then
    ``n_right`` multiply (12 × 4 = 48, then 48 − 30 = 18, right) and ``n_wrong`` add (12 + 4 = 16,
    then 30 − 16 = 14, wrong); ``tail`` more shared-wording steps follow each branch."""
    head = "We need the muffins left. First count the muffins baked. "
    more = "".join(f"Check {i}: the count stays the same. " for i in range(tail))
    right = head + "There are 12 * 4 = 48 muffins. " + more + "Then 48 - 30 = 18 are left. The answer is 18."
    wrong = head + "There are 12 + 4 = 16 muffins. " + more + "Then 30 - 16 = 14 are left. The answer is 14."
    return [text_sample(right) for _ in range(n_right)] + [text_sample(wrong) for _ in range(n_wrong)]


def undecided_set() -> list[Trace]:
    """A set whose one split the fork test can't decide: the multiply side holds one right sample
    (18) and one that subtracts wrong (17), the add side two wrong (14); 1 of 2 against 0 of 2."""
    head = "We need the muffins left. First count the muffins baked. "
    texts = [
        head + "There are 12 * 4 = 48 muffins. Then 48 - 30 = 18 are left. The answer is 18.",
        head + "There are 12 * 4 = 48 muffins. Then 48 - 31 = 17 are left. The answer is 17.",
        head + "There are 12 + 4 = 16 muffins. Then 30 - 16 = 14 are left. The answer is 14.",
        head + "There are 12 + 4 = 16 muffins. Then 30 - 16 = 14 are left. The answer is 14.",
    ]
    return [text_sample(t) for t in texts]


def long_texts(n: int, steps: int, seed: int = 0) -> list[str]:
    """``n`` synthetic replies of ``steps`` sentences each (about 20 tokens a sentence: 200 steps
    is about 4k tokens) that share an opening and part ways at random steps, as samples do."""
    rng = np.random.default_rng(seed)
    words = "so we add the count then check each value again because the total must match".split()
    out = []
    for i in range(n):
        split = int(rng.integers(1, max(2, steps // 4)))
        sents = []
        for s in range(steps):
            if s < split:
                sents.append(f"Step {s} sets up the problem with {s * 7} items and counts them.")
            else:
                w = " ".join(rng.choice(words, 12))
                sents.append(f"Sample {i} line {s}: {w} giving {int(rng.integers(0, 999))}.")
        out.append(" ".join(sents) + f" The answer is {i % 3}.")
    return out


def merge_scores(gold: dict, solutions: str) -> dict:
    """Precision, recall and F1 of the step equivalence (``o3viz.samples.steps.equivalent``)
    against a hand-aligned set (``tests/samples/data/gsm8k_step_alignment.json``): over every pair
    of steps from two different systems' solutions to one question, equivalent by hand when they
    carry the same label. ``solutions``: the GSM8K example model solutions file."""
    import json
    from itertools import combinations

    from o3viz.samples.steps import equivalent, step_key

    lines = open(solutions, encoding="utf-8").read().splitlines()
    tp = fp = fn = 0
    for q in gold["questions"]:
        rec = json.loads(lines[q["record"] - 1])
        steps = {}
        for system, want in q["systems"].items():
            t = build_trace(
                Imported("jsonl", rec[system]["solution"], question=rec["question"]), claims=False
            )
            heads = [s.text[:32] for s in t.final.steps]
            if heads != want["heads"]:
                raise ValueError(f"record {q['record']} {system}: the step split moved: {heads}")
            steps[system] = [
                (step_key(s.text), lab) for s, lab in zip(t.final.steps, want["labels"], strict=True)
            ]
        for a, b in combinations(steps, 2):
            for ka, la in steps[a]:
                for kb, lb in steps[b]:
                    said, truth = equivalent(ka, kb), la is not None and la == lb
                    tp, fp, fn = tp + (said and truth), fp + (said and not truth), fn + (truth and not said)
    p, r = tp / max(1, tp + fp), tp / max(1, tp + fn)
    return {
        "pairs": tp + fn,
        "precision": p,
        "recall": r,
        "f1": 2 * p * r / max(1e-9, p + r),
        "tp": tp,
        "fp": fp,
        "fn": fn,
    }
