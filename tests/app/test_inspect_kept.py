"""Inspect's Attention tab says what a long capture kept differently at its length (issue 40),
from the storage plan recorded in the trace."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from o3viz.figures import escape_markdown
from o3viz.paths import REPO_ROOT
from o3viz.run.sizing import plan_storage
from o3viz.testing.synthetic import make_trace

APP = str(REPO_ROOT / "app.py")


def test_the_attention_tab_says_what_a_long_capture_kept(tmp_path, monkeypatch):
    trace = make_trace(12, seed=1, daa_mode="off", compression=False)
    plan = plan_storage(16_384, 8, num_layers=30, num_heads=9)
    trace.final.attention.info["storage"] = plan.to_dict()
    trace.save(tmp_path / "long.o3trace.json")
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/inspect.py")
    at.session_state["inspect_view"] = "Attention"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    captions = [c.value for c in at.caption]
    want = "Kept at this length: prefill attention kept as top-64 rows above 2k tokens (this prompt: 16,384)."
    assert escape_markdown(want) in captions, captions  # the file's text, escaped: drawn as written
