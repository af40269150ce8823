"""The verifier benchmark's readers and metrics (``benchmarks/_verifiers_data.py``): the labelled
solutions it reads from the shared files, ProcessBench's F1, the stratified sample, and a verifier
that abstains on every step counted as a miss."""

from __future__ import annotations

import pytest

from benchmarks._verifiers_data import Item, accuracy, f1, interval, mr_gsm8k, prm800k, sample
from benchmarks.verifiers import _preds
from o3viz.verify.verifiers import Judgement

ITEMS = [Item("a", ["x", "y"], 1), Item("b", ["x", "y"], 0), Item("c", ["x"], -1), Item("d", ["x"], -1)]


def test_f1_is_the_harmonic_mean_of_the_two_accuracies():
    preds = [1, 1, -1, 0]  # one of two errors found exactly; one of two correct ones left alone
    assert accuracy(ITEMS, preds, errors=True) == (0.5, 2)
    assert accuracy(ITEMS, preds, errors=False) == (0.5, 2)
    assert f1(ITEMS, preds) == pytest.approx(0.5)
    lo, hi = interval(ITEMS, preds, f1, reps=200)
    assert 0 <= lo <= hi <= 1


def test_a_verifier_that_abstains_everywhere_is_a_miss_not_a_no_error():
    judged = [
        Judgement(["unsure", "unsure"]),
        Judgement(["ok", "wrong"]),
        Judgement(["ok"]),
        Judgement([None]),
    ]
    assert _preds(judged) == [-2, 1, -1, -2]


def test_the_sample_takes_both_classes_alike():
    many = [Item(str(i), ["x"], 0) for i in range(30)] + [Item(f"c{i}", ["x"], -1) for i in range(3)]
    got = sample(many, 10, seed=1)
    assert len(got) == 10 and sum(i.first < 0 for i in got) == 3  # all the correct ones there are
    assert sample(many, None) == many


def test_the_shared_files_read_as_documented(shared_data):
    root = shared_data / "process_labels"
    if not (root / "mr_gsm8k_claude_eval_results.json").exists():
        pytest.skip("process labels not in the shared data")
    mr = mr_gsm8k(root / "mr_gsm8k_claude_eval_results.json")
    assert len(mr) == 326 and all(0 <= i.first < len(i.steps) for i in mr)
    prm = prm800k(root / "prm800k_phase1_test_stepwise_critic.jsonl.gz")
    assert len(prm) == 1784 and sum(i.first < 0 for i in prm) == 90
    assert all(i.first == len(i.steps) - 1 for i in prm if i.first >= 0)


def test_processbench_is_scored_like_prm800k(shared_data, capsys):
    from benchmarks._verifiers_data import processbench
    from benchmarks.verifiers import report

    root = shared_data / "process_labels"
    if not (root / "processbench_gsm8k.json").exists():
        pytest.skip("ProcessBench not in the shared data")
    for split, n, wrong in (("gsm8k", 400, 207), ("math", 1000, 594)):
        items = processbench(root / f"processbench_{split}.json")
        assert len(items) == n and sum(i.first >= 0 for i in items) == wrong
        assert all(-1 <= i.first < len(i.steps) for i in items)
    report("claims", "processbench_gsm8k", ITEMS, [Judgement(["ok", "wrong"])] * len(ITEMS), seed=0)
    out = capsys.readouterr().out
    assert "processbench_gsm8k_f1.claims:" in out and "processbench_gsm8k_correct_acc.claims:" in out
