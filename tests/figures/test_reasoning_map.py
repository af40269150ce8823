"""The reasoning map and its outline rows, built without streamlit on the trace shapes the app must
handle: a 20-token run, a 3-round solve, an R1-style import with backtracks and a 2,000-step import."""

from __future__ import annotations

import random

import numpy as np
import pytest

from o3viz.analysis.outline import build_outline
from o3viz.figures.outline import outline_items
from o3viz.figures.reasoning_map import FOCUS_WINDOW, answer_label, map_layout, reasoning_map_figure
from o3viz.importers import import_trace
from o3viz.testing.synthetic import make_trace

PARTS = [
    "Let me compute 3 + 4 = 7.",
    "Wait, that is not right.",
    "So the total is $\\frac{24}{2}$.",
    "Let me check: 12 - 5 = 7.",
    "Alternatively, we can try another approach.",
    "The problem says the train is 40 km long.",
]


def _import(n: int, seed: int = 0):
    rng = random.Random(seed)
    text = "<think>" + " ".join(rng.choice(PARTS) for _ in range(n)) + "</think> The answer is \\boxed{12}."
    return import_trace(text.encode())


@pytest.fixture(scope="module")
def big():
    return _import(2000)


def _x_range(fig):
    return fig.layout.xaxis.range


def _all_points(fig):
    xs = np.concatenate(
        [np.asarray(t.x, dtype=float) for t in fig.data if t.x is not None and t.mode != "lines"]
    )
    return xs


@pytest.mark.parametrize(
    "make",
    [
        lambda: make_trace(3, seed=4),  # a tiny run (a handful of tokens)
        lambda: make_trace(12, seed=5, rounds=3),
        lambda: _import(200),
    ],
    ids=["tiny-run", "three-rounds", "r1-200-sentences"],
)
def test_the_whole_trace_fits_the_default_view(make):
    fig = reasoning_map_figure(build_outline(make()))
    x0, x1 = _x_range(fig)
    xs = _all_points(fig)
    assert x0 <= xs.min() and xs.max() <= x1


def test_a_2000_step_import_fits_whole_with_small_markers_and_no_spine(big):
    o = build_outline(big)
    assert len(o.steps) >= 2000
    fig = reasoning_map_figure(o)
    x0, x1 = _x_range(fig)
    xs = _all_points(fig)
    assert x0 <= xs.min() and xs.max() <= x1
    steps = [t for t in fig.data if str(t.name).startswith("step:")]
    assert max(float(np.max(t.marker.size)) for t in steps) <= 8
    assert not any(t.name == "order" for t in fig.data)


def test_search_focus_moves_the_view_to_the_node_on_a_wide_trace(big):
    o = build_outline(big)
    target = o.steps[1500].id
    fig = reasoning_map_figure(o, focus=target, selected=target)
    x = map_layout(o).pos[target][0]
    x0, x1 = _x_range(fig)
    assert x0 <= x <= x1 and x1 - x0 <= 2 * FOCUS_WINDOW + 1


def test_no_step_text_is_drawn_on_the_map_only_the_final_answer_label():
    o = build_outline(make_trace(12, seed=5, rounds=3))
    fig = reasoning_map_figure(o)
    texts = [t for t in fig.data if t.mode and "text" in t.mode]
    assert [t.name for t in texts] == ["final answer"]
    assert texts[0].text[0].strip() == answer_label(o)
    assert all(f.size >= 11 for f in [fig.layout.yaxis.tickfont, texts[0].textfont])


def test_the_answer_label_sits_inside_the_x_range_left_of_its_star():
    fig = reasoning_map_figure(build_outline(make_trace(3, seed=4)))
    label = next(t for t in fig.data if t.name == "final answer")
    assert label.textposition == "middle left"
    x0, x1 = _x_range(fig)
    assert x0 < label.x[0] <= x1


