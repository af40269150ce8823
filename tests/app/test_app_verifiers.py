"""Inspect with two verifiers' verdicts on one trace (issue 42), through AppTest: the details panel
lists both verdicts on the selected step, and the switch moves the first wrong step from the
checks to a verifier."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.figures import escape_markdown
from o3viz.paths import REPO_ROOT
from o3viz.testing.builders import small_trace
from o3viz.trace.ids import make_id
from o3viz.verify.verifiers import ClaimVerifier, add_verdicts, make_verifier
from o3viz.view import verifier_rows

pytestmark = [pytest.mark.model]

APP = str(REPO_ROOT / "app.py")


@pytest.fixture
def judged(tmp_path, monkeypatch):
    from o3viz.testing.prm import save_tiny_prm

    trace = small_trace()
    add_verdicts(trace, ClaimVerifier())
    prm = make_verifier("prm", model=str(save_tiny_prm(tmp_path / "tag", "tag")), device="cpu")
    add_verdicts(trace, prm)
    samples = tmp_path / "samples"
    samples.mkdir()
    trace.save(samples / "v_judged.o3trace.json")
    monkeypatch.setenv("O3VIZ_SAMPLES", str(samples))
    return trace


def _view_data(at: AppTest) -> dict:
    from pages.common.trace_view import published

    return published(json.loads(at.get("bidi_component")[0].proto.json)["url"])


def _markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_two_verifiers_show_side_by_side_and_the_switch_moves_the_first_wrong_step(judged):
    prm = judged.final.verdicts[1]
    assert prm.first_wrong is not None  # the tiny random PRM finds a wrong step; the checker none
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/inspect.py")
    at.run()
    lib = at.session_state["library"]
    key = next(k for k, e in lib.items() if e.name.startswith("v_judged"))
    at.session_state["inspect_key"] = key
    at.session_state["inspect_node"] = make_id("step", judged.final.index, prm.first_wrong)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    # the view's details (drawn in the browser, beside the map) list both verdicts on the step;
    # the server's panel below does not repeat them
    rows = verifier_rows(_view_data(at), make_id("step", judged.final.index, prm.first_wrong))
    assert {r["verifier"] for r in rows} == {"claims", prm.verifier}
    text = _markdown(at)
    assert "**Verifiers**" not in text
    assert "judged it wrong" not in text  # the checks mark the first wrong step by default
    at.session_state[f"verifier_{key}"] = prm.verifier
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert escape_markdown(f"{prm.verifier} judged it wrong") in _markdown(at)


def test_the_headers_first_wrong_step_button_follows_the_switch(judged):
    """The header's "First wrong step" button names the step of the verifier the switch picks (it
    stayed on the checks' step while the map's ring moved to the verifier's)."""
    prm = judged.final.verdicts[1]
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/inspect.py")
    at.run()
    key = next(k for k, e in at.session_state["library"].items() if e.name.startswith("v_judged"))
    at.session_state["inspect_key"] = key
    at.session_state[f"verifier_{key}"] = prm.verifier
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    button = next(b for b in at.button if b.key == "go_first_wrong")
    assert button.label == f"First wrong step: {prm.first_wrong}"
    assert button.help.startswith(f"{prm.verifier} judged it wrong")  # (the label stays short)
