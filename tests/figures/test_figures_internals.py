"""Routing and logit-lens figures build from trace records, mark what they claim to mark, say
when there is nothing to draw, and label random-weight routing as such."""

from __future__ import annotations

import html

import numpy as np

from o3viz.analysis.routing_lens import answer_token_indices
from o3viz.figures import (
    answer_depth_summary,
    coactivation_figure,
    expert_load_figure,
    lens_grid_figure,
    lens_window_start,
    routing_diff_figure,
    routing_entropy_figure,
    routing_heatmap,
    step_routing_figure,
    token_routing_rows,
)
from o3viz.figures.routing_lens import LENS_CELL_CHARS, LENS_TOKENS
from o3viz.paths import REPO_ROOT
from o3viz.testing.routing_lens_trace import trace_with_internals
from o3viz.trace import load_trace


def test_heatmap_marks_exactly_the_chosen_experts_and_labels_random_weights():
    t = trace_with_internals()
    rec = t.final.internals.routing
    fig = routing_heatmap(rec, t.final, 1)
    marked = [(x, y) for marks in fig.data[1:] for x, y in zip(marks.x, marks.y, strict=True)]
    assert len(marked) == rec.num_generated * rec.top_k
    assert sorted(marked) == sorted((g, int(e)) for g in range(rec.num_generated) for e in rec.experts[g, 1])
    assert "RANDOM weights" in fig.layout.title.text


def test_every_routing_figure_builds_and_load_titles_carry_cv_and_balance():
    t = trace_with_internals()
    rec, rnd = t.final.internals.routing, t.final
    load = expert_load_figure(rec)
    assert all("CV" in y and "bal" in y for y in load.data[0].y)
    for fig in (routing_entropy_figure(rec, rnd), coactivation_figure(rec, 0), step_routing_figure(rec, rnd)):
        assert fig.data and fig.layout.title.text
    rows = token_routing_rows(rec, 0)
    assert len(rows) == len(rec.layers) and rows[0]["chosen experts (weight)"]  # random weights are not all 1


def test_diff_figure_uses_one_symmetric_scale():
    a = trace_with_internals(0).final.internals.routing
    b = trace_with_internals(1).final.internals.routing
    fig = routing_diff_figure(a, b)
    assert fig.data[0].zmin == -fig.data[0].zmax
    assert np.isclose(np.abs(np.array(fig.data[0].z)).max(), fig.data[0].zmax)


def test_lens_grid_shows_top1_text_and_boxes_the_answer_at_its_first_layer():
    t = trace_with_internals()
    lens, rnd = t.final.internals.lens, t.final
    fig = lens_grid_figure(lens, rnd)
    assert fig.data[0].text[1][0] == rnd.tokens[0].text == "17*2"  # last layer predicts the token
    assert fig.data[0].text[0][0] == "t99"  # layer 1's top-1 was something else
    assert "rank" in fig.data[0].customdata[0][0]
    boxes = fig.data[1]
    assert list(boxes.y) == ["layer 3"] and len(boxes.x) == 1  # the answer token, at the last layer
    assert "layer 3" in answer_depth_summary(lens, rnd)


def test_empty_windows_say_so():
    t = trace_with_internals()
    rec = t.final.internals.routing
    fig = routing_heatmap(rec, t.final, 0, g0=99)
    assert "No generated tokens" in fig.layout.annotations[0].text


MOE_SAMPLE = REPO_ROOT / "sample_traces" / "moefied_gsm8k_lens.o3trace.json.gz"


def test_with_12_of_16_experts_chosen_only_the_3_strongest_are_boxed():
    """The MoE sample chooses 12 of 16 experts per token: boxing all 12 made the grid solid. Each
    token boxes its 3 most probable chosen experts; the other 9 get a dot."""
    rnd = load_trace(MOE_SAMPLE).final
    rec = rnd.internals.routing
    assert (rec.num_experts, rec.top_k) == (16, 12)
    fig = routing_heatmap(rec, rnd, 3)
    boxed, dots = fig.data[1], fig.data[2]
    n = len(fig.data[0].x)  # tokens in the window
    assert len(boxed.x) == 3 * n and len(dots.x) == 9 * n
    probs = rec.distribution()[:n, 3]  # (g, E)
    for g in range(n):
        mine = {int(y) for x, y in zip(boxed.x, boxed.y, strict=True) if x == g}
        chosen = [int(e) for e in rec.experts[g, 3]]
        assert mine == set(sorted(chosen, key=lambda e: -probs[g, e])[:3])
    assert "3 strongest of its 12" in fig.layout.title.text


def test_the_expert_load_title_fits_and_names_the_moefied_model_on_its_own_line():
    rec = load_trace(MOE_SAMPLE).final.internals.routing
    title = expert_load_figure(rec).layout.title.text
    head, _, note = title.partition("<br>")
    assert len(head) <= 60 and "MoEfied dense model" in note  # the note was cut off at 1280 px


def test_lens_cell_labels_fit_their_cells_and_the_window_holds_the_answer_or_the_selection():
    rnd = load_trace(MOE_SAMPLE).final
    lens = rnd.internals.lens
    n = lens.token_ids.shape[0]
    start = lens_window_start(rnd, n)
    answer = answer_token_indices(rnd)
    assert answer and all(start <= g < start + LENS_TOKENS for g in answer)  # was 0..31: the answer at 78
    fig = lens_grid_figure(lens, rnd, g0=start)
    cells = [c for row in fig.data[0].text for c in row]
    assert max(len(html.unescape(c)) for c in cells) <= LENS_CELL_CHARS
    assert lens_window_start(rnd, n, selected=18) == 16  # a selected step: a couple of tokens before it
    assert lens_window_start(rnd, n, selected=n - 1) == n - LENS_TOKENS  # never past the last window
