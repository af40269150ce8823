"""The sentences that say where a number comes from: picker labels, both gradings and their
disagreement, a proxy reader, a run stopped at its token limit."""

from __future__ import annotations

from o3viz import load_trace
from o3viz.analysis.provenance import (
    disagreement_line,
    grading,
    proxy_line,
    trace_label,
)
from o3viz.paths import samples_dir


def test_two_traces_with_one_name_get_different_labels():
    a = {
        "key": "edfd9f42391de36d",
        "name": "thinking.txt",
        "source": "upload",
        "steps": 433,
        "added_at": 1.7e9,
    }
    b = {**a, "key": "8130c0dc21ab2a73", "steps": 266}
    assert trace_label(a) != trace_label(b)
    assert "433 steps" in trace_label(a) and "edfd9f42" in trace_label(a)


def test_disagreement_is_one_sentence_only_where_both_grades_exist_and_differ():
    assert disagreement_line(False, True) == disagreement_line(0, 1)
    assert "disagree" in disagreement_line(1, 0)
    assert (
        disagreement_line(None, 1) is None
        and disagreement_line(0, None) is None
        and disagreement_line(1, 1) is None
    )


def test_pilot_record_5_has_both_gradings_named_and_they_disagree(shared_data):
    from o3viz.importers import import_trace

    g = grading(import_trace(shared_data / "traces/topology_pilot_math500_r1.jsonl", record=4))
    assert (g.source, g.check, g.source_answer) == (0, 1, "0.21") and g.disagree
    lines = g.lines()
    assert lines[0].startswith("Source's grade: wrong") and lines[1] == "o3viz's answer check: correct"
    assert lines[2] == disagreement_line(0, 1)


def test_an_enriched_import_names_its_reader_and_a_run_has_no_proxy_line():
    r1 = load_trace(samples_dir() / "import_r1_math500_3.o3trace.json.gz")
    line = proxy_line(r1)
    assert (
        line.startswith("attention read by SmolLM2-135M") and "not by the model that wrote this trace" in line
    )
    assert proxy_line(load_trace(samples_dir() / "gsm8k_word_problem.o3trace.json.gz")) is None


def test_a_run_stopped_at_its_token_limit_is_not_graded_as_complete():
    g = grading(load_trace(samples_dir() / "solve_math_gsm8k.o3trace.json.gz"))
    assert g.limit == 200 and g.check is None and g.reference == "18"
    assert "stopped at the limit (200 tokens)" in " ".join(g.lines())
