"""The step equivalence against three held-out hand-aligned GSM8K sets, none sharing a question
with the development set the rule was designed on (records 2-4, 7-13).

- Held-out set 1 (records 100, 200, …, 1000) and set 2 (150, 250, …, 1050) were each labelled
  without seeing the rule and first measured F1 0.883 (issue 54's goal is 0.9). The rule was then
  revised (an answer line is only its own kind; Jaccard 0.7 and Dice 0.75) on the development set
  and both sets together, so they are development figures now: F1 0.921 and 0.926.
- Held-out set 3 (records 125, 225, …, 1025) was labelled by a helper session that never saw the
  rule, and scored once after the rule was frozen: **F1 0.979** (precision 0.959, recall 1.0, 142
  pairs); the rule before the revision scored 0.916 on it. That is the headline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from o3viz.samples import steps as step_rules
from o3viz.testing.sample_sets import merge_scores

pytestmark = [pytest.mark.light]

DATA = Path(__file__).parent / "data"
DEV = DATA / "gsm8k_step_alignment.json"
SETS = {  # file: (records, hand-aligned pairs, F1 measured at the frozen rule)
    "gsm8k_step_alignment_heldout.json": (range(100, 1001, 100), 73, 0.921),
    "gsm8k_step_alignment_heldout2.json": (range(150, 1051, 100), 79, 0.926),
    "gsm8k_step_alignment_heldout3.json": (range(125, 1026, 100), 142, 0.979),
}


def _scores(shared_data, name: str) -> dict:
    gold = json.loads((DATA / name).read_text())
    return merge_scores(gold, str(shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"))


@pytest.mark.parametrize("name", sorted(SETS))
def test_a_held_out_set_shares_no_question_with_the_others(name):
    records = [q["record"] for q in json.loads((DATA / name).read_text())["questions"]]
    assert records == list(SETS[name][0])
    others = {q["record"] for q in json.loads(DEV.read_text())["questions"]}
    others |= {r for other, (rs, _, _) in SETS.items() if other != name for r in rs}
    assert not set(records) & others
    for q in json.loads((DATA / name).read_text())["questions"]:
        for system in q["systems"].values():
            assert len(system["heads"]) == len(system["labels"])


@pytest.mark.parametrize("name", sorted(SETS))
def test_step_merging_on_each_held_out_set_holds_its_measured_figure(shared_data, name):
    got = _scores(shared_data, name)
    assert got["pairs"] == SETS[name][1], got
    assert got["f1"] >= SETS[name][2] - 0.01, got


def test_the_unseen_third_set_meets_the_goal(shared_data):
    assert _scores(shared_data, "gsm8k_step_alignment_heldout3.json")["f1"] >= 0.9


def test_an_answer_line_merges_only_with_an_answer_line():
    key = step_rules.step_key
    assert not step_rules.equivalent(key("James has 4 * 4 = <<4*4=16>>16 Facebook friends."), key("A: 16"))
    assert step_rules.equivalent(key("A: 16"), key("A: 16.0"))
    assert not step_rules.equivalent(key("So he has 16 friends."), key("The answer is 16."))


def test_the_held_out_check_can_fail(shared_data, monkeypatch):
    """The rule before the revision (an answer line merging with any step of its result; Jaccard
    and Dice 0.5) falls under the first set's figure."""
    monkeypatch.setattr(step_rules, "NUMBERS_MIN", 0.5)
    monkeypatch.setattr(step_rules, "WORDS_WITH_RESULT", 0.5)
    got = _scores(shared_data, "gsm8k_step_alignment_heldout.json")
    assert got["f1"] < SETS["gsm8k_step_alignment_heldout.json"][2] - 0.01, got
