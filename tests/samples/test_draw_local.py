"""Sampling on the embedded model: N continuations of one prefill decoded as one batch become full
traces (tokens with entropies, steps, answers, grading against the task's reference); a stop keeps
the finished samples and says so."""

from __future__ import annotations

import pytest

from o3viz.samples.draw import draw_local
from o3viz.samples.request import SampleRequest
from o3viz.samples.tree import build_tree

pytestmark = [pytest.mark.model]


@pytest.fixture(scope="module")
def embedded():
    from o3viz.model import load_model

    return load_model(None)


def test_three_samples_of_a_task_are_full_traces_with_entropies(embedded):
    model, tok = embedded
    drawn = draw_local(model, tok, SampleRequest(task_id="gsm8k:3", n=3, max_new_tokens=24, temperature=1.0))
    assert len(drawn.traces) == 3 and not drawn.stopped
    texts = [t.final.text for t in drawn.traces]
    assert len(set(texts)) > 1  # sampled, not three copies
    for t in drawn.traces:
        rnd = t.final
        assert t.task.reference == "540" and 0 < len(rnd.tokens) <= 24
        assert all(x.entropy is not None and x.entropy >= 0 and x.logprob <= 0 for x in rnd.tokens)
        assert "".join(x.text for x in rnd.tokens) == rnd.text and rnd.steps
        assert any(c.kind == "answer" for c in rnd.checks)  # graded against the reference
    tree = build_tree(drawn.traces)
    assert tree.nodes[0].samples == 3 and tree.nodes[0].entropy is not None


def test_a_free_prompt_with_a_reference_is_graded_so_its_tree_can_fork(embedded):
    model, tok = embedded
    req = SampleRequest(prompt="What is 2 + 3?", reference="5", n=2, max_new_tokens=8, temperature=1.0)
    drawn = draw_local(model, tok, req)
    for t in drawn.traces:
        assert t.task.reference == "5"
        assert any(c.kind == "answer" for c in t.final.checks)  # graded against the reference
    assert build_tree(drawn.traces).reference == "5"


def test_a_stop_keeps_the_finished_samples(embedded):
    model, tok = embedded
    seen = []
    req = SampleRequest(prompt="Count to three.", n=3, max_new_tokens=6, batch=1)
    drawn = draw_local(
        model, tok, req, on_progress=lambda d, t, n: seen.append(d), should_stop=lambda: seen[-1] >= 2
    )
    assert drawn.stopped and len(drawn.traces) == 2 and drawn.requested == 3
    assert [t.info["sample"]["index"] for t in drawn.traces] == [0, 1]
