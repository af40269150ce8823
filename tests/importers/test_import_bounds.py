"""Imports of huge or pathological texts: linear work, bounded memory, an early one-line refusal
when the trace could not be loaded back, and never a written file that ``info`` refuses."""

from __future__ import annotations

import json
import resource

import pytest

from o3viz.errors import TraceError
from o3viz.importers import import_trace
from o3viz.trace import load_trace
from o3viz.trace.core import MAX_STEPS


def test_50k_tiny_steps_import_and_load_back(tmp_path):
    out = import_trace("\n".join("1+1=2" for _ in range(50_000))).save(tmp_path / "tiny.o3trace.json.gz")
    trace = load_trace(out)
    assert len(trace.final.steps) == 50_000
    assert "not checked" in trace.final.info["claim_checker"]  # the checker's own bound says so
    claims = [c for c in trace.final.checks if c.kind == "claim"]
    assert claims and all(c.verdict == "correct" for c in claims)


def test_more_steps_than_a_trace_holds_is_refused_early_and_says_which_limit():
    with pytest.raises(TraceError, match=f"over the limit of {MAX_STEPS} steps"):
        import_trace("\n".join("1+1=2" for _ in range(MAX_STEPS + 10)))


def test_a_20mb_text_of_tiny_lines_is_refused_in_bounded_memory():
    text = "\n".join("1+1=2" for _ in range(3_300_000))  # 19.8 MB
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(TraceError, match=f"more than {MAX_STEPS} steps"):
        import_trace(text)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 500, grown_mb  # was 1.4 GB (every step built before the refusal)


def test_a_1mb_record_key_imports_with_a_capped_name_and_model_and_a_note(tmp_path):
    from o3viz.importers.bulk import ImportOptions
    from o3viz.importers.parallel import import_dataset
    from o3viz.store.store import Store

    key = "k" * 1_000_000
    rec = {"question": "What is 2 + 2?", key: {"response": "2 + 2 = 4. The answer is 4."}}
    path = tmp_path / "big_key.jsonl"
    path.write_text(json.dumps(rec) + "\n" + json.dumps({**rec, "question": "Q2"}) + "\n")
    store = Store(tmp_path / "store")
    rep = import_dataset(path, store, ImportOptions("big"), workers=0)
    assert rep.traces == 2, rep.errors
    row = store.row(rep.keys[0])
    assert len(row["name"]) < 150 and len(row["model"]) <= 200
    trace = store.trace(rep.keys[0])
    assert len(trace.provenance.model_id) <= 200 and len(trace.task.id or "") < 300


def test_a_1mb_model_name_and_question_are_cut_with_a_note_saying_so():
    rec = {"model": "m" * 1_000_000, "question": "q " * 500_000, "response": "2 + 2 = 4. So 4."}
    trace = import_trace(json.dumps(rec).encode())
    assert len(trace.provenance.model_id) == 200 and trace.provenance.model_id.endswith("…")
    assert len(trace.task.question) <= 32_000
    notes = trace.info["cut_at_import"]
    assert any(n.startswith("model: 1,000,000 characters, cut to 200") for n in notes)
    assert any(n.startswith("question: ") for n in notes)


def test_a_trace_whose_rounds_together_pass_the_step_limit_is_refused_in_one_line():
    from o3viz.testing.synthetic import make_trace
    from o3viz.trace.codec import MAX_TOTAL_STEPS
    from o3viz.trace.core import Trace

    d = make_trace(5, seed=1).to_dict()
    step = d["rounds"][0]["steps"][0]
    per_round = MAX_TOTAL_STEPS // 8 + 1  # each round far within MAX_STEPS, the sum over
    d["rounds"] = [{**d["rounds"][0], "index": i, "steps": [step] * per_round} for i in range(8)]
    with pytest.raises(TraceError) as exc:
        Trace.from_dict(d)
    msg = str(exc.value)
    assert "\n" not in msg and f"more than the limit {MAX_TOTAL_STEPS}" in msg and "over all rounds" in msg
