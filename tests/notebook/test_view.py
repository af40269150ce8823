"""What ``o3viz.show`` builds, without a kernel: the view's data comes from the figure builders,
tabs appear only with data, the page is self-contained and keeps text as text, a Trace displays
itself, and the view falls back to static HTML where anywidget is missing."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import o3viz
from o3viz.analysis.outline import build_outline
from o3viz.notebook.data import compare_view_data, trace_view_data
from o3viz.notebook.page import page_html
from o3viz.testing.long_r1 import R1_FILE
from o3viz.testing.synthetic import make_trace
from o3viz.trace import Round, Step, Task, Trace


def test_the_view_uses_the_figures_map_and_lists_every_outline_step():
    t = make_trace(6, seed=0)
    data = trace_view_data(t)
    ids = {c for tr in data["map"]["data"] for c in (tr.get("customdata") or []) if isinstance(c, str)}
    steps = {s.id for s in build_outline(t).steps}
    assert steps <= ids and steps <= set(data["nodes"])
    assert [r["id"] for r in data["outline"]][:2] == ["round:0", "step:0:0"]
    assert data["selected"] == "step:0:0"
    assert data["nodes"]["step:0:0"]["attention"]  # where its attention went, largest first


def test_tabs_appear_only_for_data_the_trace_has():
    assert [t["title"] for t in trace_view_data(make_trace(6, seed=0))["tabs"]] == ["Attention"]
    bare = Trace(Task("2+2?"), [Round(text="2+2=4.", steps=[Step(0, "2+2=4.", 0, 6)], answer="4")])
    assert trace_view_data(bare)["tabs"] == []
    imp = o3viz.load_trace("sample_traces/gsm8k_word_problem_importance.o3trace.json.gz")
    assert [t["title"] for t in trace_view_data(imp)["tabs"]] == ["Attention", "Importance"]
    from o3viz.testing.long_r1 import long_r1_trace

    if Path(R1_FILE).is_file():  # (../shared/data) a long trace opens an episode overview too
        assert [t["title"] for t in trace_view_data(long_r1_trace(300))["tabs"]] == []  # episodes: the map


def _marks(fig: dict) -> int:
    """Points, bars and labels a figure draws (plotly's JSON packs numeric arrays as base64)."""

    def n(x) -> int:
        if isinstance(x, dict):
            return np.frombuffer(base64.b64decode(x["bdata"]), dtype=np.dtype(x["dtype"])).size
        return len(x or [])

    shown = [
        t
        for t in fig["data"]
        if t.get("type") == "bar" or {"markers", "text"} & set(t.get("mode", "").split("+"))
    ]
    return sum(n(t.get("x")) for t in shown)


def test_a_long_trace_opens_on_its_episodes_and_keeps_every_step_one_click_away():
    t = make_trace(675, seed=0)  # the length: 716 marks on the first map at 675 steps
    data = trace_view_data(t)
    steps = [s.id for s in build_outline(t).steps]
    assert _marks(data["overview"]) <= 150 < len(steps) <= _marks(data["map"])  # drawn first: the overview
    assert data["selected"] is None and "episode" not in data  # nothing open, as in the app
    rows = data["outline"]
    kinds = [r["kind"] for r in rows]
    assert kinds[:3] == ["round", "episode", "step"] and [r["depth"] for r in rows[:3]] == [0, 1, 2]
    assert (
        {r["id"] for r in rows if r["kind"] == "step"}
        == set(steps)
        <= set(data["nodes"])
        <= {*data["node_ep"], *(r["id"] for r in rows if r["kind"] == "round")}
    )
    assert kinds.count("episode") == len(data["episodes"]) > 5
    spans = [(e["x0"], e["x1"]) for e in data["episodes"]]
    assert all(a < b for a, b in spans) and spans == sorted(spans)  # each episode zooms the map to its steps
    picked = trace_view_data(t, selected="step:0:300")  # a step asked for opens its episode
    assert picked["selected"] == "step:0:300" and picked["episode"] == picked["node_ep"]["step:0:300"]
    assert 'id="overview"' in page_html(data) and 'id="epnext"' in page_html(data)


def test_page_is_self_contained_and_step_text_cannot_close_its_script():
    evil = "</script><script>window.pwned=1</script>"
    t = Trace(Task(evil), [Round(text=evil, steps=[Step(0, evil, 0, len(evil))], answer="4")])
    page = page_html(trace_view_data(t))
    assert "window.pwned=1</script>" not in page
    assert "<script src=" not in page and "<link " not in page  # plotly.js is inlined, no fetches
    data = page.split('id="o3-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data)["nodes"]["step:0:0"]["text"] == evil


def test_compare_view_shows_what_changed_both_maps_and_opens_on_the_first_divergence():
    data = compare_view_data(make_trace(6, seed=0), make_trace(7, seed=1))
    assert data["summary"][0].startswith("same answer") and len(data["maps"]) == 2
    steps = next(r for r in data["metrics"] if r[0] == "steps (all rounds)")
    assert steps == ["steps (all rounds)", "6", "7", "+1"]
    assert data["selected"] == "A/step:0:0" and data["nodes"]["B/step:0:0"]["title"].startswith("B · ")


def test_a_trace_displays_itself_as_a_widget_with_a_static_fallback():
    bundle = make_trace(4, seed=0)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/html"].startswith('<iframe class="o3viz-view"')


def test_without_anywidget_the_view_is_static_html(monkeypatch):
    monkeypatch.setitem(sys.modules, "anywidget", None)  # what an environment without it sees
    monkeypatch.delitem(sys.modules, "o3viz.notebook.widget", raising=False)
    view = o3viz.show(make_trace(4, seed=0), selected="step:0:1")
    assert type(view).__name__ == "StaticView" and view.selected == "step:0:1"
    assert view._repr_html_().startswith('<iframe class="o3viz-view"')


def test_widget_selection_is_a_python_attribute():
    pytest.importorskip("anywidget")
    view = o3viz.show(make_trace(4, seed=0))
    view.selected = "step:0:2"
    assert view.selected == "step:0:2" and len(repr(view)) < 200


def test_save_view_writes_the_page_and_refuses_to_overwrite(tmp_path):
    view = o3viz.show(make_trace(3, seed=0), widget=False)
    path = o3viz.save_view(view, tmp_path / "v.html")
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    with pytest.raises(FileExistsError):
        o3viz.save_view(view, path)
