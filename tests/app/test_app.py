"""The Streamlit app through ``streamlit.testing.v1.AppTest``: every page renders with traces, the
expected widgets and figures are there, a bad upload gives a one-line error, and Compare works on
traces of different lengths. No model is ever loaded here."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.paths import REPO_ROOT
from o3viz.testing.synthetic import make_trace
from o3viz.trace import trace_bytes

APP = str(REPO_ROOT / "app.py")
TIMEOUT = 60


@pytest.fixture
def samples(tmp_path, monkeypatch):
    make_trace(12, seed=1, rounds=2).save(tmp_path / "a_short_multi_round.o3trace.json")
    make_trace(40, seed=2, daa_mode="off", compression=False).save(tmp_path / "b_longer.o3trace.json.gz")
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    return tmp_path


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _charts(at: AppTest) -> list:
    return at.get("plotly_chart")


def test_library_lists_the_samples_and_offers_upload(samples):
    at = _app()
    assert len(at.dataframe) == 1
    df = at.dataframe[0].value
    assert sorted(df["name"]) == ["a_short_multi_round", "b_longer"]  # shown without the extension
    assert set(df["source"]) == {"sample"}
    assert len(at.get("file_uploader")) == 1
    assert {b.label for b in at.button} >= {"Inspect", "Compare"}


@pytest.mark.subprocess
def test_a_bad_upload_shows_one_clear_error_and_the_good_one_still_loads(samples):
    at = _app()
    good = trace_bytes(make_trace(7, seed=9))
    at.get("file_uploader")[0].set_value(
        [
            ("broken.o3trace.json", good[:200], "application/json"),
            ("fine.o3trace.json", good, "application/json"),
        ]
    )
    at.run()
    assert not at.exception
    assert len(at.error) == 1
    msg = at.error[0].value
    assert msg.startswith("broken") and "\n" not in msg and "Traceback" not in msg
    assert "fine" in list(at.dataframe[0].value["name"])
    assert "not an o3viz trace" in msg and "Expecting" not in msg  # the detail is in an expander
    assert any(e.label == "Technical detail" for e in at.expander)
    at.run()  # a rerun with the same upload does not show the error again
    assert len(at.error) == 0


def _view(at: AppTest):
    """The args Inspect gave its view component and the view data they name."""
    import json

    from pages.common.trace_view import published

    args = json.loads(at.get("bidi_component")[0].proto.json)
    return args, published(args["url"])


def test_inspect_renders_every_tab_with_figures_and_no_model(samples):
    import json

    from pages.common.trace_view import published

    at = _app()
    at.switch_page("pages/inspect.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    args, view = _view(at)  # (issue 39: the map, outline, details and search are one component)
    assert view["map"]["data"] and view["outline"] and view["find"]
    expected = {"Attention": 0, "Compression": 4, "Verification": 1, "Tokens": 0}
    for tab, n_charts in expected.items():
        at.session_state["inspect_view"] = tab
        at.run()
        assert not at.exception, (tab, [e.value for e in at.exception])
        assert len(_charts(at)) == n_charts, tab
        # the Attention tab's figures are drawn in the browser (o3viz.figures), and sent in every run, so
        # they wait in the page while another tab is open: the step heatmap, then the token level
        figs = [
            json.loads(c.proto.json)
            for c in at.get("bidi_component")
            if c.proto.component_name == "o3viz.figures"
        ]
        figs = [published(a["url"]) for a in figs]
        assert [[len(row) for row in f["rows"]] for f in figs] == [[1], [1, 2]], tab
        assert (
            figs[0]["rows"][0][0]["steps"] and figs[0]["rows"][0][0]["figure"]["data"][0]["type"] == "heatmap"
        )


BROWSE = """
import sys
from streamlit.testing.v1 import AppTest

at = AppTest.from_file(sys.argv[1], default_timeout=240)
at.run()
at.switch_page("pages/inspect.py").run()
seen = []
# Views without data are hidden (Compression, Inside the layers): visit each view on a trace that has it.
for key in list(at.session_state["library"]):
    at.session_state["inspect_key"] = key
    at.run()
    for view in [t.label for t in at.tabs]:
        if view in seen:
            continue
        at.session_state["inspect_view"] = view
        at.run()
        assert not at.exception, ("inspect", key, view, [e.value for e in at.exception])
        if view == "Importance":
            assert any(b.label == "Analyse with the local model" for b in at.button)
        seen.append(view)
