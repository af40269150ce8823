"""The step equivalence against a held-out hand-aligned GSM8K set: ten questions (records 100, 200,
…, 1000) labelled by hand after ``o3viz.samples.steps`` was frozen, none of them in the development
set the rule was designed on. Measured when the set was made: F1 0.883 (precision 0.800, recall
0.986, 73 hand-aligned pairs), under issue 54's goal of 0.9; this test holds that floor, it does not
claim the goal. A second held-out set (records 150, 250, …, 1050, labelled by another session without
running the rule) measured F1 0.883 too (precision 0.790, recall 1.0, 79 pairs). A revised rule that
lifted the first held-out set to 0.966 fell to 0.795 on the second, so it was not kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from o3viz.testing.sample_sets import merge_scores

pytestmark = [pytest.mark.light]

HELDOUT = Path(__file__).parent / "data" / "gsm8k_step_alignment_heldout.json"
HELDOUT2 = Path(__file__).parent / "data" / "gsm8k_step_alignment_heldout2.json"
DEV = Path(__file__).parent / "data" / "gsm8k_step_alignment.json"
MEASURED_F1 = 0.883  # held out, at the rule it was labelled against


def test_the_held_out_set_shares_no_question_with_the_development_set():
    held = json.loads(HELDOUT.read_text())
    dev = json.loads(DEV.read_text())
    records = [q["record"] for q in held["questions"]]
    assert records == list(range(100, 1001, 100))
    assert not set(records) & {q["record"] for q in dev["questions"]}
    for q in held["questions"]:
        for system in q["systems"].values():
            assert len(system["heads"]) == len(system["labels"])


def test_step_merging_on_the_held_out_set_holds_its_measured_floor(shared_data):
    gold = json.loads(HELDOUT.read_text())
    got = merge_scores(gold, str(shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"))
    assert got["pairs"] == 73, got
    assert got["f1"] >= MEASURED_F1 - 0.02, got  # below issue 54's 0.9: see the module docstring


def test_step_merging_on_the_second_held_out_set_holds_its_measured_floor(shared_data):
    held = json.loads(HELDOUT2.read_text())
    records = [q["record"] for q in held["questions"]]
    assert records == list(range(150, 1051, 100))
    assert not set(records) & {q["record"] for q in json.loads(DEV.read_text())["questions"]}
    got = merge_scores(held, str(shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"))
    assert got["pairs"] == 79, got
    assert got["f1"] >= MEASURED_F1 - 0.02, got  # below issue 54's 0.9: see the module docstring
