"""Inspect's branch actions through AppTest on the sample GSM8K trace: a selected step offers
"Edit this step" and "What else could come here" with their cost; "Continue from here" runs the
edit on the embedded model in the background and opens the branch, stored linked to its parent;
a resample shows the answers its continuations reached."""

from __future__ import annotations

import shutil

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")
SAMPLE = REPO_ROOT / "sample_traces" / "gsm8k_word_problem.o3trace.json.gz"


@pytest.fixture
def app(tmp_path, monkeypatch):
    shutil.copy(SAMPLE, tmp_path / SAMPLE.name)
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    monkeypatch.setenv("O3VIZ_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    at.switch_page("pages/inspect.py")
    at.run()
    key = next(k for k, e in at.session_state["library"].items() if e.name.startswith("gsm8k_word_problem"))
    at.session_state["inspect_key"], at.session_state["inspect_node"] = key, "step:0:2"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at, key


def test_a_step_offers_both_branch_actions_with_their_cost(app):
    at, _ = app
    labels = [e.label for e in at.expander]
    assert "Edit this step" in labels and "What else could come here" in labels
    assert any("Cost: 1 continuation" in c.value for c in at.caption)
    assert any(b.label == "Continue from here" for b in at.button)


@pytest.mark.model
@pytest.mark.slow
def test_continue_from_here_opens_the_branch_linked_to_its_parent(app):
    at, parent = app
    at.text_area(key=f"branch_text_{parent}_0:2").set_value("This is 24 + 18 = 42 muffins in all.")
    next(b for b in at.button if b.label == "Continue from here").click()
    at.run()
    for _ in range(3):  # the job is followed until it ends, then the page reruns once
        if at.session_state["inspect_key"] != parent:
            break
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    from o3viz.store.store import Store

    branch = at.session_state["inspect_key"]
    assert branch != parent
    t = Store().trace(branch)
    assert t.parent.key == parent and t.parent.step == "0:2" and t.parent.edited.startswith("This is 24")