for page in ("pages/compare.py", "pages/dataset.py", "pages/labels.py", "pages/run.py", "pages/library.py"):
    at.switch_page(page)
    at.run()
    assert not at.exception, (page, [e.value for e in at.exception])
    seen.append(page)
assert any(b.label == "Run" for b in at.switch_page("pages/run.py").run().button)
print(len(seen), "Importance" in seen, "o3viz.model" in sys.modules, "transformers" in sys.modules)
"""


@pytest.mark.subprocess
def test_browsing_every_page_and_view_never_loads_a_model(samples):
    """Every page and every Inspect view renders, with the Run and Analyse buttons on offer (not
    pressed), and no model loads: neither ``o3viz.model`` (the one loader, behind
    ``pages/common/ui.get_model``) nor transformers is imported. A fresh process, since other tests
    here do load models."""
    import subprocess
    import sys

    from o3viz.testing.routing_lens_trace import trace_with_internals

    trace_with_internals(0).save(samples / "c_routing.o3trace.json")  # for the Inside the layers view
    out = subprocess.run(
        [sys.executable, "-c", BROWSE, APP], capture_output=True, text=True, timeout=600, cwd=REPO_ROOT
    )
    assert out.returncode == 0, out.stderr[-3000:]
    n, importance, loader, transformers = out.stdout.split()[-4:]
    assert int(n) >= 11 and importance == "True", out.stdout  # 7 Inspect views and 4 more pages
    assert (loader, transformers) == ("False", "False"), "browsing loaded a model"


def test_selecting_a_node_opens_its_details_beside_the_map(samples):
    # (issue 39: the step's text and attention are the view's details, drawn in the browser from
    # the view data; the server's panel under it holds what only it can do for the step)
    at = _app()
    at.switch_page("pages/inspect.py")
    at.session_state["inspect_node"] = "step:1:2"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    trace = at.session_state["library"][at.session_state["inspect_key"]].trace
    args, view = _view(at)
    assert args["push"]["id"] == "step:1:2"  # the view opens on the selected step
    assert view["nodes"]["step:1:2"]["text"] == trace.rounds[1].steps[2].text
    assert view["nodes"]["step:1:2"]["attention"]  # where the step's attention went
    labels = [b.label for b in at.button]
    assert "Start labelling" in labels and "Continue from here" in labels  # label it, branch from it
    at.run()  # a rerun (as after a click the view reported) hands the view the very same args:
    assert _view(at)[0] == args  # it neither refetches its data nor moves its selection


def test_compare_works_on_two_traces_of_different_lengths_and_swaps(samples):
    at = _app()
    at.switch_page("pages/compare.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(_charts(at)) == 6  # two maps, alignment, curves, difference, verdicts
    assert any(m.value.startswith("**What changed**") for m in at.markdown)
    a0, b0 = at.session_state["compare_a"], at.session_state["compare_b"]
    assert a0 != b0
    tiles = " ".join(m.value for m in at.markdown)
    assert "A **" in tiles and "→ B **" in tiles  # both sides in the tiles
    at.button[0].click().run()  # Swap
    assert (at.session_state["compare_a"], at.session_state["compare_b"]) == (b0, a0)
    assert not at.exception


def test_run_page_renders_its_settings_without_loading_a_model(samples):
    at = _app()
    at.switch_page("pages/run.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="run_source") is not None and at.slider(key="run_rounds") is not None
    from o3viz.app.running import DAA_MODES

    assert at.selectbox(key="run_daa").options == list(DAA_MODES)  # the choices are DAA's one table
    assert any(b.label == "Run" for b in at.button)


def test_pages_without_traces_say_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path / "none"))
    at = _app()
    assert "No traces yet" in at.info[0].value
    at.switch_page("pages/compare.py")
    at.run()
    assert not at.exception and "needs 2 traces" in at.info[0].value


def test_a_link_with_trace_and_node_opens_that_trace_and_node(samples):
    at = _app()
    key = list(at.session_state["library"])[1]
    at.switch_page("pages/inspect.py")
    at.query_params["trace"] = key
    at.query_params["node"] = "step:0:3"
    at.query_params["view"] = "Tokens"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["inspect_key"] == key
    assert at.session_state["inspect_node"] == "step:0:3"
    assert at.session_state["inspect_view"] == "Tokens"


def test_a_link_to_a_trace_not_in_the_library_says_so_in_one_line(samples):
    at = _app()
    at.switch_page("pages/inspect.py")
    at.query_params["trace"] = "0123456789abcdef"
    at.run()
    assert not at.exception
    assert len(at.warning) == 1 and "not in this session's library" in at.warning[0].value
    assert at.session_state["inspect_key"] is None  # nothing else opens in its place (issue 22)
    assert not at.get("plotly_chart")


def test_inspect_selection_survives_a_page_switch_and_is_written_to_the_url(samples):
    at = _app()
    key = list(at.session_state["library"])[1]
    at.switch_page("pages/inspect.py")
    at.run()
    at.selectbox(key="inspect_pick").set_value(key).run()
    at.session_state["inspect_node"] = "step:0:2"
    at.run()
    at.switch_page("pages/compare.py")
    at.run()
    at.switch_page("pages/inspect.py")
    at.run()
    assert not at.exception
    assert at.session_state["inspect_key"] == key and at.session_state["inspect_node"] == "step:0:2"
    assert at.query_params["trace"] == key and at.query_params["node"] == "step:0:2"


def test_compare_tiles_show_their_metrics_by_key_with_both_sides(samples):
    """The tiles are picked by metric key (a relabelled metric keeps its tile): each tile is
    captioned with its metric's name and shows A → B; the verdict tile shows coloured badges."""
    from o3viz import compare_traces
    from o3viz.figures import escape_markdown

    at = _app()
    at.switch_page("pages/compare.py")
    at.run()
    lib = at.session_state["library"]
    a, b = (lib[at.session_state[k]].trace for k in ("compare_a", "compare_b"))
    comp = compare_traces(a, b)
    captions = [c.value for c in at.caption]
    keys = (
        "final_verdict",
        "steps_all",
        "rounds",
        "checks_passed_final",
        "token_probability_final",
        "tokens_all",
    )
    names = [escape_markdown(comp.metric(k).name) for k in keys]  # the captions are markdown
    assert [comp.metric(k).name for k in keys][:2] == ["final verdict", "steps (all rounds)"]
    assert [c for c in captions if c in names] == names  # in this order, once each
    steps = comp.metric("steps_all")
    markdown = [m.value for m in at.markdown]
    assert any(m.startswith(f"A **{steps.a}** → B **{steps.b}**") for m in markdown)
    assert any(m.startswith("A :") and "-badge[" in m and "→ B :" in m for m in markdown)


