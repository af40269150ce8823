"""Inspect's "Inside the layers" view and Compare's routing difference through AppTest: the
routing figures and the selected token's table render, random-weight routing carries a warning,
the logit lens shows its grid, and a trace without internals says how to record them."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.paths import REPO_ROOT
from o3viz.testing.routing_lens_trace import trace_with_internals
from o3viz.testing.synthetic import make_trace

APP = str(REPO_ROOT / "app.py")


@pytest.fixture
def samples(tmp_path, monkeypatch):
    trace_with_internals(0).save(tmp_path / "a_routing.o3trace.json")
    trace_with_internals(1).save(tmp_path / "b_routing.o3trace.json")
    plain = make_trace(12, seed=1)
    plain.compression = None  # neither internals nor compression: both tabs are hidden
    plain.save(tmp_path / "c_plain.o3trace.json")
    moefied = trace_with_internals(2)
    moefied.final.internals.routing.source = "moefied"
    moefied.save(tmp_path / "d_moefied.o3trace.json")
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    return tmp_path


def _inspect(name: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/inspect.py")
    at.run()
    lib = at.session_state["library"]
    at.session_state["inspect_key"] = next(k for k, e in lib.items() if e.name.startswith(name))
    at.session_state["inspect_view"] = "Inside the layers"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_routing_view_shows_its_figures_the_token_table_and_the_random_weight_warning(samples):
    at = _inspect("a_routing")
    assert len(at.get("plotly_chart")) == 5
    assert any("Random-weight model" in w.value for w in at.warning)
    assert len(at.dataframe) == 1 and len(at.dataframe[0].value) == 3  # one row per MoE layer


def test_moefied_routing_is_explained_not_warned_about(samples):
    at = _inspect("d_moefied")
    assert len(at.get("plotly_chart")) == 5 and not at.warning
    assert any("MoEfied dense model" in c.value for c in at.caption)


def test_logit_lens_view_shows_the_grid_and_the_answer_depth(samples):
    at = _inspect("a_routing")
    key = at.session_state["inspect_key"]
    at.session_state[f"int_part_{key}"] = "Logit lens"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.get("plotly_chart")) == 1
    assert any("first top" in c.value and "layer 3" in c.value for c in at.caption)


def test_a_trace_without_internals_hides_the_tab_and_says_why_and_how_to_record_them(samples):
    """Tabs without data (Inside the layers, Compression) are hidden, with one line saying why."""
    at = _inspect("c_plain")
    labels = [t.label for t in at.tabs]
    assert "Inside the layers" not in labels and "Reasoning map" in labels
    assert "Compression" not in labels
    (cap,) = [c for c in at.caption if c.value.startswith("Not recorded for this trace")]
    assert "Compression" in cap.value and "Inside the layers" in cap.value  # one short line
    why = cap.proto.help  # the reasons and how to record them, on hover
    assert "--logit-lens" in why and "did not use compression" in why
    assert at.session_state["inspect_view"] == "Reasoning map"  # the asked-for view is not there


def test_compare_shows_the_routing_difference_when_both_runs_have_routing(samples):
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    lib = at.session_state["library"]
    keys = {e.name[0]: k for k, e in lib.items()}
    at.session_state["compare_a"], at.session_state["compare_b"] = keys["a"], keys["b"]
    at.switch_page("pages/compare.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(s.value == "Expert routing" for s in at.subheader)


def test_a_link_to_an_unknown_trace_or_node_says_so_and_opens_nothing_else(samples):
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/inspect.py")
    at.query_params["trace"] = "0123456789abcdef"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("not in this session" in w.value for w in at.warning)
    assert not at.tabs and not at.get("plotly_chart")  # no other trace opened in its place
    key = next(k for k, e in at.session_state["library"].items() if e.name.startswith("c_plain"))
    at.query_params["trace"], at.query_params["node"] = key, "step:0:999"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("not in this trace" in w.value for w in at.warning)
    assert at.session_state["inspect_key"] == key and at.session_state["inspect_node"] is None
