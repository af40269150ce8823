"""Labelled datasets as traces with labels: each source step's verdict reaches its o3viz steps,
a PRM800K tree's shared prefix is labelled once, and the real files read (when present)."""

from __future__ import annotations

import pytest

from o3viz.importers.process_labels import label_format, labelled_records


def _row(prefix, step, rating):
    return {"instruction": "Find x.", "responses": prefix, "next_response": step, "rating": rating}


def test_a_prm800k_tree_becomes_one_trace_per_leaf_and_each_rating_counts_once():
    rows = [
        _row([], "Let x be 2.", 1),
        _row(["Let x be 2."], "Then x + 1 = 4.", -1),
        _row(["Let x be 2."], "Then x + 1 = 3.", 1),
        _row(["Let x be 2.", "Then x + 1 = 3."], "So x = 2.", 0),
    ]
    recs = list(labelled_records(rows))
    assert len(recs) == 2  # two leaves: ...= 4 and ... so x = 2
    labels = sorted((r.trace.final.steps[s].text, v, f) for r in recs for s, v, f in r.labels)
    assert labels == [
        ("Let x be 2.", "correct", False),  # once, though both traces hold it
        ("So x = 2.", "correct", False),  # rating 0 (neutral) is not an error
        ("Then x + 1 = 3.", "correct", False),
        ("Then x + 1 = 4.", "wrong", True),
    ]


def test_a_file_that_holds_no_step_labels_is_refused_in_one_line():
    with pytest.raises(ValueError, match="--labels reads MR-GSM8K"):
        label_format([{"question": "q", "answer": "4"}])


def test_the_real_files_read(shared_data):
    folder = shared_data / "process_labels"
    mr = list(labelled_records(folder / "mr_gsm8k_claude_eval_results.json", limit=20))
    assert len(mr) == 20 and all(sum(f for _, _, f in r.labels) == 1 for r in mr)
    raw = list(labelled_records(folder / "prm800k_original_format_examples.jsonl"))
    assert len(raw) == 4 and all(r.labels for r in raw)
    rows = list(labelled_records(folder / "prm800k_phase1_test_stepwise_critic.jsonl.gz", limit=5))
    assert len(rows) == 5 and any(v == "wrong" for r in rows for _, v, _ in r.labels)
