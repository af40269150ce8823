"""bench importance: every record of the Thought Anchors file becomes a trace (40 MATH problems
and 2 agentic-misalignment scenarios), and a labels run keeps its rows after every problem."""

from __future__ import annotations

import argparse
import json

import pytest

from benchmarks import importance as bench


def test_every_record_of_the_thought_anchors_file_becomes_a_labelled_trace(shared_data):
    records = bench._records()
    assert len(records) == 42
    kinds, found, labelled = [], 0, 0
    for rec in records:
        t, pub = bench._trace(rec)
        n = len(rec["chunks_labeled"])
        assert 0.5 * n <= len(t.final.steps) <= n  # chunks found in the solution text become steps
        assert pub.series["counterfactual_importance_kl"]
        kinds.append(t.task.kind)
        found, labelled = found + len(t.final.steps), labelled + n
    assert kinds.count("math") == 40 and kinds[40:] == ["general", "general"]
    assert found >= 0.95 * labelled


def test_a_labels_run_writes_its_rows_after_every_problem(shared_data, tmp_path, monkeypatch):
    from o3viz.trace.importance import ImportanceRecord

    calls = []

    def fake_measure(t, *a, **k):  # stands in for the model: the test is about bookkeeping
        calls.append(1)
        if len(calls) == 3:  # the run dies during the second problem
            raise KeyboardInterrupt
        n = len(t.final.steps)  # the shape of a real receiver record: its nonlocal series and head locality
        return ImportanceRecord(
            "receiver",
            "receiver",
            [0.0] * n,
            series={"receiver_nonlocal": [0.0] * n},
            params={"steps_read": 1},
            info={"receiver_head_locality": [0.5]},
        )

    import o3viz.analysis.importance as imp

    monkeypatch.setattr(imp, "receiver_importance", fake_measure)
    monkeypatch.setattr(imp, "suppression_importance", fake_measure)
    out = tmp_path / "rows.json"
    args = argparse.Namespace(
        problems=42, max_tokens=64, suppression_problems=42, suppression_tokens=64, json=out, resume=False
    )
    with pytest.raises(KeyboardInterrupt):
        bench._labels(args, None, None)
    rows = json.loads(out.read_text())["labels"]["rows"]
    assert {r["problem"] for r in rows} == {0} and len(rows) == len(bench._records()[0]["chunks_labeled"])

    calls.clear()
    calls.extend([1] * 10)  # the second run is not interrupted
    args.problems, args.resume = 3, True
    monkeypatch.setattr(bench, "_report_labels", lambda rows, locality: {"rows": rows})  # bootstraps: slow
    report = bench._labels(args, None, None)
    assert len(calls) == 10 + 2 * 2  # problems 1 and 2 scored (receiver, suppression); 0 kept as it was
    assert sorted({r["problem"] for r in report["rows"]}) == [0, 1, 2]
    assert json.loads(out.read_text())["labels"]["locality"] == [[0.5]] * 3


def test_adaptive_resampling_on_a_long_trace_saves_rollouts_and_keeps_the_step_that_moved_the_answer():
    from benchmarks._importance_budget import BernoulliBackend, simulate
    from o3viz.analysis.importance import Sampling
    from o3viz.analysis.importance.adaptive import Adaptive

    acc = [0.9] * 20 + [0.1] * 20 + [0.95] * 20  # two steps move the answer: 19 (down) and 39 (up)
    backend = BernoulliBackend(acc, name="t")
    s = Sampling(max_tokens=1)
    assert backend.complete("#3", 4, s, first=2) == backend.complete("#3", 6, s)[2:]  # one stream per prefix
    rows = simulate([{"chunks_labeled": [{"accuracy": a} for a in acc]}], 16, Adaptive(k_min=2, k_max=16))
    (row,) = rows
    assert row["fixed"] == 60 * 16 and row["used"] < 0.6 * row["fixed"]
    assert row["fixed_recall_published"] >= 0.2 and row["recall"] >= 0.2  # the rise at 39 is in both top-5s


def test_the_default_adaptive_plan_keeps_most_of_a_fixed_runs_top_steps_on_the_thought_anchors_traces(
    shared_data,
):
    from benchmarks._importance_budget import report, simulate
    from o3viz.analysis.importance.adaptive import Adaptive

    recs = [r for r in bench._records() if r.get("problem")]
    plan = Adaptive(k_min=2, k_max=8)
    out = report(simulate(recs, 8, plan), 8, plan)
    assert out["recall"] >= 0.7 and out["saved"] >= 0.2  # the old default: recall 0.36 at 70% saved
    assert out["saved_at_equal_recall"] > 0  # no uniform run of fewer rollouts does as well


def test_recall_of_the_top_steps_counts_only_the_steps_a_fixed_run_scored():
    from benchmarks._importance_model import top_recall

    one_scored = [0.5, None, None, None, None]
    assert top_recall(one_scored, one_scored, 2) == 1.0  # was 0.5: divided by 2 though only 1 was there
    assert top_recall(one_scored, [None, 0.9, None, None, None], 2) == 0.0
    assert top_recall([None] * 5, [0.1] * 5, 2) is None  # nothing to recall: left out of the mean
    assert top_recall([0.1, 0.9, 0.5, 0.2], [0.9, 0.1, 0.5, 0.2], 2) == 0.5


def test_the_on_model_run_reads_receiver_heads_with_the_gap_it_was_given(monkeypatch):
    import benchmarks._importance_model as onmodel
    import o3viz.analysis.importance as imp
    from o3viz.testing.synthetic import make_trace

    seen = {}

    class Stop(Exception):
        pass

    def receiver(t, model, tok, **kw):
        seen.update(kw)
        raise Stop

    monkeypatch.setattr(onmodel, "_capture", lambda *a: make_trace(4, seed=1))
    monkeypatch.setattr(imp, "receiver_importance", receiver)
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    args = parser.parse_args(["--model-gap", "2"])
    with pytest.raises(Stop):
        onmodel.collect(args, None, None)
    assert seen.get("gap") == 2  # was the paper's 4: --model-gap was recorded but never passed