def test_rounds_are_headed_by_their_verdict_and_checks_are_green_or_red():
    t = make_trace(12, seed=5, rounds=3)
    fig = reasoning_map_figure(build_outline(t))
    headers = [a.text for a in fig.layout.annotations if "Round" in a.text]
    assert len(headers) == 3
    for r, h in zip(t.rounds, headers, strict=True):
        assert (r.verdict or "no verdict") in h
    passed = next((tr for tr in fig.data if tr.name == "check passed"), None)
    failed = next((tr for tr in fig.data if tr.name == "check failed"), None)
    assert passed is None or set(passed.marker.color) == {"#009E73"}
    assert failed is None or set(failed.marker.color) <= {"#D55E00", "#E69F00"}


def test_backtracks_are_drawn_as_arcs_to_the_step_they_reconsider():
    o = build_outline(_import(60))
    assert any(s.kind == "backtrack" for s in o.steps)
    assert any(t.name == "backtrack" for t in reasoning_map_figure(o).data)


def test_importance_sizes_nodes_and_dependencies_draw_edges():
    from o3viz.trace.importance import ImportanceRecord

    t = make_trace(6, seed=1)
    n = len(t.rounds[0].steps)
    edges = [(k, k - 1, 1.0) for k in range(1, n)]
    t.rounds[0].importance = [
        ImportanceRecord("suppression", "suppression", [k / 5 for k in range(n)], edges)
    ]
    fig = reasoning_map_figure(build_outline(t))
    sizes = np.concatenate(
        [
            np.asarray(tr.marker.size, dtype=float).ravel()
            for tr in fig.data
            if str(tr.name).startswith("step:")
        ]
    )
    assert sizes.max() > 2 * sizes.min()
    assert any(tr.name == "depends on" for tr in fig.data)
    assert "size = importance" in fig.layout.title.text


def test_every_marker_carries_its_node_id_for_clicks():
    o = build_outline(make_trace(8, seed=2, rounds=2))
    fig = reasoning_map_figure(o)
    ids = {c for t in fig.data if t.customdata is not None for c in t.customdata}
    assert {s.id for s in o.steps} <= ids


def test_outline_rows_nest_rounds_steps_checks_and_read_latex_as_text():
    t = _import(20)
    rows = outline_items(build_outline(t))
    assert rows[0]["kind"] == "round" and rows[0]["depth"] == 0
    assert {r["depth"] for r in rows if r["kind"] == "step"} == {1}
    assert all("\\frac" not in r["text"] and "$" not in r["text"] for r in rows)
    assert rows[-1]["kind"] == "answer"


def test_compare_maps_share_lanes_and_scale_and_line_up_aligned_steps():
    from o3viz.analysis.compare import compare_traces
    from o3viz.figures.compare import compare_maps

    a, b = make_trace(10, seed=7), make_trace(10, seed=7, rounds=2)
    b.final.steps = b.final.steps[:4] + b.final.steps[6:]
    comp = compare_traces(a, b)
    fa, fb = compare_maps(comp, build_outline(a), build_outline(b))
    assert fa.layout.xaxis.range == fb.layout.xaxis.range
    assert list(fa.layout.yaxis.ticktext) == list(fb.layout.yaxis.ticktext)
    xs = {}
    for tag, fig in (("A", fa), ("B", fb)):
        for t in fig.data:
            if str(t.name).startswith("step:"):
                xs.update({(tag, c): x for c, x in zip(t.customdata, t.x, strict=True)})
    ra, rb = a.final.index, b.final.index
    for row in comp.steps:
        if row.tag == "equal":
            assert xs[("A", f"step:{ra}:{row.a_index}")] == xs[("B", f"step:{rb}:{row.b_index}")]
    # the first divergence is pointed out on both maps
    assert any(ann.showarrow for ann in fa.layout.annotations)


def test_curves_never_drop_a_side_silently():
    from o3viz.analysis.compare import compare_traces
    from o3viz.figures.compare import curves_figure

    a, b = make_trace(8, seed=1), make_trace(1, seed=2)
    b.final.attention = None
    fig = curves_figure(compare_traces(a, b, a_name="A", b_name="B"))
    one_step = [t for t in fig.data if t.name == "B" and len(t.x) == 1]
    assert one_step and all("markers" in t.mode for t in one_step)
    assert any("B: not recorded" in ann.text for ann in fig.layout.annotations)


