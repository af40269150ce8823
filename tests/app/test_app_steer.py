"""The Run page's steering: sentences of the prompt are offered to mark, a typed span not in the
prompt (or there twice) is said in one line and blocks the pair, and "Run with and without
steering" runs both on the embedded model, adds both to the library and opens them in Compare with
the answers and the marked spans' attention."""

from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")
PROMPT = "Answer with one word. Say yes. Say yes. What is the capital city of France?"
PAIR_LABEL = "Run with and without steering"


def _run_page(tmp_path, monkeypatch, timeout: int = 60) -> AppTest:
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))  # no samples: the pair is the only traces
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.run()
    at.switch_page("pages/run.py").run()
    at.text_area(key="run_prompt").set_value(PROMPT).run()
    return at


def _pair_button(at: AppTest):
    return next(b for b in at.button if b.label == PAIR_LABEL)


def test_marking_offers_the_sentences_and_bad_spans_are_one_line(tmp_path, monkeypatch):
    at = _run_page(tmp_path, monkeypatch)
    assert not at.exception, [e.value for e in at.exception]
    ms = at.multiselect(key="run_steer_sentences")
    assert ms.options == [
        "0: Answer with one word.",
        "1: Say yes.",
        "2: Say yes.",
        "3: What is the capital city of France?",
    ]
    assert _pair_button(at).disabled  # nothing marked yet
    at.text_input(key="run_steer_text").set_value("purple").run()
    assert any("does not occur in the prompt" in e.value for e in at.error) and _pair_button(at).disabled
    at.text_input(key="run_steer_text").set_value("Say yes.").run()
    assert any("occurs 2 times" in e.value for e in at.error)
    at.number_input(key="run_steer_occ").set_value(2).run()
    assert not at.error and not _pair_button(at).disabled
    at.text_input(key="run_steer_heads").set_value("1-2").run()
    assert any("steer heads" in e.value for e in at.error) and _pair_button(at).disabled


@pytest.mark.model
def test_run_with_and_without_steering_opens_both_in_compare(tmp_path, monkeypatch):
    at = _run_page(tmp_path, monkeypatch, timeout=300)
    at.multiselect(key="run_steer_sentences").set_value([0]).run()
    at.slider(key="run_max_new").set_value(16).run()
    _pair_button(at).click()
    deadline = time.time() + 600
    at.run()
    while (
        time.time() < deadline
        and len([e for e in at.session_state.library.values() if e.source == "run"]) < 2
    ):
        time.sleep(1)
        at.run()
    at.run()  # both ended: the page opens Compare
    assert not at.exception, [e.value for e in at.exception]
    runs = [e for e in at.session_state.library.values() if e.source == "run"]
    assert len(runs) == 2
    by_key = {e.key: e.trace for e in runs}
    a, b = by_key[at.session_state.compare_a], by_key[at.session_state.compare_b]
    assert a.final.attention.steer is None and b.final.attention.steer.alpha == 0.01
    assert [s.label for s in b.final.attention.steer.spans] == ["segment: sentence 0"]
    assert at.session_state.steer_pair == {}  # handed to Compare (AppTest does not follow st.switch_page)
    at.switch_page("pages/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("(steered) answered" in m.value for m in at.markdown), "Compare shows both answers"
    titles = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("marked spans" in spec for spec in titles)
