"""The notebook API takes keyword settings: ``capture``, ``solve`` and ``execute`` build the
``RunRequest`` themselves (issue 36: ``capture(model, tok, prompt, max_new_tokens=96)`` raised a
TypeError after the request object landed)."""

from __future__ import annotations

import pytest

import o3viz
from o3viz.errors import ModelLoadError, UsageError
from o3viz.run.request import RunRequest, build_request

pytestmark = [pytest.mark.model]


@pytest.fixture(scope="module")
def default_model():
    try:
        return o3viz.load_model()
    except ModelLoadError as exc:
        pytest.skip(f"default model unavailable: {exc}")


def test_capture_takes_keyword_settings_on_the_real_model(default_model):
    model, tok = default_model
    trace = o3viz.capture(model, tok, "What is 17*23?", max_new_tokens=8)
    assert 1 <= len(trace.final.tokens) <= 8


def test_execute_and_solve_take_keyword_settings(default_model):
    model, tok = default_model
    trace = o3viz.execute(model, tok, "What is 2+3?", max_new_tokens=4, daa="observe")
    assert len(trace.final.tokens) <= 4
    solved = o3viz.solve(model, tok, "What is 2+3?", max_new_tokens=4, rounds=1)
    assert len(solved.rounds) == 1 and len(solved.final.tokens) <= 4


def test_keyword_settings_lay_over_a_request_and_strings_name_modes():
    base = RunRequest(prompt="p", max_new_tokens=50, seed=3)
    req = build_request(base, max_new_tokens=8, daa="allocate")
    assert (req.max_new_tokens, req.seed, req.daa.mode, req.prompt) == (8, 3, "allocate", "p")
    assert base.max_new_tokens == 50  # the caller's request is not changed
    assert build_request(base) is base
    assert build_request("q", task_id=None).prompt == "q"


def test_an_unknown_setting_is_one_line_naming_the_real_ones():
    with pytest.raises(
        UsageError, match="unknown run setting max_tokens; the settings are: .*max_new_tokens"
    ):
        o3viz.capture(None, None, "What is 17*23?", max_tokens=8)
    with pytest.raises(UsageError, match="a prompt or a RunRequest"):
        build_request(42)
