"""A shared trace link (``?trace=KEY``) whose trace was since replaced (verified, given its running
answer or importance: a new key) opens the trace that replaced it and says so in one line; before,
it said the trace was not in the library."""

from __future__ import annotations

import copy

from streamlit.testing.v1 import AppTest

from o3viz.paths import REPO_ROOT
from o3viz.store.replace import replace_trace
from o3viz.store.store import Store
from o3viz.testing.synthetic import make_trace


def test_a_link_to_a_replaced_key_opens_its_successor(tmp_path, monkeypatch):
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path / "no-samples"))
    store = Store()
    trace = make_trace(5, seed=1)
    old = store.add(trace, name="linked", dataset="toy")
    scored = copy.deepcopy(trace)
    scored.provenance.settings = {**(scored.provenance.settings or {}), "scored": True}
    new = replace_trace(store, old, scored)
    at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=90)
    at.run()
    at.switch_page("pages/inspect.py")
    at.query_params["trace"] = old
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [w.value for w in at.warning if "not in this session's library" in w.value]
    assert [i.value for i in at.info if "was replaced" in i.value] == [
        f"key {old} was replaced by {new}; opening {new}"
    ]
    assert at.session_state["inspect_key"] == new and at.query_params["trace"] == new
