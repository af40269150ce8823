"""Issue 35, finding 8 on the pages (AppTest): a branch opened in Inspect reads as a branch (where
it forked, the parent's steps before the fork greyed and numbered as in the parent, "Open parent",
"Compare with parent"), and Compare's aligned table numbers both sides alike and never shows None."""

from __future__ import annotations

import shutil

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.paths import REPO_ROOT

pytestmark = [pytest.mark.model]

APP = str(REPO_ROOT / "app.py")
SAMPLE = REPO_ROOT / "sample_traces" / "gsm8k_word_problem.o3trace.json.gz"


@pytest.fixture
def app(tmp_path, monkeypatch):
    from o3viz.branch import Continuer, add_branch, edit_and_continue
    from o3viz.store.store import Store
    from o3viz.testing.builders import make_tiny_llama
    from o3viz.trace import load_trace

    shutil.copy(SAMPLE, tmp_path / SAMPLE.name)
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    monkeypatch.setenv("O3VIZ_HOME", str(tmp_path / "home"))
    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    parent = next(
        k for k, e in at.session_state["library"].items() if e.name.startswith("gsm8k_word_problem")
    )
    model, tok = make_tiny_llama()
    branch = edit_and_continue(
        load_trace(SAMPLE), "0:2", "This is 24 + 18 = 42 muffins.", Continuer(model=model, tokenizer=tok),
        parent_key=parent, max_new_tokens=8,
    )  # fmt: skip
    key = add_branch(Store(), branch)
    at.switch_page("pages/inspect.py")
    at.run()
    at.session_state["inspect_key"], at.session_state["inspect_node"] = key, None
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at, parent, key


def test_a_branch_in_inspect_shows_its_parents_prefix_and_links_to_it(app):
    at, parent, key = app
    assert any("its step 0 is the parent's step 3" in c.value for c in at.caption)
    labels = [e.label for e in at.expander]
    assert any(lab.startswith("The parent's steps 0–2 before the fork") for lab in labels)
    greyed = [m.value for m in at.markdown if m.value.startswith(":gray[**")]
    assert [g.split("**")[1] for g in greyed] == ["0", "1"]  # numbered as in the parent
    buttons = {b.label: b for b in at.button}
    assert not buttons["Open parent"].disabled and not buttons["Compare with parent"].disabled
    buttons["Compare with parent"].click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert (at.session_state["compare_a"], at.session_state["compare_b"]) == (parent, key)
    table = at.dataframe[0].value
    assert "None" not in table.astype(str).to_numpy().ravel().tolist()
    fork = table[table[""] == "fork (edited)"].iloc[0]
    assert fork["A step"] == fork["B step"] == "2"
