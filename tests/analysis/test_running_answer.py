"""Issue 53: stated answers on real traces (GSM8K model solutions, DeepSeek-R1 and distill MATH-500
traces), the running answer that combines them with forced ones, the per-trace figures, the
dataset figures, and the refinement that finds the first correct point from every K-th probe."""

from __future__ import annotations

import json
import random

import pytest

from o3viz.analysis.answer_dataset import answer_dataset_figures
from o3viz.analysis.answer_figures import first_correct, refine_first_correct, trace_answer_figures
from o3viz.analysis.running_answer import (
    add_stated,
    running_answer,
    same_answer,
    stated_answer,
    stated_record,
)
from o3viz.importers import import_trace
from o3viz.importers.bulk import fan_out
from o3viz.text.answers import answers_equivalent
from o3viz.trace import Round, Step, Task, Trace
from o3viz.trace.answers import AnswerRecord

pytestmark = [pytest.mark.light]

TOPOLOGY = (
    "topology_math500_deepseek_r1",
    "topology_pilot_math500_r1",
    "topology_pilot_math500_qwen7b",
    "topology_pilot_math500_llama8b",
)


def _trace(texts: list[str], reference: str | None = "4") -> Trace:
    steps, at = [], 0
    for i, t in enumerate(texts):
        steps.append(Step(index=i, start=at, end=at + len(t), text=t))
        at += len(t) + 1
    return Trace(
        task=Task(question="What is x?", reference=reference),
        rounds=[Round(text=" ".join(texts), steps=steps)],
    )


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("So for 196 the count is (2+1)*(2+1) = 3*3 = 9.", "9"),
        ("A: 224", "224"),
        ("So the answer is \\boxed{\\frac{14}{3}}.", "\\frac{14}{3}"),
        ("Thus $\\theta = \\frac{\\pi}{2}$.", "\\frac{\\pi}{2}"),
        ("So she makes 9 * 2 = $<<9*2=18>>18 every day", "18"),
        ("That's 9.", "9"),
        ("Therefore, the total is $18.", "18"),
    ],
)
def test_a_step_that_concludes_states_its_answer_at_its_position(text, answer):
    found = stated_answer(text)
    assert found is not None and found[0] == answer
    assert text[found[1] : found[1] + len(answer)] == answer


@pytest.mark.parametrize(
    "text",
    [
        "Step 2: 196 = 14^2 = 2^2 * 7^2.",  # no concluding word: an intermediate result
        "She has 16 - 3 = 13 eggs left, and she sells them.",  # a number mid-sentence
        "So is the answer 9?",  # a question
        "So indeed 196 = 2^2 * 7^2.",  # a product, not one answer
        "The total cost is 3 + 4.",  # an expression left to compute
        "Wait, maybe the answer is different?",
    ],
)
def test_intermediate_numbers_and_questions_state_no_answer(text):
    assert stated_answer(text) is None


