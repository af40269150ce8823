"""Every real trace in ../shared/data/traces imports: all JSONL records, the thought-anchors file and
the 20 thinking texts, with sane steps, answers that agree with the files' own grading, and
provenance with the licence read from the data README."""

from __future__ import annotations

import json

import pytest

from o3viz.importers import import_trace
from o3viz.importers.survey import AnswerSurvey, iter_sources, survey_answers
from o3viz.trace import load_trace, trace_bytes

MIN_AGREEMENT = 0.88  # measured 100/110; the 10 disagreements are notation the files' grader missed


@pytest.fixture(scope="module")
def survey(request) -> AnswerSurvey:
    from o3viz.paths import data_dir

    SHARED_DATA = data_dir()

    if not (SHARED_DATA / "traces").is_dir():
        pytest.skip("../shared/data/traces is absent (it sits beside the project in CI and dev sessions)")
    return survey_answers(SHARED_DATA / "traces", claims=False)


def test_every_record_and_text_file_imports(survey, shared_data):
    sources = iter_sources(shared_data / "traces")
    assert len(survey.traces) == len(sources) == 70 + 42 + 20


def test_steps_are_sane(survey):
    for key, t in survey.traces.items():
        rnd = t.final
        assert rnd.steps, key
        assert all(rnd.text[s.start : s.end] == s.text and s.text.strip() for s in rnd.steps), key
        assert [s.index for s in rnd.steps] == list(range(len(rnd.steps))), key
        assert all(s.parent is None or 0 <= s.parent < s.index for s in rnd.steps), key
        assert sum(s.kind == "final" for s in rnd.steps) <= 1, key
        assert all(s.type is not None for s in rnd.steps), key
        assert all((s.token_start, s.token_end) == (0, 0) for s in rnd.steps) and rnd.tokens == [], key


def test_answer_verdict_agrees_with_is_correct(survey):
    rate = survey.agree / survey.graded
    print(f"\nagreement with is_correct: {survey.agree}/{survey.graded} = {rate:.3f}")
    for row in survey.disagreements:
        print("  disagreement:", row)
    assert survey.graded == 109  # of 110: qwen7b's record 10 was cut off at 32,768 tokens, not graded
    assert rate >= MIN_AGREEMENT
    # every disagreement so far is one where we call a notation variant correct and the file does not
    assert all("we say correct" in row for row in survey.disagreements)


def test_thought_anchors_answers_equal_the_files_extracted_answers(survey, shared_data):
    lines = (shared_data / "traces" / "thought_anchors_math_base_solutions.jsonl").read_text().splitlines()
    for n, line in enumerate(lines):
        stated = json.loads(line)["base_solution"].get("answer")
        if stated is not None:
            assert survey.traces[f"thought_anchors_math_base_solutions.jsonl:{n}"].final.answer == stated


def test_every_math_record_has_an_answer_and_a_reference(survey):
    for key, t in survey.traces.items():
        if key.startswith("topology_"):
            assert t.task.kind == "math" and t.task.reference and t.task.question, key
        if key.startswith("topology_math500_deepseek_r1"):
            assert t.final.answer is not None, key


def test_thinking_texts_never_invent_an_answer(survey):
    for key, t in survey.traces.items():
        if key.endswith(".txt"):
            assert t.final.answer is None or len(t.final.answer) < 80, key
            assert t.task.kind == "general"


def test_provenance_names_file_record_format_model_and_licence(survey):
    t = survey.traces["topology_math500_deepseek_r1.jsonl:3"]
    src = t.provenance.source
    assert src["file"] == "topology_math500_deepseek_r1.jsonl" and src["record"] == 4
    assert (src["format"], src["source_model"], src["license"]) == ("jsonl", "deepseek-reasoner", "MIT")
    assert "LLM-Reasoning-Trace-Topology" in src["origin"]
    assert survey.traces["deepseek_r1.txt"].provenance.source["license"] == "CC0"
    ta = survey.traces["thought_anchors_math_base_solutions.jsonl:0"].provenance.source
    assert ta["license"] == "MIT" and ta["source_model"] == "deepseek-r1-distill-llama-8b"


def test_claims_run_on_a_real_r1_trace_and_point_at_steps(shared_data):
    pytest.importorskip("o3viz.verify.claims.check")
    t = import_trace(shared_data / "traces" / "topology_math500_deepseek_r1.jsonl", record=3)
    claims = [c for c in t.final.checks if c.kind == "claim"]
    assert claims and all(c.step is None or 0 <= c.step < len(t.steps) for c in claims)
    assert all(t.final.text[c.span[0] : c.span[1]] for c in claims)
    assert load_trace(trace_bytes(t)) == t
