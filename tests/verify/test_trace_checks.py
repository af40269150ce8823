"""Every trace with text gets claim checks, however it was made: a single-round run's text, a
trace file saved without them, and a capture on a real (tiny) model."""

from __future__ import annotations

import pytest

from o3viz.app.library import load_file
from o3viz.trace import Round, Task, Trace
from o3viz.trace.io import trace_bytes
from o3viz.verify.trace_checks import claim_checks, ensure_claim_checks


def test_a_free_prompt_runs_wrong_product_is_a_wrong_claim():
    checks, status = claim_checks(Round(text="17*23 = 381"))
    assert status == "ok"
    assert [(c.kind, c.verdict, c.expression, c.computed) for c in checks] == [
        ("claim", "wrong", "17*23", "391")
    ]


def test_a_saved_trace_without_checks_gets_them_when_opened():
    trace = Trace(Task("What is 17*23?"), [Round(text="17*23 = 381")])
    entry = load_file("old.o3trace.json", trace_bytes(trace))
    checks = entry.trace.final.checks
    assert [(c.kind, c.verdict) for c in checks] == [("claim", "wrong")]
    assert ensure_claim_checks(entry.trace) == 0  # checked once, not twice


def test_rounds_already_checked_or_without_text_are_left_alone():
    trace = Trace(Task("q"), [Round(text=""), Round(index=1, text="2+2=4", info={"claim_checker": "ok"})])
    assert ensure_claim_checks(trace) == 0 and all(r.checks == [] for r in trace.rounds)


@pytest.mark.model
def test_capture_checks_the_claims_of_its_round():
    from o3viz.run.capture import capture
    from o3viz.testing.builders import make_tiny_llama

    model, tok = make_tiny_llama(num_layers=2, max_positions=256)
    from o3viz.run.request import RunRequest

    rnd = capture(model, tok, RunRequest(prompt="What is 17*23?", max_new_tokens=4)).final
    assert rnd.info["claim_checker"] == "ok"
    assert rnd.checks == claim_checks(rnd)[0]