def test_the_answer_star_keeps_room_from_the_right_edge_on_a_2000_step_map():
    """The star (20 px) used to sit 1.3 steps from the edge: half of it was cut at 2,000 steps."""
    from o3viz.analysis.outline import build_outline
    from o3viz.figures.reasoning_map import EDGE_PX, PLOT_PX, reasoning_map_figure
    from o3viz.testing.synthetic import make_trace

    outline = build_outline(make_trace(2000, seed=0))
    fig = reasoning_map_figure(outline)
    x0, x1 = fig.layout.xaxis.range
    star = next(t for t in fig.data if t.name == "answer")
    px_per_step = PLOT_PX / (x1 - x0)
    assert (x1 - max(star.x)) * px_per_step >= EDGE_PX * 0.9


def test_the_episode_overview_of_a_2000_step_r1_import_draws_at_most_300_marks(shared_data):
    from o3viz.analysis.episodes import find_episodes
    from o3viz.analysis.outline import build_outline
    from o3viz.analysis.wrong_step import first_wrong_step
    from o3viz.figures import count_marks, episode_map_figure
    from o3viz.testing.long_r1 import long_r1_trace

    trace = long_r1_trace(2000)
    outline = build_outline(trace)
    eps = find_episodes(outline)
    wrong = first_wrong_step(trace)
    fig = episode_map_figure(outline, eps, first_wrong=wrong.node if wrong else None, selected="step:0:700")
    assert count_marks(fig) <= 300
    bars = next(t for t in fig.data if t.name == "episode")
    assert list(bars.customdata) == [e.id for e in eps]  # every episode is one clickable bar
    x0, x1 = fig.layout.xaxis.range
    star = next(t for t in fig.data if t.name == "answer")
    assert x0 < min(star.x) and (x1 - max(star.x)) / (x1 - x0) * 640 >= 20
    assert any(t.name == "selected" for t in fig.data)  # the selection is drawn on the overview


def test_the_first_wrong_step_is_ringed_on_the_short_map_where_the_rule_puts_it():
    from o3viz.analysis.wrong_step import first_wrong_step
    from o3viz.trace import Check

    trace = import_trace(
        "<think>\nWe need x.\nx = 2 + 3 = 6.\nSo x = 6.\n</think>\nThe answer is 6.", claims=False
    )
    trace.final.checks.append(Check("claim", "2+3 = 6", "wrong", step=1))
    wrong = first_wrong_step(trace)
    outline = build_outline(trace)
    fig = reasoning_map_figure(outline, first_wrong=wrong.node)
    (ring,) = [t for t in fig.data if t.name == "first wrong step"]
    assert (ring.x[0], ring.y[0]) == map_layout(outline).pos["step:0:1"]
    assert not [t for t in reasoning_map_figure(outline).data if t.name == "first wrong step"]


def test_the_outline_row_of_the_first_wrong_step_says_so():
    trace = make_trace(6, seed=1)
    outline = build_outline(trace)
    rows = outline_items(outline, first_wrong="step:0:2")
    marked = [r["id"] for r in rows if r.get("kind") == "step" and "first wrong" in r["chip"]]
    assert marked == ["step:0:2"]
    assert not [r for r in outline_items(outline) if "first wrong" in str(r.get("chip"))]


def test_a_long_step_hover_is_wrapped_so_the_plot_edge_cannot_cut_it():
    """A step's hover label was one line of up to 160 characters: wider than the map in Inspect's
    middle column, so plotly cut its start off ("5 of round 0" for "step 5 of round 0")."""
    from o3viz.figures.reasoning_map import HOVER_WIDTH, _step_hover

    trace = make_trace(3, seed=0)
    trace.rounds[0].steps[1].text = "word " * 60
    step = build_outline(trace).rounds[0].steps[1]
    lines = _step_hover(step).split("<br>")
    assert len(lines) >= 4
    assert all(len(line) <= HOVER_WIDTH + 40 for line in lines[1:])  # (the first carries tags)
