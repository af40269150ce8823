"""The Run page end to end: a real (short) run on the embedded model streams, finishes, and joins
the library as one ``run`` row, under the name the page reports, that Inspect can open."""

from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.figures import escape_markdown
from o3viz.paths import REPO_ROOT
from o3viz.store.query import Query
from o3viz.store.store import Store

APP = str(REPO_ROOT / "app.py")


@pytest.mark.model
def test_a_live_run_joins_the_library(tmp_path, monkeypatch):
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))  # no samples: the run is the only trace
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("pages/run.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.text_area(key="run_prompt").set_value("What is 2+3?")
    at.slider(key="run_max_new").set_value(16)
    next(b for b in at.button if b.label == "Run").click()
    deadline = time.time() + 300
    at.run()
    while time.time() < deadline and not any(e.source == "run" for e in at.session_state.library.values()):
        time.sleep(1)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    runs = [e for e in at.session_state.library.values() if e.source == "run"]
    assert len(runs) == 1
    trace = runs[0].trace
    assert 0 < len(trace.tokens) <= 16 and trace.attention is not None
    assert at.session_state.inspect_key == runs[0].key
    finished = [s.value for s in at.success if "Finished" in s.value]
    assert len(finished) == 1
    rows = Store().rows(Query(), ("key", "name", "source"))
    assert rows == [{"key": runs[0].key, "name": runs[0].name, "source": "run"}]  # stored once
    assert runs[0].name.startswith("run 1 · ") and escape_markdown(runs[0].name) in finished[0]


def test_bad_layer_text_is_said_and_blocks_the_run(tmp_path, monkeypatch):
    """The Run page parses the layers with the CLI's parser: bad text is an error, not silently dropped."""
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/run.py").run()
    at.text_input(key="run_layers").set_value("0,x").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Layers kept per head" in e.value and "'0,x'" in e.value for e in at.error)
    assert next(b for b in at.button if b.label == "Run").disabled
    at.text_input(key="run_layers").set_value("0, 15").run()
    assert not at.error and not next(b for b in at.button if b.label == "Run").disabled


@pytest.mark.model
def test_the_run_page_shows_a_status_from_the_click_and_says_when_a_run_hit_its_limit(tmp_path, monkeypatch):
    """Right after Run the page shows Stop and a status (the phase before the first token: loading
    the model, reading the prompt), not nothing; a run cut at its token limit says so when it ends."""
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("pages/run.py").run()
    at.text_area(key="run_prompt").set_value("Write a long story about a cat who learns to sail.")
    at.slider(key="run_max_new").set_value(16)
    next(b for b in at.button if b.label == "Run").click()
    at.run()  # the page's script ends at once: the run is followed in a fragment
    assert not at.exception, [e.value for e in at.exception]
    job = at.session_state.run_job
    (bar,) = at.get("progress")
    label = bar.proto.text
    assert label.endswith(" s") or "stopping" in label  # the seconds tick while a phase lasts
    if job is not None and not job.pieces:
        assert label.startswith(("loading the model", "reading the prompt")), label
    assert any(b.label == "Stop" for b in at.button)
    deadline = time.time() + 300
    while time.time() < deadline and at.session_state.run_job is not None:
        time.sleep(0.5)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    finished = [s.value for s in at.success if "Finished" in s.value]
    assert len(finished) == 1 and escape_markdown("stopped at the limit (16 tokens)") in finished[0], finished
