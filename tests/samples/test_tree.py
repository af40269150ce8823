"""The sample tree: equivalent steps merge, forks are found where the split is known and not where
there is none, chains collapse, the majority has its interval; real GSM8K systems' solutions and
twenty models' thinking texts build; the step equivalence matches a hand-aligned set (F1 ≥ 0.9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from o3viz.importers.build import build_trace
from o3viz.importers.formats import Imported
from o3viz.samples import steps as step_rules
from o3viz.samples.tree import MIN_SIDE, Sample, build_tree
from o3viz.testing.sample_sets import merge_scores, split_set, text_sample

pytestmark = [pytest.mark.light]

GOLD = Path(__file__).parent / "data" / "gsm8k_step_alignment.json"
SYSTEMS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")


def gsm8k_systems(shared_data: Path, line: int) -> list:
    rec = json.loads(
        (shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl").read_text().splitlines()[line]
    )
    return [
        build_trace(
            Imported(
                "jsonl",
                rec[s]["solution"],
                question=rec["question"],
                reference=rec["ground_truth"],
                is_correct=rec[s]["is_correct"],
                source_model=s,
            ),
            claims=False,
        )  # fmt: skip
        for s in SYSTEMS
    ]


def test_a_known_split_is_the_one_fork_with_both_sides_and_their_shares():
    tree = build_tree(split_set(6, 6))
    assert tree.forks == [1]
    fork = tree.nodes[1]
    assert (fork.samples, fork.steps, fork.parent) == (12, 2, 0)  # the shared opening, collapsed
    best, worst = (tree.nodes[i] for i in fork.sides)
    assert (best.reference_share, worst.reference_share) == (1.0, 0.0)
    assert "12 * 4 = 48" in best.text and "12 + 4 = 16" in worst.text
    assert fork.gap == 1.0 and fork.gap_interval[0] > 0
    assert tree.nodes[0].answers == {"18": 6, "14": 6}
    assert tree.majority.share == 0.5 and tree.majority.interval[0] < 0.5 < tree.majority.interval[1]


def test_a_split_that_does_not_change_the_outcome_is_no_fork():
    head = "We need the muffins left. "
    a = [
        text_sample(head + "There are 12 * 4 = 48 muffins. Then 48 - 30 = 18. The answer is 18.")
        for _ in range(4)
    ]
    b = [
        text_sample(head + "Sell first: 30 of them go. The rest is 12 * 4 - 30 = 18. The answer is 18.")
        for _ in range(4)
    ]
    tree = build_tree(a + b)
    assert any(len(n.children) > 1 for n in tree.nodes)  # they do part ways
    assert tree.forks == [] and tree.majority.answer == "18" and tree.majority.correct is True


def test_too_few_samples_a_side_is_no_fork():
    tree = build_tree(split_set(MIN_SIDE - 1, 5))
    assert tree.forks == []


def test_equivalent_wordings_merge_and_a_different_result_does_not():
    key = step_rules.step_key
    assert step_rules.equivalent(
        key("He runs 3*3=<<3*3=9>>9 sprints a week"), key("He runs 3 x 3 = 9 sprints per week.")
    )
    assert not step_rules.equivalent(key("He runs 3*3=9 sprints"), key("He runs 3*60=180 meters"))
    assert not step_rules.equivalent(key("Let me think."), key("He runs 9 sprints."))


def test_short_replies_that_differ_only_in_their_last_mark_merge():
    # The embedded model's "Is 9 a prime number?" tree drew "No" and "No." as two siblings with the
    # same label: two-letter words are no words for the word rule, and the texts differed by a dot.
    q = "Is 9 a prime number? Start your reply with Yes or No."
    texts = ["No", "No.", "No!", "Yes.", "Yes", "The answer is Yes."]
    tree = build_tree([text_sample(t, question=q, reference="no") for t in texts])
    kids = sorted(tree.nodes[c].samples for c in tree.nodes[0].children)
    assert kids == [1, 2, 3], [tree.nodes[c].text for c in tree.nodes[0].children]
    assert not step_rules.equivalent(step_rules.step_key("No."), step_rules.step_key("Now."))


def test_unforked_chains_collapse_and_name_what_they_hold():
    tree = build_tree(split_set(3, 3, tail=5))
    leaf = tree.nodes[tree.nodes[1].children[0]]
    assert leaf.steps == 8 and leaf.text.startswith("There are") and "answer is" in leaf.last
    assert len(tree.nodes) == 4  # question, shared opening, two collapsed branches


def test_entropy_is_reported_at_a_split_for_samples_with_token_entropies():
    s = [Sample("a", ["x", "y"], "1", True, [0.1, 2.0]), Sample("b", ["x", "z"], "2", False, [0.1, 1.0])]
    tree = build_tree(s)
    split = next(n for n in tree.nodes if len(n.children) > 1)
    assert split.entropy == pytest.approx(1.5)


def test_the_four_gsm8k_systems_merge_where_they_compute_the_same(shared_data):
    tree = build_tree(gsm8k_systems(shared_data, 6))  # Toulouse's sheep: two systems write the same steps
    shared = [n for n in tree.nodes if n.samples == 2]
    assert len(shared) == 1 and shared[0].steps == 4 and shared[0].answers == {"260": 2}
    assert tree.nodes[0].answers == {"260": 3, "15": 1}
    assert tree.majority.answer == "260" and tree.majority.correct is True
    assert tree.nodes[0].reference_share == 0.75


def test_twenty_models_thinking_on_one_puzzle_make_one_tree(shared_data):
    from o3viz.importers import import_trace

    paths = sorted((shared_data / "traces" / "thinking_texts").glob("*.txt"))
    assert len(paths) == 20
    traces = [
        import_trace(p, question="Two ropes each burn for 60 minutes; measure 20 minutes.", claims=False)
        for p in paths
    ]
    tree = build_tree(traces)
    assert tree.nodes[0].samples == 20 and sum(tree.nodes[0].answers.values()) == 20
    assert sum(tree.nodes[c].samples for c in tree.nodes[0].children) == 20
    leaves = [n for n in tree.nodes if not n.children]
    assert sum(n.samples for n in leaves) == 20 and all(n.steps >= 1 for n in leaves)
    assert tree.reference is None and tree.forks == []


def test_step_merging_matches_the_hand_aligned_gsm8k_set(shared_data):
    gold = json.loads(GOLD.read_text())
    assert len(gold["questions"]) == 10
    got = merge_scores(gold, str(shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"))
    assert got["pairs"] >= 60 and got["f1"] >= 0.9, got


def test_the_hand_aligned_check_can_fail(shared_data, monkeypatch):
    """Merging on the result alone (no numbers or words asked) falls under the bar on the first
    held-out set (0.83; the development set's ten questions are easy enough that it passes)."""
    monkeypatch.setattr(step_rules, "NUMBERS_MIN", 0.0)
    gold = json.loads((GOLD.parent / "gsm8k_step_alignment_heldout.json").read_text())
    got = merge_scores(gold, str(shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"))
    assert got["f1"] < 0.9, got