def _gsm8k(shared_data, records: int) -> list[Trace]:
    lines = (shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl").read_text().splitlines()[:records]
    return [import_trace(sub, claims=False) for line in lines for _, sub in fan_out(json.loads(line))]


def test_gsm8k_final_stated_answer_agrees_with_the_graded_answer(shared_data):
    traces = _gsm8k(shared_data, 100)
    assert len(traces) == 400
    for graded in (True, False):  # with the graded-answer rule, and from the text's statements alone
        agree = 0
        for t in traces:
            rec = stated_record(t.final, t.task.reference, graded=graded)
            last = next((a for a in reversed(rec.answers) if a is not None), None)
            g = t.final.answer
            agree += (last is None and g is None) or (
                last is not None and g is not None and (same_answer(last, g) or answers_equivalent(last, g))
            )
        assert agree / len(traces) >= 0.99, (graded, agree)


def test_stated_answers_are_graded_like_the_answer_check(shared_data):
    for t in _gsm8k(shared_data, 10):
        rec = stated_record(t.final, t.task.reference)
        last = max((i for i, a in enumerate(rec.answers) if a is not None), default=None)
        check = next(c for c in t.final.checks if c.kind == "answer")
        if last is not None and check.verdict in ("correct", "wrong"):
            assert rec.correct[last] == (check.verdict == "correct")
        assert all((a is None) == (c is None) for a, c in zip(rec.answers, rec.correct, strict=True))


def test_r1_figures_on_real_traces(shared_data):
    path = shared_data / "traces" / "topology_math500_deepseek_r1.jsonl"
    t = import_trace(path, record=14, claims=False)
    f = trace_answer_figures(t)
    series = running_answer(t.final, t.task.reference)
    first = int(f.first_correct_step.split(":")[-1])
    assert series[first].correct is True and all(s.correct is not True for s in series[:first])
    # by hand it never loses the right answer: its old flips were intermediate values (issue 63)
    assert f.flips_right_to_wrong == 0 and f.flips_wrong_to_right == 0
    assert f.final_correct is True and f.overthinking == "harmless" and f.unit == "chars"
    assert 0 < f.first_correct_fraction < f.convergence_fraction <= 1
    assert f.tokens_estimated and f.tokens_after_first_correct > 0  # from the file's token count
    wrong = import_trace(path, record=18, claims=False)  # reference 28, answers 56
    g = trace_answer_figures(wrong)
    assert g.final_correct is False and g.overthinking in ("none", "harmful")


def test_no_reference_keeps_the_answers_ungraded():
    t = _trace(["So x = 4.", "So the answer is 5."], reference=None)
    add_stated(t)
    rec = t.final.answers[0]
    assert rec.answers == ["4", "5"] and rec.correct == [None, None]
    f = trace_answer_figures(t)
    assert f.first_correct_step is None and f.final_correct is None and f.overthinking == "none"
    assert f.convergence_step == "step:0:1"


def test_right_then_wrong_at_the_end_is_harmful_overthinking():
    f = trace_answer_figures(_trace(["So x = 4.", "Hmm.", "So the answer is 5."]))
    assert f.first_correct_step == "step:0:0" and f.overthinking == "harmful"
    assert f.flips_right_to_wrong == 1 and f.flips_wrong_to_right == 0 and f.final_correct is False
    assert f.right_at_convergence is False and f.saved_at_convergence is None  # no token count


def test_a_forced_answer_is_the_running_answer_where_probed():
    t = _trace(["Let me think.", "Hmm.", "So the answer is 5."])
    forced = AnswerRecord(
        "forced:x", "forced", [None, "4", None], [None, 19, None], [None, True, None], [None, 0.7, None]
    )
    add_stated(t)
    t.final.answers.append(forced)
    series = running_answer(t.final, "4")
    assert [(s.answer, s.source) for s in series] == [(None, None), ("4", "forced"), ("5", "stated")]
    assert series[1].p_reference == 0.7
    f = trace_answer_figures(t)
    assert f.first_correct_step == "step:0:1" and f.overthinking == "harmful"


def _truths(shared_data) -> list[list[bool | None]]:
    """Real runs' correctness series: the carried stated answers of every R1 / distill trace."""
    out = []
    for name in TOPOLOGY:
        path = shared_data / "traces" / f"{name}.jsonl"
        for i in range(len(path.read_text().splitlines())):
            t = import_trace(path, record=i, claims=False)
            out.append([s.correct for s in running_answer(t.final, t.task.reference)])
    return out


def test_refinement_finds_the_same_first_correct_point_as_probing_every_prefix(shared_data):
    runs = _truths(shared_data)
    rng = random.Random(0)
    for _ in range(20):  # synthetic runs too: wrong, then right, with flips in long stretches
        n, k = rng.randint(5, 400), rng.randint(1, 5)
        cuts = sorted(rng.sample(range(n), k))
        runs.append([(sum(c <= i for c in cuts) % 2 == 1) for i in range(n)])
    assert len(runs) >= 20 and sum(first_correct(r) is not None for r in runs) >= 20
    probes = full = 0
    for truth in runs:
        for every in (2, 4, 8):
            calls: list[int] = []

            def probe(bs, truth=truth, calls=calls):
                calls.extend(bs)
                return [truth[b] for b in bs]

            got = refine_first_correct(len(truth), probe, lambda r: r, every)
            assert len(calls) == len(set(calls))  # no boundary probed twice
            assert min((b for b, r in got.items() if r), default=None) == first_correct(truth)
            probes, full = probes + len(calls), full + len(truth)
    assert probes < full  # it probed fewer boundaries than every prefix


def test_dataset_figures_per_dataset_and_model_with_intervals_and_keys(shared_data):
    items = []
    for name in TOPOLOGY[:2]:
        path = shared_data / "traces" / f"{name}.jsonl"
        for i in range(len(path.read_text().splitlines())):
            t = import_trace(path, record=i, claims=False)
            items.append((f"{name}:{i}", name, t.provenance.model_id, t))
    groups = answer_dataset_figures(items)
    assert [g.dataset for g in groups] == list(TOPOLOGY[:2])
    g = groups[0]
    assert g.traces == 20 and g.early_correct.n == 20
    assert g.early_correct.low <= g.early_correct.value <= g.early_correct.high
    assert len(g.early_correct.keys) == round(g.early_correct.value * 20)
    assert 0 < g.convergence.value <= 1 and g.convergence.low <= g.convergence.value <= g.convergence.high
    assert g.convergence.median is not None and g.saved_tokens.n > 0 and g.flip_rate.n == 20