def test_attention_on_a_one_round_trace_has_no_empty_column_before_its_controls(tmp_path, monkeypatch):
    # the round picker's column stayed empty on a trace with one round: a blank gap at the left
    make_trace(12, seed=3, rounds=1).save(tmp_path / "one_round.o3trace.json")
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    at = _app()
    at.switch_page("pages/inspect.py")
    at.session_state["inspect_view"] = "Attention"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    tab = next(t for t in at.tabs if t.label == "Attention")
    assert not tab.selectbox or tab.selectbox[0].label != "Round"
    assert [t.label for t in tab.columns[0].toggle] == ["Leave out attention sinks"]


def _widget_ids(at: AppTest) -> list[str]:
    found, stack = [], [at._tree]
    while stack:
        node = stack.pop()
        if getattr(node, "id", None) and hasattr(node, "_value"):
            found.append(node.id)
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            stack.extend(children.values())
    return sorted(found)


def test_a_switch_between_the_map_and_attention_keeps_every_widget_of_both(samples):
    # Before, the map's server panel (labels, branch, decision points) went away while Attention
    # was open, and came back at the switch: the switch's run rebuilt part of the page (the reader's
    # next click waited for it) and the panel's widgets lost their state.
    at = _app()
    at.switch_page("pages/inspect.py")
    at.session_state["inspect_node"] = "step:0:1"
    at.session_state["inspect_map_drawn"] = True  # the view said so (AppTest runs no script)
    at.run()
    on_map = _widget_ids(at)
    at.session_state["inspect_view"] = "Attention"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(on_map) > 5 and _widget_ids(at) == on_map


def test_the_closed_attention_tab_waits_until_the_view_says_the_map_is_drawn(samples):
    # Drawn in the first run, the closed Attention tab's widgets held the first map back in the
    # browser while their bundles loaded. Now they join in the run after the view's report.
    at = _app()
    at.switch_page("pages/inspect.py")
    at.run()
    first = _widget_ids(at)
    at.session_state["inspect_map_drawn"] = True  # what the view's report sets
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    kept = _widget_ids(at)
    assert set(first) < set(kept), (first, kept)  # the map's widgets stay; the Attention tab's join
    at.session_state["inspect_view"] = "Attention"
    at.run()
    assert _widget_ids(at) == kept
